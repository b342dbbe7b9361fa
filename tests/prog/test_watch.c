// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Watch lists: the Bloomier table in user space against an independent
 * answer (the keys sorted, searched longest prefix first), and the real
 * program under BPF_PROG_TEST_RUN against user space. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include "testlib.h"
#include "zipf.h"
#include "core/bloomier.h"
#include "core/digest.h"
#include "core/watchlist.h"
#include "instance/watch.h"
#include "frames.h"
#include "bgp_shape.h"
#include <pthread.h>

#define KEYS 1000000
#define CLASSES 200

static uint64_t rng_state = 0x7a7c4ed;

static uint64_t rng(void)
{
	return bt_rng(&rng_state);
}

/* The reference: every key sorted; an address's class is that of its
 * longest prefix among them, found by binary search length by length. */
struct ref {
	struct bt_watch_key *k;
	size_t n;
	bool has[2][BT_WATCH_LENGTHS];
};

static __u32 ref_find(const struct ref *r, __u64 hi, __u64 lo, __u32 len)
{
	struct bt_watch_key want = { hi, lo, len, 0 }, *f;

	f = bsearch(&want, r->k, r->n, sizeof(*f), bgp_cmp_key);
	return f ? f->class_id : 0;
}

static __u32 ref_classify(const struct ref *r, const uint8_t addr[16], bool v4)
{
	__u64 hi, lo;

	bt_watch_words(addr, &hi, &lo);
	for (int len = BT_WATCH_LENGTHS - 1; len >= 0; len--) {
		__u64 mh = hi, ml = lo;
		__u32 c;

		if (!r->has[!v4][len])
			continue;
		bt_watch_mask(&mh, &ml, len);
		if ((c = ref_find(r, mh, ml, len)))
			return c;
	}
	return 0;
}

static bool key_v4(const struct bt_watch_key *k)
{
	return bt_watch_key_is_v4(k);
}

/* A random address of the family; IPv4 v4-mapped. */
static void random_addr(uint8_t a[16], bool v4)
{
	__u64 hi = rng(), lo = rng();

	if (v4) {
		hi = 0;
		lo = 0xffff00000000ULL | (lo & 0xffffffffULL);
	} else {
		hi = (hi & 0x00000000ffffffffULL) | 0x20010db800000000ULL;	/* 2001:db8::/32 */
	}
	hi = htobe64(hi);
	lo = htobe64(lo);
	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
}

/* The lengths of make_keys: IPv4 hosts and prefixes /8../32, IPv6
 * /32../128 (ANY); /32 and /24, /128 and /64 only (FEW); IPv4 /24../32
 * under 10.0.0.0/8 and IPv6 /64../128 (DEEP: every /16 of 10/8 holds all
 * nine lengths, so searches take markers and several probes, and most of
 * the space is outside). */
enum shape { ANY, FEW, DEEP, TREE };

/* TREE: IPv6 /16../64 (the range tree's), half in 2001:db8::/32 (nested,
 * its ranges close: compact leaves), half anywhere (full ones); IPv4 as
 * DEEP's. */
static __u32 draw_len(enum shape sh, bool v4)
{
	if (sh == TREE && !v4)
		return 16 + rng() % 49;
	if (sh == DEEP || sh == TREE)
		return v4 ? 96 + 24 + rng() % 9 : 64 + rng() % 65;
	if (v4)
		return 96 + (rng() % 3 ? 32 : sh == FEW ? 24 : 8 + rng() % 25);
	return rng() % 3 ? 128 : sh == FEW ? 64 : 32 + rng() % 97;
}

/* A random address of the family for shape sh (DEEP's IPv4 in 10/8). */
static void shape_addr(uint8_t a[16], bool v4, enum shape sh)
{
	random_addr(a, v4);
	if (v4 && (sh == DEEP || sh == TREE))
		a[12] = 10;
	if (!v4 && sh == TREE && rng() % 2) {
		__u64 hi = rng();

		memcpy(a, &hi, 8);
	}
}

/* The reference's keys sorted, each once, and its lengths noted. */
static void ref_settle(struct ref *r)
{
	size_t out = 0;

	qsort(r->k, r->n, sizeof(*r->k), bgp_cmp_key);
	for (size_t i = 0; i < r->n; i++)
		if (!out || bgp_cmp_key(&r->k[out - 1], &r->k[i]))
			r->k[out++] = r->k[i];
	r->n = out;
	memset(r->has, 0, sizeof(r->has));
	for (size_t i = 0; i < r->n; i++)
		r->has[!key_v4(&r->k[i])][r->k[i].len] = true;
}

/* n distinct keys of shape sh. */
static void make_keys(struct ref *r, size_t n, enum shape sh)
{
	r->k = malloc(n * sizeof(*r->k));
	assert_non_null(r->k);
	r->n = 0;
	while (r->n < n) {
		size_t want = n - r->n;

		for (size_t i = 0; i < want; i++) {
			struct bt_watch_key *k = &r->k[r->n + i];
			bool v4 = rng() % 2;
			uint8_t a[16];
			__u32 len = draw_len(sh, v4);

			shape_addr(a, v4, sh);
			bt_watch_words(a, &k->hi, &k->lo);
			bt_watch_mask(&k->hi, &k->lo, len);
			k->len = len;
			k->class_id = 1 + rng() % CLASSES;
		}
		r->n += want;
		ref_settle(r);
	}
}

/* An address under key k: its prefix, the host bits random. */
static void addr_under(const struct bt_watch_key *k, uint8_t a[16])
{
	bgp_addr_under(k, a, &rng_state);
}

static struct bt_hash_keys test_keys(void)
{
	struct bt_hash_key_raw raw = { rng(), rng() };
	struct bt_hash_keys k;

	bt_hash_keys_derive(&raw, &k);
	return k;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A million keys and prefixes of both families in 200 classes: every key
 * answers its class, and an address under every key answers the class of
 * its longest prefix in the list, as the reference says. */
static void test_members_exact(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;
	struct bt_watch_view v;
	struct ref r;
	size_t wrong = 0, under = 0;
	double t0, entry_bits;

	make_keys(&r, KEYS, ANY);
	t0 = now_s();
	assert_int_equal(bt_watch_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 1, 0, &b), 0);
	v = bt_watch_built_view(&b);
	entry_bits = 8.0 * sizeof(struct bt_watch_group) * b.b.hdr.groups / b.b.hdr.keys;
	print_message("%zu keys and %u markers: built in %.2f s (%u retries), %u cells, %.2f "
		      "bits an entry (%.3f of the %d an entry's byte, check, leaf and marker bits "
		      "need)\n", r.n, b.b.hdr.markers, now_s() - t0, b.b.retries, b.b.hdr.cells,
		      entry_bits, entry_bits / (10 + BT_WATCH_CHECK_BITS), 10 + BT_WATCH_CHECK_BITS);
	for (size_t i = 0; i < r.n; i++) {
		const struct bt_watch_key *k = &r.k[i];
		uint8_t a[16];

		/* IPv6's keys in the Bloomier table; IPv4's are ranges */
		if (!key_v4(k))
			wrong += bt_bloomier_get(&hk, &b.b.hdr, b.b.cells, k->hi, k->lo, k->len,
						 NULL) != k->class_id;
		addr_under(k, a);
		wrong += bt_watch_classify(&hk, &v, a, key_v4(k), NULL) !=
			 ref_classify(&r, a, key_v4(k));
		under++;
	}
	print_message("%zu keys and %zu addresses under them: %zu wrong\n", r.n, under, wrong);
	assert_int_equal(wrong, 0);
	/* the fuse layout of four cells an entry: within 1.13 x the byte,
	 * check, leaf and marker bits (the cell's 2 index bits included),
	 * and the 64th byte of each 9 cells' line */
	assert_true(entry_bits <= 1.13 * 64 / 63 * (10 + BT_WATCH_CHECK_BITS));
	bt_watch_built_free(&b);
	free(r.k);
}

