// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The SPIE query the CLI and the API share: did these packets pass here,
 * and when? Every live or archived window whose filter holds a packet's
 * digest, with its time range and its false-positive rate, the drops
 * recorded with it, and the chance that at least one of the windows
 * searched answers falsely. Captures are read in batches, in bounded
 * memory whatever their size. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <net/if.h>
#include <sys/stat.h>
#include "core/archive.h"
#include "core/capture.h"
#include "base/common.h"
#include "trace_query.h"
#include "core/digest.h"
#include "core/segments.h"
#include "instance/drops.h"
#include "instance/instance.h"
#include "base/options.h"
#include "instance/spie.h"
#include "instance/wltable.h"
#include "core/workloads.h"
#include "base/util.h"

#define BATCH 65536	/* packets queried at once: ~120 bytes each */
#define MAX_HITS 64
/* An API answer's bound besides BT_TRACE_API_HITS: the most window x
 * packet probes, live and archived, of one request (the agent asks for
 * fewer, by its client's CPU share): a packet alone searches 64 M
 * windows, 15,000 of them (a full 1 MiB body) the newest 4,473. */
#define API_BUDGET (1ULL << 26)

struct hit {
	const char *instance;	/* the trace's or the archive file's copy */
	__u64 start_ns, end_ns;	/* CLOCK_REALTIME */
	double fpr;
	uint32_t seq;
	bool archived;
	__s64 real_minus_boot;	/* an archived window's writer's (its times'
				 * real-time basis), 0: this process's */
	bool drop;		/* a drop digest: dropped here with reason */
	bool sent;		/* a sent packet's digest: left here (egress) */
	bool in_workload;	/* a drop in a workload's namespace (its
				 * BT_DROP_IN_WORKLOAD digest found too) */
	__u32 reason;
	const char *reason_name;	/* as an archive file's kernel named it
					 * (interned), or NULL: this kernel names it */
};

/* A packet to trace. Most are seen in a window or two: hits grow on
 * demand. */
struct tpkt {
	struct bt_spie_packet pkt;
	bool ip;
	uint64_t number;	/* in the input, from 1 */
	__u64 digest;		/* scratch: under the key of what is searched */
	struct hit *hits;
	int nhits, cap;
	int nseen;		/* hits that are not drops */
	/* the windows searched for it: those overlapping [lo, hi] (CLOCK_REALTIME
	 * ns; 0 and UINT64_MAX: any time), how many, and the sum of their
	 * log(1 - fpr) */
	__u64 ts, lo, hi;
	uint64_t nsearched;
	double log_clean;
	bool cut;		/* hits left out: MAX_HITS, or the answer's bound */
	uint64_t same_as;	/* the number of an earlier packet with the same
				 * invariant bytes (answered there), or 0 */
	int64_t uniq;		/* its entry in trace_ctx.uniq, or -1 */
	/* a merged buffer cut into its segments (core/segments.c): nseg *
	 * variants segments follow it in the batch; it is seen whole (a
	 * replay, generic XDP) or as all the segments of one variant */
	uint32_t nseg, variants, seg_size, seg_payload;
	enum bt_seg_from seg_from;
	bool seg_tcp, seg_v4;
	uint32_t seg;		/* a segment: its number in its packet, from 1; 0 */
	uint32_t seq;		/* a TCP segment's sequence number */
	uint16_t ip_id;		/* an IPv4 segment's ID */
	const char *why;	/* a merged buffer not cut: why */
};

/* A packet's invariant bytes seen earlier in the input: its number, and
 * whether it was seen (once its batch was queried). */
struct uniq_pkt {
	struct bt_spie_packet pkt;
	uint64_t number;
	__u64 lo, hi;		/* the range its answer searched */
	uint64_t batch;		/* the batch it came in */
	size_t idx;		/* its place there */
	bool seen;
};
#define MAX_UNIQ (1 << 20)	/* packets remembered for the repeats after them */

/* What a batch was searched against, and the answers. */
struct trace_ctx {
	/* the sources, for the whole trace */
	const struct bt_instance *inst;	/* live windows, NULL for none */
	struct bt_spie_maps sm;
	struct bt_hash_keys keys;
	__u64 key_id;
	const char *archive;		/* NULL for none */
	const char *archive_instance;	/* only its files; NULL: all */
	__u64 since, until;		/* CLOCK_REALTIME, 0: open */
	__u64 skew;			/* a packet's windows: its time +- skew */
	bool any_time;			/* every window for every packet */
	__u64 at;			/* --hex's time; 0: any time */
	__u64 slack;			/* window times widened by this: the
					 * clock's steps (bt_clock_span) */
	char **names;			/* instance names the hits point to */
	int nnames;
	int skipped;			/* damaged archive files, named once */
	char **warned;
	int nwarned;
	ZSTD_DCtx *dctx;		/* lent to every archive file read */
	/* the batch */
	struct tpkt *p;
	size_t n;
	int err;
	struct drop_hit {
		struct tpkt *p;
		__u32 reason;
		bool in_workload;
	} *dh;				/* a window's drop digests found */
	size_t ndh, capdh;
	uint32_t *live_seq;		/* live windows searched, by seq */
	int nlive;
	/* the whole input: repeats answered once */
	struct uniq_pkt *uniq;
	uint32_t *uslot;		/* open addressing: index + 1 */
	size_t nuniq, nuslots;
	uint64_t batch_no;
	/* bounds of an answer (the API's; the CLI streams unbounded) */
	bool bounded;
	uint64_t hits_left;		/* hits it may still hold */
	/* window x packet probes, live and archived, of the whole trace:
	 * the archive's newest first, what does not fit left out; a batch
	 * whose live windows do not fit ends the trace (ran_out: its first
	 * packet's number) */
	uint64_t budget, probes;
	uint64_t ran_out;
	double deadline;		/* bt_mono_s(); 0: none */
	__u64 archive_cut_ns;		/* the batch's archived windows ending at
					 * or before this were not searched */
	/* merged buffers: the flows' segment sizes, learned from the whole
	 * capture first when it can be read twice (learned), else as it is
	 * read; mss: --mss, 0 for none */
	struct bt_seg_flows *flows;
	struct bt_seg_split *split;
	bool learned;
	uint32_t mss;
	/* the instance's workload history (n 0: none kept) */
	struct bt_wl_hist_view wlh;
};

