// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A source's window probed for a batch's packets, the drops found in it,
 * and what each packet keeps of it: its hits, the windows searched for
 * it and the chance that one of them answered falsely. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "instance/drops.h"
#include "trace_search.h"

const char *trace_intern(struct trace_ctx *t, const char *name)
{
	char **v;

	for (int i = 0; i < t->nnames; i++)
		if (!strcmp(t->names[i], name))
			return t->names[i];
	v = realloc(t->names, (t->nnames + 1) * sizeof(*v));
	if (!v || !(v[t->nnames] = strdup(name))) {
		if (v)
			t->names = v;
		t->err = -ENOMEM;
		return "?";
	}
	t->names = v;
	return t->names[t->nnames++];
}

bool trace_in_range(const struct trace_ctx *t, __u64 start, __u64 end)
{
	return !((t->since && end && end < t->since) || (t->until && start > t->until));
}

bool trace_in_time(const struct trace_ctx *t, const struct tpkt *p, __u64 start, __u64 end,
		   __u32 flags)
{
	__u64 s = start > t->slack ? start - t->slack : 0;
	__u64 e = !end || end + t->slack < end ? UINT64_MAX : end + t->slack;

	if (flags & BT_WIN_REPLAY_TIME)
		return true;
	return p->lo <= e && s <= p->hi;
}

/* A probe of packet p in a window at false-positive rate fpr: the chance
 * that its answer holds no false hit shrinks by 1 - fpr. */
static void probed(struct tpkt *p, double fpr)
{
	p->log_clean += log1p(-(fpr < 1 ? fpr : 1 - 1e-16));
}

static void searched(struct tpkt *p, double fpr)
{
	p->nsearched++;
	probed(p, fpr);
}

void trace_window_searched(const struct probe *pk, size_t n, double fpr, bool sent)
{
	for (size_t i = 0; i < n; i++) {
		searched(pk[i].p, fpr);
		if (sent)
			probed(pk[i].p, fpr);
	}
}

void trace_add_hit(struct trace_ctx *t, struct tpkt *p, const struct hit *h)
{
	/* counted before any bound: a hit left out of the answer is still a
	 * window that saw the packet (the bound once made it "not seen") */
	p->nseen += !h->drop;
	if (p->nhits == MAX_HITS || (t->bounded && !t->hits_left)) {
		p->cut = true;	/* said in the answer */
		return;
	}
	if (t->bounded)
		t->hits_left--;
	if (p->nhits == p->cap) {
		int cap = p->cap ? 2 * p->cap : 2;
		struct hit *v = realloc(p->hits, cap * sizeof(*v));

		if (!v) {
			t->err = -ENOMEM;	/* never a silent "not seen" */
			return;
		}
		p->hits = v;
		p->cap = cap;
	}
	p->hits[p->nhits++] = *h;
}

size_t trace_probe_window(struct trace_src *s, __u32 w, const struct probe *pk, size_t n,
			  bool sent, struct tpkt **found, size_t *nseen)
{
	size_t nf = 0;

	*nseen = 0;
	for (int pass = 0; pass <= sent; pass++) {
		for (size_t i = 0; i < n; i++) {
			int r = s->ops->has(s, w, pass ? bt_hash_sent(pk[i].d) : pk[i].d);

			if (r < 0) {
				if (!pass)
					*nseen = nf;
				return nf;
			}
			if (r)
				found[nf++] = pk[i].p;
		}
		if (!pass)
			*nseen = nf;
	}
	return nf;
}

/* Whether window w holds d; after damage was met, no. */
static bool holds(struct trace_src *s, __u32 w, __u64 d)
{
	return !s->why && s->ops->has(s, w, d) > 0;
}

/* The chance that a packet never dropped is called dropped in a window at
 * false-positive rate f, R reasons tried: with the reason-less digest
 * probed first (any), both it and one of the R must be false positives;
 * archive files before format 6 have none, and any of the R will do. */
