/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Longest-prefix match over the watch table: IPv4's range table (/16
 * words, ranges and their index), IPv6's prefixes and their markers in
 * one Bloomier table with the binary search on prefix lengths, as the
 * datapath runs them (include/bloomtap.h "Watch lists"). Nothing here
 * touches BPF. */
#ifndef BLOOMTAP_WATCHLPM_H
#define BLOOMTAP_WATCHLPM_H

#include "bloomier.h"

/* A table as the lookup reads it: a slot of an instance, or a build. */
struct bt_watch_view {
	const struct bt_watch_hdr *hdr;
	const uint8_t *cells;
	const __u64 *dir;	/* BT_WATCH_DIR words, IPv4 /16 by /16; NULL:
				 * no IPv4 key */
};

struct bt_watch_built {
	struct bt_bloomier b;	/* prefixes and markers, the lengths in b.hdr;
				 * b.cells holds IPv4's after the cells */
	__u64 *dir;		/* BT_WATCH_DIR words, malloc'd (copied into
				 * b.cells, after the index) */
	__u32 *nodes;		/* IPv4's range lines, then their index */
	struct bt_watch_group *tree;	/* IPv6's range tree (BT_WATCH_F_V6_TREE),
					 * malloc'd, copied into b.cells last */
	size_t lines, index, ranges;
	__u32 levels;		/* the most an IPv4 address reads: index
				 * entries and a line */
	size_t markers[2];	/* IPv4's, IPv6's */
};

/* bt_watch_build's choice of IPv6's lookup (beside BT_WATCH_F_FLAT): the
 * range tree whenever the list's IPv6 prefixes are all /64 or shorter,
 * or never (by default, the tree when it takes no more memory). */
#define BT_WATCH_B_V6_TREE 0x100
#define BT_WATCH_B_V6_SEARCH 0x200

/* Builds the table of a list's keys (distinct, class 1..255 each): IPv4's
 * ranges, IPv6's markers and the Bloomier table of IPv6's keys and
 * markers (bt_bloomier_build's check_bits, seed and errors; -E2BIG past
 * 2^32 ranges). flags:
 * BT_WATCH_F_* (0 but for make bench's ablation: IPv4 in the Bloomier
 * table too). */
int bt_watch_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		   unsigned check_bits, uint64_t seed, unsigned flags, struct bt_watch_built *out);
void bt_watch_built_free(struct bt_watch_built *w);

/* The /16 words in a table's array (cells); NULL when the list has no
 * IPv4 key. */
static inline __u64 *bt_watch_dir_of(const struct bt_watch_hdr *h, uint8_t *cells)
{
	size_t at = ((size_t)h->groups + h->v4_lines + h->v4_index) * sizeof(struct bt_watch_group);

	return h->v4_dir && cells ? (__u64 *)(cells + at) : NULL;
}

static inline struct bt_watch_view bt_watch_built_view(const struct bt_watch_built *w)
{
	return (struct bt_watch_view){ &w->b.hdr, w->b.cells,
				       bt_watch_dir_of(&w->b.hdr, w->b.cells) };
}

/* Bits an entry of the list: the table's array (cells, ranges, index and
 * /16 words) over the entries. */
static inline double bt_watch_bits_per_entry(const struct bt_watch_hdr *h)
{
	return h->entries ? 8.0 * bt_watch_cells_bytes(h) / h->entries : 0;
}

/* The levels of a balanced tree of n lengths: floor(log2 n) + 1. */
static inline __u32 bt_watch_levels(__u32 n)
{
	return n ? 32 - __builtin_clz(n) : 0;
}

/* How a lookup went: the length of the prefix that answered, the probes
 * of the table it took. */
struct bt_watch_how {
	__u32 len;
	__u32 probes;
};

/* The class of an address (v4-mapped when v4) as the datapath finds it;
 * 0: none. how may be NULL; its probes are, for IPv4, the index entries
 * and the line read. */
__u32 bt_watch_classify(const struct bt_hash_keys *k, const struct bt_watch_view *v,
			const uint8_t addr[16], bool v4, struct bt_watch_how *how);

/* watch set for an IPv6 prefix hi/len (masked; len at most
 * BT_WATCH_T_MAX_LEN) in the range tree, as bt_watch_v4_set: each change
 * one 16-bit store. */
size_t bt_watch_v6_set(const struct bt_watch_hdr *h, uint8_t *cells, __u64 hi, __u32 len,
		       int cls, __u32 *old);

/* watch set for an IPv4 prefix a/len (host order, IPv4 length) in the
 * range table (dir and cells writable, in use: each change one 32-bit
 * store): the ranges and /16s whose best match it is take class cls
 * (below 0: none changed, only found); old, the class they had. Returns
 * how many; 0: the prefix is not a key, or longer keys cover all of it. */
size_t bt_watch_v4_set(const struct bt_watch_hdr *h, __u64 *dir, uint8_t *cells, __u32 a,
		       __u32 len, int cls, __u32 *old);

#endif
