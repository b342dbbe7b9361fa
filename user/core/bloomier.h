/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The watch lists' table: a mutable Bloomier filter (Chazelle et al., SODA
 * 2004) in the binary fuse layout (Graf & Lemire, 2022). include/bloomtap.h
 * "Watch lists" has the cell format; include/hash.h the hash, the cells and
 * the decoding, shared with the datapath. Nothing here touches BPF. */
#ifndef BLOOMTAP_BLOOMIER_H
#define BLOOMTAP_BLOOMIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <endian.h>
#include <string.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "hash.h"

/* A key: prefix length (0..128; IPv4 as 96 + its length) and the address
 * words in host order, masked to it; its class 1..255, or for a marker
 * (watchlpm.h) BT_WATCH_KEY_MARKER and the length of its best match; the
 * builder adds BT_WATCH_KEY_LEAF. */
struct bt_watch_key {
	__u64 hi, lo;
	__u32 len;
	__u32 class_id;
};
#define BT_WATCH_KEY_MARKER BT_WATCH_IS_MARKER
#define BT_WATCH_KEY_LEAF BT_WATCH_IS_LEAF	/* nothing listed under it */

/* A key of IPv4 (v4-mapped words, length 96 + 0..32)? */
static inline bool bt_watch_key_is_v4(const struct bt_watch_key *k)
{
	return k->len >= BT_WATCH_V4 && k->hi == 0 && (k->lo >> 32) == 0xffff;
}

/* Keeps the first len bits of (hi, lo). */
void bt_watch_mask(__u64 *hi, __u64 *lo, __u32 len);
/* The words of a 16-byte address (network order) in host order. */
void bt_watch_words(const uint8_t addr[16], __u64 *hi, __u64 *lo);

/* Cells are 7 bytes, little-endian, 9 in each 64-byte group
 * (include/bloomtap.h): cell i's first byte. */
static inline size_t bt_watch_cell_offset(__u32 i)
{
	__u32 g = bt_watch_group_of(i);

	return (size_t)g * sizeof(struct bt_watch_group) +
	       (i - g * BT_WATCH_GROUP) * BT_WATCH_CELL_BYTES;
}

static inline __u64 bt_watch_cell(const uint8_t *cells, __u32 i)
{
	__u64 v = 0;

	memcpy(&v, cells + bt_watch_cell_offset(i), BT_WATCH_CELL_BYTES);
	return le64toh(v);
}

static inline void bt_watch_cell_set(uint8_t *cells, __u32 i, __u64 v)
{
	v = htole64(v);
	memcpy(cells + bt_watch_cell_offset(i), &v, BT_WATCH_CELL_BYTES);
}

/* The groups that hold n cells. */
static inline size_t bt_watch_cell_groups(__u32 n)
{
	return ((size_t)n + BT_WATCH_GROUP - 1) / BT_WATCH_GROUP;
}

/* Bytes of a table's array: its cells' groups, then IPv4's range lines,
 * their index and the /16 words (watchlpm.h). */
static inline size_t bt_watch_cells_bytes(const struct bt_watch_hdr *h)
{
	return ((size_t)h->groups + h->v4_lines + h->v4_index + h->v4_dir + h->v6_elems) *
	       sizeof(struct bt_watch_group);
}

struct bt_bloomier {
	struct bt_watch_hdr hdr;
	uint8_t *cells;		/* bt_watch_cells_bytes(), malloc'd */
	uint32_t retries;	/* seeds that did not peel */
};

/* The sizes of a table of n keys: segment length, segments, cells. */
void bt_bloomier_size(uint32_t n, struct bt_watch_hdr *h);

/* Builds the table of keys (distinct: no two with the same length and
 * words) with check_bits (1..BT_WATCH_CHECK_BITS); the header's lengths
 * and markers are the caller's (watchlpm.c). seed: the first seed tried;
 * each retry takes the next. 0, or -ENOMEM, or -EAGAIN when no seed of 64
 * peeled (the keys cannot all be distinct). */
int bt_bloomier_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		      unsigned check_bits, uint64_t seed, struct bt_bloomier *out);
void bt_bloomier_free(struct bt_bloomier *b);

/* One probe for one key (an exact length and masked words): 0, or
 * BT_WATCH_HIT | BT_WATCH_IS_MARKER? | its byte (bt_watch_decode). own,
 * when not NULL and the probe hits: the key's own cell. */
__u32 bt_bloomier_probe(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
			const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own);

/* The class of a listed key; 0: none (or a marker). */
__u32 bt_bloomier_get(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
		      const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own);

/* The same, for deciding membership (watch set): all the check bits the
 * cells hold are compared (BT_WATCH_CHECK_BITS), not only the table's
 * --check-bits, so an unlisted key passes with probability 2^-44 whatever
 * the table's rate for addresses. */
__u32 bt_bloomier_member(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
			 const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own);

/* The chance that one probe of a key outside the table answers a listed
 * key (not a marker): 2^-R for the check bits, 1/2 for the marker bit,
 * entries/cells for the byte of the cell the index names. */
double bt_bloomier_probe_fpr(const struct bt_watch_hdr *h);

#endif
