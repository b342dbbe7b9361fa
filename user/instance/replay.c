// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Replay: every packet of a capture through the real XDP program with
 * BPF_PROG_TEST_RUN, into a pinned instance, so that stats (and heavy and
 * trace) read it exactly as they read a live interface; the exact flow
 * table read back. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "core/capture.h"
#include "base/common.h"
#include "create.h"
#include "keeper.h"
#include "base/options.h"
#include "replay.h"
#include "sketch.h"
#include "spie.h"
#include "watch.h"

#define ETH_HLEN_ 14

int bt_run_frame(int prog_fd, const void *data, __u32 len, __u32 *action)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = len,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	*action = o.retval;
	return 0;
}

static void add_skip(struct bt_replay_result *r, const char *why)
{
	int i;

	r->skipped++;
	for (i = 0; i < BT_SKIP_KINDS - 1 && r->skip[i].why; i++)
		if (!strcmp(r->skip[i].why, why))
			break;
	if (!r->skip[i].why)
		r->skip[i].why = why;
	r->skip[i].count++;
}

/* After packet p: a window the replay moved into is marked (its times
 * are the replay's), or with capture_time starts at p's capture time (and
 * the one before ends there), as CLOCK_BOOTTIME through the offset that
 * converts it back. */
static void stamp_window(struct bt_spie_maps *s, bool capture_time, const struct bt_packet *p,
			 int64_t *last)
{
	uint32_t cur = bt_spie_current(s);
	__u64 boot = (__u64)p->ts.tv_sec * 1000000000ULL + (__u64)p->ts.tv_usec * 1000 -
		     (__u64)bt_real_minus_boot();
	struct bt_window *w = &s->win[cur];

	if (*last != cur && capture_time) {
		if (*last >= 0)
			s->win[*last].end_ns = boot;
		if (*last >= 0 || !__atomic_load_n(&w->fill, __ATOMIC_RELAXED))
			w->start_ns = boot;
	}
	/* times older than the boot are below 0, wrapped: as a distance */
	if (capture_time && (__s64)(boot - w->start_ns) >= 0) {
		__u64 ms = (boot - w->start_ns + 999999) / 1000000 + 1;

		if (ms > w->capture_ms && ms < UINT32_MAX)
			w->capture_ms = (__u32)ms;
	}
	if (*last == cur)
		return;
	__atomic_fetch_or(&w->flags, capture_time ? BT_WIN_CAPTURE_TIME : BT_WIN_REPLAY_TIME,
			  __ATOMIC_RELEASE);
	*last = cur;
}

int bt_replay_file(int prog_fd, const char *path, struct bt_keeper *keeper,
		   struct bt_spie_maps *stamp, bool capture_time, struct bt_replay_result *r)
{
	struct bt_capture *cap;
	struct bt_packet p;
	int64_t last = -1;	/* the window stamp_window saw current */
	int rc, err;

	memset(r, 0, sizeof(*r));
	err = bt_capture_open(path, &cap, r->error, sizeof(r->error));
	if (err)
		return err;
	snprintf(r->linktype, sizeof(r->linktype), "%s", bt_capture_linktype_name(cap));
	while ((rc = bt_capture_next(cap, &p)) == 1) {
		__u32 action = 0;

		r->read++;
		if (p.skip) {
			add_skip(r, p.skip);
			continue;
		}
		/* The kernel refuses test frames shorter than an Ethernet header. */
		if (p.len < ETH_HLEN_) {
			add_skip(r, "shorter than an Ethernet header");
			continue;
		}
		err = bt_run_frame(prog_fd, p.data, p.len, &action);
		if (err == -EINVAL || err == -E2BIG || err == -ENOMEM) {
			add_skip(r, "refused by BPF_PROG_TEST_RUN (too large)");
			continue;
		}
		if (err) {
			snprintf(r->error, sizeof(r->error), "BPF_PROG_TEST_RUN failed: %s",
				 strerror(-err));
			bt_capture_close(cap);
			return err;
		}
		r->replayed++;
		if (stamp)
			stamp_window(stamp, capture_time, &p, &last);
		if (action != XDP_PASS)
			r->not_pass++;
		if (keeper && !(r->replayed % BT_REPLAY_TURN))
			bt_keeper_turn(keeper, false, false);
	}
	if (keeper)
		bt_keeper_turn(keeper, false, false);
	if (rc < 0)
		snprintf(r->error, sizeof(r->error), "%s: capture breaks off after %" PRIu64
			 " packets (%s); the packets before it were replayed", path,
			 (uint64_t)r->read, bt_capture_error(cap));
	bt_capture_close(cap);
	return rc < 0 ? -EINVAL : 0;
}

static int cmp_bytes_desc(const void *a, const void *b)
{
	const struct bt_flow_ent *x = a, *y = b;

	if (x->val.bytes != y->val.bytes)
		return x->val.bytes < y->val.bytes ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int bt_flow_table_dump(int flows_fd, struct bt_flow_ent **out, size_t *n)
{
	struct bt_flow_key cur, next;
	struct bt_flow_ent *v = NULL;
	size_t cnt = 0, cap = 0;
	bool first = true;

	while (!bpf_map_get_next_key(flows_fd, first ? NULL : &cur, &next)) {
		first = false;
		cur = next;
		if (cnt == cap) {
			struct bt_flow_ent *nv;

			cap = cap ? cap * 2 : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt].key = cur;
		if (!bpf_map_lookup_elem(flows_fd, &cur, &v[cnt].val))
			cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_bytes_desc);
	*out = v;
	*n = cnt;
	return 0;
}
