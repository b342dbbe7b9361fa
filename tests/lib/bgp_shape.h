/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Watch lists of the shape of public BGP tables, for the tests and make
 * bench: prefix lengths drawn from the shares below, about half of the
 * prefixes placed inside a shorter one (more-specifics), the rest anywhere
 * in the family's unicast space; the same list on every run for a seed.
 *
 * The shares are rounded from the prefix-length distributions of the IPv4
 * and IPv6 tables that the CIDR Report and bgp.potaroo.net publish for
 * 2024 (about 1,000,000 IPv4 prefixes, 60 % of them /24; about 220,000
 * IPv6 prefixes, /48 the most common, mean length 42.9, 57 % of them
 * more-specifics of another). They give the shape, not the table: the
 * README says so where it prints the figures. */
#ifndef BLOOMTAP_BGP_SHAPE_H
#define BLOOMTAP_BGP_SHAPE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <endian.h>
#include <string.h>
#include "core/bloomier.h"
#include "zipf.h"

struct bgp_share {
	uint8_t len;		/* the family's own length (IPv4 /L is L) */
	uint16_t per_10k;	/* prefixes of this length in 10,000 */
};

static const struct bgp_share bgp_v4[] = {
	{ 8, 1 },    { 10, 1 },   { 11, 1 },    { 12, 3 },   { 13, 6 },   { 14, 11 },
	{ 15, 19 },  { 16, 135 }, { 17, 85 },   { 18, 145 }, { 19, 270 }, { 20, 450 },
	{ 21, 550 }, { 22, 1200 }, { 23, 1000 }, { 24, 6123 },
};

static const struct bgp_share bgp_v6[] = {
	{ 19, 1 },   { 20, 2 },   { 22, 2 },   { 23, 2 },   { 24, 5 },   { 26, 2 },
	{ 27, 3 },   { 28, 50 },  { 29, 300 }, { 30, 50 },  { 31, 40 },  { 32, 1200 },
	{ 33, 100 }, { 34, 100 }, { 35, 50 },  { 36, 400 }, { 37, 50 },  { 38, 150 },
	{ 39, 50 },  { 40, 700 }, { 41, 50 },  { 42, 200 }, { 43, 50 },  { 44, 900 },
	{ 45, 150 }, { 46, 300 }, { 47, 200 }, { 48, 4845 }, { 52, 10 }, { 56, 20 },
	{ 60, 5 },   { 64, 13 },
};

/* A length of the family's shares, drawn. */
static inline uint32_t bgp_draw_len(bool v4, uint64_t *rng)
{
	const struct bgp_share *s = v4 ? bgp_v4 : bgp_v6;
	size_t n = v4 ? sizeof(bgp_v4) / sizeof(bgp_v4[0]) : sizeof(bgp_v6) / sizeof(bgp_v6[0]);
	uint32_t total = 0, x;

	for (size_t i = 0; i < n; i++)
		total += s[i].per_10k;
	x = bt_rng(rng) % total;
	for (size_t i = 0; i < n; i++) {
		if (x < s[i].per_10k)
			return s[i].len;
		x -= s[i].per_10k;
	}
	return s[n - 1].len;
}

static inline int bgp_cmp_len(const void *a, const void *b)
{
	return (int)*(const uint32_t *)a - (int)*(const uint32_t *)b;
}

static inline int bgp_cmp_key(const void *a, const void *b)
{
	const struct bt_watch_key *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A prefix of length len (over 128 bits) inside parent (NULL: anywhere in
 * the family's unicast space: IPv4 1.0.0.0 to 223.255.255.255, IPv6
 * 2000::/3), its other bits random. */
static inline void bgp_place(struct bt_watch_key *k, const struct bt_watch_key *parent, bool v4,
			     uint32_t len, uint64_t *rng)
{
	__u64 hi = bt_rng(rng), lo = bt_rng(rng), mh = ~0ULL, ml = ~0ULL;

	if (v4) {
		hi = 0;
		lo = 0xffff00000000ULL | (0x01000000 + bt_rng(rng) % (0xe0000000 - 0x01000000));
	} else {
		hi = 0x2000000000000000ULL | (hi >> 3);
	}
	if (parent) {
		bt_watch_mask(&mh, &ml, parent->len);
		hi = (parent->hi & mh) | (hi & ~mh);
		lo = (parent->lo & ml) | (lo & ~ml);
	}
	bt_watch_mask(&hi, &lo, len);
	*k = (struct bt_watch_key){ hi, lo, len, 0 };
}

/* An address (16 bytes, network order) under key k, its other bits
 * random. */
static inline void bgp_addr_under(const struct bt_watch_key *k, uint8_t a[16], uint64_t *rng)
{
	struct bt_watch_key x;
	__u64 hi, lo;

	bgp_place(&x, k, bt_watch_key_is_v4(k), 128, rng);
	hi = htobe64(x.hi);
	lo = htobe64(x.lo);
	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
}

/* n distinct prefixes of one family in out[] (room for n), classes
 * 1..classes at random; half (more_specific_pct) of them inside a shorter
 * one already made. Sorted by length, then address. */
static inline void bgp_shape_make(struct bt_watch_key *out, size_t n, bool v4,
				  unsigned more_specific_pct, uint32_t classes, uint64_t *rng)
{
	uint32_t *lens = malloc(n * sizeof(*lens));
	size_t have = 0;

	while (have < n) {
		size_t want = n - have;

		for (size_t i = 0; i < want; i++)
			lens[i] = (v4 ? BT_WATCH_V4 : 0) + bgp_draw_len(v4, rng);
		qsort(lens, want, sizeof(*lens), bgp_cmp_len);	/* aggregates first */
		for (size_t i = 0; i < want; i++) {
			struct bt_watch_key *k = &out[have + i], *parent = NULL;

			/* a parent among those made before, if shorter */
			if (have + i && bt_rng(rng) % 100 < more_specific_pct) {
				struct bt_watch_key *p = &out[bt_rng(rng) % (have + i)];

				parent = p->len < lens[i] ? p : NULL;
			}
			bgp_place(k, parent, v4, lens[i], rng);
			k->class_id = 1 + bt_rng(rng) % classes;
		}
		have += want;
		/* distinct: a repeated prefix is drawn again */
		qsort(out, have, sizeof(*out), bgp_cmp_key);
		size_t kept = 0;

		for (size_t i = 0; i < have; i++)
			if (!kept || bgp_cmp_key(&out[kept - 1], &out[i]))
				out[kept++] = out[i];
		have = kept;
	}
	free(lens);
}

#endif
