/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A merged buffer of a capture cut back into the segments the wire
 * carried. A receiver's capture holds what GRO (or a veth handing over a
 * TSO skb whole) made of a TCP flow's segments, or of UDP datagrams of one
 * size (UDP_GRO, fraglist): one IP and TCP/UDP header over all their
 * payload, while every hop's digest is of one wire segment. Each segment
 * is rebuilt as the kernel's TSO and GSO cut it (net/ipv4/tcp_offload.c,
 * udp_offload.c): its own length field, IPv4 ID (incremented, or fixed:
 * SKB_GSO_TCP_FIXEDID), TCP sequence number and flags (PSH and FIN on the
 * last only, CWR on the first), UDP length, and its first payload bytes.
 *
 * The segment size is the flow's: given (--mss), or from the capture
 * itself, which bt_seg_learn() reads first (the MSS options of the flow's
 * SYNs, or its largest packet that fits a 1,500-byte MTU). */
#ifndef BLOOMTAP_SEGMENTS_H
#define BLOOMTAP_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

/* Segments a merged packet is cut into at most (64 KB at TCP's smallest
 * MSS, 88 bytes, is 745) */
#define BT_SEGS_MAX 1024
/* The smallest segment size cut at, given or learned: TCP's smallest MSS
 * (Linux's TCP_MIN_MSS). IPv6 takes it too: its 1,280-byte MTU would say
 * 1,220, but MSS clamping on tunnels goes below that, and the floor is
 * what bounds a cut's cost (an MSS option of 1 would make each byte a
 * segment). A size below it leaves the packet whole, with the reason. */
#define BT_SEG_MIN 88
/* Each segment's head: the IP header (60 bytes at most), TCP's (60) or
 * UDP's (8), and the first 8 bytes of its payload, which is what a digest
 * reads of it (IPv4's options, TCP's 8 bytes; UDP's payload) */
#define BT_SEG_HEAD 128
/* The IP length of a packet no larger than an Ethernet MTU: larger TCP and
 * UDP packets are merged buffers when the flow's segment size is unknown */
#define BT_SEG_UNMERGED 1500

/* What a capture says of its flows (one a direction): bounded memory. */
struct bt_seg_flows;

struct bt_seg_flows *bt_seg_flows_new(void);
void bt_seg_flows_free(struct bt_seg_flows *f);
/* Learns from one IP packet of the capture: a SYN's MSS option, the
 * largest unmerged payload, whether consecutive IPv4 IDs repeat. */
void bt_seg_learn(struct bt_seg_flows *f, const uint8_t *ip, uint32_t len);

/* Where a segment size came from */
enum bt_seg_from {
	BT_SEG_FROM_NONE,
	BT_SEG_FROM_GIVEN,	/* --mss */
	BT_SEG_FROM_SYN,	/* the MSS options of the flow's SYNs */
	BT_SEG_FROM_LARGEST,	/* the flow's largest unmerged packet */
};

/* A packet cut into its segments, or why it is not. */
struct bt_seg_split {
	uint32_t n;		/* segments; 0: not cut (merged or not: why) */
	uint32_t variants;	/* 1, or 2: incremented IDs, then fixed ones */
	uint32_t size;		/* payload bytes a segment, all but the last */
	uint32_t payload;	/* payload bytes of the whole */
	enum bt_seg_from from;
	bool tcp, v4;
	const char *why;	/* n == 0 and a merged buffer: why it is not cut */
	/* segment i of variant v at head[v * n + i], head_len[] bytes (its
	 * IP packet cut after them; its length fields say the whole) */
	uint8_t head[2 * BT_SEGS_MAX][BT_SEG_HEAD];
	uint32_t head_len[2 * BT_SEGS_MAX];
	uint32_t seq[BT_SEGS_MAX];	/* TCP: each segment's sequence number */
	uint16_t id[2 * BT_SEGS_MAX];	/* IPv4: each one's ID (0 for IPv6) */
};

/* The segments of the IP packet ip (len bytes captured), cut at mss bytes
 * when mss is not 0, else at the flow's size that f learned (f may be
 * NULL). Returns s->n: 0 when the packet is traced as it is, with s->why
 * set when it is a merged buffer that could not be cut. */
uint32_t bt_seg_split(const struct bt_seg_flows *f, const uint8_t *ip, uint32_t len,
		      uint32_t mss, struct bt_seg_split *s);
/* "given", "the flow's SYN", "the flow's largest unmerged packet" */
const char *bt_seg_from_name(enum bt_seg_from from);

#endif /* BLOOMTAP_SEGMENTS_H */
