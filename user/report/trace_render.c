// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A trace's answers as trace prints them, plain or JSON (trace -j, the
 * API's), from a batch the query searched: each packet's windows and
 * drops, its workloads, a cut packet's segments, and the summary. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
#include "base/util.h"
#include "core/workloads.h"
#include "instance/drops.h"
#include "trace_render.h"

/* The windows and drops of a cut packet's segments (of one ID variant),
 * each once, in time order; malloc'd, NULL when none (or out of memory:
 * the segments' own answers still say it). */
static struct hit *union_hits(const struct tpkt *p, uint32_t variant, int *n, bool *cut)
{
	const struct tpkt *s = p + 1 + variant * p->nseg;
	struct hit *u = NULL;
	int cap = 0;

	*n = 0;
	*cut = false;
	for (uint32_t i = 0; i < p->nseg; i++) {
		*cut |= s[i].cut;
		for (int h = 0; h < s[i].nhits; h++) {
			const struct hit *x = &s[i].hits[h];
			int j;

			for (j = 0; j < *n; j++)
				if (u[j].instance == x->instance && u[j].seq == x->seq &&
				    u[j].archived == x->archived && u[j].drop == x->drop &&
				    u[j].sent == x->sent && u[j].reason == x->reason)
					break;
			if (j < *n)
				continue;
			if (*n == cap) {
				struct hit *v = realloc(u, (cap = cap ? 2 * cap : 8) * sizeof(*v));

				if (!v) {
					free(u);
					*n = 0;
					return NULL;
				}
				u = v;
			}
			u[(*n)++] = *x;
		}
	}
	if (*n > 1)
		qsort(u, *n, sizeof(*u), trace_cmp_hit);
	return u;
}

/* "incremented", "fixed" (SKB_GSO_TCP_FIXEDID), or none for IPv6 */
static const char *ids_name(const struct tpkt *p, uint32_t variant)
{
	const struct tpkt *s = p + 1 + variant * p->nseg;

	if (!p->seg_v4)
		return NULL;
	return p->nseg > 1 && s[0].ip_id == s[1].ip_id ? "fixed" : "incremented";
}

static const char *hit_reason(const struct hit *x, char *buf, size_t len)
{
	return x->reason_name ? x->reason_name : bt_drop_reason_name(x->reason, buf, len);
}

/* The workloads that held the packet's address on side (0: source, 1:
 * destination) while it passed, into names[0..WL_MAX), how many: for each
 * of its windows (and drops) at the instance whose history is read, the
 * generations that held the address during the window's time, within the
 * packet's capture time +- the skew, the one holding it at the capture
 * time when several did. */
#define WL_MAX 8
static int hits_workload(const struct trace_ctx *t, const struct tpkt *p, const struct hit *hits,
			 int nh, int side, const char **names)
{
	int n = 0;
	__u64 now;

	if (!t->wlh.n || !t->inst)
		return 0;
	now = bt_boot_to_real(bt_boot_ns());
	for (int h = 0; h < nh; h++) {
		const struct hit *x = &hits[h];
		const char *got[WL_MAX];
		__u64 lo = x->start_ns, hi = x->end_ns ? x->end_ns : now, at;
		int k;

		if (strcmp(x->instance, t->inst->name))
			continue;	/* another instance's archive: its history is not read */
		if (p->lo > lo && p->lo <= hi)
			lo = p->lo;
		if (p->hi < hi && p->hi >= lo)
			hi = p->hi;
		/* an archived window's times, and the capture's, in its writer's
		 * real time: moved into this process's, as the history is turned
		 * (a clock step between the two moved one, not the other) */
		if (x->real_minus_boot) {
			__s64 d = bt_real_minus_boot() - x->real_minus_boot;

			lo += d;
			hi += d;
			at = p->ts ? p->ts + d : 0;
		} else {
			at = p->ts;
		}
		k = bt_wl_hist_find(&t->wlh, &p->pkt.w[2 * side], lo, hi, at, got, WL_MAX);
		for (int i = 0; i < k; i++) {
			bool dup = false;

			for (int j = 0; j < n; j++)
				dup |= !strcmp(names[j], got[i]);
			if (!dup && n < WL_MAX)
				names[n++] = got[i];
		}
	}
	return n;
}

