/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the kernel dropped of an instance's packets, as the CLI and the
 * API answer it (drops_report.c). */
#ifndef BLOOMTAP_DROPS_REPORT_H
#define BLOOMTAP_DROPS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include "instance/drops.h"
#include "instance/instance.h"

struct json_object;

/* drops -j of one instance: per reason, digested, causes, suppressed. */
struct json_object *bt_drops_json(const struct bt_instance *inst, size_t n);
/* drops of one instance, plain or JSON as asked, with its top n heavy
 * dropped flows of both intervals. */
int bt_print_drops(const struct bt_instance *inst, size_t n);
/* Per reason: packets and bytes, as drops -j lists them. */
struct json_object *bt_drop_totals_json(const struct bt_drop_total *t, int n);
/* The same as drops prints them. */
void bt_print_drop_totals(const struct bt_drop_total *t, int n);
/* The reason code is in the suppressed set bits. */
bool bt_drop_suppressed(const __u64 *bits, __u32 code);

#endif /* BLOOMTAP_DROPS_REPORT_H */
