/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Heavy flows: flow memory first (nominated flows are counted exactly and
 * skip the sketch: Estan & Varghese's shielding), else a per-CPU count-min
 * sketch with conservative update, which nominates the flow once its
 * estimate crosses the per-CPU nomination threshold.
 *
 * In front, a per-CPU flow cache remembers where the flow memory holds the
 * flows this CPU found there: the packets of heavy flows, most packets, are
 * counted without the keyed hash and the flow memory probe. Every other
 * packet pays one cache-line probe more.
 *
 * Per-CPU detection and recall. Byte and packet thresholds T: a flow of T
 * spread over n CPUs has at least T/n on one of them, so nominating at T/n
 * on each CPU misses no flow. Fraction thresholds f (of the interval's
 * bytes N): a flow is nominated when its estimate on a CPU reaches f/2
 * times that CPU's bytes so far in the interval, N_c(t) (the margin 2:
 * user/instance/sketch.h). A flow with at least f*N has, on some CPU c, at least
 * f*N_c (else its parts would sum below f*N), and at its last packet there
 * N_c(t) <= N_c: it is nominated by then, whatever user space knew. And a
 * flood cannot fill the flow memory with small flows: the j-th one-packet
 * flow of an interval on a CPU meets the rule only while j <= 2/f. User
 * space confirms with the estimate merged over CPUs.
 */
#ifndef BLOOMTAP_HEAVY_BPF_H
#define BLOOMTAP_HEAVY_BPF_H

#include "maps.bpf.h"
#include "counters.bpf.h"
#include "hash.h"
#include "config.bpf.h"

/* The maps of one heavy-flow stage: the XDP program's (cms, fm, fmc, fc, fmo)
 * or the dropped packets' (bpf/drop.bpf.h). Always a constant where it is
 * made, so that the inlined lookups name their maps directly. */
struct heavy_maps {
	void *cms, *fm, *fmc, *fc, *fmo;
};

/* Where a packet is counted: the stage's maps, the interval and this CPU's
 * part of it (heavy_account), the instance's control and counters */
struct heavy_where {
	const struct heavy_maps *hm;
	const struct bt_ctl *c;
	struct bt_iv_part *part;
	struct bt_counters *ctr;
	const struct bt_hash_keys *hk;
	__u32 interval, cpu;
};

static __always_inline void key_mask(struct bt_flow_key *k)
{
	if (cfg_key_mode == BT_KEY_5TUPLE)
		return;
	k->sport = 0;
	k->dport = 0;
	k->proto = 0;
	if (cfg_key_mode == BT_KEY_SRC)
		__builtin_memset(k->dst, 0, 16);
	else if (cfg_key_mode == BT_KEY_DST)
		__builtin_memset(k->src, 0, 16);
}

static __always_inline bool key_equal(const struct bt_flow_key *a,
				      const struct bt_flow_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] &&
	       x[4] == y[4];
}

/* The occupancy word of slot i (include/bloomtap.h, bt_fmo_words()); its
 * bit is 1 << (i & 63). */
static __always_inline __u64 *fmo_word(__u64 *occ, __u32 i)
{
	return &occ[((i & cfg_fm_mask) >> 6) & (cfg_fm_mask >> 6)];
}

/* The flow's slot if it was nominated in this interval, else -1. Probing
 * stops at the first empty slot: slots are never freed within an interval;
 * an empty first slot shows in its occupancy bit, without the line. */
static __always_inline int fm_find(struct bt_fm_slot *slots, __u64 *occ,
				   const struct bt_flow_key *k, __u64 h)
{
	__u32 start = h >> 40, p;

	if (!(*fmo_word(occ, start) >> (start & 63) & 1))
		return -1;

	for (p = 0; p < BT_FM_PROBES; p++) {
		__u32 i = (start + p) & cfg_fm_mask;
		struct bt_fm_slot *s = &slots[i];

		if (s->state == BT_FM_EMPTY)
			return -1;
		if (s->state == BT_FM_VALID && key_equal(&s->key, k))
			return i;
	}
	return -1;
}

/* The flow's new slot (or the one another CPU just gave it), -1 when its
 * probe range is full. */
static __always_inline int fm_nominate(struct bt_fm_slot *slots, __u64 *occ,
				       const struct bt_flow_key *k, __u64 h, __u32 cpu,
				       __u64 est_bytes, __u64 est_packets, struct bt_counters *ctr)
{
	__u32 start = h >> 40, p;

	for (p = 0; p < BT_FM_PROBES; p++) {
		__u32 i = (start + p) & cfg_fm_mask;
		struct bt_fm_slot *s = &slots[i];

		if (s->state == BT_FM_VALID && key_equal(&s->key, k))
			return i;	/* another CPU was first */
		if (s->state != BT_FM_EMPTY)
			continue;
		/* the bit first: a slot that is not empty has its bit */
		__sync_fetch_and_or(fmo_word(occ, i), 1ULL << (i & 63));
		if (__sync_val_compare_and_swap(&s->state, BT_FM_EMPTY, BT_FM_CLAIMING) !=
		    BT_FM_EMPTY)
			continue;
		__builtin_memcpy(&s->key, k, sizeof(*k));
		s->cpu = cpu;	/* its fmc counters were cleared with the interval */
		s->nom_bytes = est_bytes;
		s->nom_packets = est_packets;
		/* xchg is a full barrier: the key is visible before VALID is */
		__sync_lock_test_and_set(&s->state, BT_FM_VALID);
		ctr->c[BT_CTR_NOMINATED]++;
		return i;
	}
	return -1;
}