/* JSON's: the name, several joined with " or ", null for none. */
static struct json_object *workload_json(const char **names, int n)
{
	char buf[WL_MAX * (BT_WL_NAME_LEN + 4)];

	buf[0] = 0;
	for (int i = 0, o = 0; i < n && (size_t)o < sizeof(buf); i++)
		o += snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " or " : "", names[i]);
	return n ? json_object_new_string(buf) : NULL;
}

/* The workload a drop in a workload's namespace died in: the one the node
 * forwarded it into, its destination's at the drop's window time. 0 for
 * a drop elsewhere. */
static int drop_workload(const struct trace_ctx *t, const struct tpkt *p, const struct hit *x,
			 const char **names)
{
	return x->in_workload ? hits_workload(t, p, x, 1, 1, names) : 0;
}

static void drop_workload_json(const struct trace_ctx *t, const struct tpkt *p,
			       const struct hit *x, struct json_object *w)
{
	const char *names[WL_MAX];
	int n = drop_workload(t, p, x, names);

	json_object_object_add(w, "in_workload", json_object_new_boolean(x->in_workload));
	json_object_object_add(w, "workload", workload_json(names, n));
}

static void workloads_json(const struct trace_ctx *t, const struct tpkt *p,
			   const struct hit *hits, int nh, struct json_object *o)
{
	const char *names[WL_MAX];
	int n;

	n = hits_workload(t, p, hits, nh, 0, names);
	json_object_object_add(o, "src_workload", workload_json(names, n));
	n = hits_workload(t, p, hits, nh, 1, names);
	json_object_object_add(o, "dst_workload", workload_json(names, n));
}

static void hits_json(const struct trace_ctx *t, const struct tpkt *p, const struct hit *hits,
		      int n, struct json_object *ws, struct json_object *drops)
{
	char a[40], b[40];

	for (int h = 0; h < n; h++) {
		struct json_object *w = json_object_new_object();
		const struct hit *x = &hits[h];
		char rb[96];

		if (x->drop) {
			json_object_array_add(drops, w);
			json_object_object_add(w, "reason",
					       json_object_new_string(hit_reason(x, rb, sizeof(rb))));
			drop_workload_json(t, p, x, w);
		} else {
			json_object_array_add(ws, w);
			json_object_object_add(w, "direction", json_object_new_string(
				x->sent ? "egress" : "ingress"));
		}

		bt_fmt_ns(x->start_ns, a, sizeof(a), "now");
		bt_fmt_ns(x->end_ns, b, sizeof(b), "now");
		json_object_object_add(w, "instance", json_object_new_string(x->instance));
		json_object_object_add(w, "window", json_object_new_int64(x->seq));
		json_object_object_add(w, "start", x->start_ns ? json_object_new_string(a) : NULL);
		json_object_object_add(w, "end", x->end_ns ? json_object_new_string(b) : NULL);
		json_object_object_add(w, "fpr", json_object_new_double(x->fpr));
		json_object_object_add(w, "source", json_object_new_string(
				       x->archived ? "archive" : "live"));
	}
}

/* A cut packet's segments (of the variant answered), each as a packet's
 * answer is: "seen", its windows and drops, or "same_as" */
static struct json_object *segments_json(const struct trace_ctx *t, const struct tpkt *p,
					 uint32_t variant)
{
	struct json_object *arr = json_object_new_array();
	const struct tpkt *s = p + 1 + variant * p->nseg;

	for (uint32_t i = 0; i < p->nseg; i++) {
		struct json_object *o = json_object_new_object();

		json_object_array_add(arr, o);
		json_object_object_add(o, "segment", json_object_new_int64(s[i].seg));
		if (p->seg_tcp)
			json_object_object_add(o, "seq", json_object_new_int64(s[i].seq));
		if (ids_name(p, variant))
			json_object_object_add(o, "ip_id", json_object_new_int64(s[i].ip_id));
		json_object_object_add(o, "seen", json_object_new_boolean(trace_seen_one(t, &s[i])));
		if (!s[i].ip) {
			continue;
		} else if (s[i].same_as) {
			json_object_object_add(o, "same_as", json_object_new_int64(s[i].same_as));
		} else {
			struct json_object *ws = json_object_new_array(), *drops = json_object_new_array();

			hits_json(t, &s[i], s[i].hits, s[i].nhits, ws, drops);
			json_object_object_add(o, "windows", ws);
			json_object_object_add(o, "drops", drops);
			json_object_object_add(o, "hits_cut", json_object_new_boolean(s[i].cut));
		}
	}
	return arr;
}

