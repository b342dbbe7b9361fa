/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE: the packet's digest into the current window's blocked Bloom filter
 * (Snoeren et al., "Hash-Based IP Traceback", SIGCOMM 2001), and the move
 * to the next window when this one is full. The digest's words are in
 * include/hash.h "The SPIE digest"; user/core/digest.c builds the same.
 *
 * Cost model (docs/benchmark.md): what a packet pays here is the digest (two word
 * loads, three NH multiplies on top of the address part shared with the
 * heavy-flow stage, a mixer), then one block of 16 bytes in the window
 * being written. Windows are small (256 KiB by default) so that the one
 * being written stays in the L2 cache and the TLB's reach: with windows
 * of several MiB each packet waits for a random DRAM line. */
#ifndef BLOOMTAP_SPIE_BPF_H
#define BLOOMTAP_SPIE_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "hash.h"
#include "config.bpf.h"

struct test_hold_ctx {
	struct bt_ctl *c;
};

/* 256 looks at the gate a call, so that bpf_loop's bound (2^23 calls)
 * spans a second or more. */
static long test_gate_held(__u64 i, void *arg)
{
	struct test_hold_ctx *x = arg;

	for (int j = 0; j < 256; j++)
		if (*(volatile __u32 *)&x->c->test_gate != BT_TEST_GATE_HELD)
			return 1;
	return 0;
}

/* Tests only: the rotation that finds the gate armed waits here until the
 * test opens it, or gives up after bpf_loop's bound. */
static __noinline void test_hold(struct bt_ctl *c)
{
	struct test_hold_ctx x = { .c = c };

	if (!c || __sync_val_compare_and_swap(&c->test_gate, BT_TEST_GATE_ARMED,
					      BT_TEST_GATE_HELD) != BT_TEST_GATE_ARMED)
		return;
	bpf_loop(1 << 23, test_gate_held, &x, 0);
	__sync_val_compare_and_swap(&c->test_gate, BT_TEST_GATE_HELD, BT_TEST_GATE_TIMED_OUT);
}

/* The digest's header word (include/hash.h "The SPIE digest") from the
 * first 8 bytes of the IP header, loaded little-endian. */
static __always_inline __u64 spie_hdr_v4(__u64 w, __u8 proto)
{
	/* TOS out (routers rewrite DSCP/ECN), the protocol in its place */
	return (w & 0xffffffffffff00ffULL) | (__u64)proto << 8;
}

static __always_inline __u64 spie_hdr_v6(__u64 w)
{
	/* version nibble, payload length, next header */
	return w & 0x00ffffff000000f0ULL;
}

/* The digest's words after the addresses (include/hash.h "The SPIE
 * digest"): words 4 to 6, hdr, after and more. */
struct spie_in {
	__u64 hdr, after, more;
};

/* The n bytes (at most 8) at p, zero-padded: a word load where the frame
 * holds 8 bytes, else one byte at a time (a frame cut short: captures,
 * replay). Bytes past n are the IP packet's end: Ethernet padding. */
static __always_inline __u64 spie_load(__u8 *p, __u32 n, void *data_end)
{
	__u64 w = 0;
	__u32 i;

	if ((void *)(p + 8) <= data_end) {
		w = *(__u64 *)p;
		return n < 8 ? w & ((1ULL << (n * 8)) - 1) : w;
	}
#pragma unroll
	for (i = 0; i < 8; i++) {
		if (i >= n || (void *)(p + i + 1) > data_end)
			break;
		w |= (__u64)p[i] << (8 * i);
	}
	return w;
}

/* The digest's UDP words: IPv4 whose protocol is 17, not a later fragment
 * (its 8 bytes are payload); IPv6 whose header at the digest's 8 bytes,
 * nh (after the extension headers, none of them a fragment header), is
 * 17. The XDP, egress and drop programs ask the same. */
static __always_inline bool spie_is_udp(const __u8 *ip, bool v4, __u8 nh)
{
	if (v4)
		return ip[9] == IPPROTO_UDP_ && !(((__u32)ip[6] << 8 | ip[7]) & 0x1fff);
	return nh == IPPROTO_UDP_;
}

#define SPIE_CSUM_OUT 0x0000ffffffffffffULL	/* UDP's checksum, bytes 6-7, zeroed */

/* UDP (spie_is_udp): the checksum out of the after word, the payload's
 * first 8 bytes in more. */
static __always_inline void spie_udp(struct spie_in *in, __u8 *l4, __u32 n, void *data_end,
				     bool udp)
{
	in->more = 0;
	if (!udp)
		return;
	in->after &= SPIE_CSUM_OUT;
	if (n > 8)
		in->more = spie_load(l4 + 8, n - 8, data_end);
}

/* The words, with word loads (an unaligned load is fine for XDP on the
 * architectures that run it efficiently; the verifier checks the bounds).
 * False when the header is not all there (a keyed packet always has it). */
