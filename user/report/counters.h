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

#endif /* BLOOMTAP_COUNTERS_H */