/* {"from", "until"}: the times a packet's windows overlap; NULL: any */
static struct json_object *searched_json(const struct tpkt *p)
{
	struct json_object *o;
	char a[40], b[40];

	if (!p->lo && p->hi == UINT64_MAX)
		return NULL;
	o = json_object_new_object();
	bt_fmt_ns(p->lo, a, sizeof(a), "-");
	bt_fmt_ns(p->hi, b, sizeof(b), "-");
	json_object_object_add(o, "from", json_object_new_string(a));
	json_object_object_add(o, "until", json_object_new_string(b));
	return o;
}

struct json_object *trace_packet_json(const struct trace_ctx *t, const struct tpkt *p)
{
	struct json_object *o = json_object_new_object(), *ws = json_object_new_array(),
			   *drops = json_object_new_array();
	uint32_t variant = 0;
	struct hit *u = NULL;
	char a[40];
	bool cut = p->cut;

	json_object_object_add(o, "packet", json_object_new_int64(p->number));
	json_object_object_add(o, "seen", json_object_new_boolean(trace_was_seen(t, p)));
	if (p->same_as) {
		/* answered at its first: the windows are the same */
		json_object_put(ws);
		json_object_put(drops);
		json_object_object_add(o, "same_as", json_object_new_int64(p->same_as));
		return o;
	}
	if (p->nseg) {
		const char *ids;
		int nu;

		json_object_object_add(o, "segments_seen",
				       json_object_new_int64(trace_segs_seen(t, p, &variant)));
		json_object_object_add(o, "segments_total", json_object_new_int64(p->nseg));
		json_object_object_add(o, "segment_size", json_object_new_int64(p->seg_size));
		json_object_object_add(o, "segment_size_from", json_object_new_string(
			bt_seg_from_name(p->seg_from)));
		json_object_object_add(o, "payload", json_object_new_int64(p->seg_payload));
		ids = ids_name(p, variant);
		json_object_object_add(o, "ip_ids", ids ? json_object_new_string(ids) : NULL);
		json_object_object_add(o, "ip_ids_tried", json_object_new_int64(p->variants));
		/* seen whole (a replayed capture): its own windows */
		if (p->nseen) {
			hits_json(t, p, p->hits, p->nhits, ws, drops);
			workloads_json(t, p, p->hits, p->nhits, o);
		} else {
			u = union_hits(p, variant, &nu, &cut);
			hits_json(t, p, u, nu, ws, drops);
			workloads_json(t, p, u, nu, o);
			free(u);
		}
		json_object_object_add(o, "segments", segments_json(t, p, variant));
	} else {
		hits_json(t, p, p->hits, p->nhits, ws, drops);
		workloads_json(t, p, p->hits, p->nhits, o);
	}
	/* a merged buffer not cut: why it cannot be found */
	if (p->why && !trace_was_seen(t, p))
		json_object_object_add(o, "why", json_object_new_string(p->why));
	json_object_object_add(o, "windows", ws);
	json_object_object_add(o, "drops", drops);
	/* windows and drops left out: more than MAX_HITS, or the answer's
	 * bound on hits */
	json_object_object_add(o, "hits_cut", json_object_new_boolean(cut));
	if (t->archive_cut_ns) {
		bt_fmt_ns(t->archive_cut_ns, a, sizeof(a), "now");
		json_object_object_add(o, "archive_cut", json_object_new_string(a));
	} else {
		json_object_object_add(o, "archive_cut", NULL);
	}
	/* the range searched for it: its time +- the skew; null: any time */
	json_object_object_add(o, "searched", searched_json(p));
	json_object_object_add(o, "windows_searched", json_object_new_int64(p->nsearched));
	/* archive files of its time that could not be read in full (their
	 * names on stderr): a "not seen" may be wrong there */
	json_object_object_add(o, "archive_damaged", json_object_new_int64(p->damaged));
	/* the archive searched besides the live ring; null: none, so a
	 * window that left the ring was not looked at */
	json_object_object_add(o, "archive", t->archive ? json_object_new_string(t->archive) : NULL);
	/* the chance that at least one searched window answers falsely */
	json_object_object_add(o, "fpr_combined", json_object_new_double(trace_combined_fpr(p)));
	return o;
}

