// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See bloomier.h. Construction after the paper's section 3: hash each key
 * to four cells (BT_WATCH_WAYS), peel the hypergraph (repeatedly take a
 * cell that one remaining key alone uses; that cell becomes the key's own),
 * then assign cells in the reverse order, each key's own cell last among
 * its four, so that the XOR of its cells spells its fingerprint and which
 * cell is its own. With the four cells in four consecutive segments (the
 * fuse layout) a million keys peel at 1.075 cells a key, where the paper's
 * random hypergraph of three cells a key needs 1.23. */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bloomier.h"

void bt_watch_mask(__u64 *hi, __u64 *lo, __u32 len)
{
	if (len >= 128)
		return;
	if (len >= 64) {
		*lo &= len == 64 ? 0 : ~0ULL << (128 - len);
		return;
	}
	*lo = 0;
	*hi &= len == 0 ? 0 : ~0ULL << (64 - len);
}

void bt_watch_words(const uint8_t addr[16], __u64 *hi, __u64 *lo)
{
	__u64 a, b;

	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	*hi = be64toh(a);
	*lo = be64toh(b);
}

/* Binary fuse sizing (Graf & Lemire, 2022, for four cells a key):
 * max(1.075, 0.77 + 0.305 ln(600000) / ln n) cells a key, in segments of
 * 2^floor(ln n / ln 2.91 - 0.5) cells, at most 2^18 (a million keys:
 * 1.0772 cells a key). */
void bt_bloomier_size(uint32_t n, struct bt_watch_hdr *h)
{
	uint32_t seg_len = 4, segs;
	double factor, want;

	if (n >= 2) {
		int e = (int)floor(log((double)n) / log(2.91) - 0.5);

		seg_len = 1u << (e < 2 ? 2 : e > 18 ? 18 : e);
	}
	factor = n < 2 ? 4 : fmax(1.075, 0.77 + 0.305 * log(600000.0) / log((double)n));
	want = n * factor;
	/* cells = (segments + 3) * seg_len, a key's first cell in the first
	 * segments, rounded up to whole segments */
	segs = (uint32_t)ceil(want / seg_len);
	segs = segs > BT_WATCH_WAYS ? segs - (BT_WATCH_WAYS - 1) : 1;
	h->seg_len = seg_len;
	h->seg_count_len = segs * seg_len;
	h->cells = (segs + BT_WATCH_WAYS - 1) * seg_len;
	h->groups = bt_watch_cell_groups(h->cells);
	h->keys = n;
}

static __u64 key_hash(const struct bt_hash_keys *k, __u64 seed, const struct bt_watch_key *key)
{
	return bt_hash_watch(k, seed, key->hi, key->lo, key->len);
}

/* splitmix64's step: the next seed. */
static __u64 next_seed(__u64 s)
{
	__u64 z = s + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* One peeling: order[t] is the t-th key peeled, own[t] its own cell's
 * index among its four. Returns how many keys it peeled. */
static size_t peel(const struct bt_watch_hdr *h, const __u64 *hash, size_t n, __u32 *deg,
		   __u32 *xkey, __u32 *queue, __u32 *order, uint8_t *own)
{
	size_t head = 0, tail = 0, done = 0;

	memset(deg, 0, h->cells * sizeof(*deg));
	memset(xkey, 0, h->cells * sizeof(*xkey));
	for (size_t i = 0; i < n; i++) {
		__u32 c[BT_WATCH_WAYS];

		bt_watch_cells(hash[i], h->seg_len, h->seg_count_len, c);
		for (int j = 0; j < BT_WATCH_WAYS; j++) {
			deg[c[j]]++;
			xkey[c[j]] ^= (__u32)i;
		}
	}
	for (__u32 c = 0; c < h->cells; c++)
		if (deg[c] == 1)
			queue[tail++] = c;
	while (head < tail) {
		__u32 cell = queue[head++], i, c[BT_WATCH_WAYS];
		uint8_t j = 0;

		if (deg[cell] != 1)
			continue;	/* its key went with another cell */
		i = xkey[cell];
		bt_watch_cells(hash[i], h->seg_len, h->seg_count_len, c);
		while (c[j] != cell)
			j++;
		order[done] = i;
		own[done++] = j;
		for (j = 0; j < BT_WATCH_WAYS; j++) {
			xkey[c[j]] ^= i;
			if (--deg[c[j]] == 1)
				queue[tail++] = c[j];
		}
	}
	return done;
}

int bt_bloomier_build(const struct bt_hash_keys *k, const struct bt_watch_key *keys, size_t n,
		      unsigned check_bits, uint64_t seed, struct bt_bloomier *out)
{
	struct bt_watch_hdr *h = &out->hdr;
	__u64 *hash = NULL;
	__u32 *deg = NULL, *xkey = NULL, *queue = NULL, *order = NULL;
	uint8_t *own = NULL;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (n > UINT32_MAX / 2 || !check_bits || check_bits > BT_WATCH_CHECK_BITS)
		return -EINVAL;
	bt_bloomier_size(n, h);
	h->check_mask = ((1ULL << check_bits) - 1) << 2;
	out->cells = calloc(1, bt_watch_cells_bytes(h));
	hash = malloc((n ? n : 1) * sizeof(*hash));
	deg = malloc(h->cells * sizeof(*deg));
	xkey = malloc(h->cells * sizeof(*xkey));
	queue = malloc(h->cells * sizeof(*queue));
	order = malloc((n ? n : 1) * sizeof(*order));
	own = malloc(n ? n : 1);
	if (!out->cells || !hash || !deg || !xkey || !queue || !order || !own)
		goto out;
	for (err = -EAGAIN; err && out->retries < 64; seed = next_seed(seed)) {
		for (size_t i = 0; i < n; i++)
			hash[i] = key_hash(k, seed, &keys[i]);
		if (peel(h, hash, n, deg, xkey, queue, order, own) == n) {
			h->seed = seed;
			err = 0;
		} else {
			out->retries++;
		}
	}
	if (err)
		goto out;
	/* In reverse peeling order: no key peeled after this one uses its own
	 * cell, and those peeled before it are assigned after it, reading the
	 * cell as this key leaves it. */
	for (size_t t = n; t-- > 0;) {
		__u32 i = order[t], c[BT_WATCH_WAYS], j = own[t];
		__u64 x = bt_watch_fingerprint(hash[i]) ^ ((__u64)j << 8);

		if (keys[i].class_id & BT_WATCH_KEY_MARKER)
			x ^= 1ULL << (BT_WATCH_MARKER_BIT + 8);
		if (keys[i].class_id & BT_WATCH_KEY_LEAF)
			x ^= 1ULL << (BT_WATCH_LEAF_BIT + 8);

		bt_watch_cells(hash[i], h->seg_len, h->seg_count_len, c);
		for (__u32 m = 0; m < BT_WATCH_WAYS; m++)
			if (m != j)
				x ^= bt_watch_cell(out->cells, c[m]);
		bt_watch_cell_set(out->cells, c[j],
				  (x & BT_WATCH_XOR_MASK) | (keys[i].class_id & 0xff));
	}
out:
	free(hash);
	free(deg);
	free(xkey);
	free(queue);
	free(order);
	free(own);
	if (err)
		bt_bloomier_free(out);
	return err;
}

void bt_bloomier_free(struct bt_bloomier *b)
{
	free(b->cells);
	b->cells = NULL;
}

__u32 bt_bloomier_probe(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
			const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own)
{
	__u64 hash, x[BT_WATCH_WAYS];
	__u32 c[BT_WATCH_WAYS], r;

	if (!h->keys)
		return 0;
	hash = bt_hash_watch(k, h->seed, hi, lo, len);
	bt_watch_cells(hash, h->seg_len, h->seg_count_len, c);
	for (int j = 0; j < BT_WATCH_WAYS; j++)
		x[j] = bt_watch_cell(cells, c[j]);
	r = bt_watch_decode(x, hash, h->check_mask);
	if (r && own)
		*own = c[((x[0] ^ x[1] ^ x[2] ^ x[3] ^ bt_watch_fingerprint(hash)) >> 8) & 3];
	return r;
}

__u32 bt_bloomier_get(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
		      const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own)
{
	__u32 r = bt_bloomier_probe(k, h, cells, hi, lo, len, own);

	return r & BT_WATCH_IS_MARKER ? 0 : r & 0xff;
}

__u32 bt_bloomier_member(const struct bt_hash_keys *k, const struct bt_watch_hdr *h,
			 const uint8_t *cells, __u64 hi, __u64 lo, __u32 len, __u32 *own)
{
	struct bt_watch_hdr all = *h;

	/* every check bit the cells hold, whatever the table compares */
	all.check_mask = ((1ULL << BT_WATCH_CHECK_BITS) - 1) << 2;
	return bt_bloomier_get(k, &all, cells, hi, lo, len, own);
}

double bt_bloomier_probe_fpr(const struct bt_watch_hdr *h)
{
	unsigned r = __builtin_popcountll(h->check_mask);

	if (!h->cells)
		return 0;
	/* the marker bit is not checked: half the false hits are markers */
	return ldexp(1.0, -(int)r - 1) * h->keys / h->cells;
}
