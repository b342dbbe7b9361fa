// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See watchlpm.h. The build, for n keys:
 *  1. the /16 words: each IPv4 key longer than /16 sets its length's bit in
 *     its /16's word; each of /16 or shorter is the base of the /16s it
 *     covers, unless a longer one covers them too;
 *  2. markers: each key walks the search its addresses will take (its /16's
 *     lengths for IPv4, the family's for IPv6) and leaves a marker at each
 *     length where the search must go longer to reach it;
 *  3. each marker's best match, the longest key that covers it: keys and
 *     markers sorted by address then length, a prefix comes before all it
 *     covers, so a stack of the keys that cover the current entry gives it
 *     (one pass, no lookup), and a key is a leaf unless what follows it is
 *     under it;
 *  4. the Bloomier table of the keys and the markers left (a marker where a
 *     key is, or another marker, is that one).
 * The search's order: each family's tree over its lengths (make_tree),
 * the one with the fewest probes and markers expected.
 * The lookup is bpf/watch.bpf.h's, probe for probe and node for node. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "watchlpm.h"

/* ---- IPv4: ranges ---- */

/* An IPv4 key's address (v4-mapped words: lo's low 32 bits) and length. */
static __u32 v4_addr(const struct bt_watch_key *k)
{
	return (__u32)k->lo;
}

static __u32 v4_len(const struct bt_watch_key *k)
{
	return k->len - BT_WATCH_V4;
}

/* A range: from first (in the /16), answered by the key of IPv4 length len
 * (BT_WATCH_NONE: none) and class cls. */
static __u32 range_entry(__u32 first, __u32 len, __u32 cls)
{
	return first << 16 | len << 8 | cls;
}

/* Family, words, length (a prefix before everything it covers: the
 * order of the sweeps and of the markers' pass); a key before a marker of
 * the same prefix. */
static int cmp_entry(const void *a, const void *b)
{
	const struct bt_watch_key *x = a, *y = b;
	bool fx = bt_watch_key_is_v4(x), fy = bt_watch_key_is_v4(y);

	if (fx != fy)
		return fx ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (int)(x->class_id & BT_WATCH_KEY_MARKER) - (int)(y->class_id & BT_WATCH_KEY_MARKER);
}

/* A range of a sweep: its first address and its answer (best match's
 * length in the family << 8, BT_WATCH_NONE: none, | class). */
struct range {
	__u64 first;
	__u32 entry;
};

/* Key k's place in a sweep: IPv4 in its /16 (the low 16 bits), IPv6 in the
 * top 64 bits; its first address, and how many addresses it spans (log2). */
static __u64 span_first(const struct bt_watch_key *k, bool v4, __u32 *bits)
{
	*bits = v4 ? 32 - v4_len(k) : 64 - k->len;
	return v4 ? v4_addr(k) & 0xffff : k->hi;
}

/* The ranges of keys k (of one family, IPv4 of one /16, sorted by address
 * then length, so a prefix comes before those under it; base: the answer
 * where none of them is) over addresses 0..limit-1: a sweep with a stack
 * of the keys open at the cursor, one range each time the longest match
 * changes. The first starts at 0. e: room for 2n + 1 ranges. Returns the
 * ranges. */
static size_t sweep(const struct bt_watch_key *k, size_t n, bool v4, unsigned __int128 limit,
		    __u32 base, struct range *e)
{
	/* the keys open at the cursor: one a length, 16 (IPv4 under a /16) or
	 * 65 (IPv6 of /0 to /64) */
	struct open { unsigned __int128 end; __u32 entry; } stack[BT_WATCH_T_MAX_LEN + 1];
	unsigned __int128 cursor = 0;
	size_t depth = 0, out = 0;

	for (size_t i = 0; i <= n; i++) {
		__u32 bits = 0;
		unsigned __int128 start = i < n ? span_first(&k[i], v4, &bits) : limit;

		if (i < n && i && k[i].hi == k[i - 1].hi && k[i].lo == k[i - 1].lo &&
		    k[i].len == k[i - 1].len)
			continue;	/* the same key again */
		/* close the keys that end before this one starts */
		while (depth && stack[depth - 1].end <= start) {
			if (cursor < stack[depth - 1].end)
				e[out++] = (struct range){ (__u64)cursor, stack[depth - 1].entry };
			cursor = stack[--depth].end;
		}
		if (cursor < start)
			e[out++] = (struct range){ (__u64)cursor, depth ? stack[depth - 1].entry : base };
		cursor = start;
		if (i < n && depth < BT_WATCH_T_MAX_LEN + 1)
			stack[depth++] = (struct open){ start + ((unsigned __int128)1 << bits),
							 range_entry(0, v4 ? v4_len(&k[i]) : k[i].len,
								     k[i].class_id & 0xff) };
	}
	return out;
}

/* Binary search steps over s lines: ceil(log2 s). */
static __u32 index_steps(__u32 s)
{
	return s > 1 ? 32 - __builtin_clz(s - 1) : 0;
}

/* The range table of the list's IPv4 keys: the /16 words, the ranges of the
 * cut /16s packed in /16 order (whole lines, BT_WATCH_R_PAD after the
 * last), and the index of the lines' first addresses. */
static int make_ranges(const struct bt_watch_key *keys, size_t n, struct bt_watch_built *out)
{
	__u32 *base = malloc(BT_WATCH_DIR * sizeof(*base)), *e = NULL;
	struct bt_watch_key *lng = malloc((n ? n : 1) * sizeof(*lng));
	/* a /16's ranges: at most one an address */
	struct range *swept = malloc(BT_WATCH_DIR * sizeof(*swept));
	size_t nl = 0, nr = 0, lines, index;
	__u16 *idx;
	int err = -ENOMEM;

	if (!base || !lng || !swept)
		goto out;
	for (__u32 x = 0; x < BT_WATCH_DIR; x++)
		base[x] = range_entry(0, BT_WATCH_NONE, 0);
	/* /16 or shorter: the base of the /16s it covers, unless a longer one
	 * covers them too */
	for (size_t i = 0; i < n; i++) {
		const struct bt_watch_key *k = &keys[i];
		__u32 l, first;

		if (!bt_watch_key_is_v4(k))
			continue;
		if ((l = v4_len(k)) > 16) {
			lng[nl++] = *k;
			continue;
		}
		first = v4_addr(k) >> 16;
		for (__u32 x = first; x < first + (1u << (16 - l)); x++)
			if (((base[x] >> 8) & 0xff) == BT_WATCH_NONE || ((base[x] >> 8) & 0xff) < l)
				base[x] = range_entry(0, l, k->class_id & 0xff);
	}
	qsort(lng, nl, sizeof(*lng), cmp_entry);
	/* at most 2 ranges a key and one a /16, whole lines, and the index */
	lines = (2 * nl + BT_WATCH_DIR + BT_WATCH_R_LINE - 1) / BT_WATCH_R_LINE + 1;
	if (!(e = malloc((lines + lines / BT_WATCH_R_INDEX + 1) * sizeof(struct bt_watch_group))))
		goto out;
	for (__u32 x = 0; x < BT_WATCH_DIR; x++)
		out->dir[x] = BT_WATCH_R_DIRECT | base[x];
	for (size_t i = 0, j; i < nl; i = j) {
		__u32 x = v4_addr(&lng[i]) >> 16, steps;
		size_t m, lo, hi, mid;

		for (j = i; j < nl && v4_addr(&lng[j]) >> 16 == x; j++)
			;
		m = sweep(lng + i, j - i, true, 0x10000, base[x], swept);
		if (nr + m > BT_WATCH_R_FIRST(~0ULL)) {
			err = -E2BIG;
			goto out;
		}
		for (size_t r = 0; r < m; r++)
			e[nr + r] = (__u32)swept[r].first << 16 | swept[r].entry;
		lo = nr / BT_WATCH_R_LINE;
		hi = (nr + m - 1) / BT_WATCH_R_LINE;
		/* the search's first step: the middle line's first address (the
		 * /16's own ranges from the line after its first) */
		mid = (lo + hi + 1) / 2;
		out->dir[x] = BT_WATCH_R_WORD(nr, m, hi > lo ? e[mid * BT_WATCH_R_LINE] >> 16 : 0);
		/* reads: the index's steps but the first, and the line */
		steps = index_steps(hi - lo + 1);
		if ((steps ? steps : 1) > out->levels)
			out->levels = steps ? steps : 1;
		nr += m;
	}
	lines = (nr + BT_WATCH_R_LINE - 1) / BT_WATCH_R_LINE;
	index = nr ? (lines + BT_WATCH_R_INDEX - 1) / BT_WATCH_R_INDEX : 0;
	for (size_t i = nr; i < lines * BT_WATCH_R_LINE; i++)
		e[i] = BT_WATCH_R_PAD;
	idx = (__u16 *)(e + lines * BT_WATCH_R_LINE);
	for (size_t l = 0; l < index * BT_WATCH_R_INDEX; l++)
		idx[l] = l < lines ? e[l * BT_WATCH_R_LINE] >> 16 : 0xffff;
	out->nodes = e;
	out->lines = lines;
	out->index = index;
	out->ranges = nr;
	e = NULL;
	err = 0;
out:
	free(e);
	free(lng);
	free(base);
	free(swept);
	return err;
}

/* The class of IPv4 address a in the range table, as bpf/watch.bpf.h's
 * watch_v4 finds it (a wide /16's guess, then a binary search of the
 * index); how: the answer's length, the lines read (index and ranges). */
static __u32 range_class(const struct bt_watch_view *v, __u32 a, struct bt_watch_how *how)
{
	const struct bt_watch_hdr *h = v->hdr;
	const uint8_t *arr = v->cells + (size_t)h->groups * sizeof(struct bt_watch_group);
	const __u16 *idx = (const __u16 *)(arr + (size_t)h->v4_lines * sizeof(struct bt_watch_group));
	__u64 d = v->dir ? v->dir[a >> 16] : BT_WATCH_R_DIRECT;	/* none */
	__u32 first = BT_WATCH_R_FIRST(d), n = BT_WATCH_R_COUNT(d), lo = first / BT_WATCH_R_LINE;
	__u32 hi = (first + n - 1) / BT_WATCH_R_LINE, e = (__u32)d, w[BT_WATCH_R_LINE], pos0;

	if (!(d & BT_WATCH_R_DIRECT)) {
		bool word = true;	/* the word's step is the whole /16's */

		if (!n || hi >= h->v4_lines)
			return 0;
		if (hi - lo > BT_WATCH_R_INDEX) {
			__u32 wlo, whi, g = bt_watch_r_guess(lo, hi, a & 0xffff, &wlo, &whi);

			how->probes++;
			if ((g == lo || idx[g] <= (a & 0xffff)) &&
			    (g == hi || idx[g + 1] > (a & 0xffff)))
				wlo = whi = g;	/* the guess holds */
			else
				how->probes++;
			if (wlo == whi || ((wlo == lo || idx[wlo] <= (a & 0xffff)) &&
					   (whi == hi || idx[whi + 1] > (a & 0xffff)))) {
				lo = wlo;
				hi = whi;
				word = false;
			}
		}
		for (int step = 0; lo < hi; step++) {
			__u32 mid = (lo + hi + 1) / 2;

			how->probes += step > 0 || !word;
			if ((step || !word ? idx[mid] : BT_WATCH_R_MID(d)) <= (a & 0xffff))
				lo = mid;
			else
				hi = mid - 1;
		}
		memcpy(w, arr + (size_t)lo * sizeof(struct bt_watch_group), sizeof(w));
		how->probes++;
		pos0 = lo * BT_WATCH_R_LINE;
		e = w[(bt_watch_r_count(w, BT_WATCH_R_KEY(a & 0xffff), pos0, first, n) +
		       (first > pos0 ? first - pos0 : 0) - 1) & (BT_WATCH_R_LINE - 1)];
	}
	how->len = e & 0xff ? BT_WATCH_V4 + ((e >> 8) & 0xff) : 0;
	return e & 0xff;
}

size_t bt_watch_v4_set(const struct bt_watch_hdr *h, __u64 *dir, uint8_t *cells, __u32 a,
		       __u32 len, int cls, __u32 *old)
{
	__u32 first = len > 16 ? a & 0xffff : 0, last = len > 16 ? first + (1u << (32 - len)) - 1 : 0xffff;
	__u32 *r = (__u32 *)(cells + (size_t)h->groups * sizeof(struct bt_watch_group));
	size_t n = 0;

	for (__u32 x = a >> 16; x < (a >> 16) + (len > 16 ? 1 : 1u << (16 - len)); x++) {
		__u64 d = dir[x];
		__u32 from = BT_WATCH_R_FIRST(d), count = BT_WATCH_R_COUNT(d);

		if (d & BT_WATCH_R_DIRECT) {
			if (((d >> 8) & 0xff) == len && (d & 0xff)) {
				*old = d & 0xff;
				if (cls >= 0)
					__atomic_store_n(&dir[x], (d & ~0xffULL) | (__u32)cls,
							 __ATOMIC_RELEASE);
				n++;
			}
			continue;
		}
		if ((size_t)from + count > (size_t)h->v4_lines * BT_WATCH_R_LINE)
			continue;	/* not a table this build wrote */
		for (__u32 *w = r + from; w < r + from + count; w++)
			if (*w >> 16 >= first && *w >> 16 <= last && ((*w >> 8) & 0xff) == len) {
				*old = *w & 0xff;
				if (cls >= 0)
					__atomic_store_n(w, (*w & ~0xffu) | (__u32)cls,
							 __ATOMIC_RELEASE);
				n++;
			}
	}
	return n;
}

/* ---- IPv6: the range tree (all IPv6 keys /64 or shorter) ---- */

/* The levels above leaves: *nodes, each level's elements, the root's
 * first, the leaves' last; the levels above the leaves, or -E2BIG past
 * BT_WATCH_T_LEVELS. */
static int tree_shape(size_t leaves, __u32 nodes[BT_WATCH_T_LEVELS + 1])
{
	size_t level[BT_WATCH_T_LEVELS + 2] = { leaves }, k = 0;

	while (level[k] > 1) {
		if (k == BT_WATCH_T_LEVELS)
			return -E2BIG;
		level[k + 1] = (level[k] + BT_WATCH_T_FAN - 1) / BT_WATCH_T_FAN;
		k++;
	}
	for (size_t l = 0; l <= k; l++)
		nodes[l] = (__u32)level[k - l];
	return (int)k;
}

/* Ranges e[i..m-1] into leaf g: compact when at least 7 of them lie within
 * 2^32 of the first (9 a leaf, against 6), else 6; after the last range
 * taken, copies of it. Returns the ranges taken. */
static size_t fill_leaf(const struct range *e, size_t i, size_t m, struct bt_watch_group *g)
{
	size_t k = 1;

	while (k < BT_WATCH_T_COMPACT && i + k < m && e[i + k].first - e[i].first <= 0xffffffffULL)
		k++;
	memset(g, 0, sizeof(*g));
	if (k > BT_WATCH_T_LEAF) {
		g->tc.compact = 1;
		g->tc.base = e[i].first;
		for (size_t j = 0; j < BT_WATCH_T_COMPACT; j++) {
			const struct range *r = &e[i + (j < k ? j : k - 1)];

			if (j)
				g->tc.d[j - 1] = (__u32)(r->first - e[i].first);
			g->tc.e[j] = (__u16)r->entry;
		}
		return k;
	}
	k = m - i < BT_WATCH_T_LEAF ? m - i : BT_WATCH_T_LEAF;
	for (size_t j = 0; j < BT_WATCH_T_LEAF; j++) {
		const struct range *r = &e[i + (j < k ? j : k - 1)];

		g->t.s[j] = r->first;
		g->t.e[j] = (__u16)r->entry;
	}
	return k;
}

/* A leaf's first address. */
static __u64 leaf_first(const struct bt_watch_group *g)
{
	return g->tc.compact ? g->tc.base : g->t.s[0];
}

/* The range tree of the list's IPv6 keys (each /64 or shorter): the header's
 * v6_* (v6_at from element 0: the caller adds where the tree starts) and
 * its elements, *out (malloc'd). */
static int make_v6_tree(const struct bt_watch_key *keys, size_t n, struct bt_watch_hdr *h,
			struct bt_watch_group **out)
{
	struct bt_watch_key *k6 = malloc((n ? n : 1) * sizeof(*k6));
	struct range *e = malloc((2 * n + 1) * sizeof(*e));
	struct bt_watch_group *leaves = NULL, *t = NULL;
	__u64 *first = NULL;	/* each node's first address, a level at a time */
	size_t n6 = 0, m, nl = 0, elems = 0;
	int levels, err = -ENOMEM;

	if (!k6 || !e)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!bt_watch_key_is_v4(&keys[i]))
			k6[n6++] = keys[i];
	qsort(k6, n6, sizeof(*k6), cmp_entry);
	m = sweep(k6, n6, false, (unsigned __int128)1 << 64, range_entry(0, BT_WATCH_NONE, 0), e);
	if (!(leaves = malloc(((m + BT_WATCH_T_LEAF - 1) / BT_WATCH_T_LEAF) * sizeof(*leaves))))
		goto out;
	for (size_t i = 0; i < m; nl++)
		i += fill_leaf(e, i, m, &leaves[nl]);
	if ((levels = tree_shape(nl, h->v6_nodes)) < 0) {
		err = levels;
		goto out;
	}
	for (int l = 0; l <= levels; l++) {
		h->v6_at[l] = (__u32)elems;
		elems += h->v6_nodes[l];
	}
	if (!(t = calloc(elems, sizeof(*t))) || !(first = malloc(nl * sizeof(*first))))
		goto out;
	memcpy(&t[h->v6_at[levels]], leaves, nl * sizeof(*leaves));
	for (size_t x = 0; x < nl; x++)
		first[x] = leaf_first(&leaves[x]);
	/* each level from the one below: a node's keys are its children 1..8's
	 * first addresses; a missing child's, above any address */
	for (int l = levels - 1; l >= 0; l--) {
		for (size_t x = 0; x < h->v6_nodes[l]; x++) {
			struct bt_watch_group *g = &t[h->v6_at[l] + x];

			for (size_t j = 0; j < BT_WATCH_T_KEYS; j++) {
				size_t c = x * BT_WATCH_T_FAN + j + 1;

				g->d[j] = c < h->v6_nodes[l + 1] ? first[c] : ~0ULL;
			}
			first[x] = first[x * BT_WATCH_T_FAN];
		}
	}
	h->v6_levels = (__u8)levels;
	h->v6_ranges = (__u32)m;
	h->v6_elems = (__u32)elems;
	*out = t;
	t = NULL;
	err = 0;
out:
	free(first);
	free(t);
	free(leaves);
	free(e);
	free(k6);
	return err;
}

