/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Watch lists: each IP packet's source and destination looked up in the
 * table in use (include/bloomtap.h "Watch lists"): an IPv4 address in the
 * ranges of its /16, an IPv6 address by binary search on the
 * family's prefix lengths; counted per class and direction. With no table
 * (the default) a packet costs two array lookups. */
#ifndef BLOOMTAP_WATCH_BPF_H
#define BLOOMTAP_WATCH_BPF_H

#include "maps.bpf.h"
#include "hash.h"

/* n packets of bytes counted for side (0: source, 1: destination) in the
 * per-CPU count at key of map (watch_counts, wl_counts): plain adds, each
 * CPU its own. */
static __always_inline void count_side(void *map, __u32 key, __u32 side, __u32 n, __u64 bytes)
{
	struct bt_watch_count *x = bpf_map_lookup_elem(map, &key);

	if (!x)
		return;
	x->packets[side] += n;
	x->bytes[side] += bytes;
}

/* Element g of the table of slot: its chunk, then the element in it; both
 * lookups inlined (include/bloomtap.h: chunks of one size). NULL past the
 * slot's chunks. */
static __always_inline struct bt_watch_group *watch_elem(__u32 slot, __u32 g)
{
	__u32 x = BT_WATCH_CHUNK_KEY(slot & 1, g >> BT_WATCH_CHUNK_SHIFT);
	__u32 e = g & (BT_WATCH_CHUNK - 1);
	void *chunk;

	if (g >> BT_WATCH_CHUNK_SHIFT >= BT_WATCH_CHUNKS)
		return NULL;
	chunk = bpf_map_lookup_elem(&watch_cells, &x);
	return chunk ? bpf_map_lookup_elem(chunk, &e) : NULL;
}

/* Cell i: 7 bytes of element i / 9, little-endian (three loads: a wider
 * one would read past the cell). */
static __always_inline __u64 cell_at(__u32 slot, __u32 i)
{
	__u32 g = bt_watch_group_of(i), r = i - g * BT_WATCH_GROUP, off;
	struct bt_watch_group *p = watch_elem(slot, g);

	/* the remainder checked as the verifier sees it (it cannot bound
	 * i - g * 9) */
	asm volatile("" : "+r"(r));
	if (!p || r >= BT_WATCH_GROUP)
		return 0;
	off = r * BT_WATCH_CELL_BYTES;
	return *(__u32 *)&p->b[off] | (__u64)*(__u16 *)&p->b[off + 4] << 32 |
	       (__u64)p->b[off + 6] << 48;
}

/* One probe of the table of slot: the answer (bt_watch_decode) for the
 * first len bits of the address (bt_watch_mask). */
static __always_inline __u32 watch_probe(__u32 slot, __u64 hi, __u64 lo, __u32 len,
					 const struct bt_hash_keys *k)
{
	__u32 c[BT_WATCH_WAYS];
	__u64 x, v[BT_WATCH_WAYS];
	struct bt_watch_hdr *h;

	slot &= 1;
	h = bpf_map_lookup_elem(&watch_hdr, &slot);
	if (!h || !k)
		return 0;
	if (len < 64) {
		lo = 0;
		hi = len ? hi & (~0ULL << (64 - len)) : 0;
	} else if (len < 128) {
		lo = len == 64 ? 0 : lo & (~0ULL << (128 - len));
	}
	x = bt_hash_watch(k, h->seed, hi, lo, len);
	bt_watch_cells(x, h->seg_len, h->seg_count_len, c);
	v[0] = cell_at(slot, c[0]);
	v[1] = cell_at(slot, c[1]);
	v[2] = cell_at(slot, c[2]);
	v[3] = cell_at(slot, c[3]);
	return bt_watch_decode(v, x, h->check_mask);
}

/* A search in progress: the tree's node to probe and the best match so
 * far (its class when known). */
struct watch_search {
	__u64 hi, lo;		/* the address, host-order words */
	__u32 slot, fam;	/* fam 0: IPv4 (BT_WATCH_F_FLAT) */
	__u32 node;
	__u32 best, cls, known;
};

/* The search's state, a CPU's own (XDP does not nest on a CPU): on the
 * stack, watch_class's frame made the main program's, its and watch_step's
 * 544 bytes as Linux 6.1's verifier counts them (each frame rounded up to
 * 32), past the limit of 512. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct watch_search);
} watch_scratch SEC(".maps");

/* Is the best match's class still to be read (a final probe)? Only for a
 * length of the family: a false hit's byte may be anything. */
static __always_inline int watch_unfinished(const struct watch_search *s)
{
	return !s->known && s->best <= 128 && (s->fam || s->best >= BT_WATCH_V4);
}