/* With 8 check bits, a million addresses outside a list whose searches
 * take several probes and markers (DEEP): for IPv6, the rate of addresses
 * answered a class within 20 % of the formula for the probes the lookups
 * made (each probe 2^-8 / 2 * entries/cells: a false hit is a marker half
 * the time, and a marker's final probe answers nothing here), and under
 * the bound 2^-8 a probe; IPv4's ranges answer none. */
static void test_non_members_rate(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;
	struct bt_watch_view v;
	struct ref r;
	size_t queries = 0, probes = 0, answered = 0, v4_queries = 0, v4_answered = 0;
	double p, expect;

	make_keys(&r, 100000, DEEP);
	assert_int_equal(bt_watch_build(&hk, r.k, r.n, 8, 7, 0, &b), 0);
	v = bt_watch_built_view(&b);
	p = bt_bloomier_probe_fpr(&b.b.hdr);
	/* 1,000,000 lookups: about 7,700 false answers expected, so that the
	 * 20 % margin is 17 standard deviations (10,000,000 took 54 s of the
	 * suite's 76, and four minutes in the 6.1 guest) */
	while (queries < 1000000) {
		struct bt_watch_how how;
		uint8_t a[16];
		bool v4 = rng() % 2;

		shape_addr(a, v4, DEEP);
		if (ref_classify(&r, a, v4))
			continue;	/* a member after all */
		if (v4) {
			v4_queries++;
			v4_answered += bt_watch_classify(&hk, &v, a, v4, &how) != 0;
			continue;
		}
		queries++;
		answered += bt_watch_classify(&hk, &v, a, v4, &how) != 0;
		probes += how.probes;
	}
	expect = probes * p;
	print_message("%zu IPv4 addresses outside: %zu answered a class\n", v4_queries,
		      v4_answered);
	assert_int_equal(v4_answered, 0);
	print_message("%zu addresses outside (%zu keys, %u markers), %zu probes (%.2f a lookup): "
		      "%zu answered a class, %.0f expected (%.3g a probe; bound 2^-8 = %.3g)\n",
		      queries, r.n, b.b.hdr.markers, probes, (double)probes / queries, answered,
		      expect, p, ldexp(1, -8));
	assert_true(b.b.hdr.markers > 0);
	assert_true(fabs(answered - expect) <= 0.2 * expect);
	assert_true(answered <= probes * ldexp(1, -8));
	bt_watch_built_free(&b);
	free(r.k);
}

/* The mutable form: a key's own cell holds its class byte, alone. */
static void test_set_in_place(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_bloomier b;
	struct ref r;
	size_t wrong = 0;

	make_keys(&r, 50000, ANY);
	assert_int_equal(bt_bloomier_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 3, &b), 0);
	for (size_t i = 0; i < r.n; i += 2) {
		__u32 own = ~0u;

		assert_int_not_equal(bt_bloomier_get(&hk, &b.hdr, b.cells, r.k[i].hi, r.k[i].lo,
						     r.k[i].len, &own), 0);
		r.k[i].class_id = 1 + (r.k[i].class_id + 7) % CLASSES;
		b.cells[bt_watch_cell_offset(own)] = r.k[i].class_id;
	}
	for (size_t i = 0; i < r.n; i++)
		wrong += bt_bloomier_get(&hk, &b.hdr, b.cells, r.k[i].hi, r.k[i].lo, r.k[i].len,
					 NULL) != r.k[i].class_id;
	assert_int_equal(wrong, 0);
	bt_bloomier_free(&b);
	free(r.k);
}

/* watch set on IPv4's range table: a prefix's new class reaches the
 * addresses whose longest match it is, and no other: the longer keys under
 * it (DEEP: nine lengths nested in every /16 of 10/8) keep theirs. An
 * unlisted prefix is found nowhere. */
static void test_v4_set_nested(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;
	struct bt_watch_view v;
	struct ref r;
	size_t tried = 0, found = 0, wrong = 0, checked = 0;

	make_keys(&r, 100000, DEEP);
	assert_int_equal(bt_watch_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 5, 0, &b), 0);
	v = bt_watch_built_view(&b);
	for (size_t i = 0; i < r.n; i += 3) {
		struct bt_watch_key *k = &r.k[i];
		__u32 old = 0, to = 1 + (k->class_id + 7) % CLASSES;

		if (!key_v4(k))
			continue;
		tried++;
		if (!bt_watch_v4_set(&b.b.hdr, b.dir, b.b.cells, (__u32)k->lo, k->len - BT_WATCH_V4,
				     (int)to, &old))
			continue;	/* longer keys cover all of it */
		found++;
		assert_int_equal(old, k->class_id);
		k->class_id = to;
	}
	for (size_t i = 0; i < r.n; i++) {
		uint8_t a[16];

		if (!key_v4(&r.k[i]))
			continue;
		addr_under(&r.k[i], a);
		wrong += bt_watch_classify(&hk, &v, a, true, NULL) != ref_classify(&r, a, true);
		checked++;
	}
	print_message("%zu IPv4 keys set to another class (%zu found: the others covered whole "
		      "by longer keys); %zu addresses under every key: %zu wrong\n", tried, found,
		      checked, wrong);
	assert_int_equal(wrong, 0);
	assert_true(found >= tried * 9 / 10);
	{
		__u32 old = 0;

		/* 11.0.0.0/8 holds no key of DEEP's */
		assert_int_equal(bt_watch_v4_set(&b.b.hdr, b.dir, b.b.cells, 0x0b000000, 8, 1, &old),
				 0);
	}
	bt_watch_built_free(&b);
	free(r.k);
}

/* The search's tree is planned on the list's lengths (user/core/watchlpm.c
 * make_tree): 4,000 /48s with nothing under them, and one prefix of each
 * of 28 other lengths elsewhere (in fd00::/8). The /48s' addresses are most
 * of the traffic the plan expects: each must take one probe (the /48 at
 * the root, a leaf); the others, an answer at most the tree's levels
 * deep. */