/* The leaf of IPv6 address hi in the tree (its element), as
 * bpf/watch.bpf.h's watch_v6 finds it; *reads, the elements read. */
static __u32 tree_leaf(const struct bt_watch_view *v, __u64 hi, __u32 *reads)
{
	const struct bt_watch_hdr *h = v->hdr;
	const struct bt_watch_group *t = (const struct bt_watch_group *)v->cells;
	__u32 x = 0, l;

	for (l = 0; l < h->v6_levels && l < BT_WATCH_T_LEVELS; l++) {
		x = bt_watch_t_clamp(x * BT_WATCH_T_FAN +
					     bt_watch_t_count(t[h->v6_at[l] + x].d, BT_WATCH_T_KEYS, hi),
				     h->v6_nodes[l + 1]);
	}
	*reads = l + 1;
	return h->v6_at[l] + x;
}

static __u32 tree_class(const struct bt_watch_view *v, __u64 hi, struct bt_watch_how *how)
{
	const struct bt_watch_group *g =
		(const struct bt_watch_group *)v->cells + tree_leaf(v, hi, &how->probes);
	__u32 e = bt_watch_t_answer(g, bt_watch_t_range(g, hi));

	how->len = e & 0xff ? e >> 8 : 0;
	return e & 0xff;
}