/* One step of the binary search on lengths (include/bloomtap.h "Watch
 * lists"; user/core/watchlpm.c's bt_watch_classify is the same search in user
 * space): a probe at the tree's node, a hit going longer (a key gives its
 * class and, a leaf, ends the search; a marker gives the length of its
 * best match), a miss shorter; once no length is left, the final probe of
 * a best match whose class is not known. 1: done. One probe a step, in
 * one place: a global function taking the state by pointer, which the
 * verifier checks once and sees as unknown after it, so the search's
 * nodes do not multiply its states. */
__noinline int watch_step(struct watch_search *s, const struct bt_hash_keys *k)
{
	struct bt_watch_hdr *h = NULL;
	__u32 slot, node = 0, p, r, fam, final = 0;

	if (!s)
		return 1;
	slot = s->slot & 1;
	fam = s->fam & 1;
	if (s->node != BT_WATCH_NONE) {
		/* the node checked in its own register (the compiler may
		 * check one copy and index with another) */
		node = s->node;
		asm volatile("" : "+r"(node));
		h = bpf_map_lookup_elem(&watch_hdr, &slot);
		if (!h || node >= sizeof(h->len[0]))
			return 1;
		p = h->len[fam][node];
	} else if (watch_unfinished(s)) {
		p = s->best;
		final = 1;
	} else {
		return 1;
	}
	r = watch_probe(slot, s->hi, s->lo, p, k);
	if (final || !h) {
		/* h checked again: 6.1's verifier meets it as the NULL of the
		 * final probe's path otherwise */
		s->cls = r & BT_WATCH_IS_MARKER ? 0 : r & 0xff;
		return 1;
	}
	s->node = r ? h->right[fam][node] : h->left[fam][node];
	if (r) {
		s->known = !(r & BT_WATCH_IS_MARKER);
		s->best = s->known ? p : r & 0xff;
		s->cls = s->known ? r & 0xff : 0;
		if (s->known && (r & BT_WATCH_IS_LEAF))
			return 1;	/* nothing longer is listed under it */
	}
	return s->node == BT_WATCH_NONE && !watch_unfinished(s);
}

/* Line x's first address, from the index of the table of slot (header h);
 * 0x10000 when it cannot be read (above any address). */
static __always_inline __u32 index_start(__u32 slot, const struct bt_watch_hdr *h, __u32 x)
{
	struct bt_watch_group *p = watch_elem(slot, h->groups + h->v4_lines + x / BT_WATCH_R_INDEX);

	return p ? p->h[x % BT_WATCH_R_INDEX] : 0x10000;
}

/* Is the line of address a16 among lines wlo..whi of a /16's lo..hi (its
 * first address, the index says, at or below the address, the next line's
 * above)? */
static __always_inline int lines_hold(__u32 slot, const struct bt_watch_hdr *h, __u32 lo,
				      __u32 hi, __u32 wlo, __u32 whi, __u32 a16)
{
	return (wlo == lo || index_start(slot, h, wlo) <= a16) &&
	       (whi == hi || index_start(slot, h, whi + 1) > a16);
}

/* An IPv4 lookup in the range table (include/bloomtap.h "Watch lists"),
 * in three phases, so that a packet's two lookups can run side by side:
 * its /16's word; the binary search of the index over the /16's lines (in
 * cache: 1/32 of the ranges); one line. */
struct v4_lookup {
	__u64 d;		/* the /16's word */
	__u32 a;		/* the address, host order */
	__u32 lo, hi;		/* lines searched; the line, at the end */
	__u32 cls, done;
};

/* The /16's word: done when it answers (a /16 no longer prefix cuts) or
 * the list has no IPv4 key. */
static __always_inline void v4_word(__u32 slot, const struct bt_watch_hdr *h, struct v4_lookup *s)
{
	struct bt_watch_group *p;

	s->cls = 0;
	s->done = 1;
	if (!h->v4_dir)
		return;
	p = watch_elem(slot, h->groups + h->v4_lines + h->v4_index +
				     (s->a >> 16) / BT_WATCH_R_WORDS);
	if (!p)
		return;
	s->d = p->d[(s->a >> 16) % BT_WATCH_R_WORDS];
	if (s->d & BT_WATCH_R_DIRECT)
		s->cls = s->d & 0xff;
	else
		s->done = 0;
}

/* The address's line among the /16's. */
static __always_inline void v4_search(__u32 slot, const struct bt_watch_hdr *h,
				      struct v4_lookup *s)
{
	__u32 first = BT_WATCH_R_FIRST(s->d), n = BT_WATCH_R_COUNT(s->d), a16 = s->a & 0xffff;
	__u32 lo = first / BT_WATCH_R_LINE, hi = (first + n - 1) / BT_WATCH_R_LINE, i, word = 1;