/* Text's: escaped (bt_wl_escape: one word each), several joined with
 * " or ", "-" for none. */
static void print_workload(const char **names, int n)
{
	char e[2 * BT_WL_NAME_LEN];

	if (!n)
		printf("-");
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? " or " : "", bt_wl_escape(names[i], e, sizeof(e)));
}

static void print_hits(const struct trace_ctx *t, const struct tpkt *p, const struct hit *hits,
		       int n)
{
	char a[40], b[40], rb[96];

	for (int h = 0; h < n; h++) {
		const struct hit *x = &hits[h];

		bt_fmt_ns(x->start_ns, a, sizeof(a), "now");
		bt_fmt_ns(x->end_ns, b, sizeof(b), "now");
		if (x->drop) {
			const char *names[WL_MAX];
			int nw = drop_workload(t, p, x, names);

			printf("  dropped here: %s window %u  %s .. %s  (reason %s", x->instance,
			       x->seq, a, b, hit_reason(x, rb, sizeof(rb)));
			if (nw) {
				printf(", in workload ");
				print_workload(names, nw);
			} else if (x->in_workload) {
				printf(", in a workload's namespace");
			}
			printf(")  false-positive rate %.2g  (%s)\n", x->fpr,
			       x->archived ? "archive" : "live");
		} else {
			printf("  %s%s window %u  %s .. %s  false-positive rate %.2g  (%s)\n",
			       x->sent ? "left here: " : "", x->instance, x->seq, a, b, x->fpr,
			       x->archived ? "archive" : "live");
		}
	}
}

/* The packet's workloads, a line when either side has one. */
static void print_workloads(const struct trace_ctx *t, const struct tpkt *p,
			    const struct hit *hits, int nh)
{
	const char *s[WL_MAX], *d[WL_MAX];
	int ns = hits_workload(t, p, hits, nh, 0, s), nd = hits_workload(t, p, hits, nh, 1, d);

	if (!ns && !nd)
		return;
	printf("  workloads: ");
	print_workload(s, ns);
	printf(" > ");
	print_workload(d, nd);
	printf("\n");
}

/* A cut packet: how many of its segments were seen, how it was cut, the
 * windows they were seen in, and those not seen. */
static void print_cut(const struct trace_ctx *t, const struct tpkt *p)
{
	uint32_t variant, seen = trace_segs_seen(t, p, &variant), gone = 0;
	const struct tpkt *s = p + 1 + variant * p->nseg;
	const char *ids = ids_name(p, variant);
	struct hit *u;
	bool cut;
	int nu;

	printf("packet %" PRIu64 ": %s: %u of %u segments (a merged buffer, %u bytes of %s cut "
	       "at %u, %s%s%s%s)\n", p->number, seen == p->nseg ? "seen" : "not seen", seen,
	       p->nseg, p->seg_payload, p->seg_tcp ? "TCP" : "UDP", p->seg_size,
	       bt_seg_from_name(p->seg_from), ids ? "; IP IDs " : "", ids ? ids : "",
	       p->variants > 1 ? ", of both ways tried" : "");
	u = union_hits(p, variant, &nu, &cut);
	print_hits(t, p, u, nu);
	print_workloads(t, p, u, nu);
	free(u);
	for (uint32_t i = 0; i < p->nseg; i++) {
		if (trace_seen_one(t, &s[i]))
			continue;
		printf("%s%u", gone++ ? ", " : "  segments not seen: ", s[i].seg);
	}
	if (gone)
		printf("\n");
	if (cut)
		printf("  (and more: an answer holds at most %d windows a segment)\n", MAX_HITS);
}

/* What each packet searched: its capture time +- the skew, or any time */
static const char *horizon(const struct trace_ctx *t, const char *hex, char *buf, size_t len)
{
	if (t->any_time)
		return "any time (--any-time)";
	if (hex && !t->at)
		return "any time: --hex without --at";
	snprintf(buf, len, "each packet's %s time +- %g s", hex ? "--at" : "capture",
		 t->skew / 1e9);
	return buf;
}