static void test_search_plan(void **state)
{
	static const uint8_t others[] = { 16, 20, 22, 24, 26, 28, 29, 30, 31, 32, 33, 34, 35, 36,
					  37, 38, 40, 42, 44, 46, 47, 52, 56, 60, 64, 80, 96, 128 };
	const size_t heavy = 4000, n = heavy + sizeof(others);
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;
	struct bt_watch_view v;
	struct bt_watch_how how;
	size_t one = 0;

	assert_non_null(k);
	for (size_t i = 0; i < n; i++) {
		bool h = i < heavy;

		/* the others each in a /16 of its own: none under another */
		k[i] = (struct bt_watch_key){ h ? 0x2000000000000000ULL | rng() >> 3 :
						  0xfd00000000000000ULL |
							  (__u64)(i - heavy + 1) << 48 | rng() >> 16,
					      rng(), h ? 48 : others[i - heavy], 1 + i % 200 };
		bt_watch_mask(&k[i].hi, &k[i].lo, k[i].len);
	}
	assert_int_equal(bt_watch_build(&hk, k, n, BT_WATCH_CHECK_BITS, 1, BT_WATCH_B_V6_SEARCH, &b),
			 0);
	v = bt_watch_built_view(&b);
	for (size_t i = 0; i < n; i++) {
		uint8_t a[16];

		addr_under(&k[i], a);
		assert_int_equal(bt_watch_classify(&hk, &v, a, false, &how), k[i].class_id);
		assert_true(how.probes <= b.b.hdr.depth[1] + 1u);
		one += i < heavy && how.probes == 1;
	}
	print_message("%zu /48s and %zu other lengths: the tree's root /%u, %u levels; %zu of the "
		      "/48s' addresses took one probe\n", heavy, sizeof(others),
		      b.b.hdr.len[1][b.b.hdr.root[1]], b.b.hdr.depth[1], one);
	assert_int_equal(b.b.hdr.len[1][b.b.hdr.root[1]], 48);
	assert_int_equal(one, heavy);
	bt_watch_built_free(&b);
	free(k);
}

/* load's choice for IPv6 (user/core/watchlpm.c choose_v6_tree): 100,000
 * /48s side by side, a gap after every 8 (ranges 1.125 an entry, the tree
 * about 1.12 times the searched table, as the country-shaped list's), in
 * the tree; 100,000 /56s each with a gap after it (the tree twice the
 * table, as the BGP-shaped list's), searched. */
static void test_v6_choice(void **state)
{
	const size_t n = 100000;
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;

	assert_non_null(k);
	for (int gaps = 0; gaps < 2; gaps++) {
		for (size_t i = 0; i < n; i++)
			k[i] = gaps ? (struct bt_watch_key){ (0x20010db8000000ULL + 2 * i) << 8, 0,
							     56, 1 + i % 7 } :
				      (struct bt_watch_key){ (0x20010db80000ULL + i + i / 8) << 16,
							     0, 48, 1 + i % 7 };
		assert_int_equal(bt_watch_build(&hk, k, n, BT_WATCH_CHECK_BITS, 1, 0, &b), 0);
		print_message("%zu %s: IPv6 %s (%u tree elements)\n", n,
			      gaps ? "/56s, a gap after each" : "/48s, a gap after every 8",
			      b.b.hdr.flags & BT_WATCH_F_V6_TREE ? "in the tree" : "searched",
			      b.b.hdr.v6_elems);
		assert_int_equal(!!(b.b.hdr.flags & BT_WATCH_F_V6_TREE), !gaps);
		bt_watch_built_free(&b);
	}
	free(k);
}

/* IPv6's range tree (every prefix /64 or shorter): an address under each
 * key, and 200,000 anywhere, answer as the reference says, through
 * compact leaves and full ones; then watch set gives a third of the keys
 * another class, which reaches the addresses whose longest match each is
 * and no other; an unlisted prefix is found nowhere. */
static void test_v6_tree(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_built b;
	struct bt_watch_view v;
	struct bt_watch_how how;
	struct ref r;
	size_t compact = 0, leaves, checked = 0, wrong = 0, tried = 0, found = 0;
	const struct bt_watch_group *t;

	make_keys(&r, 100000, TREE);
	/* a key at the top of the space, which the right edge's lookups find */
	assert_non_null(r.k = realloc(r.k, (r.n + 1) * sizeof(*r.k)));
	r.k[r.n++] = (struct bt_watch_key){ ~0ULL << 8, 0, 56, 7 };
	ref_settle(&r);
	assert_int_equal(bt_watch_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 3, BT_WATCH_B_V6_TREE,
					&b), 0);
	assert_true(b.b.hdr.flags & BT_WATCH_F_V6_TREE);
	v = bt_watch_built_view(&b);
	t = (const struct bt_watch_group *)b.b.cells + b.b.hdr.v6_at[b.b.hdr.v6_levels];
	leaves = b.b.hdr.v6_nodes[b.b.hdr.v6_levels];
	for (size_t x = 0; x < leaves; x++)
		compact += t[x].tc.compact;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r.n; i++) {
			uint8_t a[16];
			bool v4 = key_v4(&r.k[i]);

			addr_under(&r.k[i], a);
			wrong += bt_watch_classify(&hk, &v, a, v4, &how) != ref_classify(&r, a, v4);
			checked++;
			if (!v4)
				assert_int_equal(how.probes, b.b.hdr.v6_levels + 1);
		}
		for (int i = 0; i < 200000; i++) {
			uint8_t a[16];

			shape_addr(a, false, TREE);
			wrong += bt_watch_classify(&hk, &v, a, false, NULL) != ref_classify(&r, a, false);
			checked++;
		}
		{
			/* the last /64 of the space: past every level's last
			 * key (the tree's right edge) */
			uint8_t a[16];

			memset(a, 0xff, sizeof(a));
			wrong += bt_watch_classify(&hk, &v, a, false, NULL) != ref_classify(&r, a, false);
			checked++;
		}
		if (pass)
			break;
		for (size_t i = 0; i < r.n; i += 3) {
			struct bt_watch_key *k = &r.k[i];
			__u32 old = 0, to = 1 + (k->class_id + 7) % CLASSES;

			if (key_v4(k))
				continue;
			tried++;
			if (!bt_watch_v6_set(&b.b.hdr, b.b.cells, k->hi, k->len, (int)to, &old))
				continue;	/* longer keys cover all of it */
			found++;
			assert_int_equal(old, k->class_id);
			k->class_id = to;
		}
	}
	print_message("%u IPv6 ranges in %zu leaves (%zu compact), %u levels above; %zu IPv6 keys "
		      "set to another class (%zu found); %zu addresses, before and after: %zu wrong\n",
		      b.b.hdr.v6_ranges, leaves, compact, b.b.hdr.v6_levels, tried, found, checked,
		      wrong);
	assert_int_equal(wrong, 0);
	assert_true(compact > 0 && compact < leaves);
	assert_true(found >= tried * 9 / 10);
	{
		__u32 old = 0;

		/* 3fff::/16 holds no key of TREE's; a /80 is never the tree's */
		assert_int_equal(bt_watch_v6_set(&b.b.hdr, b.b.cells, 0x3fffULL << 48, 16, 1, &old),
				 0);
		assert_int_equal(bt_watch_v6_set(&b.b.hdr, b.b.cells, 0x20010db800000000ULL, 80, 1,
						 &old), 0);
	}
	bt_watch_built_free(&b);
	free(r.k);
}

