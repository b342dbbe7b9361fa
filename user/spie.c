// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "common.h"
#include "util.h"
#include "hash.h"
#include "instance.h"
#include "spie.h"

double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k)
{
	double blocks = (double)m_bits / BT_BLOCK_BITS, lam = n / blocks, sum = 0;
	double p = exp(-lam), q = 1.0 - 1.0 / BT_BLOCK_BITS;
	int top = (int)(lam + 12 * sqrt(lam) + 40);

	/* P(i elements in the query's block) * P(k bits all set | i) */
	for (int i = 0; i <= top; i++) {
		if (i)
			p *= lam / i;
		sum += p * pow(1 - pow(q, (double)k * i), k);
	}
	return sum;
}

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
	if (c->window_bits & (c->window_bits - 1) || c->window_bits < BT_BLOCK_BITS) {
		bt_err("--window-bits %llu is not a power of two of at least 512",
		       (unsigned long long)c->window_bits);
		return -EINVAL;
	}
	if (c->window_bits / BT_BLOCK_BITS * c->windows > UINT32_MAX) {
		bt_err("%u windows of %llu bits are more blocks than a BPF array holds",
		       c->windows, (unsigned long long)c->window_bits);
		return -EINVAL;
	}
	n = (uint64_t)(c->window_bits / c->bits_per_packet);
	for (k = 1; k <= BT_MAX_K; k++)
		if (bt_bloom_fpr(c->window_bits, n, k) <= c->fpr)
			break;
	if (k > BT_MAX_K) {
		bt_err("at %g bits per packet no k up to %d keeps the false-positive rate "
		       "within %g: raise --bits-per-packet or --fpr", c->bits_per_packet,
		       BT_MAX_K, c->fpr);
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

void bt_spie_describe(const struct bt_meta *m, char *buf, size_t len)
{
	snprintf(buf, len, "SPIE: %u windows of %.1f MiB (%.0f MiB), k = %u, each sized for "
		 "%llu packets at a false-positive rate of %g", m->windows,
		 m->window_bits / 8.0 / 1048576, m->window_bits / 8.0 / 1048576 * m->windows,
		 m->k, (unsigned long long)m->design_load, m->fpr_target_ppb / 1e9);
}

int bt_spie_map(const struct bt_instance *inst, struct bt_spie_maps *s)
{
	const struct bt_meta *m = &inst->meta;

	memset(s, 0, sizeof(*s));
	s->inst = inst;
	s->meta = m;
	s->bpw = m->window_bits / BT_BLOCK_BITS;
	s->ctl = bt_mmap_array(inst->ctl_fd, sizeof(struct bt_ctl), &s->ctl_len);
	s->blocks = bt_mmap_array(inst->spie_fd, s->bpw * m->windows *
				  sizeof(struct bt_bloom_block), &s->blocks_len);
	s->win = bt_mmap_array(inst->windows_fd, (size_t)m->windows * sizeof(struct bt_window),
			       &s->win_len);
	if (!s->ctl || !s->blocks || !s->win) {
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

bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h)
{
	const struct bt_bloom_block *b = &filter[h & (bpw - 1)];
	__u64 x = h;

	/* the same positions as spie_insert() in bpf/spie.bpf.h */
	for (uint32_t i = 0; i < k; i++) {
		uint32_t pos;

		x = bt_bloom_step(x);
		pos = bt_bloom_pos(x);
		if (!(b->w[pos >> 6] & (1ULL << (pos & 63))))
			return false;
	}
	return true;
}

void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr)
{
	uint64_t total = 0;
	double sum = 0;

	for (uint64_t i = 0; i < bpw; i++) {
		unsigned bits = 0;

		for (int j = 0; j < 8; j++)
			bits += __builtin_popcountll(filter[i].w[j]);
		total += bits;
		if (bits)
			sum += pow(bits / (double)BT_BLOCK_BITS, k);
	}
	*set_bits = total;
	*fpr = sum / bpw;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (__u64)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

uint64_t bt_window_packets(const struct bt_spie_maps *s, uint32_t i)
{
	const struct bt_window *w = &s->win[i];
	__u64 c[BT_CTR_MAX];

	if (w->state == BT_WIN_SEALED)
		return w->end_inserted - w->base_inserted;
	if (w->state != BT_WIN_CURRENT || bt_instance_counters(s->inst, c))
		return 0;
	return c[BT_CTR_SPIE_INSERTED] - w->base_inserted;
}

static void open_window(struct bt_spie_maps *s, uint32_t i, uint32_t seq)
{
	struct bt_window *w = &s->win[i];
	__u64 c[BT_CTR_MAX];

	if (bt_instance_counters(s->inst, c))
		memset(c, 0, sizeof(c));
	/* Nobody writes this window: the datapath writes the current one. */
	memset(&s->blocks[(uint64_t)i * s->bpw], 0, s->bpw * sizeof(struct bt_bloom_block));
	memset(w, 0, sizeof(*w));
	w->start_ns = now_ns();
	w->base_inserted = c[BT_CTR_SPIE_INSERTED];
	w->base_present = c[BT_CTR_SPIE_PRESENT];
	w->seq = seq;
	w->state = BT_WIN_CURRENT;
}

void bt_spie_start(struct bt_spie_maps *s)
{
	open_window(s, 0, 0);
	__atomic_store_n(&s->ctl->window, 0, __ATOMIC_RELEASE);
}

uint32_t bt_spie_rotate(struct bt_spie_maps *s)
{
	uint32_t cur = s->ctl->window % s->meta->windows, next = (cur + 1) % s->meta->windows;
	struct bt_window *w = &s->win[cur];
	__u64 c[BT_CTR_MAX];
	double fpr;

	open_window(s, next, w->seq + 1);
	if (bt_instance_counters(s->inst, c))
		memset(c, 0, sizeof(c));
	__atomic_store_n(&s->ctl->window, next, __ATOMIC_RELEASE);
	/* what was in flight on other CPUs lands in cur before it is counted */
	usleep(1000);
	w->end_ns = now_ns();
	w->end_inserted = c[BT_CTR_SPIE_INSERTED];
	w->end_present = c[BT_CTR_SPIE_PRESENT];
	bt_bloom_fill(&s->blocks[(uint64_t)cur * s->bpw], s->bpw, s->meta->k, &w->set_bits, &fpr);
	__atomic_store_n(&w->state, BT_WIN_SEALED, __ATOMIC_RELEASE);
	return cur;
}

bool bt_spie_full(const struct bt_spie_maps *s)
{
	uint32_t cur = s->ctl->window % s->meta->windows;

	return bt_bloom_fpr(s->meta->window_bits, bt_window_packets(s, cur), s->meta->k) >
	       s->meta->fpr_target_ppb / 1e9;
}