static void batch_reset(struct trace_ctx *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->p[i].hits);
		t->p[i].hits = NULL;
		t->p[i].nhits = t->p[i].cap = t->p[i].nseen = 0;
		t->p[i].cut = false;
		t->p[i].same_as = 0;
		t->p[i].uniq = -1;
		t->p[i].nseg = t->p[i].seg = 0;
		t->p[i].why = NULL;
		t->p[i].nsearched = 0;
		t->p[i].log_clean = 0;
	}
	t->n = 0;
	t->batch_no++;
	t->nlive = 0;
	t->archive_cut_ns = 0;	/* the probes go on counting: the budget is the trace's */
}

/* Queried: an IP packet that does not repeat an earlier one. */
static bool queried(const struct tpkt *p)
{
	return p->ip && !p->same_as;
}

static uint64_t pkt_hash(const struct bt_spie_packet *p)
{
	uint64_t h = 0;

	for (int w = 0; w < BT_SPIE_WORDS; w++)
		h = (h ^ p->w[w]) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 29;
}

/* Whether u's answer serves p, a packet with the same bytes: when u's
 * range covers p's; or u is of this batch, not yet searched, and at most
 * a skew away (its range then grows to cover p's). */
static bool same_time(struct trace_ctx *t, struct uniq_pkt *u, const struct tpkt *p)
{
	struct tpkt *first = &t->p[u->idx];

	if (u->lo <= p->lo && p->hi <= u->hi)
		return true;
	if (u->batch != t->batch_no || first->number != u->number || p->ts > first->ts + t->skew ||
	    first->ts > p->ts + t->skew)
		return false;
	first->lo = u->lo = u->lo < p->lo ? u->lo : p->lo;
	first->hi = u->hi = u->hi > p->hi ? u->hi : p->hi;
	return true;
}

/* Marks p a repeat of an earlier packet of the input with the same
 * invariant bytes (the same digest under any key: one answer serves) and
 * of its time (same_time), or remembers it as the first: of its bytes,
 * or of its bytes at that time. Past MAX_UNIQ, packets are queried each. */
static void dedup(struct trace_ctx *t, struct tpkt *p)
{
	size_t i;

	if (!p->ip)
		return;
	if (t->nuniq * 2 >= t->nuslots) {
		size_t n = t->nuslots ? 2 * t->nuslots : 1024;
		uint32_t *slots;

		if (t->nuniq >= MAX_UNIQ || !(slots = calloc(n, sizeof(*slots))))
			return;
		free(t->uslot);
		t->uslot = slots;
		t->nuslots = n;
		for (size_t u = 0; u < t->nuniq; u++) {
			for (i = pkt_hash(&t->uniq[u].pkt) & (n - 1); slots[i]; i = (i + 1) & (n - 1))
				;
			slots[i] = u + 1;
		}
	}
	for (i = pkt_hash(&p->pkt) & (t->nuslots - 1); t->uslot[i]; i = (i + 1) & (t->nuslots - 1)) {
		struct uniq_pkt *u = &t->uniq[t->uslot[i] - 1];

		if (!memcmp(&u->pkt, &p->pkt, sizeof(p->pkt))) {
			if (!same_time(t, u, p))
				break;	/* a first again, in this slot */
			p->same_as = u->number;
			p->uniq = t->uslot[i] - 1;
			return;
		}
	}
	if (!(t->nuniq & (t->nuniq + 1))) {	/* 0, 1, 3, 7...: grow to the next power */
		struct uniq_pkt *v = realloc(t->uniq, 2 * (t->nuniq + 1) * sizeof(*v));

		if (!v)
			return;
		t->uniq = v;
	}
	t->uniq[t->nuniq] = (struct uniq_pkt){ p->pkt, p->number, p->lo, p->hi, t->batch_no,
					       (size_t)(p - t->p), false };
	p->uniq = t->nuniq;
	t->uslot[i] = ++t->nuniq;
}

/* Whether a packet was seen: its own hits, or its first's. */
static bool seen_one(const struct trace_ctx *t, const struct tpkt *p)
{
	return p->same_as ? t->uniq[p->uniq].seen : p->nseen > 0;
}

/* A cut packet's segments seen, in the variant (IDs incremented, fixed)
 * with the most (the first on a tie), which *variant says. */
static uint32_t segs_seen(const struct trace_ctx *t, const struct tpkt *p, uint32_t *variant)
{
	uint32_t best = 0;

	*variant = 0;
	for (uint32_t v = 0; v < p->variants; v++) {
		uint32_t c = 0;

		for (uint32_t i = 0; i < p->nseg; i++)
			c += seen_one(t, p + 1 + v * p->nseg + i);
		if (c > best) {
			best = c;
			*variant = v;
		}
	}
	return best;
}

/* A cut packet is seen whole, or when all its segments are. */
static bool was_seen(const struct trace_ctx *t, const struct tpkt *p)
{
	uint32_t v;

	return seen_one(t, p) || (p->nseg && !p->same_as && segs_seen(t, p, &v) == p->nseg);
}

/* A stable copy of an instance name for the hits. */
static const char *intern(struct trace_ctx *t, const char *name)
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

