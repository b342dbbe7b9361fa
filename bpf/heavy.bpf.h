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

/* make bench's Cold Filter lever (Zhou et al., SIGMOD 2018), a
 * layout no instance uses: a layer of 16-bit counter pairs, bytes and
 * packets, with conservative update in front of the rows, kept in the last
 * row's first 256 KiB (the bench's instance is one row deeper). A packet
 * whose flow stays below the layer's limits and the nomination rule is
 * counted there alone; past them, the counters stop at the limits and the
 * rest goes on to the rows. Not adopted: estimates grow by up to the
 * limits a CPU (docs/benchmark.md); branch experiment/cold-filter has the
 * whole stage, user space's estimates included. */
#define COLD_CELLS 65536	/* 3 a flow, anywhere in the layer */
#define COLD_BYTES 4096
#define COLD_PACKETS 64

struct cold_cell {
	__u16 bytes;
	__u16 packets;
};

/* Counter i (0..2) of the flow of hash h: h multiplied (Fibonacci hashing),
 * so that the counters depend on every bit of h, not on the rows' bits. */
static __always_inline struct cold_cell *cold_cell(struct cold_cell *layer, __u64 h, __u32 i)
{
	return &layer[(h * 0x9e3779b97f4a7c15ULL) >> (48 - 16 * i) & (COLD_CELLS - 1)];
}

static __always_inline void cold_raise(struct cold_cell *x, __u64 b, __u64 p)
{
	if (x->bytes < b)
		x->bytes = b;
	if (x->packets < p)
		x->packets = p;
}

/* The minimum over the flow's counters, bytes and packets. */
static __always_inline void cold_min(struct cold_cell *layer, __u64 h, __u64 *b, __u64 *p)
{
	__u32 i;

	*b = *p = ~0ULL;
#pragma unroll
	for (i = 0; i < 3; i++) {
		struct cold_cell *x = cold_cell(layer, h, i);

		if (x->bytes < *b)
			*b = x->bytes;
		if (x->packets < *p)
			*p = x->packets;
	}
}

/* Counts the packet in the layer and returns true when that is all. Else
 * the counters stop at the limits, and *bytes and *packets become what is
 * left for the rows. */
static __always_inline bool cold_count(struct cold_cell *layer, __u64 h,
				       const struct bt_ctl *c, const struct bt_iv_part *part,
				       __u64 *bytes, __u32 *packets)
{
	bool absorbed;
	__u64 b, p;
	__u32 i;

	cold_min(layer, h, &b, &p);
	b += *bytes;
	p += *packets;
	absorbed = b < COLD_BYTES && p < COLD_PACKETS && !heavy_nominates(b, p, c, part);
	if (!absorbed) {
		*bytes = b > COLD_BYTES ? b - COLD_BYTES : 0;
		*packets = p > COLD_PACKETS ? p - COLD_PACKETS : 0;
		b = b < COLD_BYTES ? b : COLD_BYTES;
		p = p < COLD_PACKETS ? p : COLD_PACKETS;
	}
#pragma unroll
	for (i = 0; i < 3; i++)
		cold_raise(cold_cell(layer, h, i), b, p);
	return absorbed;
}

/* The flow's estimate on this CPU, from the rows' (row_b, row_p, this
 * packet's rest included): the layer's part, which its counters now hold
 * (this CPU's alone), plus the rows' once the layer is at its limit;
 * before, the rows hold nothing of the flow. Derived here, not carried
 * across the rows: carried, it cost every program 16 to 24 bytes of stack,
 * lever or not (bloomtap_xdp's frames reached 496 of 512). */
static __always_inline void cold_estimate(struct cold_cell *layer, __u64 h, __u64 *row_b,
					  __u64 *row_p)
{
	__u64 b, p;

	cold_min(layer, h, &b, &p);
	*row_b = b + (b >= COLD_BYTES ? *row_b : 0);
	*row_p = p + (p >= COLD_PACKETS ? *row_p : 0);
}

/* hm: the stage's maps. key: the parsed flow key, masked in place by the
 * key mode. bytes and packets: what it stands for (packets: 1, or a GRO'd
 * skb's segments). interval: the number heavy_account() read, part: what
 * it returned. addrs: bt_hash_addrs() of the unmasked key when have_addrs
 * (the SPIE stage computed it), which finishes the 5-tuple's hash with one
 * more word. ctr: this CPU's counters of the stage. */
/* The flow's estimate: the minimum over this CPU's rows (depth >= 1), each
 * row's cell in cell[] (NULL past the depth). Unrolled to BT_MAX_DEPTH,
 * each row guarded by the runtime depth. */
