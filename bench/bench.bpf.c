// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench: the programs measured against bloomtap_xdp, and the driver
 * that makes every BPF_PROG_TEST_RUN iteration a different packet.
 *
 * bench_drive rewrites the source address and port of the test frame from
 * a precomputed flow sequence (Zipf over many flows), then tail-calls the
 * program under test (slot 0 of bench_progs). Every measured program pays
 * the same driver and tail call, so their differences are their own. All
 * are plain "xdp", like the bloomtap_xdp entry point measured: a tail
 * call must not change whether a program takes multi-buffer frames. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bloomtap.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "spie.bpf.h"
#include "hash.h"

const volatile __u32 cfg_seq_mask = 0;		/* sequence length - 1 */
const volatile __u32 cfg_ipv6 = 0;		/* frame is Ethernet/IPv6/TCP */
const volatile struct bt_hash_key cfg_key = {};

__u64 cursor = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_progs SEC(".maps");

/* Reference: bloomtap's parsing and counters, then a plain count-min of
 * 4 x 65536 shared counters, one 64-bit hash, atomic adds (no conservative
 * update, no flow memory, no intervals): the same program as bloomtap's but
 * for its heavy-flow stage. */
#define REF_ROWS 4
#define REF_WIDTH 65536
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, REF_ROWS * REF_WIDTH);
	__type(key, __u32);
	__type(value, __u64);
} ref_cms SEC(".maps");

/* The next packet of the sequence, written into the frame; -1 on error. */
static __always_inline int next_packet(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 i = cursor++ & cfg_seq_mask, *flow;
	__u32 l3 = 14, saddr_off, l4;

	flow = bpf_map_lookup_elem(&bench_seq, &i);
	if (!flow)
		return -1;
	/* IPv4: saddr at 12, 20-byte header; IPv6: low word of saddr at 20 */
	saddr_off = cfg_ipv6 ? l3 + 20 : l3 + 12;
	l4 = cfg_ipv6 ? l3 + 40 : l3 + 20;
	if (data + l4 + 8 > data_end)
		return -1;
	*(__be32 *)(data + saddr_off) = bpf_htonl(0xc6120000 + (*flow & 0x1ffff));
	*(__be16 *)(data + l4) = bpf_htons(1024 + *flow % 50000);
	/* every packet distinct, as on a real link: the iteration number in
	 * L4 bytes 4..7 (UDP length and checksum, TCP sequence number) */
	*(__be32 *)(data + l4 + 4) = bpf_htonl(i);
	return 0;
}

SEC("xdp")
int bench_drive(struct xdp_md *ctx)
{
	if (next_packet(ctx))
		return XDP_ABORTED;
	bpf_tail_call(ctx, &bench_progs, 0);
	return XDP_ABORTED;	/* not reached unless the slot is empty */
}

/* The live run's traffic generator: BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES runs it on frames "received" on one end of a
 * veth pair, and XDP_TX sends each, varied, to the other end. */
SEC("xdp")
int bench_gen(struct xdp_md *ctx)
{
	return next_packet(ctx) ? XDP_ABORTED : XDP_TX;
}

SEC("xdp")
int bench_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int bench_ref_cms(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bt_hash_key hk = { cfg_key.k0, cfg_key.k1 };
	struct pkt_info pi;
	__u64 h, bytes = data_end - data;
	__u32 r;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, data, data_end, &pi);
	count_packet(&pi, bytes);
	if (!(pi.flags & BT_F_KEYED))
		return XDP_PASS;
	h = bt_siphash13(&hk, (const __u64 *)&pi.key, BT_FLOW_KEY_WORDS);
#pragma unroll
	for (r = 0; r < REF_ROWS; r++) {
		__u32 idx = r * REF_WIDTH + bt_sketch_col(h, r, REF_WIDTH - 1);
		__u64 *c = bpf_map_lookup_elem(&ref_cms, &idx);

		if (c)
			__sync_fetch_and_add(c, bytes);
	}
	return XDP_PASS;
}

/* Reference: bloomtap's parsing, counters and SPIE digest, inserted into
 * the kernel's BPF_MAP_TYPE_BLOOM_FILTER with the same k (map_extra, set by
 * user space with the size). ref_bloom is sized as the kernel sizes a
 * filter for the design load (k/ln 2 bits a packet, rounded up to a power
 * of two: 2 MiB at the defaults); ref_bloom_mem has the bits of one of
 * bloomtap's windows (8 MiB). */
struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, 1);
	__uint(map_extra, 5);
	__type(value, __u64);
} ref_bloom SEC(".maps"), ref_bloom_mem SEC(".maps");

static __always_inline int ref_bloom_insert(struct xdp_md *ctx, void *filter)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bt_hash_key hk = { cfg_key.k0, cfg_key.k1 };
	struct bt_spie_input in;
	struct pkt_info pi;
	__u64 h;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, data, data_end, &pi);
	count_packet(&pi, data_end - data);
	if (!(pi.flags & BT_F_KEYED) || !spie_input(&pi, data, data_end, &in))
		return XDP_PASS;
	h = bt_siphash13(&hk, (const __u64 *)in.b, BT_SPIE_INPUT_WORDS);
	bpf_map_push_elem(filter, &h, 0);
	return XDP_PASS;
}

SEC("xdp")
int bench_ref_bloom(struct xdp_md *ctx)
{
	return ref_bloom_insert(ctx, &ref_bloom);
}

SEC("xdp")
int bench_ref_bloom_mem(struct xdp_md *ctx)
{
	return ref_bloom_insert(ctx, &ref_bloom_mem);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
