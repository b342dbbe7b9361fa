// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's archive section. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <zstd.h>
#include "base/util.h"
#include "core/archive.h"
#include "core/bloom.h"
#include "core/gapcode.h"
#include "instance/keeper.h"
#include "instance/spie.h"
#include "report/trace_query.h"
#include "bench.h"
#include "../tests/lib/zipf.h"

/* The archive: windows filled to their design load by the real program
 * (the driver's Zipf traffic, every packet distinct), sealed and archived
 * by the keeper as the agent does; its size a packet, and the time of a
 * one-packet query against decompressing each window whole. */
#define ARCHIVE_WINDOWS 1024

static void archive_run(FILE *f, const uint32_t *seq)
{
	struct target *t = &targets[P_SPIE];
	const struct bt_meta *m = &t->inst.meta;
	char dir[] = "/tmp/bloomtap-bench-archive-XXXXXX";
	struct bench_bpf *skel = NULL;
	struct bt_spie_maps sm;
	struct bt_keeper k;
	struct frame fr;
	char **names = NULL;
	int nfiles = 0;
	uint64_t bytes = 0, windows = 0;
	double t0, q[5], full = 0;
	__u32 zero = 0;

	if (!mkdtemp(dir) || load_driver(&skel, false, seq) || bt_spie_map(&t->inst, &sm))
		goto out;
	k = (struct bt_keeper){ .sm = &sm, .name = t->name, .archive = dir };
	bench_frame_v4_udp(&fr);
	bt_spie_reset(&sm);
	bpf_map_update_elem(bpf_map__fd(skel->maps.bench_progs), &zero, &t->fd, 0);
	/* 16 windows a run, the keeper between runs */
	while (k.archived < ARCHIVE_WINDOWS) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = fr.len,
			    .repeat = 16 * m->design_load);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_drive), &o))
			goto out_unmap;
		bt_keeper_turn(&k, false, k.sealed + 16 >= ARCHIVE_WINDOWS);
	}
	if (bt_archive_list(dir, NULL, &names, &nfiles) || !nfiles)
		goto out_unmap;
	for (int i = 0; i < nfiles; i++) {
		char path[600];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st))
			bytes += st.st_size;
	}
	double bits = bytes * 8.0 / ((double)k.archived * m->design_load);

	out(stdout, f, "\narchive: %llu windows filled to their design load of %llu packets, in "
	    "%d files (%.1f MiB): %.1f bits a packet, %.2f %% of link capacity at 800-byte "
	    "packets (SPIE reported 0.5 %%)\n", (unsigned long long)k.archived,
	    (unsigned long long)m->design_load, nfiles, bytes / 1048576.0, bits,
	    100 * bits / (800 * 8));

	/* one packet (one the archive does not hold: every window is read) */
	const char *hex = "4500001c00010000401100000a0000010a000002d431003500080000";

	for (int r = 0; r < 5; r++) {
		char err[256];
		struct json_object *o;

		t0 = bt_mono_s();
		o = bt_trace_buffer(&(struct bt_trace_query){ .archive = dir }, hex, strlen(hex), err,
				    sizeof(err));
		q[r] = bt_mono_s() - t0;
		if (!o)
			goto out_unmap;
		if (r == 0) {
			struct json_object *p = json_object_array_get_idx(o, 0), *v;

			if (p && json_object_object_get_ex(p, "windows_searched", &v))
				windows = json_object_get_int64(v);
		}
		json_object_put(o);
	}
	/* each window decompressed whole, as format 2 stored it and as its
	 * queries read it: one zstd frame a window */
	{
		size_t raw = m->window_bits / 8, cap = ZSTD_compressBound(raw), clen = 0;
		void *buf = malloc(raw), *cbuf = malloc(cap);
		const char *why;
		struct bt_archive_file *af = bt_archive_open(dir, names[0], &why);
		int n = 0;

		if (buf && cbuf && af && !bt_archive_read_window(af, 0, buf))
			clen = ZSTD_compress(cbuf, cap, buf, raw, 3);
		t0 = bt_mono_s();
		for (; clen && !ZSTD_isError(clen) && n < 200; n++)
			if (ZSTD_decompress(buf, raw, cbuf, clen) != raw)
				break;
		full = (bt_mono_s() - t0) / (n ? n : 1);
		bt_archive_close(af);
		free(buf);
		free(cbuf);
	}
	double one = median(q, 5) / (windows ? windows : 1);

	out(stdout, f, "archive query: one packet against %llu windows: %.1f ms, %.1f us a window; "
	    "decompressing a window whole (one frame, format 2): %.0f us\n"
	    "  target: a one-packet query at least 50 x faster a window than full decompression: "
	    "%.0f x: %s\n", (unsigned long long)windows, median(q, 5) * 1e3, one * 1e6, full * 1e6,
	    full / one, full >= 50 * one ? "met" : "MISSED");
