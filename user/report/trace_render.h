/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A trace's answers, plain and JSON (trace_render.c), apart from the
 * query that finds them. */
#ifndef BLOOMTAP_TRACE_RENDER_H
#define BLOOMTAP_TRACE_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "trace_search.h"

struct json_object;

/* One packet's answer, as trace -j prints it. A cut packet's windows and
 * drops are its segments', each once, and its segments are in
 * "segments". */
struct json_object *trace_packet_json(const struct trace_ctx *t, const struct tpkt *p);
/* The same in text, as trace prints it. */
void trace_print_packet(const struct trace_ctx *t, const struct tpkt *p);

/* What trace's summary counts, over the batches printed. */
struct trace_totals {
	uint64_t ip, unseen;		/* IP packets, and those not seen */
	uint64_t searched_max;		/* the most windows a packet searched */
	double fpr_max;			/* the highest combined rate of a packet */
	__u64 cut_ns;			/* the newest archived window left out by
					 * --budget; 0: none */
	bool opened;			/* JSON: the array is open */
};
/* A batch's packets on stdout, plain or as elements of one JSON array
 * (opened with the first), counted into tot. */
void trace_print_batch(const struct trace_ctx *t, struct trace_totals *tot);
/* The end of the answer: the JSON array closed, or the plain summary
 * (hex: --hex's bytes, for what was searched), and where --budget cut the
 * archive. */
void trace_print_end(const struct trace_ctx *t, const char *hex, const struct trace_totals *tot);

#endif /* BLOOMTAP_TRACE_RENDER_H */
