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

/* Per id in direction dir, summed over CPUs, into counts[BT_WL_IDS]. */
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

#endif /* BLOOMTAP_WLTABLE_H */
