/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The SPIE query the CLI and the API share (trace_query.c). */
#ifndef BLOOMTAP_TRACE_QUERY_H
#define BLOOMTAP_TRACE_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "core/capture.h"
#include "instance/instance.h"

struct json_object;

/* The hits (windows and drops) one answer of bt_trace_buffer holds at
 * most; a packet's "seen" counts them all. */
#define BT_TRACE_API_HITS (1 << 17)
/* What a trace searches; a zeroed field is open. */
struct bt_trace_query {
	const struct bt_instance *inst;	/* its live windows; NULL: none */
	const char *archive;		/* its files there; NULL: none */
	__u64 since, until;		/* windows overlapping [since, until], ns */
	uint64_t max_packets;		/* refused past it, a cut packet's segments
					 * counted; 0: any number */
	/* window x packet probes of the whole trace, live and archived (the
	 * archive's newest first, the rest left out and said; a batch whose
	 * live windows do not fit ends the trace); 0: none (the API's is at
	 * most 2^26) */
	uint64_t budget;
	uint32_t mss;			/* merged buffers cut at this; 0: the flow's */
	/* a packet searches the windows overlapping its time +- skew_ns
	 * (0: BT_TRACE_SKEW_NS); any_time: every window; at_ns: --hex's
	 * time (0: any time) */
	__u64 skew_ns, at_ns;
	bool any_time;
	double deadline;		/* bt_mono_s(): the archive search stops at it,
					 * as at the budget; 0: none */
};
/* The default skew: a capture's clock against this host's (NTP leaves
 * milliseconds; docs/traceback.md "Clocks") and a window's boundary */
#define BT_TRACE_SKEW_NS 2000000000ULL
/* The trace of the packets in buf (a pcap or pcapng capture, or hex text)
 * as trace -j prints it; NULL with err set on bad input or past
 * max_packets. Takes no lock: the ring is read as it turns. */
struct json_object *bt_trace_buffer(const struct bt_trace_query *q, const void *buf, size_t len,
				    char *err, size_t errlen);
/* The same answer as JSON text (the API's), serialized a packet at a
 * time; NULL with err set as above, and errno E2BIG when the budget ran
 * out (EINVAL otherwise). max_packets counts a cut packet's segments. */
char *bt_trace_text(const struct bt_trace_query *q, const void *buf, size_t len, char *err,
		    size_t errlen);
/* trace's answer on stdout, plain or JSON as asked, for the packets of cap
 * (or the one in hex when cap is NULL; file names cap in messages).
 * Returns the exit status: 0 all seen, 1 some not or the trace failed
 * (the windows could not be read, the budget ran out), 2 on a bad input
 * (a capture that breaks off, bad hex, no IP packet). */
int bt_trace_print(const struct bt_trace_query *q, struct bt_capture *cap, const char *hex,
		   const char *file);
#endif /* BLOOMTAP_TRACE_QUERY_H */
