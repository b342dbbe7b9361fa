// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Watch lists: the Bloomier table in user space against an independent
 * answer (the keys sorted, searched longest prefix first), and the real
 * program under BPF_PROG_TEST_RUN against user space. */
#include <arpa/inet.h>
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "testlib.h"
#include "zipf.h"
#include "bloomier.h"
#include "digest.h"
#include "watchlist.h"

#define KEYS 1000000
#define CLASSES 200

static uint64_t rng_state = 0x7a7c4ed;

static uint64_t rng(void)
{
	return bt_rng(&rng_state);
}

static int cmp_key(const void *a, const void *b)
{
	const struct bt_watch_key *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
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

	f = bsearch(&want, r->k, r->n, sizeof(*f), cmp_key);
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
	return k->len >= 96 && k->hi == 0 && (k->lo >> 32) == 0xffff;
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

/* n distinct keys: IPv4 hosts and prefixes /8../32, IPv6 /32../128; or
 * (few) /32 and /24, /128 and /64 only. */
static void make_keys(struct ref *r, size_t n, bool few)
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
			__u32 len = v4 ? 96 + (rng() % 3 ? 32 : few ? 24 : 8 + rng() % 25)
				       : (rng() % 3 ? 128 : few ? 64 : 32 + rng() % 97);

			random_addr(a, v4);
			bt_watch_words(a, &k->hi, &k->lo);
			bt_watch_mask(&k->hi, &k->lo, len);
			k->len = len;
			k->class_id = 1 + rng() % CLASSES;
		}
		r->n += want;
		qsort(r->k, r->n, sizeof(*r->k), cmp_key);
		size_t out = 0;

		for (size_t i = 0; i < r->n; i++)
			if (!out || cmp_key(&r->k[out - 1], &r->k[i]))
				r->k[out++] = r->k[i];
		r->n = out;
	}
	memset(r->has, 0, sizeof(r->has));
	for (size_t i = 0; i < r->n; i++)
		r->has[!key_v4(&r->k[i])][r->k[i].len] = true;
}

/* An address under key k: its prefix, the host bits random. */
static void addr_under(const struct bt_watch_key *k, uint8_t a[16])
{
	__u64 hi = rng(), lo = rng(), mh = ~0ULL, ml = ~0ULL;

	if (key_v4(k)) {
		hi = 0;
		lo = 0xffff00000000ULL | (lo & 0xffffffffULL);
	}
	bt_watch_mask(&mh, &ml, k->len);
	hi = (k->hi & mh) | (hi & ~mh);
	lo = (k->lo & ml) | (lo & ~ml);
	hi = htobe64(hi);
	lo = htobe64(lo);
	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
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
	struct bt_bloomier b;
	struct ref r;
	size_t wrong = 0, under = 0;
	double t0;

	make_keys(&r, KEYS, false);
	t0 = now_s();
	assert_int_equal(bt_bloomier_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 1, &b), 0);
	print_message("%zu keys: built in %.2f s (%u retries), %u cells, %.2f bits a key "
		      "(%.3f of the %d a key's class and check bits need)\n", r.n, now_s() - t0,
		      b.retries, b.hdr.cells, bt_bloomier_bits_per_key(&b.hdr),
		      bt_bloomier_bits_per_key(&b.hdr) / (8 + BT_WATCH_CHECK_BITS),
		      8 + BT_WATCH_CHECK_BITS);
	for (size_t i = 0; i < r.n; i++) {
		const struct bt_watch_key *k = &r.k[i];
		uint8_t a[16];

		wrong += bt_bloomier_get(&hk, &b.hdr, b.cells, k->hi, k->lo, k->len, NULL) !=
			 k->class_id;
		addr_under(k, a);
		wrong += bt_watch_classify(&hk, &b.hdr, b.cells, a, key_v4(k), NULL) !=
			 ref_classify(&r, a, key_v4(k));
		under++;
	}
	print_message("%zu keys and %zu addresses under them: %zu wrong\n", r.n, under, wrong);
	assert_int_equal(wrong, 0);
	assert_true(bt_bloomier_bits_per_key(&b.hdr) <= 1.14 * 64);	/* the fuse layout: 1.13 */
	bt_bloomier_free(&b);
	free(r.k);
}