	if (s->done)
		return;
	/* a wide /16 (dense: hosts, long prefixes): its line guessed as if its
	 * ranges were even, taken if the index says the address is on it (two
	 * reads, in parallel), else the lines around it, else the search takes
	 * the whole /16 */
	if (hi - lo > BT_WATCH_R_INDEX) {
		__u32 wlo, whi, g = bt_watch_r_guess(lo, hi, a16, &wlo, &whi);

		if (lines_hold(slot, h, lo, hi, g, g, a16))
			wlo = whi = g;
		if (wlo == whi || lines_hold(slot, h, lo, hi, wlo, whi, a16)) {
			lo = wlo;
			hi = whi;
			word = 0;	/* the word's step is the whole /16's */
		}
	}
	for (i = 0; i < BT_WATCH_R_SEARCH && lo < hi; i++) {
		__u32 right, mid = (lo + hi + 1) / 2, start;
		__u64 le;

		/* the first step's entry is in the word; the others in the
		 * index */
		start = i || !word ? index_start(slot, h, mid) : BT_WATCH_R_MID(s->d);
		/* right: the line starts at or below the address; no branch
		 * (half of them would be mispredicted) */
		le = (__u64)start - a16 - 1;
		asm volatile("" : "+r"(le));
		right = le >> 63;
		lo += (mid - lo) * right;
		hi -= (hi - mid + 1) * (1 - right);
	}
	s->lo = lo;
}

/* The answer in the address's line. */
static __always_inline void v4_line(__u32 slot, const struct bt_watch_hdr *h, struct v4_lookup *s)
{
	__u32 first = BT_WATCH_R_FIRST(s->d), pos0 = s->lo * BT_WATCH_R_LINE, i;
	struct bt_watch_group *p;

	if (s->done || !(p = watch_elem(slot, h->groups + s->lo)))
		return;
	i = bt_watch_r_count(p->w, BT_WATCH_R_KEY(s->a & 0xffff), pos0, first,
			     BT_WATCH_R_COUNT(s->d)) +
	    (first > pos0 ? first - pos0 : 0) - 1;
	s->cls = p->w[i & (BT_WATCH_R_LINE - 1)] & 0xff;
}

/* The class of IPv4 address a (host order) in the range table of slot
 * (header h). A call of its own: in watch_class, its frame took the stack
 * of the three calls to 528 bytes. */
static __noinline __u32 watch_v4(__u32 slot, __u32 a, const struct bt_watch_hdr *h)
{
	struct v4_lookup s = { .a = a };

	v4_word(slot, h, &s);
	v4_search(slot, h, &s);
	v4_line(slot, h, &s);
	return s.cls;
}

/* Two addresses' classes (watch_v6's answer). */
struct watch_pair {
	__u32 cls[2];
};

/* The classes of two IPv6 addresses (their top 64 bits a0, a1) in the
 * range tree of slot, into *out: a node a level, 8 first addresses
 * compared at once (no branch), then a leaf of 6 or 9 ranges. The two
 * descents side by side, so that one's cache misses overlap the other's.
 * A global function: the verifier checks it once, whoever calls it. */
__noinline int watch_v6(__u32 slot, __u64 a0, __u64 a1, struct watch_pair *out)
{
	struct bt_watch_group *p, *q;
	struct bt_watch_hdr *h;
	__u32 x = 0, y = 0, l;

	slot &= 1;
	h = bpf_map_lookup_elem(&watch_hdr, &slot);
	if (!h || !out)
		return 0;
	for (l = 0; l < BT_WATCH_T_LEVELS && l < h->v6_levels; l++) {
		p = watch_elem(slot, h->v6_at[l] + x);
		q = watch_elem(slot, h->v6_at[l] + y);
		if (!p || !q)
			return 0;
		x = bt_watch_t_clamp(x * BT_WATCH_T_FAN + bt_watch_t_count(p->d, BT_WATCH_T_KEYS, a0),
				     h->v6_nodes[l + 1]);
		y = bt_watch_t_clamp(y * BT_WATCH_T_FAN + bt_watch_t_count(q->d, BT_WATCH_T_KEYS, a1),
				     h->v6_nodes[l + 1]);
	}
	if (l > BT_WATCH_T_LEVELS)
		return 0;
	p = watch_elem(slot, h->v6_at[l] + x);
	q = watch_elem(slot, h->v6_at[l] + y);
	if (!p || !q)
		return 0;
	out->cls[0] = bt_watch_t_answer(p, bt_watch_t_range(p, a0)) & 0xff;
	out->cls[1] = bt_watch_t_answer(q, bt_watch_t_range(q, a1)) & 0xff;
	return 0;
}

