// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An archive file as a trace's source: its sealed windows, read a chunk
 * at a time, its digests under its own instance's key. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/archive.h"
#include "instance/drops.h"
#include "base/common.h"
#include "base/util.h"
#include "trace_archive.h"

struct file_src {
	struct trace_src src;
	struct bt_archive_file *f;
};

static __u64 file_digest(const struct trace_src *s, const struct bt_spie_packet *p)
{
	return bt_archive_digest(((const struct file_src *)s)->f, p);
}

/* Reads (and decompresses) the chunk that holds d's block, once. */
static int file_has(struct trace_src *s, __u32 w, __u64 d)
{
	const char *why;
	int r = bt_archive_has(((struct file_src *)s)->f, w, d, &why);

	if (r < 0)
		s->why = why;
	return r;
}

/* The reasons of its window, of its kernel's names when it holds them */
static int file_reasons(const struct trace_src *s, __u32 w, __u32 *codes, int max)
{
	const struct bt_archive_file *f = ((const struct file_src *)s)->f;
	struct bt_win_reasons r;

	bt_archive_reasons(f, w, &r);
	return r.n || r.other ? bt_win_reasons_try(&r, f->nnames ? f->names : NULL, f->nnames,
						   codes, max) : 0;
}

static double file_fpr(const struct trace_src *s, __u32 w)
{
	return ((const struct file_src *)s)->f->win[w].fpr_e15 / 1e15;
}

static const char *file_reason_name(const struct trace_src *s, __u32 code, char *buf, size_t len)
{
	return bt_archive_reason_name(((const struct file_src *)s)->f, code, buf, len);
}

static const struct trace_src_ops file_ops = {
	.digest = file_digest,
	.has = file_has,
	.reasons = file_reasons,
	.fpr = file_fpr,
	.reason_name = file_reason_name,
};

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

/* A file that failed part way: named, and counted in the answer of each
 * packet of its time (order, m), whose later windows it did not search */
static void damaged(struct trace_ctx *t, const char *path, const char *why,
		    const struct probe *order, size_t m)
{
	warn_file(t, path, why);
	for (size_t i = 0; i < m; i++)
		order[i].p->damaged++;
}

/* qsort_r's comparator: the file comes as an argument, never a global
 * (the agent's HTTP threads query files at the same time) */
static int cmp_by_block(const void *a, const void *b, void *file)
{
	const struct bt_archive_file *f = file;
	__u64 x = bt_archive_block(f, ((const struct probe *)a)->d);
	__u64 y = bt_archive_block(f, ((const struct probe *)b)->d);

	return x < y ? -1 : x > y;
}

/* One archive file: the packets of its time in block order, and of
 * those each window's own (in the same order), so that each chunk of a
 * window is read and decompressed at most once a batch. order and sub
 * hold t->n probes, found 2 t->n packets. */
static void query_file(struct trace_ctx *t, struct bt_archive_file *f, struct probe *order,
		       struct probe *sub, struct tpkt **found)
{
	struct file_src fsrc = { { &file_ops, f->version >= 6, NULL }, f };
	struct trace_src *src = &fsrc.src;
	const char *name = trace_intern(t, f->instance);
	__u64 fs = UINT64_MAX, fe = 0;
	__u32 fflags = 0;
	size_t m = 0;

	for (__u32 w = 0; w < f->nwin; w++) {
		fs = f->win[w].start_ns < fs ? f->win[w].start_ns : fs;
		fe = !f->win[w].end_ns ? UINT64_MAX : f->win[w].end_ns > fe ? f->win[w].end_ns : fe;
		fflags |= f->win[w].flags & BT_WIN_REPLAY_TIME;
	}
	for (size_t i = 0; i < t->n; i++)
		if (trace_queried(&t->p[i]) && trace_in_time(t, &t->p[i], fs, fe, fflags))
			order[m++] = (struct probe){ &t->p[i], src->ops->digest(src, &t->p[i].pkt) };
	if (!m)
		return;
	qsort_r(order, m, sizeof(*order), cmp_by_block, f);
	/* newest first: a budget that runs out leaves the oldest unsearched */
	for (__u32 w = f->nwin; w-- > 0;) {
		const struct bt_archive_win *aw = &f->win[w];
		/* the writer's offset moves a window into this history's time
		 * only when the file is this very instance's (its key): after a
		 * reboot an instance of the same name starts a history anew */
		struct hit h = { name, aw->start_ns, aw->end_ns, src->ops->fpr(src, w), aw->seq, true,
				 f->key_id == t->key_id ? f->real_minus_boot : 0 };
		bool sent = aw->flags & BT_WIN_SENT;
		size_t k = 0, cost, nh, nseen;
		int tries;

		if (!trace_in_range(t, aw->start_ns, aw->end_ns) || searched_live(t, f, aw->seq))
			continue;
		for (size_t i = 0; i < m; i++)
			if (trace_in_time(t, order[i].p, aw->start_ns, aw->end_ns, aw->flags))
				sub[k++] = order[i];
		if (!k)
			continue;
		/* a window that holds sent digests is probed twice a packet */
		cost = k * (1 + sent);
		if ((t->budget && t->probes + cost > t->budget) ||
		    (t->deadline && bt_mono_s() > t->deadline)) {
			t->archive_cut_ns = aw->end_ns;	/* this one and older: not searched */
			return;
		}
		t->probes += cost;
		nh = trace_probe_window(src, w, sub, k, sent, found, &nseen);
		for (size_t i = 0; i < nh; i++) {
			h.sent = i >= nseen;
			trace_add_hit(t, found[i], &h);
		}
		h.sent = false;
		if (src->why) {
			damaged(t, f->path, src->why, order, m);
			return;	/* what it gave so far stands */
		}
		trace_window_searched(sub, k, h.fpr, sent);
		tries = trace_probe_drops(t, src, w, sub, k);
		if (tries < 0)
			return;
		if (tries)
			trace_commit_drops(t, src, h, tries, sub, k);
		if (src->why) {
			damaged(t, f->path, src->why, order, m);
			return;
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
		if (trace_queried(&t->p[i])) {
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

void trace_query_archive(struct trace_ctx *t)
{
	struct probe *order = malloc((t->n ? 2 * t->n : 2) * sizeof(*order));
	struct tpkt **found = malloc((t->n ? 2 * t->n : 2) * sizeof(*found));
	char **names;
	__u64 lo, hi;
	int n, err;

	if (!order || !found) {
		free(order);
		free(found);
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
		free(found);
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
			/* its times unknown: in every queried answer of the batch */
			warn_file(t, path, why);
			for (size_t j = 0; j < t->n; j++)
				t->p[j].damaged += trace_queried(&t->p[j]);
			continue;
		}
		if (!t->dctx && !(t->dctx = ZSTD_createDCtx())) {
			t->err = -ENOMEM;
			bt_archive_close(f);
			break;
		}
		bt_archive_lend_dctx(f, t->dctx);
		query_file(t, f, order, order + t->n, found);
		bt_archive_close(f);
	}
	bt_strv_free(names, n);
	free(order);
	free(found);
}
