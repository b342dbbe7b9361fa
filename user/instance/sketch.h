/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Heavy flows in user space: sizing the sketch, reading it and the flow
 * memory through mmap, merging CPUs, flipping intervals. */
#ifndef BLOOMTAP_SKETCH_H
#define BLOOMTAP_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "hash.h"
#include "base/options.h"

struct bt_instance;

/* Creation-time settings (attach, replay, run). */
struct bt_sketch_cfg {
	int key_mode;		/* enum bt_key_mode */
	uint32_t depth, width;	/* 0: from epsilon/delta or the defaults */
	double epsilon, delta;	/* 0: unset */
	uint32_t fm_slots;
	double fraction;	/* threshold: one of the three, 0 = unset */
	uint64_t bytes, packets;
};

#define BT_DEFAULT_DEPTH 4
#define BT_DEFAULT_WIDTH 65536	/* 2 MiB a CPU and interval at d = 4 */
#define BT_DEFAULT_FM_SLOTS 16384
/* 256 MiB a table; a flow's first slot is 24 bits of its hash */
#define BT_MAX_FM_SLOTS (1u << 22)
/* The sketch of one CPU and interval is one BPF array value, which the
 * verifier lets a program address up to 512 MiB into (BPF_MAX_VAR_OFF). */
#define BT_MAX_CELLS (1u << 25)
#define BT_DEFAULT_FRACTION 0.001

extern const char *const bt_key_mode_names[];

/* Option table entries for struct bt_sketch_cfg, spliced into a command's. */
#define BT_SKETCH_OPTS(c)							\
	{ "key", 0, BT_OPT_ENUM, &(c).key_mode, "MODE",				\
	  "heavy flows by 5-tuple, source, destination or address pair",	\
	  .choices = bt_key_mode_names },					\
	{ "depth", 0, BT_OPT_U32, &(c).depth, "D",				\
	  "a flow's counters, in one cache line: 1 to 8 (default 4)",		\
	  .min = 1, .max = BT_MAX_DEPTH },					\
	{ "width", 0, BT_OPT_U32, &(c).width, "W",				\
	  "cells a counter may take, at least: D W cells, rounded up to a "	\
	  "power of two of 10-cell lines (default 65536)",			\
	  .min = 64, .max = 1 << 24 },						\
	{ "epsilon", 0, BT_OPT_DOUBLE, &(c).epsilon, "E",			\
	  "error as a share of the interval's bytes: w = 1/(E P)",		\
	  .dmin = 1e-7, .dmax = 0.1 },						\
	{ "delta", 0, BT_OPT_DOUBLE, &(c).delta, "P",				\
	  "probability the error bound fails (default 1/e)", .dmin = 1e-4,	\
	  .dmax = 0.5 },							\
	{ "flow-memory", 0, BT_OPT_U32, &(c).fm_slots, "N",			\
	  "flow memory slots per interval, a power of two (default 16384, "	\
	  "or 4/F with --fraction F)", .min = 256, .max = BT_MAX_FM_SLOTS },	\
	{ "fraction", 0, BT_OPT_DOUBLE, &(c).fraction, "F",			\
	  "heavy: at least F of the interval's bytes (default 0.001)",		\
	  .dmin = 1e-6, .dmax = 1 },						\
	{ "bytes", 0, BT_OPT_U64, &(c).bytes, "N",				\
	  "heavy: at least N bytes in the interval", .min = 1,			\
	  .max = UINT64_MAX / 2 },						\
	{ "packets", 0, BT_OPT_U64, &(c).packets, "N",				\
	  "heavy: at least N packets in the interval", .min = 1,		\
	  .max = UINT64_MAX / 2 }

/* Checks and completes cfg (defaults, epsilon/delta to w); fills the
 * sketch fields of meta. Prints the problem and returns -EINVAL. */
int bt_sketch_resolve(struct bt_sketch_cfg *cfg, struct bt_meta *meta);
/* The same checks, cfg left as it is and without warnings: what refuses
 * the settings before anything they would replace is removed. */
int bt_sketch_check(const struct bt_sketch_cfg *cfg);
/* "sketch 4 x 65536 ..., error <= ..." for people, whole in a buffer of
 * BT_DESCRIBE_MAX (at most 20-digit numbers and the longest key name:
 * about 330 characters; bt_spie_describe's sentence fits as well). */
#define BT_DESCRIBE_MAX 512
void bt_sketch_describe(const struct bt_meta *meta, char *buf, size_t len);
size_t bt_sketch_bytes(const struct bt_meta *meta);
/* The blocked sketch's lines a CPU and interval (include/bloomtap.h), and
 * the sets of d cells a flow's counters may take in its line, in the
 * datapath's order (include/hash.h, bt_cm_pattern()): returns C(10, d). */
__u32 bt_cm_lines(const struct bt_meta *meta);
/* Lines of one CPU's and interval's array value: a spare one after the
 * last, so that a 4-bit cell index stays inside it (include/hash.h) */
__u32 bt_cm_value_lines(const struct bt_meta *meta);
/* The cells each counter may take: 10 * lines / d, at least --width */
double bt_cm_row_width(const struct bt_meta *meta);
__u32 bt_cm_patterns(__u32 depth, __u32 pat[BT_CM_MAX_PATTERNS]);
/* The bound: a flow's estimate exceeds its truth by more than
 * bt_cm_error() of the interval's bytes with probability at most
 * bt_cm_fail(). The d counters of a line are not independent (the flows
 * of one line share them all), so this is one counter's: Markov's
 * inequality on a row of w cells, N / w expected, e N / w with
 * probability 1 - 1/e. */
