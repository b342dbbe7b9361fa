/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Heavy flows: flow memory first (nominated flows are counted exactly and
 * skip the sketch: Estan & Varghese's shielding), else a per-CPU count-min
 * sketch with conservative update, which nominates the flow once its
 * estimate crosses the per-CPU nomination threshold.
 *
 * Per-CPU detection and recall: a flow of T bytes spread over n CPUs has at
 * least T/n on one of them, so nominating at T/n on each CPU misses no flow;
 * user space then confirms with the estimate merged over CPUs.
 */
#ifndef BLOOMTAP_HEAVY_BPF_H
#define BLOOMTAP_HEAVY_BPF_H

#include "maps.bpf.h"
#include "counters.bpf.h"
#include "hash.h"

/* Set through skel->rodata before load (user/instance.c). */
const volatile struct bt_hash_key cfg_hash_key = {};
const volatile __u32 cfg_key_mode = BT_KEY_5TUPLE;
const volatile __u32 cfg_depth = 4;		/* rows d, <= BT_MAX_DEPTH */
const volatile __u32 cfg_wmask = 0;		/* w - 1 */
const volatile __u32 cfg_fm_mask = 0;		/* flow memory slots - 1 */

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

static __always_inline struct bt_fm_slot *fm_slot(__u32 iv, __u32 i)
{
	__u32 idx = iv * (cfg_fm_mask + 1) + (i & cfg_fm_mask);

	return bpf_map_lookup_elem(&fm, &idx);
}

/* The flow's slot if it was nominated in this interval, else -1. Probing
 * stops at the first empty slot: slots are never freed within an interval. */
static __always_inline int fm_find(const struct bt_flow_key *k, __u64 h, __u32 iv)
{
	__u32 start = h >> 40, p;

	for (p = 0; p < BT_FM_PROBES; p++) {
		struct bt_fm_slot *s = fm_slot(iv, start + p);

		if (!s || s->state == BT_FM_EMPTY)
			return -1;
		if (s->state == BT_FM_VALID && key_equal(&s->key, k))
			return (start + p) & cfg_fm_mask;
	}
	return -1;
}

static __always_inline void fm_nominate(const struct bt_flow_key *k, __u64 h,
					__u32 iv, __u32 cpu)
{
	__u32 start = h >> 40, p;

	for (p = 0; p < BT_FM_PROBES; p++) {
		struct bt_fm_slot *s = fm_slot(iv, start + p);

		if (!s)
			break;
		if (s->state == BT_FM_VALID && key_equal(&s->key, k))
			return;	/* another CPU was first */
		if (s->state != BT_FM_EMPTY ||
		    __sync_val_compare_and_swap(&s->state, BT_FM_EMPTY, BT_FM_CLAIMING) !=
		    BT_FM_EMPTY)
			continue;
		__builtin_memcpy(&s->key, k, sizeof(*k));
		s->cpu = cpu;	/* its fmc counters were cleared with the interval */
		/* xchg is a full barrier: the key is visible before VALID is */
		__sync_lock_test_and_set(&s->state, BT_FM_VALID);
		count_event(BT_CTR_NOMINATED);
		return;
	}
	count_event(BT_CTR_FM_FULL);
}

/* key: the parsed flow key, masked in place by the key mode. */
static __always_inline void heavy_count(struct bt_flow_key *k, __u64 bytes,
					const struct bt_ctl *c, __u32 cpu)
{
	struct bt_cm_cell *cell[BT_MAX_DEPTH];
	__u64 h, min_b = ~0ULL, min_p = ~0ULL;
	__u32 iv = c->interval & 1, w = cfg_wmask + 1, depth = cfg_depth, base, r;
	int slot;
	/* Read the key through volatile: a cast would let the compiler fold
	 * the zero initializer instead of what user space set before load. */
	struct bt_hash_key hk = { cfg_hash_key.k0, cfg_hash_key.k1 };

	key_mask(k);
	h = bt_siphash13(&hk, (const __u64 *)k, BT_FLOW_KEY_WORDS);

	/* Most packets belong to the few heavy flows (that is what makes them
	 * heavy): find them in the flow memory first, and skip the sketch. */
	slot = fm_find(k, h, iv);
	if (slot >= 0) {
		__u32 idx = (cpu * BT_INTERVALS + iv) * (cfg_fm_mask + 1) + slot;
		struct bt_cm_cell *x = bpf_map_lookup_elem(&fmc, &idx);

		if (x) {	/* this CPU's own counters: plain adds */
			x->bytes += bytes;
			x->packets++;
		}
		return;
	}

	/* This CPU's rows of the current interval. The estimate is the
	 * minimum over the rows. Unrolled to BT_MAX_DEPTH, each row guarded
	 * by the runtime depth. */
	base = (cpu * BT_INTERVALS + iv) * depth * w;
#pragma unroll
	for (r = 0; r < BT_MAX_DEPTH; r++) {
		__u32 idx = base + r * w + bt_sketch_col(h, r, cfg_wmask);

		cell[r] = NULL;
		if (r >= depth)
			continue;
		cell[r] = bpf_map_lookup_elem(&cms, &idx);
		if (!cell[r])
			continue;
		if (cell[r]->bytes < min_b)
			min_b = cell[r]->bytes;
		if (cell[r]->packets < min_p)
			min_p = cell[r]->packets;
	}
	if (min_b == ~0ULL)
		return;		/* no row: a sizing the verifier would not allow */
	min_b += bytes;
	min_p += 1;

	if (min_b >= c->nominate_bytes || min_p >= c->nominate_packets)
		fm_nominate(k, h, iv, cpu);
	/* Conservative update (Estan & Varghese): raise each cell only as far
	 * as min + this packet. This CPU's rows only: plain stores, XDP does
	 * not migrate mid-program. */
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

#endif /* BLOOMTAP_HEAVY_BPF_H */
