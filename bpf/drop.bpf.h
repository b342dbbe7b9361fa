/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The instance's drop program: a packet the kernel dropped, attributed to
 * this instance by the host's program (bpf/drops_host.bpf.c), which
 * tail-calls this one; it is never attached itself. Its reason is counted,
 * and its SPIE digest, tagged with the reason (include/hash.h
 * bt_hash_drop), goes into the current window of the instance's ring, so
 * that `trace` finds "seen" and "dropped with reason R" in one filter.
 *
 * The headers are found from skb->head + network_header, never skb->data,
 * which points at L2, L3 or the payload depending on where the packet
 * died. A GRO'd TCP skb stands for gso_segs packets: each segment's
 * digest is rebuilt (its length, IPv4 ID and sequence number), so that it
 * equals what the XDP program recorded for that segment on the wire.
 * Its entry point, bloomtap_drop, is in bloomtap.bpf.c. */
#ifndef BLOOMTAP_DROP_BPF_H
#define BLOOMTAP_DROP_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"
#include "drop_count.bpf.h"
#include "heavy.bpf.h"
#include "spie.bpf.h"
#include "segments.bpf.h"
#include "recorder.bpf.h"
#include "config.bpf.h"
#include "workloads.bpf.h"

#define ETH_P_IP_BE 0x0008	/* htons(0x0800) */
#define ETH_P_IPV6_BE 0xdd86	/* htons(0x86dd) */
#define IPPROTO_TCP_NUM 6
#define IPPROTO_UDP_NUM 17
/* SKB_GSO_TCP_FIXEDID: bit 3 until 6.17, bit 30 since (bit 3 kept as
 * __SKB_GSO_TCP_FIXEDID); the enum is anonymous, so no CO-RE relocation:
 * either bit says the segments share one IPv4 ID */
#define GSO_TCP (1u << 0 | 1u << 4)
#define GSO_FIXEDID (1u << 3 | 1u << 30)

/* The dropped packet's first HDR_BYTES, per CPU (a tracing program does
 * not nest on its CPU): on the stack, they made the program's frame, the
 * segments' callback's and the claim's 544 bytes as Linux 6.1 counts them
 * (each frame rounded up to 32, callbacks followed), past its 512. Sized
 * past the masks the offsets are read with (& 0x7f). */
struct drop_hdr {
	__u8 b[128];
	struct drop_ext {	/* in and out of IPv6's walk (drop_ipv6_ext) */
		__u64 src;	/* in: the network header's address */
		__u32 lin;	/* in: its linear bytes */
		__u32 left;	/* in: the payload length; out: IP bytes from off */
		__u32 off;	/* out: the digest's bytes, from the IP header */
		__u8 nh;	/* in: the next header; out: the header at off */
		__u8 pad[3];
		__u8 b[16];	/* out: the 16 bytes at off, zeros past lin */
	} ext;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct drop_hdr);
} drop_scratch SEC(".maps");

static __always_inline bool drop_suppressed(__u32 reason)
{
	__u32 zero = 0;
	__u64 *bits = bpf_map_lookup_elem(&drop_suppress, &zero);

	__u32 word = reason / 64;

	if (!bits || reason >= BT_DROP_REASONS)
		return false;	/* subsystems' reasons are never suppressed */
	/* the compiler drops the mask, knowing reason's bound from another
	 * register than the one it indexes with: keep it */
	asm volatile("" : "+r"(word));
	return bits[word & (BT_DROP_REASONS / 64 - 1)] >> (reason % 64) & 1;
}

/* This window's slot for the reason, on this CPU. Plain stores: only the
 * drop program writes wdrops, and a tracing program does not nest on its
 * CPU (the kernel's per-program recursion guard). XDP may interrupt it,
 * so what both write is kept apart (wcount) or atomic (count_event). */
static __always_inline void drop_window_reason(__u32 win, __u32 reason, __u32 n)
{
	struct bt_window_drops *d = bpf_map_lookup_elem(&wdrops, &win);
	__u32 i;

	if (!d)
		return;
	for (i = 0; i < BT_WIN_DROP_SLOTS; i++) {
		if (!d->count[i]) {
			d->reason[i] = reason;
			d->count[i] = n;
			return;
		}
		if (d->reason[i] == reason) {
			d->count[i] += n;
			return;
		}
	}
	d->other += n;
}

