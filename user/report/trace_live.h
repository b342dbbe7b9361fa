/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The live ring as a trace's source (trace_live.c). */
#ifndef BLOOMTAP_TRACE_LIVE_H
#define BLOOMTAP_TRACE_LIVE_H

#include "trace_search.h"

/* The batch's packets searched in t->inst's live windows, without a lock:
 * a window recycled while it is read is left out of the answer (it was
 * archived before it was cleared, and the archive is read next). */
void trace_query_live(struct trace_ctx *t);

#endif /* BLOOMTAP_TRACE_LIVE_H */
