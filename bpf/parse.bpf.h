/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packet parsing: Ethernet, VLAN, IPv4, IPv6 extension headers, L4 ports.
 *
 * After xdp-tools' parsing helpers: a cursor, one parse_<hdr>() per header
 * that checks bounds against data_end and advances. Stricter than them: an
 * IPv4 IHL below 5, a total length shorter than the header, or a version
 * nibble that disagrees with the ethertype is malformed, and L4 headers are
 * looked for only inside the IP payload that the IP length fields declare
 * (Ethernet padding is not a TCP header).
 *
 * Nothing here drops: every outcome is a class and some flags in pkt_info.
 */
#ifndef BLOOMTAP_PARSE_BPF_H
#define BLOOMTAP_PARSE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bloomtap.h"

/* Constants from <linux/if_ether.h> and <linux/in.h>, which vmlinux.h lacks. */
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define ETH_P_8021Q	0x8100
#define ETH_P_8021AD	0x88A8
#define ETH_P_QINQ1	0x9100	/* the outer tag of QinQ before 802.1ad */

#define IPPROTO_HOPOPTS_	0
#define IPPROTO_ICMP_		1
#define IPPROTO_TCP_		6
#define IPPROTO_UDP_		17
#define IPPROTO_ROUTING_	43
#define IPPROTO_FRAGMENT_	44
#define IPPROTO_AH_		51
#define IPPROTO_ICMPV6_		58
#define IPPROTO_DSTOPTS_	60
#define IPPROTO_SCTP_		132

#define IP_MF		0x2000
#define IP_OFFSET	0x1FFF

/* Fixed bounds keep every loop finite for the verifier. Deeper stacks are
 * counted as too_deep and keyed by what was parsed so far. */
#define BT_MAX_VLAN	2	/* 802.1Q inside 802.1ad (QinQ) */
#define BT_MAX_IPV6_EXT	8	/* RFC 8200 4.1 recommends at most one of each */
/* Header offsets lie in the linear part of a frame, one page at most; the
 * mask proves to the verifier that pointer + offset + header stays below
 * its 64 KiB packet range limit. */
#define BT_HDR_OFF_MASK	0x1fff

enum bt_pkt_flag {
	BT_F_VLAN	= 1 << 0,
	BT_F_FRAGMENT	= 1 << 1,
	BT_F_TRUNCATED	= 1 << 2,
	BT_F_MALFORMED	= 1 << 3,
	BT_F_TOO_DEEP	= 1 << 4,
	BT_F_KEYED	= 1 << 5,	/* key holds a valid L3 header's fields */
};

struct hdr_cursor {
	void *pos;
};

struct pkt_info {
	struct bt_flow_key key;
	__u32 flags;		/* enum bt_pkt_flag */
	__u16 l3;		/* BT_CTR_L3_* */
	__u16 l4;		/* BT_CTR_L4_* */
	__u32 ip_left;		/* bytes of IP payload the length fields declare,
				 * from the cursor on */
	__u16 l3_off;		/* IP header, from the start of the frame */
	__u16 l3_hlen;		/* its length: IHL * 4, or 40 */
	__u32 ip_after;		/* IP bytes after spie_hlen, per the length field */
	__u16 spie_hlen;	/* where the SPIE digest's 8 bytes "after the
				 * header" start, from l3_off: IHL * 4; IPv6: 40
				 * and the extension headers walked before a
				 * fragment header (spie.bpf.h) */
	__u8 spie_nh;		/* IPv6: the header found there (UDP: 17) */
	__u8 pad;
};

static __always_inline bool eth_is_vlan(__u16 proto)
{
	return proto == ETH_P_8021Q || proto == ETH_P_8021AD || proto == ETH_P_QINQ1;
}

/* Ethernet and up to BT_MAX_VLAN tags (802.1Q, 802.1ad, and 0x9100, which
 * QinQ switches used before 802.1ad); returns the inner ethertype (host
 * order) or -1 when the frame ends first. */
