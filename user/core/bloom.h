/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The SPIE window's blocked Bloom filter, read in user space: membership,
 * its fill, and the false-positive rate it is expected to reach. The
 * block and its masks are include/hash.h's, the datapath's own. */
#ifndef BLOOMTAP_BLOOM_H
#define BLOOMTAP_BLOOM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

/* Expected false-positive rate of the blocked filter (128-bit blocks, k/2
 * positions drawn in each word) of m bits holding n digests: Poisson-
 * weighted over the blocks' loads (Putze et al. 2007), exact within a
 * block (inclusion-exclusion over the query's distinct positions: the
 * positions are drawn with replacement). */
double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k);
/* Is digest h in this filter of bpw blocks? */
bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h);
/* Set bits, and the false-positive rate a random query meets, from the
 * filter's actual fill: the mean over blocks of the product over its two
 * words of (fill of the word)^(k/2). */
void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr);

#endif /* BLOOMTAP_BLOOM_H */
