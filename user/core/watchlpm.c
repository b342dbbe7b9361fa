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
 * The searches' order: IPv6's tree (make_tree) and each /16's first
 * length (make_dir) put the length with the most keys first where the
 * depth allows.
 * The lookup is bpf/watch.bpf.h's, probe for probe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "watchlpm.h"

/* An IPv4 key's /16 (v4-mapped words: the address is lo's low 32 bits). */
static __u32 slash16(__u64 lo)
{
	return (lo >> 16) & 0xffff;
}

/* The root rank of ranks first..last-1 (weights w) in a tree of at most
 * depth levels: the heaviest length among those whose two sides still fit
 * (depth - 1 levels each), the median on ties (always fits). */
static __u32 heavy_root(const uint32_t *w, __u32 first, __u32 last, __u32 depth)
{
	__u32 side = (1u << (depth - 1)) - 1, best = bt_watch_mid(first, last);

	for (__u32 r = first; r < last; r++)
		if (r - first <= side && last - r - 1 <= side && w[r] > w[best])
			best = r;
	return best;
}

/* The tree of ranks first..last-1 of family f, at most depth levels: its
 * root (BT_WATCH_NONE: empty); *levels_out, its levels. */
static __u32 make_tree(struct bt_watch_hdr *h, int f, const uint32_t *w, __u32 first,
		       __u32 last, __u32 depth, __u32 *levels_out)
{
	__u32 r, dl = 0, dr = 0;

	*levels_out = 0;
	if (first >= last)
		return BT_WATCH_NONE;
	r = heavy_root(w, first, last, depth);
	h->left[f][r] = make_tree(h, f, w, first, r, depth - 1, &dl);
	h->right[f][r] = make_tree(h, f, w, r + 1, last, depth - 1, &dr);
	*levels_out = 1 + (dl > dr ? dl : dr);
	return r;
}

/* Each family's lengths, shortest first, and their trees. */
static void family_lengths(const struct bt_watch_key *keys, size_t n, struct bt_watch_hdr *h)
{
	uint32_t count[2][BT_WATCH_LENGTHS] = { { 0 } }, w[BT_WATCH_LENGTHS];

	for (size_t i = 0; i < n; i++)
		count[!bt_watch_key_is_v4(&keys[i])][keys[i].len]++;
	for (int f = 0; f < 2; f++) {
		__u32 depth;

		h->nlen[f] = 0;
		for (int l = 0; l < BT_WATCH_LENGTHS; l++)
			if (count[f][l]) {
				w[h->nlen[f]] = count[f][l];
				h->len[f][h->nlen[f]++] = l;
			}
		/* two levels more than balanced, for heavy lengths nearer the
		 * root (fewer probes, fewer markers), and never more than 8:
		 * the bound of 129 lengths */
		depth = bt_watch_levels(h->nlen[f]) + 2 < 8 ? bt_watch_levels(h->nlen[f]) + 2 : 8;
		h->root[f] = make_tree(h, f, w, 0, h->nlen[f], depth, &depth);
		h->depth[f] = depth;
	}
}

/* The /16 words: per /16, the keys of each length 17..32 under it (their
 * mask, and the heaviest first) and the longest key of 16 bits or fewer
 * over it. */
static int make_dir(const struct bt_watch_key *keys, size_t n, __u32 *dir)
{
	uint8_t *base = malloc(BT_WATCH_DIR);
	uint8_t (*per16)[16] = calloc(BT_WATCH_DIR, sizeof(*per16));

	if (!base || !per16) {
		free(base);
		free(per16);
		return -ENOMEM;
	}
	memset(base, BT_WATCH_NONE, BT_WATCH_DIR);
	for (size_t i = 0; i < n; i++) {
		const struct bt_watch_key *k = &keys[i];
		__u32 l, first, count;

		if (!bt_watch_key_is_v4(k))
			continue;
		l = k->len - BT_WATCH_V4;
		if (l > 16) {
			uint8_t *c = &per16[slash16(k->lo)][l - 17];

			*c += *c < 255;	/* a weight: saturating is enough */
			continue;
		}
		first = slash16(k->lo);
		count = 1u << (16 - l);
		for (__u32 x = first; x < first + count; x++)
			if (base[x] == BT_WATCH_NONE || base[x] < k->len)
				base[x] = k->len;
	}
	for (__u32 x = 0; x < BT_WATCH_DIR; x++) {
		__u32 mask = 0, nl = 0, w[16], root = 0;

		for (__u32 j = 0; j < 16; j++)
			if (per16[x][j]) {
				mask |= 1u << j;
				w[nl++] = per16[x][j];
			}
		/* the /16's first length: its heaviest, any (the medians after
		 * it keep 16 lengths within 5 levels) */
		if (nl)
			root = bt_watch_dir_len(mask, heavy_root(w, 0, nl, 5));
		dir[x] = bt_watch_dir_word(mask, base[x], root);
	}
	free(base);
	free(per16);
	return 0;
}

