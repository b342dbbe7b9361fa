/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-CPU counters: one map lookup per packet, plain adds (no atomics: the
 * slot is this CPU's own and XDP runs with preemption off). */
#ifndef BLOOMTAP_COUNTERS_BPF_H
#define BLOOMTAP_COUNTERS_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"

/* Counts n packets of pi's kind (a GSO skb's segments on egress: n > 1)
 * in direction dir's counters; returns them, for the later stages to
 * count in. Egress and XDP never share a CPU's slot at once: tc egress
 * runs with bottom halves off. */
static __always_inline struct bt_counters *count_packets(const struct pkt_info *pi,
							 __u64 bytes, __u32 n, __u32 dir)
{
	struct bt_counters *ctr = bpf_map_lookup_elem(&counters, &dir);

	if (!ctr)
		return NULL;
	ctr->c[BT_CTR_PACKETS] += n;
	ctr->c[BT_CTR_BYTES] += bytes;
	/* l3 and l4 come from a closed set of enum values; the bounds checks
	 * only prove it to the verifier. */
	if (pi->l3 < BT_CTR_MAX)
		ctr->c[pi->l3] += n;
	if (pi->l3 != BT_CTR_L3_OTHER && pi->l4 < BT_CTR_MAX)
		ctr->c[pi->l4] += n;
	if (pi->flags & BT_F_FRAGMENT)
		ctr->c[BT_CTR_FRAGMENTS] += n;
	if (pi->flags & BT_F_VLAN)
		ctr->c[BT_CTR_VLAN] += n;
	if (pi->flags & BT_F_TRUNCATED)
		ctr->c[BT_CTR_TRUNCATED] += n;
	if (pi->flags & BT_F_MALFORMED)
		ctr->c[BT_CTR_MALFORMED] += n;
	if (pi->flags & BT_F_TOO_DEEP)
		ctr->c[BT_CTR_TOO_DEEP] += n;
	return ctr;
}

/* A received frame (XDP) */
static __always_inline struct bt_counters *count_packet(const struct pkt_info *pi,
							__u64 bytes)
{
	return count_packets(pi, bytes, 1, BT_DIR_INGRESS);
}

/* A rare event, in the counters of the traffic it happened to: dir's
 * (enum bt_direction), or with BT_DIRS the dropped traffic's (dcounters) */
static __always_inline void count_event_of(enum bt_counter which, __u32 dir)
{
	__u32 zero = 0;
	struct bt_counters *ctr = dir == BT_DIRS ? bpf_map_lookup_elem(&dcounters, &zero) :
						   bpf_map_lookup_elem(&counters, &dir);

	/* atomic: the drop program, interrupted by XDP's softirq on its
	 * CPU, counts here too (rare events: no cost per packet) */
	if (ctr)
		__sync_fetch_and_add(&ctr->c[which], 1);
}

/* ...of what XDP received */
static __always_inline void count_event(enum bt_counter which)
{
	count_event_of(which, BT_DIR_INGRESS);
}

#endif /* BLOOMTAP_COUNTERS_BPF_H */
