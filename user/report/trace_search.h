/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The trace's state and search, shared by its files: the batch of packets
 * and their hits, the places a trace searches behind one interface (a
 * source: the live ring, trace_live.c; an archive file, trace_archive.c),
 * one window of a source probed, and the drops found in it. The query
 * (trace_query.c) batches and drives; trace_render.c prints. Types for
 * report/trace_*.c alone: the others include trace_query.h. */
#ifndef BLOOMTAP_TRACE_SEARCH_H
#define BLOOMTAP_TRACE_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>
#include <linux/types.h>
#include "core/digest.h"
#include "core/segments.h"
#include "instance/instance.h"
#include "instance/spie.h"
#include "instance/wltable.h"

#define MAX_HITS 64

struct hit {
	const char *instance;	/* the trace's or the archive file's copy */
	__u64 start_ns, end_ns;	/* CLOCK_REALTIME */
	double fpr;
	uint32_t seq;
	bool archived;
	__s64 real_minus_boot;	/* an archived window's writer's (its times'
				 * real-time basis), 0: this process's */
	bool drop;		/* a drop digest: dropped here with reason */
	bool sent;		/* a sent packet's digest: left here (egress) */
	bool in_workload;	/* a drop in a workload's namespace (its
				 * BT_DROP_IN_WORKLOAD digest found too) */
	__u32 reason;
	const char *reason_name;	/* as an archive file's kernel named it
					 * (interned), or NULL: this kernel names it */
};

/* A packet to trace. Most are seen in a window or two: hits grow on
 * demand. Its digest is each source's own (struct probe), under its key. */
struct tpkt {
	struct bt_spie_packet pkt;
	bool ip;
	uint64_t number;	/* in the input, from 1 */
	struct hit *hits;
	int nhits, cap;
	int nseen;		/* hits that are not drops */
	/* the windows searched for it: those overlapping [lo, hi] (CLOCK_REALTIME
	 * ns; 0 and UINT64_MAX: any time), how many, and the sum of their
	 * log(1 - fpr) */
	__u64 ts, lo, hi;
	uint64_t nsearched;
	double log_clean;
	bool cut;		/* hits left out: MAX_HITS, or the answer's bound */
	uint32_t damaged;	/* archive files of its range that could not be
				 * read in full (named on stderr): windows its
				 * answer may lack */
	uint64_t same_as;	/* the number of an earlier packet with the same
				 * invariant bytes (answered there), or 0 */
	int64_t uniq;		/* its entry in trace_ctx.uniq, or -1 */
	/* a merged buffer cut into its segments (core/segments.c): nseg *
	 * variants segments follow it in the batch; it is seen whole (a
	 * replay, generic XDP) or as all the segments of one variant */
	uint32_t nseg, variants, seg_size, seg_payload;
	enum bt_seg_from seg_from;
	bool seg_tcp, seg_v4;
	uint32_t seg;		/* a segment: its number in its packet, from 1; 0 */
	uint32_t seq;		/* a TCP segment's sequence number */
	uint16_t ip_id;		/* an IPv4 segment's ID */
	const char *why;	/* a merged buffer not cut: why */
};

/* A packet's invariant bytes seen earlier in the input: its number, and
 * whether it was seen (once its batch was queried). */
struct uniq_pkt {
	struct bt_spie_packet pkt;
	uint64_t number;
	__u64 lo, hi;		/* the range its answer searched */
	uint64_t batch;		/* the batch it came in */
	size_t idx;		/* its place there */
	bool seen;
};

/* What a batch was searched against, and the answers. */
struct trace_ctx {
	/* the sources, for the whole trace */
	const struct bt_instance *inst;	/* live windows, NULL for none */
	struct bt_spie_maps sm;
	struct bt_hash_keys keys;
	__u64 key_id;
	const char *archive;		/* NULL for none */
	const char *archive_instance;	/* only its files; NULL: all */
	__u64 since, until;		/* CLOCK_REALTIME, 0: open */
	__u64 skew;			/* a packet's windows: its time +- skew */
	bool any_time;			/* every window for every packet */
	__u64 at;			/* --hex's time; 0: any time */
	__u64 slack;			/* window times widened by this: the
					 * clock's steps (bt_clock_span) */
	char **names;			/* instance names the hits point to */
	int nnames;
	int skipped;			/* damaged archive files, named once */
	char **warned;
	int nwarned;
	ZSTD_DCtx *dctx;		/* lent to every archive file read */
	/* the batch */
	struct tpkt *p;
	size_t n;
	int err;
	struct drop_hit {
		struct tpkt *p;
		__u32 reason;
		bool in_workload;
	} *dh;				/* a window's drop digests found */
	size_t ndh, capdh;
	uint32_t *live_seq;		/* live windows searched, by seq */
	int nlive;
	/* the whole input: repeats answered once */
	struct uniq_pkt *uniq;
	uint32_t *uslot;		/* open addressing: index + 1 */
	size_t nuniq, nuslots;
	uint64_t batch_no;
	/* bounds of an answer (the API's; the CLI streams unbounded) */
	bool bounded;
	uint64_t hits_left;		/* hits it may still hold */
	/* window x packet probes, live and archived, of the whole trace:
	 * the archive's newest first, what does not fit left out; a batch
	 * whose live windows do not fit ends the trace (ran_out: its first
	 * packet's number) */
	uint64_t budget, probes;
	uint64_t ran_out;
	double deadline;		/* bt_mono_s(); 0: none */
	__u64 archive_cut_ns;		/* the batch's archived windows ending at
					 * or before this were not searched */
	/* merged buffers: the flows' segment sizes, learned from the whole
	 * capture first when it can be read twice (learned), else as it is
	 * read; mss: --mss, 0 for none */
	struct bt_seg_flows *flows;
	struct bt_seg_split *split;
	bool learned;
	uint32_t mss;
	/* the instance's workload history (n 0: none kept) */
	struct bt_wl_hist_view wlh;
};

