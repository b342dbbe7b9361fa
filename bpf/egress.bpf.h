/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The instance's egress program (tc: a tcx link, or a clsact filter before
 * Linux 6.6): what the interface sends, so that a path starts at the
 * sender ("left here"). It parses and counts as the XDP program does (in
 * the counters' egress entry), and records each packet's SPIE digest,
 * tagged as sent (include/hash.h bt_hash_sent), in the current window.
 *
 * It counts heavy flows and watch-list classes in its own stage's maps
 * (maps.bpf.h BT_HEAVY_STAGE_MAPS(e), the egress entries of counters and
 * watch_counts), in the instance's intervals, and names the workloads of
 * each sent packet's addresses as the XDP program does (workloads.bpf.h:
 * wl_counts' egress entries, the ids in the heavy-flow key).
 *
 * A sent skb is not yet what the wire carries:
 * - a TSO/GSO TCP skb is up to 64 KB that the NIC or the stack cuts
 *   later: each segment's digest is rebuilt (segments.bpf.h), as the next
 *   hop records it;
 * - under checksum offload, a UDP or TCP checksum is partial: the digest
 *   never covers one (UDP's is replaced by payload bytes, TCP's is past
 *   the 8 bytes taken; include/hash.h "The SPIE digest");
 * - a UDP GSO skb's datagrams: counted, not digested (BT_CTR_GSO_NOT_DIGESTED;
 *   a callback that reads each one's payload through the skb is refused
 *   by Linux 6.1's verifier).
 * Its entry point, bloomtap_egress, is in bloomtap.bpf.c. */
#ifndef BLOOMTAP_EGRESS_BPF_H
#define BLOOMTAP_EGRESS_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "spie.bpf.h"
#include "segments.bpf.h"
#include "heavy.bpf.h"
#include "watch.bpf.h"
#include "workloads.bpf.h"
#include "config.bpf.h"

#define BT_TC_NEXT (-1)		/* TC_ACT_UNSPEC: tcx's TCX_NEXT, the next
				 * program or filter decides */
#define PULL_BYTES 128		/* L2 + the IP header + TCP's or UDP's */
#define LINEAR_MIN 34		/* L2 and IPv4's header: below it, no IP header
				 * can be parsed in the linear part */

/* Per CPU: a header copy for the segments (tc egress does not nest on its
 * CPU for one instance). Sized past the masks it is read with (& 0x7f). */
struct egress_buf {
	__u8 b[128];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egress_buf);
} egress_scratch SEC(".maps");

/* A TSO/GSO skb of segs segments: TCP's digested a segment at a time,
 * others counted. *bytes gains the headers of the segments after
 * the first; the digests made. */
static __always_inline __u32 egress_segments(struct __sk_buff *skb, const struct pkt_info *pi,
					     struct bt_ctl *c, struct bt_counters *ctr,
					     struct seg_run *g, struct egress_buf *buf,
					     __u64 *bytes)
{
	__u32 l3 = pi->l3_off & BT_HDR_OFF_MASK, digested = 0;
	/* TCP at spie_hlen: IPv6's extension headers walked (a GSO skb is
	 * no fragment); the header and TCP's first 13 bytes in the copy */
	__u32 hl = pi->spie_hlen;
	bool rebuilt = !(pi->flags & BT_F_FRAGMENT) && pi->key.proto == IPPROTO_TCP_ &&
		       hl <= sizeof(buf->b) - 13 &&
		       !bpf_skb_load_bytes(skb, l3, buf->b, hl + 13 > HDR_BYTES ? sizeof(buf->b) :
									   HDR_BYTES) &&
		       gso_tcp_segments(c, buf->b, hl, g, bytes, &digested);

	/* a rebuilt TCP skb's headers are counted by gso_tcp_segments */
	if (!rebuilt)
		*bytes += (g->segs - 1) * (__u64)(hl + (pi->key.proto == IPPROTO_UDP_ ? 8 : 0));
	*bytes += (g->segs - 1) * (__u64)l3;	/* each segment's L2 header */
	ctr->c[BT_CTR_GSO_SEGMENTS] += digested;
	/* past BT_MAX_SEGS, or not TCP: counted */
	ctr->c[BT_CTR_GSO_NOT_DIGESTED] += g->segs - digested;
	return digested;
}

/* The packet's SPIE digests, one a segment; returns how many were made,
 * and *bytes gains a GSO skb's other segments' headers. */
