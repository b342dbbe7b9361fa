// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "base/common.h"
#include "base/util.h"
#include "hash.h"
#include "core/digest.h"
#include "instance.h"
#include "sketch.h"

const char *const bt_key_mode_names[] = { "5tuple", "src", "dst", "pair", NULL };

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t next_pow2(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

static int resolve(struct bt_sketch_cfg *c, struct bt_meta *meta, bool warn)
{
	int thresholds = (c->fraction > 0) + (c->bytes > 0) + (c->packets > 0);

	if ((c->epsilon > 0 || c->delta > 0) && c->width) {
		bt_err("give --epsilon/--delta or --width, not both");
		return -EINVAL;
	}
	if (thresholds > 1) {
		bt_err("give one of --fraction, --bytes, --packets");
		return -EINVAL;
	}
	if (c->width && !pow2(c->width)) {
		bt_err("--width %u is not a power of two (try %u)", c->width, next_pow2(c->width));
		return -EINVAL;
	}
	if (c->fm_slots > BT_MAX_FM_SLOTS) {
		bt_err("--flow-memory %u is above %u slots", c->fm_slots, BT_MAX_FM_SLOTS);
		return -EINVAL;
	}
	if (c->fm_slots && !pow2(c->fm_slots)) {
		bt_err("--flow-memory %u is not a power of two (try %u)", c->fm_slots,
		       next_pow2(c->fm_slots));
		return -EINVAL;
	}
	if (c->epsilon > 0 || c->delta > 0) {
		double w = bt_cm_width_needed(c->epsilon, c->delta);

		if (w > 1u << 24) {
			bt_err("--epsilon/--delta need %.3g cells a counter (w = 1/(E P)), above "
			       "16777216: a larger --epsilon or --delta", w);
			return -EINVAL;
		}
		c->width = bt_cm_width_for(c->epsilon, c->delta);
	}
	if (!c->width)
		c->width = BT_DEFAULT_WIDTH;
	if (!c->depth)
		c->depth = BT_DEFAULT_DEPTH;
	if (c->depth > BT_MAX_DEPTH) {
		bt_err("--depth %u: at most %d counters a flow", c->depth, BT_MAX_DEPTH);
		return -EINVAL;
	}
	if (c->width > (1u << 24) || c->width < 64) {
		bt_err("sketch width %u is outside 64..16777216 (from --epsilon/--delta, or "
		       "--width)", c->width);
		return -EINVAL;
	}
	if ((uint64_t)c->depth * c->width > BT_MAX_CELLS) {
		bt_err("a sketch of %u x %u cells is too large: one CPU's interval holds at "
		       "most %u cells (256 MiB); lower --width or --depth", c->depth, c->width,
		       BT_MAX_CELLS);
		return -EINVAL;
	}
	/* A fraction f nominates up to 2 / f one-packet flows an interval on
	 * a CPU (user/instance/sketch.h, BT_NOMINATE_MARGIN): room for twice that, as
	 * 8 probes refuse flows well before the table is full. At 0.01 % the
	 * default 16,384 slots lost 124 nominations of a million-packet Zipf
	 * interval, and one flow above the threshold (tests/prog/test_heavy.c). */
	uint64_t flood = 0;

	if (!thresholds || c->fraction > 0)
		flood = (uint64_t)ceil(2 * BT_NOMINATE_MARGIN /
				       (c->fraction > 0 ? c->fraction : BT_DEFAULT_FRACTION));
	if (!c->fm_slots)
		c->fm_slots = flood > BT_DEFAULT_FM_SLOTS && flood <= BT_MAX_FM_SLOTS ?
				      next_pow2(flood) : BT_DEFAULT_FM_SLOTS;
	else if (c->fm_slots < flood && warn)
		bt_warn("--flow-memory %u is below %llu slots, twice the flows a fraction "
			"threshold of %g may nominate: flows above it may be refused (counted "
			"as flow_memory_full)", c->fm_slots, (unsigned long long)flood,
			c->fraction);

	meta->key_mode = c->key_mode;
	meta->depth = c->depth;
	meta->width = c->width;
	meta->fm_slots = c->fm_slots;
	if (c->bytes) {
		meta->threshold_kind = BT_THR_BYTES;
		meta->threshold = c->bytes;
	} else if (c->packets) {
		meta->threshold_kind = BT_THR_PACKETS;
		meta->threshold = c->packets;
	} else {
		meta->threshold_kind = BT_THR_FRACTION;
		meta->threshold = llround((c->fraction > 0 ? c->fraction : BT_DEFAULT_FRACTION) * 1e9);
	}
	return 0;
}

int bt_sketch_resolve(struct bt_sketch_cfg *c, struct bt_meta *meta)
{
	return resolve(c, meta, true);
}

int bt_sketch_check(const struct bt_sketch_cfg *c)
{
	struct bt_sketch_cfg t = *c;
	struct bt_meta m = { 0 };

	return resolve(&t, &m, false);
}

/* d * w cells in lines of 10, rounded up to a power of two of lines: the
 * rows come out a little wider than w */
__u32 bt_cm_lines(const struct bt_meta *m)
{
	return next_pow2(((uint64_t)m->width * m->depth + BT_CM_LINE_CELLS - 1) /
			 BT_CM_LINE_CELLS);
}

__u32 bt_cm_value_lines(const struct bt_meta *m)
{
	return bt_cm_lines(m) + 1;
}

double bt_cm_row_width(const struct bt_meta *m)
{
	return (double)BT_CM_LINE_CELLS * bt_cm_lines(m) / m->depth;
}

__u32 bt_cm_patterns(__u32 depth, __u32 pat[BT_CM_MAX_PATTERNS])
{
	__u32 n = 0;

	for (__u32 set = 0; set < 1u << BT_CM_LINE_CELLS; set++) {
		__u32 p = 0, i = 0;

		if ((__u32)__builtin_popcount(set) != depth)
			continue;
		for (__u32 c = 0; c < BT_CM_LINE_CELLS; c++)
			if (set >> c & 1)
				p |= c << (4 * i++);
		pat[n++] = p;
	}
	return n;
}

/* Markov on one counter: P(excess >= E N) <= 1 / (w E), so w = 1 / (E P);
 * E alone keeps P = 1/e (w = e / E, Cormode & Muthukrishnan's width), P
 * alone the default width's error. */
double bt_cm_width_needed(double epsilon, double delta)
{
	double p = delta > 0 ? delta : exp(-1);
	double e = epsilon > 0 ? epsilon : M_E / BT_DEFAULT_WIDTH;

	return ceil(1 / (e * p));
}

__u32 bt_cm_width_for(double epsilon, double delta)
{
	double w = bt_cm_width_needed(epsilon, delta);

	return w > (1u << 24) ? 1u << 25 : next_pow2((uint64_t)w);	/* then refused */
}

double bt_cm_error(const struct bt_meta *m)
{
	return M_E / bt_cm_row_width(m);
}

double bt_cm_fail(const struct bt_meta *m)
{
	(void)m;
	return exp(-1);
}

void bt_heavy_shape(const struct bt_meta *m, struct bt_heavy_shape *s)
{
	s->cms = (struct bt_map_shape){ m->ncpu * BT_INTERVALS,
					bt_cm_value_lines(m) * sizeof(struct bt_cm_line) };
	s->fm = (struct bt_map_shape){ BT_INTERVALS, m->fm_slots * sizeof(struct bt_fm_slot) };
	s->fmc = (struct bt_map_shape){ m->ncpu * BT_INTERVALS,
					m->fm_slots * sizeof(struct bt_cm_cell) };
	s->fc = (struct bt_map_shape){ m->ncpu, BT_FC_ENTRIES * sizeof(struct bt_fc_entry) };
	s->fmo = (struct bt_map_shape){ BT_INTERVALS, bt_fmo_words(m->fm_slots) * sizeof(__u64) };
}

static size_t shape_bytes(struct bt_map_shape s)
{
	return (size_t)s.entries * s.value;
}

size_t bt_sketch_bytes(const struct bt_meta *m)
{
	struct bt_heavy_shape s;

	bt_heavy_shape(m, &s);
	return shape_bytes(s.cms) + shape_bytes(s.fm) + shape_bytes(s.fmc) + shape_bytes(s.fc) +
	       shape_bytes(s.fmo);
}

int bt_heavy_stages(const struct bt_meta *m)
{
	return m->flags & BT_META_EGRESS_MAPS ? 3 : 2;
}

void bt_sketch_describe(const struct bt_meta *m, char *buf, size_t len)
{
	double mib = bt_sketch_bytes(m) / 1048576.0;

	snprintf(buf, len, "heavy flows by %s: sketch %u x %.0f per CPU and interval (%u lines, "
		 "a flow's %u counter%s in one), flow memory %u slots per interval, %.1f MiB "
		 "on %u CPUs (as much again for the dropped flows%s); estimates exceed the "
		 "truth by at most %.2g of the interval's bytes with probability %.4g, and by t "
		 "times that with probability at least 1 - 1/(e t) (one counter's bound: a "
		 "line's counters are not independent)",
		 bt_key_mode_names[m->key_mode], m->depth, bt_cm_row_width(m), bt_cm_lines(m),
		 m->depth, m->depth == 1 ? "" : "s",
		 m->fm_slots, mib, m->ncpu,
		 m->flags & BT_META_EGRESS_MAPS ? ", and again for the sent ones" : "",
		 bt_cm_error(m), 1 - bt_cm_fail(m));
}

/* One stage's arrays, mapped. */
static int map_stage(const struct bt_instance *inst, struct bt_heavy_maps *m, int cms_fd,
		     int fm_fd, int fmc_fd, int fmo_fd, int counters_fd, __u32 counters_key)
{
	struct bt_heavy_shape s;

	m->inst = inst;
	m->meta = &inst->meta;
	m->counters_fd = counters_fd;
	m->counters_key = counters_key;
	bt_heavy_shape(&inst->meta, &s);
	m->ctl = bt_mmap_array(inst->ctl_fd, sizeof(struct bt_ctl), &m->ctl_len);
	m->cms = bt_mmap_array(cms_fd, shape_bytes(s.cms), &m->cms_len);
	m->fm = bt_mmap_array(fm_fd, shape_bytes(s.fm), &m->fm_len);
	m->fmc = bt_mmap_array(fmc_fd, shape_bytes(s.fmc), &m->fmc_len);
	m->fmo = bt_mmap_array(fmo_fd, shape_bytes(s.fmo), &m->fmo_len);
	bt_hash_keys_derive(&inst->meta.hash_key, &m->keys);
	m->cm_npat = bt_cm_patterns(inst->meta.depth, m->cm_pat);
	return m->ctl && m->cms && m->fm && m->fmc && m->fmo ? 0 : (errno ? -errno : -ENOMEM);
}

int bt_heavy_map(const struct bt_instance *inst, struct bt_heavy_maps *m)
{
	int err;

	memset(m, 0, sizeof(*m));
	err = map_stage(inst, m, inst->cms_fd, inst->fm_fd, inst->fmc_fd, inst->fmo_fd,
			inst->counters_fd, BT_DIR_INGRESS);
	if (!err && !(m->drops = calloc(1, sizeof(*m->drops))))
		err = -ENOMEM;
	if (!err) {
		m->drops->dropped = true;
		err = map_stage(inst, m->drops, inst->dcms_fd, inst->dfm_fd, inst->dfmc_fd,
				inst->dfmo_fd, inst->dcounters_fd, 0);
	}
	if (!err && (inst->meta.flags & BT_META_EGRESS_MAPS) &&
	    !(m->egress = calloc(1, sizeof(*m->egress))))
		err = -ENOMEM;
	if (!err && m->egress)
		err = map_stage(inst, m->egress, inst->ecms_fd, inst->efm_fd, inst->efmc_fd,
				inst->efmo_fd, inst->counters_fd, BT_DIR_EGRESS);
	if (err)
		bt_heavy_unmap(m);
	return err;
}

static void unmap_stage(struct bt_heavy_maps *m)
{
	if (m->ctl)
		munmap(m->ctl, m->ctl_len);
	if (m->cms)
		munmap(m->cms, m->cms_len);
	if (m->fm)
		munmap(m->fm, m->fm_len);
	if (m->fmc)
		munmap(m->fmc, m->fmc_len);
	if (m->fmo)
		munmap(m->fmo, m->fmo_len);
}

void bt_heavy_unmap(struct bt_heavy_maps *m)
{
	if (m->drops) {
		unmap_stage(m->drops);
		free(m->drops);
	}
	if (m->egress) {
		unmap_stage(m->egress);
		free(m->egress);
	}
	unmap_stage(m);
	memset(m, 0, sizeof(*m));
}

/* An interval's volume: the sum of each CPU's part of its number (the
 * datapath's, include/bloomtap.h struct bt_iv_part). */
static void iv_totals(const struct bt_heavy_maps *m, __u32 iv, __u64 *bytes, __u64 *packets,
		      __u64 *fm_full)
{
	__u32 cur = m->ctl->interval, num = iv == (cur & 1) ? cur : cur - 1;
	struct bt_counters *v;
	int ncpu;

	*bytes = *packets = *fm_full = 0;
	if (!m->ctl->interval_start_ns[iv] ||
	    bt_counters_cpus_at(m->counters_fd, m->counters_key, &v, &ncpu))
		return;		/* never started */
	for (int cpu = 0; cpu < ncpu; cpu++) {
		const struct bt_iv_part *p = &v[cpu].part[num & 1];

		if (p->num != num)	/* no packet of it on this CPU */
			continue;
		*bytes += p->bytes;
		*packets += p->packets;
		*fm_full += p->fm_full;
	}
	free(v);
}

__u64 bt_heavy_interval_bytes(const struct bt_heavy_maps *m, __u32 iv)
{
	__u64 b, p, lost;

	iv_totals(m, iv & 1, &b, &p, &lost);
	return b;
}

/* The flow's bytes and packets before its nomination: on the CPUs that
 * nominated it (a bit set in nominated), what they estimated then; on the
 * others, the minimum over that CPU's counters of the flow now. Each is an
 * upper bound of that CPU's part (unless a refused flow's counters
 * saturated), so the sum is one (tighter than the minimum of the counters
 * summed over CPUs). */
static void sketch_estimate(const struct bt_heavy_maps *m, __u32 iv, __u64 h,
			    const uint8_t *nominated, __u64 *bytes, __u64 *packets)
{
	const struct bt_meta *mt = m->meta;
	__u32 lines = bt_cm_lines(mt), mine = m->cm_pat[bt_cm_pattern(h, m->cm_npat)];

	for (__u32 cpu = 0; cpu < mt->ncpu; cpu++) {
		__u64 b = ~0ULL, p = ~0ULL;
		const struct bt_cm_line *l = &m->cms[(size_t)(cpu * BT_INTERVALS + iv) *
						     bt_cm_value_lines(mt) +
						     bt_cm_line(h, lines - 1)];

		if (nominated[cpu])
			continue;
		for (__u32 i = 0; i < mt->depth; i++) {
			__u32 c = bt_cm_cell(mine, i);

			if (l->bytes[c] < b)
				b = l->bytes[c];
			if (l->packets[c] < p)
				p = l->packets[c];
		}
		*bytes += b;
		*packets += p;
	}
}

void bt_heavy_sketch_estimate(const struct bt_heavy_maps *m, __u32 iv,
			      const struct bt_flow_key *key, __u64 *bytes, __u64 *packets)
{
	uint8_t *none = calloc(m->meta->ncpu, 1);	/* nominated on no CPU */

	if (!none)
		return;
	sketch_estimate(m, iv, bt_hash_flow(&m->keys, (const __u64 *)key), none, bytes,
			packets);
	free(none);
}

static int cmp_bytes(const void *a, const void *b)
{
	const struct bt_heavy_flow *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

static int cmp_packets(const void *a, const void *b)
{
	const struct bt_heavy_flow *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return cmp_bytes(a, b);
}

/* The report's interval, totals, error bounds and threshold (thr, or the
 * instance's), before its flows. */
static void report_start(const struct bt_heavy_maps *m, __u32 iv, const struct bt_threshold *thr,
			 struct bt_heavy_report *r)
{
	const struct bt_meta *mt = m->meta;
	struct bt_threshold t = thr ? *thr : (struct bt_threshold){ mt->threshold_kind, mt->threshold };

	memset(r, 0, sizeof(*r));
	r->interval = iv;
	r->current = (m->ctl->interval & 1) == iv;
	r->start_ns = m->ctl->interval_start_ns[iv];
	r->end_ns = r->current ? 0 : m->ctl->interval_start_ns[!iv];
	iv_totals(m, iv, &r->total_bytes, &r->total_packets, &r->lost_nominations);
	r->error_bytes = (__u64)ceil(bt_cm_error(mt) * r->total_bytes);
	r->error_packets = (__u64)ceil(bt_cm_error(mt) * r->total_packets);
	r->error_probability = bt_cm_fail(mt);
	switch (t.kind) {
	case BT_THR_BYTES:
		r->threshold_bytes = t.value;
		break;
	case BT_THR_PACKETS:
		r->threshold_packets = t.value;
		break;
	default:
		/* at least 1 byte: an empty interval has no heavy flow */
		r->threshold_bytes = (__u64)ceil(t.value / 1e9 * r->total_bytes);
		if (!r->threshold_bytes)
			r->threshold_bytes = 1;
	}
}

/* The flows at or above the threshold kept, the largest first. */
static void keep_heavy(struct bt_heavy_report *r, bool by_packets)
{
	size_t k = 0;

	for (size_t j = 0; j < r->n; j++) {
		const struct bt_heavy_flow *f = &r->flows[j];

		if ((r->threshold_bytes && f->bytes >= r->threshold_bytes) ||
		    (r->threshold_packets && f->packets >= r->threshold_packets))
			r->flows[k++] = *f;
	}
	r->n = k;
	qsort(r->flows, r->n, sizeof(*r->flows), by_packets ? cmp_packets : cmp_bytes);
}

int bt_heavy_collect(const struct bt_heavy_maps *m, __u32 iv, const struct bt_threshold *thr,
		     bool by_packets, struct bt_heavy_report *r)
{
	const struct bt_meta *mt = m->meta;
	const struct bt_fm_slot *tab = &m->fm[(size_t)iv * mt->fm_slots];

	report_start(m, iv, thr, r);
	r->flows = calloc(mt->fm_slots, sizeof(*r->flows));
	if (!r->flows)
		return -ENOMEM;
	/* a flow is in one slot, or in two that two CPUs claimed at once:
	 * found by its hash in an index twice the slots (was a scan of every
	 * flow for every slot, under the agent's lock at every scrape) */
	size_t isize = 2 * (size_t)mt->fm_slots, *index = malloc(isize * sizeof(*index));
	__u64 *hash = malloc(mt->fm_slots * sizeof(*hash));
	uint8_t *nominated = calloc(mt->fm_slots, mt->ncpu);

	if (!index || !hash || !nominated) {
		free(index);
		free(hash);
		free(nominated);
		return -ENOMEM;
	}
	for (size_t i = 0; i < isize; i++)
		index[i] = SIZE_MAX;
	for (__u32 i = 0; i < mt->fm_slots; i++) {
		const struct bt_fm_slot *s = &tab[i];
		__u64 h;
		size_t at;
		struct bt_heavy_flow *f;

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != BT_FM_VALID)
			continue;
		r->nominated++;
		h = bt_hash_flow(&m->keys, (const __u64 *)&s->key);
		for (at = h & (isize - 1); index[at] != SIZE_MAX; at = (at + 1) & (isize - 1))
			if (!memcmp(&r->flows[index[at]].key, &s->key, sizeof(s->key)))
				break;
		if (index[at] == SIZE_MAX) {
			index[at] = r->n;
			hash[r->n] = h;
			r->flows[r->n++].key = s->key;
		}
		f = &r->flows[index[at]];
		/* its part before nomination on the CPU that nominated it */
		f->bytes += s->nom_bytes;
		f->packets += s->nom_packets;
		if (s->cpu < mt->ncpu)
			nominated[(size_t)index[at] * mt->ncpu + s->cpu] = 1;
		for (__u32 cpu = 0; cpu < mt->ncpu; cpu++) {
			const struct bt_cm_cell *x = &m->fmc[((size_t)cpu * BT_INTERVALS + iv) *
							     mt->fm_slots + i];

			f->exact_bytes += x->bytes;
			f->exact_packets += x->packets;
			f->bytes += x->bytes;
			f->packets += x->packets;
		}
	}
	/* and on the CPUs that did not nominate it */
	for (size_t j = 0; j < r->n; j++)
		sketch_estimate(m, iv, hash[j], nominated + j * mt->ncpu, &r->flows[j].bytes,
				&r->flows[j].packets);
	/* a received or sent flow's pad holds its workloads' ids: out of the
	 * key, so that it prints and exports as the packets' 5-tuple */
	for (size_t j = 0; !m->dropped && j < r->n; j++) {
		struct bt_heavy_flow *f = &r->flows[j];

		f->wl[0] = bt_wl_unpack(f->key.pad, 0);
		f->wl[1] = bt_wl_unpack(f->key.pad, 1);
		memset(f->key.pad, 0, sizeof(f->key.pad));
	}
	free(index);
	free(hash);
	free(nominated);
	keep_heavy(r, by_packets);
	return 0;
}

void bt_heavy_report_free(struct bt_heavy_report *r)
{
	free(r->flows);
	r->flows = NULL;
}

void bt_heavy_set_nomination(struct bt_heavy_maps *m)
{
	const struct bt_meta *mt = m->meta;
	__u64 n = mt->ncpu ? mt->ncpu : 1, b = ~0ULL, p = ~0ULL;

	/* T / ncpu: a flow of T spread over every CPU is nominated somewhere */
	if (mt->threshold_kind == BT_THR_BYTES)
		b = mt->threshold / n ? mt->threshold / n : 1;
	else if (mt->threshold_kind == BT_THR_PACKETS)
		p = mt->threshold / n ? mt->threshold / n : 1;
	m->ctl->nominate_bytes = b;
	m->ctl->nominate_packets = p;
}

__u64 bt_heavy_frac_div(const struct bt_meta *mt)
{
	__u64 num = BT_NOMINATE_MARGIN * 1000000000ULL;

	if (mt->threshold_kind != BT_THR_FRACTION || !mt->threshold)
		return 0;
	return (num + mt->threshold - 1) / mt->threshold;
}

/* Nobody writes the idle interval of a stage: cleared before it is made
 * current. */
static void clear_idle(struct bt_heavy_maps *m, __u32 next)
{
	const struct bt_meta *mt = m->meta;

	for (__u32 cpu = 0; cpu < mt->ncpu; cpu++)
		memset(&m->cms[(size_t)(cpu * BT_INTERVALS + next) * bt_cm_value_lines(mt)], 0,
		       (size_t)bt_cm_value_lines(mt) * sizeof(struct bt_cm_line));
	memset(&m->fm[(size_t)next * mt->fm_slots], 0, (size_t)mt->fm_slots * sizeof(struct bt_fm_slot));
	memset(&m->fmo[(size_t)next * bt_fmo_words(mt->fm_slots)], 0,
	       bt_fmo_words(mt->fm_slots) * sizeof(__u64));
	for (__u32 cpu = 0; cpu < mt->ncpu; cpu++)
		memset(&m->fmc[((size_t)cpu * BT_INTERVALS + next) * mt->fm_slots], 0,
		       (size_t)mt->fm_slots * sizeof(struct bt_cm_cell));
}

void bt_heavy_flip(struct bt_heavy_maps *m)
{
	__u32 cur = m->ctl->interval & 1, next = !cur;
	struct timespec now;

	/* every stage counts in the interval bt_ctl names */
	clear_idle(m, next);
	if (m->drops)
		clear_idle(m->drops, next);
	if (m->egress)
		clear_idle(m->egress, next);
	clock_gettime(CLOCK_REALTIME, &now);
	m->ctl->interval_start_ns[next] = (__u64)now.tv_sec * 1000000000ULL + now.tv_nsec;
	/* a new number: flow cache entries of the last use of this sketch die */
	__atomic_store_n(&m->ctl->interval, m->ctl->interval + 1, __ATOMIC_RELEASE);
	/* packets that read the old number finish: the ended interval is final
	 * when this returns */
	bt_grace_period();
}

