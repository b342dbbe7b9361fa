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
#include "former_spie.bpf.h"

const volatile __u32 cfg_seq_mask = 0;		/* sequence length - 1 */
const volatile __u32 cfg_ipv6 = 0;		/* frame is Ethernet/IPv6/TCP */
const volatile __u32 cfg_addrs = 0;		/* addresses from bench_addrs */
const volatile struct bt_hash_key cfg_key = {};
const volatile struct bt_hash_keys cfg_nh_keys = {};

__u64 cursor = 0;
/* The live run's accepted traffic (IPv4/UDP only): each frame a datagram
 * B's stack delivers to a socket: the packet's number in the payload (not
 * in the UDP length and checksum), no UDP checksum, the IPv4 checksum
 * right. Set by user space between runs. */
__u32 gen_accepted = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);	/* a flow; mmapped arrays keep 8-byte elements */
} bench_seq SEC(".maps");

/* With cfg_addrs, packet i's source and destination (16 bytes each,
 * v4-mapped for IPv4): the watch lists' real-shaped traffic. */
struct bench_addr_pair {
	__u8 src[16], dst[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_addr_pair);
} bench_addrs SEC(".maps");

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

/* gen_accepted's frame: number n in the first payload bytes, the UDP
 * length from the IP header's, checksums as a receiver wants them. */
static __always_inline int accepted_v4(void *data, void *data_end, __u32 l3, __u32 l4, __u64 n)
{
	__u16 *w = data + l3;
	__u32 sum = 0;

	if (data + l4 + 12 > data_end)
		return -1;
	/* the header as sent: live frames recycle their pages, and a host that
	 * forwards a frame rewrites its MACs and TTL in place (make bench's
	 * egress run; tests/lib/frames.h's MACs) */
	*(__be32 *)data = bpf_htonl(0x02000000);
	*(__be32 *)(data + 4) = bpf_htonl(0x00020200);
	*(__be32 *)(data + 8) = bpf_htonl(0x00000001);
	*(__u8 *)(data + l3 + 8) = 64;
	/* a source that is B's own address (the Zipf's third flow: 198.18.0.2)
	 * would die as IP_LOCAL_SOURCE, a drop in traffic meant to arrive */
	if (*(__be32 *)(data + l3 + 12) == *(__be32 *)(data + l3 + 16))
		*(__be32 *)(data + l3 + 12) ^= bpf_htonl(1);
	*(__be32 *)(data + l4 + 8) = bpf_htonl((__u32)n);
	*(__be16 *)(data + l4 + 4) = bpf_htons(bpf_ntohs(w[1]) - (l4 - l3));
	*(__be16 *)(data + l4 + 6) = 0;
	w[5] = 0;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	w[5] = ~sum;
	return 0;
}

/* The next packet of the sequence, written into the frame at data; -1 on
 * error. */
/* n: the packet's number; at: its place in the sequence */
static __always_inline int next_packet_at(void *data, void *data_end, __u64 n, __u64 at)
{
	__u32 i = at & cfg_seq_mask;
	__u64 *flow;
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
	if (cfg_addrs) {
		struct bench_addr_pair *a = bpf_map_lookup_elem(&bench_addrs, &i);

		if (!a)
			return -1;
		if (cfg_ipv6) {
			if (data + l3 + 40 > data_end)
				return -1;
			__builtin_memcpy(data + l3 + 8, a->src, 16);
			__builtin_memcpy(data + l3 + 24, a->dst, 16);
		} else {
			__builtin_memcpy(data + l3 + 12, a->src + 12, 4);
			__builtin_memcpy(data + l3 + 16, a->dst + 12, 4);
		}
	}
	*(__be16 *)(data + l4) = bpf_htons(1024 + *flow % 50000);
	if (gen_accepted && !cfg_ipv6)
		return accepted_v4(data, data_end, l3, l4, n);
	/* every packet distinct, as on a real link: its number (the low 32
	 * bits) in L4 bytes 4..7 (UDP length and checksum, TCP sequence),
	 * and for UDP in its first payload bytes too, since the digest leaves
	 * the UDP checksum out (include/hash.h "The SPIE digest") */
	*(__be32 *)(data + l4 + 4) = bpf_htonl((__u32)n);
	if (!cfg_ipv6 && data + l4 + 12 <= data_end)
		*(__be32 *)(data + l4 + 8) = bpf_htonl((__u32)n);
	return 0;
}