/* Range j's first address and answer in leaf g. */
static __u64 leaf_range(struct bt_watch_group *g, __u32 j, __u16 **e)
{
	*e = g->tc.compact ? &g->tc.e[j] : &g->t.e[j];
	return g->tc.compact ? g->tc.base + (j ? g->tc.d[j - 1] : 0) : g->t.s[j];
}

size_t bt_watch_v6_set(const struct bt_watch_hdr *h, uint8_t *cells, __u64 hi, __u32 len,
		       int cls, __u32 *old)
{
	struct bt_watch_view v = { h, cells, NULL };
	struct bt_watch_group *t = (struct bt_watch_group *)cells;
	/* its last address (a shift by 64 is undefined) */
	__u64 last = len >= 64 ? hi : len ? hi | (~0ULL >> len) : ~0ULL, prev = 0;
	__u32 reads, x, end, j;
	size_t n = 0;

	if (len > BT_WATCH_T_MAX_LEN || !(h->flags & BT_WATCH_F_V6_TREE))
		return 0;	/* never a key of the tree */
	x = tree_leaf(&v, hi, &reads);
	end = h->v6_at[h->v6_levels] + h->v6_nodes[h->v6_levels];
	j = bt_watch_t_range(&t[x], hi);
	/* the ranges from the prefix's first address to its last (the copies
	 * after a leaf's last range too: they stand for it) */
	for (; x < end; x++, j = 0)
		for (; j < (t[x].tc.compact ? BT_WATCH_T_COMPACT : BT_WATCH_T_LEAF); j++) {
			__u16 *e;
			__u64 first = leaf_range(&t[x], j, &e);

			if (first > last)
				return n;
			if (*e >> 8 == len && (*e & 0xff)) {
				*old = *e & 0xff;
				if (cls >= 0)
					__atomic_store_n(e, (__u16)((*e & ~0xffu) | (__u32)cls),
							 __ATOMIC_RELEASE);
				n += !n || first != prev;	/* a copy is not another */
			}
			prev = first;
		}
	return n;
}

