// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "base/common.h"
#include "base/util.h"
#include "hash.h"
#include "instance.h"
#include "spie.h"

int bt_spie_resolve(struct bt_spie_cfg *c, struct bt_meta *meta)
{
	uint64_t n;
	uint32_t k;

	if (!c->windows)
		c->windows = BT_DEFAULT_WINDOWS;
	if (!c->window_bits)
		c->window_bits = BT_DEFAULT_WINDOW_BITS;
	if (c->bits_per_packet <= 0)
		c->bits_per_packet = BT_DEFAULT_BITS_PER_PACKET;
	if (c->fpr <= 0)
		c->fpr = BT_DEFAULT_FPR;
	if (c->window_s <= 0)
		c->window_s = BT_DEFAULT_WINDOW_S;
	if (c->window_bits & (c->window_bits - 1) || c->window_bits < 4096) {
		bt_err("--window-bits %llu is not a power of two of at least 4096",
		       (unsigned long long)c->window_bits);
		return -EINVAL;
	}
	if (c->window_bits / BT_BLOCK_BITS * c->windows > UINT32_MAX) {
		bt_err("%u windows of %llu bits are more blocks than a BPF array holds",
		       c->windows, (unsigned long long)c->window_bits);
		return -EINVAL;
	}
	n = (uint64_t)(c->window_bits / c->bits_per_packet);
	if (n < 64) {
		bt_err("a window of %llu bits at %g bits a packet holds %llu packets: give it "
		       "at least 64 (raise --window-bits)", (unsigned long long)c->window_bits,
		       c->bits_per_packet, (unsigned long long)n);
		return -EINVAL;
	}
	if (c->window_bits / BT_BLOCK_BITS > 1ULL << (64 - BT_BLOCK_SHIFT)) {
		bt_err("--window-bits %llu: a window holds at most 2^%d blocks of %d bits",
		       (unsigned long long)c->window_bits, 64 - BT_BLOCK_SHIFT, BT_BLOCK_BITS);
		return -EINVAL;
	}
	/* the smallest k that meets the rate: the sparsest filter, the one
	 * that compresses best (docs/traceback.md) */
	for (k = 1; k <= BT_BLOCK_MAX_K; k++)
		if (bt_bloom_fpr(c->window_bits, n, k) <= c->fpr)
			break;
	if (k > BT_BLOCK_MAX_K) {
		bt_err("at %g bits per packet no k up to %d keeps the false-positive rate "
		       "within %g: raise --bits-per-packet or --fpr", c->bits_per_packet,
		       BT_BLOCK_MAX_K, c->fpr);
		return -EINVAL;
	}
	meta->windows = c->windows;
	meta->window_bits = c->window_bits;
	meta->design_load = n;
	meta->k = k;
	meta->fpr_target_ppb = (uint32_t)llround(c->fpr * 1e9);
	meta->window_ms = (uint32_t)llround(c->window_s * 1000);
	return 0;
}

uint32_t bt_spie_ahead(const struct bt_meta *m)
{
	uint32_t a = m->windows / 8;

	return a < 2 ? 2 : a > m->windows - 2 ? m->windows - 2 : a;
}

void bt_spie_describe(const struct bt_meta *m, char *buf, size_t len)
{
	snprintf(buf, len, "SPIE: %u windows of %.0f KiB (%.1f MiB), k = %u, each sized for "
		 "%llu packets at a false-positive rate of %g; %u kept ready ahead", m->windows,
		 m->window_bits / 8.0 / 1024, m->window_bits / 8.0 / 1048576 * m->windows,
		 m->k, (unsigned long long)m->design_load, m->fpr_target_ppb / 1e9,
		 bt_spie_ahead(m));
}

int bt_spie_map(const struct bt_instance *inst, struct bt_spie_maps *s)
{
	const struct bt_meta *m = &inst->meta;

	memset(s, 0, sizeof(*s));
	s->inst = inst;
	s->meta = m;
	s->bpw = m->window_bits / BT_BLOCK_BITS;
	s->ncpu = libbpf_num_possible_cpus();
	s->ctl = bt_mmap_array(inst->ctl_fd, sizeof(struct bt_ctl), &s->ctl_len);
	s->blocks = bt_mmap_array(inst->spie_fd, s->bpw * m->windows *
				  sizeof(struct bt_bloom_block), &s->blocks_len);
	s->win = bt_mmap_array(inst->windows_fd, (size_t)m->windows * sizeof(struct bt_window),
			       &s->win_len);
	if (!s->ctl || !s->blocks || !s->win || s->ncpu <= 0) {
		int err = errno ? -errno : -ENOMEM;

		bt_spie_unmap(s);
		return err;
	}
	return 0;
}

