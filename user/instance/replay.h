/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Running captured frames through the real XDP program (BPF_PROG_TEST_RUN). */
#ifndef BLOOMTAP_REPLAY_H
#define BLOOMTAP_REPLAY_H

#include <stdbool.h>
#include <linux/types.h>
#include "bloomtap.h"

#define BT_SKIP_KINDS 8

struct bt_replay_result {
	__u64 read;		/* packets in the file */
	__u64 replayed;		/* run through the program */
	__u64 not_pass;		/* program returned something else than XDP_PASS */
	__u64 skipped;		/* not run: see kinds */
	struct {
		const char *why;
		__u64 count;
	} skip[BT_SKIP_KINDS];
	char linktype[32];
	char error[512];	/* set when the file broke off midway */
};

/* One frame, once. Returns 0 and the XDP action in *action, or -errno. */
int bt_run_frame(int prog_fd, const void *data, __u32 len, __u32 *action);
struct bt_keeper;
struct bt_spie_maps;
/* Every packet of a capture. Returns 0, or -EINVAL with r->error set when
 * the file is not a capture or breaks off (packets before the break have
 * been replayed and are counted in r). With a keeper, the SPIE ring is
 * kept turning every BT_REPLAY_TURN packets, as the agent would. */
#define BT_REPLAY_TURN 4096
/* stamp (or NULL): the ring replayed into, whose windows it marks
 * BT_WIN_REPLAY_TIME; with capture_time, it stamps them with the
 * capture's packet times instead (BT_WIN_CAPTURE_TIME). */
int bt_replay_file(int prog_fd, const char *path, struct bt_keeper *keeper,
		   struct bt_spie_maps *stamp, bool capture_time, struct bt_replay_result *r);

struct bt_flow_ent {
	struct bt_flow_key key;
	struct bt_flow_val val;
};
/* The exact flow table, sorted by bytes, largest first. */
int bt_flow_table_dump(int flows_fd, struct bt_flow_ent **out, size_t *n);

#endif /* BLOOMTAP_REPLAY_H */