/* A table of no key, and of one. */
static void test_tiny_tables(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_key one = { 0, 0xffffc6120000ULL, 96 + 15, 9 };
	struct bt_watch_built b;
	struct bt_watch_view v;
	uint8_t a[16] = { [10] = 0xff, [11] = 0xff, 198, 19, 1, 2 };

	assert_int_equal(bt_watch_build(&hk, NULL, 0, BT_WATCH_CHECK_BITS, 1, 0, &b), 0);
	v = bt_watch_built_view(&b);
	assert_int_equal(b.b.hdr.keys, 0);
	assert_int_equal(bt_watch_classify(&hk, &v, a, true, NULL), 0);
	bt_watch_built_free(&b);
	assert_int_equal(bt_watch_build(&hk, &one, 1, BT_WATCH_CHECK_BITS, 1, 0, &b), 0);
	v = bt_watch_built_view(&b);
	assert_int_equal(bt_watch_classify(&hk, &v, a, true, NULL), 9);
	a[12] = 10;
	assert_int_equal(bt_watch_classify(&hk, &v, a, true, NULL), 0);
	bt_watch_built_free(&b);
	/* IPv6's tree of one range (::/0), and of a /64 at the top of the
	 * space: the last address answers */
	struct bt_watch_key all = { 0, 0, 0, 4 }, top = { ~0ULL, 0, 64, 5 };
	uint8_t last[16];

	memset(last, 0xff, sizeof(last));
	assert_int_equal(bt_watch_build(&hk, &all, 1, BT_WATCH_CHECK_BITS, 1, BT_WATCH_B_V6_TREE,
					&b), 0);
	assert_true(b.b.hdr.flags & BT_WATCH_F_V6_TREE);
	v = bt_watch_built_view(&b);
	assert_int_equal(bt_watch_classify(&hk, &v, last, false, NULL), 4);
	bt_watch_built_free(&b);
	assert_int_equal(bt_watch_build(&hk, &top, 1, BT_WATCH_CHECK_BITS, 1, BT_WATCH_B_V6_TREE,
					&b), 0);
	assert_true(b.b.hdr.flags & BT_WATCH_F_V6_TREE);
	v = bt_watch_built_view(&b);
	assert_int_equal(bt_watch_classify(&hk, &v, last, false, NULL), 5);
	last[7] = 0xfe;
	assert_int_equal(bt_watch_classify(&hk, &v, last, false, NULL), 0);
	bt_watch_built_free(&b);
}

/* ---- through the datapath ---- */

/* A list in memory: key i gets class name "c<class_id>". */
static void list_of(const struct ref *r, struct bt_watch_list *l)
{
	memset(l, 0, sizeof(*l));
	l->e = calloc(r->n ? r->n : 1, sizeof(*l->e));
	assert_non_null(l->e);
	l->n = r->n;
	for (__u32 c = 1; c <= CLASSES; c++)
		snprintf(l->names[c], sizeof(l->names[c]), "c%u", c);
	l->nclasses = CLASSES;
	for (size_t i = 0; i < r->n; i++) {
		l->e[i].key = r->k[i];
		l->entries[r->k[i].class_id]++;
	}
}

/* An Ethernet frame from src to dst (16-byte addresses, v4-mapped for
 * IPv4; both of one family), UDP. */
static void frame_between(struct frame *f, const uint8_t src[16], const uint8_t dst[16], bool v4)
{
	size_t ip;

	f->len = 0;
	if (v4) {
		fr_eth(f, 0x0800);
		ip = fr_ipv4(f, 17, 5, 0);
		memcpy(f->b + ip + 12, src + 12, 4);
		memcpy(f->b + ip + 16, dst + 12, 4);
		fr_ports(f, 1000, 2000, 8);
		fr_ipv4_done(f, ip);
	} else {
		fr_eth(f, 0x86dd);
		ip = fr_ipv6(f, 17);
		memcpy(f->b + ip + 8, src, 16);
		memcpy(f->b + ip + 24, dst, 16);
		fr_ports(f, 1000, 2000, 8);
		fr_ipv6_done(f, ip);
	}
}

/* The ids of the instance's classes by name ("c7" -> its id). */
static __u32 id_of(const struct bt_instance *inst, const char *name)
{
	struct bt_watch_class names[BT_WATCH_CLASSES];

	assert_int_equal(bt_watch_classes(inst, names), 0);
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++)
		if (!strcmp(names[id].name, name))
			return id;
	return 0;
}

/* The instance's id of each reference class ("c<class>"), every one given. */
static void class_ids(const struct bt_instance *inst, __u32 id[CLASSES + 1])
{
	char name[16];

	id[0] = 0;
	for (__u32 c = 1; c <= CLASSES; c++) {
		snprintf(name, sizeof(name), "c%u", c);
		id[c] = id_of(inst, name);
		assert_int_not_equal(id[c], 0);
	}
}

/* Dense /16s, where the range table's index search is long: every host
 * of 198.18.0.0/16, and 4,000 prefixes /26 to /32 in 198.19.0.0/16 (with a
 * /16 over them). 100,000 addresses in 198.18.0.0/15 answer as the
 * reference says, in user space and through the datapath (the datapath
 * guesses a wide /16's line, then searches). */
