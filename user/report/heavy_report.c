// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Heavy flows as the CLI and the API answer them: the last complete and
 * the current interval, in JSON or text, with the thresholds and bounds
 * they were found under. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/common.h"
#include "heavy_report.h"
#include "flow.h"
#include "ipfix.h"
#include "base/options.h"
#include "instance/sketch.h"
#include "instance/spie.h"
#include "base/util.h"
#include "instance/watch.h"
#include "instance/wltable.h"
#include "core/workloads.h"

/* Said by the plain output and, with -j, on stderr. */
#define LOST_NOMINATIONS "nominations lost to a full flow memory: heavy flows may be missing"

static struct json_object *class_json(const struct bt_watch_names *w, const uint8_t a[16])
{
	const char *c = bt_watch_name_of(w, a);

	return c ? json_object_new_string(c) : NULL;
}

/* What names a report's addresses: the watch lists' classes, and the
 * workloads: a received or sent flow's by the ids its key carried, a
 * dropped flow's (whose key carries its reason instead) by the table's
 * history during the interval (wlh.n 0: none kept). */
struct report_names {
	struct bt_watch_names w;
	struct bt_wl_names wl;
	struct bt_wl_hist_view wlh;
	struct bt_watch_count *dropped_by;	/* wl_counts' dropped stage */
	__u64 slack;		/* ns: the steps the instance's clock took
				 * (bt_clock_span): an interval's times are
				 * real time when it began, the history's
				 * turned now */
	bool dropped;
};

static void names_open(const struct bt_heavy_maps *m, struct report_names *rn)
{
	bt_watch_names_open(m->inst, &rn->w);
	bt_wl_names_open(m->inst, &rn->wl);
	rn->dropped = m->dropped;
	rn->dropped_by = NULL;
	if (!m->dropped || bt_wl_hist_load(m->inst->name, &rn->wlh)) {
		memset(&rn->wlh, 0, sizeof(rn->wlh));
		return;
	}
	rn->slack = bt_clock_span(m->inst);
	rn->dropped_by = calloc(BT_WL_IDS, sizeof(*rn->dropped_by));
	if (rn->dropped_by && bt_wl_counts(m->inst, BT_WL_DROPPED, rn->dropped_by)) {
		free(rn->dropped_by);
		rn->dropped_by = NULL;
	}
}

static void names_close(struct report_names *rn)
{
	bt_watch_names_close(&rn->w);
	bt_wl_names_close(&rn->wl);
	bt_wl_hist_free(&rn->wlh);
	free(rn->dropped_by);
}

/* The workload of f's address on side (0: source), NULL for none, into
 * buf (each name escaped for text with plain): a received or sent
 * flow's by its id; a dropped flow's, the generations that held the
 * address during the interval (widened by the clock's steps) and had
 * drops counted on that side (all of them when none had), joined with
 * " or ". */
#define WL_HIST_MAX 4
static const char *flow_workload(const struct report_names *rn, const struct bt_heavy_report *r,
				 const struct bt_heavy_flow *f, int side, bool plain, char *buf,
				 size_t len)
{
	__u32 ids[WL_HIST_MAX], kept = 0;
	const char *one = NULL;
	__u64 addr[2];
	int k, o = 0;

	buf[0] = 0;
	if (!rn->dropped) {
		one = bt_wl_name_of(&rn->wl, f->wl[side]);
		return one && plain ? bt_wl_escape(one, buf, len) : one;
	}
	if (!rn->wlh.n)
		return NULL;
	memcpy(addr, side ? f->key.dst : f->key.src, sizeof(addr));
	k = bt_wl_hist_ids(&rn->wlh, addr, r->start_ns > rn->slack ? r->start_ns - rn->slack : 0,
			   (r->end_ns ? r->end_ns : bt_boot_to_real(bt_boot_ns())) + rn->slack, ids,
			   WL_HIST_MAX);
	for (int i = 0; rn->dropped_by && i < k; i++)
		kept += rn->dropped_by[ids[i]].packets[side] > 0;
	for (int i = 0; i < k && o + 4 < (int)len; i++) {
		const char *s = bt_wl_name_of(&rn->wlh.names, ids[i]);

		if (!s || (kept && !rn->dropped_by[ids[i]].packets[side]))
			continue;
		o += snprintf(buf + o, len - o, "%s", o ? " or " : "");
		if (plain)
			bt_wl_escape(s, buf + o, len - o);
		else
			snprintf(buf + o, len - o, "%s", s);
		o += strlen(buf + o);
	}
	return o ? buf : NULL;
}

