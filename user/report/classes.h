/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* An instance's watch list as the CLI prints it (classes.c). */
#ifndef BLOOMTAP_CLASSES_H
#define BLOOMTAP_CLASSES_H

#include "instance/instance.h"
#include "instance/watch.h"

/* Per class of the watch list: entries, packets and bytes received or sent
 * (dir, an enum bt_direction; watch show). */
int bt_print_watch(const struct bt_instance *inst, int dir);
/* What watch load loaded: entries, classes, bytes, the check bits. */
void bt_print_watch_loaded(const char *name, const struct bt_watch_loaded *w);

#endif /* BLOOMTAP_CLASSES_H */
