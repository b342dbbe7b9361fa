// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An instance's workload table: see wltable.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/util.h"
#include "watch.h"
#include "wltable.h"

void bt_wl_names_open(const struct bt_instance *inst, struct bt_wl_names *w)
{
	w->v = calloc(BT_WL_IDS, sizeof(*w->v));
	for (__u32 id = 1; w->v && id < BT_WL_IDS; id++)
		if (bpf_map_lookup_elem(inst->wl_names_fd, &id, &w->v[id])) {
			free(w->v);
			w->v = NULL;
		}
}

void bt_wl_names_close(struct bt_wl_names *w)
{
	free(w->v);
	w->v = NULL;
}

const char *bt_wl_name_of(const struct bt_wl_names *w, __u32 id)
{
	if (!w->v || !id || id >= BT_WL_IDS || !w->v[id].gen || !w->v[id].name[0])
		return NULL;
	return w->v[id].name;
}

struct json_object *bt_wl_name_json(const struct bt_wl_names *w, __u32 id)
{
	const char *s = bt_wl_name_of(w, id);

	return s ? json_object_new_string(s) : NULL;
}

/* The table's slot of words w (its search), or -1 when it is not there
 * and no slot is free within the probes; *free: the first empty one. */
static long find_slot(const struct bt_wl_slot *tab, const __u64 w[2], long *free)
{
	__u32 h = bt_wl_hash(w[0], w[1]);

	*free = -1;
	for (__u32 p = 0; p < BT_WL_PROBES; p++) {
		long i = (h + p) & (BT_WL_SLOTS - 1);

		if (!tab[i].id) {
			*free = i;
			return -1;
		}
		if (tab[i].addr[0] == w[0] && tab[i].addr[1] == w[1])
			return i;
	}
	return -1;
}

/* The instance's two tables, mapped, and its control line. */
struct mapped {
	struct bt_wl_slot *tab;
	struct bt_ctl *ctl;
	size_t tab_len, ctl_len;
};

static int map_tables(const struct bt_instance *inst, struct mapped *m)
{
	m->tab = bt_mmap_array(inst->wl_addr_fd, 2 * BT_WL_SLOTS * sizeof(*m->tab), &m->tab_len);
	m->ctl = bt_mmap_array(inst->ctl_fd, sizeof(*m->ctl), &m->ctl_len);
	if (m->tab && m->ctl)
		return 0;
	if (m->tab)
		munmap(m->tab, m->tab_len);
	if (m->ctl)
		munmap(m->ctl, m->ctl_len);
	return errno ? -errno : -ENOMEM;
}

static void unmap_tables(struct mapped *m)
{
	munmap(m->tab, m->tab_len);
	munmap(m->ctl, m->ctl_len);
}

__u32 bt_wl_id_now(const struct bt_instance *inst, const __u8 addr[16])
{
	struct mapped m;
	__u64 w[2];
	long i, free;
	__u32 t, id = 0;

	if (map_tables(inst, &m))
		return 0;
	memcpy(w, addr, 16);
	t = __atomic_load_n(&m.ctl->workloads, __ATOMIC_ACQUIRE);
	if (t >> 1 && (i = find_slot(m.tab + (t & 1) * BT_WL_SLOTS, w, &free)) >= 0)
		id = m.tab[(t & 1) * BT_WL_SLOTS + i].id & (BT_WL_IDS - 1);
	unmap_tables(&m);
	return id;
}

int bt_wl_table_read(const struct bt_instance *inst, struct bt_wl_entry **v, size_t *n)
{
	const struct bt_wl_slot *s;
	struct mapped m;
	size_t k = 0;
	__u32 t;
	int err;

	*v = NULL;
	*n = 0;
	if ((err = map_tables(inst, &m)))
		return err;
	t = __atomic_load_n(&m.ctl->workloads, __ATOMIC_ACQUIRE);
	s = m.tab + (t & 1) * BT_WL_SLOTS;
	if (t >> 1 && !(*v = calloc(BT_WL_ADDRS, sizeof(**v))))
		err = -ENOMEM;
	/* the agent writes only the table not in use: this one holds still
	 * unless it switches and, a grace period later, writes this one while
	 * we read (a listing, then, of both: never a packet's answer) */
	for (size_t i = 0; !err && t >> 1 && i < BT_WL_SLOTS && k < BT_WL_ADDRS; i++) {
		if (!(s[i].id & (BT_WL_IDS - 1)))
			continue;
		memcpy((*v)[k].addr, s[i].addr, 16);
		(*v)[k++].id = s[i].id & (BT_WL_IDS - 1);
	}
	*n = k;
	unmap_tables(&m);
	return err;
}

int bt_wl_counts(const struct bt_instance *inst, int dir, struct bt_watch_count *counts)
{
	return bt_percpu_counts(inst->wl_counts_fd, dir * BT_WL_IDS, BT_WL_IDS, counts);
}

int bt_wl_give(const struct bt_instance *inst, __u32 id, __u64 gen, const char *name)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bt_watch_count *zero = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zero));
	struct bt_wl_name n = { .gen = gen };
	int err = 0;

	if (!zero)
		return -ENOMEM;
	snprintf(n.name, sizeof(n.name), "%s", name);
	for (__u32 d = 0; d < BT_DIRS && !err; d++) {
		__u32 key = d * BT_WL_IDS + id;

		if (bpf_map_update_elem(inst->wl_counts_fd, &key, zero, 0))
			err = -errno;
	}
	if (!err && bpf_map_update_elem(inst->wl_names_fd, &id, &n, 0))
		err = -errno;
	free(zero);
	return err;
}

int bt_wl_table_write(const struct bt_instance *inst, const struct bt_wl_entry *v, size_t n,
		      size_t *placed)
{
	struct bt_wl_slot *next = calloc(BT_WL_SLOTS, sizeof(*next));
	struct mapped m;
	size_t k = 0;
	__u32 t, use;
	int err;

	*placed = 0;
	if (!next)
		return -ENOMEM;
	if ((err = map_tables(inst, &m))) {
		free(next);
		return err;
	}
	for (size_t j = 0; j < n && k < BT_WL_ADDRS; j++) {
		__u64 w[2];
		long free_at;

		memcpy(w, v[j].addr, 16);
		if (!v[j].id || find_slot(next, w, &free_at) >= 0 || free_at < 0)
			continue;	/* none, twice, or no room within the probes */
		next[free_at] = (struct bt_wl_slot){ .addr = { w[0], w[1] }, .id = v[j].id };
		k++;
	}
	*placed = k;
	t = __atomic_load_n(&m.ctl->workloads, __ATOMIC_ACQUIRE);
	if (t >> 1 == k && !memcmp(m.tab + (t & 1) * BT_WL_SLOTS, next,
				   BT_WL_SLOTS * sizeof(*next))) {
		err = 0;	/* the one in use holds them */
	} else {
		use = !(t & 1);
		memcpy(m.tab + use * BT_WL_SLOTS, next, BT_WL_SLOTS * sizeof(*next));
		/* the table whole before the store that switches to it */
		__atomic_store_n(&m.ctl->workloads, (__u32)k << 1 | use, __ATOMIC_RELEASE);
		err = 1;
	}
	unmap_tables(&m);
	free(next);
	return err;
}

void bt_wl_table_off(const struct bt_instance *inst)
{
	struct mapped m;

	if (map_tables(inst, &m))
		return;
	__atomic_store_n(&m.ctl->workloads, 0, __ATOMIC_RELEASE);
	unmap_tables(&m);
}
