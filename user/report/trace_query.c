// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The SPIE query the CLI and the API share: did these packets pass here,
 * and when? Every live or archived window whose filter holds a packet's
 * digest, with its time range and its false-positive rate, the drops
 * recorded with it, and the chance that at least one of the windows
 * searched answers falsely. Captures are read in batches, in bounded
 * memory whatever their size, each packet answered once however often it
 * repeats; the batch is searched in the live ring (trace_live.c) and the
 * archive (trace_archive.c), and printed by trace_render.c. */
#include <errno.h>
#include <inttypes.h>
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
#include "trace_archive.h"
#include "trace_live.h"
#include "trace_render.h"
#include "trace_search.h"
#include "core/digest.h"
#include "core/segments.h"
#include "instance/instance.h"
#include "base/options.h"
#include "instance/spie.h"
#include "instance/wltable.h"
#include "base/util.h"

#define BATCH 65536	/* packets queried at once: ~120 bytes each */
/* An API answer's bound besides BT_TRACE_API_HITS: the most window x
 * packet probes, live and archived, of one request (the agent asks for
 * fewer, by its client's CPU share): a packet alone searches 64 M
 * windows, 15,000 of them (a full 1 MiB body) the newest 4,473. */
#define API_BUDGET (1ULL << 26)

#define MAX_UNIQ (1 << 20)	/* packets remembered for the repeats after them */

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
		t->p[i].damaged = 0;
	}
	t->n = 0;
	t->batch_no++;
	t->nlive = 0;
	t->archive_cut_ns = 0;	/* the probes go on counting: the budget is the trace's */
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

/* Queries every packet of the batch against the live windows and the
 * archive. */
static int batch_query(struct trace_ctx *t)
{
	if (t->inst)
		trace_query_live(t);
	if (t->archive && !t->err)
		trace_query_archive(t);
	if (t->err)
		return t->err;
	for (size_t i = 0; i < t->n; i++) {
		struct tpkt *p = &t->p[i];

		if (p->nhits > 1)	/* hits is NULL until the first */
			qsort(p->hits, p->nhits, sizeof(p->hits[0]), trace_cmp_hit);
		if (p->ip && !p->same_as && p->uniq >= 0 && !p->nseg)
			t->uniq[p->uniq].seen = p->nseen > 0;	/* for its repeats */
	}
	/* a cut packet's, once its segments' (after it, and which may repeat
	 * each other) are known */
	for (size_t i = 0; i < t->n; i++) {
		struct tpkt *p = &t->p[i];

		if (p->nseg && !p->same_as && p->uniq >= 0)
			t->uniq[p->uniq].seen = trace_was_seen(t, p);
	}
	return 0;
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

/* The CLI's usage error (exit 2) and the API's (400) when nothing was
 * traceable. */
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
				answer_add(ans, trace_packet_json(&t, &t.p[i]));
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

/* The answers trace prints: a batch of packets at a time, each plain or as
 * an element of one JSON array. Returns the exit status: a bad input (a
 * capture that breaks off, bad hex, no IP packet) is a usage error; a
 * trace that could not finish (the query failed, the budget ran out) a
 * failure, which stderr tells from a packet not seen. */
static int trace_stream(struct trace_ctx *t, struct bt_capture *cap, const char *hex,
			const char *file)
{
	struct trace_totals tot = { 0 };
	uint64_t count = 0;
	bool first = true;
	char msg[600];
	int rc, status = BT_EXIT_USAGE;

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
			status = BT_EXIT_FAIL;
			break;
		} else if (rc) {
			rc = -EIO;
			snprintf(msg, sizeof(msg), "querying the windows failed");
			status = BT_EXIT_FAIL;
			break;
		}
		trace_print_batch(t, &tot);
		first = false;
	}
	trace_print_end(t, hex, &tot);
	if (rc < 0) {
		/* what was printed stands; the rest was not answered */
		bt_err("trace: %s", msg);
		return status;
	}
	if (!tot.ip) {
		bt_err("trace: %s", no_ip_msg);
		return BT_EXIT_USAGE;
	}
	return tot.unseen ? BT_EXIT_FAIL : BT_EXIT_OK;
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
		return BT_EXIT_FAIL;
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
