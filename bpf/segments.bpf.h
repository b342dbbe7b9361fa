/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A TCP skb that stands for several packets on the wire, digested one
 * segment at a time: a GRO'd skb the kernel dropped (drop.bpf.h), and a
 * TSO/GSO skb the host sends (egress.bpf.h), which the NIC or the stack
 * cuts later. Each segment's digest is rebuilt from the merged header with
 * its own length field, IPv4 ID (unless fixed) and sequence number, so it
 * equals what the next hop's XDP program records for that segment (the
 * digest's words: include/hash.h "The SPIE digest"). */
#ifndef BLOOMTAP_SEGMENTS_BPF_H
#define BLOOMTAP_SEGMENTS_BPF_H

#include "spie.bpf.h"
#include "config.bpf.h"

#define HDR_BYTES 80	/* a header copy: IPv4's (60 at most) + TCP's first 13 bytes */

/* The segments of one skb, the first one's included */
struct seg_run {
	__u64 addrs, hdr, after;
	__u32 segs, gso_size;
	__u32 len, last_len;	/* the length field of all but the last, the last's */
	__u32 win, reason;	/* reason: a drop's */
	bool v4, fixed_id;
	bool both_ids;		/* IPv4 IDs fixed or incrementing, not told
				 * apart: each segment after the first has a
				 * digest for each (egress, forwarded skbs) */
	bool sent;		/* egress: "left here", not "dropped" */
};

/* One segment, as bpf_loop() calls it: the callback is verified once,
 * where an unrolled loop of 64 segments made the verifier walk the SPIE
 * insert 64 times (547,000 instructions on Linux 6.18; past its limit of a
 * million on 6.1). bpf_loop is Linux 5.17's. */
struct seg_ctx {
	const struct seg_run *g;
	struct bt_ctl *c;
	__u32 seq0;
	__u16 id0;
};

static __always_inline void segment_insert(const struct seg_ctx *x, __u64 w, __u64 a)
{
	const struct seg_run *g = x->g;
	__u64 h = bt_hash_spie_finish(&cfg_keys, g->addrs, w, a, 0);	/* TCP: no more word */

	if (g->sent)
		spie_insert_sent(x->c, g->win, h, false);
	else
		spie_insert_dropped(x->c, g->win, h, g->reason);
}

/* The merged header's word with a segment's length field: IPv4's bytes
 * 2-3, IPv6's bytes 4-5 */
static __always_inline __u64 seg_with_len(const struct seg_run *g, __u16 len)
{
	if (g->v4)
		return (g->hdr & ~(0xffffULL << 16)) | (__u64)bpf_htons(len) << 16;
	return (g->hdr & ~(0xffffULL << 32)) | (__u64)bpf_htons(len) << 32;
}

static long one_segment(__u32 i, void *arg)
{
	struct seg_ctx *x = arg;
	const struct seg_run *g = x->g;
	__u16 len = i + 1 < g->segs ? g->len : g->last_len;
	__u64 w, a, fixed;

	w = fixed = seg_with_len(g, len);
	if (g->v4 && !g->fixed_id)
		w = (w & ~(0xffffULL << 32)) | (__u64)bpf_htons(bt_seg_id(x->id0, i, 0)) << 32;
	a = (g->after & 0xffffffffULL) | (__u64)bpf_htonl(bt_seg_seq(x->seq0, i, g->gso_size)) << 32;
	segment_insert(x, w, a);
	if (g->both_ids && i)
		segment_insert(x, fixed, a);
	return 0;
}

/* The segments digested: at most BT_MAX_SEGS. */
static __always_inline __u32 digest_segments(struct bt_ctl *c, const struct seg_run *g)
{
	struct seg_ctx x = {
		.g = g, .c = c,
		.seq0 = bpf_ntohl((__u32)(g->after >> 32)),
		.id0 = bpf_ntohs((__u16)(g->hdr >> 32)),
	};
	long n = bpf_loop(g->segs < BT_MAX_SEGS ? g->segs : BT_MAX_SEGS, one_segment, &x, 0);

	return n > 0 ? n : 0;
}

/* The first segment's digest: the merged header holds its IPv4 ID and
 * sequence number, and its length field is g->len (segs > 1). */
static __always_inline __u64 seg_first_digest(const struct seg_run *g)
{
	return bt_hash_spie_finish(&cfg_keys, g->addrs, seg_with_len(g, g->len), g->after, 0);
}

/* A TCP skb's segments' lengths into g, from a copy of its IP header ip
 * (hl bytes, IPv6's extension headers included; TCP's first 13 after it,
 * read with & 0x7f): true when they are what GRO or TSO leave, with
 * *bytes (each segment's headers counted); false, and it is digested as
 * it is. g holds all but the segments' lengths. */
static __always_inline bool gso_tcp_lengths(const __u8 *ip, __u32 hl, struct seg_run *g,
					    __u64 *bytes)
{
	/* the merged header's length field is the whole skb's */
	__u32 thl = (ip[(hl + 12) & 0x7f] >> 4) * 4;
	__u32 total = g->v4 ? ((__u32)ip[2] << 8 | ip[3]) : 40 + ((__u32)ip[4] << 8 | ip[5]);
	/* a segment's length field: IPv4's counts its header, IPv6's not
	 * the fixed 40 bytes */
	__u32 hdrs = (g->v4 ? hl : hl - 40) + thl;

	if (thl < 20 || total < hl + thl + (g->segs - 1) * g->gso_size + 1)
		return false;
	g->len = hdrs + g->gso_size;
	g->last_len = hdrs + total - hl - thl - (g->segs - 1) * g->gso_size;
	*bytes += (g->segs - 1) * (__u64)(hl + thl);
	return true;
}

/* gso_tcp_lengths, then the segments digested (*digested) */
static __always_inline bool gso_tcp_segments(struct bt_ctl *c, const __u8 *ip, __u32 hl,
					     struct seg_run *g, __u64 *bytes, __u32 *digested)
{
	if (!gso_tcp_lengths(ip, hl, g, bytes))
		return false;
	*digested = digest_segments(c, g);
	return true;
}

#endif /* BLOOMTAP_SEGMENTS_BPF_H */