static __always_inline __u32 egress_digests(struct __sk_buff *skb, const struct pkt_info *pi,
					    struct bt_ctl *c, struct bt_counters *ctr,
					    const struct spie_in *in, __u64 addrs, __u32 win,
					    __u32 segs, __u64 *bytes)
{
	__u32 zero = 0;
	struct egress_buf *buf;
	__u64 h;

	if (segs > 1) {
		/* SKB_GSO_TCP_FIXEDID is in the skb's gso_type, which a tc
		 * program cannot read (Linux 6.1; a kfunc's cast from 6.3):
		 * the host's own TSO and GSO increment the IPv4 ID, while a
		 * forwarded GRO skb may hold segments of one ID; so a
		 * forwarded skb's segments have a digest for each */
		struct seg_run g = { .addrs = addrs, .hdr = in->hdr, .after = in->after,
				     .segs = segs, .gso_size = skb->gso_size, .win = win,
				     .v4 = pi->l3 == BT_CTR_L3_IPV4, .sent = true,
				     .both_ids = pi->l3 == BT_CTR_L3_IPV4 && skb->ingress_ifindex };

		buf = bpf_map_lookup_elem(&egress_scratch, &zero);
		return buf ? egress_segments(skb, pi, c, ctr, &g, buf, bytes) : 0;
	}
	h = bt_hash_spie_finish(&cfg_keys, addrs, in->hdr, in->after, in->more);
	if (spie_insert_sent(c, win, h, true))
		ctr->c[BT_CTR_SPIE_PRESENT] += BT_PRESENT_SAMPLE;
	return 1;
}

/* A GSO skb's segments, from the qdisc layer's length (wire_len, with the
 * other segments' headers) and gso_segs. gso_segs is 0 in a SKB_GSO_DODGY
 * skb (a VM's through tap or vhost-net, AF_PACKET's with a vnet header,
 * one bpf_skb_adjust_room changed) until the stack segments it: counted
 * then from the lengths and gso_size, as the qdisc layer counts
 * (qdisc_pkt_len_init): the payload after the headers (TCP's, or UDP's 8
 * bytes) in gso_size pieces. */
static __always_inline __u32 egress_gso_segs(struct __sk_buff *skb, const struct pkt_info *pi,
					     void *data, void *data_end)
{
	__u32 segs = skb->gso_segs, size, hdrs, thl = 0;
	__u8 *l4;

	if (segs)
		return segs > 1 ? segs : 1;
	size = skb->gso_size;
	if (!size || !(pi->flags & BT_F_KEYED) || (pi->flags & BT_F_FRAGMENT))
		return 1;
	l4 = data + (pi->l3_off & BT_HDR_OFF_MASK) + (pi->spie_hlen & BT_HDR_OFF_MASK);
	if (pi->key.proto == IPPROTO_TCP_) {
		if ((void *)(l4 + 13) > data_end)
			return 1;
		thl = (l4[12] >> 4) * 4;
	} else if (pi->key.proto == IPPROTO_UDP_) {
		thl = 8;
	}
	hdrs = (pi->l3_off & BT_HDR_OFF_MASK) + (pi->spie_hlen & BT_HDR_OFF_MASK) + thl;
	if (skb->len <= hdrs)
		return 1;
	segs = (skb->len - hdrs + size - 1) / size;
	return segs > 1 ? segs : 1;
}

/* The bytes of the digest's words past the linear part, pulled into it:
 * the headers are there already in nearly every skb the stack sends, and
 * pulling more than they hold would copy the head of a cloned one (every
 * TCP skb, which TCP keeps for retransmission). The packet's pointers
 * are to be read again after it. */
static __always_inline void egress_pull_words(struct __sk_buff *skb, const struct pkt_info *pi,
					      void *data, void *data_end)
{
	__u32 need = (pi->l3_off & BT_HDR_OFF_MASK) + (pi->spie_hlen & BT_HDR_OFF_MASK) +
		     (pi->ip_after < 16 ? pi->ip_after : 16);

	if (need > skb->len)
		need = skb->len;
	if (data + need > data_end)
		bpf_skb_pull_data(skb, need);
}

/* The heavy-flow stage in a call of its own: inlined, its frame made the
 * program's with the watch-list lookup's two calls 544 bytes (the
 * verifier's limit is 512). w: all but the maps; addrs: the SPIE stage's
 * address hash, 0 when it made none (a hash that is 0 only costs the
 * whole key's hash, which is the same). */