/* ---- IPv6 (and IPv4 with BT_WATCH_F_FLAT): binary search on lengths ---- */

/* A search over the lengths of an address (or key): the family's tree.
 * The same steps as bpf/watch.bpf.h's watch_step. */
struct search {
	const struct bt_watch_hdr *h;
	int fam;
	__u32 node;
};

static struct search search_start(const struct bt_watch_hdr *h, bool v4)
{
	return (struct search){ h, !v4, h->root[!v4] };
}

/* The next length to probe; false when the search is over. */
static bool search_next(struct search *s, __u32 *len)
{
	if (s->node == BT_WATCH_NONE)
		return false;
	*len = s->h->len[s->fam][s->node];
	return true;
}

/* The probe of the last length hit (go longer) or not (shorter). */
static void search_took(struct search *s, bool hit)
{
	s->node = hit ? s->h->right[s->fam][s->node] : s->h->left[s->fam][s->node];
}

/* Is key k in the range table rather than the Bloomier table? */
static bool in_ranges(const struct bt_watch_key *k, unsigned flags)
{
	return bt_watch_key_is_v4(k) && !(flags & BT_WATCH_F_FLAT);
}

/* Appends the markers of key k: where its search goes longer. */
static int add_markers(const struct bt_watch_hdr *h, const struct bt_watch_key *k,
		       struct bt_watch_key **e, size_t *n, size_t *cap)
{
	struct search s = search_start(h, bt_watch_key_is_v4(k));
	__u32 p;