static __always_inline bool spie_words(const struct pkt_info *pi, void *data,
				       void *data_end, struct spie_in *in)
{
	__u8 *ip = data + (pi->l3_off & BT_HDR_OFF_MASK), *l4;
	__u32 n = pi->ip_after;
	bool udp;

	if (pi->l3 == BT_CTR_L3_IPV4) {
		if ((void *)(ip + 20) > data_end)
			return false;
		in->hdr = spie_hdr_v4(*(__u64 *)ip, ip[9]);
		udp = spie_is_udp(ip, true, 0);
	} else {
		if ((void *)(ip + 40) > data_end)
			return false;
		in->hdr = spie_hdr_v6(*(__u64 *)ip);
		udp = spie_is_udp(ip, false, pi->spie_nh);
	}
	/* IHL * 4 (20..60), or 40 and IPv6's extension headers (below 8 KiB),
	 * masked for the verifier; spie_load checks the bounds */
	l4 = ip + (pi->spie_hlen & BT_HDR_OFF_MASK);
	in->after = spie_load(l4, n, data_end);
	spie_udp(in, l4, n, data_end, udp);
	return true;
}

/* Sets the digest's k bits in its block b, one line, an atomic OR a bit
 * (concurrent inserts from other CPUs must not be lost: plain stores could
 * undo theirs). With check, it first loads each position, ORs only the
 * bits not yet set, and returns whether every bit was set already; without,
 * it loads nothing and returns false. The loads are what costs: every CPU
 * writes the window's lines, and a load before the locked OR takes the
 * line from the CPU that wrote it last shared, then again to write it
 * (docs/benchmark.md "Two CPUs at once"). The word index is masked for
 * the verifier. */
static __always_inline bool bloom_set(struct bt_bloom_block *b, __u64 h, __u32 k, bool check)
{
	bool present = true;
	__u32 i;

	for (i = 0; i < BT_BLOCK_MAX_K; i++) {
		__u32 pos = bt_bloom_pos(h, i);
		__u64 *w = &b->w[(pos >> 6) & (BT_BLOCK_WORDS - 1)], bit = 1ULL << (pos & 63);

		if (i >= k)
			break;
		if (check && (*w & bit))
			continue;
		present = false;
		__sync_fetch_and_or(w, bit);
	}
	return present;
}

/* Inserts digest h in window win; with sample, true when h is one of
 * BT_CTR_SPIE_PRESENT's sample (bt_present_sampled) and its bits were all
 * set already, to be counted BT_PRESENT_SAMPLE times. */
static __always_inline bool spie_insert(__u64 h, __u32 win, bool sample)
{
	__u32 idx = win * (cfg_block_mask + 1) + bt_bloom_block(h, cfg_block_mask);
	struct bt_bloom_block *b = bpf_map_lookup_elem(&spie, &idx);

	return b ? bloom_set(b, h, cfg_k, sample && bt_present_sampled(h)) : false;
}

/* The rotation's steps are global functions: the verifier checks one of
 * those once, on its own, where it checks a static subprogram again in
 * every state of every caller. The egress and drop programs count digests
 * in several places each (segments, a drop's two digests): as static
 * calls, their rotation bodies were half of what the verifier walked, and
 * three quarters of its time (docs/benchmark.md, "Loading an instance").
 * Their arguments are scalars, the maps looked up again: a call a batch
 * of digests, off the per-packet path. */

/* The fill of window win, batch more digests (one locked add per batch,
 * not per packet); once it reaches the design load, claim the move to the
 * next window if user space has it READY (include/bloomtap.h, "Life of a
 * window"). True when this CPU won the claim; the caller then takes the
 * steps after it (spie_finish_rotation). Once a window, so the clock read
 * (45 ns) stays off the per-packet path. prog: whose digests filled it,
 * as wcount's slots are ordered (0 XDP, 1 the drop program, 2 tc egress),
 * for the counters a missed rotation is counted in. */
__noinline int spie_fill_window(__u32 win, __u32 prog, __u32 batch)
{
	__u32 zero = 0, next = win + 1 < cfg_windows ? win + 1 : 0;
	struct bt_ctl *c = bpf_map_lookup_elem(&ctl, &zero);
	struct bt_window *w = bpf_map_lookup_elem(&windows, &win);
	struct bt_window *nw = bpf_map_lookup_elem(&windows, &next);
	__u64 ring;
	__u32 st;

	if (!c || !w || !nw ||
	    __sync_fetch_and_add(&w->fill, batch) + batch < cfg_design_load)
		return 0;
	/* A rotation under way (the index not moved yet, or a keeper's), or
	 * a CPU late with a window the ring has left (it read the index a
	 * window or more ago: a vCPU the host descheduled): nothing to do. */
	ring = *(volatile __u64 *)&c->ring;
	if ((ring & BT_RING_KEEPER) || ring % cfg_windows != win ||
	    *(volatile __u32 *)&c->window != win)
		return 0;
	st = *(volatile __u32 *)&nw->state;
	if (st != BT_WIN_READY) {
		/* the rotation before this one still closing its window */
		if (st == BT_WIN_CURRENT)
			return 0;
		/* Stay: every digest still lands in a filter, at a higher
		 * false-positive rate that the window's fill will show. */
		if (!(w->flags & BT_WIN_OVERLOADED))
			__sync_fetch_and_or(&w->flags, BT_WIN_OVERLOADED);
		count_event_of(BT_CTR_SPIE_NO_READY, prog == 1 ? BT_DIRS :
				prog == 2 ? BT_DIR_EGRESS : BT_DIR_INGRESS);
		return 0;
	}
	/* one claimant wins; the others see the ring busy until it is done */
	return __sync_val_compare_and_swap(&c->ring, ring, ring + 1) == ring;
}