out_unmap:
	bt_spie_unmap(&sm);
out:
	if (names) {
		for (int i = 0; i < nfiles; i++) {
			char path[600];

			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
		bt_strv_free(names, nfiles);
	}
	bt_sh("rm -rf %s", dir);
	if (skel)
		bench_bpf__destroy(skel);
}

/* The filter's trade-offs, in user space: a window of the default size
 * filled to its design load with random digests, for bits a packet, k and
 * block size in turn. Kernel memory a packet, the ring's seconds at 1 Mpps
 * (256 windows), the false-positive rate (formula), and the window coded
 * as the archive codes it (gaps, in chunks with their CRC and offset)
 * against its entropy. The 128-bit blocks are those of formats 3 to 9
 * (zstd stored them at 25.7 bits a packet), coded here the same way. */
static void tradeoffs(FILE *f)
{
	static const struct { uint32_t block, k; double bits; } rows[] = {
		{ BT_LEGACY_BLOCK_BITS, 8, 32 }, { BT_BLOCK_BITS, 4, 32 }, { BT_BLOCK_BITS, 4, 64 },
		{ BT_BLOCK_BITS, 4, 96 }, { BT_BLOCK_BITS, 3, 120 }, { BT_BLOCK_BITS, 4, 120 },
		{ BT_BLOCK_BITS, 4, 128 }, { BT_BLOCK_BITS, 4, 160 },
	};
	const uint64_t m = BT_DEFAULT_WINDOW_BITS, words = m / 64;
	uint64_t *bits = malloc(m / 8), seed = 0x7ade0ff;
	uint8_t *code = malloc(4 + bt_gap_bound(BT_ARCHIVE_CHUNK));

	if (!bits || !code)
		goto out;
	out(stdout, f, "\nthe SPIE filter's trade-offs (a %llu-bit window at its design load, random "
	    "digests; %d windows)\n  %-28s %10s %9s %10s %11s %9s\n",
	    (unsigned long long)m, BT_DEFAULT_WINDOWS, "block, k, bits a packet", "fpr",
	    "ring 1Mpps", "disk bits", "entropy", "over");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t n = (uint64_t)(m / rows[i].bits), blocks = m / rows[i].block, set = 0;
		double coded = 0, p, h;

		memset(bits, 0, m / 8);
		for (uint64_t j = 0; j < n; j++) {
			__u64 d = bt_rng(&seed);

			if (rows[i].block == BT_BLOCK_BITS) {
				bt_bloom_add((struct bt_bloom_block *)bits, blocks, rows[i].k, d);
			} else {
				uint64_t *b = bits + 2 * bt_bloom_legacy_block(d, blocks - 1);

				b[0] |= bt_bloom_legacy_mask(d, 0, rows[i].k);
				b[1] |= bt_bloom_legacy_mask(d, 1, rows[i].k);
			}
		}
		for (uint64_t w = 0; w < words; w++)
			set += __builtin_popcountll(bits[w]);
		for (uint64_t c = 0; c < m / 8 / BT_ARCHIVE_CHUNK; c++)
			coded += 8 * (8 + bt_gap_encode(bits + c * BT_ARCHIVE_CHUNK / 8,
						       BT_ARCHIVE_CHUNK, bt_gap_param(set, m), code));
		p = (double)set / m;
		h = m * (-p * log2(p) - (1 - p) * log2(1 - p));
		out(stdout, f, "  %4u-bit, k = %u, %5.0f bits %10.2g %8.1f s %10.2f %11.2f %8.1f %%%s\n",
		    rows[i].block, rows[i].k, rows[i].bits,
		    bt_bloom_fpr_layout(rows[i].block, m, n, rows[i].k),
		    (double)n * BT_DEFAULT_WINDOWS / 1e6, coded / n, h / n, 100 * (coded / h - 1),
		    rows[i].block == BT_BLOCK_BITS && rows[i].k == 4 &&
		    rows[i].bits == BT_DEFAULT_BITS_PER_PACKET ? "  (the default)" : "");
	}
	out(stdout, f, "  targets: at most 5e-6 a window, at most 25.7 disk bits a packet, the ring "
	    "at least 4 s at 1 Mpps in at most 4 times the memory a packet\n");
out:
	free(bits);
	free(code);
}

int bench_archive(struct bench_run *r)
{
	tradeoffs(r->f);
	archive_run(r->f, r->seq);
	return 0;
}
