/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Workloads (include/bloomtap.h "Workloads"): each packet's (received,
 * and sent in the egress program) source and destination looked up in the agent's table of the node's
 * workloads' addresses, counted per workload id and side, and the two ids
 * returned for the heavy-flow key, at packet time. With no table (the
 * default, and a node with no workload) a packet costs one load of the
 * control line it already holds; with one, at most BT_WL_PROBES inlined
 * array reads an address. */
#ifndef BLOOMTAP_WORKLOADS_BPF_H
#define BLOOMTAP_WORKLOADS_BPF_H

#include "maps.bpf.h"
#include "heavy.bpf.h"
#include "watch.bpf.h"

/* The id of address a (its words as loaded) in table t, 0: none. A
 * global function: the verifier walks its probes once, not again for each
 * side and each state of the packet's paths that reach it (inlined, they
 * doubled bloomtap_xdp's instructions processed and took the test build's
 * past the 1,000,000 limit); callers mask what it returns. */
__noinline __u32 workload_find(__u32 t, __u64 w0, __u64 w1)
{
	__u32 h = bt_wl_hash(w0, w1), p;

	for (p = 0; p < BT_WL_PROBES; p++) {
		__u32 i = (t & 1) * BT_WL_SLOTS + ((h + p) & (BT_WL_SLOTS - 1));
		struct bt_wl_slot *e = bpf_map_lookup_elem(&wl_addr, &i);

		if (!e || !e->id)
			return 0;
		if (e->addr[0] == w0 && e->addr[1] == w1)
			return e->id & (BT_WL_IDS - 1);
	}
	return 0;
}

/* The ids of the key's source and destination (0: none) into ids[], their
 * n packets of bytes counted in direction dir. */
static __always_inline void workload_ids(const struct bt_flow_key *key, const struct bt_ctl *c,
					 __u64 bytes, __u32 n, __u32 dir, __u32 ids[2])
{
	__u32 t = *(volatile __u32 *)&c->workloads, side;

	ids[0] = ids[1] = 0;
	if (!(t >> 1))
		return;
	for (side = 0; side < 2; side++) {
		const __u64 *a = (const __u64 *)(side ? key->dst : key->src);
		__u32 id = workload_find(t, a[0], a[1]) & (BT_WL_IDS - 1);

		if (!id)
			continue;
		ids[side] = id;
		count_side(&wl_counts, id + dir * BT_WL_IDS, side, n, bytes);
	}
}

/* The ids into the heavy-flow key's pad, once the SPIE stage hashed the
 * key (a digest is the packet's): an address the key mode masks takes its
 * id with it. */
static __always_inline void workload_pack(struct bt_flow_key *key, const __u32 ids[2])
{
	bt_wl_pack(key->pad, cfg_key_mode == BT_KEY_DST ? 0 : ids[0],
		   cfg_key_mode == BT_KEY_SRC ? 0 : ids[1]);
}

#endif /* BLOOMTAP_WORKLOADS_BPF_H */