/* The rotation claimed: the next window made CURRENT, the index stored,
 * the old window win closed (user/instance/spie.c finish_rotation takes
 * the same steps for a keeper). */
__noinline int spie_finish_rotation(__u32 win)
{
	__u32 zero = 0, next = win + 1 < cfg_windows ? win + 1 : 0;
	struct bt_ctl *c = bpf_map_lookup_elem(&ctl, &zero);
	struct bt_window *w = bpf_map_lookup_elem(&windows, &win);
	struct bt_window *nw = bpf_map_lookup_elem(&windows, &next);
	__u64 now;

	if (!c || !w || !nw)
		return 0;
	now = bpf_ktime_get_boot_ns();
	if (__sync_val_compare_and_swap(&nw->state, BT_WIN_READY, BT_WIN_CURRENT) ==
	    BT_WIN_READY) {
		nw->start_ns = now;
		w->end_ns = now;
	}
	__sync_lock_test_and_set(&c->window, next);
	__sync_val_compare_and_swap(&w->state, BT_WIN_CURRENT, BT_WIN_CLOSED);
	return 0;
}

/* This CPU's exact count for the window (the drop program's in slots of
 * its own: slot = win + W, maps.bpf.h), and every batch of digests the
 * shared fill. */
static __always_inline void spie_count(struct bt_ctl *c, __u32 win, __u32 slot, bool may_hold)
{
	__u64 *mine = bpf_map_lookup_elem(&wcount, &slot);

	if (!mine || (++*mine & cfg_batch_mask))
		return;
	if (spie_fill_window(win, slot / cfg_windows, cfg_batch_mask + 1)) {
		/* the XDP program's alone (may_hold, a constant): the drop
		 * program's call graph stays without the gate's frames, whose
		 * stack Linux 6.1 adds to the bpf_loop callback it already
		 * runs in, past 512 bytes */
		if (may_hold && cfg_test_hold)
			test_hold(c);
		spie_finish_rotation(win);
	}
}

/* Two digests a drop (the drop program's, include/hash.h): "dropped"
 * (BT_DROP_ANY), and "dropped for this reason"; both count towards the
 * window's load, in the drop program's count slots. */
static __always_inline void spie_insert_dropped(struct bt_ctl *c, __u32 win, __u64 h,
						__u32 reason)
{
	spie_insert(bt_hash_drop(h, BT_DROP_ANY), win, false);
	spie_count(c, win, win + cfg_windows, false);
	spie_insert(bt_hash_drop(h, reason), win, false);
	spie_count(c, win, win + cfg_windows, false);
}

/* A sent packet's digest (tc egress), in egress's count slots; sample as
 * spie_insert's. */
static __always_inline bool spie_insert_sent(struct bt_ctl *c, __u32 win, __u64 h, bool sample)
{
	bool present = spie_insert(bt_hash_sent(h), win, sample);

	spie_count(c, win, win + 2 * cfg_windows, false);
	return present;
}

/* addrs: bt_hash_addrs() of the packet's flow key, computed once for both
 * stages. */
static __always_inline void spie_record(const struct pkt_info *pi, void *data,
					void *data_end, struct bt_ctl *c,
					struct bt_counters *ctr, const struct bt_hash_keys *k,
					__u64 addrs, bool log_digests)
{
	__u32 win = c->window;
	struct spie_in in;
	__u64 h;

	if (win >= cfg_windows || !spie_words(pi, data, data_end, &in))
		return;
	h = bt_hash_spie_finish(k, addrs, in.hdr, in.after, in.more);
	if (log_digests) {
		__u32 n = ctr->c[BT_CTR_SPIE_INSERTED];
		__u64 *slot = bpf_map_lookup_elem(&digest_log, &n);

		if (slot)
			*slot = h;
	}
	if (spie_insert(h, win, true))
		ctr->c[BT_CTR_SPIE_PRESENT] += BT_PRESENT_SAMPLE;
	ctr->c[BT_CTR_SPIE_INSERTED]++;
	spie_count(c, win, win, true);
}

#endif /* BLOOMTAP_SPIE_BPF_H */
