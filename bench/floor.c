// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's floor section: the lines a packet touches, by stage, and
 * each stage's cost against the memory floor of those lines (bench.bpf.c,
 * bench_floor: the same lines in arrays of the stage's sizes, and nothing
 * else), in the same run. The heavy stage's lines depend on the traffic
 * (a flow cache hit touches two, a miss four or five): they come from a
 * model of its path (bpf/heavy.bpf.h) run in user space over the same
 * sequence, with the instance's sizes and threshold. The model leaves out
 * refusals (none at the defaults) and the occupancy word's write at a
 * nomination; the floor touches at most one line an array a packet, so
 * the flow memory's probes (under one a packet here) are not capped. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "instance/sketch.h"
#include "bench.h"

/* Lines a packet of the heavy stage, array by array */
enum { HL_FC, HL_FMC, HL_FMO, HL_FM, HL_SKETCH, HL_MAX };
static const char *const hl_names[HL_MAX] = {
	[HL_FC] = "flow cache", [HL_FMC] = "flow memory counts", [HL_FMO] = "occupancy words",
	[HL_FM] = "flow memory slots", [HL_SKETCH] = "sketch",
};

static uint64_t flow_hash(uint32_t flow, uint64_t salt)
{
	return bt_fmix64((flow + 1) * 0x9e3779b97f4a7c15ULL ^ salt);
}

/* The heavy stage's path for one CPU and one interval of seq: the flow
 * cache (direct-mapped, filled when the flow memory holds the flow), the
 * occupancy word, the flow memory's probes (linear, from the flow's slot),
 * the sketch's line, nomination by the fraction rule on the flow's true
 * count (the sketch's estimate is a little higher: a little earlier). */
static int model_heavy(const struct bt_meta *m, const uint32_t *seq, double lines[HL_MAX])
{
	uint32_t fc[BT_FC_ENTRIES] = { 0 }, fm = m->fm_slots;	/* flow + 1 */
	uint64_t *count = calloc(FLOWS, sizeof(*count)), div = bt_heavy_frac_div(m);
	uint32_t *slot = calloc(fm, sizeof(*slot));
	uint64_t n[HL_MAX] = { 0 };

	if (!count || !slot) {
		free(count);
		free(slot);
		return -1;
	}
	for (uint32_t t = 0; t < SEQ_LEN; t++) {
		uint32_t x = seq[t], e = flow_hash(x, 1) >> (64 - BT_FC_BITS);
		uint32_t start = flow_hash(x, 2) % fm, i, p;
		bool found = false;

		n[HL_FC]++;
		if (fc[e] == x + 1) {
			n[HL_FMC]++;
			continue;
		}
		n[HL_FMO]++;
		for (p = 0; slot[start] && p < BT_FM_PROBES; p++) {
			i = (start + p) % fm;
			n[HL_FM]++;
			if (!slot[i])
				break;
			if ((found = slot[i] == x + 1))
				break;
		}
		if (found) {
			fc[e] = x + 1;
			n[HL_FMC]++;
			continue;
		}
		n[HL_SKETCH]++;
		if (!div || ++count[x] * div < t + 1ULL)
			continue;
		for (p = 0; p < BT_FM_PROBES; p++) {	/* nominated */
			i = (start + p) % fm;
			n[HL_FM]++;
			if (!slot[i]) {
				slot[i] = x + 1;
				break;
			}
		}
	}
	for (int a = 0; a < HL_MAX; a++)
		lines[a] = (double)n[a] / SEQ_LEN;
	free(count);
	free(slot);
	return 0;
}

/* The per-CPU counters' lines a keyed IPv4/UDP packet updates */
static int counter_lines(void)
{
	const size_t at[] = {
		offsetof(struct bt_counters, c[BT_CTR_PACKETS]),
		offsetof(struct bt_counters, c[BT_CTR_BYTES]),
		offsetof(struct bt_counters, c[BT_CTR_L3_IPV4]),
		offsetof(struct bt_counters, c[BT_CTR_L4_UDP]),
		offsetof(struct bt_counters, c[BT_CTR_SPIE_INSERTED]),
		offsetof(struct bt_counters, part[0]),
	};
	unsigned seen = 0;

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		seen |= 1u << (at[i] / 64);
	return __builtin_popcount(seen);
}

static uint32_t share(double per_packet)
{
	return per_packet >= 1 ? 65536 : (uint32_t)(per_packet * 65536 + 0.5);
}

/* The heavy stage's floor (and everything's: the SPIE window's block
 * line too) */
static void floor_arrays(const struct bt_meta *m, const double lines[HL_MAX], bool spie,
			 struct floor_cfg *c)
{
	const uint32_t size[HL_MAX] = {
		[HL_FC] = BT_FC_ENTRIES,
		[HL_FMC] = m->fm_slots * sizeof(struct bt_cm_cell) / 64,
		[HL_FMO] = bt_fmo_words(m->fm_slots) * 8 / 64 ? bt_fmo_words(m->fm_slots) * 8 / 64 : 1,
		[HL_FM] = m->fm_slots,
		[HL_SKETCH] = bt_cm_lines(m),
	};

	c->n = 0;
	for (int a = 0; a < HL_MAX; a++) {
		c->name[c->n] = hl_names[a];
		c->lines[c->n] = size[a];
		c->p[c->n++] = share(lines[a]);
	}
	if (spie) {
		c->name[c->n] = "SPIE block";
		c->lines[c->n] = m->window_bits / BT_BLOCK_BITS;
		c->p[c->n++] = 65536;
	}
}

enum { F_EMPTY, F_PARSE, F_HEAVY, F_ALL, F_REF_CMS, F_FLOOR_NONE, F_FLOOR_HEAVY, F_FLOOR_ALL,
       F_MAX };