static double false_drop_rate(double f, int tries, bool any)
{
	double some = -expm1(tries * log1p(-(f < 1 ? f : 1 - 1e-16)));

	return any ? f * some : some;
}

/* The window's drop digests: for each packet, "dropped" (BT_DROP_ANY)
 * first, when the source has it, then each reason the window holds. The
 * pairs found go to t->dh, for trace_commit_drops() once the window is
 * known not to have been recycled meanwhile. */
int trace_probe_drops(struct trace_ctx *t, struct trace_src *s, __u32 w, const struct probe *pk,
		      size_t n)
{
	__u32 codes[BT_DROP_REASONS];
	int nc = s->ops->reasons(s, w, codes, BT_DROP_REASONS);

	t->ndh = 0;
	for (size_t i = 0; nc && i < n; i++) {
		int in_wl = -1;	/* probed once a packet, when it has a drop */

		if (s->drop_any && !holds(s, w, bt_hash_drop(pk[i].d, BT_DROP_ANY)))
			continue;
		for (int c = 0; c < nc; c++) {
			if (!holds(s, w, bt_hash_drop(pk[i].d, codes[c])))
				continue;
			if (t->ndh == t->capdh) {
				size_t cap = t->capdh ? 2 * t->capdh : 64;
				struct drop_hit *v = realloc(t->dh, cap * sizeof(*v));

				if (!v) {
					t->err = -ENOMEM;
					return -1;
				}
				t->dh = v;
				t->capdh = cap;
			}
			if (in_wl < 0)
				in_wl = holds(s, w, bt_hash_drop(pk[i].d, BT_DROP_IN_WORKLOAD));
			t->dh[t->ndh++] = (struct drop_hit){ pk[i].p, codes[c], in_wl > 0 };
		}
	}
	return nc;
}

/* A drop found reports the chance that the window would call a packet
 * never dropped dropped: the probes' rate, not the window's. */
void trace_commit_drops(struct trace_ctx *t, const struct trace_src *s, struct hit h, int tries,
			const struct probe *pk, size_t n)
{
	char rb[96];

	h.drop = true;
	h.fpr = false_drop_rate(h.fpr, tries, s->drop_any);
	for (size_t i = 0; i < t->ndh; i++) {
		const char *name = s->ops->reason_name ?
				   s->ops->reason_name(s, t->dh[i].reason, rb, sizeof(rb)) : NULL;

		h.reason = t->dh[i].reason;
		h.in_workload = t->dh[i].in_workload;
		h.reason_name = name ? trace_intern(t, name) : NULL;
		trace_add_hit(t, t->dh[i].p, &h);
	}
	for (size_t i = 0; i < n; i++)
		probed(pk[i].p, h.fpr);
}

int trace_cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

bool trace_seen_one(const struct trace_ctx *t, const struct tpkt *p)
{
	return p->same_as ? t->uniq[p->uniq].seen : p->nseen > 0;
}

uint32_t trace_segs_seen(const struct trace_ctx *t, const struct tpkt *p, uint32_t *variant)
{
	uint32_t best = 0;

	*variant = 0;
	for (uint32_t v = 0; v < p->variants; v++) {
		uint32_t c = 0;

		for (uint32_t i = 0; i < p->nseg; i++)
			c += trace_seen_one(t, p + 1 + v * p->nseg + i);
		if (c > best) {
			best = c;
			*variant = v;
		}
	}
	return best;
}

bool trace_was_seen(const struct trace_ctx *t, const struct tpkt *p)
{
	uint32_t v;

	return trace_seen_one(t, p) ||
	       (p->nseg && !p->same_as && trace_segs_seen(t, p, &v) == p->nseg);
}

double trace_combined_fpr(const struct tpkt *p)
{
	/* no window searched: 0, not expm1's -0 */
	return p->log_clean < 0 ? -expm1(p->log_clean) : 0;
}