void bt_spie_unmap(struct bt_spie_maps *s)
{
	if (s->ctl)
		munmap(s->ctl, s->ctl_len);
	if (s->blocks)
		munmap(s->blocks, s->blocks_len);
	if (s->win)
		munmap(s->win, s->win_len);
	memset(s, 0, sizeof(*s));
}

/* The instance's clock_lo and clock_hi, read afresh (its keeper writes
 * them), and *now the offset this process converts with. */
static int clock_range(const struct bt_instance *inst, struct bt_meta *m, __s64 *now)
{
	__u32 key = 0;

	*now = bt_real_minus_boot();
	return inst->meta_fd < 0 || bpf_map_lookup_elem(inst->meta_fd, &key, m) ? -1 : 0;
}

void bt_clock_note(const struct bt_instance *inst, __s64 *lo, __s64 *hi)
{
	struct bt_meta m;
	__s64 now;
	__u32 key = 0;

	if ((*lo && *lo <= bt_real_minus_boot() && bt_real_minus_boot() <= *hi) ||
	    clock_range(inst, &m, &now))
		return;
	m.clock_lo = m.clock_lo && m.clock_lo < now ? m.clock_lo : now;
	m.clock_hi = m.clock_hi && m.clock_hi > now ? m.clock_hi : now;
	if (!bpf_map_update_elem(inst->meta_fd, &key, &m, BPF_EXIST)) {
		*lo = m.clock_lo;
		*hi = m.clock_hi;
	}
}

__u64 bt_clock_span(const struct bt_instance *inst)
{
	struct bt_meta m;
	__s64 now, lo, hi;

	if (clock_range(inst, &m, &now) || !m.clock_lo)
		return 0;
	lo = m.clock_lo < now ? m.clock_lo : now;
	hi = m.clock_hi > now ? m.clock_hi : now;
	return (__u64)(hi - lo);
}

const char *bt_window_state_name(__u32 state)
{
	static const char *const names[BT_WIN_STATES] = { "empty", "ready", "current", "closed",
							   "sealed" };

	return state < BT_WIN_STATES ? names[state] : "?";
}

uint32_t bt_spie_current(const struct bt_spie_maps *s)
{
	return __atomic_load_n(&s->ctl->window, __ATOMIC_ACQUIRE) % s->meta->windows;
}

/* The CPUs' counts of window i, of the programs from the first to the
 * last of BT_WCOUNT_SLOTS (XDP, drops, egress: slots i, i + W, i + 2W),
 * summed. */
static uint64_t counted_by(const struct bt_spie_maps *s, uint32_t i, int first, int last)
{
	__u64 *v = calloc(s->ncpu, sizeof(*v)), sum = 0;

	for (int p = first; v && p <= last; p++) {
		uint32_t slot = i + p * s->meta->windows;

		if (!bpf_map_lookup_elem(s->inst->wcount_fd, &slot, v))
			for (int c = 0; c < s->ncpu; c++)
				sum += v[c];
	}
	free(v);
	return sum;
}

/* The packets window i holds digests of: the drop program leaves two a
 * drop ("dropped" and its reason: bpf/spie.bpf.h spie_insert_dropped),
 * XDP and egress one a packet. */
static uint64_t counted(const struct bt_spie_maps *s, uint32_t i)
{
	return counted_by(s, i, 0, 0) + counted_by(s, i, 1, 1) / 2 +
	       counted_by(s, i, 2, BT_WCOUNT_SLOTS - 1);
}

bool bt_window_sent(const struct bt_spie_maps *s, uint32_t i)
{
	__u32 st = __atomic_load_n(&s->win[i].state, __ATOMIC_ACQUIRE);

	if (st == BT_WIN_SEALED)
		return s->win[i].flags & BT_WIN_SENT;
	return (st == BT_WIN_CURRENT || st == BT_WIN_CLOSED) &&
	       counted_by(s, i, BT_WCOUNT_SLOTS - 1, BT_WCOUNT_SLOTS - 1);
}