	while (search_next(&s, &p)) {
		struct bt_watch_key *m;

		if (p == k->len)
			return 0;
		search_took(&s, p < k->len);
		if (p > k->len)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 1024;
			struct bt_watch_key *g = realloc(*e, c * sizeof(*g));

			if (!g)
				return -ENOMEM;
			*e = g;
			*cap = c;
		}
		m = &(*e)[(*n)++];
		*m = (struct bt_watch_key){ k->hi, k->lo, p, BT_WATCH_KEY_MARKER };
		bt_watch_mask(&m->hi, &m->lo, p);
	}
	return -EINVAL;	/* its length is not among its search's */
}

/* Does prefix p cover entry e (same family)? */
static bool covers(const struct bt_watch_key *p, const struct bt_watch_key *e)
{
	__u64 hi = e->hi, lo = e->lo;

	if (p->len > e->len || bt_watch_key_is_v4(p) != bt_watch_key_is_v4(e))
		return false;
	bt_watch_mask(&hi, &lo, p->len);
	return hi == p->hi && lo == p->lo;
}

/* The search tree over a family's lengths: of the trees of at most so many
 * levels, the cheapest, by dynamic programming over ranks (Knuth's optimal
 * binary search trees, with the search's own costs). The cost is probes
 * and markers:
 *  - an address under a key of length L takes L's depth in probes, and,
 *    when more is listed under that key, one more a node down the left
 *    edge of L's right subtree (each a miss);
 *  - an address under nothing takes the root's left edge;
 *  - each key of a node's right subtree leaves a marker at the node (fewer
 *    where a key is already there), each a key's cells in the table.
 * Traffic is taken as spread evenly over the keys, with one address in ten
 * under nothing (make bench's mix). */
#define PLAN_PROBE 4	/* a probe of an address, in the plan's units */
#define PLAN_MARKER 10	/* a marker: weighed as 2.5 probes, the weight that
			 * took both fewer probes and fewer markers on the
			 * BGP- and country-shaped lists (docs/benchmark.md) */
#define PLAN_NONE UINT64_MAX	/* no such tree */

struct tree_plan {
	__u32 n, levels;		/* ranks; levels at most */
	const uint64_t *w, *nl;		/* keys of each rank; of them, not leaves */
	uint64_t *sum;			/* w's prefix sums */
	uint64_t none;			/* addresses under nothing */
	uint64_t *cost;			/* [first][last][levels] */
	uint8_t *root;			/* the root rank of that tree */
};

static size_t plan_at(const struct tree_plan *p, __u32 first, __u32 last, __u32 d)
{
	return ((size_t)first * (p->n + 1) + last) * (p->levels + 1) + d;
}