double bt_cm_error(const struct bt_meta *meta);
/* The width that bounds the error by epsilon with probability 1 - delta
 * (either may be 0: unset). */
__u32 bt_cm_width_for(double epsilon, double delta);
double bt_cm_width_needed(double epsilon, double delta);	/* before rounding */
double bt_cm_fail(const struct bt_meta *meta);
/* How many heavy-flow stages of bt_sketch_bytes() the instance holds:
 * received and dropped, and sent when it was made to record egress. */
int bt_heavy_stages(const struct bt_meta *meta);

/* The heavy-flow maps' shape, from the meta: one value per CPU and interval
 * (per interval for the flow memory, per CPU for the flow cache). Maps are
 * made, adopted and mapped by it. */
struct bt_map_shape {
	__u32 entries, value;	/* value: bytes */
};
struct bt_heavy_shape {
	struct bt_map_shape cms, fm, fmc, fc, fmo;
};
void bt_heavy_shape(const struct bt_meta *meta, struct bt_heavy_shape *s);

/* The instance's arrays, mapped. */
struct bt_heavy_maps {
	const struct bt_instance *inst;
	const struct bt_meta *meta;
	int counters_fd;		/* the interval volumes (struct bt_counters) */
	__u32 counters_key;		/* ... at this key (enum bt_direction) */
	bool dropped;			/* the drop stage's: keys carry a reason */
	struct bt_heavy_maps *drops;	/* the drop stage's maps (bt_heavy_map
					 * maps them all), flipped with these */
	struct bt_heavy_maps *egress;	/* the sent flows' (tc egress), NULL in
					 * an instance not made to record them */
	struct bt_ctl *ctl;
	struct bt_cm_line *cms;
	struct bt_fm_slot *fm;
	struct bt_cm_cell *fmc;
	__u64 *fmo;
	size_t ctl_len, cms_len, fm_len, fmc_len, fmo_len;
	struct bt_hash_keys keys;	/* derived from the instance's key */
	__u32 cm_pat[BT_CM_MAX_PATTERNS], cm_npat;	/* bt_cm_patterns() */
};
int bt_heavy_map(const struct bt_instance *inst, struct bt_heavy_maps *m);
/* Adds the sketch's estimate of a flow (masked to the key mode), summed
 * over CPUs, to *bytes and *packets: an upper bound of what the sketch
 * counted of it, whether or not it was nominated. */
void bt_heavy_sketch_estimate(const struct bt_heavy_maps *m, __u32 iv,
			      const struct bt_flow_key *key, __u64 *bytes, __u64 *packets);
void bt_heavy_unmap(struct bt_heavy_maps *m);

/* A reported flow. */
struct bt_heavy_flow {
	struct bt_flow_key key;
	__u64 bytes, packets;		/* estimate: sketch before nomination + exact */
	__u64 exact_bytes, exact_packets;	/* counted exactly since nomination */
	__u32 wl[2];			/* the source's and destination's workload
					 * ids when the packets passed (a received
					 * flow's key pad, cleared in key) */
};

struct bt_heavy_report {
	__u32 interval;			/* 0 or 1 */
	bool current;
	__u64 start_ns;
	__u64 end_ns;			/* the next interval's start; 0: current */
	__u64 total_bytes, total_packets;
	__u64 threshold_bytes, threshold_packets;	/* what was reported */
	__u64 error_bytes, error_packets;	/* eps * N, with prob 1 - delta */
	double error_probability;		/* at most: a flow over by more */
	size_t nominated;		/* flows in the flow memory */
	__u64 lost_nominations;		/* to a full flow memory: flows may be missing */
	struct bt_heavy_flow *flows;	/* at or above the threshold, sorted */
	size_t n;
};

/* Threshold override for reporting; kind BT_THR_* and value as in meta. */
struct bt_threshold {
	int kind;
	__u64 value;			/* bytes, packets, or fraction * 1e9 */
};

int bt_heavy_collect(const struct bt_heavy_maps *m, __u32 iv, const struct bt_threshold *thr,
		     bool by_packets, struct bt_heavy_report *r);
void bt_heavy_report_free(struct bt_heavy_report *r);

/* Sets the nomination thresholds of byte and packet thresholds T: T/ncpu
 * on each CPU. Fraction thresholds need none: the datapath nominates by
 * its own rule (bpf/heavy.bpf.h), from its own counts. */
void bt_heavy_set_nomination(struct bt_heavy_maps *m);
/* The datapath's divisor for a fraction threshold f: ceil(m / f), so that
 * est * div >= N_c never nominates later than est >= (f / m) * N_c would;
 * 0 for byte and packet thresholds. The margin m = 2 nominates a flow once
 * its share of the CPU's bytes so far reaches f/2: a flow whose share ends
 * near f is then counted exactly from early on, where at f it would be
 * nominated late and reported with more of the sketch's overestimate (one
 * light flow in two runs of the Zipf test crossed the threshold so). A
 * flood nominates at most m/f one-packet flows a CPU. */
#define BT_NOMINATE_MARGIN 2
__u64 bt_heavy_frac_div(const struct bt_meta *meta);
/* Ends the current interval: clears the other one and makes it current. */
void bt_heavy_flip(struct bt_heavy_maps *m);
__u64 bt_heavy_interval_bytes(const struct bt_heavy_maps *m, __u32 iv);

#endif /* BLOOMTAP_SKETCH_H */