/* The classes of two IPv4 addresses (a0, a1, host order) in the range
 * table of slot, into *out: the two lookups phase by phase, so that one's
 * cache misses overlap the other's. A global function, as watch_v6. */
__noinline int watch_v4_pair(__u32 slot, __u32 a0, __u32 a1, struct watch_pair *out)
{
	struct v4_lookup s0 = { .a = a0 }, s1 = { .a = a1 };
	struct bt_watch_hdr *h;

	slot &= 1;
	h = bpf_map_lookup_elem(&watch_hdr, &slot);
	if (!h || !out)
		return 0;
	v4_word(slot, h, &s0);
	v4_word(slot, h, &s1);
	v4_search(slot, h, &s0);
	v4_search(slot, h, &s1);
	v4_line(slot, h, &s0);
	v4_line(slot, h, &s1);
	out->cls[0] = s0.cls;
	out->cls[1] = s1.cls;
	return 0;
}

/* The class of an address, as host-order words (v4-mapped for IPv4), in
 * the table of slot; 0: none. An IPv4 address: its /16's word, at most
 * BT_WATCH_R_SEARCH index entries and a line; IPv6: a line a level of the
 * range tree, or at most 8 steps of the search and the final probe (the
 * header's trees have at most 8 levels). */
__noinline int watch_class(__u32 slot, __u64 hi, __u64 lo, __u32 fam,
			   const struct bt_hash_keys *k)
{
	struct watch_search *s;
	struct bt_watch_hdr *h;
	__u32 zero = 0;

	slot &= 1;
	h = bpf_map_lookup_elem(&watch_hdr, &slot);
	if (!h)
		return 0;
	if (fam == 0 && !(h->flags & BT_WATCH_F_FLAT))
		return watch_v4(slot, lo, h);
	if (fam == 1 && (h->flags & BT_WATCH_F_V6_TREE)) {
		struct watch_pair both = { { 0, 0 } };

		watch_v6(slot, hi, hi, &both);
		return both.cls[0];
	}
	s = bpf_map_lookup_elem(&watch_scratch, &zero);
	if (!s)
		return 0;
	*s = (struct watch_search){ .hi = hi, .lo = lo, .slot = slot, .fam = fam,
				    .best = BT_WATCH_NONE, .node = h->root[fam & 1] };
	for (int i = 0; i < 9; i++)
		if (watch_step(s, k))
			break;
	return s->cls;
}

/* One rule for the datapath, lists and reports: an address's family is its
 * form. A v4-mapped address (::ffff:a.b.c.d, as an IPv6 packet may carry)
 * is the IPv4 address a.b.c.d, whichever layer 3 carried it; user space
 * (bt_addr_is_v4) names classes the same way. */
static __always_inline __u32 addr_family(__u64 hi, __u64 lo)
{
	return !(hi == 0 && (lo >> 32) == 0xffff);	/* 0: IPv4, 1: IPv6 */
}

/* n packets of bytes in direction dir (enum bt_direction): each address's
 * class counted as source and as destination */
static __always_inline void watch_count(const struct pkt_info *pi, const struct bt_ctl *c,
					const struct bt_hash_keys *k, __u64 bytes, __u32 n,
					__u32 dir)
{
	__u32 slot = c->watch & 1, side, fam, same;
	struct watch_pair both = { { 0, 0 } };
	struct bt_watch_hdr *h = bpf_map_lookup_elem(&watch_hdr, &slot);
	__u64 hi[2], lo[2];

	if (!h || !h->entries)
		return;
	for (side = 0; side < 2; side++) {
		const __u8 *a = side ? pi->key.dst : pi->key.src;

		hi[side] = __builtin_bswap64(*(const __u64 *)a);
		lo[side] = __builtin_bswap64(*(const __u64 *)(a + 8));
	}
	/* the classes first, the counts after: the verifier meets one state
	 * (two unknown classes) at the counting, whichever way they came. Two
	 * addresses of IPv4's ranges or IPv6's tree are looked up at once. */
	fam = addr_family(hi[0], lo[0]);
	same = fam == addr_family(hi[1], lo[1]);
	if (same && fam && (h->flags & BT_WATCH_F_V6_TREE))
		watch_v6(slot, hi[0], hi[1], &both);
	else if (same && !fam && !(h->flags & BT_WATCH_F_FLAT))
		watch_v4_pair(slot, lo[0], lo[1], &both);
	else
		for (side = 0; side < 2; side++)
			both.cls[side] = watch_class(slot, hi[side], lo[side],
						     addr_family(hi[side], lo[side]), k);
	for (side = 0; side < 2; side++)
		if (both.cls[side])
			count_side(&watch_counts, both.cls[side] + dir * BT_WATCH_CLASSES, side, n,
				   bytes);
}

#endif /* BLOOMTAP_WATCH_BPF_H */