/* The dropped packet's flow key, as bpf/parse.bpf.h keys a packet (ports
 * of the first fragment of TCP, UDP and SCTP; ICMP's type and code; IPv6
 * extension headers not walked: the next header is the protocol), with the
 * reason in the pad bytes (include/bloomtap.h "Drops"). */
static __always_inline void drop_flow_key(struct bt_flow_key *key, const __u8 *ip, __u32 hl,
					  __u32 n, bool v4, __u32 reason)
{
	__u8 proto = v4 ? ip[9] : ip[6];
	const __u8 *l4 = &ip[hl & 0x3f];

	key->proto = proto;
	key->pad[0] = reason;
	key->pad[1] = reason >> 8;
	key->pad[2] = reason >> 16;
	if (v4 && (((__u32)ip[6] << 8 | ip[7]) & 0x1fff))
		return;		/* a later fragment: no ports */
	if (n < 4)
		return;
	if (proto == 1 || proto == 58) {
		key->sport = bpf_htons(l4[0]);
		key->dport = bpf_htons(l4[1]);
	} else if (proto == 6 || proto == 17 || proto == 132) {
		__builtin_memcpy(&key->sport, l4, 2);
		__builtin_memcpy(&key->dport, l4 + 2, 2);
	}
}

/* The heavy dropped flows: the XDP program's heavy-flow stage on the drop
 * maps, in the interval the XDP program counts in. */
static __always_inline void drop_heavy(struct bt_ctl *c, struct bt_flow_key *key,
				       const struct bt_hash_keys *k, __u64 addrs, __u64 bytes,
				       __u32 segs)
{
	const struct heavy_maps hm = { &dcms, &dfm, &dfmc, &dfc, &dfmo };
	struct heavy_where w = { .hm = &hm, .c = c, .hk = k };
	__u32 zero = 0;

	if (!cfg_heavy || !(w.ctr = bpf_map_lookup_elem(&dcounters, &zero)))
		return;
	w.interval = *(volatile __u32 *)&c->interval;
	w.part = heavy_account(w.ctr, w.interval, bytes, segs);
	w.cpu = bpf_get_smp_processor_id();
	heavy_count(&w, key, bytes, segs, addrs, true);
}

/* The skb's bytes from its network header (nh, from skb->head) on. */
static __always_inline __u64 l3_bytes(const struct sk_buff *skb, __u16 nh)
{
	__u64 data_off = (__u64)skb->data - (__u64)skb->head;
	__s64 n = (__s64)skb->len + (__s64)data_off - nh;

	return n > 0 ? n : skb->len;
}

/* The skb's GRO segments (1 for a plain packet) and its gso fields. */
static __always_inline __u32 drop_skb_segs(const struct sk_buff *skb, __u32 *gso_size,
					   __u32 *gso_type)
{
	struct skb_shared_info *sh = (struct skb_shared_info *)(skb->head + skb->end);
	__u16 s = 0;

	*gso_size = *gso_type = 0;
	if (bpf_core_read(gso_size, sizeof(__u16), &sh->gso_size) || !*gso_size)
		return 1;
	bpf_core_read(&s, sizeof(s), &sh->gso_segs);
	bpf_core_read(gso_type, sizeof(*gso_type), &sh->gso_type);
	return s > 1 ? s : 1;
}

/* A suppressed reason (a mirror port's OTHERHOST, every frame): its
 * count, and nothing the digest or the flow key needs. Only a skb with
 * fragments can be a GRO'd one, so a linear skb skips the probe read of
 * its shared info and counts one packet. */
static __always_inline void drop_count_suppressed(const struct sk_buff *skb, __u32 reason)
{
	__u16 nh = skb->network_header, mac = skb->mac_header;
	__u32 zero = 0, segs = 1, gso_size, gso_type;
	struct bt_drop_counters *dctr;
	__u64 bytes = skb->len;

	if (skb->data_len)
		segs = drop_skb_segs(skb, &gso_size, &gso_type);
	if (nh != 0xffff && mac != 0xffff)
		bytes = l3_bytes(skb, nh);
	dctr = bpf_map_lookup_elem(&drop_counters, &zero);
	if (dctr)
		dctr->c[BT_DROP_SUPPRESSED] += segs;
	drop_count_add(&drop_counts, &drop_counts_subsys, reason, segs, bytes);
}

