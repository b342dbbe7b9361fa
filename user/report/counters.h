/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The datapath's counters by name (counters.c). */
#ifndef BLOOMTAP_COUNTERS_H
#define BLOOMTAP_COUNTERS_H

#include <linux/types.h>
#include "bloomtap.h"
#include "instance/instance.h"

/* Counter names, in enum bt_counter order: plain output and JSON keys. */
extern const char *const bt_counter_names[BT_CTR_MAX];
/* stats: the per-CPU counters summed, plain or JSON as asked. */
int bt_print_stats(const struct bt_instance *inst, enum bt_direction dir);
/* The traffic of each workload id that has any in wl_counts' stage (an
 * enum bt_direction, or BT_WL_DROPPED), counted per id when the packets
 * passed, so that a retired generation keeps its own: into o's
 * "workloads" array, or printed, under title (a line, NULL: none) when
 * there is a row. 0 or -errno. */
int bt_workload_counts(const struct bt_instance *inst, int stage, const char *title,
		       struct json_object *o);

#endif /* BLOOMTAP_COUNTERS_H */