uint64_t bt_window_packets(const struct bt_spie_maps *s, uint32_t i)
{
	__u32 st = __atomic_load_n(&s->win[i].state, __ATOMIC_ACQUIRE);

	if (st == BT_WIN_SEALED)
		return s->win[i].packets;
	return st == BT_WIN_CURRENT || st == BT_WIN_CLOSED ? counted(s, i) : 0;
}

double bt_window_fpr(const struct bt_spie_maps *s, uint32_t i)
{
	__u64 set;
	double fpr;

	if (s->win[i].state == BT_WIN_SEALED)
		return s->win[i].fpr_e15 / 1e15;
	bt_bloom_fill(bt_window_filter(s, i), s->bpw, s->meta->k, &set, &fpr);
	return fpr;
}

/* Clears window i and makes it READY, numbered after the one before it.
 * Nobody writes it: the datapath writes the current window, and a window
 * becomes current only from READY. */
static void ready_window(struct bt_spie_maps *s, uint32_t i, uint32_t seq)
{
	struct bt_window *w = &s->win[i];
	__u64 *zero = calloc(s->ncpu, sizeof(*zero));

	/* EMPTY first: a query that reads it meanwhile sees it is gone */
	__atomic_store_n(&w->state, BT_WIN_EMPTY, __ATOMIC_RELEASE);
	memset(bt_window_filter(s, i), 0, s->bpw * sizeof(struct bt_bloom_block));
	bt_test_kill_point("ready");
	for (uint32_t slot = i; zero && slot < BT_WCOUNT_SLOTS * s->meta->windows; slot += s->meta->windows)
		bpf_map_update_elem(s->inst->wcount_fd, &slot, zero, 0);
	free(zero);
	zero = calloc(s->ncpu, sizeof(struct bt_window_drops));
	if (zero)
		bpf_map_update_elem(s->inst->wdrops_fd, &i, zero, 0);
	free(zero);
	w->start_ns = w->end_ns = w->fill = w->packets = w->set_bits = w->fpr_e15 = 0;
	w->capture_ms = 0;
	w->flags = 0;
	w->seq = seq;
	__atomic_store_n(&w->state, BT_WIN_READY, __ATOMIC_RELEASE);
}

void bt_spie_start(struct bt_spie_maps *s)
{
	uint64_t dropped = 0;

	ready_window(s, 0, 0);
	s->win[0].start_ns = bt_boot_ns();
	__atomic_store_n(&s->win[0].state, BT_WIN_CURRENT, __ATOMIC_RELEASE);
	__atomic_store_n(&s->ctl->ring, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->ctl->window, 0, __ATOMIC_RELEASE);
	bt_spie_ready_ahead(s, false, &dropped);
}

void bt_spie_reset(struct bt_spie_maps *s)
{
	for (uint32_t i = 0; i < s->meta->windows; i++)
		__atomic_store_n(&s->win[i].state, BT_WIN_EMPTY, __ATOMIC_RELEASE);
	bt_spie_start(s);
}

/* The steps after a claim of rotation pos - 1 -> pos, as
 * spie_finish_rotation() in bpf/spie.bpf.h takes them. Each is a
 * compare-and-swap or the store of the one value pos allows, so a keeper
 * finishing a killed keeper's claim takes them again safely. */