/* An IP packet's header as the drop program reads it from its copy */
struct drop_ip {
	__u64 hdr, after, more;	/* the SPIE digest's words (include/hash.h) */
	__u32 hl, n;		/* the IP header's bytes; the L4 bytes digested, 8 at most */
	__u32 dhl;		/* where those start: hl, or IPv6's after its
				 * extension headers (pkt_info.spie_hlen) */
	bool v4;
};

/* IPv6's extension headers, walked as parse.bpf.h walks them (at most
 * BT_MAX_IPV6_EXT) up to the digest's bytes: before a fragment header, or
 * where the walk ends. Read from the skb itself, two bytes a header, so
 * that no header chain is too long for the copy; a global function, so
 * that the verifier checks the walk once and its ends do not multiply
 * the program's states (as bt_ipv6_ext). -1: a header, or the digest's
 * bytes, lie past the linear part (or cannot be read). */
__noinline int drop_ipv6_ext(struct drop_ext *e)
{
	__u32 off = 40, left, len, n, i;
	__u8 nh, eh[2];

	if (!e)
		return -1;
	left = e->left;
	nh = e->nh;
	for (i = 0; i < BT_MAX_IPV6_EXT; i++) {
		if (!ipv6_is_ext(nh) || nh == IPPROTO_FRAGMENT_ || left < 8)
			break;
		if (off + 8 > e->lin ||
		    bpf_probe_read_kernel(eh, sizeof(eh), (void *)(long)(e->src + off)))
			return -1;
		len = nh == IPPROTO_AH_ ? ((__u32)eh[1] + 2) * 4 : ((__u32)eh[1] + 1) * 8;
		if (len > left)
			break;
		nh = eh[0];
		left -= len;
		off += len;
	}
	e->off = off;
	e->left = left;
	e->nh = nh;
	__builtin_memset(e->b, 0, sizeof(e->b));
	n = e->lin > off ? e->lin - off : 0;
	if (n > sizeof(e->b))
		n = sizeof(e->b);
	if (n && bpf_probe_read_kernel(e->b, n, (void *)(long)(e->src + off)))
		return -1;
	return 0;
}

/* The IP header at the start of the copy ip (lin bytes of it linear): the
 * flow key's addresses, the digest's words, *bytes the packet's IP length.
 * BT_DROP_CTR_MAX, or the drop counter that says why it cannot be read. */
static __always_inline __u32 drop_read_ip(const struct sk_buff *skb, const __u8 *ip, __u32 lin,
					  struct bt_flow_key *key, struct drop_ip *p, __u64 *bytes,
					  struct drop_ext *e)
{
	__u32 more_n = 0;	/* UDP: payload bytes for the more word */
	__be16 proto = skb->protocol;
	const __u8 *d;		/* the digest's 16 bytes */
	__u8 nh;
	bool udp;

	__builtin_memset(key, 0, sizeof(*key));
	p->v4 = proto == ETH_P_IP_BE;
	if (p->v4 && ip[0] >> 4 == 4 && (ip[0] & 15) >= 5) {
		__u32 tot = (__u32)ip[2] << 8 | ip[3];

		p->hl = p->dhl = (ip[0] & 15) * 4;
		p->n = tot > p->hl ? tot - p->hl : 0;
		*bytes = tot;
		key_set_v4mapped(key->src, *(__be32 *)&ip[12]);
		key_set_v4mapped(key->dst, *(__be32 *)&ip[16]);
		p->hdr = spie_hdr_v4(*(__u64 *)ip, ip[9]);
		udp = spie_is_udp(ip, true, 0);
	} else if (proto == ETH_P_IPV6_BE && ip[0] >> 4 == 6) {
		p->hl = 40;
		p->n = (__u32)ip[4] << 8 | ip[5];
		*bytes = 40 + p->n;
		__builtin_memcpy(key->src, &ip[8], 16);
		__builtin_memcpy(key->dst, &ip[24], 16);
		p->hdr = spie_hdr_v6(*(__u64 *)ip);
		nh = ip[6];
		p->dhl = 40;
		if (ipv6_is_ext(nh)) {
			e->src = (__u64)(long)skb->head + skb->network_header;
			e->lin = lin;
			e->left = p->n;
			e->nh = nh;
			if (drop_ipv6_ext(e))
				return BT_DROP_NONLINEAR;
			p->dhl = e->off;
			p->n = e->left;
			nh = e->nh;
		}
		udp = spie_is_udp(ip, false, nh);
	} else {
		return BT_DROP_NOT_IP;
	}
	/* the digest's UDP words (spie.bpf.h spie_udp): its payload's first 8 */
	if (udp && p->n > 8)
		more_n = p->n - 8 < 8 ? p->n - 8 : 8;
	if (p->n > 8)
		p->n = 8;
	if (lin < p->dhl + p->n + more_n || p->hl > HDR_BYTES - 13)
		return BT_DROP_NONLINEAR;
	/* IPv6 past its extension headers: the walk's read */
	d = p->dhl == p->hl ? &ip[p->hl & 0x3f] : e->b;
	p->after = *(__u64 *)d;
	if (p->n < 8)
		p->after &= (1ULL << (p->n * 8)) - 1;
	p->more = 0;
	if (udp) {
		p->after &= SPIE_CSUM_OUT;
		p->more = *(__u64 *)(d + 8);
		if (more_n < 8)
			p->more &= (1ULL << (more_n * 8)) - 1;
	}
	return BT_DROP_CTR_MAX;
}

