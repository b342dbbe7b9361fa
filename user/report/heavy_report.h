/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Heavy flows as the CLI and the API answer them (heavy_report.c). */
#ifndef BLOOMTAP_HEAVY_REPORT_H
#define BLOOMTAP_HEAVY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include "instance/instance.h"
#include "instance/sketch.h"

struct json_object;

/* Heavy flows of both intervals (last complete, current), top n. */
int bt_print_heavy(const struct bt_instance *inst, size_t n, bool by_packets,
		   const struct bt_threshold *thr);
/* The same, as the JSON array heavy -j prints (last interval first). */
struct json_object *bt_heavy_json(const struct bt_heavy_maps *m, size_t n, bool by_packets,
				  const struct bt_threshold *thr);
/* The heavy dropped flows (bt_heavy_json's form, each key with its
 * reason); NULL when the maps cannot be mapped. */
struct json_object *bt_heavy_dropped_json(const struct bt_instance *inst, size_t n);
int bt_print_heavy_dropped(const struct bt_instance *inst, size_t n);
/* The intervals ivs (nivs of them), plain or JSON as asked: heavy
 * --interval prints each interval it ends. */
int bt_heavy_print_intervals(const struct bt_heavy_maps *m, const __u32 *ivs, int nivs,
			     size_t n, bool by_packets, const struct bt_threshold *thr);
/* The last complete interval, then the current one. */
void bt_heavy_both_intervals(const struct bt_heavy_maps *m, __u32 ivs[2]);

#endif /* BLOOMTAP_HEAVY_REPORT_H */
