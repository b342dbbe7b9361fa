/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The drop recorder in user space (include/bloomtap.h "The drop
 * recorder"): the ring's records of every CPU merged by time, its counts,
 * the read position, pcapng output and the follower's ring buffer. */
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
	int n, ncpu;
	uint8_t *recs;		/* n records of rec_size, oldest first */
	__u64 *written;		/* each CPU's records made, when read */
};
#define BT_REC(s, i) ((struct bt_drop_rec *)((s)->recs + (size_t)(i) * (s)->rec_size))

/* The recorder's counts summed over the CPUs (written, overwritten,
 * follow_sent, follow_lost): 0, or -errno. */
int bt_recorder_counts(const struct bt_instance *inst, struct bt_drop_rec_pos *sum);
/* Every record the ring holds: 0, or -errno (-ENODATA: recording is off). */
int bt_recorder_read(const struct bt_instance *inst, struct bt_rec_set *s);
/* The read position moved to what s read: the records s holds are no
 * longer counted when overwritten. */
int bt_recorder_mark_read(const struct bt_instance *inst, const struct bt_rec_set *s);
void bt_recorder_free(struct bt_rec_set *s);
/* Add this to a record's ts_ns for CLOCK_REALTIME ns */
int64_t bt_recorder_clock_offset(void);
/* One record as a pcapng packet: its device's interface block first if
 * new; the reason and instance in the packet's comment and in a custom
 * option. 0, or -errno. */
int bt_recorder_pcap(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_drop_rec *r, int64_t offset);
/* Which records to write: one reason, since a time, the newest N */
struct bt_rec_filter {
	bool by_reason;
	__u32 code;		/* the reason, with by_reason */
	__u64 since_ns;		/* CLOCK_REALTIME ns, 0: all */
	__u32 n;		/* the newest N that pass, 0: all */
};
/* The filter from the words of drops --reason/--since (either NULL) and
 * -n: 0, or -EINVAL with the problem in err. */
int bt_rec_filter_parse(struct bt_rec_filter *f, const char *reason, const char *since, __u32 n,
			char *err, size_t len);
bool bt_rec_wanted(const struct bt_rec_filter *f, const struct bt_drop_rec *r, int64_t offset);
/* The ring's records that pass f written to w, oldest first, and the read
 * position moved past what was read: how many were written, or -errno. */
int bt_recorder_dump(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_rec_filter *f);
/* The follower's flag (drop_follow): on while one reads drop_events. */
int bt_recorder_follow_set(const struct bt_instance *inst, bool on);
/* Memory of the ring on each CPU, bytes */
uint64_t bt_recorder_bytes_per_cpu(const struct bt_meta *meta);

#endif /* BLOOMTAP_RECORDER_H */
