// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: a watch-list file. Whatever the bytes, the reader returns a
 * list or an error; a list it returns builds a table in which every
 * entry's first address answers the class of the longest entry over it
 * (IPv4's ranges, IPv6's tree or search), and every searched IPv6 entry
 * its own class. */
#include <stdint.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include "fuzz.h"
#include "core/digest.h"
#include "core/watchlist.h"
#include "core/watchlpm.h"

static struct bt_hash_keys keys;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct bt_hash_key_raw raw = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

	fuzz_quiet();
	bt_hash_keys_derive(&raw, &keys);
	return 0;
}

/* Does the first address of key e answer other than the longest of the n
 * keys over it (the range table and IPv6's tree hold no key as such)? */
static int first_wrong(const struct bt_watch_view *v, const struct bt_watch_key *k, size_t n,
		       const struct bt_watch_key *e)
{
	bool v4 = bt_watch_key_is_v4(e);
	__u32 want = 0, best = 0;
	__u64 hi = htobe64(e->hi), lo = htobe64(e->lo);
	uint8_t a[16];

	for (size_t i = 0; i < n; i++) {
		__u64 mh = e->hi, ml = e->lo;

		bt_watch_mask(&mh, &ml, k[i].len);
		if (bt_watch_key_is_v4(&k[i]) == v4 && mh == k[i].hi && ml == k[i].lo &&
		    k[i].len >= best) {
			best = k[i].len;
			want = k[i].class_id;
		}
	}
	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
	return bt_watch_classify(&keys, v, a, v4, NULL) != want;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct bt_watch_list l;
	struct bt_watch_key *k;
	struct bt_watch_built b;
	char err[BT_WATCH_ERR_LEN];

	if (!f)
		return 0;
	if (bt_watch_list_parse(f, "fuzz", &l, err, sizeof(err))) {
		fclose(f);
		return 0;
	}
	fclose(f);
	k = malloc((l.n ? l.n : 1) * sizeof(*k));
	for (size_t i = 0; k && i < l.n; i++)
		k[i] = l.e[i].key;
	/* IPv6 as load chooses, then in the tree whenever its lengths allow */
	for (int pass = 0; k && pass < 2; pass++) {
		struct bt_watch_view v;
		bool searched;

		if (bt_watch_build(&keys, k, l.n, BT_WATCH_CHECK_BITS, 1,
				   pass ? BT_WATCH_B_V6_TREE : 0, &b))
			continue;
		v = bt_watch_built_view(&b);
		searched = !(b.b.hdr.flags & BT_WATCH_F_V6_TREE);
		for (size_t i = 0; i < l.n; i++)
			if (first_wrong(&v, k, l.n, &k[i]) ||
			    (!bt_watch_key_is_v4(&k[i]) && searched &&
			     bt_bloomier_get(&keys, &b.b.hdr, b.b.cells, k[i].hi, k[i].lo, k[i].len,
					     NULL) != k[i].class_id))
				__builtin_trap();	/* a member answered wrong */
		bt_watch_built_free(&b);
	}
	free(k);
	bt_watch_list_free(&l);
	return 0;
}