static __always_inline int next_packet(struct xdp_md *ctx)
{
	__u64 n = cursor++;

	return next_packet_at((void *)(long)ctx->data, (void *)(long)ctx->data_end, n, n);
}

SEC("xdp")
int bench_drive(struct xdp_md *ctx)
{
	if (next_packet(ctx))
		return XDP_ABORTED;
	bpf_tail_call(ctx, &bench_progs, 0);
	return XDP_ABORTED;	/* not reached unless the slot is empty */
}

/* The same for CPUs driving one target at once (bench/cpus.c): each CPU's
 * own cursor, in a line of its own, so that the driver shares nothing;
 * CPU c's packets are numbers c, c + 64, ... (all distinct), its flows
 * the sequence's from a place of its own on. */
#define DRIVE_CPUS 64
__u64 cpu_cursor[DRIVE_CPUS * 8];	/* CPU c's at 8 c: a line each */

SEC("xdp")
int bench_drive_cpus(struct xdp_md *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 n;

	if (cpu >= DRIVE_CPUS)
		return XDP_ABORTED;
	n = cpu_cursor[cpu * 8]++;
	if (next_packet_at((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			   n * DRIVE_CPUS + cpu, n + cpu * 16411ULL))
		return XDP_ABORTED;
	bpf_tail_call(ctx, &bench_progs, 0);
	return XDP_ABORTED;
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

/* The egress program's bench: the same driver for tc
 * programs, which tail-call tc programs only. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_tc_progs SEC(".maps");

#define BENCH_TC_SHOT 2		/* TC_ACT_SHOT: the driver failed */

SEC("tc")
int bench_drive_tc(struct __sk_buff *skb)
{
	__u64 n = cursor++;

	if (next_packet_at((void *)(long)skb->data, (void *)(long)skb->data_end, n, n))
		return BENCH_TC_SHOT;
	bpf_tail_call(skb, &bench_tc_progs, 0);
	return BENCH_TC_SHOT;
}

/* The floor: an empty tc program (TC_ACT_UNSPEC, as bloomtap's returns) */
SEC("tc")
int bench_tc_empty(struct __sk_buff *skb)
{
	return -1;
}

/* Tap mode's reference: an empty program that drops every frame. */
SEC("xdp")
int bench_empty_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* The floor of recording drops: an empty program on the kernel's drop
 * tracepoint, which costs the tracepoint's call into BPF (attached by the
 * live run, never by the skeleton). */
SEC("tp_btf/kfree_skb")
int bench_kfree_empty(void *ctx)
{
	return 0;
}

/* Column of row `row` in the reference's rows of width wmask + 1 (a power
 * of two): double hashing, Kirsch & Mitzenmacher. */
static __always_inline __u32 ref_col(__u64 h, __u32 row, __u32 wmask)
{
	__u32 h1 = (__u32)h, h2 = (__u32)(h >> 32) | 1;	/* odd: visits all */

	return (h1 + row * h2) & wmask;
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
	parse_packet(ctx, false, data, data_end, &pi);
	count_packet(&pi, bytes);
	if (!(pi.flags & BT_F_KEYED))
		return XDP_PASS;
	h = bt_siphash13(&hk, (const __u64 *)&pi.key, BT_FLOW_KEY_WORDS);
#pragma unroll
	for (r = 0; r < REF_ROWS; r++) {
		__u32 idx = r * REF_WIDTH + ref_col(h, r, REF_WIDTH - 1);
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
	struct former_input in;
	struct pkt_info pi;
	__u64 h;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, false, data, data_end, &pi);
	count_packet(&pi, data_end - data);
	if (!(pi.flags & BT_F_KEYED) || !former_input(&pi, data, data_end, &in))
		return XDP_PASS;
	h = bt_siphash13(&hk, (const __u64 *)in.b, 6);
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

/* ---- References for watch lists ----
 * The same entries (16-byte addresses, v4-mapped, one prefix length) in a
 * kernel hash map and an LPM trie, sized by user space; each packet's
 * source and destination looked up and counted per class and direction
 * per CPU, as bloomtap's watch stage does on top of the same parsing. */
struct ref_lpm_key {
	__u32 prefixlen;
	__u8 addr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u8[16]);
	__type(value, __u32);
} ref_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct ref_lpm_key);
	__type(value, __u32);
} ref_lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_WATCH_CLASSES);
	__type(key, __u32);
	__type(value, struct bt_watch_count);
} ref_class_counts SEC(".maps");

