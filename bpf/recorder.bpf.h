/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The drop recorder: the head of each dropped frame that got a digest,
 * kept in a per-CPU ring of fixed-size slots (include/bloomtap.h "The drop
 * recorder"), and sent to a follower's ring buffer while one runs.
 *
 * Per CPU, not one shared ring: a tracing program does not nest on its CPU
 * (the kernel's per-program recursion guard), so each CPU's position and
 * slots take plain stores and no lock; user space merges the CPUs'
 * records by time. Only a slot's seq is exchanged atomically, so that a
 * reader on another CPU can tell a slot rewritten under its copy. The
 * frame is read from skb->head + mac_header (the network header when the
 * L2 header is not Ethernet's 14 bytes), as much as is linear:
 * bpf_skb_load_bytes is not there for tp_btf. */
#ifndef BLOOMTAP_RECORDER_BPF_H
#define BLOOMTAP_RECORDER_BPF_H

#include "maps.bpf.h"
#include "config.bpf.h"

/* netns: the inode of skb->dev's namespace, which the caller read */
static __always_inline void record_drop(const struct sk_buff *skb, __u32 reason, __u32 segs,
					const __u32 wl[2], __u32 netns)
{
	__u32 kkey = BT_REC_POS_KERNEL, zero = 0, idx, start, cap;
	__u16 nh = skb->network_header, mac = skb->mac_header;
	__u32 tail = skb->tail, size = BT_DROP_REC_SIZE(cfg_rec_head);
	struct bt_drop_rec_pos *pos;
	struct net_device *dev;
	struct bt_drop_rec *r, *ev;
	__u32 *follow;
	__u64 seq;

	if (!cfg_rec_slots || nh == 0xffff)
		return;
	pos = bpf_map_lookup_elem(&drop_rec_pos, &kkey);
	if (!pos)
		return;
	seq = pos->written + 1;
	idx = pos->written % cfg_rec_slots;
	r = bpf_map_lookup_elem(&drop_rec, &idx);
	if (!r)
		return;
	/* the slot's record, if any, went to no follower: it is lost now */
	if (r->seq && !r->followed)
		pos->overwritten++;
	pos->written = seq;
	/* The slot's seqlock: 0 before any byte of the new record, the
	 * record's number after the last. An atomic exchange is a full
	 * barrier (BPF_XCHG: the JITs emit a locked or acquire-release
	 * instruction), so a reader on another CPU that saw the old number
	 * before its copy and sees it again after copied none of this. */
	__atomic_exchange_n(&r->seq, 0, __ATOMIC_SEQ_CST);
	r->l2 = mac != 0xffff && nh - mac == 14;
	start = r->l2 ? mac : nh;
	cap = tail > start ? tail - start : 0;
	if (cap > cfg_rec_head)
		cap = cfg_rec_head;
	if (bpf_probe_read_kernel(r->data, cap, skb->head + start))
		cap = 0;
	r->cap_len = cap;
	r->ts_ns = bpf_ktime_get_ns();
	r->reason = reason;
	r->segs = segs;
	r->iif = skb->skb_iif;
	dev = skb->dev;
	r->ifindex = dev ? dev->ifindex : 0;
	r->netns = netns;
	r->dir = r->ifindex == r->iif ? BT_DROP_DIR_IN : BT_DROP_DIR_OUT;
	r->frame_len = skb->len + (__u32)((__u64)skb->data - (__u64)skb->head) - start;
	r->followed = 0;
	r->wl[0] = wl[0];
	r->wl[1] = wl[1];
	follow = bpf_map_lookup_elem(&drop_follow, &zero);
	if (follow && *follow) {
		ev = bpf_ringbuf_reserve(&drop_events, size, 0);
		if (ev) {
			bpf_probe_read_kernel(ev, size, r);
			ev->seq = seq;
			bpf_ringbuf_submit(ev, 0);
			pos->follow_sent++;
			r->followed = 1;
		} else {
			pos->follow_lost++;
		}
	}
	__atomic_exchange_n(&r->seq, seq, __ATOMIC_SEQ_CST);
}

#endif /* BLOOMTAP_RECORDER_BPF_H */