static __always_inline int parse_eth(struct hdr_cursor *c, void *data_end,
				     struct pkt_info *pi)
{
	struct ethhdr *eth = c->pos;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > data_end)
		return -1;
	c->pos = eth + 1;
	proto = bpf_ntohs(eth->h_proto);

	for (i = 0; i < BT_MAX_VLAN; i++) {
		struct vlan_hdr *vh = c->pos;

		if (!eth_is_vlan(proto))
			break;
		pi->flags |= BT_F_VLAN;
		if ((void *)(vh + 1) > data_end)
			return -1;
		c->pos = vh + 1;
		proto = bpf_ntohs(vh->h_vlan_encapsulated_proto);
	}
	if (eth_is_vlan(proto))
		pi->flags |= BT_F_TOO_DEEP;
	return proto;
}

static __always_inline void key_set_v4mapped(__u8 *dst, __be32 addr)
{
	__builtin_memset(dst, 0, 10);
	dst[10] = 0xff;
	dst[11] = 0xff;
	__builtin_memcpy(dst + 12, &addr, 4);
}

/* IPv4: returns the L4 protocol when the ports should be looked for, 0 when
 * the packet is keyed but has no ports to read (later fragment), -1 when the
 * header is unusable (not keyed). */
static __always_inline int parse_ipv4(struct hdr_cursor *c, void *data_end,
				      struct pkt_info *pi)
{
	struct iphdr *iph = c->pos;
	__u32 hlen, tot_len;
	__u16 frag;

	pi->l3 = BT_CTR_L3_IPV4;
	if ((void *)(iph + 1) > data_end) {
		pi->flags |= BT_F_TRUNCATED;
		return -1;
	}
	hlen = iph->ihl * 4;
	tot_len = bpf_ntohs(iph->tot_len);
	/* A total length of 0 is what captures of TSO/GSO output show: the
	 * frame is the bound then (as Wireshark reads it). */
	if (!tot_len)
		tot_len = 0xffff;
	if (iph->version != 4 || hlen < sizeof(*iph) || tot_len < hlen) {
		pi->flags |= BT_F_MALFORMED;
		return -1;
	}
	/* hlen <= 60: the verifier sees a bounded variable offset. */
	if (c->pos + hlen > data_end) {
		pi->flags |= BT_F_TRUNCATED;
		return -1;
	}
	c->pos += hlen;
	pi->ip_left = tot_len - hlen;
	pi->l3_hlen = hlen;
	pi->spie_hlen = hlen;
	pi->ip_after = pi->ip_left;

	key_set_v4mapped(pi->key.src, iph->saddr);
	key_set_v4mapped(pi->key.dst, iph->daddr);
	pi->key.proto = iph->protocol;
	pi->flags |= BT_F_KEYED;

	frag = bpf_ntohs(iph->frag_off);
	if (frag & (IP_MF | IP_OFFSET)) {
		pi->flags |= BT_F_FRAGMENT;
		/* RFC 791: only the fragment at offset 0 carries the L4 header */
		if (frag & IP_OFFSET)
			return 0;
	}
	return iph->protocol;
}

static __always_inline bool ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS_ || nh == IPPROTO_ROUTING_ ||
	       nh == IPPROTO_DSTOPTS_ || nh == IPPROTO_FRAGMENT_ || nh == IPPROTO_AH_;
}

/* In and out of the extension header walk. */
struct bt_ext_walk {
	__u32 off;		/* in: first extension header; out: the L4 header */
	__u32 ip_left;		/* IP payload left from off */
	__u32 flags;		/* out: BT_F_* found on the way */
	__u32 spie_off;		/* out: where the digest's 8 bytes start: before
				 * a fragment header, else where the walk ended */
	__u32 spie_left;	/* out: IP payload left from spie_off */
	__u8 nh;		/* in: its type; out: the upper-layer protocol */
	__u8 spie_nh;		/* out: the header at spie_off */
	__u8 pad[2];
};

enum { BT_EXT_L4, BT_EXT_NO_PORTS };

static __always_inline void spie_at(struct bt_ext_walk *w, __u32 off, __u32 left, __u8 nh)
{
	w->spie_off = off & BT_HDR_OFF_MASK;
	w->spie_left = left;
	w->spie_nh = nh;
}

/* The bounded walk over hop-by-hop, routing, fragment, destination options
 * and AH headers (RFC 8200 4, RFC 4302 2.2), as a global function: the
 * verifier checks it once on its own. Inlined, every way each of the 8
 * steps can end multiplied the caller's states: 375,000 instructions and
 * 6 s of verification a program. Offsets are scalars kept below 8 KiB so
 * that the steps' states prune each other; results go through w (memory
 * the verifier does not split states on). Only packets whose next header
 * is an extension header pay for the call. */