/* A place a trace searches, its windows numbered from 0: the live ring
 * (trace_live.c), an archive file (trace_archive.c). Each implementation
 * puts this first in a struct of its own state. */
struct trace_src {
	const struct trace_src_ops *ops;
	bool drop_any;		/* its drop digests include the reason-less
				 * BT_DROP_ANY one (archive files before
				 * format 6 have none) */
	const char *why;	/* the first damage has() met; NULL: none */
};

struct trace_src_ops {
	/* a packet's digest under the source's own key */
	__u64 (*digest)(const struct trace_src *s, const struct bt_spie_packet *p);
	/* whether window w holds digest d: 1 or 0; -1 (s->why set) when what
	 * holds it is damaged */
	int (*has)(struct trace_src *s, __u32 w, __u64 d);
	/* the drop reasons to try in window w (every reason of the kernel
	 * that wrote it when some found no slot) into codes[0..max): how
	 * many; 0 when the window holds no drop digest */
	int (*reasons)(const struct trace_src *s, __u32 w, __u32 *codes, int max);
	/* window w's false-positive rate */
	double (*fpr)(const struct trace_src *s, __u32 w);
	/* a reason's name as the source's kernel named it; NULL (the op or
	 * its answer): as this kernel names it */
	const char *(*reason_name)(const struct trace_src *s, __u32 code, char *buf, size_t len);
};

/* A packet probed in a source: its digest under the source's key. */
struct probe {
	struct tpkt *p;
	__u64 d;
};

/* Queried: an IP packet that does not repeat an earlier one. */
static inline bool trace_queried(const struct tpkt *p)
{
	return p->ip && !p->same_as;
}

/* A stable copy of an instance name for the hits. */
const char *trace_intern(struct trace_ctx *t, const char *name);
/* A window [start, end] (end 0: open) within --since/--until. */
bool trace_in_range(const struct trace_ctx *t, __u64 start, __u64 end);
/* Whether window [start, end] (end 0: still open) is one of packet p's:
 * it overlaps p's range, the window widened by the clock's steps. A
 * window whose times are a replay's (BT_WIN_REPLAY_TIME), not its
 * packets', is every packet's. */
bool trace_in_time(const struct trace_ctx *t, const struct tpkt *p, __u64 start, __u64 end,
		   __u32 flags);
/* Window w of s probed for pk[0..n): the packets whose digest it holds
 * into found[0..*nseen), then, when sent, those whose sent digest it
 * holds, up to the count returned (found has room for 2 n). Stops at
 * damage (s->why): what was found before it is returned. */
size_t trace_probe_window(struct trace_src *s, __u32 w, const struct probe *pk, size_t n,
			  bool sent, struct tpkt **found, size_t *nseen);
/* The window's drop digests of pk[0..n) into t->dh: returns the reasons
 * tried (0: none; -1: out of memory, t->err set). */
int trace_probe_drops(struct trace_ctx *t, struct trace_src *s, __u32 w, const struct probe *pk,
		      size_t n);
/* A window searched for pk[0..n) (those of its time): each counts it,
 * and its "left here" probe when it holds sent digests */
void trace_window_searched(const struct probe *pk, size_t n, double fpr, bool sent);
/* The drops trace_probe_drops found, as hits h (the window's) with their
 * reasons, named as s names them. */
void trace_commit_drops(struct trace_ctx *t, const struct trace_src *s, struct hit h, int tries,
			const struct probe *pk, size_t n);
void trace_add_hit(struct trace_ctx *t, struct tpkt *p, const struct hit *h);
/* Hits by their window's start. */
int trace_cmp_hit(const void *a, const void *b);
/* Whether a packet was seen: its own hits, or its first's. */
bool trace_seen_one(const struct trace_ctx *t, const struct tpkt *p);
/* A cut packet's segments seen, in the variant (IDs incremented, fixed)
 * with the most (the first on a tie), which *variant says. */
uint32_t trace_segs_seen(const struct trace_ctx *t, const struct tpkt *p, uint32_t *variant);
/* A cut packet is seen whole, or when all its segments are. */
bool trace_was_seen(const struct trace_ctx *t, const struct tpkt *p);
/* The chance that at least one of the windows searched for p answers
 * falsely: of those windows alone */
double trace_combined_fpr(const struct tpkt *p);

#endif /* BLOOMTAP_TRACE_SEARCH_H */
