// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The agent's workload table (workloads = auto; include/bloomtap.h
 * "Workloads", docs/workloads.md "Attribution"), on a thread of its own:
 * every second the node's workloads are scanned again (user/core/
 * workloads.c, incremental), each workload generation keeps one id for its
 * life, and every interface's table is brought to what the scan found:
 * names (and cleared counters) before addresses, stale addresses out. The
 * scan runs outside the agent's lock; the writes, a few map updates when
 * something changed, under it (an interface's instance may be made anew
 * by the loop: its empty table is filled on the next pass). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "agent_state.h"
#include "base/common.h"
#include "base/util.h"
#include "core/workloads.h"
#include "instance/drops.h"
#include "instance/spie.h"
#include "instance/wltable.h"

/* A generation: one namespace with the containers seen in it (a new
 * container on a reused address, or in the same namespace, is a new one). */
struct gen {
	char key[128];		/* namespace inode and the containers' ids */
	char name[BT_WL_NAME_LEN + 1];
	__u64 gen;
	__u32 id;
	int form;		/* enum bt_wl_form: how name was made */
	bool live;
};


static struct {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, quit;
	struct agent *ag;
	struct bt_workloads *w;
	struct gen *gens;	/* live ones; a retired one leaves (its id's name
				 * stays in the instances' wl_names) */
	size_t ngens;
	__u64 next_gen;
	__u32 next_id;
	bool taken[BT_WL_IDS];	/* ids of live generations */
	bool scan_failed;	/* said once */
	bool table_full;	/* said once */
	/* each id's live generation and its name's form (gen 0: none), for
	 * /metrics; under the agent's lock */
	struct {
		__u64 gen;
		int form;
	} holder[BT_WL_IDS];
} ws = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .next_gen = 1,
	 .next_id = 1 };

/* The name a workload's addresses carry: namespace/pod/container (one
 * application container; namespace/pod with several), the container's
 * name, else the network namespace's. Returns its enum bt_wl_form. */
static int wl_name(const struct bt_workload *x, char *buf, size_t len)
{
	const struct bt_wl_container *app = NULL;
	size_t apps = 0;

	for (size_t i = 0; i < x->n_ctrs; i++)
		if (!x->ctrs[i].infra && apps++ == 0)
			app = &x->ctrs[i];
	if (app && (x->kind == BT_WL_POD || app->pod_name[0]) && app->pod_name[0]) {
		const char *ns = app->pod_namespace;

		if (apps == 1) {
			snprintf(buf, len, "%s%s%s/%s", ns, ns[0] ? "/" : "", app->pod_name,
				 app->name[0] ? app->name : app->id);
			return ns[0] ? BT_WLF_NS_POD_CTR : BT_WLF_POD_CTR;
		}
		snprintf(buf, len, "%s%s%s", ns, ns[0] ? "/" : "", app->pod_name);
		return ns[0] ? BT_WLF_NS_POD : BT_WLF_POD;
	}
	if (app) {
		snprintf(buf, len, "%s", app->name[0] ? app->name : app->id);
		return BT_WLF_CTR;
	}
	if (x->netns_name[0])
		snprintf(buf, len, "%s", x->netns_name);
	else
		snprintf(buf, len, "netns:%" PRIu64, (uint64_t)x->netns_ino);
	return BT_WLF_NETNS;
}

static void wl_key(const struct bt_workload *x, char *buf, size_t len)
{
	int o = snprintf(buf, len, "%" PRIu64, (uint64_t)x->netns_ino);

	/* an id's first 16 digits tell containers apart well enough here */
	for (size_t i = 0; i < x->n_ctrs && o > 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - o, ":%.16s", x->ctrs[i].id);
}

/* The next id no live generation holds: round-robin, so that a retired
 * id comes back as late as can be. 0 when all are live. */
static __u32 take_id(void)
{
	for (__u32 n = 1; n < BT_WL_IDS; n++) {
		__u32 id = ws.next_id;

		ws.next_id = ws.next_id + 1 < BT_WL_IDS ? ws.next_id + 1 : 1;
		if (!ws.taken[id]) {
			ws.taken[id] = true;
			return id;
		}
	}
	return 0;
}

static struct gen *find_gen(const char *key)
{
	for (size_t i = 0; i < ws.ngens; i++)
		if (!strcmp(ws.gens[i].key, key))
			return &ws.gens[i];
	return NULL;
}

static int cmp_entry(const void *a, const void *b)
{
	return memcmp(((const struct bt_wl_entry *)a)->addr, ((const struct bt_wl_entry *)b)->addr, 16);
}

/* The scan's addresses with their generations' ids, sorted, into *out;
 * generations seen marked live, the others retired. */
