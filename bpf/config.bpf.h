/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Every knob of bloomtap.bpf.o, set by user space before load: the
 * constants through skel->rodata, the hash keys through skel->bss, all in
 * user/instance/create.c configure() from the instance's meta and cfg
 * (tests/lib/testlib.h sets cfg_flow_table for the datapath tests). The
 * verifier takes the constants as known and prunes the branches they
 * switch off. The defaults fit the maps' placeholder sizes (one cell, one
 * slot), so that the object as built also loads, as the datapath tests
 * load it. A header including this one may use any knob. */
#ifndef BLOOMTAP_CONFIG_BPF_H
#define BLOOMTAP_CONFIG_BPF_H

#include "vmlinux.h"
#include "bloomtap.h"
#include "hash.h"

/* The stages: 0 or 1 */
const volatile __u8 cfg_flow_table = 0;	/* the flows map is sized (replay --flows) */
const volatile __u8 cfg_heavy = 1;	/* heavy flows; 0: BT_META_NO_HEAVY */
const volatile __u8 cfg_spie = 1;	/* SPIE digests; 0: BT_META_NO_SPIE */
const volatile __u8 cfg_share_hash = 1;	/* 0 only in make bench's ablation */

/* Heavy flows (heavy.bpf.h), from the meta with the map sizes */
const volatile __u32 cfg_key_mode = BT_KEY_5TUPLE;	/* enum bt_key_mode */
const volatile __u32 cfg_depth = 1;		/* a flow's counters d: 1, 2, 4, 8 */
const volatile __u32 cfg_cm_lmask = 0;		/* sketch lines - 1 */
const volatile __u32 cfg_cm_npat = 1;		/* C(10, d) */
const volatile __u32 cfg_cm_pat[BT_CM_MAX_PATTERNS];	/* bt_cm_patterns() */
const volatile __u32 cfg_fm_mask = 0;		/* flow memory slots - 1 */
const volatile __u64 cfg_fc_mult = 1;		/* odd: flow cache index multiplier */
const volatile __u64 cfg_frac_div = 0;		/* ceil(2 / f) of a fraction
						 * threshold; 0: bytes or packets */
/* make bench's breakdown only (enum bt_cut, include/bloomtap.h): parts of the
 * stage left out, so that what remains can be timed. 0 in every instance
 * bloomtap makes; the verifier drops the code a constant rules out. */
const volatile __u32 cfg_cut = 0;

/* SPIE (spie.bpf.h), from the meta */
const volatile __u32 cfg_k = 4;			/* bits per packet, <= BT_BLOCK_MAX_K */
const volatile __u32 cfg_block_mask = 0;	/* blocks per window - 1 */
const volatile __u32 cfg_windows = 1;		/* W */
const volatile __u64 cfg_design_load = ~0ULL;	/* digests a window is sized for */
const volatile __u32 cfg_batch_mask = BT_SPIE_BATCH - 1;	/* digests a CPU adds to
								 * the shared fill at once - 1 */
const volatile __u8 cfg_test_hold = 0;		/* tests only: enum bt_test_gate */

/* Egress (egress.bpf.h): the instance was made to record egress, and its
 * egress heavy-flow maps (e*) are sized (BT_META_EGRESS_MAPS) */
const volatile __u8 cfg_egress_heavy = 0;

/* The drop recorder (recorder.bpf.h), from the meta's drop_ring and
 * drop_head: the copy's size is bounded by the slot's */
const volatile __u32 cfg_rec_slots = 0;		/* slots a CPU, 0: off */
const volatile __u32 cfg_rec_head = BT_DROP_HEAD_DEFAULT;	/* bytes of a frame kept */

/* Derived from the instance's key (include/hash.h bt_hash_keys_derive).
 * Not const: a const object's reads through a pointer would fold to its
 * zero initializer, and copying it through volatile reads on every packet
 * cost more than the hashing. */
struct bt_hash_keys cfg_keys = {};

#endif /* BLOOMTAP_CONFIG_BPF_H */
