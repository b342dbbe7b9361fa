// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's heavy section: the heavy-flow stage whole and cut short. */
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"
#include "hash.h"
#include "../tests/lib/zipf.h"

/* The heavy-flow stage cut short: bloomtap's stage, then with
 * parts left out (struct bt_instance_cfg.cut) or the sketch made small,
 * each against the plain count-min of the same run. */
enum { HB_BLOOMTAP, HB_NO_CACHE, HB_SKETCH, HB_SKETCH_L2, HB_SKETCH_ROW, HB_ROWS2, HB_ROWS1,
       HB_NO_ROWS, HB_CACHE_HASH, HB_LEVERS };
static const char *const hb_names[HB_LEVERS] = {
	[HB_BLOOMTAP] = "bloomtap: flow cache, flow memory, sketch",
	[HB_NO_CACHE] = "- flow cache (every packet keyed)",
	[HB_SKETCH] = "- flow memory too: the sketch alone",
	[HB_SKETCH_L2] = "  the same, 4 x 4096 (128 KiB, in L2)",
	[HB_SKETCH_ROW] = "  the same, one counter (1 x 262144)",
	[HB_ROWS2] = "bloomtap, 2 counters (2 x 131072)",
	[HB_ROWS1] = "bloomtap, 1 counter (1 x 262144)",
	[HB_NO_ROWS] = "bloomtap without the sketch (the floor)",
	[HB_CACHE_HASH] = "  and without the flow memory",
};
static struct target hb[HB_LEVERS];

/* The breakdown's instances: bloomtap's program, parts cut out. */
int bench_heavy_make(void)
{
	static const struct { __u32 cut, depth, width; } lever[HB_LEVERS] = {
		[HB_BLOOMTAP] = { 0 },
		[HB_NO_CACHE] = { BT_CUT_CACHE },
		[HB_SKETCH] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY },
		[HB_SKETCH_L2] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY, 4, 4096 },
		[HB_SKETCH_ROW] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY, 1, 262144 },
		[HB_ROWS2] = { 0, 2, 131072 },
		[HB_ROWS1] = { 0, 1, 262144 },
		[HB_NO_ROWS] = { BT_CUT_SKETCH },
		[HB_CACHE_HASH] = { BT_CUT_SKETCH | BT_CUT_FLOW_MEMORY },
	};
	char what[16];

	for (int l = 0; l < HB_LEVERS; l++) {
		struct bt_instance_cfg cfg = { .cut = lever[l].cut,
					       .sketch = { .depth = lever[l].depth,
							   .width = lever[l].width } };

		snprintf(what, sizeof(what), "hb%d", l);
		if (make_bloomtap_cfg(&hb[l], what, true, false, cfg))
			return -1;
	}
	return 0;
}

/* The heavy stage on top of parsing, whole and cut short, against the
 * plain count-min's: Zipf and uniform, IPv4 and IPv6, and few flows
 * (HB_FEW_FLOWS, each one heavy: nearly every packet a flow cache hit, so
 * that column is what a hit costs). */
#define HB_FEW_FLOWS 64
#define HB_TRAFFIC 5
static void heavy_breakdown(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	uint32_t *fseq = malloc(SEQ_LEN * sizeof(*fseq));
	const struct { const char *name; bool v6; const uint32_t *seq; } traffic[HB_TRAFFIC] = {
		{ "Zipf IPv4", false, seq }, { "Zipf IPv6", true, seq },
		{ "uniform IPv4", false, useq }, { "uniform IPv6", true, useq },
		{ "64 flows IPv4", false, fseq },
	};
	double stage[HB_LEVERS + 1][HB_TRAFFIC];
	struct target *t[HB_LEVERS + 2];
	double med[HB_LEVERS + 2];
	uint64_t rng = 0xfe3;

	if (!fseq)
		return;
	for (uint32_t i = 0; i < SEQ_LEN; i++)
		fseq[i] = bt_rng(&rng) % HB_FEW_FLOWS;
	for (int c = 0; c < HB_TRAFFIC; c++) {
		struct frame fr;
		int n = 0;

		if (traffic[c].v6)
			bench_frame_v6_tcp(&fr);
		else
			bench_frame_v4_udp(&fr);
		t[n++] = &targets[P_PARSE];
		t[n++] = &targets[P_REF_CMS];
		for (int l = 0; l < HB_LEVERS; l++)
			t[n++] = &hb[l];
		if (run_targets(&fr, traffic[c].v6, traffic[c].seq, t, n, med)) {
			free(fseq);
			return;
		}
		for (int l = 0; l <= HB_LEVERS; l++)
			stage[l][c] = med[1 + l] - med[0];
	}
	free(fseq);
	out(stdout, f, "\nheavy-flow stage on top of parsing, ns (and its ratio to the plain "
	    "count-min's), whole and cut short\n");
	out(stdout, f, "  %-44s", "");
	for (int c = 0; c < HB_TRAFFIC; c++)
		out(stdout, f, " %16s", traffic[c].name);
	out(stdout, f, "\n");
	for (int l = 0; l <= HB_LEVERS; l++) {
		out(stdout, f, "  %-44s", l ? hb_names[l - 1] : "ref: plain count-min 4 x 65536");
		for (int c = 0; c < HB_TRAFFIC; c++)
			out(stdout, f, "      %+6.1f %4.2f", stage[l][c], stage[l][c] / stage[0][c]);
		out(stdout, f, "\n");
	}
}

int bench_heavy(struct bench_run *r)
{
	heavy_breakdown(r->f, r->seq, r->useq);
	return 0;
}