/* The flow cache entry of key k: a multiplicative hash (Dietzfelbinger et
 * al.) of the key's words, summed so that every byte counts. */
static __always_inline struct bt_fc_entry *fc_entry(struct bt_fc_entry *fc,
						    const struct bt_flow_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 x = (w[0] + w[1]) ^ (w[2] + w[3]) ^ w[4];

	return &fc[(x * cfg_fc_mult) >> (64 - BT_FC_BITS)];
}

/* Empty while it is written: a program preempted here (BPF_PROG_TEST_RUN
 * may be) leaves no entry that matches half a key. */
/* slot: the flow memory slot, or BT_FC_REFUSED. */
static __always_inline void fc_fill(struct bt_fc_entry *e, const struct bt_flow_key *k,
				    __u32 interval, __u32 slot)
{
	e->slot = 0;
	asm volatile("" ::: "memory");
	__builtin_memcpy(&e->key, k, sizeof(*k));
	e->interval = interval;
	asm volatile("" ::: "memory");
	e->slot = slot == BT_FC_REFUSED ? slot : slot + 1;
}

static __always_inline void fmc_add(struct bt_cm_cell *fmc_mine, __u32 slot, __u64 bytes,
				    __u32 packets)
{
	struct bt_cm_cell *x = &fmc_mine[slot & cfg_fm_mask];

	x->bytes += bytes;	/* this CPU's own counters: plain adds */
	x->packets += packets;
}

/* Does a flow with these estimates on this CPU enter the flow memory? */
static __always_inline bool heavy_nominates(__u64 est_bytes, __u64 est_packets,
					    const struct bt_ctl *c,
					    const struct bt_iv_part *part)
{
	if (est_bytes >= BT_CM_BYTES_MAX || est_packets >= BT_CM_PACKETS_MAX)
		return true;	/* saturated counters: past any threshold kept */
	if (cfg_frac_div)	/* est >= f/2 * N_c(t), without a division */
		return est_bytes * cfg_frac_div >= part->bytes;
	return est_bytes >= c->nominate_bytes || est_packets >= c->nominate_packets;
}

/* Every packet, keyed or not, before heavy_count(): this CPU's part of
 * the interval the packet belongs to (read once, so the flows and the
 * volume agree on it); returns that part. */
static __always_inline struct bt_iv_part *heavy_account(struct bt_counters *ctr,
							__u32 interval, __u64 bytes,
							__u32 packets)
{
	struct bt_iv_part *p = &ctr->part[interval & 1];

	if (p->num != interval) {	/* two intervals on: start afresh */
		p->num = interval;
		p->bytes = 0;
		p->packets = 0;
		p->fm_full = 0;
	}
	p->bytes += bytes;
	p->packets += packets;
	return p;
}

/* The flow's d cells in its line, a pattern of bt_cm_cell()s; the
 * verifier knows cfg_cm_npat, so the bound holds without the test */
static __always_inline __u32 sketch_pattern(__u64 h)
{
	__u32 n = bt_cm_pattern(h, cfg_cm_npat);

	return n < BT_CM_MAX_PATTERNS ? cfg_cm_pat[n] : 0;
}

/* min and max of values below 2^63 without a branch (BPF has no
 * conditional move): the counters' comparisons go either way at random,
 * and each branch would also double the verifier's paths through the
 * egress program's segment loop */
static __always_inline __u64 min_nb(__u64 a, __u64 b)
{
	__s64 d = a - b;

	asm volatile("" : "+r"(d));
	return b + (d & (d >> 63));
}

static __always_inline __u64 max_nb(__u64 a, __u64 b)
{
	__s64 d = a - b;

	asm volatile("" : "+r"(d));
	return a - (d & (d >> 63));
}

/* The flow's estimate on this CPU: the minimum over its d counters, all
 * in one line of this CPU's sketch (include/hash.h, bt_cm_cell()). */
static __always_inline void sketch_min(const struct bt_cm_line *line, __u32 pat,
				       __u64 *min_b, __u64 *min_p)
{
	__u32 i, c = bt_cm_cell(pat, 0);
	__u64 b = line->bytes[c], p = line->packets[c];

#pragma unroll
	for (i = 1; i < BT_MAX_DEPTH; i++) {
		if (i >= cfg_depth)
			break;
		c = bt_cm_cell(pat, i);
		b = min_nb(b, line->bytes[c]);
		p = min_nb(p, line->packets[c]);
	}
	*min_b = b;
	*min_p = p;
}

