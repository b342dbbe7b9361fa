// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bloomtap's programs, each SEC() entry point of bloomtap.bpf.o: the XDP
 * program (parse, key, count; then XDP_PASS, or XDP_DROP in tap mode: a
 * mirror port's frames, which nobody on this host wants), the egress
 * program and the drop program. The stages live in the headers beside
 * this file, one concern each; the knobs user space sets before load in
 * config.bpf.h. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bloomtap.h"
#include "config.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "flows.bpf.h"
#include "heavy.bpf.h"
#include "spie.bpf.h"
#include "watch.bpf.h"
#include "workloads.bpf.h"
#include "drop.bpf.h"
#include "egress.bpf.h"

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

/* Egress: what the interface sends (egress.bpf.h), on a tcx link or a
 * clsact filter; the next program or filter decides. */
SEC("tc")
int bloomtap_egress(struct __sk_buff *skb)
{
	return egress_stage(skb);
}

/* A drop the host's program (drops_host.bpf.c) attributed to this
 * instance, by a tail call; never attached itself (drop.bpf.h). The
 * tracepoint's arguments come through ctx's array: BPF_PROG types them. */
SEC("tp_btf/kfree_skb")
int BPF_PROG(bloomtap_drop, struct sk_buff *skb, void *location, enum skb_drop_reason why)
{
	return drop_stage(skb, location, why);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