/* The range a packet searched, its windows and their combined rate */
static void print_range(const struct tpkt *p)
{
	char a[40], b[40], range[96] = "any time";

	if (p->lo || p->hi != UINT64_MAX) {
		bt_fmt_ns(p->lo, a, sizeof(a), "-");
		bt_fmt_ns(p->hi, b, sizeof(b), "-");
		snprintf(range, sizeof(range), "%s .. %s", a, b);
	}
	printf("  searched %s: %" PRIu64 " window%s, a false positive among them %.2g\n",
	       range, p->nsearched, p->nsearched == 1 ? "" : "s", trace_combined_fpr(p));
}

/* ...and what of it could not be read */
static void print_searched(const struct tpkt *p)
{
	print_range(p);
	if (p->damaged)
		printf("  %u damaged archive file%s of its time not searched in full (named "
		       "above): it may have been seen there\n", p->damaged,
		       p->damaged == 1 ? "" : "s");
}

void trace_print_packet(const struct trace_ctx *t, const struct tpkt *p)
{
	if (p->same_as) {
		printf("packet %" PRIu64 ": the same as packet %" PRIu64 " (%s)\n", p->number,
		       p->same_as, trace_was_seen(t, p) ? "seen" : "not seen");
		return;
	}
	if (p->nseg && !p->nseen) {
		print_cut(t, p);
		print_searched(p);
		return;
	}
	if (!p->nseen)
		printf("packet %" PRIu64 ": not seen%s%s%s\n", p->number, p->why ? " (" : "",
		       p->why ? p->why : "", p->why ? ")" : "");
	else
		printf("packet %" PRIu64 ": seen in %d window%s\n", p->number, p->nseen,
		       p->nseen > 1 ? "s" : "");
	print_hits(t, p, p->hits, p->nhits);
	print_workloads(t, p, p->hits, p->nhits);
	if (p->cut)
		printf("  (and more: an answer holds at most %d windows a packet)\n", MAX_HITS);
	print_searched(p);
}


void trace_print_batch(const struct trace_ctx *t, struct trace_totals *tot)
{
	if (t->archive_cut_ns > tot->cut_ns)
		tot->cut_ns = t->archive_cut_ns;
	for (size_t i = 0; i < t->n; i++) {
		const struct tpkt *p = &t->p[i];

		if (trace_queried(p) && !p->seg) {
			tot->searched_max = p->nsearched > tot->searched_max ? p->nsearched :
					    tot->searched_max;
			tot->fpr_max = trace_combined_fpr(p) > tot->fpr_max ? trace_combined_fpr(p) :
				       tot->fpr_max;
		}

		if (p->seg)	/* answered with its packet */
			continue;
		if (!p->ip) {
			if (!bt_g.json)
				printf("packet %" PRIu64 ": not an IP packet bloomtap records; "
				       "skipped\n", p->number);
			continue;
		}
		tot->ip++;
		tot->unseen += !trace_was_seen(t, p);
		if (bt_g.json) {
			struct json_object *o = trace_packet_json(t, p);

			printf("%s%s", tot->opened ? "," : "[", json_object_to_json_string_ext(o,
			       (bt_g.pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
			       JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
			tot->opened = bt_g.json_out = true;
		} else {
			trace_print_packet(t, p);
		}
	}
}

void trace_print_end(const struct trace_ctx *t, const char *hex, const struct trace_totals *tot)
{
	char skew[96];

	if (tot->opened)
		puts("]");
	else if (!bt_g.json)
		printf("%" PRIu64 " IP packets: %" PRIu64 " seen, %" PRIu64 " not seen; %" PRIu64
		       " window%s searched at most a packet (%s%s; %s), a false positive among "
		       "them for a packet: %.2g at most\n", tot->ip, tot->ip - tot->unseen,
		       tot->unseen, tot->searched_max, tot->searched_max == 1 ? "" : "s",
		       !t->archive ? "the live ring alone, no archive" : t->inst ?
		       "the live ring and the archive " : "no live ring, the archive ",
		       t->archive ? t->archive : "", horizon(t, hex, skew, sizeof(skew)),
		       tot->fpr_max);
	if (tot->cut_ns && !bt_g.json) {
		char when[40];

		bt_fmt_ns(tot->cut_ns, when, sizeof(when), "now");
		printf("archived windows that end at or before %s were not searched (--budget)\n",
		       when);
	}
}