/* dir: "ingress" or "egress", NULL for dropped flows (a drop has none) */
static void report_json(const struct bt_heavy_report *r, size_t n, const char *dir,
			const struct report_names *rn, struct json_object *arr)
{
	const char *which = r->current ? "current" : "last";
	char start[40];

	bt_fmt_ns(r->start_ns, start, sizeof(start), "-");
	for (size_t i = 0; i < r->n && i < n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct json_object *o = json_object_new_object();

		bt_flow_key_json(o, &f->key);
		json_object_object_add(o, "bytes", json_object_new_uint64(f->bytes));
		json_object_object_add(o, "packets", json_object_new_uint64(f->packets));
		json_object_object_add(o, "exact_bytes", json_object_new_uint64(f->exact_bytes));
		json_object_object_add(o, "exact_packets", json_object_new_uint64(f->exact_packets));
		json_object_object_add(o, "error_bytes", json_object_new_uint64(r->error_bytes));
		json_object_object_add(o, "error_packets", json_object_new_uint64(r->error_packets));
		json_object_object_add(o, "error_probability",
				       json_object_new_double(r->error_probability));
		json_object_object_add(o, "interval", json_object_new_string(which));
		if (dir)
			json_object_object_add(o, "direction", json_object_new_string(dir));
		json_object_object_add(o, "interval_start",
				       r->start_ns ? json_object_new_string(start) : NULL);
		json_object_object_add(o, "interval_bytes", json_object_new_uint64(r->total_bytes));
		json_object_object_add(o, "interval_packets",
				       json_object_new_uint64(r->total_packets));
		json_object_object_add(o, "lost_nominations",
				       json_object_new_uint64(r->lost_nominations));
		json_object_object_add(o, "src_class", class_json(&rn->w, f->key.src));
		json_object_object_add(o, "dst_class", class_json(&rn->w, f->key.dst));
		/* the workloads of the addresses when the packets passed */
		for (int side = 0; side < 2; side++) {
			char buf[WL_HIST_MAX * (BT_WL_NAME_LEN + 4)];
			const char *name = flow_workload(rn, r, f, side, false, buf, sizeof(buf));

			json_object_object_add(o, side ? "dst_workload" : "src_workload",
					       name ? json_object_new_string(name) : NULL);
		}
		json_object_array_add(arr, o);
	}
}

static void report_plain(const struct bt_heavy_report *r, size_t n,
			 const struct report_names *rn)
{
	const struct bt_watch_names *w = &rn->w;
	char wlb[2][WL_HIST_MAX * (4 * BT_WL_NAME_LEN + 4)];
	bool named = false;
	char t[32];

	bt_fmt_ns(r->start_ns, t, sizeof(t), "-");
	if (!r->total_packets) {
		printf("%s interval: no packets\n", r->current ? "current" : "last complete");
		return;
	}
	printf("%s interval (since %s): %" PRIu64 " bytes, %" PRIu64 " packets; heavy at "
	       ">= %" PRIu64 " %s; estimates high by at most %" PRIu64 " bytes, %" PRIu64
	       " packets (a flow's by more: chance at most %.2g)\n",
	       r->current ? "current" : "last complete", t, (uint64_t)r->total_bytes, (uint64_t)r->total_packets,
	       (uint64_t)(r->threshold_bytes ? r->threshold_bytes : r->threshold_packets),
	       r->threshold_bytes ? "bytes" : "packets", (uint64_t)r->error_bytes,
	       (uint64_t)r->error_packets, r->error_probability);
	if (r->lost_nominations)
		printf("  %" PRIu64 " " LOST_NOMINATIONS " (raise --flow-memory)\n",
		       (uint64_t)r->lost_nominations);
	if (!r->n) {
		printf("  no heavy flow\n");
		return;
	}
	for (size_t i = 0; i < r->n && i < n; i++)
		named = named || flow_workload(rn, r, &r->flows[i], 0, true, wlb[0], sizeof(wlb[0])) ||
			flow_workload(rn, r, &r->flows[i], 1, true, wlb[1], sizeof(wlb[1]));
	printf("  %-60s %14s %10s %14s%s%s\n", "flow", "bytes", "packets", "exact bytes",
	       w->on ? "  classes (src > dst)" : "", named ? "  workloads (src > dst)" : "");
	for (size_t i = 0; i < r->n && i < n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		const char *sc = bt_watch_name_of(w, f->key.src), *dc = bt_watch_name_of(w, f->key.dst);
		char buf[160];

		printf("  %-60s %14" PRIu64 " %10" PRIu64 " %14" PRIu64,
		       bt_flow_str(&f->key, buf, sizeof(buf)), (uint64_t)f->bytes,
		       (uint64_t)f->packets, (uint64_t)f->exact_bytes);
		if (w->on)
			printf("  %s > %s", sc ? sc : "-", dc ? dc : "-");
		if (named) {
			const char *sw = flow_workload(rn, r, f, 0, true, wlb[0], sizeof(wlb[0])),
				   *dw = flow_workload(rn, r, f, 1, true, wlb[1], sizeof(wlb[1]));

			printf("  %s > %s", sw ? sw : "-", dw ? dw : "-");
		}
		printf("\n");
	}
	if (r->n > n)
		printf("  ... %zu more (-n)\n", r->n - n);
}