static __always_inline void ref_count_class(__u32 *cls, __u32 dir, __u64 bytes)
{
	struct bt_watch_count *n;

	if (!cls || !(n = bpf_map_lookup_elem(&ref_class_counts, cls)))
		return;
	n->packets[dir & 1]++;
	n->bytes[dir & 1] += bytes;
}

static __always_inline int ref_watch(struct xdp_md *ctx, bool lpm)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt_info pi;
	__u64 bytes = data_end - data;
	__u32 dir;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, false, data, data_end, &pi);
	count_packet(&pi, bytes);
	if (!(pi.flags & BT_F_KEYED))
		return XDP_PASS;
	for (dir = 0; dir < 2; dir++) {
		const __u8 *a = dir ? pi.key.dst : pi.key.src;

		if (lpm) {
			struct ref_lpm_key k = { .prefixlen = 128 };

			__builtin_memcpy(k.addr, a, 16);
			ref_count_class(bpf_map_lookup_elem(&ref_lpm, &k), dir, bytes);
		} else {
			ref_count_class(bpf_map_lookup_elem(&ref_hash, a), dir, bytes);
		}
	}
	return XDP_PASS;
}

SEC("xdp")
int bench_ref_hash(struct xdp_md *ctx)
{
	return ref_watch(ctx, false);
}

SEC("xdp")
int bench_ref_lpm(struct xdp_md *ctx)
{
	return ref_watch(ctx, true);
}

/* ---- The floor of a lookup ----
 * Each address reads `reads` random 64-byte lines of ref_chase (sized by
 * user space to the table's bytes), each read's line chosen by the one
 * before (dependent, as a search's steps are), `width` lines at once (a
 * Bloomier probe reads its 4 cells' lines together): what a lookup that
 * reads that many lines costs with nothing else, on top of the same
 * parsing and per-class counting. */
struct ref_line {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ref_line);
} ref_chase SEC(".maps");

const volatile __u32 cfg_chase_lines = 1;	/* ref_chase's max_entries */

/* The same array as an inner map (user space puts ref_chase in): each
 * read a call (an inner map's lookup is not inlined), as the watch
 * table's reads are. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_INNER_MAP);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct ref_line);
	});
} ref_chase_outer SEC(".maps");

static __always_inline int ref_chase_run(struct xdp_md *ctx, __u32 reads, __u32 width,
					 bool inner)
{
	__u32 zero = 0;
	void *arr = inner ? bpf_map_lookup_elem(&ref_chase_outer, &zero) : &ref_chase;
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt_info pi;
	__u64 bytes = data_end - data;
	__u32 dir, r, w, cls;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, false, data, data_end, &pi);
	count_packet(&pi, bytes);
	if (!(pi.flags & BT_F_KEYED) || !arr)
		return XDP_PASS;
	for (dir = 0; dir < 2; dir++) {
		const __u64 *a = (const __u64 *)(dir ? pi.key.dst : pi.key.src);
		__u64 x = (a[0] ^ a[1]) * 0x9e3779b97f4a7c15ULL, v = 0;

		for (r = 0; r < reads; r++) {
			__u64 sum = 0;

			for (w = 0; w < width; w++) {
				/* multiply-shift onto 0..lines-1: no division */
				__u64 y = (x + v) * (0xff51afd7ed558ccdULL + 2 * w);
				__u32 i = (y >> 32) * (__u64)cfg_chase_lines >> 32;
				struct ref_line *l = bpf_map_lookup_elem(arr, &i);

				if (l)
					sum += l->w[0];
			}
			v = sum + r + 1;	/* the next line waits for this one */
		}
		cls = 1 + (v & 0x7f);
		ref_count_class(&cls, dir, bytes);
	}
	return XDP_PASS;
}

/* The floor's programs: reads an address, lines a read, through the inner
 * map or not. */
#define REF_CHASE(name, reads, width, inner)			\
	SEC("xdp") int name(struct xdp_md *ctx)			\
	{							\
		return ref_chase_run(ctx, reads, width, inner);	\
	}

REF_CHASE(bench_ref_chase1, 1, 1, false)
REF_CHASE(bench_ref_chase2, 2, 1, false)
REF_CHASE(bench_ref_chase4, 4, 1, false)
REF_CHASE(bench_ref_chase4w, 4, 4, false)
REF_CHASE(bench_ref_chase4w_inner, 4, 4, true)

