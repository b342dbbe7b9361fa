// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's ablation section: the SPIE stage by window size, its
 * levers added one at a time (bench.bpf.c's ab_* programs, then the real
 * program). */
#include <stdio.h>
#include "bench.h"

/* The ablation: window sizes, and the SPIE stage's levers added one at
 * a time from the first design's (byte input, SipHash, a 512-bit block,
 * k=5); the last row is the real program. */
#define AB_SIZES 7
static const uint32_t ab_kib[AB_SIZES] = { 128, 256, 512, 1024, 2048, 4096, 8192 };
enum { AB_FORMER, AB_BLOCK128, AB_BLOCK, AB_WORDS, AB_NH, AB_REAL, AB_LEVERS };
static const char *const ab_names[AB_LEVERS] = {
	[AB_FORMER] = "former: byte input, SipHash, 512-bit block, k=5",
	[AB_BLOCK128] = "+ 128-bit block, k=8, 32 bits (formats 3-9)",
	[AB_BLOCK] = "  instead one-line block, k=4, 128 bits",
	[AB_WORDS] = "+ digest words from word loads",
	[AB_NH] = "+ NH and a mixer instead of SipHash",
	[AB_REAL] = "bloomtap (+ windows it turns itself)",
};
/* the levers before the real program: bench.bpf.c's programs */
static const char *const ab_progs[AB_REAL] = {
	[AB_FORMER] = "ab_former", [AB_BLOCK128] = "ab_block128", [AB_BLOCK] = "ab_block",
	[AB_WORDS] = "ab_words", [AB_NH] = "ab_nh",
};
static struct target ab[AB_LEVERS][AB_SIZES];

static int log2u(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* The ablation's targets: the bench programs set to each window size,
 * and a bloomtap instance of each size whose ring covers a whole run. */
int bench_ablation_make(void)
{
	for (int z = 0; z < AB_SIZES; z++) {
		uint64_t bytes = (uint64_t)ab_kib[z] << 10, load = bytes * 8 / 128;

		for (int l = AB_FORMER; l <= AB_NH; l++) {
			struct target *t = &ab[l][z];
			uint64_t unit = l == AB_FORMER ? 64 : l == AB_BLOCK128 ? 16
							  : sizeof(struct bt_bloom_block);

			t->drv_prog = ab_progs[l];
			t->ablation = true;
			/* the former and 128-bit blocks in the lines' array */
			t->lines = l <= AB_BLOCK128;
			/* each at its own load: 32 bits a packet before format 10 */
			t->load_shift = log2u(l <= AB_BLOCK128 ? bytes * 8 / 32 : load);
			t->unit_shift = log2u(bytes / unit);
			t->win_mask = (AB_BYTES / bytes) - 1;
		}
		/* windows: bt_spie_ahead() = W / 8 covers REPEAT / load */
		uint32_t w = 8 * (REPEAT / load + 2);
		char what[32];

		snprintf(what, sizeof(what), "ab%u", ab_kib[z]);
		if (make_bloomtap(&ab[AB_REAL][z], what, false, true, 0, bytes * 8, w < 16 ? 16 : w))
			return -1;
	}
	return 0;
}

static void ablation(FILE *f, const uint32_t *seq, double parse_ns)
{
	struct target *t[AB_LEVERS * AB_SIZES];
	double med[AB_LEVERS * AB_SIZES];
	struct frame fr;
	int n = 0;

	for (int l = 0; l < AB_LEVERS; l++)
		for (int z = 0; z < AB_SIZES; z++)
			t[n++] = &ab[l][z];
	bench_frame_v4_udp(&fr);
	if (run_targets(&fr, false, seq, t, n, med))
		return;
	out(stdout, f, "\nablation: the SPIE stage (ns a packet on top of parsing and counters, "
	    "%.1f ns) by window size,\nlevers added one at a time (64-byte IPv4/UDP, each window "
	    "filled to its design load)\n  %-50s", parse_ns, "window size");
	for (int z = 0; z < AB_SIZES; z++)
		out(stdout, f, ab_kib[z] >= 1024 ? " %4u MiB" : " %4u KiB",
		    ab_kib[z] >= 1024 ? ab_kib[z] >> 10 : ab_kib[z]);
	out(stdout, f, "\n");
	for (int l = 0; l < AB_LEVERS; l++) {
		out(stdout, f, "  %-50s", ab_names[l]);
		for (int z = 0; z < AB_SIZES; z++)
			out(stdout, f, " %+8.1f", med[l * AB_SIZES + z] - parse_ns);
		out(stdout, f, "\n");
	}
}

/* on top of parsing as the tables measured it, or as measured here when
 * they did not run */
int bench_ablation(struct bench_run *r)
{
	if (!r->parse_v4) {
		double med[P_MAX];
		struct frame fr;

		bench_frame_v4_udp(&fr);
		if (run_case(&fr, false, r->seq, 1u << P_PARSE, med))
			return 0;
		r->parse_v4 = med[P_PARSE];
	}
	ablation(r->f, r->seq, r->parse_v4);
	return 0;
}
