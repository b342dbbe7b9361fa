// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The SPIE window's filter, read in user space. See bloom.h. */
#include <math.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloom.h"
#include "hash.h"

double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k)
{
	double blocks = (double)m_bits / BT_BLOCK_BITS, lam = n / blocks, sum = 0;
	double p = exp(-lam), pd[BT_BLOCK_MAX_K / 2 + 1][BT_BLOCK_MAX_K / 2 + 1] = { { 1 } };
	int h = k / 2, top = (int)(lam + 12 * sqrt(lam) + 40);

	/* pd[j][d]: j positions drawn in a 64-bit word are d distinct ones */
	for (int j = 1; j <= h; j++)
		for (int d = 1; d <= j; d++)
			pd[j][d] = pd[j - 1][d] * d / 64 + pd[j - 1][d - 1] * (64 - d + 1) / 64;
	/* P(i other digests in the query's block) * P(the query's bits are
	 * all set | i)^2, a word's: the i others drew h * i positions in it,
	 * and d given bits are all set with probability
	 * sum_j (-1)^j C(d, j) ((64 - j) / 64)^(h i) */
	for (int i = 0; i <= top; i++) {
		double word = 0;

		if (i)
			p *= lam / i;
		for (int d = 1; d <= h; d++) {
			double all = 0, c = 1;

			for (int j = 0; j <= d; j++) {
				all += (j % 2 ? -c : c) * pow((64.0 - j) / 64, (double)h * i);
				c = c * (d - j) / (j + 1);
			}
			word += pd[h][d] * all;
		}
		sum += p * word * word;
	}
	return sum;
}

bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h)
{
	/* the same block and masks as bloom_set() in bpf/spie.bpf.h */
	const struct bt_bloom_block *b = &filter[bt_bloom_block(h, bpw - 1)];
	__u64 m0 = bt_bloom_mask(h, 0, k), m1 = bt_bloom_mask(h, 1, k);

	return (b->w[0] & m0) == m0 && (b->w[1] & m1) == m1;
}

void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr)
{
	double pw[65], sum = 0;
	uint64_t total = 0;

	/* P(k/2 given bits of a word with b bits set are all set) */
	for (int b = 0; b <= 64; b++)
		pw[b] = pow(b / 64.0, k / 2.0);
	for (uint64_t i = 0; i < bpw; i++) {
		int a = __builtin_popcountll(filter[i].w[0]), b = __builtin_popcountll(filter[i].w[1]);

		total += a + b;
		sum += pw[a] * pw[b];
	}
	*set_bits = total;
	*fpr = sum / bpw;
}
