// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bloomtap's XDP program: parse, key, count; then XDP_PASS, or XDP_DROP in
 * tap mode (a mirror port's frames, which nobody on this host wants).
 * The stages live in the headers beside this file, one concern each. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "bloomtap.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "flows.bpf.h"
#include "heavy.bpf.h"
#include "spie.bpf.h"
#include "watch.bpf.h"
#include "workloads.bpf.h"

/* Set by user space through skel->rodata before load; the verifier prunes
 * the branches they switch off. */
const volatile __u8 cfg_flow_table = 0;
const volatile __u8 cfg_heavy = 1;
const volatile __u8 cfg_spie = 1;
const volatile __u8 cfg_share_hash = 1;	/* 0 only in make bench's ablation */
/* Derived from the instance's key by user space (include/hash.h), set
 * before load. Not const: a const object's reads through a pointer would
 * fold to its zero initializer, and copying it through volatile reads on
 * every packet cost more than the hashing. */
struct bt_hash_keys cfg_keys = {};

#include "drop.bpf.h"	/* the drop program: uses cfg_keys */
#include "egress.bpf.h"	/* the egress program: the same */

/* The whole per-packet pipeline; bytes is the frame's length. */
static __always_inline int bloomtap_run(struct xdp_md *ctx, __u64 bytes)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bt_counters *ctr;
	const struct bt_hash_keys *k = &cfg_keys;
	struct pkt_info pi;
	struct bt_iv_part *part = NULL;
	struct bt_ctl *c;
	__u32 zero = 0, interval = 0;
	__u64 addrs = 0;
	__u32 wl[2];
	int verdict;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, false, data, data_end, &pi);
	ctr = count_packet(&pi, bytes);
	c = bpf_map_lookup_elem(&ctl, &zero);
	if (!ctr || !c)
		return XDP_PASS;
	/* tap mode: recorded, then dropped before the stack (and so before
	 * the drop programs) sees the frame; read once, with the ctl line */
	verdict = c->tap ? XDP_DROP : XDP_PASS;
	/* the interval this packet belongs to, read once */
	if (cfg_heavy) {
		interval = *(volatile __u32 *)&c->interval;
		part = heavy_account(ctr, interval, bytes, 1);
	}
	if (!(pi.flags & BT_F_KEYED))
		return verdict;

	if (cfg_flow_table)
		flow_table_add(&pi.key, bytes);
	watch_count(&pi, c, k, bytes, 1, BT_DIR_INGRESS);
	workload_ids(&pi.key, c, bytes, 1, BT_DIR_INGRESS, wl);
	/* The address words' hash, shared by both stages (one hash pass). */
	if (cfg_spie) {
		addrs = bt_hash_addrs(k, (const __u64 *)&pi.key);
		spie_record(&pi, data, data_end, c, ctr, k, addrs, cfg_flow_table);
	}
	/* last: heavy_count() masks the key in place; the workloads' ids in
	 * its pad after the SPIE stage hashed it (a digest is the packet's) */
	if (cfg_heavy && part) {
		const struct heavy_maps hm = { &cms, &fm, &fmc, &fc, &fmo };
		const struct heavy_where w = { .hm = &hm, .c = c, .part = part, .ctr = ctr, .hk = k,
					       .interval = interval,
					       .cpu = bpf_get_smp_processor_id() };

		workload_pack(&pi.key, wl);
		heavy_count(&w, &pi.key, bytes, 1, addrs, cfg_spie && cfg_share_hash);
	}
	return verdict;
}

/* Attached to interfaces: frames are linear (a driver will not raise the
 * MTU past one page under a program without frags support), so the length
 * is data_end - data. bpf_xdp_get_buff_len() would cost a helper call, 8 ns
 * a packet here, a quarter of an empty program. */
SEC("xdp")
int bloomtap_xdp(struct xdp_md *ctx)
{
	return bloomtap_run(ctx, ctx->data_end - ctx->data);
}

/* Multi-buffer frames: jumbo MTUs, and large captured packets in replay.
 * Headers are parsed from the linear part, bytes counted over all of it. */
SEC("xdp.frags")
int bloomtap_xdp_mb(struct xdp_md *ctx)
{
	return bloomtap_run(ctx, bpf_xdp_get_buff_len(ctx));
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
