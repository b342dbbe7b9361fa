/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Longest-prefix match over the watch table: the list's prefixes and their
 * markers in one Bloomier table, the IPv4 /16 words beside it, and the
 * binary search on prefix lengths that the datapath also runs
 * (include/bloomtap.h "Watch lists"). Nothing here touches BPF. */
#ifndef BLOOMTAP_WATCHLPM_H
#define BLOOMTAP_WATCHLPM_H

#include "bloomier.h"

/* A table as the lookup reads it: a slot of an instance, or a build. */
struct bt_watch_view {
	const struct bt_watch_hdr *hdr;
	const uint8_t *cells;
	const __u32 *dir;	/* BT_WATCH_DIR words, IPv4 /16 by /16 */
};

struct bt_watch_built {
	struct bt_bloomier b;	/* prefixes and markers; the lengths in b.hdr */
	__u32 *dir;		/* BT_WATCH_DIR words, malloc'd */
	size_t markers[2];	/* IPv4's, IPv6's */
};

/* Builds the table of a list's keys (distinct, class 1..255 each): their
 * markers, the /16 words, the Bloomier table of both (bt_bloomier_build's
 * check_bits, seed and errors). flags: BT_WATCH_F_* (0 but for make
 * bench's ablation). */
int bt_watch_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		   unsigned check_bits, uint64_t seed, unsigned flags, struct bt_watch_built *out);
void bt_watch_built_free(struct bt_watch_built *w);

static inline struct bt_watch_view bt_watch_built_view(const struct bt_watch_built *w)
{
	return (struct bt_watch_view){ &w->b.hdr, w->b.cells, w->dir };
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
 * 0: none. how may be NULL. */
__u32 bt_watch_classify(const struct bt_hash_keys *k, const struct bt_watch_view *v,
			const uint8_t addr[16], bool v4, struct bt_watch_how *how);

#endif