/* Every subtree's cheapest cost, by span and levels. The left edges'
 * misses need no state of their own: a subtree of ranks first..last-1 is
 * on the left edge of the right subtree of rank first - 1 (of the whole
 * tree, when first is 0), so each node whose ranks start at first is one
 * more probe for the addresses under rank first - 1's keys that have
 * more listed under them (under nothing, when first is 0). */
static void plan_fill(struct tree_plan *p)
{
	for (__u32 span = 0; span <= p->n; span++)
		for (__u32 first = 0; first + span <= p->n; first++)
			for (__u32 d = 0; d <= p->levels; d++) {
				__u32 last = first + span, side = (1u << d >> 1) - 1;
				size_t at = plan_at(p, first, last, d);
				uint64_t edge = first ? p->nl[first - 1] : p->none;

				p->cost[at] = span ? PLAN_NONE : 0;
				/* d levels hold at most 2^d - 1 ranks */
				if (!span || span >> d)
					continue;
				/* the roots whose two sides fit in d - 1 levels
				 * (side ranks each) */
				for (__u32 r = last - 1 - (span - 1 < side ? span - 1 : side);
				     r < last && r <= first + side; r++) {
					uint64_t c = p->cost[plan_at(p, first, r, d - 1)] +
						     p->cost[plan_at(p, r + 1, last, d - 1)] +
						     PLAN_PROBE * (p->sum[last] - p->sum[first] + edge) +
						     PLAN_MARKER * (p->sum[last] - p->sum[r + 1]);

					if (c < p->cost[at]) {
						p->cost[at] = c;
						p->root[at] = r;
					}
				}
			}
}

/* The planned tree of ranks first..last-1, d levels, into h's family f:
 * its root (BT_WATCH_NONE: empty); *levels_out, its levels. */
static __u32 plan_tree(const struct tree_plan *p, struct bt_watch_hdr *h, int f, __u32 first,
		       __u32 last, __u32 d, __u32 *levels_out)
{
	__u32 r, dl = 0, dr = 0;

	*levels_out = 0;
	if (first >= last)
		return BT_WATCH_NONE;
	r = p->root[plan_at(p, first, last, d)];
	h->left[f][r] = plan_tree(p, h, f, first, r, d - 1, &dl);
	h->right[f][r] = plan_tree(p, h, f, r + 1, last, d - 1, &dr);
	*levels_out = 1 + (dl > dr ? dl : dr);
	return r;
}

/* Family f's tree over h->nlen[f] ranks (w, nl), at most levels levels. */
static int make_tree(struct bt_watch_hdr *h, int f, const uint64_t *w, const uint64_t *nl,
		     __u32 levels)
{
	struct tree_plan p = { h->nlen[f], levels, w, nl };
	size_t states = (size_t)(p.n + 1) * (p.n + 1) * (levels + 1);
	__u32 depth;
	int err = -ENOMEM;

	p.sum = calloc(p.n + 1, sizeof(*p.sum));
	p.cost = malloc(states * sizeof(*p.cost));
	p.root = malloc(states);
	if (p.sum && p.cost && p.root) {
		for (__u32 r = 0; r < p.n; r++)
			p.sum[r + 1] = p.sum[r] + w[r];
		p.none = p.sum[p.n] / 9;	/* one address in ten */
		plan_fill(&p);
		h->root[f] = plan_tree(&p, h, f, 0, p.n, levels, &depth);
		h->depth[f] = depth;
		err = 0;
	}
	free(p.sum);
	free(p.cost);
	free(p.root);
	return err;
}

/* Each family's lengths, shortest first, and their trees. keys: sorted by
 * cmp_entry, so that what is listed under a key comes right after it. */
static int family_lengths(const struct bt_watch_key *keys, size_t n, struct bt_watch_hdr *h)
{
	uint64_t count[2][BT_WATCH_LENGTHS] = { { 0 } }, inner[2][BT_WATCH_LENGTHS] = { { 0 } };
	uint64_t w[BT_WATCH_LENGTHS], nl[BT_WATCH_LENGTHS];
	__u32 levels;
	int err;

	for (size_t i = 0; i < n; i++) {
		int f = !bt_watch_key_is_v4(&keys[i]);

		count[f][keys[i].len]++;
		if (i + 1 < n && keys[i + 1].len > keys[i].len && covers(&keys[i], &keys[i + 1]))
			inner[f][keys[i].len]++;
	}
	for (int f = 0; f < 2; f++) {
		h->nlen[f] = 0;
		for (int l = 0; l < BT_WATCH_LENGTHS; l++)
			if (count[f][l]) {
				w[h->nlen[f]] = count[f][l];
				nl[h->nlen[f]] = inner[f][l];
				h->len[f][h->nlen[f]++] = l;
			}
		/* at most two levels more than balanced, and never more than
		 * 8: the bound of 129 lengths */
		levels = bt_watch_levels(h->nlen[f]) + 2 < 8 ? bt_watch_levels(h->nlen[f]) + 2 : 8;
		h->root[f] = BT_WATCH_NONE;
		h->depth[f] = 0;
		if (h->nlen[f] && (err = make_tree(h, f, w, nl, levels)))
			return err;
	}
	return 0;
}

/* Sorted entries: drops repeated prefixes (the first, a key if one is,
 * stays), gives each marker its best match, and marks leaves: a key is one
 * unless the entry after it is under it (anything under a key sorts right
 * after it, a marker under it standing for a key). Returns the entries
 * kept. */
