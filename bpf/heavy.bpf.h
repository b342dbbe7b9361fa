/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Heavy flows: flow memory first (nominated flows are counted exactly and
 * skip the sketch: Estan & Varghese's shielding), else a per-CPU count-min
 * sketch with conservative update, which nominates the flow once its
 * estimate crosses the per-CPU nomination threshold.
 *
 * In front, a per-CPU flow cache (include/bloomtap.h) holds one flow an
 * entry, found without the keyed hash: the packets of a nominated flow go
 * straight to its exact counters, those of any other flow are counted in
 * the entry until it leaves, then added to the sketch at once. Most packets
 * belong to flows that keep their entry, and cost one cache line.
 *
 * Per-CPU detection and recall. Byte and packet thresholds T: a flow of T
 * spread over n CPUs has at least T/n on one of them, so nominating at T/n
 * on each CPU misses no flow. Fraction thresholds f (of the interval's
 * bytes N): a flow is nominated when its estimate on a CPU reaches f/2
 * times that CPU's bytes so far in the interval, N_c(t) (the margin 2:
 * user/sketch.h). A flow with at least f*N has, on some CPU c, at least
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

/* Set through skel->rodata before load (user/instance.c), with the map
 * sizes. The defaults fit the maps' placeholder sizes (one cell, one slot),
 * so that the object as built also loads, as the datapath tests load it. */
const volatile __u32 cfg_key_mode = BT_KEY_5TUPLE;
const volatile __u32 cfg_depth = 1;		/* rows d, 1..BT_MAX_DEPTH */
const volatile __u32 cfg_wmask = 0;		/* w - 1 */
const volatile __u32 cfg_fm_mask = 0;		/* flow memory slots - 1 */
const volatile __u64 cfg_fc_mult = 1;		/* odd: flow cache index multiplier */
const volatile __u64 cfg_frac_div = 0;		/* ceil(2 / f) of a fraction
						 * threshold; 0: bytes or packets */
const volatile __u32 cfg_frac_shift = 0;		/* ceil(log2(cfg_frac_div)) */
const volatile __u32 cfg_thr_packets = 0;	/* a packet threshold: the flow
						 * cache's "check" counts packets */
/* The flow cache's levers, for make bench's ablation: entries used (bits),
 * whether flows not nominated take entries, whether ostracism decides. */
const volatile __u32 cfg_fc_bits = BT_FC_BITS;
const volatile __u32 cfg_fc_pending = 1;
const volatile __u32 cfg_fc_votes = 1;
const volatile __u32 cfg_dbg = 0;

/* The maps of one heavy-flow stage: the XDP program's (cms, fm, fmc, fc)
 * or the dropped packets' (bpf/drop.bpf.h). Always a constant where it is
 * made, so that the inlined lookups name their maps directly. */
