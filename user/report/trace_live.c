// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The live ring as a trace's source: the instance's windows through
 * mmap, its digests under the instance's key. */
#include <errno.h>
#include <stdlib.h>
#include "instance/drops.h"
#include "trace_live.h"

struct live_src {
	struct trace_src src;
	const struct bt_spie_maps *sm;
	const struct bt_hash_keys *keys;
	const struct bt_instance *inst;
};

static __u64 live_digest(const struct trace_src *s, const struct bt_spie_packet *p)
{
	return bt_spie_digest(((const struct live_src *)s)->keys, p);
}

static int live_has(struct trace_src *s, __u32 w, __u64 d)
{
	const struct bt_spie_maps *m = ((const struct live_src *)s)->sm;

	return bt_bloom_has(bt_window_filter(m, w), m->bpw, m->meta->k, d);
}

static int live_reasons(const struct trace_src *s, __u32 w, __u32 *codes, int max)
{
	const struct live_src *l = (const struct live_src *)s;
	struct bt_win_reasons r;

	bt_window_reasons(l->inst, l->sm->ncpu, w, &r);
	return r.n || r.other ? bt_win_reasons_try(&r, NULL, 0, codes, max) : 0;
}

static double live_fpr(const struct trace_src *s, __u32 w)
{
	return bt_window_fpr(((const struct live_src *)s)->sm, w);
}

static const struct trace_src_ops live_ops = {
	.digest = live_digest,
	.has = live_has,
	.reasons = live_reasons,
	.fpr = live_fpr,
};

void trace_query_live(struct trace_ctx *t)
{
	struct live_src ls = { { &live_ops, true, NULL }, &t->sm, &t->keys, t->inst };
	struct trace_src *src = &ls.src;
	const struct bt_spie_maps *s = &t->sm;
	const char *name = trace_intern(t, t->inst->name);
	struct tpkt **hit = malloc((t->n ? 2 * t->n : 1) * sizeof(*hit));	/* seen, sent */
	struct probe *all = malloc((t->n ? t->n : 1) * sizeof(*all));
	__u64 *d = malloc((t->n ? t->n : 1) * sizeof(*d));
	int tries;

	if (!hit || !all || !d) {
		free(hit);
		free(all);
		free(d);
		t->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < t->n; i++)
		if (trace_queried(&t->p[i]))
			d[i] = src->ops->digest(src, &t->p[i].pkt);
	for (uint32_t w = 0; w < s->meta->windows; w++) {
		const struct bt_window *win = &s->win[w];
		__u32 st = __atomic_load_n(&win->state, __ATOMIC_ACQUIRE), seq = win->seq;
		struct hit h = { name, bt_boot_to_real(win->start_ns), bt_boot_to_real(bt_window_end_ns(win)),
				 0, seq, false };
		size_t nh, nsent, np = 0;
		bool sent;

		if (st != BT_WIN_CURRENT && st != BT_WIN_CLOSED && st != BT_WIN_SEALED)
			continue;
		if (!trace_in_range(t, h.start_ns, h.end_ns))
			continue;
		/* the packets whose time it covers */
		for (size_t i = 0; i < t->n; i++)
			if (trace_queried(&t->p[i]) &&
			    trace_in_time(t, &t->p[i], h.start_ns, h.end_ns, win->flags))
				all[np++] = (struct probe){ &t->p[i], d[i] };
		if (!np)
			continue;
		/* sent digests are probed too where the window holds some */
		if (t->budget && t->probes + np * (1 + bt_window_sent(s, w)) > t->budget) {
			t->ran_out = t->p[0].number;
			t->err = -E2BIG;
			break;
		}
		t->probes += np * (1 + bt_window_sent(s, w));
		h.fpr = src->ops->fpr(src, w);
		/* sent packets after them (hit[nsent..nh)), probed only where
		 * the window holds some: each probe is a chance of a false
		 * "left here" */
		sent = bt_window_sent(s, w);
		nh = trace_probe_window(src, w, all, np, sent, hit, &nsent);
		/* drops: of every packet of its time (a drop may land in a
		 * later window than the packet's own digest) */
		tries = trace_probe_drops(t, src, w, all, np);
		if (tries < 0)
			break;
		/* current -> closed -> sealed leaves the bits; being cleared
		 * (EMPTY, READY) or a new number means recycled under us: what
		 * was read of it, drops and their reasons too, is dropped */
		if (__atomic_load_n(&win->state, __ATOMIC_ACQUIRE) < BT_WIN_CURRENT ||
		    __atomic_load_n(&win->seq, __ATOMIC_ACQUIRE) != seq)
			continue;
		trace_window_searched(all, np, h.fpr, sent);
		t->live_seq[t->nlive++] = seq;
		for (size_t i = 0; i < nh; i++) {
			h.sent = i >= nsent;
			trace_add_hit(t, hit[i], &h);
		}
		h.sent = false;
		if (tries)
			trace_commit_drops(t, src, h, tries, all, np);
	}
	free(hit);
	free(all);
	free(d);
}
