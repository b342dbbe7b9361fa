// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's workloads section: the whole program by its workload
 * table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "bench.h"
#include "instance/wltable.h"

/* The workload table's lookups (bpf/workloads.bpf.h): the whole program
 * with its table empty (no lookup), holding 1,002 addresses and full
 * (BT_WL_ADDRS, the most the agent writes): the sources of the driver's
 * lowest flows, 198.18.0.0 + flow, which Zipf(1.1) makes the busiest, and
 * among them the frame's destination, 198.18.0.2; against the empty
 * program, in one run. */
#define WL_SIZES 2
static void workloads_run(FILE *f, const uint32_t *seq)
{
	static const uint32_t size[WL_SIZES] = { 1002, BT_WL_ADDRS };
	struct target off = { 0 }, tab[WL_SIZES] = { 0 };
	struct target *t[2 + WL_SIZES] = { &targets[P_EMPTY], &off, &tab[0], &tab[1] };
	struct bt_wl_entry *v = calloc(BT_WL_ADDRS, sizeof(*v));
	struct bt_watch_count *c = calloc(BT_WL_IDS, sizeof(*c));
	unsigned long long src[WL_SIZES] = { 0 }, dst[WL_SIZES] = { 0 };
	const double pkts = (double)REPEAT * ROUNDS;
	size_t placed[WL_SIZES] = { 0 };
	double med[2 + WL_SIZES];
	struct frame fr;
	char what[16];

	bench_frame_v4_udp(&fr);
	if (!v || !c || make_bloomtap(&off, "wloff", true, true, 0, 0, 0))
		goto out;
	for (uint32_t i = 0; i < BT_WL_ADDRS; i++) {
		__u32 a = htonl(0xc6120000 + i);

		v[i].addr[10] = v[i].addr[11] = 0xff;	/* v4-mapped, as a flow key */
		memcpy(v[i].addr + 12, &a, 4);
		v[i].id = 1 + i % (BT_WL_IDS - 1);
	}
	for (int k = 0; k < WL_SIZES; k++) {
		snprintf(what, sizeof(what), "wl%u", size[k]);
		if (make_bloomtap(&tab[k], what, true, true, 0, 0, 0) ||
		    bt_wl_table_write(&tab[k].inst, v, size[k], &placed[k]) < 0)
			goto out;
	}
	if (run_targets(&fr, false, seq, t, 2 + WL_SIZES, med))
		goto out;
	/* what the run's packets found: counted per id and side (0 the
	 * source, 1 the destination) */
	for (int k = 0; k < WL_SIZES; k++) {
		if (bt_wl_counts(&tab[k].inst, 0, c))
			goto out;
		for (__u32 id = 1; id < BT_WL_IDS; id++) {
			src[k] += c[id].packets[0];
			dst[k] += c[id].packets[1];
		}
	}
	out(stdout, f, "\nworkloads: the whole program on 64-byte IPv4/UDP by its workload table "
	    "(the busiest flows' sources\nand the frame's destination in it)\n");
	out(stdout, f, "  %-44s %8.1f ns\n", "empty program", med[0]);
	out(stdout, f, "  %-44s %8.1f ns  %5.2f x empty\n", "table empty (no lookup)", med[1],
	    med[1] / med[0]);
	for (int k = 0; k < WL_SIZES; k++) {
		char row[64];

		snprintf(row, sizeof(row), "%zu addresses (%.0f %% of sources found)", placed[k],
			 100.0 * src[k] / pkts);
		out(stdout, f, "  %-44s %8.1f ns  %5.2f x empty, %+.1f ns (%.2f x the table "
		    "empty)%s\n", row, med[2 + k], med[2 + k] / med[0], med[2 + k] - med[1],
		    med[2 + k] / med[1], dst[k] == (unsigned long long)pkts ? "" : "; a destination missed");
	}
out:
	drop_target(&off);
	for (int k = 0; k < WL_SIZES; k++)
		drop_target(&tab[k]);
	free(v);
	free(c);
}

int bench_workloads(struct bench_run *r)
{
	workloads_run(r->f, r->seq);
	return 0;
}