static __noinline void egress_heavy(const struct heavy_where *w, struct bt_flow_key *k,
				    __u64 bytes, __u32 segs, __u64 addrs)
{
	const struct heavy_maps hm = { &ecms, &efm, &efmc, &efc, &efmo };
	struct heavy_where x;

	/* a copy: the verifier lets no pointer to this frame into the caller's */
	x = *w;
	x.hm = &hm;
	heavy_count(&x, k, bytes, segs, addrs, addrs != 0);
}

/* The sent packet's heavy flow, watch-list classes and workloads, in the
 * egress stage's maps and the egress entries of the counters (its
 * interval volume) and wl_counts; called after the SPIE stage hashed the
 * key (a digest is the packet's), the workloads' ids then go into its
 * pad, as the XDP program's do; last: heavy_count() masks the key in
 * place. */
static __always_inline void egress_classify(struct pkt_info *pi, const struct bt_ctl *c,
					    struct bt_counters *ctr, __u64 bytes, __u32 segs,
					    __u64 addrs)
{
	struct heavy_where w = { .c = c, .ctr = ctr, .hk = &cfg_keys };
	__u32 wl[2];

	if (cfg_heavy && cfg_egress_heavy) {
		w.interval = *(volatile __u32 *)&c->interval;
		w.part = heavy_account(ctr, w.interval, bytes, segs);
	}
	if (!(pi->flags & BT_F_KEYED))
		return;
	watch_count(pi, c, &cfg_keys, bytes, segs, BT_DIR_EGRESS);
	workload_ids(&pi->key, c, bytes, segs, BT_DIR_EGRESS, wl);
	if (cfg_heavy && cfg_egress_heavy) {
		w.cpu = bpf_get_smp_processor_id();
		workload_pack(&pi->key, wl);
		egress_heavy(&w, &pi->key, bytes, segs, addrs);
	}
}

static __always_inline int egress_stage(struct __sk_buff *skb)
{
	struct bt_counters *ctr;
	struct pkt_info pi;
	struct bt_ctl *c;
	void *data, *data_end;
	__u32 zero = 0, segs = 1, win;
	__u64 bytes = skb->len, addrs = 0;
	struct spie_in in;
	bool spie;

	/* the headers in the linear part, where the stack nearly always has
	 * them already: pulled here only when it cannot hold an IP header
	 * (AF_PACKET with a vnet header of no hdr_len leaves L2 alone), the
	 * digest's bytes past it after the parse (egress_pull_words) */
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (data + LINEAR_MIN > data_end && data + skb->len > data_end) {
		bpf_skb_pull_data(skb, skb->len < PULL_BYTES ? skb->len : PULL_BYTES);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}
	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(skb, true, data, data_end, &pi);
	/* a GSO skb's segments: only where the length on the wire (the
	 * qdisc layer's, with the other segments' headers) says there are
	 * several, since gso_segs is in the skb's shared info, a cache line
	 * of its own that a sent packet's path had not read (docs/benchmark.md,
	 * "Both directions": what reading it on every packet cost) */
	if (skb->wire_len > skb->len)
		segs = egress_gso_segs(skb, &pi, data, data_end);
	/* read again either way: one verifier state after the pull, not two */
	if (pi.flags & BT_F_KEYED)
		egress_pull_words(skb, &pi, data, data_end);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	c = bpf_map_lookup_elem(&ctl, &zero);
	/* counted first, its bytes once the segments' headers are known */
	ctr = count_packets(&pi, 0, segs, BT_DIR_EGRESS);
	if (!c || !ctr)
		return BT_TC_NEXT;
	win = c->window;
	spie = (pi.flags & BT_F_KEYED) && cfg_spie && win < cfg_windows &&
	       spie_words(&pi, data, data_end, &in);
	if (spie) {
		addrs = bt_hash_addrs(&cfg_keys, (const __u64 *)&pi.key);
		ctr->c[BT_CTR_SPIE_INSERTED] += egress_digests(skb, &pi, c, ctr, &in, addrs, win,
							       segs, &bytes);
	}
	ctr->c[BT_CTR_BYTES] += bytes;
	egress_classify(&pi, c, ctr, bytes, segs, spie && cfg_share_hash ? addrs : 0);
	return BT_TC_NEXT;
}

#endif /* BLOOMTAP_EGRESS_BPF_H */