static void test_dense_slash16(void **state)
{
	struct bt_instance inst;
	struct bt_instance_cfg cfg = { 0 };
	struct bt_watch_list l;
	struct bt_watch_loaded w;
	struct bt_watch_table t;
	struct bt_watch_count n[BT_WATCH_CLASSES];
	uint64_t want[BT_WATCH_CLASSES] = { 0 };
	struct ref r = { .n = 0 };
	__u32 id[CLASSES + 1];
	uint8_t dst[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 };
	size_t wrong = 0;

	skip_unless_root();
	r.k = malloc(70000 * sizeof(*r.k));
	assert_non_null(r.k);
	for (__u32 i = 0; i < 65536; i++)
		r.k[r.n++] = (struct bt_watch_key){ 0, 0xffffc6120000ULL | i, 128, 1 + rng() % CLASSES };
	r.k[r.n++] = (struct bt_watch_key){ 0, 0xffffc6130000ULL, 96 + 16, 1 + rng() % CLASSES };
	for (int i = 0; i < 4000; i++) {
		struct bt_watch_key k = { 0, 0xffffc6130000ULL | (rng() & 0xffff), 96 + 26 + rng() % 7,
					  1 + rng() % CLASSES };

		bt_watch_mask(&k.hi, &k.lo, k.len);
		r.k[r.n++] = k;
	}
	ref_settle(&r);
	list_of(&r, &l);
	assert_int_equal(bt_instance_create(own_instance("dense"), &cfg, &inst), 0);
	assert_int_equal(bt_watch_load(&inst, &l, BT_WATCH_CHECK_BITS, &w), 0);
	class_ids(&inst, id);
	assert_int_equal(bt_watch_table_open(&inst, false, &t), 0);
	for (int i = 0; i < 100000; i++) {
		uint8_t a[16] = { [10] = 0xff, [11] = 0xff, 198, 18 + rng() % 2 };
		struct frame f;
		__u32 act, cls;

		a[14] = rng();
		a[15] = rng();
		cls = bt_watch_table_classify(&t, a, true, NULL);
		wrong += cls != id[ref_classify(&r, a, true)];
		want[cls]++;
		frame_between(&f, a, dst, true);
		assert_int_equal(bt_run_frame(inst.prog_fd, f.b, f.len, &act), 0);
	}
	bt_watch_table_close(&t);
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, n), 0);
	for (__u32 c = 1; c < BT_WATCH_CLASSES; c++)
		assert_int_equal(n[c].packets[0], want[c]);
	print_message("%zu entries, %zu ranges in %zu lines, at most %u reads; 100000 addresses: "
		      "%zu wrong in user space, the datapath's counts equal\n", r.n, w.ranges,
		      w.lines, w.probes[0], wrong);
	assert_int_equal(wrong, 0);
	bt_watch_list_free(&l);
	bt_instance_close(&inst);
	free(r.k);
}

/* watch set decides membership on all the check bits: with a table of 8
 * (--check-bits 8), keys outside the list that the table answers for are
 * refused, and the listed keys keep their classes. Before, set used the
 * table's 8 bits and one such key overwrote a listed key's class byte. */
static void test_set_refuses_outsiders(void **state)
{
	struct bt_instance inst;
	struct bt_instance_cfg cfg = { 0 };
	struct bt_watch_list l;
	struct bt_watch_loaded w;
	struct bt_watch_table t;
	struct ref r;
	size_t tried = 0, passed = 0, v4_refused = 0;
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	skip_unless_root();
	make_keys(&r, 20000, FEW);
	list_of(&r, &l);
	assert_int_equal(bt_instance_create(own_instance("set"), &cfg, &inst), 0);
	assert_int_equal(bt_watch_load(&inst, &l, 8, &w), 0);
	assert_int_equal(bt_watch_table_open(&inst, false, &t), 0);
	dup2(null, 2);	/* each refusal says why on stderr */
	while (passed < 10 && tried < 10000000) {
		struct bt_watch_key k = { 0 };
		uint8_t a[16];
		char s[64];
		bool v4 = rng() % 2;

		random_addr(a, v4);
		bt_watch_words(a, &k.hi, &k.lo);
		k.len = v4 ? 128 : 64;
		bt_watch_mask(&k.hi, &k.lo, k.len);
		tried++;
		if (v4 && v4_refused < 10 && !ref_find(&r, k.hi, k.lo, k.len)) {
			/* IPv4's ranges: exact, any outsider refused */
			bt_watch_key_str(&k, s, sizeof(s));
			assert_int_equal(bt_watch_set(&inst, s, "intruder"), -ENOENT);
			v4_refused++;
		}
		if (ref_find(&r, k.hi, k.lo, k.len) ||
		    !bt_bloomier_get(&t.keys, &t.hdr, t.cells, k.hi, k.lo, k.len, NULL))
			continue;	/* listed, or the table says none anyway */
		passed++;	/* the table's 8 bits let it through */
		bt_watch_key_str(&k, s, sizeof(s));
		assert_int_equal(bt_watch_set(&inst, s, "intruder"), -ENOENT);
	}
	dup2(saved, 2);
	close(saved);
	close(null);
	bt_watch_table_close(&t);
	print_message("%zu keys outside the list tried, %zu answered by the 8-bit table: each "
		      "refused by set (and %zu IPv4 ones)\n", tried, passed, v4_refused);
	assert_int_equal(passed, 10);
	assert_int_equal(v4_refused, 10);
	__u32 id[CLASSES + 1];

	class_ids(&inst, id);
	assert_int_equal(bt_watch_table_open(&inst, false, &t), 0);
	for (size_t i = 0; i < r.n; i++) {
		uint8_t a[16];

		/* IPv4's ranges are exact; IPv6's lookups at 8 check bits may
		 * not be: its keys' own cells */
		addr_under(&r.k[i], a);
		if (key_v4(&r.k[i]))
			assert_int_equal(bt_watch_table_classify(&t, a, true, NULL),
					 id[ref_classify(&r, a, true)]);
		else
			assert_int_equal(bt_bloomier_get(&t.keys, &t.hdr, t.cells, r.k[i].hi,
							 r.k[i].lo, r.k[i].len, NULL),
					 id[r.k[i].class_id]);
	}
	bt_watch_table_close(&t);
	bt_watch_list_free(&l);
	bt_instance_close(&inst);
	free(r.k);
}

/* A million keys loaded into a real instance: for 40,000 of them, a frame
 * from an address under the key to a fixed address of its family; the
 * datapath's per-class source and destination counts must equal user
 * space's classification of the same addresses. Then 'set' moves a key to
 * another class and the datapath follows. */
