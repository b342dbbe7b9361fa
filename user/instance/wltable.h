/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* An instance's workload table (include/bloomtap.h "Workloads"): the ids'
 * names, as the commands read them, and the agent's writes. */
#ifndef BLOOMTAP_WLTABLE_H
#define BLOOMTAP_WLTABLE_H

#include <stdbool.h>
#include <json-c/json.h>
#include "bloomtap.h"
#include "instance.h"

/* Every id's name, read once for a report. */
struct bt_wl_names {
	struct bt_wl_name *v;	/* BT_WL_IDS of them; NULL: none could be read */
};
void bt_wl_names_open(const struct bt_instance *inst, struct bt_wl_names *w);
void bt_wl_names_close(struct bt_wl_names *w);
/* id's name read again into w (a reader that outlives the read: the
 * agent names an id before any address is given it) */
void bt_wl_name_reread(const struct bt_instance *inst, struct bt_wl_names *w, __u32 id);
/* The name of id, NULL for none (0, or an id never given). */
const char *bt_wl_name_of(const struct bt_wl_names *w, __u32 id);
/* The same as JSON: a string, or NULL (JSON's null). */
struct json_object *bt_wl_name_json(const struct bt_wl_names *w, __u32 id);

/* The id an address has in the table in use now (0: none), by the
 * datapath's search. Attribution is the datapath's, at packet time: this
 * answers "now" only. */
__u32 bt_wl_id_now(const struct bt_instance *inst, const __u8 addr[16]);

/* The table in use now, in slot order: *v (malloc'd, NULL when empty)
 * holds *n addresses and their ids. 0 or -errno. */
struct bt_wl_entry;
int bt_wl_table_read(const struct bt_instance *inst, struct bt_wl_entry **v, size_t *n);

/* Per id in stage dir (an enum bt_direction, or BT_WL_DROPPED: the
 * instance's drops), summed over CPUs, into counts[BT_WL_IDS]. */
int bt_wl_counts(const struct bt_instance *inst, int dir, struct bt_watch_count *counts);

/* The agent's writes. An id given to a generation: its name and gen, its
 * counters cleared, before any address names it. */
int bt_wl_give(const struct bt_instance *inst, __u32 id, __u64 gen, const char *name);
/* An address and its id, for bt_wl_table_write(). */
struct bt_wl_entry {
	__u8 addr[16];
	__u32 id;
};
/* Makes v[0..n) (ids not 0) the instance's table of addresses: written
 * into the table not in use and switched to with one store, unless the
 * one in use holds them already. 1: switched (wait a grace period before
 * the next write, so that no packet reads the table rewritten), 0: nothing
 * changed, or -errno. *placed: entries in the table (the others found no
 * slot within BT_WL_PROBES, or came past BT_WL_ADDRS). */
int bt_wl_table_write(const struct bt_instance *inst, const struct bt_wl_entry *v, size_t n,
		      size_t *placed);
/* No address looked up any more (the table stays as it is). */
void bt_wl_table_off(const struct bt_instance *inst);

/* The table's history, for trace (docs/workloads.md "Trace"): which
 * generation held an address when, so that a packet's digest, which
 * carries no id, is named by the workload of its window's time. A pinned
 * array of BT_WL_HIST entries (wl_hist in the instance's pin directory,
 * 768 KiB), made and written by the agent only: a ring whose oldest closed
 * entry is overwritten first (a live one never is: at most BT_WL_ADDRS are
 * live). */
#define BT_WL_HIST 16384
struct bt_wl_hist {
	__u64 addr[2];		/* as a flow key holds it */
	__u64 gen;		/* the generation's (wl_names' gen for id) */
	__u64 first_ns;		/* CLOCK_BOOTTIME (the windows' clock) before the
				 * table naming it was switched to; 0: an empty
				 * entry; bt_wl_hist_load's copy: CLOCK_REALTIME */
	__u64 last_ns;		/* after the table without it was switched to
				 * and a grace period passed; 0: still held */
	__u32 id;
	__u32 seq;		/* the agent's writes, counted: the ring's newest
				 * has the highest */
};
_Static_assert(sizeof(struct bt_wl_hist) == 48, "bt_wl_hist must be 48 bytes");

/* The agent's side. gen_of[id]: the live generation of each id (0: none).
 * begin, before the table is written: an entry opened, first_ns = now,
 * for each of v[0..n) (sorted by address) not held already; end, after
 * the switch and its grace period: each held entry that v no longer has
 * closed, last_ns = now. n 0 closes them all (the agent's stop and
 * start: nobody names an address between). 0 or -errno. */
int bt_wl_hist_begin(const char *instance, const struct bt_wl_entry *v, size_t n,
		     const __u64 *gen_of, __u64 now);
int bt_wl_hist_end(const char *instance, const struct bt_wl_entry *v, size_t n,
		   const __u64 *gen_of, __u64 now);

/* A reader's copy: the entries sorted by address, and the ids' names. */
struct bt_wl_hist_view {
	struct bt_wl_hist *v;
	size_t n;
	struct bt_wl_names names;
};
/* -ENOENT: the instance has no history (no agent kept workloads). */
int bt_wl_hist_load(const char *instance, struct bt_wl_hist_view *h);
void bt_wl_hist_free(struct bt_wl_hist_view *h);
/* The names of the generations that held addr (a flow key's two words)
 * at some time in [lo, hi] (CLOCK_REALTIME ns), at most max, each once:
 * when several did, the one that held it at time at (0: unknown) alone,
 * if that is one. A generation whose id was given again since (its name
 * gone from wl_names) is left out. Returns how many. */
int bt_wl_hist_find(const struct bt_wl_hist_view *h, const __u64 addr[2], __u64 lo, __u64 hi,
		    __u64 at, const char **out, int max);
/* The ids of the generations that held addr at some time in [lo, hi]
 * (as bt_wl_hist_find, named still), at most max, each once. */
int bt_wl_hist_ids(const struct bt_wl_hist_view *h, const __u64 addr[2], __u64 lo, __u64 hi,
		   __u32 *ids, int max);

#endif /* BLOOMTAP_WLTABLE_H */