static size_t settle_markers(struct bt_watch_key *e, size_t n)
{
	size_t out = 0, depth = 0;
	/* the keys covering the current entry, outermost first: at most one a
	 * length */
	const struct bt_watch_key *stack[BT_WATCH_LENGTHS];

	for (size_t i = 0; i < n; i++) {
		struct bt_watch_key *x = &e[i];

		if (out && e[out - 1].len == x->len && e[out - 1].hi == x->hi &&
		    e[out - 1].lo == x->lo && bt_watch_key_is_v4(&e[out - 1]) == bt_watch_key_is_v4(x))
			continue;
		e[out] = *x;
		x = &e[out++];
		while (depth && !covers(stack[depth - 1], x))
			depth--;
		if (out >= 2 && !(e[out - 2].class_id & BT_WATCH_KEY_MARKER) && covers(&e[out - 2], x))
			e[out - 2].class_id &= ~BT_WATCH_KEY_LEAF;	/* not a leaf after all */
		if (x->class_id & BT_WATCH_KEY_MARKER) {
			x->class_id = BT_WATCH_KEY_MARKER |
				      (depth ? stack[depth - 1]->len : BT_WATCH_NONE);
		} else {
			x->class_id |= BT_WATCH_KEY_LEAF;
			if (depth < BT_WATCH_LENGTHS)
				stack[depth++] = x;
		}
	}
	return out;
}

/* The range tree's memory against the searched table's, at most: a
 * quarter more memory for 2 to 5 times less time (a line a level, against
 * 3 to 5 probes of about 50 ns of instructions each: docs/benchmark.md).
 * The country-shaped list's tree takes 1.12 times its searched table, the
 * BGP-shaped list's 2.2. */
#define V6_TREE_MEMORY 1.25

/* IPv6 in the range tree or searched (settled entries e, ne of them; the
 * search's lengths in h): the tree when every IPv6 key is /64 or shorter
 * and it takes at most V6_TREE_MEMORY times the elements the Bloomier
 * table would with IPv6's keys and markers (BT_WATCH_B_V6_TREE: whatever
 * it takes;
 * BT_WATCH_B_V6_SEARCH, BT_WATCH_F_FLAT: never). With the tree, IPv6's
 * entries leave e and its lengths the header; out->tree, its elements. */
static int choose_v6_tree(const struct bt_watch_key *keys, size_t n, unsigned flags,
			  struct bt_watch_hdr *h, struct bt_watch_key *e, size_t *ne,
			  struct bt_watch_built *out)
{
	struct bt_watch_hdr with = { 0 }, without = { 0 };
	size_t kept = 0;
	int err;

	if (flags & (BT_WATCH_F_FLAT | BT_WATCH_B_V6_SEARCH) || !h->nlen[1] ||
	    h->len[1][h->nlen[1] - 1] > BT_WATCH_T_MAX_LEN)
		return 0;
	if ((err = make_v6_tree(keys, n, h, &out->tree)))
		return err == -E2BIG ? 0 : err;	/* too many ranges: searched */
	for (size_t i = 0; i < *ne; i++)
		kept += bt_watch_key_is_v4(&e[i]);
	bt_bloomier_size((uint32_t)*ne, &without);
	bt_bloomier_size((uint32_t)kept, &with);
	if (!(flags & BT_WATCH_B_V6_TREE) &&
	    (double)with.groups + h->v6_elems > V6_TREE_MEMORY * without.groups) {
		free(out->tree);
		out->tree = NULL;
		return 0;
	}
	for (size_t i = 0, j = 0; i < *ne; i++)
		if (bt_watch_key_is_v4(&e[i]))
			e[j++] = e[i];
	*ne = kept;
	h->nlen[1] = 0;
	h->root[1] = BT_WATCH_NONE;
	h->depth[1] = 0;
	return 0;
}

