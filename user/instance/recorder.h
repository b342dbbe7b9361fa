/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The drop recorder in user space (include/bloomtap.h "The drop
 * recorder"): the ring's records of every CPU merged by time, each slot
 * read as a seqlock, its counts, pcapng output and the follower's flag. */
#ifndef BLOOMTAP_RECORDER_H
#define BLOOMTAP_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

struct bt_instance;
struct bt_pcapng;

struct bt_rec_set {
	size_t rec_size;	/* BT_DROP_REC_SIZE(meta drop_head) */
	int n, cap, ncpu;
	uint8_t *recs;		/* n records of rec_size, oldest first */
	__u32 slots_read;	/* slots looked up (each gives every CPU's) */
	__u32 skipped;		/* records rewritten while they were copied: left out */
};
#define BT_REC(s, i) ((struct bt_drop_rec *)((s)->recs + (size_t)(i) * (s)->rec_size))

/* The recorder's counts summed over the CPUs (written, overwritten,
 * follow_sent, follow_lost): 0, or -errno. */
int bt_recorder_counts(const struct bt_instance *inst, struct bt_drop_rec_pos *sum);
struct bt_rec_filter;
/* The records a dump of f needs (bt_recorder_read: each CPU's newest
 * first, up to f->n that f wants), each whole (its slot's seq the same
 * before and after its copy), merged oldest first: 0, or -errno
 * (-ENODATA: recording is off). Reading marks nothing. */
int bt_recorder_read(const struct bt_instance *inst, const struct bt_rec_filter *f,
		     int64_t offset, struct bt_rec_set *s);
void bt_recorder_free(struct bt_rec_set *s);
/* Add this to a record's ts_ns for CLOCK_REALTIME ns */
int64_t bt_recorder_clock_offset(void);
/* One record as a pcapng packet: its device's interface block first if
 * new; the reason, instance and the workloads of its addresses (by their
 * ids' names in wl, NULL: none) in the packet's comment and in a custom
 * option. 0, or -errno. */
struct bt_wl_names;
int bt_recorder_pcap(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_drop_rec *r, int64_t offset, const struct bt_wl_names *wl);
/* Which records to write: one reason, since a time, the newest N */
struct bt_rec_filter {
	bool by_reason;
	__u32 code;		/* the reason, with by_reason */
	__u64 since_ns;		/* CLOCK_REALTIME ns, 0: all */
	__u32 n;		/* the newest N that pass, 0: all */
	size_t max_bytes;	/* the file at most this (the newest that fit), 0: no cap */
};
/* The filter from the words of drops --reason/--since (either NULL) and
 * -n: 0, or -EINVAL with the problem in err. */
int bt_rec_filter_parse(struct bt_rec_filter *f, const char *reason, const char *since, __u32 n,
			char *err, size_t len);
bool bt_rec_wanted(const struct bt_rec_filter *f, const struct bt_drop_rec *r, int64_t offset);
/* What a dump did */
struct bt_rec_dump {
	__u32 written;		/* packets written */
	__u32 slots_read;	/* the ring's slots it looked up */
	__u32 skipped;		/* records rewritten while read: left out */
	bool cut;		/* f->max_bytes left out older ones that pass */
};
/* The ring's records that pass f written to w, oldest first: how many
 * were written, or -errno; d (may be NULL) what it did. */
int bt_recorder_dump(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_rec_filter *f, struct bt_rec_dump *d);
/* The follower's flag (drop_follow): its PID while one reads drop_events;
 * off (when on is false) only if it is this process's. 0, or -errno. */
int bt_recorder_follow_set(const struct bt_instance *inst, bool on);
/* The follower's PID in *pid, 0 if none: a flag whose process is gone
 * (a follower killed with SIGKILL) is cleared. 0, or -errno. */
int bt_recorder_follower(const struct bt_instance *inst, __u32 *pid);
/* Memory of the ring on each CPU, bytes */
uint64_t bt_recorder_bytes_per_cpu(const struct bt_meta *meta);

#endif /* BLOOMTAP_RECORDER_H */