static __always_inline int ipv6_ext_walk(void *data, void *data_end, struct bt_ext_walk *w)
{
	__u32 off, left;
	__u8 nh;
	int i;

	if (!w)
		return BT_EXT_NO_PORTS;
	off = w->off;
	left = w->ip_left;
	nh = w->nh;
	w->spie_off = 0;
	for (i = 0; i < BT_MAX_IPV6_EXT; i++) {
		__u8 *eh;
		__u32 len;

		if (!ipv6_is_ext(nh))
			break;
		off &= BT_HDR_OFF_MASK;
		/* the digest stops at a fragment header: its ID and offset
		 * are what tell one fragment from another (IPv4's are in
		 * the header word) */
		if (nh == IPPROTO_FRAGMENT_ && !w->spie_off)
			spie_at(w, off, left, nh);
		eh = data + off;
		/* Every extension header starts with next-header and a length
		 * byte; the fragment header is a fixed 8 bytes. */
		if ((void *)(eh + 8) > data_end || left < 8)
			goto truncated;
		if (nh == IPPROTO_FRAGMENT_) {
			struct frag_hdr *fh = (void *)eh;

			w->flags |= BT_F_FRAGMENT;
			if (bpf_ntohs(fh->frag_off) & ~7) {
				w->nh = fh->nexthdr;	/* later fragment */
				return BT_EXT_NO_PORTS;
			}
			len = 8;
		} else if (nh == IPPROTO_AH_) {
			len = ((__u32)eh[1] + 2) * 4;	/* 32-bit words minus 2 */
		} else {
			len = ((__u32)eh[1] + 1) * 8;	/* 8-octet units minus 1 */
		}
		if (len > left)
			goto truncated;
		nh = eh[0];
		left -= len;
		off += len;
	}
	w->nh = nh;
	w->off = off & BT_HDR_OFF_MASK;
	w->ip_left = left;
	if (!w->spie_off)
		spie_at(w, off, left, nh);
	if (ipv6_is_ext(nh)) {
		w->flags |= BT_F_TOO_DEEP;
		return BT_EXT_NO_PORTS;
	}
	return BT_EXT_L4;
truncated:
	/* keyed by the header that was cut; the digest's bytes start there */
	w->nh = nh;
	w->flags |= BT_F_TRUNCATED;
	if (!w->spie_off)
		spie_at(w, off, left, nh);
	return BT_EXT_NO_PORTS;
}

/* The walk's two entry points: a global function takes its program's own
 * context type, so XDP and tc egress each have one. */
__noinline int bt_ipv6_ext(struct xdp_md *ctx, struct bt_ext_walk *w)
{
	return ipv6_ext_walk((void *)(long)ctx->data, (void *)(long)ctx->data_end, w);
}

__noinline int bt_ipv6_ext_skb(struct __sk_buff *skb, struct bt_ext_walk *w)
{
	return ipv6_ext_walk((void *)(long)skb->data, (void *)(long)skb->data_end, w);
}

/* IPv6: same return convention as parse_ipv4(). The key's proto is the
 * upper-layer protocol reached. */
static __always_inline int parse_ipv6(void *ctx, bool skb, struct hdr_cursor *c,
				      void *data, void *data_end, struct pkt_info *pi)
{
	struct ipv6hdr *ip6 = c->pos;
	struct bt_ext_walk w;
	int ret;

	pi->l3 = BT_CTR_L3_IPV6;
	if ((void *)(ip6 + 1) > data_end) {
		pi->flags |= BT_F_TRUNCATED;
		return -1;
	}
	if (ip6->version != 6) {
		pi->flags |= BT_F_MALFORMED;
		return -1;
	}
	c->pos = ip6 + 1;
	/* payload_len 0 is a jumbogram (RFC 2675) or a GSO capture: take the
	 * frame as the bound then. */
	pi->ip_left = bpf_ntohs(ip6->payload_len);
	if (!pi->ip_left)
		pi->ip_left = 0xffff;
	pi->l3_hlen = sizeof(*ip6);
	pi->spie_hlen = sizeof(*ip6);
	pi->spie_nh = ip6->nexthdr;
	pi->ip_after = pi->ip_left;
	__builtin_memcpy(pi->key.src, &ip6->saddr, 16);
	__builtin_memcpy(pi->key.dst, &ip6->daddr, 16);
	pi->flags |= BT_F_KEYED;
	pi->key.proto = ip6->nexthdr;
	if (!ipv6_is_ext(ip6->nexthdr))
		return ip6->nexthdr;

	w.off = c->pos - data;
	w.ip_left = pi->ip_left;
	w.flags = 0;
	w.nh = ip6->nexthdr;
	ret = skb ? bt_ipv6_ext_skb(ctx, &w) : bt_ipv6_ext(ctx, &w);
	pi->flags |= w.flags;
	pi->key.proto = w.nh;
	/* the walk's offsets are from the frame's start, below 8 KiB */
	pi->spie_hlen = ((w.spie_off & BT_HDR_OFF_MASK) - (pi->l3_off & BT_HDR_OFF_MASK)) &
			BT_HDR_OFF_MASK;
	pi->spie_nh = w.spie_nh;
	pi->ip_after = w.spie_left;
	if (ret != BT_EXT_L4)
		return 0;
	pi->ip_left = w.ip_left;
	c->pos = data + (w.off & BT_HDR_OFF_MASK);
	return w.nh;
}

