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
 *     (one pass, no lookup);
 *  4. the Bloomier table of the keys and the markers left (a marker where a
 *     key is, or another marker, is that one).
 * The lookup is bpf/watch.bpf.h's, probe for probe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "watchlpm.h"

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* An IPv4 key's /16 (v4-mapped words: the address is lo's low 32 bits). */
static __u32 slash16(__u64 lo)
{
	return (lo >> 16) & 0xffff;
}

static int make_dir(const struct bt_watch_key *keys, size_t n, __u32 *dir)
{
	uint8_t *base = malloc(BT_WATCH_DIR);

	if (!base)
		return -ENOMEM;
	memset(base, BT_WATCH_NONE, BT_WATCH_DIR);
	memset(dir, 0, BT_WATCH_DIR * sizeof(*dir));
	for (size_t i = 0; i < n; i++) {
		const struct bt_watch_key *k = &keys[i];
		__u32 l, first, count;

		if (!bt_watch_key_is_v4(k))
			continue;
		l = k->len - BT_WATCH_V4;
		if (l > 16) {
			dir[slash16(k->lo)] |= 1u << (l - 17);
			continue;
		}
		first = slash16(k->lo);
		count = 1u << (16 - l);
		for (__u32 x = first; x < first + count; x++)
			if (base[x] == BT_WATCH_NONE || base[x] < k->len)
				base[x] = k->len;
	}
	for (__u32 x = 0; x < BT_WATCH_DIR; x++)
		dir[x] = bt_watch_dir_word(dir[x], base[x]);
	free(base);
	return 0;
}

/* The lengths a key's addresses search: count, and the length of rank r. */
struct lengths {
	const __u8 *six;	/* the header's family's (IPv6, or IPv4 flat) */
	__u32 mask;		/* else IPv4, the /16's */
	__u32 n;
};

static struct lengths lengths_of(const struct bt_watch_hdr *h, const __u32 *dir, bool v4,
				 __u64 lo)
{
	struct lengths s = { h->len[!v4], 0, h->nlen[!v4] };

	if (v4 && !(h->flags & BT_WATCH_F_FLAT)) {
		s.six = NULL;
		s.mask = BT_WATCH_DIR_MASK(dir[slash16(lo)]);
		s.n = bt_watch_pop16(s.mask);
	}
	return s;
}

static __u32 length_at(const struct lengths *s, __u32 r)
{
	return s->six ? s->six[r] : bt_watch_dir_len(s->mask, r);
}

/* Appends the markers of key k: where its search goes longer. */
static int add_markers(const struct bt_watch_hdr *h, const __u32 *dir,
		       const struct bt_watch_key *k, struct bt_watch_key **e, size_t *n,
		       size_t *cap)
{
	bool v4 = bt_watch_key_is_v4(k);
	struct lengths s;
	__u32 lo = 0, hi;

	if (v4 && k->len <= BT_WATCH_V4 + 16 && !(h->flags & BT_WATCH_F_FLAT))
		return 0;	/* its /16 words name it */
	s = lengths_of(h, dir, v4, k->lo);
	hi = s.n;
	while (lo < hi) {
		__u32 mid = bt_watch_mid(lo, hi), p = length_at(&s, mid);
		struct bt_watch_key *m;

		if (p == k->len)
			return 0;
		if (p > k->len) {
			hi = mid;
			continue;
		}
		lo = mid + 1;
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
 * stays) and gives each marker its best match. Returns the entries kept. */
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
		if (x->class_id & BT_WATCH_KEY_MARKER)
			x->class_id = BT_WATCH_KEY_MARKER |
				      (depth ? stack[depth - 1]->len : BT_WATCH_NONE);
		else if (depth < BT_WATCH_LENGTHS)
			stack[depth++] = x;
	}
	return out;
}

static void family_lengths(const struct bt_watch_key *keys, size_t n, struct bt_watch_hdr *h)
{
	bool seen[2][BT_WATCH_LENGTHS] = { { 0 } };

	for (size_t i = 0; i < n; i++)
		seen[!bt_watch_key_is_v4(&keys[i])][keys[i].len] = true;
	h->nlen[0] = h->nlen[1] = 0;
	for (int l = 0; l < BT_WATCH_LENGTHS; l++)
		for (int f = 0; f < 2; f++)
			if (seen[f][l])
				h->len[f][h->nlen[f]++] = l;
}

int bt_watch_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		   unsigned check_bits, uint64_t seed, unsigned flags, struct bt_watch_built *out)
{
	struct bt_watch_hdr lengths = { 0 };
	struct bt_watch_key *e = NULL;
	size_t ne = n, cap = n + 1024, markers = 0;
	double t0 = mono_s();
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
		markers += !!(e[i].class_id & BT_WATCH_KEY_MARKER);
	out->sort_s = mono_s() - t0;
	if ((err = bt_bloomier_build(k, e, ne, check_bits, seed, &out->b)))
		goto fail;
	memcpy(out->b.hdr.nlen, lengths.nlen, sizeof(lengths.nlen));
	memcpy(out->b.hdr.len, lengths.len, sizeof(lengths.len));
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
	struct lengths s;
	__u32 best = BT_WATCH_NONE, cls = 0, lo = 0, hi, r;
	bool known = false;
	__u64 ah, al;

	how = how ? how : &dummy;
	memset(how, 0, sizeof(*how));
	if (!h->keys)
		return 0;
	bt_watch_words(addr, &ah, &al);
	s = lengths_of(h, v->dir, v4, al);
	if (!s.six)
		best = bt_watch_dir_base(v->dir[slash16(al)]);
	for (hi = s.n; lo < hi;) {
		__u32 mid = bt_watch_mid(lo, hi), p = length_at(&s, mid);
		__u64 mh = ah, ml = al;

		bt_watch_mask(&mh, &ml, p);
		r = bt_bloomier_probe(k, h, v->cells, mh, ml, p, NULL);
		how->probes++;
		if (!r) {
			hi = mid;
			continue;
		}
		lo = mid + 1;
		known = !(r & BT_WATCH_IS_MARKER);
		best = known ? p : r & 0xff;
		cls = known ? r & 0xff : 0;
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
