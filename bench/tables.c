// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's first sections: tables, every stage against the empty
 * program and the references; memory, the default sizes. */
#include <stdio.h>
#include "instance/sketch.h"
#include "bench.h"

/* The main tables: every stage on one IPv4/UDP and one IPv6/TCP frame,
 * Zipf traffic, with the targets each is held to. Returns 1 on failure;
 * parse_v4: parsing's cost on the IPv4 frame, for the ablation. */
static int frame_tables(FILE *f, const uint32_t *seq, double *parse_v4)
{
	const unsigned all_progs = (1u << P_MAIN) - 1;

	for (int v6 = 0; v6 <= 1; v6++) {
		struct frame fr;
		double med[P_MAX];
		char title[64];

		if (v6)
			bench_frame_v6_tcp(&fr);
		else
			bench_frame_v4_udp(&fr);
		if (run_case(&fr, v6, seq, all_progs, med))
			return 1;
		if (!v6)
			*parse_v4 = med[P_PARSE];
		snprintf(title, sizeof(title), "%zu-byte Ethernet/%s frames", fr.len,
			 v6 ? "IPv6/TCP" : "IPv4/UDP");
		print_table(f, title, all_progs, med);
		double spie = med[P_SPIE] - med[P_PARSE], kern = med[P_REF_BLOOM] - med[P_PARSE];
		double all = med[P_ALL] - med[P_EMPTY], heavy = med[P_HEAVY] - med[P_PARSE],
		       ref = med[P_REF_CMS] - med[P_PARSE];

		out(stdout, f, "  targets:\n");
		out(stdout, f, "  - everything at most 40 ns on top of the empty program: +%.1f "
		    "(parsing +%.1f, heavy +%.1f, SPIE +%.1f, the stages meeting %+.1f): %s\n", all,
		    med[P_PARSE] - med[P_EMPTY], heavy, spie,
		    all - (med[P_PARSE] - med[P_EMPTY]) - heavy - spie, all <= 40 ? "met" : "MISSED");
		out(stdout, f, "  - the SPIE stage at most a quarter of the kernel bloom filter map's\n"
		    "    (k = 5, 2 MiB, the same digest input): +%.1f vs +%.1f ns (%.2f): %s\n",
		    spie, kern, spie / kern, spie <= kern / 4 ? "met" : "MISSED");
		out(stdout, f, "  - heavy flows on top of parsing at most half a plain count-min's\n"
		    "    (4 x 65536 shared, one hash) on top of the same parsing: +%.1f vs +%.1f ns "
		    "(%.2f): %s\n", heavy, ref, heavy / ref, heavy <= ref / 2 ? "met" : "MISSED");
		out(stdout, f, "  one hash pass for both stages: everything %.1f ns, hashing apart %.1f ns\n",
		    med[P_ALL], med[P_ALL_SEP]);
	}
	return 0;
}

/* The flow cache's other side: traffic without heavy flows, where every
 * packet takes the keyed path and pays the cache probe too. */
static int uniform_table(FILE *f, const uint32_t *useq)
{
	const unsigned heavy_progs = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_HEAVY | 1u << P_REF_CMS;
	struct frame fr;
	double med[P_MAX];

	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, useq, heavy_progs, med))
		return 1;
	print_table(f, "64-byte Ethernet/IPv4/UDP frames, uniform over the same flows "
		    "(no heavy flow)", heavy_progs, med);
	double heavy = med[P_HEAVY] - med[P_PARSE], ref = med[P_REF_CMS] - med[P_PARSE];

	out(stdout, f, "  target: heavy flows on top of parsing no more than the plain "
	    "count-min: +%.1f vs +%.1f ns (%.2f): %s\n", heavy, ref, heavy / ref,
	    heavy <= ref ? "met" : "MISSED");
	return 0;
}

/* Memory at the default sizes, and how long the ring holds packets. */
static void memory_line(FILE *f)
{
	const struct bt_meta *m = &targets[P_ALL].inst.meta;

	out(stdout, f, "\nmemory at default sizes (%u CPUs): heavy flows %.1f MiB "
	    "(sketch %u x %u x 2 intervals per CPU, flow memory 2 x %u slots); SPIE %u windows "
	    "x %.0f KiB = %.0f MiB, %.0f bits a packet at the design load of %llu packets, k = %u; "
	    "the ring holds %.1f million packets: %.1f s at 1 Mpps, %.2f s at 10 Mpps\n",
	    m->ncpu, bt_sketch_bytes(m) / 1048576.0, m->depth, m->width, m->fm_slots, m->windows,
	    m->window_bits / 8.0 / 1024, m->window_bits / 8.0 / 1048576 * m->windows,
	    (double)m->window_bits / m->design_load, (unsigned long long)m->design_load, m->k,
	    (double)m->windows * m->design_load / 1e6, (double)m->windows * m->design_load / 1e6,
	    (double)m->windows * m->design_load / 1e7);
}

int bench_tables(struct bench_run *r)
{
	return frame_tables(r->f, r->seq, &r->parse_v4) || uniform_table(r->f, r->useq);
}

int bench_memory(struct bench_run *r)
{
	memory_line(r->f);
	return 0;
}