/* With 8 check bits, ten million addresses outside the list (two prefix
 * lengths a family, so two probes each): the rate of answers within 20 %
 * of the formula for the probes made, and under the bound. */
static void test_non_members_rate(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_bloomier b;
	struct ref r;
	size_t queries = 0, probes = 0, answered = 0;
	double p, expect;

	make_keys(&r, 100000, true);
	assert_int_equal(bt_bloomier_build(&hk, r.k, r.n, 8, 7, &b), 0);
	p = bt_bloomier_probe_fpr(&b.hdr);
	while (queries < 10000000) {
		uint8_t a[16];
		bool v4 = rng() % 2;

		random_addr(a, v4);
		if (ref_classify(&r, a, v4))
			continue;	/* a member after all */
		queries++;
		probes += b.hdr.nlen[!v4];
		answered += bt_watch_classify(&hk, &b.hdr, b.cells, a, v4, NULL) != 0;
	}
	expect = probes * p;
	print_message("%zu addresses outside, %zu probes: %zu answered a class, %.0f "
		      "expected (%.3g a probe; bound 2^-8 = %.3g)\n", queries, probes, answered,
		      expect, p, ldexp(1, -8));
	assert_true(fabs(answered - expect) <= 0.2 * expect);
	assert_true(answered <= probes * ldexp(1, -8));
	bt_bloomier_free(&b);
	free(r.k);
}

/* The mutable form: a key's own cell holds its class byte, alone. */
static void test_set_in_place(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_bloomier b;
	struct ref r;
	size_t wrong = 0;

	make_keys(&r, 50000, false);
	assert_int_equal(bt_bloomier_build(&hk, r.k, r.n, BT_WATCH_CHECK_BITS, 3, &b), 0);
	for (size_t i = 0; i < r.n; i += 2) {
		__u32 own = ~0u;

		assert_int_not_equal(bt_bloomier_get(&hk, &b.hdr, b.cells, r.k[i].hi, r.k[i].lo,
						     r.k[i].len, &own), 0);
		r.k[i].class_id = 1 + (r.k[i].class_id + 7) % CLASSES;
		b.cells[own] = (b.cells[own] & ~0xffULL) | r.k[i].class_id;
	}
	for (size_t i = 0; i < r.n; i++)
		wrong += bt_bloomier_get(&hk, &b.hdr, b.cells, r.k[i].hi, r.k[i].lo, r.k[i].len,
					 NULL) != r.k[i].class_id;
	assert_int_equal(wrong, 0);
	bt_bloomier_free(&b);
	free(r.k);
}

/* A table of no key, and of one. */
static void test_tiny_tables(void **state)
{
	struct bt_hash_keys hk = test_keys();
	struct bt_watch_key one = { 0, 0xffffc6120000ULL, 96 + 15, 9 };
	struct bt_bloomier b;
	uint8_t a[16] = { [10] = 0xff, [11] = 0xff, 198, 19, 1, 2 };

	assert_int_equal(bt_bloomier_build(&hk, NULL, 0, BT_WATCH_CHECK_BITS, 1, &b), 0);
	assert_int_equal(b.hdr.keys, 0);
	assert_int_equal(bt_watch_classify(&hk, &b.hdr, b.cells, a, true, NULL), 0);
	bt_bloomier_free(&b);
	assert_int_equal(bt_bloomier_build(&hk, &one, 1, BT_WATCH_CHECK_BITS, 1, &b), 0);
	assert_int_equal(bt_watch_classify(&hk, &b.hdr, b.cells, a, true, NULL), 9);
	a[12] = 10;
	assert_int_equal(bt_watch_classify(&hk, &b.hdr, b.cells, a, true, NULL), 0);
	bt_bloomier_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiny_tables),
		cmocka_unit_test(test_members_exact),
		cmocka_unit_test(test_non_members_rate),
		cmocka_unit_test(test_set_in_place),
	};

	return cmocka_run_group_tests_name("watch lists", tests, NULL, NULL);
}
