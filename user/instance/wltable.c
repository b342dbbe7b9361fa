// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An instance's workload table: see wltable.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/util.h"
#include "spie.h"
#include "watch.h"
#include "wltable.h"

static void names_read(int fd, struct bt_wl_names *w)
{
	w->v = calloc(BT_WL_IDS, sizeof(*w->v));
	for (__u32 id = 1; w->v && id < BT_WL_IDS; id++)
		if (bpf_map_lookup_elem(fd, &id, &w->v[id])) {
			free(w->v);
			w->v = NULL;
		}
}

void bt_wl_names_open(const struct bt_instance *inst, struct bt_wl_names *w)
{
	names_read(inst->wl_names_fd, w);
}

void bt_wl_name_reread(const struct bt_instance *inst, struct bt_wl_names *w, __u32 id)
{
	if (w->v && id && id < BT_WL_IDS)
		bpf_map_lookup_elem(inst->wl_names_fd, &id, &w->v[id]);
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
	for (__u32 d = 0; d < BT_WL_STAGES && !err; d++) {
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

/* The history's entries, mapped: made and pinned when create (the agent). */
struct hist_map {
	struct bt_wl_hist *v;
	size_t len;
};

static int hist_map(const char *instance, bool create, struct hist_map *m)
{
	char path[512];
	int fd, err = 0;

	if (bt_instance_path(instance, "wl_hist", path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0 && errno == ENOENT && create) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "wl_hist", 4, sizeof(struct bt_wl_hist),
				    BT_WL_HIST, &o);
		if (fd >= 0 && bpf_obj_pin(fd, path)) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	if (fd < 0)
		return -errno;
	m->v = bt_mmap_array_prot(fd, BT_WL_HIST * sizeof(*m->v), &m->len, create);
	err = m->v ? 0 : (errno ? -errno : -ENOMEM);
	close(fd);
	return err;
}

static bool held(const struct bt_wl_hist *e)
{
	return __atomic_load_n(&e->first_ns, __ATOMIC_ACQUIRE) && !e->last_ns;
}

static int cmp_hist(const void *a, const void *b)
{
	const struct bt_wl_hist *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, 16);

	if (c)
		return c;
	return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

/* Whether v[0..n) (sorted) has e's address under e's generation. */
static bool planned(const struct bt_wl_hist *e, const struct bt_wl_entry *v, size_t n,
		    const __u64 *gen_of)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(v[mid].addr, e->addr, 16);

		if (!c)
			return v[mid].id == e->id && gen_of[v[mid].id] == e->gen;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int bt_wl_hist_begin(const char *instance, const struct bt_wl_entry *v, size_t n,
		     const __u64 *gen_of, __u64 now)
{
	struct bt_wl_hist *open = NULL;
	size_t nopen = 0, next = 0;
	__u32 seq = 0;
	struct hist_map m;
	int err;

	if (!n)
		return 0;
	if ((err = hist_map(instance, true, &m)))
		return err;
	if (!(open = malloc(BT_WL_HIST * sizeof(*open)))) {
		munmap(m.v, m.len);
		return -ENOMEM;
	}
	/* the ring goes on after its newest entry */
	for (size_t i = 0; i < BT_WL_HIST; i++) {
		if (m.v[i].first_ns && m.v[i].seq >= seq) {
			seq = m.v[i].seq;
			next = i + 1;
		}
		if (held(&m.v[i]))
			open[nopen++] = m.v[i];
	}
	if (nopen > 1)
		qsort(open, nopen, sizeof(*open), cmp_hist);
	for (size_t j = 0; j < n; j++) {
		struct bt_wl_hist key = { .id = v[j].id, .gen = gen_of[v[j].id] };
		bool have = false;

		memcpy(key.addr, v[j].addr, 16);
		for (size_t lo = 0, hi = nopen; lo < hi && !have;) {
			size_t mid = lo + (hi - lo) / 2;
			int c = memcmp(open[mid].addr, key.addr, 16);

			if (!c)	/* one held entry an address, at most */
				have = open[mid].id == key.id && open[mid].gen == key.gen;
			if (!c)
				break;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (have || !key.gen)
			continue;
		/* the oldest entry not held (there is one: at most
		 * BT_WL_ADDRS of BT_WL_HIST are) */
		for (size_t k = 0; k < BT_WL_HIST && held(&m.v[next % BT_WL_HIST]); k++)
			next++;
		struct bt_wl_hist *e = &m.v[next++ % BT_WL_HIST];

		/* emptied first: a reader copying it meanwhile sees it change */
		__atomic_store_n(&e->first_ns, 0, __ATOMIC_RELEASE);
		memcpy(e->addr, key.addr, 16);
		e->gen = key.gen;
		e->id = key.id;
		e->last_ns = 0;
		e->seq = ++seq;
		__atomic_store_n(&e->first_ns, now, __ATOMIC_RELEASE);
	}
	free(open);
	munmap(m.v, m.len);
	return 0;
}

int bt_wl_hist_end(const char *instance, const struct bt_wl_entry *v, size_t n,
		   const __u64 *gen_of, __u64 now)
{
	struct hist_map m;
	char path[512];
	int err;

	/* ending every entry: none to end where no history was made */
	if (!n && !bt_instance_path(instance, "wl_hist", path, sizeof(path)) &&
	    access(path, F_OK) && errno == ENOENT)
		return 0;
	if ((err = hist_map(instance, true, &m)))
		return err;
	for (size_t i = 0; i < BT_WL_HIST; i++)
		if (held(&m.v[i]) && !planned(&m.v[i], v, n, gen_of))
			__atomic_store_n(&m.v[i].last_ns, now, __ATOMIC_RELEASE);
	munmap(m.v, m.len);
	return 0;
}

int bt_wl_hist_load(const char *instance, struct bt_wl_hist_view *h)
{
	char path[512];
	struct hist_map m;
	int err, fd;

	memset(h, 0, sizeof(*h));
	if ((err = hist_map(instance, false, &m)))
		return err;
	h->v = malloc(BT_WL_HIST * sizeof(*h->v));
	for (size_t i = 0; h->v && i < BT_WL_HIST; i++) {
		struct bt_wl_hist e;
		__u64 first = __atomic_load_n(&m.v[i].first_ns, __ATOMIC_ACQUIRE);

		memcpy(&e, &m.v[i], sizeof(e));
		/* an entry rewritten while copied is left out */
		if (!first || first != __atomic_load_n(&m.v[i].first_ns, __ATOMIC_ACQUIRE) ||
		    e.first_ns != first)
			continue;
		/* to real time as the windows' times are, with the same offset:
		 * a clock step moves both alike */
		e.first_ns = bt_boot_to_real(e.first_ns);
		if (e.last_ns)
			e.last_ns = bt_boot_to_real(e.last_ns);
		h->v[h->n++] = e;
	}
	munmap(m.v, m.len);
	if (!h->v)
		return -ENOMEM;
	if (h->n > 1)
		qsort(h->v, h->n, sizeof(*h->v), cmp_hist);
	if (bt_instance_path(instance, "wl_names", path, sizeof(path)) == 0 &&
	    (fd = bpf_obj_get(path)) >= 0) {
		names_read(fd, &h->names);
		close(fd);
	}
	return 0;
}

void bt_wl_hist_free(struct bt_wl_hist_view *h)
{
	free(h->v);
	bt_wl_names_close(&h->names);
	memset(h, 0, sizeof(*h));
}

/* The address's first entry in the sorted view (h->n: none) */
static size_t hist_first(const struct bt_wl_hist_view *h, const __u64 addr[2])
{
	size_t a = 0, b = h->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (memcmp(h->v[mid].addr, addr, 16) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* e's name if it met [lo, hi] and its id was not given again since */
static const char *hist_name(const struct bt_wl_hist_view *h, const struct bt_wl_hist *e,
			     __u64 lo, __u64 hi)
{
	const char *s;

	if (e->first_ns > hi || (e->last_ns && e->last_ns < lo))
		return NULL;
	s = bt_wl_name_of(&h->names, e->id);
	return s && h->names.v[e->id].gen == e->gen ? s : NULL;
}

int bt_wl_hist_ids(const struct bt_wl_hist_view *h, const __u64 addr[2], __u64 lo, __u64 hi,
		   __u32 *ids, int max)
{
	int n = 0;

	for (size_t a = hist_first(h, addr); a < h->n && !memcmp(h->v[a].addr, addr, 16); a++) {
		bool dup = false;

		if (!hist_name(h, &h->v[a], lo, hi))
			continue;
		for (int i = 0; i < n; i++)
			dup |= ids[i] == h->v[a].id;
		if (!dup && n < max)
			ids[n++] = h->v[a].id;
	}
	return n;
}

int bt_wl_hist_find(const struct bt_wl_hist_view *h, const __u64 addr[2], __u64 lo, __u64 hi,
		    __u64 at, const char **out, int max)
{
	size_t a = hist_first(h, addr);
	int n = 0, n_at = 0;
	const char *name_at = NULL;

	for (; a < h->n && !memcmp(h->v[a].addr, addr, 16); a++) {
		const struct bt_wl_hist *e = &h->v[a];
		const char *s = hist_name(h, e, lo, hi);
		bool dup = false;

		if (!s)
			continue;
		if (at && e->first_ns <= at && (!e->last_ns || e->last_ns >= at)) {
			name_at = s;
			n_at++;
		}
		for (int i = 0; i < n; i++)
			dup |= !strcmp(out[i], s);
		if (!dup && n < max)
			out[n++] = s;
	}
	if (n > 1 && n_at == 1) {
		out[0] = name_at;
		n = 1;
	}
	return n;
}
