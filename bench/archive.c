// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's archive section. */
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
#include "instance/keeper.h"
#include "instance/spie.h"
#include "report/trace_query.h"
#include "bench.h"

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

int bench_archive(struct bench_run *r)
{
	archive_run(r->f, r->seq);
	return 0;
}