struct heavy_maps {
	void *cms, *fm, *fmc, *fc;
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

/* The flow's slot if it was nominated in this interval, else -1. Probing
 * stops at the first empty slot: slots are never freed within an interval. */
static __always_inline int fm_find(struct bt_fm_slot *slots, const struct bt_flow_key *k,
				   __u64 h)
{
	__u32 start = h >> 40, p;

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
static __always_inline int fm_nominate(struct bt_fm_slot *slots, const struct bt_flow_key *k,
				       __u64 h, __u32 cpu, __u64 est_bytes, __u64 est_packets,
				       struct bt_counters *ctr)
{
	__u32 start = h >> 40, p;

	for (p = 0; p < BT_FM_PROBES; p++) {
		__u32 i = (start + p) & cfg_fm_mask;
		struct bt_fm_slot *s = &slots[i];

		if (s->state == BT_FM_VALID && key_equal(&s->key, k))
			return i;	/* another CPU was first */
		if (s->state != BT_FM_EMPTY ||
		    __sync_val_compare_and_swap(&s->state, BT_FM_EMPTY, BT_FM_CLAIMING) !=
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

	return &fc[((x * cfg_fc_mult) >> (64 - cfg_fc_bits)) & (BT_FC_ENTRIES - 1)];
}

/* Empty while it is written: a program preempted here (BPF_PROG_TEST_RUN
 * may be) leaves no entry that matches half a key. slot: the entry's slot
 * field (include/bloomtap.h). */
static __always_inline void fc_fill(struct bt_fc_entry *e, const struct bt_flow_key *k,
				    __u32 slot, __u32 check)
{
	e->slot = 0;
	asm volatile("" ::: "memory");
	__builtin_memcpy(&e->key, k, sizeof(*k));
	e->votes = 0;
	e->hits = 1;
	e->bytes = 0;
	e->packets = 0;
	e->check = check;
	asm volatile("" ::: "memory");
	e->slot = slot;
}

static __always_inline void fmc_add(struct bt_cm_cell *fmc_mine, __u32 slot, __u64 bytes,
				    __u32 packets)
{
	struct bt_cm_cell *x = &fmc_mine[slot & cfg_fm_mask];

	x->bytes += bytes;	/* this CPU's own counters: plain adds */
	x->packets += packets;
}

/* Branch-free minimum and maximum of two counters below 2^63: BPF has no
 * conditional move, and a branch on a cell just loaded from a random line
 * is mispredicted half the time, each time waiting for the load. */
static __always_inline __u64 ctr_min(__u64 a, __u64 b)
{
	__u64 a_lt_b = -((a - b) >> 63);	/* all ones when a < b */

	return b ^ ((a ^ b) & a_lt_b);
}

static __always_inline __u64 ctr_max(__u64 a, __u64 b)
{
	return a ^ b ^ ctr_min(a, b);
}

/* Conservative update (Estan & Varghese) of the cells of hash h in this
 * CPU's rows: each raised only as far as their minimum + (bytes, packets);
 * returns that estimate in *est_b, *est_p. This CPU's rows only: plain
 * stores, XDP does not migrate mid-program. Unrolled to BT_MAX_DEPTH, each
 * row guarded by the runtime depth (>= 1). */
static __always_inline void cms_add(struct bt_cm_cell *rows, __u64 h, __u64 bytes,
				    __u64 packets, __u64 *est_b, __u64 *est_p)
{
	struct bt_cm_cell *cell[BT_MAX_DEPTH];
	__u64 min_b = ~0ULL >> 1, min_p = ~0ULL >> 1;
	__u32 r;

#pragma unroll
	for (r = 0; r < BT_MAX_DEPTH; r++) {
		cell[r] = NULL;
		if (r >= cfg_depth)
			continue;
		cell[r] = &rows[r * (cfg_wmask + 1) + bt_sketch_col(h, r, cfg_wmask)];
		min_b = ctr_min(cell[r]->bytes, min_b);
		min_p = ctr_min(cell[r]->packets, min_p);
	}
	min_b += bytes;
	min_p += packets;
#pragma unroll
	for (r = 0; r < BT_MAX_DEPTH; r++) {
		if (!cell[r])
			continue;
		cell[r]->bytes = ctr_max(cell[r]->bytes, min_b);
		cell[r]->packets = ctr_max(cell[r]->packets, min_p);
	}
	*est_b = min_b;
	*est_p = min_p;
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

/* A pending flow's "check": how far its pending count may rise from 0
 * before its estimate could meet the rule (the estimate is est + pending,
 * est bounding its part so far; the rule's level only rises). */
static __always_inline __u32 fc_check(__u64 est_b, __u64 est_p, const struct bt_ctl *c,
				      const struct bt_iv_part *part)
{
	__u64 level, est = est_b;

	if (cfg_frac_div)	/* est * div >= N_c(t) needs est >= N_c(t) / div, and
				 * so est >= N_c(t) >> shift: no division (this is
				 * early, so it never misses the rule) */
		level = part->bytes >> cfg_frac_shift;
	else if (cfg_thr_packets) {
		level = c->nominate_packets;
		est = est_p;
	} else
		level = c->nominate_bytes;
	if (level <= est)
		return 1;
	return level - est < BT_FC_PENDING_MAX ? level - est : BT_FC_PENDING_MAX;
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

/* A pending flow meets the rule: its pending count goes to the sketch
 * (the estimate it returns bounds the flow's whole part on this CPU), and
 * the flow enters the flow memory, or its entry waits for the next check. */
static __always_inline void fc_settle(struct bt_fc_entry *e, struct bt_cm_cell *rows,
				      struct bt_fm_slot *slots, __u64 h, __u32 cpu,
				      const struct bt_ctl *c, struct bt_iv_part *part,
				      struct bt_counters *ctr)
{
	__u64 est_b, est_p;
	int slot;

	cms_add(rows, h, e->bytes, e->packets, &est_b, &est_p);
	e->bytes = 0;
	e->packets = 0;
	if (e->slot == BT_FC_REFUSED || !heavy_nominates(est_b, est_p, c, part)) {
		e->check = e->slot == BT_FC_REFUSED ? BT_FC_PENDING_MAX :
						       fc_check(est_b, est_p, c, part);
		return;
	}
	/* this CPU's part is the slot's estimate, or, when another CPU was
	 * first, in this CPU's sketch */
	slot = fm_nominate(slots, &e->key, h, cpu, est_b, est_p, ctr);
	if (slot >= 0) {
		e->slot = slot + 1;
		return;
	}
	ctr->c[BT_CTR_FM_FULL]++;	/* a lost nomination, counted once */
	part->fm_full++;
	e->slot = BT_FC_REFUSED;
	e->check = BT_FC_PENDING_MAX;
}

/* hm: the stage's maps. key: the parsed flow key, masked in place by the
 * key mode. bytes and packets: what it stands for (packets: 1, or a GRO'd
 * skb's segments). interval: the number heavy_account() read, part: what
 * it returned. addrs: bt_hash_addrs() of the unmasked key when have_addrs
 * (the SPIE stage computed it), which finishes the 5-tuple's hash with one
 * more word. ctr: this CPU's counters of the stage. */
static __always_inline void heavy_count(const struct heavy_maps *hm, struct bt_flow_key *k,
					__u64 bytes, __u32 packets,
					const struct bt_ctl *c, __u32 interval,
					struct bt_iv_part *part, __u32 cpu,
					const struct bt_hash_keys *hk, __u64 addrs,
					bool have_addrs, struct bt_counters *ctr)
{
	struct bt_cm_cell *rows, *fmc_mine;
	struct bt_fm_slot *slots;
	struct bt_fc_entry *fc_mine, *e;
	__u64 h, est_b, est_p;
	__u32 iv = interval & 1;
	__u32 region = cpu * BT_INTERVALS + iv, state, check = 0;
	bool take;
	int slot;

	fc_mine = bpf_map_lookup_elem(hm->fc, &region);
	fmc_mine = bpf_map_lookup_elem(hm->fmc, &region);
	if (!fc_mine || !fmc_mine)
		return;
	key_mask(k);

	/* Most packets belong to the flows that hold their entry: one
	 * cache line, no keyed hash, no sketch. */
	e = fc_entry(fc_mine, k);
	if (!(cfg_dbg & 8) && e->slot && key_equal(&e->key, k)) {
		if (e->hits != ~0U)
			e->hits++;
		if (e->slot <= cfg_fm_mask + 1) {
			fmc_add(fmc_mine, e->slot - 1, bytes, packets);
			return;
		}
		e->bytes += bytes;
		e->packets += packets;
		if ((cfg_thr_packets ? e->packets : e->bytes) < e->check &&
		    e->bytes < BT_FC_PENDING_MAX)
			return;
		slots = bpf_map_lookup_elem(hm->fm, &iv);
		rows = bpf_map_lookup_elem(hm->cms, &region);
		if (!slots || !rows)
			return;
		fc_settle(e, rows, slots, bt_hash_flow(hk, (const __u64 *)k), cpu, c, part, ctr);
		return;
	}

	slots = bpf_map_lookup_elem(hm->fm, &iv);
	rows = bpf_map_lookup_elem(hm->cms, &region);
	if (!slots || !rows)
		return;
	/* Another flow's entry: it keeps it until the packets of the flows
	 * that meet it there reach lambda times its own (ostracism). */
	take = !e->slot || !cfg_fc_votes;
	if (!take && !(cfg_dbg & 8)) {
		e->votes += packets;
		take = e->votes >= (__u64)BT_FC_LAMBDA * e->hits;
	}

	if (have_addrs && cfg_key_mode == BT_KEY_5TUPLE)
		h = bt_hash_flow_finish(hk, addrs, ((const __u64 *)k)[4]);
	else
		h = bt_hash_flow(hk, (const __u64 *)k);
	slot = (cfg_dbg & 1) ? -1 : fm_find(slots, k, h);
	if (slot >= 0) {
		fmc_add(fmc_mine, slot, bytes, packets);
		state = slot + 1;
	} else {
		if (cfg_dbg & 2) { est_b = est_p = 0; } else
		cms_add(rows, h, bytes, packets, &est_b, &est_p);
		if (!heavy_nominates(est_b, est_p, c, part)) {
			take = take && cfg_fc_pending;
			state = BT_FC_PENDING;
			if (take)
				check = fc_check(est_b, est_p, c, part);
		} else if ((slot = fm_nominate(slots, k, h, cpu, est_b, est_p, ctr)) >= 0) {
			state = slot + 1;
		} else {
			/* a lost nomination, counted once: the entry
			 * remembers it, whatever flow held it */
			ctr->c[BT_CTR_FM_FULL]++;
			part->fm_full++;
			state = BT_FC_REFUSED;
			check = BT_FC_PENDING_MAX;
			take = true;
		}
	}
	if (!take || (cfg_dbg & 8))
		return;
	if (!(cfg_dbg & 4) && e->slot > cfg_fm_mask + 1 && (e->bytes || e->packets))
		/* the flow it evicts: its pending count to the sketch */
		cms_add(rows, bt_hash_flow(hk, (const __u64 *)&e->key), e->bytes, e->packets,
			&est_b, &est_p);
	fc_fill(e, k, state, check);
}

#endif /* BLOOMTAP_HEAVY_BPF_H */