/* A search over the lengths of an address (or key): the /16's ranks, its
 * first length from the word then medians, or the family's tree. The same
 * steps as bpf/watch.bpf.h's watch_step. */
struct search {
	const struct bt_watch_hdr *h;
	int fam;
	bool dir;
	__u32 mask, first, last, root, root_rank;	/* dir */
	__u32 node;					/* tree */
	__u32 mid;
};

static struct search search_start(const struct bt_watch_hdr *h, const __u32 *dir, bool v4,
				  __u64 lo)
{
	struct search s = { h, !v4, false };

	if (v4 && !(h->flags & BT_WATCH_F_FLAT)) {
		__u32 d = dir[slash16(lo)];

		s.dir = true;
		s.mask = BT_WATCH_DIR_MASK(d);
		s.last = BT_WATCH_DIR_COUNT(d);
		s.root = s.last ? BT_WATCH_DIR_ROOT(d) : 0;
		s.root_rank = bt_watch_dir_root_rank(d);
	} else {
		s.node = h->root[s.fam];
	}
	return s;
}

/* The next length to probe; false when the search is over. */
static bool search_next(struct search *s, __u32 *len)
{
	if (!s->dir) {
		if (s->node == BT_WATCH_NONE)
			return false;
		*len = s->h->len[s->fam][s->node];
		return true;
	}
	if (s->first >= s->last)
		return false;
	s->mid = s->root ? s->root_rank : bt_watch_mid(s->first, s->last);
	*len = s->root ? s->root : bt_watch_dir_len(s->mask, s->mid);
	s->root = 0;
	return true;
}

/* The probe of the last length hit (go longer) or not (shorter). */
static void search_took(struct search *s, bool hit)
{
	if (!s->dir)
		s->node = hit ? s->h->right[s->fam][s->node] : s->h->left[s->fam][s->node];
	else if (hit)
		s->first = s->mid + 1;
	else
		s->last = s->mid;
}

/* Appends the markers of key k: where its search goes longer. */
static int add_markers(const struct bt_watch_hdr *h, const __u32 *dir,
		       const struct bt_watch_key *k, struct bt_watch_key **e, size_t *n,
		       size_t *cap)
{
	bool v4 = bt_watch_key_is_v4(k);
	struct search s;
	__u32 p;

	if (v4 && k->len <= BT_WATCH_V4 + 16 && !(h->flags & BT_WATCH_F_FLAT))
		return 0;	/* its /16 words name it */
	s = search_start(h, dir, v4, k->lo);
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

/* Family, words, length; a key before a marker of the same prefix. */
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

/* Does prefix p cover entry e (same family)? */
static bool covers(const struct bt_watch_key *p, const struct bt_watch_key *e)
{
	__u64 hi = e->hi, lo = e->lo;

	if (p->len > e->len || bt_watch_key_is_v4(p) != bt_watch_key_is_v4(e))
		return false;
	bt_watch_mask(&hi, &lo, p->len);
	return hi == p->hi && lo == p->lo;
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

int bt_watch_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		   unsigned check_bits, uint64_t seed, unsigned flags, struct bt_watch_built *out)
{
	struct bt_watch_hdr lengths = { 0 };
	struct bt_watch_key *e = NULL;
	size_t ne = n, cap = n + 1024, markers = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->dir = malloc(BT_WATCH_DIR * sizeof(*out->dir));
	e = malloc(cap * sizeof(*e));
	if (!out->dir || !e)
		goto fail;
	if (n)
		memcpy(e, keys, n * sizeof(*e));
	family_lengths(keys, n, &lengths);
	lengths.flags = flags;
	if ((err = make_dir(keys, n, out->dir)))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if ((err = add_markers(&lengths, out->dir, &keys[i], &e, &ne, &cap)))
			goto fail;
	qsort(e, ne, sizeof(*e), cmp_entry);
	ne = settle_markers(e, ne);
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
	out->b.hdr.flags = flags;
	out->b.hdr.markers = markers;
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
	w->dir = NULL;
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
	if (!h->keys)
		return 0;
	bt_watch_words(addr, &ah, &al);
	s = search_start(h, v->dir, v4, al);
	if (s.dir)
		best = bt_watch_dir_base(v->dir[slash16(al)]);
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
