/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's metrics in the Prometheus text exposition format. */
#ifndef BLOOMTAP_METRICS_H
#define BLOOMTAP_METRICS_H

struct agent;

/* Every interface's metrics; the caller holds the agent's lock and frees
 * the text. */
char *bt_metrics_text(struct agent *a);
/* A workload's labels in those metrics, as ",workload=\"...\"" and the
 * parts its name's form (enum bt_wl_form) has; the caller frees it. For
 * the unit tests. */
char *bt_metrics_workload_labels(const char *name, int form);

#endif /* BLOOMTAP_METRICS_H */
