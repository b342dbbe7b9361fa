// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The SPIE window's filter, read in user space. See bloom.h. */
#include <math.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloom.h"
#include "hash.h"

/* A block's parts: formats 3 to 9 drew k/2 positions in each of two 64-bit
 * words; a one-line block draws k positions in 512 bits. */
struct block_parts {
	int parts, bits, per_part;
};

static struct block_parts parts_of(uint32_t block_bits, uint32_t k)
{
	if (block_bits == BT_LEGACY_BLOCK_BITS)
		return (struct block_parts){ 2, 64, k / 2 };
	return (struct block_parts){ 1, (int)block_bits, (int)k };
}

double bt_bloom_fpr_layout(uint32_t block_bits, uint64_t m_bits, uint64_t n, uint32_t k)
{
	struct block_parts bp = parts_of(block_bits, k);
	double lam = n / ((double)m_bits / block_bits), p = exp(-lam), sum = 0, w = bp.bits;
	double pd[BT_LEGACY_MAX_K + 1][BT_LEGACY_MAX_K + 1] = { { 1 } };
	int h = bp.per_part, top = (int)(lam + 12 * sqrt(lam) + 40);

	if (h > BT_LEGACY_MAX_K)
		return 1;
	/* pd[j][d]: j positions drawn in a part of w bits are d distinct ones */
	for (int j = 1; j <= h; j++)
		for (int d = 1; d <= j; d++)
			pd[j][d] = pd[j - 1][d] * d / w + pd[j - 1][d - 1] * (w - d + 1) / w;
	/* P(i other digests in the query's block) * P(the query's bits of a
	 * part are all set | i)^parts: the i others drew h * i positions in
	 * it, and d given bits are all set with probability
	 * sum_j (-1)^j C(d, j) ((w - j) / w)^(h i) */
	for (int i = 0; i <= top; i++) {
		double part = 0;

		if (i)
			p *= lam / i;
		for (int d = 1; d <= h; d++) {
			double all = 0, c = 1;

			for (int j = 0; j <= d; j++) {
				all += (j % 2 ? -c : c) * pow((w - j) / w, (double)h * i);
				c = c * (d - j) / (j + 1);
			}
			part += pd[h][d] * all;
		}
		sum += p * pow(part, bp.parts);
	}
	return sum;
}

double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k)
{
	return bt_bloom_fpr_layout(BT_BLOCK_BITS, m_bits, n, k);
}

bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h)
{
	return bt_bloom_block_has(&filter[bt_bloom_block(h, bpw - 1)], k, h);
}

void bt_bloom_add(struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h)
{
	struct bt_bloom_block *b = &filter[bt_bloom_block(h, bpw - 1)];

	for (uint32_t i = 0; i < k && i < BT_BLOCK_MAX_K; i++) {
		__u32 pos = bt_bloom_pos(h, i);

		b->w[pos >> 6] |= 1ULL << (pos & 63);
	}
}

void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr)
{
	double pw[BT_BLOCK_BITS + 1], sum = 0;
	uint64_t total = 0;

	/* P(k given positions of a block with b bits set are all set) */
	for (int b = 0; b <= BT_BLOCK_BITS; b++)
		pw[b] = pow((double)b / BT_BLOCK_BITS, k);
	for (uint64_t i = 0; i < bpw; i++) {
		int a = 0;

		for (int j = 0; j < BT_BLOCK_WORDS; j++)
			a += __builtin_popcountll(filter[i].w[j]);
		total += a;
		sum += pw[a];
	}
	*set_bits = total;
	*fpr = sum / bpw;
}

/* Formats 3 to 9: k/2 6-bit fields in each word of the 128-bit block from
 * bits 0..47, the block from bits 48 up (and, for windows of more than
 * 2^16 blocks, a multiply of the digest the rest). */
__u64 bt_bloom_legacy_mask(__u64 h, __u32 word, __u32 k)
{
	__u64 x = h >> (word * 24), m = 0;

	for (__u32 i = 0; i < k / 2 && i < BT_LEGACY_MAX_K / 2; i++)
		m |= 1ULL << ((x >> (6 * i)) & 63);
	return m;
}

__u32 bt_bloom_legacy_block(__u64 h, __u32 block_mask)
{
	__u64 b = h >> 48;

	if (block_mask >> 16)
		b |= (h * 0x9e3779b97f4a7c15ULL) >> 48 << 16;
	return b & block_mask;
}
