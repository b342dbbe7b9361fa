/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* bloomtap's keyed hashes, compiled into both the XDP program and the tool
 * so that user space computes exactly what the kernel computed: NH with a
 * mixer on the per-packet path and for watch-list keys (below), and
 * SipHash-1-3 where a few calls a second do not count (deriving those keys
 * from the instance's key, the archive's key fingerprint).
 *
 * SipHash-1-3 (Aumasson & Bernstein, 2012; the variant Linux uses for
 * hsiphash on 64-bit): a keyed pseudo-random function, so that without the
 * per-instance 128-bit key nobody can craft flows that collide on purpose in
 * the sketch or the flow memory. Inputs are fixed-size arrays of 64-bit words
 * (the flow key is 5 words), which lets the compiler unroll everything and
 * keeps the verifier's job trivial.
 *
 * The heavy-flow sketch's line and cells come from this one hash
 * (bt_cm_line(), bt_cm_pattern()).
 *
 * Include after the integer types (__u32, __u64) are defined.
 */
#ifndef BLOOMTAP_HASH_H
#define BLOOMTAP_HASH_H

#include "bloomtap.h"	/* the watch table's layout */

struct bt_hash_key {
	__u64 k0;
	__u64 k1;
};

static inline __attribute__((always_inline)) __u64 bt_rotl64(__u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define BT_SIPROUND(v0, v1, v2, v3) do {				\
	v0 += v1; v1 = bt_rotl64(v1, 13); v1 ^= v0; v0 = bt_rotl64(v0, 32); \
	v2 += v3; v3 = bt_rotl64(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = bt_rotl64(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = bt_rotl64(v1, 17); v1 ^= v2; v2 = bt_rotl64(v2, 32); \
} while (0)

/* SipHash-1-3 of nwords 64-bit words (little-endian words, as loaded on
 * x86 and on BPF little-endian targets). */
static inline __attribute__((always_inline))
__u64 bt_siphash13(const struct bt_hash_key *key, const __u64 *w, const int nwords)
{
	__u64 v0 = key->k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = key->k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = key->k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = key->k1 ^ 0x7465646279746573ULL;
	__u64 b = (__u64)(nwords * 8) << 56;
	int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < nwords; i++) {
		v3 ^= w[i];
		BT_SIPROUND(v0, v1, v2, v3);
		v0 ^= w[i];
	}
	v3 ^= b;
	BT_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	BT_SIPROUND(v0, v1, v2, v3);
	BT_SIPROUND(v0, v1, v2, v3);
	BT_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- The per-packet hash: NH, then a mixer ----
 *
 * SipHash-1-3 of the 48-byte SPIE input costs a quarter of the kernel's
 * whole Bloom filter map stage (docs/benchmark.md, the SPIE stage's
 * ablation), so the datapath
 * hashes with NH (Black, Halevi, Krawczyk, Krovetz, Rogaway, "UMAC: Fast
 * and Secure Message Authentication", CRYPTO 1999): for 64-bit words m_i
 * and key words k_i,
 *     NH(m) = sum_i ((lo(m_i) + lo(k_i)) mod 2^32) * ((hi(m_i) + hi(k_i)) mod 2^32)
 * mod 2^64, one multiply a word. For any two distinct inputs of the same
 * length, the probability over the key that they collide is at most 2^-32.
 * The sum, plus a final key word, goes through MurmurHash3's 64-bit
 * finalizer: a bijection, so it adds no collision, and it spreads every
 * input bit over every output bit that the sketch columns, the flow memory
 * slot and the Bloom block and bits are taken from. docs/security.md has the
 * argument and what it assumes (nobody outside sees a hash value).
 *
 * The flow key and the SPIE digest both start with the two addresses
 * (16 bytes each, IPv4 v4-mapped), under the same key words: their sum is
 * computed once a packet and each stage adds its own words and its own
 * final key (one hash pass for both stages). */
#define BT_NH_ADDR_WORDS 4
struct bt_hash_keys {
	__u64 addr[BT_NH_ADDR_WORDS];	/* source and destination address words */
	__u64 flow;		/* the flow key's fifth word: ports, protocol */
	__u64 spie[2];		/* the digest's header word and the 8 bytes after */
	__u64 fin_flow;		/* final keys: one per stage (domain separation) */
	__u64 fin_spie;
	__u64 watch[4];		/* watch-list keys: two NH passes (bt_hash_watch) */
	__u64 spie_more;	/* the digest's UDP payload word (last, so that
				 * the words before derive as the older
				 * archive formats' keys) */
};
#define BT_HASH_KEY_WORDS 14

static inline __attribute__((always_inline)) __u64 bt_nh_word(__u64 m, __u64 k)
{
	__u32 lo = (__u32)m + (__u32)k, hi = (__u32)(m >> 32) + (__u32)(k >> 32);

	return (__u64)lo * hi;
}

/* MurmurHash3's fmix64 (Appleby): full avalanche, invertible. */
static inline __attribute__((always_inline)) __u64 bt_fmix64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The shared part: NH of the four address words (src, dst). */
static inline __attribute__((always_inline))
__u64 bt_hash_addrs(const struct bt_hash_keys *k, const __u64 *w)
{
	return bt_nh_word(w[0], k->addr[0]) + bt_nh_word(w[1], k->addr[1]) +
	       bt_nh_word(w[2], k->addr[2]) + bt_nh_word(w[3], k->addr[3]);
}

/* The flow key's hash from the address part and its fifth word. */
static inline __attribute__((always_inline))
__u64 bt_hash_flow_finish(const struct bt_hash_keys *k, __u64 addrs, __u64 w4)
{
	return bt_fmix64(addrs + bt_nh_word(w4, k->flow) + k->fin_flow);
}

/* The flow key's hash: five words (struct bt_flow_key). */
static inline __attribute__((always_inline))
__u64 bt_hash_flow(const struct bt_hash_keys *k, const __u64 *w)
{
	return bt_hash_flow_finish(k, bt_hash_addrs(k, w), w[4]);
}

/* ---- The SPIE digest: its one definition ----
 *
 * The digest (Snoeren et al., "Hash-Based IP Traceback", SIGCOMM 2001) is
 * this keyed hash of seven 64-bit words (BT_SPIE_WORDS), the parts of a
 * packet no router changes, and no offload either:
 *   words 0-3: source and destination address, 16 bytes each, IPv4
 *              v4-mapped (the flow key's first four words, bt_hash_addrs);
 *   word 4:    hdr, the rest of the header, little-endian as loaded.
 *              IPv4: bytes 0-7 of the header (version and IHL, total
 *              length, ID, flags and fragment offset) with the protocol
 *              in place of TOS; TTL and checksum are left out.
 *              IPv6: bytes 0-7 with traffic class, flow label and hop
 *              limit zeroed (version, payload length, next header stay);
 *   word 5:    after, the first 8 bytes after the whole IP header (IPv4
 *              options skipped; IPv6 extension headers skipped as the
 *              parser walks them, at most 8 (BT_MAX_IPV6_EXT), up to a
 *              fragment header, whose ID and offset are taken then: they
 *              tell one fragment from another), zero-padded past the end
 *              of the IP packet. Ethernet padding is never taken.
 *              UDP (IPv4's protocol 17, not a later fragment; IPv6's
 *              header 17 there): its checksum (bytes 6-7) zeroed, since a
 *              sender's checksum offload leaves a partial one, which a NIC
 *              completes but a veth, a container's link, carries as it is;
 *   word 6:    more, UDP only, in the checksum's stead: the 8 bytes after
 *              the UDP header, zero-padded past the end of the IP packet;
 *              0 for every other packet, and then not hashed at all, so
 *              that every other packet's digest is the one archive
 *              formats 3 to 6 hold.
 * This is the information of SPIE's 28-byte prefix. The words are built
 * by bpf/spie.bpf.h (spie_words; the drop and egress programs the same
 * from a skb), bpf/segments.bpf.h (each segment of a GRO or GSO skb) and
 * user/core/digest.c (from a frame, and the older archive formats'). */
static inline __attribute__((always_inline))
__u64 bt_hash_spie_finish(const struct bt_hash_keys *k, __u64 addrs, __u64 hdr, __u64 after,
			  __u64 more)
{
	__u64 s = addrs + bt_nh_word(hdr, k->spie[0]) + bt_nh_word(after, k->spie[1]) + k->fin_spie;

	if (more)
		s += bt_nh_word(more, k->spie_more);
	return bt_fmix64(s);
}

/* A dropped packet's digest: its SPIE digest h tagged with the kernel's
 * drop reason, so that one window's filter tells "seen" (h) from
 * "dropped with reason r" (bt_hash_drop(h, r)); fmix64 is a bijection, so
 * no two reasons of one packet share a digest. */
#define BT_DROP_TAG 0x64726f7000000000ULL	/* "drop" */
/* The reason of a drop's first digest, "dropped" whatever the reason: a
 * query probes it first and each reason only when it is there, so that a
 * packet never dropped is called dropped at f (1 - (1 - f)^R), not at
 * 1 - (1 - f)^R, for R reasons tried (user/report/trace_query.c). No reason's code. */
#define BT_DROP_ANY 0xffffffffU
/* A third digest for a drop in a workload's namespace (a drop_shared
 * device of BT_SHARED_WORKLOAD's, its digest seen by the instance), so
 * that trace can say in which workload it died. No reason's code. */
#define BT_DROP_IN_WORKLOAD 0xfffffffeU
static inline __attribute__((always_inline)) __u64 bt_hash_drop(__u64 h, __u32 reason)
{
	return bt_fmix64(h ^ (BT_DROP_TAG | reason));
}

/* A sent packet's digest (tc egress): its SPIE digest h tagged, so that a
 * window tells "left here" from "seen here" (received) for one packet. */
#define BT_SENT_TAG 0x73656e7400000000ULL	/* "sent" */
static inline __attribute__((always_inline)) __u64 bt_hash_sent(__u64 h)
{
	return bt_fmix64(h ^ BT_SENT_TAG);
}

/* The heavy-flow sketch's line of a flow (include/bloomtap.h): the hash's
 * low bits; lmask = lines - 1. */
static inline __attribute__((always_inline))
__u32 bt_cm_line(__u64 h, __u32 lmask)
{
	return (__u32)h & lmask;
}

/* The flow's cells in its line: one of the C(10, d) sets of d distinct
 * cells (user/instance/sketch.c, bt_cm_patterns(): each a cell in 4 bits,
 * counter i's in bits 4i up), chosen by bits 22..37 of the hash,
 * multiply-shift to npat. Two flows of one line then share all d cells
 * with probability 1 / C(10, d) (1/210 at d = 4). The line's bits are
 * below 22 (at most 2^22 lines), the flow memory's from 40. */
static inline __attribute__((always_inline))
__u32 bt_cm_pattern(__u64 h, __u32 npat)
{
	return (__u32)((((h >> 22) & 0xffff) * npat) >> 16);
}

/* Counter i's cell, 0..9; 4 bits, so at most 15 to the verifier, which
 * the spare line after the sketch's last keeps inside the value
 * (bt_cm_value_lines()) */
static inline __attribute__((always_inline))
__u32 bt_cm_cell(__u32 pattern, __u32 i)
{
	return (pattern >> (4 * i)) & 15;
}

/* ---- The SPIE block: one cache line, k positions in it ----
 *
 * A filter sized at 120 bits a packet with k = 4 sets 3 % of its bits:
 * sparse, and compressed to near its entropy (user/core/gapcode.c) it
 * stores about the bits a packet that 32 bits a packet at k = 8 did, and
 * answers falsely 30 times less often (Mitzenmacher 2002, "Compressed
 * Bloom filters"; docs/traceback.md). The 512-bit block keeps the probe
 * to one line (Putze, Sanders & Singler 2007). Bits 0..35 of the digest
 * give up to four 9-bit positions in the block, bits 36..63 the block:
 * windows of up to 2^28 blocks (16 GiB). */
#define BT_BLOCK_MAX_K 4
#define BT_BLOCK_POS_BITS 9
#define BT_BLOCK_SHIFT (BT_BLOCK_MAX_K * BT_BLOCK_POS_BITS)

/* Position i (< k) of the digest in its block: word (pos >> 6), bit (pos & 63). */
static inline __attribute__((always_inline))
__u32 bt_bloom_pos(__u64 h, __u32 i)
{
	return (h >> (BT_BLOCK_POS_BITS * i)) & (BT_BLOCK_BITS - 1);
}

/* Whether inserting digest h checks its bits first (BT_CTR_SPIE_PRESENT's
 * sample): by the digest, so every copy of a packet is sampled alike (a
 * count's phase would meet periodic traffic, A A B B ... always on one
 * copy), and by its top bits, which pick no position in the block */
static inline __attribute__((always_inline))
int bt_present_sampled(__u64 h)
{
	return !(h >> (64 - BT_PRESENT_SAMPLE_BITS));
}

/* Are the digest's k positions all set in its block b? 1 or 0: the
 * datapath's probe (bpf/drop.bpf.h) and user space's (user/core/bloom.c).
 * The word index is masked for the verifier. */
static inline __attribute__((always_inline))
int bt_bloom_block_has(const struct bt_bloom_block *b, __u32 k, __u64 h)
{
	__u32 i;

	for (i = 0; i < BT_BLOCK_MAX_K && i < k; i++) {
		__u32 pos = bt_bloom_pos(h, i);

		if (!(b->w[(pos >> 6) & (BT_BLOCK_WORDS - 1)] & (1ULL << (pos & 63))))
			return 0;
	}
	return 1;
}

/* The digest's block in a window of (block_mask + 1) blocks, at most 2^28. */
static inline __attribute__((always_inline))
__u32 bt_bloom_block(__u64 h, __u32 block_mask)
{
	return (__u32)(h >> BT_BLOCK_SHIFT) & block_mask;
}

/* ---- Watch lists ----
 *
 * A table holds up to millions of keys, and two that hash alike share all
 * four cells: no peeling separates them. One NH pass collides with
 * probability 2^-32 a pair (a hundred pairs in a million keys), so the key
 * (prefix length, address words in host order, masked) goes through two
 * passes, the second with the key words shifted by one (UMAC's Toeplitz
 * extension: 2^-64 a pair), mixed with the table's seed. */
static inline __attribute__((always_inline))
__u64 bt_hash_watch(const struct bt_hash_keys *k, __u64 seed, __u64 hi, __u64 lo, __u64 len)
{
	__u64 a = bt_nh_word(hi, k->watch[0]) + bt_nh_word(lo, k->watch[1]) +
		  bt_nh_word(len, k->watch[2]);
	__u64 b = bt_nh_word(hi, k->watch[1]) + bt_nh_word(lo, k->watch[2]) +
		  bt_nh_word(len, k->watch[3]);

	return bt_fmix64(a ^ bt_fmix64(b + seed));
}

#define BT_WATCH_WAYS 4		/* cells a key (include/bloomtap.h) */

/* The group (array element) of cell i: i / BT_WATCH_GROUP as a multiply
 * and shift, exact for every u32 (division by 9's magic number; checked
 * for all 2^32). The BPF backend emits a division, which the x86 JIT makes
 * a DIV: four a probe, a tenth of an IPv6 lookup's time (docs/benchmark.md). */
static inline __attribute__((always_inline)) __u32 bt_watch_group_of(__u32 i)
{
	_Static_assert(BT_WATCH_GROUP == 9, "the magic number is 9's");
	return (__u32)((__u64)i * 0x38e38e39ULL >> 33);
}

/* The key's four cells (binary fuse layout): the first anywhere in the
 * first seg_count_len cells, the others one, two and three segments on,
 * moved inside their segment by other bits of the hash (the last by a
 * product's top bits, bits of h the others do not use). */
static inline __attribute__((always_inline))
void bt_watch_cells(__u64 h, __u32 seg_len, __u32 seg_count_len, __u32 c[BT_WATCH_WAYS])
{
	__u32 p = ((h >> 32) * seg_count_len) >> 32, m = seg_len - 1;

	c[0] = p;
	c[1] = (p + seg_len) ^ ((h >> 18) & m);
	c[2] = (p + 2 * seg_len) ^ (h & m);
	c[3] = (p + 3 * seg_len) ^ ((__u32)((h * 0xbf58476d1ce4e5b9ULL) >> 40) & m);
}

/* The key's fingerprint, 48 bits, in the cells' XOR part (bits 8..55). */
#define BT_WATCH_XOR_MASK 0x00ffffffffffff00ULL
static inline __attribute__((always_inline)) __u64 bt_watch_fingerprint(__u64 h)
{
	return bt_fmix64(h ^ 0x9e3779b97f4a7c15ULL) & BT_WATCH_XOR_MASK;
}

/* A probe's answer from the key's four cells: 0, none; or BT_WATCH_HIT,
 * with BT_WATCH_IS_MARKER for a marker, BT_WATCH_IS_LEAF for a key with
 * nothing listed under it, and the key's byte (a class; a marker's best
 * match length). The low 2 bits of the XOR part name the key's own cell,
 * all four values meaningful; its top two bits are the marker and leaf
 * bits, outside the check bits. */
#define BT_WATCH_IS_MARKER 0x100
#define BT_WATCH_HIT 0x200
#define BT_WATCH_IS_LEAF 0x400
static inline __attribute__((always_inline))
__u32 bt_watch_decode(const __u64 x[BT_WATCH_WAYS], __u64 h, __u64 check_mask)
{
	__u64 v = ((x[0] ^ x[1] ^ x[2] ^ x[3] ^ bt_watch_fingerprint(h)) & BT_WATCH_XOR_MASK) >> 8;

	if (v & check_mask)
		return 0;
	return BT_WATCH_HIT | ((__u32)(v >> (BT_WATCH_MARKER_BIT - 8)) & BT_WATCH_IS_MARKER) |
	       ((__u32)(v >> (BT_WATCH_LEAF_BIT - 10)) & BT_WATCH_IS_LEAF) | (__u32)(x[v & 3] & 0xff);
}

/* ---- IPv4's ranges (include/bloomtap.h "Watch lists") ---- */

/* A wide /16's guessed line (lines lo..hi, BT_WATCH_R_INDEX and more): the
 * line of address a16 were its ranges even; and the lines around it that
 * the search keeps when the index says the address is among them. */
static inline __attribute__((always_inline))
__u32 bt_watch_r_guess(__u32 lo, __u32 hi, __u32 a16, __u32 *wlo, __u32 *whi)
{
	__u32 g = lo + (__u32)(((__u64)a16 * (hi - lo + 1)) >> 16);

	*wlo = g - lo > BT_WATCH_R_INDEX / 2 ? g - BT_WATCH_R_INDEX / 2 : lo;
	*whi = hi - *wlo > BT_WATCH_R_INDEX ? *wlo + BT_WATCH_R_INDEX : hi;
	return g;
}

/* How many ranges of a /16 (entries first..first+n-1 of the range array)
 * in line w (entries pos0..pos0+15) start at or below the address (key:
 * BT_WATCH_R_KEY): the answer is the last of them. Branch-free: the line
 * is one cache line, read whole. */
static inline __attribute__((always_inline))
__u32 bt_watch_r_count(const __u32 *w, __u32 key, __u32 pos0, __u32 first, __u32 n)
{
	__u32 c = 0;

	for (int j = 0; j < BT_WATCH_R_LINE; j++) {
		__u64 in = (__u64)(__u32)(pos0 + j - first) - n;	/* < 0: the /16's */
		__u64 le = (__u64)w[j] - key - 1;			/* < 0: at or below */

#ifdef __bpf__
		/* the signs kept as arithmetic: clang makes them comparisons,
		 * branches, and the verifier walks 2^16 paths a line */
		asm volatile("" : "+r"(in), "+r"(le));
#endif
		c += (__u32)((in & le) >> 63);
	}
	return c;
}

/* ---- IPv6's range tree (include/bloomtap.h) ---- */

/* How many of the n sorted first addresses s are at or below a: a node's
 * child, a leaf's range (the last of them). Branch-free, as the IPv4
 * line's: x <= a unless a - x borrows (Hacker's Delight, 2-13). */
static inline __attribute__((always_inline))
__u32 bt_watch_t_count(const __u64 *s, __u32 n, __u64 a)
{
	__u32 c = n;

	for (__u32 j = 0; j < n; j++) {
		__u64 borrow = (~a & s[j]) | (~(a ^ s[j]) & (a - s[j]));

#ifdef __bpf__
		asm volatile("" : "+r"(borrow));
#endif
		c -= (__u32)(borrow >> 63);
	}
	return c;
}

/* Child x of a level of n nodes, or its last when x is past them (the
 * tree's right edge). No branch: in the datapath, one a level and address
 * would double the verifier's paths each time. */
static inline __attribute__((always_inline)) __u32 bt_watch_t_clamp(__u32 x, __u32 n)
{
	__u64 d = (__u64)n - 1 - x;	/* < 0: past the last */

#ifdef __bpf__
	asm volatile("" : "+r"(d));
#endif
	return x + (__u32)(d & (__u64)((__s64)d >> 63));
}

/* The range of leaf g that holds address a (at or above the leaf's first
 * address): its index; past the leaf's ranges when none does (a leaf the
 * descent did not lead to). */
static inline __attribute__((always_inline))
__u32 bt_watch_t_range(const struct bt_watch_group *g, __u64 a)
{
	__u64 off = a - g->tc.base;
	__u32 c = 0;

	if (!g->tc.compact)
		return bt_watch_t_count(g->t.s, BT_WATCH_T_LEAF, a) - 1;
	if (a < g->tc.base)
		return BT_WATCH_T_COMPACT;
	if (off > 0xffffffffULL)
		off = 0xffffffffULL;	/* past them all */
	for (__u32 j = 0; j < BT_WATCH_T_COMPACT - 1; j++) {
		__u64 le = (__u64)g->tc.d[j] - off - 1;	/* < 0: at or below */

#ifdef __bpf__
		asm volatile("" : "+r"(le));
#endif
		c += (__u32)(le >> 63);
	}
	return c;
}

/* Range r's answer in leaf g (best match's length << 8 | class); none
 * past its ranges. */
static inline __attribute__((always_inline))
__u32 bt_watch_t_answer(const struct bt_watch_group *g, __u32 r)
{
	if (g->tc.compact)
		return r < BT_WATCH_T_COMPACT ? g->tc.e[r] : BT_WATCH_NONE << 8;
	return r < BT_WATCH_T_LEAF ? g->t.e[r] : BT_WATCH_NONE << 8;
}

/* Segment i of the segs that TSO, GSO or GRO cut a merged TCP or UDP
 * packet into, gso payload bytes each but the last (payload bytes in
 * all): its payload bytes, IPv4 ID (fixed: SKB_GSO_TCP_FIXEDID, where
 * every segment keeps the first's) and TCP sequence number, as
 * net/ipv4/tcp_offload.c and udp_offload.c set them: bpf/segments.bpf.h
 * digests a sent TSO skb's and a dropped GRO skb's segments with them,
 * user/core/segments.c a capture's merged buffer's. */
static inline __attribute__((always_inline))
__u32 bt_seg_payload(__u32 i, __u32 segs, __u32 gso, __u32 payload)
{
	return i + 1 < segs ? gso : payload - (segs - 1) * gso;
}

static inline __attribute__((always_inline)) __u16 bt_seg_id(__u16 id0, __u32 i, int fixed)
{
	return fixed ? id0 : (__u16)(id0 + i);
}

static inline __attribute__((always_inline)) __u32 bt_seg_seq(__u32 seq0, __u32 i, __u32 gso)
{
	return seq0 + i * gso;
}

#endif /* BLOOMTAP_HASH_H */