/* Conservative update (Estan & Varghese): raise each counter only as far
 * as the estimate with this packet, saturating. This CPU's sketch only:
 * plain stores, XDP does not migrate mid-program. */
static __always_inline void sketch_raise(struct bt_cm_line *line, __u32 pat, __u64 min_b,
					 __u64 min_p)
{
	__u32 i, c;

	min_b = min_nb(min_b, BT_CM_BYTES_MAX);
	min_p = min_nb(min_p, BT_CM_PACKETS_MAX);
#pragma unroll
	for (i = 0; i < BT_MAX_DEPTH; i++) {
		if (i >= cfg_depth)
			break;
		c = bt_cm_cell(pat, i);
		line->bytes[c] = max_nb(line->bytes[c], min_b);
		line->packets[c] = max_nb(line->packets[c], min_p);
	}
}

/* w: the stage's maps, the interval heavy_account() read and the part it
 * returned, this CPU's counters. k: the parsed flow key, masked in place
 * by the key mode. bytes and packets: what it stands for (packets: 1, or a
 * GRO'd skb's segments). addrs: bt_hash_addrs() of the unmasked key when
 * have_addrs (the SPIE stage computed it), which finishes the 5-tuple's
 * hash with one more word. */
static __always_inline void heavy_count(const struct heavy_where *w, struct bt_flow_key *k,
					__u64 bytes, __u32 packets, __u64 addrs, bool have_addrs)
{
	const struct heavy_maps *hm = w->hm;
	const struct bt_ctl *c = w->c;
	struct bt_iv_part *part = w->part;
	__u32 interval = w->interval, cpu = w->cpu;
	struct bt_cm_line *lines, *line;
	struct bt_cm_cell *fmc_mine;
	struct bt_fm_slot *slots;
	__u64 *occ;
	struct bt_fc_entry *fc_mine, *e;
	__u64 h, min_b, min_p;
	__u32 iv = interval & 1;
	__u32 region = cpu * BT_INTERVALS + iv, pat;
	bool refused = false;
	int slot;

	fc_mine = bpf_map_lookup_elem(hm->fc, &cpu);
	fmc_mine = bpf_map_lookup_elem(hm->fmc, &region);
	if (!fc_mine || !fmc_mine)
		return;
	key_mask(k);

	/* Most packets belong to the few heavy flows (that is what makes them
	 * heavy): this CPU has seen them in the flow memory, count them there
	 * without hashing, and skip the sketch. */
	e = fc_entry(fc_mine, k);
	if (!(cfg_cut & BT_CUT_CACHE) && e->interval == interval && e->slot && key_equal(&e->key, k)) {
		if (e->slot != BT_FC_REFUSED) {
			fmc_add(fmc_mine, e->slot - 1, bytes, packets);
			return;
		}
		/* refused before: counted in the sketch, no probing again */
		refused = true;
	}

	slots = bpf_map_lookup_elem(hm->fm, &iv);
	occ = bpf_map_lookup_elem(hm->fmo, &iv);
	lines = bpf_map_lookup_elem(hm->cms, &region);
	if (!slots || !occ || !lines)
		return;
	if (have_addrs && cfg_key_mode == BT_KEY_5TUPLE)
		h = bt_hash_flow_finish(w->hk, addrs, ((const __u64 *)k)[4]);
	else
		h = bt_hash_flow(w->hk, (const __u64 *)k);
	if (cfg_cut & BT_CUT_FLOW_MEMORY)
		refused = true;	/* neither probed nor nominated */
	/* the sketch's line read before the flow memory's probe, so that the
	 * two misses overlap; wasted when the flow memory holds the flow */
	line = &lines[bt_cm_line(h, cfg_cm_lmask)];
	pat = sketch_pattern(h);
	if (cfg_cut & BT_CUT_SKETCH)
		min_b = min_p = 0;	/* no sketch: the packet alone */
	else
		sketch_min(line, pat, &min_b, &min_p);
	slot = refused ? -1 : fm_find(slots, occ, k, h);
	if (slot >= 0) {
		fc_fill(e, k, interval, slot);
		fmc_add(fmc_mine, slot, bytes, packets);
		return;
	}

	min_b += bytes;
	min_p += packets;
	if (!(cfg_cut & BT_CUT_SKETCH))
		sketch_raise(line, pat, min_b, min_p);
	if (!refused && heavy_nominates(min_b, min_p, c, part) &&
	    fm_nominate(slots, occ, k, h, cpu, min_b, min_p, w->ctr) < 0) {
		/* a lost nomination, counted once: the cache remembers it */
		w->ctr->c[BT_CTR_FM_FULL]++;
		part->fm_full++;
		fc_fill(e, k, interval, BT_FC_REFUSED);
	}
}

#endif /* BLOOMTAP_HEAVY_BPF_H */