static void test_datapath_agrees(void **state)
{
	struct bt_instance inst;
	struct bt_instance_cfg cfg = { 0 };
	struct bt_watch_list l;
	struct bt_watch_loaded w;
	struct bt_watch_table t;
	struct bt_watch_count n[BT_WATCH_CLASSES];
	uint64_t want[BT_WATCH_CLASSES] = { 0 }, want_dst[BT_WATCH_CLASSES] = { 0 }, frames = 0;
	uint8_t outside4[16], outside6[16];
	struct ref r;

	skip_unless_root();
	make_keys(&r, KEYS, ANY);
	list_of(&r, &l);
	/* one destination a family (the list's /8s cover every IPv4 address:
	 * its class is counted too) */
	random_addr(outside4, true);
	random_addr(outside6, false);
	assert_int_equal(bt_instance_create(own_instance("watch"), &cfg, &inst), 0);
	assert_int_equal(bt_watch_load(&inst, &l, BT_WATCH_CHECK_BITS, &w), 0);
	print_message("loaded %zu keys: %.2f bits a key, built in %.2f s\n", w.keys,
		      w.bits_per_key, w.build_s);
	assert_int_equal(bt_watch_table_open(&inst, false, &t), 0);
	__u32 id[CLASSES + 1];

	class_ids(&inst, id);
	for (size_t i = 0; i < r.n; i += r.n / 40000) {
		struct frame f;
		uint8_t a[16];
		bool v4 = key_v4(&r.k[i]);
		__u32 act, cls;

		addr_under(&r.k[i], a);
		cls = bt_watch_table_classify(&t, a, v4, NULL);
		assert_int_equal(cls, id[ref_classify(&r, a, v4)]);
		want[cls]++;
		want_dst[bt_watch_table_classify(&t, v4 ? outside4 : outside6, v4, NULL)]++;
		frame_between(&f, a, v4 ? outside4 : outside6, v4);
		assert_int_equal(bt_run_frame(inst.prog_fd, f.b, f.len, &act), 0);
		frames++;
	}
	bt_watch_table_close(&t);
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, n), 0);
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++) {
		assert_int_equal(n[id].packets[0], want[id]);
		assert_int_equal(n[id].packets[1], want_dst[id]);
	}
	assert_int_equal(want[0], 0);	/* every address under a key has a class */
	print_message("%llu frames: each class's count as user space classified them\n",
		      (unsigned long long)frames);

	/* set: a host key (no longer key covers its address) to another class,
	 * in place; its next frame counts there */
	size_t h = 0;

	while (r.k[h].len != 128)
		h++;
	const char *to = r.k[h].class_id == 1 ? "c2" : "c1";
	char key[64];
	struct frame f;
	uint8_t a[16];
	__u64 hi = htobe64(r.k[h].hi), lo = htobe64(r.k[h].lo);
	__u32 act, before;

	bt_watch_key_str(&r.k[h], key, sizeof(key));
	assert_int_equal(bt_watch_set(&inst, key, to), 0);
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, n), 0);
	before = n[id_of(&inst, to)].packets[0];
	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
	frame_between(&f, a, key_v4(&r.k[h]) ? outside4 : outside6, key_v4(&r.k[h]));
	assert_int_equal(bt_run_frame(inst.prog_fd, f.b, f.len, &act), 0);
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, n), 0);
	assert_int_equal(n[id_of(&inst, to)].packets[0], before + 1);
	assert_int_not_equal(bt_watch_set(&inst, "192.0.2.77/32", "c1"), 0);	/* not listed */

	bt_watch_list_free(&l);
	bt_instance_close(&inst);
	free(r.k);
}

/* ---- a real-shaped list: BGP-shaped prefixes and ranges, written as a
 * list file, read by the real parser, loaded into a real instance ---- */

typedef unsigned __int128 u128;

static u128 key_first(const struct bt_watch_key *k)
{
	return (u128)k->hi << 64 | k->lo;
}

static u128 key_last(const struct bt_watch_key *k)
{
	return k->len >= 128 ? key_first(k) : key_first(k) | (((u128)1 << (128 - k->len)) - 1);
}

static void addr_of(u128 v, uint8_t a[16])
{
	__u64 hi = htobe64((__u64)(v >> 64)), lo = htobe64((__u64)v);

	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
}

/* The reference: the list's lines as intervals (a prefix its span, a
 * range its ends), flattened into disjoint segments each of the innermost
 * interval over it (prefixes nest; the ranges lie apart from everything),
 * searched by address. Not the code under test: no prefix, no length. */
struct segment {
	u128 first, last;
	uint32_t cls;	/* the line's class number (c<cls>) */
};

struct flat {
	struct segment *s;
	size_t n;
};

static int cmp_interval(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->last > y->last ? -1 : x->last < y->last;	/* outer first */
}

static void flat_emit(struct flat *f, u128 first, u128 last, uint32_t cls)
{
	if (first <= last)
		f->s[f->n++] = (struct segment){ first, last, cls };
}

static void flatten(struct segment *iv, size_t n, struct flat *f)
{
	struct segment *stack = malloc((n + 1) * sizeof(*stack));
	size_t depth = 0;
	u128 pos = 0;

	f->s = malloc((2 * n + 1) * sizeof(*f->s));
	f->n = 0;
	assert_non_null(stack);
	assert_non_null(f->s);
	qsort(iv, n, sizeof(*iv), cmp_interval);
	for (size_t i = 0; i <= n; i++) {
		/* close what ends before interval i (all, at the end) */
		while (depth && (i == n || stack[depth - 1].last < iv[i].first)) {
			struct segment *t = &stack[--depth];

			flat_emit(f, pos, t->last, t->cls);
			pos = t->last + 1;
		}
		if (i == n)
			break;
		if (depth)
			flat_emit(f, pos, iv[i].first - 1, stack[depth - 1].cls);
		pos = iv[i].first;
		stack[depth++] = iv[i];
	}
	free(stack);
}

static uint32_t flat_find(const struct flat *f, u128 v)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->s[mid].last < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->s[lo].first <= v ? f->s[lo].cls : 0;
}

/* A random value in first..last. */
static u128 value_in(u128 first, u128 last)
{
	u128 span = last - first, r = (u128)rng() << 64 | rng();

	return span == ~(u128)0 ? r : first + r % (span + 1);
}

static void put_addr(FILE *fp, u128 v, bool v4)
{
	uint8_t a[16];
	char s[INET6_ADDRSTRLEN];

	addr_of(v, a);
	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? a + 12 : a, s, sizeof(s));
	fputs(s, fp);
}

/* 600,000 IPv4 and 400,000 IPv6 prefixes of BGP shape, 2,000 IPv4 ranges
 * in 240.0.0.0/5 and 500 IPv6 ranges in fc00::/8 (apart from the
 * prefixes and from each other), 200 classes: every entry of the list as
 * read (the ranges' CIDRs among them) answers its class, and its first
 * address and an address under it answer the reference's class, in user
 * space and through the datapath (per class and direction, a frame from
 * each entry's first address to an address under it); then a million
 * addresses anywhere in the families. */
