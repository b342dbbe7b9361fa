// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The host's drop program: one for the host, on the kernel's drop
 * tracepoint (tp_btf/kfree_skb: it fires when the last reference goes,
 * never for consume_skb, once for a shared skb). It sees the drops of
 * every network namespace; a drop belongs to an instance by (network
 * namespace, ingress ifindex), never the ifindex alone (ifindexes repeat
 * across namespaces), and goes on in that instance's own program
 * (bpf/drop.bpf.h) by a tail call. Drops on interfaces without an
 * instance are counted here, by reason. Loaded by the first instance
 * attached, removed with the last (user/instance/drops.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bloomtap.h"
#include "drop_count.bpf.h"

/* drop_owners: key struct bt_drop_owner, value the instance's slot in
 * drop_progs (BT_DROP_SLOT_MASK of it: include/bloomtap.h). Written by
 * user space at attach and detach, and for stacked devices and the
 * workloads' devices by the agent's loop. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BT_DROP_OWNERS);
	__type(key, struct bt_drop_owner);
	__type(value, __u32);
} drop_owners SEC(".maps");

/* drop_progs: the instances' drop programs, by slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, BT_DROP_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} drop_progs SEC(".maps");

/* drop_host: per CPU, index a core reason, value struct bt_drop_count:
 * the drops no instance owns (skbs, not GRO segments: the bucket stays
 * cheap); a subsystem's reasons in drop_host_subsys. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_DROP_REASONS);
	__type(key, __u32);
	__type(value, struct bt_drop_count);
} drop_host SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct bt_drop_count);
} drop_host_subsys SEC(".maps");

SEC("tp_btf/kfree_skb")
int BPF_PROG(bloomtap_drops, struct sk_buff *skb, void *location, enum skb_drop_reason why)
{
	struct net_device *dev = skb->dev;
	__u32 *slot;

	/* skb_iif: the interface it came in by, in the namespace of the
	 * device it is on now; 0 for a packet made on this host, which no
	 * XDP program saw: no instance's. A device stacked on the instance's
	 * (VLAN, bridge, bond) receives it again and names itself here: its
	 * entry is the instance's too (BT_DROP_UPPER); so does a container's
	 * veth end, in the container's namespace, for a packet the node
	 * forwarded into it (BT_DROP_WORKLOAD). */
	if (dev && skb->skb_iif) {
		struct bt_drop_owner o = {
			.netns = dev->nd_net.net->ns.inum,
			.ifindex = skb->skb_iif,
		};

		slot = bpf_map_lookup_elem(&drop_owners, &o);
		if (slot)
			bpf_tail_call(ctx, &drop_progs, *slot & BT_DROP_SLOT_MASK);
	}
	drop_count_add(&drop_host, &drop_host_subsys, why, 1, skb->len);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