/* The given intervals' heavy flows as one JSON array; NULL if out of memory.
 * warn: lost nominations also on stderr (the command line; the API has the
 * field and the metric). */
static struct json_object *intervals_json(const struct bt_heavy_maps *m, const __u32 *ivs,
					  int nivs, size_t n, bool by_packets,
					  const struct bt_threshold *thr, bool warn)
{
	struct json_object *arr = json_object_new_array();
	struct report_names rn;

	names_open(m, &rn);
	for (int i = 0; i < nivs; i++) {
		struct bt_heavy_report r;

		if (bt_heavy_collect(m, ivs[i], thr, by_packets, &r)) {
			json_object_put(arr);
			names_close(&rn);
			return NULL;
		}
		report_json(&r, n, m->dropped ? NULL : bt_direction_names[m->counters_key], &rn,
			    arr);
		if (warn && r.lost_nominations)	/* even with no flow to carry the field */
			bt_warn("%s interval: %" PRIu64 " " LOST_NOMINATIONS,
				r.current ? "current" : "last", (uint64_t)r.lost_nominations);
		bt_heavy_report_free(&r);
	}
	names_close(&rn);
	return arr;
}

/* Prints the heavy flows of the given intervals, last complete first. */
int bt_heavy_print_intervals(const struct bt_heavy_maps *m, const __u32 *ivs, int nivs,
			   size_t n, bool by_packets, const struct bt_threshold *thr)
{
	if (bt_g.json) {
		struct json_object *arr = intervals_json(m, ivs, nivs, n, by_packets, thr, true);

		if (!arr) {
			bt_err("out of memory");
			return -ENOMEM;
		}
		bt_json_print(arr);
		return 0;
	}
	struct report_names rn;
	int err = 0;

	names_open(m, &rn);
	/* which one, when several run */
	printf("instance %s%s\n", m->inst->name,
	       m->dropped ? ": heavy dropped flows (each key ends with its drop reason)"
	       : m->counters_key == BT_DIR_EGRESS ? ": heavy sent flows (egress)" : "");
	for (int i = 0; i < nivs && !err; i++) {
		struct bt_heavy_report r;

		if (bt_heavy_collect(m, ivs[i], thr, by_packets, &r)) {
			bt_err("out of memory");
			err = -ENOMEM;
			break;
		}
		report_plain(&r, n, &rn);
		bt_heavy_report_free(&r);
	}
	names_close(&rn);
	return err;
}

/* Last complete interval first, then the current one. */
void bt_heavy_both_intervals(const struct bt_heavy_maps *m, __u32 ivs[2])
{
	ivs[1] = m->ctl->interval & 1;
	ivs[0] = !ivs[1];
}

struct json_object *bt_heavy_json(const struct bt_heavy_maps *m, size_t n, bool by_packets,
				  const struct bt_threshold *thr)
{
	__u32 ivs[2];

	bt_heavy_both_intervals(m, ivs);
	return intervals_json(m, ivs, 2, n, by_packets, thr, false);
}

struct json_object *bt_heavy_dropped_json(const struct bt_instance *inst, size_t n)
{
	struct bt_heavy_maps m;
	struct json_object *o;

	if (bt_heavy_map(inst, &m))
		return NULL;
	o = bt_heavy_json(m.drops, n, false, NULL);
	bt_heavy_unmap(&m);
	return o;
}

/* Both intervals of one stage: the received flows', or the dropped. */
static int print_stage(const struct bt_instance *inst, bool dropped, size_t n, bool by_packets,
		       const struct bt_threshold *thr)
{
	struct bt_heavy_maps m;
	__u32 ivs[2];
	int err = bt_heavy_map(inst, &m);

	if (err) {
		bt_err_errno(err, "mapping the sketch");
		return err;
	}
	bt_heavy_both_intervals(&m, ivs);
	err = bt_heavy_print_intervals(dropped ? m.drops : &m, ivs, 2, n, by_packets, thr);
	bt_heavy_unmap(&m);
	return err;
}

int bt_print_heavy_dropped(const struct bt_instance *inst, size_t n)
{
	return print_stage(inst, true, n, false, NULL);
}

int bt_print_heavy(const struct bt_instance *inst, size_t n, bool by_packets,
		   const struct bt_threshold *thr)
{
	return print_stage(inst, false, n, by_packets, thr);
}
