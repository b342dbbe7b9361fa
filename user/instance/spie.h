/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE windows in user space: sizing, the ring through mmap, the ring's
 * housekeeping (seal behind the datapath, ready ahead of it, rotate on
 * time), a window's packets and false-positive rate. The filter's math is
 * core/bloom.h's, the clocks' conversion core/clock.h's. */
#ifndef BLOOMTAP_SPIE_H
#define BLOOMTAP_SPIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "base/options.h"
#include "core/bloom.h"
#include "core/clock.h"

struct bt_instance;

struct bt_spie_cfg {
	uint32_t windows;
	uint64_t window_bits;
	double bits_per_packet;
	double fpr;
	double window_s;
};

/* 256 windows of 256 KiB: the window being written stays within L2 and
 * TLB reach (docs/benchmark.md has the knee), the ring keeps 64 MiB, 4.47
 * million packets (4.5 s at 1 Mpps). 120 bits a packet at k = 4 answers
 * falsely at 3.1e-6 a window and compresses to 25.5 bits a packet
 * (docs/traceback.md has the trade-offs). */
#define BT_DEFAULT_WINDOWS 256
#define BT_DEFAULT_WINDOW_BITS (1ULL << 21)
#define BT_DEFAULT_BITS_PER_PACKET 120.0
#define BT_DEFAULT_FPR 5e-6
#define BT_DEFAULT_WINDOW_S 1.0

#define BT_SPIE_OPTS(c)								\
	{ "windows", 0, BT_OPT_U32, &(c).windows, "W",				\
	  "SPIE windows in the ring (default 256)", .min = 4, .max = 65536 },	\
	{ "window-bits", 0, BT_OPT_U64, &(c).window_bits, "M",			\
	  "bits of one window's filter, a power of two (default 2M: 256 KiB)",	\
	  .min = 1 << 12, .max = 1ULL << 36 },					\
	{ "bits-per-packet", 0, BT_OPT_DOUBLE, &(c).bits_per_packet, "C",	\
	  "filter bits per packet at the design load (default 120)",		\
	  .dmin = 4, .dmax = 1024 },						\
	{ "fpr", 0, BT_OPT_DOUBLE, &(c).fpr, "P",				\
	  "false-positive rate a window may reach at its load (default 5e-6)",	\
	  .dmin = 1e-9, .dmax = 0.5 },						\
	{ "window", 0, BT_OPT_DOUBLE, &(c).window_s, "SECONDS",		\
	  "close a window after this long even if not full (default 1)",	\
	  .dmin = 0.01, .dmax = 86400 }

/* Completes cfg and fills the SPIE fields of meta: k is the smallest
 * number of bits (<= BT_BLOCK_MAX_K) whose false-positive rate at the design load
 * (window_bits / bits_per_packet packets) stays within the target. */
int bt_spie_resolve(struct bt_spie_cfg *cfg, struct bt_meta *meta);
/* "SPIE: 256 windows of 256 KiB ..." for people. */
void bt_spie_describe(const struct bt_meta *meta, char *buf, size_t len);

/* Windows kept READY ahead of the datapath: what it may fill while user
 * space is away. At 256 windows of 17,476 packets, 32 of them are
 * 0.56 million packets: 0.56 s at 1 Mpps. */
uint32_t bt_spie_ahead(const struct bt_meta *meta);

struct bt_spie_maps {
	const struct bt_instance *inst;
	const struct bt_meta *meta;
	struct bt_ctl *ctl;
	struct bt_bloom_block *blocks;	/* W * blocks_per_window */
	struct bt_window *win;		/* W */
	size_t ctl_len, blocks_len, win_len;
	uint64_t bpw;			/* blocks per window */
	int ncpu;
};
int bt_spie_map(const struct bt_instance *inst, struct bt_spie_maps *s);
void bt_spie_unmap(struct bt_spie_maps *s);

/* Window i's filter. */
static inline struct bt_bloom_block *bt_window_filter(const struct bt_spie_maps *s, uint32_t i)
{
	return &s->blocks[(uint64_t)i * s->bpw];
}
/* Digests recorded in window i: exact once sealed, summed over the CPUs'
 * counts before. */
uint64_t bt_window_packets(const struct bt_spie_maps *s, uint32_t i);
/* Whether window i holds sent packets' digests (tc egress): its flag once
 * sealed, egress's counts before. */
bool bt_window_sent(const struct bt_spie_maps *s, uint32_t i);
/* Its false-positive rate: stored when sealed, from the fill before. */
double bt_window_fpr(const struct bt_spie_maps *s, uint32_t i);
uint32_t bt_spie_current(const struct bt_spie_maps *s);
const char *bt_window_state_name(__u32 state);

/* A keeper's turn: the instance's clock_lo/clock_hi (include/bloomtap.h)
 * widened to this process's offset when it moved out of *lo..*hi (its
 * copy, 0 at first). */
void bt_clock_note(const struct bt_instance *inst, __s64 *lo, __s64 *hi);
/* How far a clock step can have moved the instance's window times:
 * clock_hi - clock_lo with this process's offset in; 0 when unknown. */
__u64 bt_clock_span(const struct bt_instance *inst);

/* The first window, at instance creation: window 0 current, the next
 * ones ready. */
void bt_spie_start(struct bt_spie_maps *s);
/* Forgets every window and starts again from window 0 (replay --reset's
 * fresh instance does not need it; make bench does between runs). */
void bt_spie_reset(struct bt_spie_maps *s);
/* Closes the current window now, as the datapath does when it is full:
 * the next becomes current. -EAGAIN when the next is not READY or a
 * rotation is under way. The caller holds the instance's lock. */
int bt_spie_close_current(struct bt_spie_maps *s);
/* Finishes a rotation that a killed keeper claimed (BT_RING_KEEPER) and
 * left half done; a CPU's is never touched. True when there was one. The
 * caller holds the instance's lock. */
bool bt_spie_repair(struct bt_spie_maps *s);
/* The CLOSED windows (at most max into idx[]); how many. */
int bt_spie_closed(const struct bt_spie_maps *s, uint32_t *idx, int max);
/* Seals windows that were CLOSED before a grace period: counts their
 * digests, bits and false-positive rate. */
void bt_spie_seal(struct bt_spie_maps *s, const uint32_t *idx, int n);
/* Window w's end (CLOCK_BOOTTIME, 0: open): a replay --capture-time
 * window's ends at its last packet's time, whoever closed it and when. */
__u64 bt_window_end_ns(const struct bt_window *w);
/* Clears windows ahead of the current one, up to bt_spie_ahead(), taking
 * the oldest sealed ones. With need_archived, a sealed window that is not
 * archived yet stops it, unless no window is READY at all (then it is
 * cleared and counted in *dropped: a full disk must not stop the ring).
 * Returns the number of windows readied. */
int bt_spie_ready_ahead(struct bt_spie_maps *s, bool need_archived, uint64_t *dropped);
/* The three above, in the order a keeper of the ring runs them, with
 * the close on time when the current window is older than max_age_s (0:
 * never). The caller archives between sealing and readying. */
bool bt_spie_due(const struct bt_spie_maps *s, double max_age_s);

#endif /* BLOOMTAP_SPIE_H */
