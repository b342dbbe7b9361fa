// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An archive of many windows, written straight through archive.c, for
 * tests/live/horizon.sh's cost of a time-bounded trace (replaying enough
 * packets for 100,000 windows would take minutes):
 *   mkarchive DIR INSTANCE WINDOWS START_S PERIOD_S [PER_FILE]
 * WINDOWS windows of 4,096 bits (k = 4, 34 packets at their design load
 * of 120 bits a packet), window i over [START_S + i PERIOD_S, START_S +
 * (i + 1) PERIOD_S), each filled to its design load with random digests,
 * PER_FILE (default 64) to a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/archive.h"
#include "core/bloom.h"
#include "instance/spie.h"

#define BITS 4096
#define BPW (BITS / BT_BLOCK_BITS)

static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	struct bt_meta meta = { .magic = BT_META_MAGIC, .window_bits = BITS, .k = 4,
				.design_load = BITS / 120, .hash_key = { 0x1234567, 0x89abcdef } };
	static struct bt_bloom_block f[64][BPW];
	struct bt_window w[64];
	const struct bt_window *wp[64];
	const struct bt_bloom_block *fp[64];
	char path[600];
	__u64 seed = 88172645463325252ULL, n, start, off;
	double period;
	int per;

	if (argc < 6) {
		fprintf(stderr, "usage: mkarchive DIR INSTANCE WINDOWS START_S PERIOD_S [PER_FILE]\n");
		return 2;
	}
	n = strtoull(argv[3], NULL, 10);
	start = strtoull(argv[4], NULL, 10) * 1000000000ULL;
	period = atof(argv[5]);
	per = argc > 6 ? atoi(argv[6]) : 64;
	if (per < 1 || per > 64)
		return 2;
	off = (__u64)bt_real_minus_boot();	/* archive.c converts boot to real */
	for (__u64 i = 0; i < n; i += per) {
		int m = n - i < (__u64)per ? (int)(n - i) : per;

		for (int j = 0; j < m; j++) {
			__u64 s = start + (__u64)((i + j) * period * 1e9);
			__u64 set = 0;
			double fpr;

			memset(f[j], 0, sizeof(f[j]));
			for (__u64 p = 0; p < meta.design_load; p++)
				bt_bloom_add(f[j], BPW, meta.k, rnd(&seed));
			bt_bloom_fill(f[j], BPW, meta.k, &set, &fpr);
			w[j] = (struct bt_window){ .start_ns = s - off,
						   .end_ns = s + (__u64)(period * 1e9) - off,
						   .packets = meta.design_load, .set_bits = set,
						   .fpr_e15 = (__u64)(fpr * 1e15), .seq = (__u32)(i + j),
						   .state = BT_WIN_SEALED };
			wp[j] = &w[j];
			fp[j] = f[j];
		}
		if (bt_archive_write(argv[1], argv[2], &meta, &(struct bt_archive_batch){
				     wp, fp, NULL, m, BPW }, path, sizeof(path)))
			return 1;
	}
	return 0;
}