static void ctx_free(struct trace_ctx *t)
{
	batch_reset(t);
	free(t->p);
	free(t->live_seq);
	free(t->dh);
	free(t->uniq);
	free(t->uslot);
	bt_strv_free(t->names, t->nnames);
	bt_strv_free(t->warned, t->nwarned);
	ZSTD_freeDCtx(t->dctx);
	bt_seg_flows_free(t->flows);
	free(t->split);
	bt_wl_hist_free(&t->wlh);
	if (t->sm.ctl)
		bt_spie_unmap(&t->sm);
	memset(&t->keys, 0, sizeof(t->keys));
}

static bool in_range(const struct trace_ctx *t, __u64 start, __u64 end)
{
	return !((t->since && end && end < t->since) || (t->until && start > t->until));
}

/* Whether window [start, end] (end 0: still open) is one of packet p's:
 * it overlaps p's range, the window widened by the clock's steps. A
 * window whose times are a replay's (BT_WIN_REPLAY_TIME), not its
 * packets', is every packet's. */
static bool in_time(const struct trace_ctx *t, const struct tpkt *p, __u64 start, __u64 end,
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

/* A window searched for its packets pkts[0..n) (those of its time): each
 * counts it, and its "left here" probe when it holds sent digests */
static void window_searched(struct tpkt **pkts, size_t n, double fpr, bool sent)
{
	for (size_t i = 0; i < n; i++) {
		searched(pkts[i], fpr);
		if (sent)
			probed(pkts[i], fpr);
	}
}

static void add_hit(struct trace_ctx *t, struct tpkt *p, const struct hit *h)
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
 * first, when the window has it (any), then each reason the window holds
 * (every reason of the kernel that wrote it when some found no slot: of
 * archive file f's, when f names them, else this one's). The pairs found
 * go to t->dh, for commit_drops() once the window is known not to have
 * been recycled meanwhile; returns the reasons tried (-1: out of memory,
 * t->err set). */
static int probe_drops(struct trace_ctx *t, const struct bt_win_reasons *r,
		       bool (*has)(struct trace_ctx *t, const void *src, __u32 w, __u64 d),
		       const void *src, __u32 w, struct tpkt **pkts, size_t n, bool any,
		       const struct bt_archive_file *f)
{
	__u32 codes[BT_DROP_REASONS];
	int nc = bt_win_reasons_try(r, f && f->nnames ? f->names : NULL, f ? f->nnames : 0,
				    codes, BT_DROP_REASONS);

	t->ndh = 0;
	for (size_t i = 0; i < n; i++) {
		int in_wl = -1;	/* probed once a packet, when it has a drop */

		if (any && !has(t, src, w, bt_hash_drop(pkts[i]->digest, BT_DROP_ANY)))
			continue;
		for (int c = 0; c < nc; c++) {
			if (!has(t, src, w, bt_hash_drop(pkts[i]->digest, codes[c])))
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
				in_wl = has(t, src, w,
					    bt_hash_drop(pkts[i]->digest, BT_DROP_IN_WORKLOAD));
			t->dh[t->ndh++] = (struct drop_hit){ pkts[i], codes[c], in_wl > 0 };
		}
	}
	return nc;
}

/* A drop found reports the chance that the window would call a packet
 * never dropped dropped: the probes' rate, not the window's. Its reason
 * is named as archive file f names it (NULL: live). */
static void commit_drops(struct trace_ctx *t, struct hit h, int tries, bool any,
			 struct tpkt **pkts, size_t n, const struct bt_archive_file *f)
{
	char rb[96];

	h.drop = true;
	h.fpr = false_drop_rate(h.fpr, tries, any);
	for (size_t i = 0; i < t->ndh; i++) {
		h.reason = t->dh[i].reason;
		h.in_workload = t->dh[i].in_workload;
		h.reason_name = f ? intern(t, bt_archive_reason_name(f, h.reason, rb, sizeof(rb)))
				  : NULL;
		add_hit(t, t->dh[i].p, &h);
	}
	for (size_t i = 0; i < n; i++)
		probed(pkts[i], h.fpr);
}

static bool live_has(struct trace_ctx *t, const void *src, __u32 w, __u64 d)
{
	const struct bt_spie_maps *s = src;

	return bt_bloom_has(bt_window_filter(s, w), s->bpw, s->meta->k, d);
}

/* The live ring, without a lock: a window read while user space recycles
 * it (its state or number changed meanwhile) is dropped from the answer;
 * it was archived before it was cleared, and the archive is read next. */
static void query_live(struct trace_ctx *t)
{
	const struct bt_spie_maps *s = &t->sm;
	const char *name = intern(t, t->inst->name);
	struct tpkt **hit = malloc((t->n ? 2 * t->n : 1) * sizeof(*hit));	/* seen, sent */
	struct tpkt **all = malloc((t->n ? t->n : 1) * sizeof(*all));
	struct bt_win_reasons reasons;
	int tries;

	if (!hit || !all) {
		free(hit);
		free(all);
		t->err = -ENOMEM;
		return;
	}
	for (uint32_t w = 0; w < s->meta->windows; w++) {
		const struct bt_window *win = &s->win[w];
		__u32 st = __atomic_load_n(&win->state, __ATOMIC_ACQUIRE), seq = win->seq;
		struct hit h = { name, bt_boot_to_real(win->start_ns), bt_boot_to_real(win->end_ns),
				 0, seq, false };
		const struct bt_bloom_block *f = bt_window_filter(s, w);
		size_t nh = 0, np = 0;

		if (st != BT_WIN_CURRENT && st != BT_WIN_CLOSED && st != BT_WIN_SEALED)
			continue;
		if (!in_range(t, h.start_ns, h.end_ns))
			continue;
		/* the packets whose time it covers */
		for (size_t i = 0; i < t->n; i++)
			if (queried(&t->p[i]) && in_time(t, &t->p[i], h.start_ns, h.end_ns, win->flags))
				all[np++] = &t->p[i];
		if (!np)
			continue;
		/* sent digests are probed too where the window holds some */
		if (t->budget && t->probes + np * (1 + bt_window_sent(s, w)) > t->budget) {
			t->ran_out = t->p[0].number;
			t->err = -E2BIG;
			break;
		}
		t->probes += np * (1 + bt_window_sent(s, w));
		h.fpr = bt_window_fpr(s, w);
		for (size_t i = 0; i < np; i++)
			if (bt_bloom_has(f, s->bpw, s->meta->k, all[i]->digest))
				hit[nh++] = all[i];
		/* sent packets after them (hit[nsent..nh)), probed only where
		 * the window holds some: each probe is a chance of a false
		 * "left here" */
		size_t nsent = nh;
		bool sent = bt_window_sent(s, w);

		for (size_t i = 0; sent && i < np; i++)
			if (bt_bloom_has(f, s->bpw, s->meta->k, bt_hash_sent(all[i]->digest)))
				hit[nh++] = all[i];
		/* drops: of every packet of its time (a drop may land in a
		 * later window than the packet's own digest) */
		bt_window_reasons(t->inst, s->ncpu, w, &reasons);
		tries = reasons.n || reasons.other ?
			probe_drops(t, &reasons, live_has, s, w, all, np, true, NULL) : 0;
		if (tries < 0)
			break;
		/* current -> closed -> sealed leaves the bits; being cleared
		 * (EMPTY, READY) or a new number means recycled under us: what
		 * was read of it, drops and their reasons too, is dropped */
		if (__atomic_load_n(&win->state, __ATOMIC_ACQUIRE) < BT_WIN_CURRENT ||
		    __atomic_load_n(&win->seq, __ATOMIC_ACQUIRE) != seq)
			continue;
		window_searched(all, np, h.fpr, sent);
		t->live_seq[t->nlive++] = seq;
		for (size_t i = 0; i < nh; i++) {
			h.sent = i >= nsent;
			add_hit(t, hit[i], &h);
		}
		h.sent = false;
		if (tries)
			commit_drops(t, h, tries, true, all, np, NULL);
	}
	free(hit);
	free(all);
}

static bool searched_live(const struct trace_ctx *t, const struct bt_archive_file *f, __u32 seq)
{
	if (!t->inst || f->key_id != t->key_id || strcmp(f->instance, t->inst->name))
		return false;
	for (int i = 0; i < t->nlive; i++)
		if (t->live_seq[i] == seq)
			return true;
	return false;
}

/* A damaged file is named once a trace, however many batches read it. */
static void warn_file(struct trace_ctx *t, const char *path, const char *why)
{
	char **v;

	for (int i = 0; i < t->nwarned; i++)
		if (!strcmp(t->warned[i], path))
			return;
	bt_warn("archive file %s: %s; skipped", path, why);
	t->skipped++;
	v = realloc(t->warned, (t->nwarned + 1) * sizeof(*v));
	if (v && (v[t->nwarned] = strdup(path)))
		t->nwarned++;
	if (v)
		t->warned = v;
}

static __u64 block_of(const struct bt_archive_file *f, __u64 h)
{
	return f->version >= 3 ? bt_bloom_block(h, f->window_bits / BT_BLOCK_BITS - 1) : 0;
}

/* qsort_r's comparator: the file comes as an argument, never a global
 * (the agent's HTTP threads query files at the same time) */
static int cmp_by_block(const void *a, const void *b, void *file)
{
	const struct bt_archive_file *f = file;
	__u64 x = block_of(f, (*(struct tpkt *const *)a)->digest);
	__u64 y = block_of(f, (*(struct tpkt *const *)b)->digest);

	return x < y ? -1 : x > y;
}

struct file_query {
	struct bt_archive_file *f;
	const char *why;	/* the first damage met */
};

static bool file_has(struct trace_ctx *t, const void *src, __u32 w, __u64 d)
{
	struct file_query *q = (struct file_query *)src;
	const char *why;
	int r;

	if (q->why)
		return false;
	r = bt_archive_has(q->f, w, d, &why);
	if (r < 0)
		q->why = why;
	return r > 0;
}

/* One archive file: the packets of its time in block order, and of
 * those each window's own (in the same order), so that each chunk of a
 * window is read and decompressed at most once a batch. */
static void query_file(struct trace_ctx *t, struct bt_archive_file *f, struct tpkt **order,
		       struct tpkt **sub)
{
	const char *name = intern(t, f->instance), *why;
	struct bt_win_reasons reasons;
	__u64 fs = UINT64_MAX, fe = 0;
	__u32 fflags = 0;
	size_t m = 0;

	for (__u32 w = 0; w < f->nwin; w++) {
		fs = f->win[w].start_ns < fs ? f->win[w].start_ns : fs;
		fe = !f->win[w].end_ns ? UINT64_MAX : f->win[w].end_ns > fe ? f->win[w].end_ns : fe;
		fflags |= f->win[w].flags & BT_WIN_REPLAY_TIME;
	}
	for (size_t i = 0; i < t->n; i++)
		if (queried(&t->p[i]) && in_time(t, &t->p[i], fs, fe, fflags)) {
			t->p[i].digest = bt_archive_digest(f, &t->p[i].pkt);
			order[m++] = &t->p[i];
		}
	if (!m)
		return;
	qsort_r(order, m, sizeof(*order), cmp_by_block, f);
	/* newest first: a budget that runs out leaves the oldest unsearched */
	for (__u32 w = f->nwin; w-- > 0;) {
		const struct bt_archive_win *aw = &f->win[w];
		/* the writer's offset moves a window into this history's time
		 * only when the file is this very instance's (its key): after a
		 * reboot an instance of the same name starts a history anew */
		struct hit h = { name, aw->start_ns, aw->end_ns, aw->fpr_e15 / 1e15, aw->seq, true,
				 f->key_id == t->key_id ? f->real_minus_boot : 0 };
		size_t k = 0, cost;

		if (!in_range(t, aw->start_ns, aw->end_ns) || searched_live(t, f, aw->seq))
			continue;
		for (size_t i = 0; i < m; i++)
			if (in_time(t, order[i], aw->start_ns, aw->end_ns, aw->flags))
				sub[k++] = order[i];
		if (!k)
			continue;
		/* a window that holds sent digests is probed twice a packet */
		cost = k * (1 + !!(aw->flags & BT_WIN_SENT));
		if ((t->budget && t->probes + cost > t->budget) ||
		    (t->deadline && bt_mono_s() > t->deadline)) {
			t->archive_cut_ns = aw->end_ns;	/* this one and older: not searched */
			return;
		}
		t->probes += cost;
		for (int sent = 0; sent <= !!(aw->flags & BT_WIN_SENT); sent++) {
			h.sent = sent;
			for (size_t i = 0; i < k; i++) {
				__u64 d = sub[i]->digest;
				int r = bt_archive_has(f, w, sent ? bt_hash_sent(d) : d, &why);

				if (r < 0) {
					warn_file(t, f->path, why);
					return;	/* what it gave so far stands */
				}
				if (r)
					add_hit(t, sub[i], &h);
			}
		}
		window_searched(sub, k, h.fpr, aw->flags & BT_WIN_SENT);
		h.sent = false;
		bt_archive_reasons(f, w, &reasons);
		if (reasons.n || reasons.other) {
			struct file_query fq = { f, NULL };
			bool any = f->version >= 6;
			int tries = probe_drops(t, &reasons, file_has, &fq, w, sub, k, any, f);

			if (tries < 0)
				return;
			commit_drops(t, h, tries, any, sub, k, f);
			if (fq.why) {
				warn_file(t, f->path, fq.why);
				return;
			}
		}
	}
}

/* The range of times the batch's packets search, widened by the clock's
 * steps: the archive's files outside it are not opened. */
static void batch_span(const struct trace_ctx *t, __u64 *lo, __u64 *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < t->n; i++)
		if (queried(&t->p[i])) {
			*lo = t->p[i].lo < *lo ? t->p[i].lo : *lo;
			*hi = t->p[i].hi > *hi ? t->p[i].hi : *hi;
		}
	*lo = *lo > t->slack ? *lo - t->slack : 0;
	*hi = *hi + t->slack < *hi ? UINT64_MAX : *hi + t->slack;
	if (t->since && t->since > *lo)
		*lo = t->since;
	if (t->until && t->until < *hi)
		*hi = t->until;
}