/* ---- The ablation of the SPIE stage ----
 * The stage with one lever more at a time, each on top of bloomtap's
 * parsing and counters. Like the real program, each writes one window
 * until its design load (128 bits a packet) and then a fresh one: window
 * (cursor >> ab_load_shift) of the ab_lines or ab_blocks array, sized by
 * user space, which sets these between measurements (.bss: one load more
 * than the real program's constants). The real program's rows come from
 * bloomtap instances. */
__u32 ab_load_shift = 0;	/* log2 of the design load */
__u32 ab_win_mask = 0;		/* windows the array holds - 1 */
__u32 ab_unit_shift = 0;	/* log2 of lines or blocks a window */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct former_block);
} ab_lines SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_bloom_block);
} ab_blocks SEC(".maps");

/* The first line or block of the window this packet goes to. */
static __always_inline __u32 ab_window_base(void)
{
	return ((__u32)(cursor >> ab_load_shift) & ab_win_mask) << ab_unit_shift;
}

/* Parsing and counters as bloomtap does them; false when not keyed. */
static __always_inline bool ab_parse(struct xdp_md *ctx, struct pkt_info *pi)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	__builtin_memset(pi, 0, sizeof(*pi));
	parse_packet(ctx, false, data, data_end, pi);
	count_packet(pi, data_end - data);
	return pi->flags & BT_F_KEYED;
}

static __always_inline __u64 ab_siphash(const __u64 *w)
{
	struct bt_hash_key hk = { cfg_key.k0, cfg_key.k1 };

	return bt_siphash13(&hk, w, 6);
}

static __always_inline void ab_block_set(__u64 h)
{
	__u32 idx = ab_window_base() + bt_bloom_block(h, (1u << ab_unit_shift) - 1);
	struct bt_bloom_block *b = bpf_map_lookup_elem(&ab_blocks, &idx);

	if (b)
		bloom_set(b, h, BT_BLOCK_MAX_K, false);
}

/* 0: the former stage: byte-built input, SipHash, 512-bit block, k = 5 */
SEC("xdp")
int ab_former(struct xdp_md *ctx)
{
	struct former_input in;
	struct former_block *b;
	struct pkt_info pi;
	__u32 idx;
	__u64 h;

	if (!ab_parse(ctx, &pi) ||
	    !former_input(&pi, (void *)(long)ctx->data, (void *)(long)ctx->data_end, &in))
		return XDP_PASS;
	h = ab_siphash((const __u64 *)in.b);
	idx = ab_window_base() + (h & ((1u << ab_unit_shift) - 1));
	b = bpf_map_lookup_elem(&ab_lines, &idx);
	if (b)
		former_insert(b, h, 5);
	return XDP_PASS;
}

/* 1a: + the 128-bit block of formats 3 to 9, k = 8, masks in registers
 * (in the lines' array: four blocks a line) */
static __always_inline __u64 ab_mask128(__u64 h, __u32 word)
{
	__u64 x = h >> (word * 24), m = 0;

	for (int i = 0; i < 4; i++)
		m |= 1ULL << ((x >> (6 * i)) & 63);
	return m;
}

SEC("xdp")
int ab_block128(struct xdp_md *ctx)
{
	struct former_input in;
	struct former_block *b;
	struct pkt_info pi;
	__u64 h, m0, m1, *w;
	__u32 idx, line;

	if (!ab_parse(ctx, &pi) ||
	    !former_input(&pi, (void *)(long)ctx->data, (void *)(long)ctx->data_end, &in))
		return XDP_PASS;
	h = ab_siphash((const __u64 *)in.b);
	idx = ab_window_base() + ((h >> 48) & ((1u << ab_unit_shift) - 1));
	line = idx >> 2;
	b = bpf_map_lookup_elem(&ab_lines, &line);
	if (!b)
		return XDP_PASS;
	w = &b->w[(idx & 3) * 2];
	m0 = ab_mask128(h, 0);
	m1 = ab_mask128(h, 1);
	if ((w[0] & m0) != m0)
		__sync_fetch_and_or(&w[0], m0);
	if ((w[1] & m1) != m1)
		__sync_fetch_and_or(&w[1], m1);
	return XDP_PASS;
}