static void finish_rotation(struct bt_spie_maps *s, uint64_t pos)
{
	uint32_t W = s->meta->windows, cur = (pos - 1) % W, next = pos % W;
	__u32 ready = BT_WIN_READY, current = BT_WIN_CURRENT;

	if (__atomic_compare_exchange_n(&s->win[next].state, &ready, BT_WIN_CURRENT, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__u64 now = bt_boot_ns();

		s->win[next].start_ns = now;
		s->win[cur].end_ns = now;
	}
	bt_test_kill_point("close");
	__atomic_store_n(&s->ctl->window, next, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&s->win[cur].state, &current, BT_WIN_CLOSED, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int bt_spie_close_current(struct bt_spie_maps *s)
{
	__u64 ring = __atomic_load_n(&s->ctl->ring, __ATOMIC_ACQUIRE);
	uint32_t W = s->meta->windows, cur = ring % W, next = (cur + 1) % W;

	/* the claim as spie_fill_window() makes it, marked as a keeper's */
	if ((ring & BT_RING_KEEPER) || __atomic_load_n(&s->ctl->window, __ATOMIC_ACQUIRE) != cur ||
	    __atomic_load_n(&s->win[next].state, __ATOMIC_ACQUIRE) != BT_WIN_READY ||
	    !__atomic_compare_exchange_n(&s->ctl->ring, &ring, (ring + 1) | BT_RING_KEEPER, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	finish_rotation(s, ring + 1);
	__atomic_store_n(&s->ctl->ring, ring + 1, __ATOMIC_RELEASE);
	return 0;
}

bool bt_spie_repair(struct bt_spie_maps *s)
{
	__u64 ring = __atomic_load_n(&s->ctl->ring, __ATOMIC_ACQUIRE);

	/* Only a keeper's claim can be left half done: a BPF program runs to
	 * its end, however late, and finishes its own rotation. Whoever
	 * calls this holds the instance's lock, so a marked claim is a
	 * killed keeper's. */
	if (!(ring & BT_RING_KEEPER))
		return false;
	finish_rotation(s, ring & ~BT_RING_KEEPER);
	__atomic_store_n(&s->ctl->ring, ring & ~BT_RING_KEEPER, __ATOMIC_RELEASE);
	return true;
}

int bt_spie_closed(const struct bt_spie_maps *s, uint32_t *idx, int max)
{
	int n = 0;

	for (uint32_t i = 0; i < s->meta->windows && n < max; i++)
		if (__atomic_load_n(&s->win[i].state, __ATOMIC_ACQUIRE) == BT_WIN_CLOSED)
			idx[n++] = i;
	return n;
}

__u64 bt_window_end_ns(const struct bt_window *w)
{
	__u64 last;

	if (!(w->flags & BT_WIN_CAPTURE_TIME) || !w->capture_ms)
		return w->end_ns;
	/* a capture older than the boot has times below 0, wrapped: compared
	 * as distances from the start */
	last = w->start_ns + (__u64)w->capture_ms * 1000000;
	return w->end_ns && (__s64)(w->end_ns - w->start_ns) < (__s64)(last - w->start_ns) ?
	       w->end_ns : last;
}

void bt_spie_seal(struct bt_spie_maps *s, const uint32_t *idx, int n)
{
	for (int j = 0; j < n; j++) {
		struct bt_window *w = &s->win[idx[j]];
		__u64 set;
		double fpr;

		w->end_ns = bt_window_end_ns(w);
		w->packets = counted(s, idx[j]);
		if (counted_by(s, idx[j], BT_WCOUNT_SLOTS - 1, BT_WCOUNT_SLOTS - 1))
			__atomic_fetch_or(&w->flags, BT_WIN_SENT, __ATOMIC_RELAXED);
		bt_bloom_fill(bt_window_filter(s, idx[j]), s->bpw, s->meta->k, &set, &fpr);
		w->set_bits = set;
		w->fpr_e15 = (__u64)llround(fpr * 1e15);
		bt_test_kill_point("seal");
		__atomic_store_n(&w->state, BT_WIN_SEALED, __ATOMIC_RELEASE);
	}
}

int bt_spie_ready_ahead(struct bt_spie_maps *s, bool need_archived, uint64_t *dropped)
{
	uint32_t W = s->meta->windows, cur = bt_spie_current(s), ahead = bt_spie_ahead(s->meta);
	int readied = 0;

	for (uint32_t j = 1; j <= ahead; j++) {
		uint32_t i = (cur + j) % W, prev = (i + W - 1) % W;
		struct bt_window *w = &s->win[i];
		__u32 st = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);

		if (st == BT_WIN_READY)
			continue;
		if (st == BT_WIN_SEALED && need_archived && !(w->flags & BT_WIN_ARCHIVED)) {
			if (j > 1)
				break;	/* archive it first; the datapath has room */
			(*dropped)++;	/* no room at all: the ring must go on */
		} else if (st != BT_WIN_SEALED && st != BT_WIN_EMPTY) {
			break;		/* closed, not sealed yet */
		}
		ready_window(s, i, s->win[prev].seq + 1);
		readied++;
	}
	return readied;
}

bool bt_spie_due(const struct bt_spie_maps *s, double max_age_s)
{
	const struct bt_window *w = &s->win[bt_spie_current(s)];

	/* a window of capture times closes at its load, as the capture's
	 * packets fill it */
	return max_age_s > 0 && w->start_ns && !(w->flags & BT_WIN_CAPTURE_TIME) &&
	       bt_boot_ns() - w->start_ns >= (__u64)(max_age_s * 1e9);
}
