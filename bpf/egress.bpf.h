/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The instance's egress program (tc: a tcx link, or a clsact filter before
 * Linux 6.6): what the interface sends, so that a path starts at the
 * sender ("left here"). It parses and counts as the XDP program does (in
 * the counters' egress entry), and records each packet's SPIE digest,
 * tagged as sent (include/hash.h bt_hash_sent), in the current window.
 *
 * A sent skb is not yet what the wire carries:
 * - a TSO/GSO TCP skb is up to 64 KB that the NIC or the stack cuts
 *   later: each segment's digest is rebuilt (segments.bpf.h), as the next
 *   hop records it;
 * - under checksum offload, a UDP or TCP checksum is partial: the digest
 *   never covers one (UDP's is replaced by payload bytes, TCP's is past
 *   the 8 bytes taken; include/bloomtap.h "SPIE digests");
 * - a UDP GSO skb's datagrams: counted, not digested (BT_CTR_GSO_NOT_DIGESTED;
 *   a callback that reads each one's payload through the skb is refused
 *   by Linux 6.1's verifier). */
#ifndef BLOOMTAP_EGRESS_BPF_H
#define BLOOMTAP_EGRESS_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "spie.bpf.h"
#include "segments.bpf.h"

#define BT_TC_NEXT (-1)		/* TC_ACT_UNSPEC: tcx's TCX_NEXT, the next
				 * program or filter decides */
#define PULL_BYTES 128		/* L2 + the IP header + TCP's or UDP's */

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
	bool rebuilt = !(pi->flags & BT_F_FRAGMENT) && pi->key.proto == IPPROTO_TCP_ &&
		       !bpf_skb_load_bytes(skb, l3, buf->b, HDR_BYTES) &&
		       gso_tcp_segments(c, buf->b, pi->l3_hlen & 0x3c, g, bytes, &digested);

	/* a rebuilt TCP skb's headers are counted by gso_tcp_segments */
	if (!rebuilt)
		*bytes += (g->segs - 1) * (__u64)(pi->l3_hlen +
						  (pi->key.proto == IPPROTO_UDP_ ? 8 : 0));
	*bytes += (g->segs - 1) * (__u64)l3;	/* each segment's L2 header */
	ctr->c[BT_CTR_GSO_SEGMENTS] += digested;
	/* past BT_MAX_SEGS, or not TCP: counted */
	ctr->c[BT_CTR_GSO_NOT_DIGESTED] += g->segs - digested;
	return digested;
}

SEC("tc")
int bloomtap_egress(struct __sk_buff *skb)
{
	const struct bt_hash_keys *k = &cfg_keys;
	struct bt_counters *ctr;
	struct egress_buf *buf;
	struct pkt_info pi;
	struct bt_ctl *c;
	void *data, *data_end;
	__u32 zero = 0, segs = skb->gso_segs > 1 ? skb->gso_segs : 1, win, n;
	__u64 bytes = skb->len, addrs, h;
	struct spie_in in;

	/* the headers in the linear part, where the stack nearly always has
	 * them already */
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (data + PULL_BYTES > data_end && data + skb->len > data_end) {
		bpf_skb_pull_data(skb, skb->len < PULL_BYTES ? skb->len : PULL_BYTES);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}
	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(skb, true, data, data_end, &pi);
	c = bpf_map_lookup_elem(&ctl, &zero);
	buf = bpf_map_lookup_elem(&egress_scratch, &zero);
	if (!c || !buf)
		return BT_TC_NEXT;
	win = c->window;
	if (!(pi.flags & BT_F_KEYED) || !cfg_spie || win >= cfg_windows ||
	    !spie_words(&pi, data, data_end, &in)) {
		count_packets(&pi, bytes, segs, BT_DIR_EGRESS);
		return BT_TC_NEXT;
	}
	addrs = bt_hash_addrs(k, (const __u64 *)&pi.key);
	if (segs > 1) {
		struct seg_run g = { .addrs = addrs, .hdr = in.hdr, .after = in.after, .segs = segs,
				     .gso_size = skb->gso_size, .win = win,
				     .v4 = pi.l3 == BT_CTR_L3_IPV4, .sent = true };
		__u64 b = bytes;

		/* counted first, its bytes after: the segments' headers */
		ctr = count_packets(&pi, 0, segs, BT_DIR_EGRESS);
		if (!ctr)
			return BT_TC_NEXT;
		n = egress_segments(skb, &pi, c, ctr, &g, buf, &b);
		ctr->c[BT_CTR_BYTES] += b;
		ctr->c[BT_CTR_SPIE_INSERTED] += n;
		return BT_TC_NEXT;
	}
	ctr = count_packets(&pi, bytes, 1, BT_DIR_EGRESS);
	if (!ctr)
		return BT_TC_NEXT;
	h = bt_hash_spie_finish(k, addrs, in.hdr, in.after, in.more);
	if (spie_insert_sent(c, win, h))
		ctr->c[BT_CTR_SPIE_PRESENT]++;
	ctr->c[BT_CTR_SPIE_INSERTED]++;
	return BT_TC_NEXT;
}

#endif /* BLOOMTAP_EGRESS_BPF_H */