/* The network header's first HDR_BYTES copied to ip, zeros past what is
 * linear (*lin bytes from the network header); *bytes, those from the
 * network header on. BT_DROP_CTR_MAX, or BT_DROP_NO_NETWORK. */
static __always_inline __u32 drop_copy_header(const struct sk_buff *skb, __u8 *ip, __u32 *lin,
					      __u64 *bytes)
{
	__u16 nh = skb->network_header, mac = skb->mac_header;

	/* without one: nothing to measure from, the skb's bytes (wherever
	 * its data is) stay */
	if (nh == 0xffff || mac == 0xffff)
		return BT_DROP_NO_NETWORK;
	/* an IP packet's own length (a GRO'd one's merged length), whether
	 * skb->data is at L2, L3 or the payload where it died */
	*bytes = l3_bytes(skb, nh);
	*lin = skb->tail > nh ? skb->tail - nh : 0;
	__builtin_memset(ip, 0, HDR_BYTES);
	if (bpf_probe_read_kernel(ip, *lin < HDR_BYTES ? *lin : HDR_BYTES, skb->head + nh))
		return BT_DROP_NO_NETWORK;
	return BT_DROP_CTR_MAX;
}

/* Is digest h in window win's filter? The XDP program set its bits
 * (spie.bpf.h spie_insert) when the packet came in. */
static __always_inline bool drop_window_has(__u64 h, __u32 win)
{
	__u32 idx = win * (cfg_block_mask + 1) + bt_bloom_block(h, cfg_block_mask);
	struct bt_bloom_block *b = bpf_map_lookup_elem(&spie, &idx);

	return b && bt_bloom_block_has(b, cfg_k, h);
}

/* Did this instance see the packet (digest h)? A drop follows its
 * receive by microseconds: the digest is in the current window, or in the
 * one the ring left since, while that one still holds its bits (closed or
 * sealed, not yet cleared). A packet it never saw is taken for one at
 * 1 - (1 - f_cur)(1 - f_prev) (user/report/drops_report.c prints it). A global
 * function: the verifier walks it once, not again at each of its calls
 * (the single packet's and the GRO'd TCP skb's) with each state that
 * reaches them, and its Bloom probe loops over cfg_k. */
__noinline int drop_seen(__u64 h, __u32 win)
{
	__u32 prev = win ? win - 1 : cfg_windows - 1;
	struct bt_window *w;

	if (drop_window_has(h, win))
		return true;
	if (prev == win || !(w = bpf_map_lookup_elem(&windows, &prev)))
		return false;
	return (w->state == BT_WIN_CLOSED || w->state == BT_WIN_SEALED) &&
	       drop_window_has(h, prev);
}

/* Is the skb an ICMP or ICMPv6 echo reply? What ping_rcv frees as
 * NO_SOCKET when no ping socket asked for it, after raw_local_deliver
 * (ipv6_raw_deliver) gave each raw socket of the protocol a clone. Read
 * apart from the digest's copy of the header: the verifier then walks the
 * header's paths once, not again for this rare case. */
