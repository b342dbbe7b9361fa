/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's metrics in the Prometheus text exposition format. */
#ifndef BLOOMTAP_METRICS_H
#define BLOOMTAP_METRICS_H

struct agent;

/* Every interface's metrics; the caller holds the agent's lock and frees
 * the text. */
char *bt_metrics_text(struct agent *a);

#endif /* BLOOMTAP_METRICS_H */
