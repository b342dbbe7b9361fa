/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The SPIE window's blocked Bloom filter, read in user space: membership,
 * its fill, and the false-positive rate it is expected to reach. The
 * block and its positions are include/hash.h's, the datapath's own; the
 * 128-bit blocks of archive formats 3 to 9 are read here too. */
#ifndef BLOOMTAP_BLOOM_H
#define BLOOMTAP_BLOOM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

/* Archive formats 3 to 9: two 64-bit words a block, k/2 bits in each, k even. */
#define BT_LEGACY_BLOCK_BITS 128
#define BT_LEGACY_MAX_K 8

/* Expected false-positive rate of a blocked filter of m bits holding n
 * digests, with blocks of block_bits (BT_BLOCK_BITS, or
 * BT_LEGACY_BLOCK_BITS): Poisson-weighted over the blocks' loads (Putze et
 * al. 2007), exact within a block (inclusion-exclusion over the query's
 * distinct positions: the positions are drawn with replacement). */
double bt_bloom_fpr_layout(uint32_t block_bits, uint64_t m_bits, uint64_t n, uint32_t k);
/* The same for the datapath's blocks. */
double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k);
/* Is digest h in this filter of bpw blocks (include/hash.h's probe)? */
bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h);
/* Adds h as the datapath does (tests and tools). */
void bt_bloom_add(struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h);
/* Set bits, and the false-positive rate a random query meets, from the
 * filter's actual fill: the mean over blocks of (fill of the block)^k. */
void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr);
/* Formats 3 to 9: word `word` (0, 1) of the digest's mask, and its block. */
__u64 bt_bloom_legacy_mask(__u64 h, __u32 word, __u32 k);
__u32 bt_bloom_legacy_block(__u64 h, __u32 block_mask);

#endif /* BLOOMTAP_BLOOM_H */