static void real_shape(bool tree)
{
	const size_t n4 = 600000, n6 = 400000, r4 = 2000, r6 = 500;
	struct bt_watch_key *k = malloc((n4 + n6) * sizeof(*k));
	struct segment *iv = malloc((n4 + n6 + r4 + r6) * sizeof(*iv));
	char path[] = "/tmp/bt-watch-real-XXXXXX", err[BT_WATCH_ERR_LEN];
	uint64_t want[2][BT_WATCH_CLASSES] = { { 0 } };
	struct bt_watch_count cnt[BT_WATCH_CLASSES];
	struct bt_instance inst;
	struct bt_instance_cfg cfg = { 0 };
	struct bt_watch_loaded w;
	struct bt_watch_table t;
	struct bt_watch_list l;
	struct flat ref;
	size_t niv = 0, wrong_key = 0, wrong_addr = 0, ranges_cidrs = 0;
	__u32 id[CLASSES + 1];
	int fd = mkstemp(path);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

	skip_unless_root();
	assert_non_null(k);
	assert_non_null(iv);
	assert_non_null(fp);
	bgp_shape_make(k, n4, true, 50, CLASSES, &rng_state);
	bgp_shape_make(k + n4, n6, false, 57, CLASSES, &rng_state);
	for (size_t i = 0; i < n4 + n6; i++) {
		bool v4 = bt_watch_key_is_v4(&k[i]);

		put_addr(fp, key_first(&k[i]), v4);
		fprintf(fp, "/%u c%u\n", v4 ? k[i].len - 96 : k[i].len, k[i].class_id);
		iv[niv++] = (struct segment){ key_first(&k[i]), key_last(&k[i]), k[i].class_id };
	}
	/* ranges: each in its own slice of the region, so none overlap */
	for (int v6 = 0; v6 <= 1; v6++) {
		size_t nr = v6 ? r6 : r4;
		u128 base = v6 ? (u128)0xfc00000000000000ULL << 64 :
				 ((u128)0xffff << 32) | 0xf0000000u;
		u128 slice = v6 ? ((u128)1 << 120) / nr : ((u128)1 << 27) / nr;

		for (size_t i = 0; i < nr; i++) {
			u128 a = value_in(base + i * slice, base + (i + 1) * slice - 1);
			u128 b = value_in(a, base + (i + 1) * slice - 1);
			uint32_t cls = 1 + rng() % CLASSES;

			if (v6 && tree) {
				/* whole /64s: their CIDRs the tree's */
				a &= ~(u128)0 << 64;
				b |= ((u128)1 << 64) - 1;
			}

			put_addr(fp, a, !v6);
			fputc('-', fp);
			put_addr(fp, b, !v6);
			fprintf(fp, " c%u\n", cls);
			iv[niv++] = (struct segment){ a, b, cls };
		}
	}
	fclose(fp);
	flatten(iv, niv, &ref);
	assert_int_equal(bt_watch_list_read(path, &l, err, sizeof(err)), 0);
	unlink(path);
	for (size_t i = 0; i < l.n; i++)
		ranges_cidrs += l.e[i].line > n4 + n6;
	assert_int_equal(bt_instance_create(own_instance("real"), &cfg, &inst), 0);
	assert_int_equal(bt_watch_load_flags(&inst, &l, BT_WATCH_CHECK_BITS,
					     tree ? BT_WATCH_B_V6_TREE : BT_WATCH_B_V6_SEARCH, &w),
			 0);
	assert_int_equal(w.v6_tree, tree);
	print_message("%zu entries (%zu of them CIDRs of %zu ranges), %zu markers: built in %.2f "
		      "s, at most %u lines an IPv4 address, %u %s an IPv6 one\n", l.n, ranges_cidrs,
		      r4 + r6, w.markers, w.build_s, w.probes[0], w.probes[1],
		      tree ? "lines of the range tree" : "probes");
	assert_true(l.n >= 1000000);
	class_ids(&inst, id);
	assert_int_equal(bt_watch_table_open(&inst, false, &t), 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct bt_watch_key *e = &l.e[i].key;
		bool v4 = bt_watch_key_is_v4(e);
		uint32_t cls = atoi(l.names[e->class_id] + 1);
		u128 first = key_first(e), under = value_in(first, key_last(e));
		uint8_t a[16], b[16];
		struct frame f;
		__u32 act;

		/* IPv6's keys in the Bloomier table (IPv4's ranges: the
		 * addresses below) */
		wrong_key += !v4 && !tree &&
			     bt_bloomier_get(&t.keys, &t.hdr, t.cells, e->hi, e->lo, e->len,
					     NULL) != id[cls];
		addr_of(first, a);
		addr_of(under, b);
		wrong_addr += bt_watch_table_classify(&t, a, v4, NULL) != id[flat_find(&ref, first)];
		wrong_addr += bt_watch_table_classify(&t, b, v4, NULL) != id[flat_find(&ref, under)];
		want[0][id[flat_find(&ref, first)]]++;
		want[1][id[flat_find(&ref, under)]]++;
		frame_between(&f, a, b, v4);
		assert_int_equal(bt_run_frame(inst.prog_fd, f.b, f.len, &act), 0);
	}
	print_message("%zu entries: %zu IPv6 keys answered another class; their first addresses and "
		      "an address under each: %zu wrong in user space\n", l.n, wrong_key, wrong_addr);
	assert_int_equal(wrong_key, 0);
	assert_int_equal(wrong_addr, 0);
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, cnt), 0);
	for (__u32 c = 1; c < BT_WATCH_CLASSES; c++) {
		assert_int_equal(cnt[c].packets[0], want[0][c]);
		assert_int_equal(cnt[c].packets[1], want[1][c]);
	}
	print_message("%zu frames through the datapath: each class's source and destination "
		      "counts as the reference\n", l.n);
	/* anywhere: members and not */
	for (int i = 0; i < 1000000; i++) {
		bool v4 = i % 2;
		u128 v = v4 ? value_in(((u128)0xffff << 32), ((u128)0xffff << 32) | 0xffffffffu) :
			      value_in((u128)0x2000000000000000ULL << 64, ~(u128)0);
		uint8_t a[16];

		addr_of(v, a);
		wrong_addr += bt_watch_table_classify(&t, a, v4, NULL) != id[flat_find(&ref, v)];
	}
	print_message("a million addresses anywhere: %zu wrong\n", wrong_addr);
	assert_int_equal(wrong_addr, 0);
	bt_watch_table_close(&t);
	bt_watch_list_free(&l);
	bt_instance_close(&inst);
	free(ref.s);
	free(iv);
	free(k);
}

static void test_real_shape_exact(void **state)
{
	real_shape(false);
}

/* The same list (its IPv6 ranges of whole /64s) with IPv6 in the range
 * tree. */
static void test_real_shape_tree(void **state)
{
	real_shape(true);
}

/* Swaps under traffic: two CPUs send frames from key X, which table A
 * gives class a and table B class b, from key Y, class c in A and not in
 * B, and from the IPv6 address X6, a in A (its /48 under a /80 of c: a
 * tree of two lengths) and b in B (a leaf /128 beside a /32 of c), while
 * the tables are loaded in turn (each names a, b and c, so the classes and
 * their counts live on). Every packet of X and X6 is counted in a or b;
 * of Y in c or nowhere; nothing anywhere else. */
struct sender {
	int prog_fd, cpu;
	struct frame f[3];	/* [0] listed in both, [1] in A only, [2] X6 */
	volatile bool *stop;
	uint64_t sent[3];
	int err;
};

static void *send_frames(void *arg)
{
	struct sender *s = arg;
	__u32 act;

	s->err = pin_to_cpu(s->cpu);
	while (!s->err && !*s->stop)
		for (int i = 0; i < 3 && !s->err; i++) {
			s->err = bt_run_frame(s->prog_fd, s->f[i].b, s->f[i].len, &act);
			s->sent[i]++;
		}
	return NULL;
}