/* 1b: instead, a one-line block of k = 4 positions, from the digest's bits */
SEC("xdp")
int ab_block(struct xdp_md *ctx)
{
	struct former_input in;
	struct pkt_info pi;

	if (!ab_parse(ctx, &pi) ||
	    !former_input(&pi, (void *)(long)ctx->data, (void *)(long)ctx->data_end, &in))
		return XDP_PASS;
	ab_block_set(ab_siphash((const __u64 *)in.b));
	return XDP_PASS;
}

/* 2: + the digest's words from word loads (still SipHash) */
SEC("xdp")
int ab_words(struct xdp_md *ctx)
{
	struct pkt_info pi;
	struct spie_in in;
	__u64 w[6];

	if (!ab_parse(ctx, &pi))
		return XDP_PASS;
	__builtin_memcpy(w, &pi.key, 32);
	if (!spie_words(&pi, (void *)(long)ctx->data, (void *)(long)ctx->data_end, &in))
		return XDP_PASS;
	w[4] = in.hdr;
	w[5] = in.after;
	ab_block_set(ab_siphash(w));
	return XDP_PASS;
}

/* 3: + NH and a mixer instead of SipHash */
SEC("xdp")
int ab_nh(struct xdp_md *ctx)
{
	struct bt_hash_keys k;
	struct pkt_info pi;
	struct spie_in in;

	if (!ab_parse(ctx, &pi) ||
	    !spie_words(&pi, (void *)(long)ctx->data, (void *)(long)ctx->data_end, &in))
		return XDP_PASS;
	k.addr[0] = cfg_nh_keys.addr[0];
	k.addr[1] = cfg_nh_keys.addr[1];
	k.addr[2] = cfg_nh_keys.addr[2];
	k.addr[3] = cfg_nh_keys.addr[3];
	k.spie[0] = cfg_nh_keys.spie[0];
	k.spie[1] = cfg_nh_keys.spie[1];
	k.fin_spie = cfg_nh_keys.fin_spie;
	k.spie_more = cfg_nh_keys.spie_more;
	ab_block_set(bt_hash_spie_finish(&k, bt_hash_addrs(&k, (const __u64 *)&pi.key), in.hdr,
					 in.after, in.more));
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- A stage's memory floor (bench/floor.c) ----
 * The lines a stage touches a packet, with nothing else on top of the same
 * parsing and counters: array j (floor_lines[j] lines of ref_floor from
 * floor_off[j]) is touched, a word read and written, by a packet with
 * probability floor_p[j] / 65536 (drawn from the packet's number), at the
 * line the packet's flow picks (the same flow, the same line, as a
 * stage's), independently of the other arrays' reads (as a stage's
 * indices all come from the key's hash). Set by measure() before a run. */
#define FLOOR_ARRAYS 8
#define FLOOR_MAX_LINES (1u << 17)	/* 8 MiB */
__u32 floor_n;
__u32 floor_off[FLOOR_ARRAYS], floor_lines[FLOOR_ARRAYS], floor_p[FLOOR_ARRAYS];
__u64 floor_packet;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_MAX_LINES);
	__type(key, __u32);
	__type(value, struct ref_line);
} ref_floor SEC(".maps");

SEC("xdp")
int bench_floor(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt_info pi;
	__u64 bytes = data_end - data, flow, draw;
	const __u64 *w;
	__u32 j;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(ctx, false, data, data_end, &pi);
	count_packet(&pi, bytes);
	if (!(pi.flags & BT_F_KEYED))
		return XDP_PASS;
	w = (const __u64 *)&pi.key;
	flow = (w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4]) * 0x9e3779b97f4a7c15ULL;
	draw = floor_packet++;
#pragma unroll
	for (j = 0; j < FLOOR_ARRAYS; j++) {
		__u64 y = (flow + j) * (0xc4ceb9fe1a85ec53ULL + 2 * j);
		__u32 i;
		struct ref_line *l;

		if (j >= floor_n)
			break;
		/* an array's own multiplier: its draws independent of the others' */
		if ((draw * (0xff51afd7ed558ccdULL + 2 * j)) >> 48 >= floor_p[j])
			continue;
		i = floor_off[j] + (__u32)((y >> 32) * floor_lines[j] >> 32);
		l = bpf_map_lookup_elem(&ref_floor, &i);
		if (l)
			l->w[0]++;
	}
	return XDP_PASS;
}