/* Ports for TCP, UDP and SCTP (all start with source and destination port),
 * type and code for ICMP and ICMPv6. A header shorter than its fixed part is
 * truncated; the ports are kept when their 4 bytes are there. */
static __always_inline void parse_l4(struct hdr_cursor *c, void *data_end,
				     struct pkt_info *pi, int proto)
{
	__u8 *l4 = c->pos;
	__u32 need;

	switch (proto) {
	case IPPROTO_TCP_:
		need = 20;
		break;
	case IPPROTO_UDP_:
		need = 8;
		break;
	case IPPROTO_SCTP_:
		need = 12;
		break;
	case IPPROTO_ICMP_:
	case IPPROTO_ICMPV6_:
		need = 4;
		break;
	default:
		return;
	}
	if ((void *)(l4 + need) > data_end || pi->ip_left < need)
		pi->flags |= BT_F_TRUNCATED;

	if (proto == IPPROTO_ICMP_ || proto == IPPROTO_ICMPV6_) {
		if ((void *)(l4 + 2) > data_end || pi->ip_left < 2)
			return;
		pi->key.sport = bpf_htons(l4[0]);
		pi->key.dport = bpf_htons(l4[1]);
		return;
	}
	if ((void *)(l4 + 4) > data_end || pi->ip_left < 4)
		return;
	__builtin_memcpy(&pi->key.sport, l4, 2);
	__builtin_memcpy(&pi->key.dport, l4 + 2, 2);
}

static __always_inline __u16 l4_class(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP_:	return BT_CTR_L4_TCP;
	case IPPROTO_UDP_:	return BT_CTR_L4_UDP;
	case IPPROTO_SCTP_:	return BT_CTR_L4_SCTP;
	case IPPROTO_ICMP_:	return BT_CTR_L4_ICMP;
	case IPPROTO_ICMPV6_:	return BT_CTR_L4_ICMPV6;
	default:		return BT_CTR_L4_OTHER;
	}
}

/* The whole parse: fills pi (which the caller zeroed) from the packet;
 * ctx is a struct __sk_buff when skb (a constant), else a struct xdp_md. */
static __always_inline void parse_packet(void *ctx, bool skb, void *data, void *data_end,
					 struct pkt_info *pi)
{
	struct hdr_cursor c = { .pos = data };
	int eth_proto, l4;

	pi->l3 = BT_CTR_L3_OTHER;
	pi->l4 = BT_CTR_L4_OTHER;
	eth_proto = parse_eth(&c, data_end, pi);
	if (eth_proto < 0) {
		pi->flags |= BT_F_TRUNCATED;
		return;
	}
	pi->l3_off = (c.pos - data) & BT_HDR_OFF_MASK;
	if (eth_proto == ETH_P_IP)
		l4 = parse_ipv4(&c, data_end, pi);
	else if (eth_proto == ETH_P_IPV6)
		l4 = parse_ipv6(ctx, skb, &c, data, data_end, pi);
	else
		return;
	if (l4 < 0)
		return;
	pi->l4 = l4_class(pi->key.proto);
	if (l4 > 0)
		parse_l4(&c, data_end, pi, l4);
}

#endif /* BLOOMTAP_PARSE_BPF_H */