int bench_floor(struct bench_run *r)
{
	const struct bt_meta *m = &targets[P_ALL].inst.meta;
	static struct floor_cfg fh[2], fa[2], none;
	static struct target floor_heavy[2], floor_all[2],
		floor_none = { .drv_prog = "bench_floor", .floor = &none };
	const uint32_t *seqs[2] = { r->seq, r->useq };
	const char *traffic[2] = { "Zipf", "uniform" };
	double lines[2][HL_MAX], med[2][F_MAX];

	for (int s = 0; s < 2; s++) {
		struct target *t[F_MAX] = { &targets[P_EMPTY], &targets[P_PARSE], &targets[P_HEAVY],
					    &targets[P_ALL], &targets[P_REF_CMS] };
		struct frame fr;

		if (model_heavy(m, seqs[s], lines[s]))
			return 1;
		floor_arrays(m, lines[s], false, &fh[s]);
		floor_arrays(m, lines[s], true, &fa[s]);
		floor_heavy[s] = (struct target){ .drv_prog = "bench_floor", .floor = &fh[s] };
		floor_all[s] = (struct target){ .drv_prog = "bench_floor", .floor = &fa[s] };
		t[F_FLOOR_NONE] = &floor_none;
		t[F_FLOOR_HEAVY] = &floor_heavy[s];
		t[F_FLOOR_ALL] = &floor_all[s];
		bench_frame_v4_udp(&fr);
		if (run_targets(&fr, false, seqs[s], t, F_MAX, med[s]))
			return 1;
	}

	out(stdout, r->f, "\nlines a packet touches, by stage (IPv4/UDP; the heavy stage's from a "
	    "model of its path over the bench's sequences)\n");
	out(stdout, r->f, "  %-44s %10s %10s %12s\n", "stage: array (lines in it)", "Zipf",
	    "uniform", "shared");
	out(stdout, r->f, "  %-44s %10d %10d %12s\n", "parsing: the frame", 1, 1, "no");
	out(stdout, r->f, "  %-44s %10d %10d %12s\n", "counters: this CPU's struct bt_counters",
	    counter_lines(), counter_lines(), "no");
	double sum[2] = { 0, 0 };

	for (int a = 0; a < HL_MAX; a++) {
		char what[64];

		snprintf(what, sizeof(what), "heavy: %s (%u)", hl_names[a], fh[0].lines[a]);
		out(stdout, r->f, "  %-44s %10.3f %10.3f %12s\n", what, lines[0][a], lines[1][a],
		    a == HL_FM || a == HL_FMO ? "yes, read" : "no");
		sum[0] += lines[0][a];
		sum[1] += lines[1][a];
	}
	out(stdout, r->f, "  %-44s %10.3f %10.3f\n", "heavy: all", sum[0], sum[1]);
	out(stdout, r->f, "  %-44s %10d %10d %12s\n", "SPIE: the window's block (random)", 1, 1,
	    "yes, locked or");
	out(stdout, r->f, "  %-44s %10d %10d %12s\n", "SPIE: this CPU's batch count, bt_ctl", 2, 2,
	    "bt_ctl, read");

	out(stdout, r->f, "\nstages against their memory floor (64-byte IPv4/UDP; a stage on top "
	    "of parsing, everything on top of the empty program; a floor's lines on top of the "
	    "floor program's own parsing, everything's plus bloomtap's parsing)\n");
	out(stdout, r->f, "  %-44s %16s %16s\n", "", traffic[0], traffic[1]);
	for (int row = 0; row < 4; row++) {
		static const char *const what[4] = {
			"heavy stage", "  its floor", "everything", "  its floor (plus parsing)",
		};
		out(stdout, r->f, "  %-44s", what[row]);
		for (int s = 0; s < 2; s++) {
			const double *x = med[s];
			double v = row == 0 ? x[F_HEAVY] - x[F_PARSE]
				 : row == 1 ? x[F_FLOOR_HEAVY] - x[F_FLOOR_NONE]
				 : row == 2 ? x[F_ALL] - x[F_EMPTY]
				 : x[F_FLOOR_ALL] - x[F_FLOOR_NONE] + x[F_PARSE] - x[F_EMPTY];

			out(stdout, r->f, " %+16.1f", v);
		}
		out(stdout, r->f, "\n");
	}
	out(stdout, r->f, "  targets:\n");
	for (int s = 0; s < 2; s++) {
		const double *x = med[s];
		double heavy = x[F_HEAVY] - x[F_PARSE], hfloor = x[F_FLOOR_HEAVY] - x[F_FLOOR_NONE];
		double all = x[F_ALL] - x[F_EMPTY],
		       afloor = x[F_FLOOR_ALL] - x[F_FLOOR_NONE] + x[F_PARSE] - x[F_EMPTY];
		double ref = x[F_REF_CMS] - x[F_PARSE], cap = s ? 0.65 : 0.5;

		out(stdout, r->f, "  - %s: heavy stage at most 1.3 times its floor: %.2f: %s\n",
		    traffic[s], heavy / hfloor, heavy <= 1.3 * hfloor ? "met" : "MISSED");
		out(stdout, r->f, "  - %s: heavy stage at most %.2f of the plain count-min "
		    "(+%.1f ns): %.2f: %s\n", traffic[s], cap, ref, heavy / ref,
		    heavy <= cap * ref ? "met" : "MISSED");
		out(stdout, r->f, "  - %s: everything at most 1.3 times its floor: %.2f: %s\n",
		    traffic[s], all / afloor, all <= 1.3 * afloor ? "met" : "MISSED");
	}
	return 0;
}