static size_t plan(struct bt_wl_entry **out)
{
	size_t n = bt_workloads_count(ws.w), nw = 0, cap = 0;
	struct bt_wl_entry *v = NULL;

	for (size_t i = 0; i < ws.ngens; i++)
		ws.gens[i].live = false;
	for (size_t i = 0; i < n; i++) {
		const struct bt_workload *x = bt_workloads_get(ws.w, i);
		char key[128];
		struct gen *g;

		if (!x->n_addrs)
			continue;
		wl_key(x, key, sizeof(key));
		if (!(g = find_gen(key))) {
			struct gen *m = realloc(ws.gens, (ws.ngens + 1) * sizeof(*m));
			__u32 id;

			if (!m || !(id = take_id())) {
				if (m)
					ws.gens = m;
				continue;	/* 4095 live workloads: the rest unnamed */
			}
			ws.gens = m;
			g = &ws.gens[ws.ngens++];
			memset(g, 0, sizeof(*g));
			snprintf(g->key, sizeof(g->key), "%s", key);
			char full[4 * BT_WL_NAME];

			g->form = wl_name(x, full, sizeof(full));
			/* cut at BT_WL_NAME_LEN (bloomtap workloads has them whole) */
			memcpy(g->name, full, strnlen(full, BT_WL_NAME_LEN));
			g->gen = ws.next_gen++;
			g->id = id;
		}
		g->live = true;
		for (size_t a = 0; a < x->n_addrs; a++) {
			const struct bt_wl_addr *ad = &x->addrs[a];
			struct bt_wl_entry *e;

			/* link-local addresses repeat from namespace to namespace */
			if (ad->family == AF_INET6 && ad->addr[0] == 0xfe && (ad->addr[1] & 0xc0) == 0x80)
				continue;
			if (nw == cap) {
				struct bt_wl_entry *m = realloc(v, (cap = cap * 2 + 16) * sizeof(*m));

				if (!m)
					break;
				v = m;
			}
			e = &v[nw++];
			memset(e, 0, sizeof(*e));
			if (ad->family == AF_INET) {	/* v4-mapped, as a flow key */
				e->addr[10] = e->addr[11] = 0xff;
				memcpy(e->addr + 12, ad->addr, 4);
			} else {
				memcpy(e->addr, ad->addr, 16);
			}
			e->id = g->id;
		}
	}
	/* the retired leave: their ids free for later generations */
	for (size_t i = 0; i < ws.ngens;) {
		if (ws.gens[i].live) {
			i++;
			continue;
		}
		ws.taken[ws.gens[i].id] = false;
		ws.gens[i] = ws.gens[--ws.ngens];
	}
	if (nw > 1)
		qsort(v, nw, sizeof(*v), cmp_entry);
	/* an address two workloads hold names neither */
	size_t k = 0;

	for (size_t i = 0; i < nw; i++) {
		if (k && !memcmp(v[k - 1].addr, v[i].addr, 16)) {
			if (v[k - 1].id != v[i].id)
				v[k - 1].id = 0;
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	return k;
}

/* One instance brought to the plan: names (and cleared counters) first,
 * then the table. 1: its table switched. */
static int sync_inst(const struct bt_instance *inst, const struct bt_wl_entry *v, size_t n)
{
	size_t placed;
	int r;

	for (size_t i = 0; i < ws.ngens; i++) {
		const struct gen *g = &ws.gens[i];
		struct bt_wl_name have;
		__u32 id = g->id;

		if (bpf_map_lookup_elem(inst->wl_names_fd, &id, &have) || have.gen != g->gen)
			bt_wl_give(inst, id, g->gen, g->name);
	}
	r = bt_wl_table_write(inst, v, n, &placed);
	if (r == 1 && placed < n && !ws.table_full) {
		bt_log(BT_LOG_WARNING, "workloads: %zu of %zu addresses did not fit the table: "
		       "they are named nowhere", n - placed, n);
		ws.table_full = true;
	}
	return r == 1;
}

/* Every instance's history (wltable.h "bt_wl_hist"): opened (begin) or
 * closed (!begin) against v[0..n), at now. Under the agent's lock. */
static void history(const struct bt_wl_entry *v, size_t n, bool begin, __u64 now)
{
	static __u64 gen_of[BT_WL_IDS];
	static bool said;

	memset(gen_of, 0, sizeof(gen_of));
	for (size_t i = 0; i < ws.ngens; i++)
		gen_of[ws.gens[i].id] = ws.gens[i].gen;
	for (int i = 0; i < ws.ag->n; i++) {
		const struct bt_instance *inst = &ws.ag->ifs[i].inst;
		int err;

		if (inst->wl_addr_fd <= 0)
			continue;
		err = begin ? bt_wl_hist_begin(inst->name, v, n, gen_of, now)
			    : bt_wl_hist_end(inst->name, v, n, gen_of, now);
		if (err && !said) {
			bt_log(BT_LOG_WARNING, "workloads: %s: its history (for trace) could not "
			       "be written: %s", inst->name, strerror(-err));
			said = true;
		}
	}
}

static void pass(void)
{
	struct bt_wl_entry *v = NULL;
	size_t n, k = 0;
	bool switched = false;
	int err = bt_workloads_refresh(ws.w);

	if (err) {
		if (!ws.scan_failed)
			bt_log(BT_LOG_ERR, "workloads: the node could not be scanned: %s",
			       strerror(-err));
		ws.scan_failed = true;
		return;
	}
	ws.scan_failed = false;
	/* the drops the node's workloads' devices see, the instances' by
	 * digest (user/instance/drops.c), from the same scan: before the
	 * tables, so that a workload the table names has its devices given */
	bt_drops_refresh_workloads(ws.w);
	n = plan(&v);
	for (size_t i = 0; i < n; i++)	/* an address two workloads hold: neither */
		if (v[i].id)
			v[k++] = v[i];
	pthread_mutex_lock(&ws.ag->lock);
	/* the history holds an address from before the table names it
	 * until after no table does */
	history(v, k, true, bt_boot_ns());
	for (int i = 0; i < ws.ag->n; i++)
		if (ws.ag->ifs[i].inst.wl_addr_fd > 0)
			switched |= sync_inst(&ws.ag->ifs[i].inst, v, k);
	memset(ws.holder, 0, sizeof(ws.holder));
	for (size_t i = 0; i < ws.ngens; i++) {	/* the live ones, after plan() */
		ws.holder[ws.gens[i].id].gen = ws.gens[i].gen;
		ws.holder[ws.gens[i].id].form = ws.gens[i].form;
	}
	pthread_mutex_unlock(&ws.ag->lock);
	/* the table left is rewritten next: nobody reads it after this */
	if (switched)
		bt_grace_period();
	pthread_mutex_lock(&ws.ag->lock);
	history(v, k, false, bt_boot_ns());
	pthread_mutex_unlock(&ws.ag->lock);
	free(v);
}

static void *syncer(void *arg)
{
	pthread_mutex_lock(&ws.mu);
	while (!ws.quit) {
		struct timespec t;

		pthread_mutex_unlock(&ws.mu);
		pass();
		pthread_mutex_lock(&ws.mu);
		/* a container's start or stop seen within this and a scan */
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		while (!ws.quit && pthread_cond_timedwait(&ws.cv, &ws.mu, &t) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&ws.mu);
	return NULL;
}

/* Generations go on from the newest an instance names (a restarted agent
 * must not give the ids its predecessor's flows still carry first). */
static void resume(const struct agent *ag)
{
	__u64 newest = 0;

	for (int i = 0; i < ag->n; i++)
		for (__u32 id = 1; id < BT_WL_IDS; id++) {
			struct bt_wl_name x;

			if (!bpf_map_lookup_elem(ag->ifs[i].inst.wl_names_fd, &id, &x) &&
			    x.gen >= newest && x.gen) {
				newest = x.gen;
				ws.next_id = id + 1 < BT_WL_IDS ? id + 1 : 1;
			}
		}
	ws.next_gen = newest + 1;
}

bool bt_workload_live(__u32 id, __u64 gen, int *form)
{
	bool live = gen && id < BT_WL_IDS && ws.holder[id].gen == gen;

	*form = live ? ws.holder[id].form : BT_WLF_UNKNOWN;
	return live;
}

int bt_workload_sync_start(struct agent *ag)
{
	ws.ag = ag;
	ws.quit = false;
	resume(ag);
	/* a predecessor that died left its entries held: nobody named them since */
	history(NULL, 0, false, bt_boot_ns());
	if (!(ws.w = bt_workloads_new(NULL)))
		return -ENOMEM;
	if (pthread_create(&ws.th, NULL, syncer, NULL)) {
		bt_workloads_free(ws.w);
		ws.w = NULL;
		return -EAGAIN;
	}
	ws.started = true;
	return 0;
}

void bt_workload_sync_off(struct agent *ag)
{
	/* a predecessor killed with its tables in force (kill -9): nobody
	 * keeps them now, so no address is named from a stale one, and its
	 * history's entries end here */
	ws.ag = ag;
	for (int i = 0; i < ag->n; i++)
		if (ag->ifs[i].inst.ctl_fd > 0)
			bt_wl_table_off(&ag->ifs[i].inst);
	bt_grace_period();
	history(NULL, 0, false, bt_boot_ns());
}

void bt_workload_sync_stop(void)
{
	if (!ws.started)
		return;
	pthread_mutex_lock(&ws.mu);
	ws.quit = true;
	pthread_cond_broadcast(&ws.cv);
	pthread_mutex_unlock(&ws.mu);
	pthread_join(ws.th, NULL);
	ws.started = false;
	/* nobody keeps the table now: no address is named from a stale one */
	for (int i = 0; i < ws.ag->n; i++)
		if (ws.ag->ifs[i].inst.ctl_fd > 0)
			bt_wl_table_off(&ws.ag->ifs[i].inst);
	bt_grace_period();
	history(NULL, 0, false, bt_boot_ns());
	bt_workloads_free(ws.w);
	ws.w = NULL;
	free(ws.gens);
	ws.gens = NULL;
	ws.ngens = 0;
	pthread_mutex_lock(&ws.ag->lock);
	memset(ws.holder, 0, sizeof(ws.holder));
	pthread_mutex_unlock(&ws.ag->lock);
}