int bt_watch_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		   unsigned check_bits, uint64_t seed, unsigned flags, struct bt_watch_built *out)
{
	struct bt_watch_hdr lengths = { 0 };
	struct bt_watch_key *e = NULL;
	size_t ne = 0, cap = n + 1024, markers = 0;
	bool v4 = false;	/* IPv4 keys, in the range table */
	uint8_t *all;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->dir = malloc(BT_WATCH_DIR * sizeof(*out->dir));
	e = malloc(cap * sizeof(*e));
	if (!out->dir || !e)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!in_ranges(&keys[i], flags))
			e[ne++] = keys[i];
		else
			v4 = true;
	qsort(e, ne, sizeof(*e), cmp_entry);
	if ((err = family_lengths(e, ne, &lengths)))
		goto fail;
	lengths.flags = flags;
	if (!(flags & BT_WATCH_F_FLAT) && (err = make_ranges(keys, n, out)))
		goto fail;
	for (size_t i = 0, bloomier = ne; i < bloomier; i++) {
		struct bt_watch_key key = e[i];	/* e grows with the markers */

		if ((err = add_markers(&lengths, &key, &e, &ne, &cap)))
			goto fail;
	}
	qsort(e, ne, sizeof(*e), cmp_entry);
	ne = settle_markers(e, ne);
	if ((err = choose_v6_tree(keys, n, flags, &lengths, e, &ne, out)))
		goto fail;
	for (size_t i = 0; i < ne; i++)
		if (e[i].class_id & BT_WATCH_KEY_MARKER)
			out->markers[!bt_watch_key_is_v4(&e[i])]++;
	markers = out->markers[0] + out->markers[1];
	if ((err = bt_bloomier_build(k, e, ne, check_bits, seed, &out->b)))
		goto fail;
	/* the search's part of the header; the table's is the build's */
	memcpy(out->b.hdr.nlen, lengths.nlen, sizeof(lengths.nlen));
	memcpy(out->b.hdr.len, lengths.len, sizeof(lengths.len));
	memcpy(out->b.hdr.root, lengths.root, sizeof(lengths.root));
	memcpy(out->b.hdr.depth, lengths.depth, sizeof(lengths.depth));
	memcpy(out->b.hdr.left, lengths.left, sizeof(lengths.left));
	memcpy(out->b.hdr.right, lengths.right, sizeof(lengths.right));
	out->b.hdr.flags = (flags & BT_WATCH_F_FLAT) | (out->tree ? BT_WATCH_F_V6_TREE : 0);
	out->b.hdr.markers = markers;
	out->b.hdr.entries = n;
	out->b.hdr.v4_lines = out->lines;
	out->b.hdr.v4_index = out->index;
	out->b.hdr.v4_ranges = out->ranges;
	out->b.hdr.v4_dir = v4 ? BT_WATCH_DIR / BT_WATCH_R_WORDS : 0;
	if (out->tree) {
		/* IPv6's tree after the /16 words, its levels where it lands */
		__u32 at = out->b.hdr.groups + out->b.hdr.v4_lines + out->b.hdr.v4_index +
			   out->b.hdr.v4_dir;

		memcpy(out->b.hdr.v6_at, lengths.v6_at, sizeof(lengths.v6_at));
		memcpy(out->b.hdr.v6_nodes, lengths.v6_nodes, sizeof(lengths.v6_nodes));
		for (int l = 0; l <= lengths.v6_levels; l++)
			out->b.hdr.v6_at[l] += at;
		out->b.hdr.v6_levels = lengths.v6_levels;
		out->b.hdr.v6_ranges = lengths.v6_ranges;
		out->b.hdr.v6_elems = lengths.v6_elems;
	}
	/* the ranges, their index, the /16 words and IPv6's tree after the
	 * cells, in one array */
	if (!(all = realloc(out->b.cells, bt_watch_cells_bytes(&out->b.hdr) + 1)))
		goto fail;
	out->b.cells = all;
	if (out->nodes)
		memcpy(all + (size_t)out->b.hdr.groups * sizeof(struct bt_watch_group), out->nodes,
		       (out->lines + out->index) * sizeof(struct bt_watch_group));
	if (v4)
		memcpy(bt_watch_dir_of(&out->b.hdr, all), out->dir, BT_WATCH_DIR * sizeof(__u64));
	if (out->tree)
		memcpy(all + (size_t)out->b.hdr.v6_at[0] * sizeof(struct bt_watch_group), out->tree,
		       (size_t)out->b.hdr.v6_elems * sizeof(struct bt_watch_group));
	free(e);
	return 0;
fail:
	free(e);
	bt_watch_built_free(out);
	return err;
}

void bt_watch_built_free(struct bt_watch_built *w)
{
	bt_bloomier_free(&w->b);
	free(w->dir);
	free(w->nodes);
	free(w->tree);
	w->dir = NULL;
	w->nodes = NULL;
	w->tree = NULL;
}

__u32 bt_watch_classify(const struct bt_hash_keys *k, const struct bt_watch_view *v,
			const uint8_t addr[16], bool v4, struct bt_watch_how *how)
{
	const struct bt_watch_hdr *h = v->hdr;
	struct bt_watch_how dummy;
	struct search s;
	__u32 best = BT_WATCH_NONE, cls = 0, p, r;
	bool known = false;
	__u64 ah, al;

	how = how ? how : &dummy;
	memset(how, 0, sizeof(*how));
	if (!h->entries)
		return 0;
	bt_watch_words(addr, &ah, &al);
	if (v4 && !(h->flags & BT_WATCH_F_FLAT))
		return range_class(v, (__u32)al, how);
	if (!v4 && (h->flags & BT_WATCH_F_V6_TREE))
		return tree_class(v, ah, how);
	s = search_start(h, v4);
	while (search_next(&s, &p)) {
		__u64 mh = ah, ml = al;

		bt_watch_mask(&mh, &ml, p);
		r = bt_bloomier_probe(k, h, v->cells, mh, ml, p, NULL);
		how->probes++;
		search_took(&s, r);
		if (!r)
			continue;
		known = !(r & BT_WATCH_IS_MARKER);
		best = known ? p : r & 0xff;
		cls = known ? r & 0xff : 0;
		if (known && (r & BT_WATCH_IS_LEAF))
			break;	/* nothing longer is listed under it */
	}
	/* a best match of the family (a false hit's byte may be anything) */
	if (!known && best <= 128 && (!v4 || best >= BT_WATCH_V4)) {
		__u64 mh = ah, ml = al;

		bt_watch_mask(&mh, &ml, best);
		r = bt_bloomier_probe(k, h, v->cells, mh, ml, best, NULL);
		how->probes++;
		cls = r & BT_WATCH_IS_MARKER ? 0 : r & 0xff;
	}
	how->len = cls ? best : 0;
	return cls;
}
