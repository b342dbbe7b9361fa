/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Watch lists: each IP packet's source and destination looked up in the
 * table in use (include/bloomtap.h "Watch lists"), longest prefix length of
 * the address's family first, and counted per class and direction. With no
 * table (the default) a packet costs two array lookups. */
#ifndef BLOOMTAP_WATCH_BPF_H
#define BLOOMTAP_WATCH_BPF_H

#include "maps.bpf.h"
#include "hash.h"

/* Cell i: 7 bytes of element i / 8, little-endian (three loads: a wider
 * one would read past the element for its last cell). */
static __always_inline __u64 cell_at(void *cells, __u32 i)
{
	__u32 g = i / BT_WATCH_GROUP, off = (i % BT_WATCH_GROUP) * BT_WATCH_CELL_BYTES;
	struct bt_watch_group *p = bpf_map_lookup_elem(cells, &g);

	if (!p)
		return 0;
	return *(__u32 *)&p->b[off] | (__u64)*(__u16 *)&p->b[off + 4] << 32 |
	       (__u64)p->b[off + 6] << 48;
}

/* The class of an address, as host-order words (v4-mapped for IPv4), in
 * the table of slot; 0: none. A global function: the verifier checks its
 * loop once, not at each call with the whole program's states around it
 * (inlined twice, it passed the verifier's million instructions). */
__noinline int watch_class(__u32 slot, __u64 hi, __u64 lo, __u32 fam,
			   const struct bt_hash_keys *k)
{
	struct bt_watch_hdr *h;
	void *cells;
	__u32 n, i;

	slot &= 1;
	h = bpf_map_lookup_elem(&watch_hdr, &slot);
	cells = bpf_map_lookup_elem(&watch_cells, &slot);
	if (!h || !cells || !k)
		return 0;
	n = h->nlen[fam & 1];
	for (i = 0; i < BT_WATCH_LENGTHS; i++) {
		__u32 len, c[BT_WATCH_WAYS], cls;
		__u64 mh = hi, ml = lo, x, v[BT_WATCH_WAYS];

		if (i >= n)
			break;
		len = h->len[fam & 1][i];
		/* the first len bits (bt_watch_mask) */
		if (len < 64) {
			ml = 0;
			mh = len ? mh & (~0ULL << (64 - len)) : 0;
		} else if (len < 128) {
			ml = len == 64 ? 0 : ml & (~0ULL << (128 - len));
		}
		x = bt_hash_watch(k, h->seed, mh, ml, len);
		bt_watch_cells(x, h->seg_len, h->seg_count_len, c);
		v[0] = cell_at(cells, c[0]);
		v[1] = cell_at(cells, c[1]);
		v[2] = cell_at(cells, c[2]);
		v[3] = cell_at(cells, c[3]);
		cls = bt_watch_decode(v, x, h->check_mask);
		if (cls)
			return cls;
	}
	return 0;
}

/* One rule for the datapath, lists and reports: an address's family is its
 * form. A v4-mapped address (::ffff:a.b.c.d, as an IPv6 packet may carry)
 * is the IPv4 address a.b.c.d, whichever layer 3 carried it; user space
 * (bt_addr_is_v4) names classes the same way. */
static __always_inline __u32 addr_family(__u64 hi, __u64 lo)
{
	return !(hi == 0 && (lo >> 32) == 0xffff);	/* 0: IPv4, 1: IPv6 */
}

static __always_inline void watch_count(const struct pkt_info *pi, const struct bt_ctl *c,
					const struct bt_hash_keys *k, __u64 bytes)
{
	__u32 slot = c->watch & 1, dir;
	struct bt_watch_hdr *h = bpf_map_lookup_elem(&watch_hdr, &slot);

	if (!h || !h->keys)
		return;
	for (dir = 0; dir < 2; dir++) {
		const __u8 *a = dir ? pi->key.dst : pi->key.src;
		__u64 hi = __builtin_bswap64(*(const __u64 *)a);
		__u64 lo = __builtin_bswap64(*(const __u64 *)(a + 8));
		__u32 cls = watch_class(slot, hi, lo, addr_family(hi, lo), k);
		struct bt_watch_count *n;

		if (!cls || !(n = bpf_map_lookup_elem(&watch_counts, &cls)))
			continue;
		n->packets[dir]++;
		n->bytes[dir] += bytes;
	}
}

#endif /* BLOOMTAP_WATCH_BPF_H */
