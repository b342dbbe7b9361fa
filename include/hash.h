/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one keyed hash of bloomtap, compiled into both the XDP program and the
 * tool so that user space computes exactly what the kernel computed.
 *
 * SipHash-1-3 (Aumasson & Bernstein, 2012; the variant Linux uses for
 * hsiphash on 64-bit): a keyed pseudo-random function, so that without the
 * per-instance 128-bit key nobody can craft flows that collide on purpose in
 * the sketch or the flow memory. Inputs are fixed-size arrays of 64-bit words
 * (the flow key is 5 words), which lets the compiler unroll everything and
 * keeps the verifier's job trivial.
 *
 * Rows of the count-min sketch come from this one hash by Kirsch and
 * Mitzenmacher's double hashing (2006): g_i = h1 + i * h2.
 *
 * Include after the integer types (__u32, __u64) are defined.
 */
#ifndef BLOOMTAP_HASH_H
#define BLOOMTAP_HASH_H

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

/* Column of row `row` in a sketch of width wmask + 1 (a power of two). */
static inline __attribute__((always_inline))
__u32 bt_sketch_col(__u64 h, __u32 row, __u32 wmask)
{
	__u32 h1 = (__u32)h, h2 = (__u32)(h >> 32) | 1;	/* odd: visits all */

	return (h1 + row * h2) & wmask;
}

/* Blocked Bloom filter positions. The block is the digest's low bits; the
 * k bit positions inside the 512-bit block are the top 9 bits of successive
 * steps of a 64-bit LCG (Knuth's MMIX constants) seeded with the digest.
 * Double hashing (a + i*b) inside so small a block measured a false-positive
 * rate 4 times the formula: patterns that are shifts of one another share
 * k-1 bits. */
static inline __attribute__((always_inline)) __u64 bt_bloom_step(__u64 x)
{
	return x * 6364136223846793005ULL + 1442695040888963407ULL;
}

static inline __attribute__((always_inline)) __u32 bt_bloom_pos(__u64 x)
{
	return x >> 55;
}

#endif /* BLOOMTAP_HASH_H */