static void test_swaps_under_traffic(void **state)
{
	struct bt_instance inst;
	struct bt_instance_cfg cfg = { 0 };
	struct bt_watch_list a = { 0 }, b = { 0 };
	struct bt_watch_loaded w;
	struct bt_watch_count n[BT_WATCH_CLASSES];
	volatile bool stop = false;
	struct sender s[2];
	uint8_t both[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 7, 7 };
	uint8_t onlya[16] = { [10] = 0xff, [11] = 0xff, 198, 19, 8, 8 };
	uint8_t dst[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 };
	pthread_t th[2];
	int loads = 0;

	skip_unless_root();
	skip_unless_two_cpus();
	/* A = {X: a, Y: c, W: b, X6's /48: a, V6: c},
	 * B = {X: b, Z: c, W: a, X6: b, U6: c}; W, Z, V6, U6 see no traffic */
	uint8_t z[16] = { [10] = 0xff, [11] = 0xff, 203, 0, 113, 0 }, w4[16] = { [10] = 0xff,
		[11] = 0xff, 10, 0, 0, 0 };
	uint8_t x6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7 };
	uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 1 };
	uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, [15] = 1 };
	const uint8_t *addr_a[5] = { both, onlya, w4, x6, v6 }, *addr_b[5] = { both, z, w4, x6, x6 };
	const char *cls_a[5] = { "a", "c", "b", "a", "c" }, *cls_b[5] = { "b", "c", "a", "b", "c" };
	__u32 len_a[5] = { 128, 96 + 16, 96 + 8, 48, 80 }, len_b[5] = { 128, 96 + 24, 96 + 8, 128, 32 };

	for (int t = 0; t < 2; t++) {
		struct bt_watch_list *l = t ? &b : &a;

		l->e = calloc(5, sizeof(*l->e));
		l->n = 5;
		for (int i = 0; i < 5; i++) {
			struct bt_watch_key *k = &l->e[i].key;

			bt_watch_words(t ? addr_b[i] : addr_a[i], &k->hi, &k->lo);
			k->len = t ? len_b[i] : len_a[i];
			bt_watch_mask(&k->hi, &k->lo, k->len);
			strcpy(l->names[i + 1], t ? cls_b[i] : cls_a[i]);
			k->class_id = i + 1;
			l->entries[i + 1] = 1;
		}
		l->nclasses = 5;
	}
	assert_int_equal(bt_instance_create(own_instance("swaps"), &cfg, &inst), 0);
	assert_int_equal(bt_watch_load(&inst, &a, BT_WATCH_CHECK_BITS, &w), 0);
	for (int i = 0; i < 2; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].prog_fd = inst.prog_fd;
		s[i].cpu = i;
		s[i].stop = &stop;
		frame_between(&s[i].f[0], both, dst, true);
		frame_between(&s[i].f[1], onlya, dst, true);
		frame_between(&s[i].f[2], x6, dst6, false);
		pthread_create(&th[i], NULL, send_frames, &s[i]);
	}
	for (loads = 0; loads < 40; loads++)
		assert_int_equal(bt_watch_load(&inst, loads % 2 ? &a : &b, BT_WATCH_CHECK_BITS,
					       &w), 0);
	stop = true;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(s[i].err, 0);
	}
	assert_int_equal(bt_watch_counts(&inst, BT_DIR_INGRESS, n), 0);
	__u32 ia = id_of(&inst, "a"), ib = id_of(&inst, "b"), io = id_of(&inst, "c");
	uint64_t other = 0, sent0 = s[0].sent[0] + s[1].sent[0], sent1 = s[0].sent[1] + s[1].sent[1];
	uint64_t sent2 = s[0].sent[2] + s[1].sent[2];

	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++)
		if (id != ia && id != ib && id != io)
			other += n[id].packets[0] + n[id].packets[1];
	print_message("%d loads under traffic from two CPUs: %llu packets of X and %llu of X6, a "
		      "%llu + b %llu; %llu of Y, c %llu; other classes %llu\n", loads,
		      (unsigned long long)sent0, (unsigned long long)sent2,
		      (unsigned long long)n[ia].packets[0], (unsigned long long)n[ib].packets[0],
		      (unsigned long long)sent1, (unsigned long long)n[io].packets[0],
		      (unsigned long long)other);
	assert_true(ia && ib && io);
	assert_int_equal(n[ia].packets[0] + n[ib].packets[0], sent0 + sent2);
	assert_true(n[ia].packets[0] > 0 && n[ib].packets[0] > 0);
	assert_true(n[io].packets[0] <= sent1);
	assert_int_equal(other, 0);
	bt_watch_list_free(&a);
	bt_watch_list_free(&b);
	bt_instance_close(&inst);
}

/* A list of FIRST-LAST ranges whose keys need more than a slot: 190,000
 * lines of 206 prefixes each (a /24's addresses but its first and last),
 * 39 million IPv6 keys, a table of at least 265 MiB. Refused by the count
 * before a key is stored, so its memory is the parser's alone (it took
 * 430 MB to load 20,000 such lines, refused only after the build). */
static void test_list_too_big(void **state)
{
	char path[] = "/tmp/bt-watch-big-XXXXXX", err[BT_WATCH_ERR_LEN];
	struct bt_watch_list l;
	struct rusage before, after;
	int fd = mkstemp(path);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	uint64_t n[2] = { 0, 37748737 };

	assert_non_null(fp);
	for (unsigned i = 0; i < 190000; i++)
		fprintf(fp, "%x:%x00::1-%x:%xff:ffff:ffff:ffff:ffff:ffff:fffe c%u\n", 0x2000 + i / 256,
			i % 256, 0x2000 + i / 256, i % 256, i % 100);
	fclose(fp);
	getrusage(RUSAGE_SELF, &before);
	assert_int_equal(bt_watch_list_read(path, &l, err, sizeof(err)), -E2BIG);
	getrusage(RUSAGE_SELF, &after);
	unlink(path);
	print_message("%s\n", err);
	assert_non_null(strstr(err, ": 39140000 keys once its ranges are expanded (IPv4 0, IPv6 "
				    "39140000): a table of at least 265.4 MiB, more than the 256 MiB"));
	assert_null(l.e);
	/* kilobytes: the file's lines counted, not stored (1.2 GB to store) */
	assert_true(after.ru_maxrss - before.ru_maxrss < 64 * 1024);
	/* the bound: one key fewer than a slot's worth fits */
	assert_true(bt_watch_least_bytes(n) > BT_WATCH_SLOT_BYTES);
	n[1]--;
	assert_true(bt_watch_least_bytes(n) <= BT_WATCH_SLOT_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_too_big),	/* first: its memory measured */
		cmocka_unit_test(test_tiny_tables),
		cmocka_unit_test(test_members_exact),
		cmocka_unit_test(test_non_members_rate),
		cmocka_unit_test(test_set_in_place),
		cmocka_unit_test(test_v4_set_nested),
		cmocka_unit_test(test_search_plan),
		cmocka_unit_test(test_v6_choice),
		cmocka_unit_test(test_v6_tree),
		cmocka_unit_test_teardown(test_datapath_agrees, own_instance_teardown),
		cmocka_unit_test_teardown(test_real_shape_exact, own_instance_teardown),
		cmocka_unit_test_teardown(test_real_shape_tree, own_instance_teardown),
		cmocka_unit_test_teardown(test_set_refuses_outsiders, own_instance_teardown),
		cmocka_unit_test_teardown(test_dense_slash16, own_instance_teardown),
		cmocka_unit_test_teardown(test_swaps_under_traffic, own_instance_teardown),
	};

	return cmocka_run_group_tests_name("watch lists", tests, NULL, NULL);
}
