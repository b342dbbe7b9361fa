/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE windows in user space: sizing, the ring through mmap, rotation and
 * sealing, membership queries, false-positive rates. */
#ifndef BLOOMTAP_SPIE_H
#define BLOOMTAP_SPIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "options.h"

struct bt_instance;

struct bt_spie_cfg {
	uint32_t windows;
	uint64_t window_bits;
	double bits_per_packet;
	double fpr;
	double window_s;
};

#define BT_DEFAULT_WINDOWS 8
#define BT_DEFAULT_WINDOW_BITS (1ULL << 26)	/* 8 MiB a window */
#define BT_DEFAULT_BITS_PER_PACKET 32.0
#define BT_DEFAULT_FPR 1e-4
#define BT_DEFAULT_WINDOW_S 1.0

#define BT_SPIE_OPTS(c)								\
	{ "windows", 0, BT_OPT_U32, &(c).windows, "W",				\
	  "SPIE windows in the ring (default 8)", .min = 2, .max = 4096 },	\
	{ "window-bits", 0, BT_OPT_U64, &(c).window_bits, "M",			\
	  "bits of one window's filter, a power of two (default 64M)",		\
	  .min = 1 << 12, .max = 1ULL << 36 },					\
	{ "bits-per-packet", 0, BT_OPT_DOUBLE, &(c).bits_per_packet, "C",	\
	  "filter bits per packet at the design load (default 32)",		\
	  .dmin = 4, .dmax = 1024 },						\
	{ "fpr", 0, BT_OPT_DOUBLE, &(c).fpr, "P",				\
	  "false-positive rate a window may reach (default 1e-4)",		\
	  .dmin = 1e-9, .dmax = 0.5 },						\
	{ "window", 0, BT_OPT_DOUBLE, &(c).window_s, "SECONDS",		\
	  "window length, when something rotates them (default 1)",		\
	  .dmin = 0.01, .dmax = 86400 }

/* Completes cfg and fills the SPIE fields of meta: k is the smallest
 * number of bits per packet whose false-positive rate at the design load
 * (window_bits / bits_per_packet packets) stays within the target: fewer
 * bits mean fewer atomic ORs and a sparser filter that compresses better. */
int bt_spie_resolve(struct bt_spie_cfg *cfg, struct bt_meta *meta);
/* "SPIE: 8 windows of 8.0 MiB ..." for people. */
void bt_spie_describe(const struct bt_meta *meta, char *buf, size_t len);
/* Expected false-positive rate of a blocked Bloom filter of m bits with n
 * elements and k bits each (Putze et al.: Poisson-weighted over blocks). */
double bt_bloom_fpr(uint64_t m_bits, uint64_t n, uint32_t k);

struct bt_spie_maps {
	const struct bt_instance *inst;
	const struct bt_meta *meta;
	struct bt_ctl *ctl;
	struct bt_bloom_block *blocks;	/* W * blocks_per_window */
	struct bt_window *win;		/* W */
	size_t ctl_len, blocks_len, win_len;
	uint64_t bpw;			/* blocks per window */
};
int bt_spie_map(const struct bt_instance *inst, struct bt_spie_maps *s);
void bt_spie_unmap(struct bt_spie_maps *s);

/* Is digest h in this filter of bpw blocks? */
bool bt_bloom_has(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k, __u64 h);
/* Set bits, and the false-positive rate a random query meets, from the
 * filter's actual fill: the mean over blocks of (fill of the block)^k. */
void bt_bloom_fill(const struct bt_bloom_block *filter, uint64_t bpw, uint32_t k,
		   __u64 *set_bits, double *fpr);
/* Packets recorded in window i so far (or in all of it, when sealed). */
uint64_t bt_window_packets(const struct bt_spie_maps *s, uint32_t i);

/* The first window, at instance creation. */
void bt_spie_start(struct bt_spie_maps *s);
/* Seals the current window and starts the next (clearing it: the oldest
 * window of the ring is dropped). Returns the sealed window's index. */
uint32_t bt_spie_rotate(struct bt_spie_maps *s);
/* Whether the current window's expected false-positive rate passed the
 * target, so that it should be sealed early. */
bool bt_spie_full(const struct bt_spie_maps *s);

#endif /* BLOOMTAP_SPIE_H */