static __noinline bool drop_echo_reply(const struct sk_buff *skb)
{
	__u16 nh = skb->network_header;
	__u8 ip[41] = {}, type;

	if (nh == 0xffff || bpf_probe_read_kernel(ip, sizeof(ip), skb->head + nh))
		return false;
	if (skb->protocol == ETH_P_IP_BE && ip[0] >> 4 == 4 && ip[9] == 1)
		return !bpf_probe_read_kernel(&type, 1, skb->head + nh + (ip[0] & 15) * 4) &&
		       type == 0;
	return skb->protocol == ETH_P_IPV6_BE && ip[0] >> 4 == 6 && ip[6] == 58 && ip[40] == 129;
}

static __always_inline int drop_stage(struct sk_buff *skb, void *location,
				      enum skb_drop_reason why)
{
	const struct bt_hash_keys *k = &cfg_keys;
	struct bt_drop_counters *dctr;
	struct bt_flow_key key;
	struct drop_ip p;
	struct bt_ctl *c;
	struct drop_hdr *scratch;
	__u8 *ip;
	__u32 zero = 0, reason = why, segs, win, lin, gso_type, gso_size, why_not;
	struct bt_drop_owner iif;	/* the device it came in by: drop_shared's key */
	struct net_device *dev;
	__u32 *shared;
	bool in_wl;
	__u32 digested, hsegs = 1;	/* digests made, segments the heavy stage counts */
	__u32 ids[2];			/* the source's and destination's workload ids */
	__u64 addrs, h, bytes = skb->len;
	bool raw_copy;