static __always_inline void sketch_min(struct bt_cm_cell *rows, __u64 h,
				       struct bt_cm_cell *cell[BT_MAX_DEPTH],
				       __u64 *min_b, __u64 *min_p)
{
	__u32 r;

#pragma unroll
	for (r = 0; r < BT_MAX_DEPTH; r++) {
		cell[r] = NULL;
		if (r >= cfg_depth || (cfg_cut & BT_CUT_SKETCH) ||
		    ((cfg_cut & BT_CUT_COLD_FILTER) && r == cfg_depth - 1))
			continue;
		if (cfg_cut & BT_CUT_ADJACENT_ROWS)	/* make bench's lever only */
			cell[r] = &rows[((((__u32)h + r) & ((cfg_depth * (cfg_wmask + 1) >> 2) - 1)) << 2) +
					((__u32)(h >> (32 + 2 * r)) & 3)];
		else
			cell[r] = &rows[r * (cfg_wmask + 1) + bt_sketch_col(h, r, cfg_wmask)];
		if (cell[r]->bytes < *min_b)
			*min_b = cell[r]->bytes;
		if (cell[r]->packets < *min_p)
			*min_p = cell[r]->packets;
	}
	if (cfg_cut & BT_CUT_SKETCH)
		*min_b = *min_p = 0;	/* no rows: the packet alone */
}

/* Conservative update (Estan & Varghese): raise each cell only as far as
 * the estimate with this packet. This CPU's rows only: plain stores, XDP
 * does not migrate mid-program. */
static __always_inline void sketch_raise(struct bt_cm_cell *cell[BT_MAX_DEPTH], __u64 min_b,
					 __u64 min_p)
{
	__u32 r;

#pragma unroll
	for (r = 0; r < BT_MAX_DEPTH; r++) {
		if (!cell[r])
			continue;
		if (cell[r]->bytes < min_b)
			cell[r]->bytes = min_b;
		if (cell[r]->packets < min_p)
			cell[r]->packets = min_p;
	}
}

/* bytes and packets of flow k, masked in place to the key mode; addrs is
 * the address words' hash when have_addrs (the SPIE stage's, shared) */
static __always_inline void heavy_count(const struct heavy_where *w, struct bt_flow_key *k,
					__u64 bytes, __u32 packets, __u64 addrs, bool have_addrs)
{
	const struct heavy_maps *hm = w->hm;
	const struct bt_ctl *c = w->c;
	struct bt_iv_part *part = w->part;
	__u32 interval = w->interval, cpu = w->cpu;
	struct bt_cm_cell *cell[BT_MAX_DEPTH], *rows, *fmc_mine;
	struct bt_fm_slot *slots;
	__u64 *occ;
	struct bt_fc_entry *fc_mine, *e;
	__u64 h, min_b = ~0ULL, min_p = ~0ULL;
	__u32 iv = interval & 1;
	__u32 region = cpu * BT_INTERVALS + iv;
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
	rows = bpf_map_lookup_elem(hm->cms, &region);
	if (!slots || !occ || !rows)
		return;
	if (have_addrs && cfg_key_mode == BT_KEY_5TUPLE)
		h = bt_hash_flow_finish(w->hk, addrs, ((const __u64 *)k)[4]);
	else
		h = bt_hash_flow(w->hk, (const __u64 *)k);
	if (cfg_cut & BT_CUT_FLOW_MEMORY)
		refused = true;	/* neither probed nor nominated */
	slot = refused ? -1 : fm_find(slots, occ, k, h);
	if (slot >= 0) {
		fc_fill(e, k, interval, slot);
		fmc_add(fmc_mine, slot, bytes, packets);
		return;
	}

	if ((cfg_cut & BT_CUT_COLD_FILTER) &&
	    cold_count((struct cold_cell *)&rows[(cfg_depth - 1) * (cfg_wmask + 1)], h, c, part,
		       &bytes, &packets))
		return;

	sketch_min(rows, h, cell, &min_b, &min_p);
	min_b += bytes;
	min_p += packets;
	sketch_raise(cell, min_b, min_p);
	/* then the rows' estimate is the flow's, but with the lever */
	if (cfg_cut & BT_CUT_COLD_FILTER)
		cold_estimate((struct cold_cell *)&rows[(cfg_depth - 1) * (cfg_wmask + 1)], h,
			      &min_b, &min_p);
	if (!refused && heavy_nominates(min_b, min_p, c, part) &&
	    fm_nominate(slots, occ, k, h, cpu, min_b, min_p, w->ctr) < 0) {
		/* a lost nomination, counted once: the cache remembers it */
		w->ctr->c[BT_CTR_FM_FULL]++;
		part->fm_full++;
		fc_fill(e, k, interval, BT_FC_REFUSED);
	}
}

#endif /* BLOOMTAP_HEAVY_BPF_H */