static void query_archive(struct trace_ctx *t)
{
	struct tpkt **order = malloc((t->n ? 2 * t->n : 2) * sizeof(*order));
	char **names;
	__u64 lo, hi;
	int n, err;

	if (!order) {
		t->err = -ENOMEM;
		return;
	}
	batch_span(t, &lo, &hi);
	/* the files whose windows overlap [lo, hi], by the archive's index */
	if (lo > hi) {
		names = NULL;
		n = 0;
	} else if ((err = bt_archive_find(t->archive, t->archive_instance, lo, hi, &names, &n))) {
		bt_err("archive %s: %s", t->archive, strerror(-err));
		t->err = err;
		free(order);
		return;
	}
	/* newest file first (names sort by their first window's start) */
	for (int i = n - 1; i >= 0 && !t->err && !t->archive_cut_ns; i--) {
		struct bt_archive_file *f;
		const char *why;

		f = bt_archive_open(t->archive, names[i], &why);
		if (!f) {
			char path[600];

			/* pruned since the index was read: gone with its windows */
			snprintf(path, sizeof(path), "%s/%s", t->archive, names[i]);
			if (access(path, F_OK) && errno == ENOENT)
				continue;
			warn_file(t, path, why);
			continue;
		}
		if (!t->dctx && !(t->dctx = ZSTD_createDCtx())) {
			t->err = -ENOMEM;
			bt_archive_close(f);
			break;
		}
		bt_archive_lend_dctx(f, t->dctx);
		query_file(t, f, order, order + t->n);
		bt_archive_close(f);
	}
	bt_strv_free(names, n);
	free(order);
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Queries every packet of the batch against the live windows and the
 * archive. */
static int batch_query(struct trace_ctx *t)
{
	if (t->inst) {
		for (size_t i = 0; i < t->n; i++)
			if (queried(&t->p[i]))
				t->p[i].digest = bt_spie_digest(&t->keys, &t->p[i].pkt);
		query_live(t);
	}
	if (t->archive && !t->err)
		query_archive(t);
	if (t->err)
		return t->err;
	for (size_t i = 0; i < t->n; i++) {
		struct tpkt *p = &t->p[i];

		if (p->nhits > 1)	/* hits is NULL until the first */
			qsort(p->hits, p->nhits, sizeof(p->hits[0]), cmp_hit);
		if (p->ip && !p->same_as && p->uniq >= 0 && !p->nseg)
			t->uniq[p->uniq].seen = p->nseen > 0;	/* for its repeats */
	}
	/* a cut packet's, once its segments' (after it, and which may repeat
	 * each other) are known */
	for (size_t i = 0; i < t->n; i++) {
		struct tpkt *p = &t->p[i];

		if (p->nseg && !p->same_as && p->uniq >= 0)
			t->uniq[p->uniq].seen = was_seen(t, p);
	}
	return 0;
}

/* The chance that at least one of the windows searched for p answers
 * falsely: of those windows alone */
static double combined_fpr(const struct tpkt *p)
{
	return -expm1(p->log_clean);
}

/* A packet's range: its time +- the skew, or any time */
static void set_time(const struct trace_ctx *t, struct tpkt *p, __u64 ts)
{
	p->ts = ts;
	if (t->any_time || !ts) {
		p->lo = 0;
		p->hi = UINT64_MAX;
		return;
	}
	p->lo = ts > t->skew ? ts - t->skew : 0;
	p->hi = ts + t->skew < ts ? UINT64_MAX : ts + t->skew;
}

static int ctx_init(struct trace_ctx *t, const struct bt_trace_query *q)
{
	const struct bt_instance *inst = q->inst;

	memset(t, 0, sizeof(*t));
	t->inst = inst;
	t->archive = q->archive;
	t->archive_instance = inst ? inst->name : NULL;
	t->since = q->since;
	t->until = q->until;
	t->skew = q->skew_ns ? q->skew_ns : BT_TRACE_SKEW_NS;
	t->any_time = q->any_time;
	t->at = q->at_ns;
	t->slack = inst ? bt_clock_span(inst) : 0;
	t->p = calloc(BATCH, sizeof(*t->p));
	t->flows = bt_seg_flows_new();
	t->split = malloc(sizeof(*t->split));
	if (!t->p || !t->flows || !t->split)
		return -ENOMEM;
	if (inst) {
		if (bt_spie_map(inst, &t->sm))
			return -ENOMEM;
		bt_hash_keys_derive(&inst->meta.hash_key, &t->keys);
		t->key_id = bt_key_id(&inst->meta.hash_key);
		t->live_seq = calloc(inst->meta.windows, sizeof(*t->live_seq));
		if (!t->live_seq)
			return -ENOMEM;
		/* none (an agent without workloads): every name null */
		if (bt_wl_hist_load(inst->name, &t->wlh) == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

/* A merged buffer's segments after it in the batch (each a packet of its
 * own to the query, and to dedup()), or why it is not cut. */
static void add_segments(struct trace_ctx *t, struct tpkt *p, const uint8_t *ip, uint32_t len)
{
	const struct bt_seg_split *s = t->split;

	if (!t->learned)
		bt_seg_learn(t->flows, ip, len);
	if (!bt_seg_split(t->flows, ip, len, t->mss, t->split)) {
		p->why = s->why;
		return;
	}
	p->nseg = s->n;
	p->variants = s->variants;
	p->seg_size = s->size;
	p->seg_payload = s->payload;
	p->seg_from = s->from;
	p->seg_tcp = s->tcp;
	p->seg_v4 = s->v4;
	for (uint32_t k = 0; k < s->n * s->variants; k++) {
		struct tpkt *q = &t->p[t->n++];

		q->number = p->number;
		q->uniq = -1;
		q->ts = p->ts;
		q->lo = p->lo;
		q->hi = p->hi;
		q->seg = k % s->n + 1;
		q->seq = s->seq[k % s->n];
		q->ip_id = s->id[k];
		q->ip = !bt_spie_packet_ip(s->head[k], s->head_len[k], &q->pkt);
		dedup(t, q);
	}
}

/* The flows' segment sizes from a second reading of the capture, before
 * the trace reads it (a merged buffer may come before the flow's largest
 * unmerged segment). */
static void learn_capture(struct trace_ctx *t, struct bt_capture *c)
{
	struct bt_packet pk;
	int off;

	while (bt_capture_next(c, &pk) == 1)
		if (!pk.skip && (off = bt_frame_ip_offset(pk.data, pk.len)) >= 0)
			bt_seg_learn(t->flows, pk.data + off, pk.len - off);
	t->learned = true;
}

/* The next batch from a capture: 1 when it holds packets, 0 at the end,
 * -EINVAL when the capture breaks off (err says where): the packets read
 * before the break come first as a batch of their own. */
static int load_batch(struct trace_ctx *t, struct bt_capture *cap, uint64_t *count,
		      const char *what, char *err, size_t errlen)
{
	struct bt_packet pk;
	int rc = 0, off;

	batch_reset(t);
	/* room for a packet's segments in both ID variants */
	while (t->n + 1 + 2 * BT_SEGS_MAX <= BATCH && (rc = bt_capture_next(cap, &pk)) == 1) {
		struct tpkt *p = &t->p[t->n++];

		p->number = ++*count;
		p->uniq = -1;
		set_time(t, p, (__u64)pk.ts.tv_sec * 1000000000ULL + (__u64)pk.ts.tv_usec * 1000);
		p->ip = !pk.skip && !bt_spie_packet_frame(pk.data, pk.len, &p->pkt);
		off = p->ip ? bt_frame_ip_offset(pk.data, pk.len) : -1;
		if (off >= 0)
			add_segments(t, p, pk.data + off, pk.len - off);
		dedup(t, p);
	}
	if (rc < 0 && !t->n) {
		snprintf(err, errlen, "%s: capture breaks off after %" PRIu64 " packets (%s)", what,
			 *count, bt_capture_error(cap));
		return -EINVAL;
	}
	return t->n > 0;
}

static int load_hex(struct trace_ctx *t, const char *hex, char *err, size_t errlen)
{
	/* not static: the agent's HTTP threads trace at the same time */
	uint8_t *buf = malloc(65536);
	int len = buf ? bt_parse_hex(hex, buf, 65536) : -ENOMEM;
	struct tpkt *p = &t->p[0];
	int off = -1;

	if (len < 0) {
		snprintf(err, errlen, len == -ENOMEM ? "out of memory" :
			 "not hex bytes (like '45 00 00 54 ...')");
		free(buf);
		return -EINVAL;
	}
	batch_reset(t);
	t->n = 1;
	p->number = 1;
	p->uniq = -1;
	set_time(t, p, t->at);	/* --at, or any time */
	/* An Ethernet frame first: a MAC address may well start with a 4 or a
	 * 6, while a bare IP packet would need its source address to read as
	 * an ethertype followed by a valid IP header to pass for a frame. */
	if (!bt_spie_packet_frame(buf, len, &p->pkt))
		off = bt_frame_ip_offset(buf, len);
	else if (!bt_spie_packet_ip(buf, len, &p->pkt))
		off = 0;
	p->ip = off >= 0;
	if (p->ip)
		add_segments(t, p, buf + off, len - off);
	free(buf);
	return 0;
}

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
		qsort(u, *n, sizeof(*u), cmp_hit);
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
		json_object_object_add(o, "seen", json_object_new_boolean(seen_one(t, &s[i])));
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

/* One packet's answer, as trace -j prints it. A cut packet's windows and
 * drops are its segments', each once, and its segments are in
 * "segments". */
static struct json_object *packet_json(const struct trace_ctx *t, const struct tpkt *p)
{
	struct json_object *o = json_object_new_object(), *ws = json_object_new_array(),
			   *drops = json_object_new_array();
	uint32_t variant = 0;
	struct hit *u = NULL;
	char a[40];
	bool cut = p->cut;

	json_object_object_add(o, "packet", json_object_new_int64(p->number));
	json_object_object_add(o, "seen", json_object_new_boolean(was_seen(t, p)));
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
				       json_object_new_int64(segs_seen(t, p, &variant)));
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
	if (p->why && !was_seen(t, p))
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
	/* the archive searched besides the live ring; null: none, so a
	 * window that left the ring was not looked at */
	json_object_object_add(o, "archive", t->archive ? json_object_new_string(t->archive) : NULL);
	/* the chance that at least one searched window answers falsely */
	json_object_object_add(o, "fpr_combined", json_object_new_double(combined_fpr(p)));
	return o;
}

/* The CLI's error (exit 2) and the API's (400) when nothing was traceable. */
static const char no_ip_msg[] = "no IP packet that bloomtap records in the input";

/* Where an answer's packets go, one at a time: into an array
 * (bt_trace_buffer), or straight into JSON text (bt_trace_text, the API's:
 * each packet's object serialized and freed as it comes, so that a large
 * answer is never held twice, as objects and as text). */
struct answer {
	struct json_object *arr;	/* or NULL: text */
	char *text;
	size_t len, cap, n;
	bool oom;
};

static void answer_add(struct answer *ans, struct json_object *p)
{
	const char *s;
	size_t l;

	if (!p) {
		ans->oom = true;
		return;
	}
	ans->n++;
	if (ans->arr) {
		json_object_array_add(ans->arr, p);
		return;
	}
	s = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	l = strlen(s);
	if (ans->len + l + 2 > ans->cap) {	/* a comma or '[', and the closing ']' */
		size_t cap = ans->cap ? ans->cap : 4096;
		char *t;

		while (ans->len + l + 2 > cap)
			cap *= 2;
		if (!(t = realloc(ans->text, cap))) {
			ans->oom = true;
			json_object_put(p);
			return;
		}
		ans->text = t;
		ans->cap = cap;
	}
	ans->text[ans->len++] = ans->n > 1 ? ',' : '[';
	memcpy(ans->text + ans->len, s, l);
	ans->len += l;
	json_object_put(p);
}

/* The trace of buf into ans: 0, or -1 with err set. */
static int trace_into(const struct bt_trace_query *q, const void *buf, size_t len,
		      struct answer *ans, char *err, size_t errlen, bool *over)
{
	struct trace_ctx t;
	struct bt_capture *cap = NULL;
	uint64_t count = 0, probed = 0;
	int rc, ret = -1;

	*over = false;
	if (ctx_init(&t, q)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	t.bounded = true;
	t.hits_left = BT_TRACE_API_HITS;
	t.budget = q->budget && q->budget < API_BUDGET ? q->budget : API_BUDGET;
	t.deadline = q->deadline;
	t.mss = q->mss;
	if (bt_is_capture(buf, len)) {
		struct bt_capture *first;

		if (bt_capture_open_mem(buf, len, &cap, err, errlen))
			goto out;
		if (!bt_capture_open_mem(buf, len, &first, err, errlen)) {
			learn_capture(&t, first);
			bt_capture_close(first);
		}
	} else {
		char *hex = strndup(buf, len);

		rc = hex ? load_hex(&t, hex, err, errlen) : -ENOMEM;
		free(hex);
		if (rc)
			goto out;
	}
	/* a body is at most 1 MiB: it is answered whole or not at all */
	while (!cap || (rc = load_batch(&t, cap, &count, "request body", err, errlen)) > 0) {
		/* what is probed: a cut packet's segments count, each of both
		 * ID variants */
		probed += t.n;
		if (q->max_packets && probed > q->max_packets) {
			snprintf(err, errlen, "over %" PRIu64 " packets in one request (a merged "
				 "packet counts its segments): split the capture", q->max_packets);
			goto out;
		}
		if ((rc = batch_query(&t)) == -E2BIG) {
			snprintf(err, errlen, "the trace ran out of its %" PRIu64 " window x packet "
				 "probes at packet %" PRIu64 ": split the capture or narrow its time "
				 "range", t.budget, t.ran_out);
			*over = true;
			goto out;
		} else if (rc) {
			snprintf(err, errlen, "querying the windows failed");
			goto out;
		}
		for (size_t i = 0; i < t.n; i++)
			if (t.p[i].ip && !t.p[i].seg)
				answer_add(ans, packet_json(&t, &t.p[i]));
		if (!cap)
			break;
	}
	if (cap && rc < 0)
		goto out;
	if (ans->oom)
		snprintf(err, errlen, "out of memory");
	else if (!ans->n)
		snprintf(err, errlen, "%s", no_ip_msg);
	else
		ret = 0;
out:
	bt_capture_close(cap);
	ctx_free(&t);
	return ret;
}

struct json_object *bt_trace_buffer(const struct bt_trace_query *q, const void *buf, size_t len,
				    char *err, size_t errlen)
{
	struct answer ans = { .arr = json_object_new_array() };
	bool over;

	if (!ans.arr) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (trace_into(q, buf, len, &ans, err, errlen, &over)) {
		json_object_put(ans.arr);
		return NULL;
	}
	return ans.arr;
}

char *bt_trace_text(const struct bt_trace_query *q, const void *buf, size_t len, char *err,
		    size_t errlen)
{
	struct answer ans = { 0 };
	bool over;

	if (trace_into(q, buf, len, &ans, err, errlen, &over)) {
		free(ans.text);
		errno = over ? E2BIG : EINVAL;
		return NULL;
	}
	ans.text[ans.len++] = ']';	/* answer_add left room for it */
	ans.text[ans.len] = 0;
	return ans.text;
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
	uint32_t variant, seen = segs_seen(t, p, &variant), gone = 0;
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
		if (seen_one(t, &s[i]))
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
static void print_searched(const struct tpkt *p)
{
	char a[40], b[40];

	if (!p->lo && p->hi == UINT64_MAX) {
		printf("  searched any time: %" PRIu64 " windows, a false positive among them %.2g\n",
		       p->nsearched, combined_fpr(p));
		return;
	}
	bt_fmt_ns(p->lo, a, sizeof(a), "-");
	bt_fmt_ns(p->hi, b, sizeof(b), "-");
	printf("  searched %s .. %s: %" PRIu64 " windows, a false positive among them %.2g\n",
	       a, b, p->nsearched, combined_fpr(p));
}

static void print_packet(const struct trace_ctx *t, const struct tpkt *p)
{
	if (p->same_as) {
		printf("packet %" PRIu64 ": the same as packet %" PRIu64 " (%s)\n", p->number,
		       p->same_as, was_seen(t, p) ? "seen" : "not seen");
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

/* The answers trace prints: a batch of packets at a time, each plain or as
 * an element of one JSON array. */
static int trace_stream(struct trace_ctx *t, struct bt_capture *cap, const char *hex,
			const char *file)
{
	uint64_t unseen = 0, ip = 0, count = 0, searched_max = 0;
	__u64 cut_ns = 0;	/* the newest archived window left out by --budget */
	bool first = true, opened = false;
	double fpr_max = 0;
	char msg[600], skew[96];
	int rc;

	/* JSON: the array opens with its first packet, so that an input
	 * refused before any (bad hex, no IP packet) is the error alone */
	while (1) {
		rc = cap ? load_batch(t, cap, &count, file, msg, sizeof(msg))
			 : (first ? load_hex(t, hex, msg, sizeof(msg)) ? -EINVAL : 1 : 0);
		if (rc <= 0)
			break;
		if ((rc = batch_query(t)) == -E2BIG) {
			snprintf(msg, sizeof(msg), "--budget: the trace ran out of its %" PRIu64
				 " window x packet probes at packet %" PRIu64 " (the packets before it "
				 "are answered)", t->budget, t->ran_out);
			break;
		} else if (rc) {
			rc = -EIO;
			snprintf(msg, sizeof(msg), "querying the windows failed");
			break;
		}
		if (t->archive_cut_ns > cut_ns)
			cut_ns = t->archive_cut_ns;
		for (size_t i = 0; i < t->n; i++) {
			const struct tpkt *p = &t->p[i];

			if (queried(p) && !p->seg) {
				searched_max = p->nsearched > searched_max ? p->nsearched : searched_max;
				fpr_max = combined_fpr(p) > fpr_max ? combined_fpr(p) : fpr_max;
			}

			if (p->seg)	/* answered with its packet */
				continue;
			if (!p->ip) {
				if (!bt_g.json)
					printf("packet %" PRIu64 ": not an IP packet bloomtap records; "
					       "skipped\n", p->number);
				continue;
			}
			ip++;
			unseen += !was_seen(t, p);
			if (bt_g.json) {
				struct json_object *o = packet_json(t, p);

				printf("%s%s", opened ? "," : "[", json_object_to_json_string_ext(o,
				       (bt_g.pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
				       JSON_C_TO_STRING_NOSLASHESCAPE));
				json_object_put(o);
				opened = bt_g.json_out = true;
			} else {
				print_packet(t, p);
			}
		}
		first = false;
	}
	if (opened)
		puts("]");
	else if (!bt_g.json)
		printf("%" PRIu64 " IP packets: %" PRIu64 " seen, %" PRIu64 " not seen; %" PRIu64
		       " windows searched at most a packet (%s%s; %s), a false positive among "
		       "them for a packet: %.2g at most\n", ip, ip - unseen, unseen, searched_max,
		       t->archive ? "the live ring and the archive " : "the live ring alone, no archive",
		       t->archive ? t->archive : "", horizon(t, hex, skew, sizeof(skew)), fpr_max);
	if (cut_ns && !bt_g.json) {
		char when[40];

		bt_fmt_ns(cut_ns, when, sizeof(when), "now");
		printf("archived windows that end at or before %s were not searched (--budget)\n",
		       when);
	}
	if (rc < 0) {
		/* what was printed stands; the rest was not answered */
		bt_err("trace: %s", msg);
		return BT_EXIT_USAGE;
	}
	if (!ip) {
		bt_err("trace: %s", no_ip_msg);
		return BT_EXIT_USAGE;
	}
	return unseen ? BT_EXIT_FAIL : BT_EXIT_OK;
}

int bt_trace_print(const struct bt_trace_query *q, struct bt_capture *cap, const char *hex,
		   const char *file)
{
	struct bt_capture *first;
	struct trace_ctx t;
	struct stat st;
	char msg[600];
	int ret;

	if (ctx_init(&t, q)) {
		bt_err("trace: out of memory, or the instance's windows cannot be mapped");
		ctx_free(&t);
		return BT_EXIT_USAGE;
	}
	t.budget = q->budget;
	t.mss = q->mss;
	/* a file read twice: the flows' segment sizes first (a pipe is read
	 * once, and learned from as it goes) */
	if (cap && file && !stat(file, &st) && S_ISREG(st.st_mode) &&
	    !bt_capture_open(file, &first, msg, sizeof(msg))) {
		learn_capture(&t, first);
		bt_capture_close(first);
	}
	ret = trace_stream(&t, cap, hex, file);
	ctx_free(&t);
	return ret;
}