	/* A NO_SOCKET free of a cloned skb may follow a delivery: a raw
	 * socket took a clone (ping without ping sockets) and ping_rcv found
	 * no ping socket for its own copy. Only an echo reply is told apart
	 * (drop_echo_reply): AF_PACKET's clones (packet_rcv; tcpdump's
	 * TPACKET_V3 ring copies and keeps none) leave a UDP or TCP
	 * NO_SOCKET a drop. */
	raw_copy = bpf_core_enum_value_exists(enum skb_drop_reason, SKB_DROP_REASON_NO_SOCKET) &&
		   reason == bpf_core_enum_value(enum skb_drop_reason, SKB_DROP_REASON_NO_SOCKET) &&
		   BPF_CORE_READ_BITFIELD(skb, cloned);
	if (raw_copy && drop_echo_reply(skb)) {
		dctr = bpf_map_lookup_elem(&drop_counters, &zero);
		if (dctr)
			dctr->c[BT_DROP_DELIVERED_FREED] += 1;
		return 0;
	}
	/* first: a suppressed drop costs a count and nothing else */
	if (drop_suppressed(reason)) {
		drop_count_suppressed(skb, reason);
		return 0;
	}
	segs = drop_skb_segs(skb, &gso_size, &gso_type);
	/* read here, directly: a probe read costs about 20 ns a drop (bench
	 * drops); read later, past the helpers' calls, it was refused ("R1
	 * !read_ok" at a spill just after a call, Linux 6.18, clang's code) */
	dev = skb->dev;
	iif.netns = dev ? dev->nd_net.net->ns.inum : 0;
	dctr = bpf_map_lookup_elem(&drop_counters, &zero);
	c = bpf_map_lookup_elem(&ctl, &zero);
	scratch = bpf_map_lookup_elem(&drop_scratch, &zero);
	if (!dctr || !c || !scratch)
		goto out;
	ip = scratch->b;
	why_not = drop_copy_header(skb, ip, &lin, &bytes);
	if (why_not == BT_DROP_CTR_MAX)
		why_not = drop_read_ip(skb, ip, lin, &key, &p, &bytes, &scratch->ext);
	/* A device stacked on the instance's interface and others', or a
	 * workload's device in another namespace (drop_shared): the drop is
	 * the instance's only if it saw the packet (drop_seen); a GRO'd TCP
	 * skb's, if it saw its first
	 * segment (its segments all came in by one device's receive); one
	 * without a digest to look for (not IP, other GRO'd skbs) cannot be
	 * told. Looked up on each path apart, so that no value of it is
	 * carried into the GRO paths below (the verifier would walk them
	 * once for each). The device is named by its namespace and ifindex,
	 * as drop_owners names it: a workload's device lies in another
	 * namespace than the instance's. */
	iif.ifindex = skb->skb_iif;
	if (why_not < BT_DROP_CTR_MAX) {
		if (bpf_map_lookup_elem(&drop_shared, &iif))
			goto not_seen;
		dctr->c[why_not] += segs;
		goto out;
	}
	win = c->window;
	if (win >= cfg_windows)
		goto out;
	drop_flow_key(&key, ip, p.hl, p.n, p.v4, reason);
	addrs = bt_hash_addrs(k, (const __u64 *)&key);
	if (segs > 1 && (gso_type & GSO_TCP) && p.n == 8 &&
	    (p.v4 ? ip[9] : ip[6]) == IPPROTO_TCP_NUM) {
		struct seg_run g = { .addrs = addrs, .hdr = p.hdr, .after = p.after,
				      .segs = segs, .gso_size = gso_size, .win = win,
				      .reason = reason, .v4 = p.v4,
				      .fixed_id = !!(gso_type & GSO_FIXEDID) };

		if (gso_tcp_lengths(ip, p.hl, &g, &bytes)) {
			if (bpf_map_lookup_elem(&drop_shared, &iif) &&
			    !drop_seen(seg_first_digest(&g), win))
				goto not_seen;
			digested = digest_segments(c, &g);
			hsegs = segs;
			dctr->c[BT_DROP_GRO_SKBS]++;
			if (segs > digested)
				dctr->c[BT_DROP_SEGS_CAPPED] += segs - digested;
			goto count;
		}
		/* not what GRO leaves: digested as it is */
	} else if (segs > 1) {
		/* UDP GRO and the like: each segment's checksum is gone, so no
		 * digest; the heavy stage still counts every segment, and the
		 * IP bytes of each: the merged packet's, and the headers of
		 * the segments after the first (UDP's 8 bytes included) */
		__u32 l4h = (p.v4 ? ip[9] : ip[6]) == IPPROTO_UDP_NUM ? 8 : 0;

		if (bpf_map_lookup_elem(&drop_shared, &iif))
			goto not_seen;
		dctr->c[BT_DROP_GSO_NOT_TCP] += segs;
		bytes += (segs - 1) * (__u64)(p.hl + l4h);
		workload_ids(&key, c, bytes, segs, BT_WL_DROPPED, ids);
		drop_heavy(c, &key, k, addrs, bytes, segs);
		goto out;
	}
	h = bt_hash_spie_finish(k, addrs, p.hdr, p.after, p.more);
	/* a TCP skb of several segments not as GRO leaves them: no digest
	 * of a segment to look for */
	shared = bpf_map_lookup_elem(&drop_shared, &iif);
	if (shared && (segs > 1 || !drop_seen(h, win)))
		goto not_seen;
	/* a workload's drop says so: one digest more, on its drops alone
	 * (a GRO'd TCP skb's segments above do not) */
	in_wl = shared && *shared == BT_SHARED_WORKLOAD;
	spie_insert_dropped(c, win, h, reason);
	if (in_wl) {
		spie_insert(bt_hash_drop(h, BT_DROP_IN_WORKLOAD), win, false);
		spie_count(c, win, win + cfg_windows, false);
	}
	digested = 1;
count:
	/* one way on from here, for the GRO'd skb and the single packet */
	dctr->c[BT_DROP_DIGESTED] += digested;
	/* each of the instance's drops by the workloads its addresses had
	 * when it was dropped (the key's pad holds the reason, not the ids) */
	workload_ids(&key, c, bytes, hsegs, BT_WL_DROPPED, ids);
	record_drop(skb, reason, segs, ids, iif.netns);
	drop_window_reason(win, reason, digested);
	drop_heavy(c, &key, k, addrs, bytes, hsegs);
out:
	/* bytes: the IP packets' (a GRO'd skb's headers counted for each
	 * segment); without an IP header, those from the network header on;
	 * without one, skb->len */
	drop_count_add(&drop_counts, &drop_counts_subsys, reason, segs, bytes);
	return 0;
not_seen:
	/* a workload's device apart: its container's own traffic, which no
	 * instance saw, would bury the stacked devices' count */
	shared = bpf_map_lookup_elem(&drop_shared, &iif);
	if (shared && *shared == BT_SHARED_WORKLOAD)
		dctr->c[BT_DROP_WORKLOAD_NOT_SEEN] += segs;
	else
		dctr->c[BT_DROP_SHARED_NOT_SEEN] += segs;
	return 0;
}

#endif /* BLOOMTAP_DROP_BPF_H */
