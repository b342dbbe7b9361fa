// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* drops: what the kernel dropped of an instance's packets, by the running
 * kernel's reason names; the host's drops that no instance owns; the
 * reasons this kernel has, and which are suppressed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "commands.h"
#include "report/drops_report.h"
#include "report/heavy_report.h"
#include "instance/drops.h"
#include "base/options.h"
#include "core/pcapng.h"
#include "instance/wltable.h"
#include "instance/recorder.h"

static int print_host(void)
{
	struct bt_drop_total *t;
	int n = bt_drops_totals(NULL, &t);

	if (n < 0) {
		bt_err_errno(n, "reading " BT_DROPS_DIR "/drop_host");
		return n;
	}
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "unattributed", bt_drop_totals_json(t, n));
		bt_json_print(o);
	} else {
		printf("drops on interfaces without an instance (skbs)\n");
		bt_print_drop_totals(t, n);
	}
	free(t);
	return 0;
}

static int print_reasons(void)
{
	int n;
	const struct bt_drop_reason *r = bt_drop_reasons(&n);
	__u64 def[BT_DROP_REASONS / 64];

	if (!r) {
		bt_err("cannot read the kernel's drop reasons from %s", bt_drop_reasons_btf());
		return -ENOENT;
	}
	if (bt_drops_parse_suppress("default", def))
		return -EINVAL;
	if (bt_g.json) {
		struct json_object *a = json_object_new_array();

		for (int i = 0; i < n; i++) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "reason", json_object_new_string(r[i].name));
			json_object_object_add(o, "code", json_object_new_uint64(r[i].code));
			json_object_object_add(o, "suppressed_by_default",
					       json_object_new_boolean(bt_drop_suppressed(def, r[i].code)));
			json_object_array_add(a, o);
		}
		bt_json_print(a);
		return 0;
	}
	for (int i = 0; i < n; i++)
		printf("%5u  %s%s\n", r[i].code, r[i].name,
		       bt_drop_suppressed(def, r[i].code) ? "  (suppressed by default)" : "");
	return 0;
}

static struct {
	const char *instance, *suppress, *pcap, *reason, *since;
	bool host, reasons, follow;
	uint32_t n, interval, count;
} drops_cfg;

/* ---- the recorder's pcapng ---- */

static volatile sig_atomic_t pcap_stop;

static void on_stop(int sig)
{
	pcap_stop = 1;
}

struct pcap_out {
	const struct bt_instance *inst;
	struct bt_wl_names wl;		/* the workloads' names; an id a
					 * record names and this lacks is
					 * read again */
	struct bt_pcapng w;
	struct bt_rec_filter f;
	int64_t offset;
	__u64 written;
	int err;
};

static int pcap_event(void *ctx, void *data, size_t len)
{
	struct pcap_out *o = ctx;
	const struct bt_drop_rec *r = data;

	if (len < sizeof(*r) || o->err || !bt_rec_wanted(&o->f, r, o->offset))
		return 0;
	for (int side = 0; side < 2; side++)
		if (r->wl[side] && !bt_wl_name_of(&o->wl, r->wl[side]))
			bt_wl_name_reread(o->inst, &o->wl, r->wl[side]);
	if ((o->err = bt_recorder_pcap(o->inst, &o->w, r, o->offset, &o->wl)))
		return o->err;
	o->written++;
	if (drops_cfg.n && o->written >= drops_cfg.n)
		pcap_stop = 1;
	return 0;
}

/* --follow: the drops from now on, through the ring buffer */
static int pcap_follow(struct pcap_out *o)
{
	struct bt_drop_rec_pos c0, c1;
	struct ring_buffer *rb;
	__u32 other, zero = 0, cur;
	int err;

	rb = ring_buffer__new(o->inst->drop_events_fd, pcap_event, o, NULL);
	if (!rb) {
		err = -errno;
		bt_err_errno(err, "drops --follow: the recorder's ring buffer");
		return err;
	}
	/* the ring buffer has one consumer: a second would take half of
	 * each one's records */
	if (!(err = bt_recorder_follower(o->inst, &other)) && other && other != (__u32)getpid()) {
		bt_err("drops --follow: %s has a follower already (PID %u)", o->inst->name, other);
		ring_buffer__free(rb);
		return -EBUSY;
	}
	if (err || (err = bt_recorder_counts(o->inst, &c0)) ||
	    (err = bt_recorder_follow_set(o->inst, true))) {
		bt_err_errno(err, "drops --follow: registering");
		ring_buffer__free(rb);
		return err;
	}
	fprintf(stderr, "drops: following %s\n", o->inst->name);
	while (!pcap_stop && !o->err) {
		err = ring_buffer__poll(rb, 200);
		if (err < 0 && err != -EINTR)
			break;
		/* a reader in another PID namespace may have taken this
		 * process for gone and cleared the flag: set it again */
		if (!bpf_map_lookup_elem(o->inst->drop_follow_fd, &zero, &cur) && !cur)
			bt_recorder_follow_set(o->inst, true);
	}
	bt_recorder_follow_set(o->inst, false);
	/* what the program reserved before the flag went off */
	if (!o->err && !(drops_cfg.n && o->written >= drops_cfg.n))
		ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (!bt_recorder_counts(o->inst, &c1))
		fprintf(stderr, "drops: %" PRIu64 " written, %" PRIu64
			" lost (the ring buffer was full)\n",
			(uint64_t)o->written, (uint64_t)(c1.follow_lost - c0.follow_lost));
	return o->err == -EPIPE ? 0 : o->err;
}

static int pcap_write(const struct bt_instance *inst)
{
	struct pcap_out o = { .inst = inst, .offset = bt_recorder_clock_offset() };
	struct bt_drop_rec_pos c;
	struct bt_rec_dump d;
	int fd = 1, err;
	__u32 pid;
	char msg[640];

	if (!inst->meta.drop_ring) {
		bt_err("drops --pcap: %s records no drops (attach --drop-ring N)", inst->name);
		return -ENODATA;
	}
	if (bt_rec_filter_parse(&o.f, drops_cfg.reason, drops_cfg.since, drops_cfg.n, msg,
				sizeof(msg))) {
		bt_err("drops: %s", msg);
		return -EINVAL;
	}
	if (strcmp(drops_cfg.pcap, "-") &&
	    (fd = open(drops_cfg.pcap, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		err = -errno;
		bt_err("drops --pcap %s: %s", drops_cfg.pcap, strerror(-err));
		return err;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	if ((err = bt_pcapng_start(&o.w, fd)))
		goto out;
	if (drops_cfg.follow) {
		bt_wl_names_open(inst, &o.wl);
		err = pcap_follow(&o);
		bt_wl_names_close(&o.wl);
		goto out;
	}
	/* a follower's flag left by a killed one: cleared */
	bt_recorder_follower(inst, &pid);
	if ((err = bt_recorder_dump(inst, &o.w, &o.f, &d)) >= 0 && !bt_recorder_counts(inst, &c))
		fprintf(stderr, "drops: %d written (%u rewritten while read, left out); the "
			"recorder has made %" PRIu64 " records, %" PRIu64
			" overwritten before a follower read them\n",
			err, d.skipped, (uint64_t)c.written, (uint64_t)c.overwritten);
	err = err < 0 ? err : 0;
out:
	bt_pcapng_free(&o.w);
	if (err && err != -EPIPE)
		bt_err("drops --pcap %s: %s", drops_cfg.pcap, strerror(-err));
	if (fd != 1)
		close(fd);
	return err == -EPIPE ? 0 : err;
}

static const struct bt_opt drops_opts[] = {
	BT_INSTANCE_OPT(drops_cfg.instance),
	{ "top", 'n', BT_OPT_U32, &drops_cfg.n, "N",
	  "heavy dropped flows to show of each interval (default 10); with --pcap, the "
	  "newest N drops (with --follow: stop after N)", .min = 1, .max = 100000 },
	{ "pcap", 0, BT_OPT_STRING, &drops_cfg.pcap, "FILE",
	  "write the recorder's drops (attach --drop-ring) as pcapng to FILE, '-' for "
	  "stdout: each packet's comment names its reason and instance" },
	{ "reason", 0, BT_OPT_STRING, &drops_cfg.reason, "R", "with --pcap: only reason R" },
	{ "since", 0, BT_OPT_STRING, &drops_cfg.since, "T",
	  "with --pcap: only drops at or after T (epoch seconds, 2026-11-25T10:00:00Z, -10m)" },
	{ "follow", 'F', BT_OPT_FLAG, &drops_cfg.follow, NULL,
	  "with --pcap: write the drops from now on as they come, until interrupted; "
	  "the drops lost when it falls behind are counted and printed at exit" },
	{ "interval", 0, BT_OPT_U32, &drops_cfg.interval, "SECONDS",
	  "end a heavy-flow interval every SECONDS and print its heavy dropped flows "
	  "(heavy --dropped --interval)", .min = 1, .max = 86400 },
	{ "count", 'c', BT_OPT_U32, &drops_cfg.count, "K", "with --interval: stop after K",
	  .min = 1, .max = UINT32_MAX },
	{ "host", 0, BT_OPT_FLAG, &drops_cfg.host, NULL,
	  "the drops on interfaces without an instance, by reason" },
	{ "reasons", 0, BT_OPT_FLAG, &drops_cfg.reasons, NULL,
	  "list the running kernel's drop reasons (codes and names, from its BTF)" },
	{ "suppress", 0, BT_OPT_STRING, &drops_cfg.suppress, "LIST",
	  "set the instance's suppressed reasons (as attach --drop-suppress)" },
	{ 0 }
};

static const struct bt_cmd_spec drops_spec = {
	"drops", "[IFACE]",
	"What the kernel dropped of the packets an instance saw, per reason (the running\n"
	"kernel's names): packets and bytes, how many got a digest and why the others\n"
	"did not, the frees that were not its drops (a raw socket's delivered echo\n"
	"replies, a shared stacked device's packets it never saw), the stacked devices\n"
	"and who gets their drops; then the heavy dropped flows of the last complete and\n"
	"the current heavy-flow interval, each with its reason (the intervals are the\n"
	"heavy flows': the agent, 'heavy --interval' or --interval here ends them).\n"
	"An instance attached with --direction egress alone saw nothing its interface\n"
	"receives: it records no drops, and those are in --host.\n"
	"'bloomtap trace' says which packets were dropped.",
	drops_opts, 0, 1,
};

int cmd_drops(int argc, char **argv)
{
	int n = bt_parse_args(&drops_spec, argc, argv), ret = 0;
	struct bt_instance inst;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	/* each of these is an answer of its own: two asked at once is a
	 * typo, never one silently left out */
	if (drops_cfg.reasons + drops_cfg.host + !!drops_cfg.pcap > 1) {
		bt_err("drops: --reasons, --host and --pcap are answers of their own: "
		       "ask one at a time");
		return BT_EXIT_USAGE;
	}
	if (drops_cfg.reasons)
		return print_reasons() ? BT_EXIT_FAIL : 0;
	if (drops_cfg.host)
		return print_host() ? BT_EXIT_FAIL : 0;
	if (!drops_cfg.pcap && (drops_cfg.reason || drops_cfg.since || drops_cfg.follow)) {
		bt_err("drops: --reason, --since and --follow go with --pcap");
		return BT_EXIT_USAGE;
	}
	if (drops_cfg.count && !drops_cfg.interval) {
		bt_err("drops: --count needs --interval");
		return BT_EXIT_USAGE;
	}
	if (drops_cfg.interval) {
		/* the heavy flows' loop, on the dropped flows */
		char nb[16], ib[16], cb[16], *hv[12] = { "heavy", "--dropped", "-n", nb,
							 "--interval", ib };
		int hc = 6;

		snprintf(nb, sizeof(nb), "%u", drops_cfg.n ? drops_cfg.n : 10);
		snprintf(ib, sizeof(ib), "%u", drops_cfg.interval);
		if (drops_cfg.count) {
			snprintf(cb, sizeof(cb), "%u", drops_cfg.count);
			hv[hc++] = "--count";
			hv[hc++] = cb;
		}
		if (drops_cfg.instance) {
			hv[hc++] = "--instance";
			hv[hc++] = (char *)drops_cfg.instance;
		} else if (n) {
			hv[hc++] = argv[1];
		}
		hv[hc] = NULL;
		return cmd_heavy(hc, hv);
	}
	int open_rc = bt_instance_open_arg(n ? argv[1] : NULL, drops_cfg.instance, &inst);

	if (open_rc)
		return open_rc;
	if (drops_cfg.pcap) {
		ret = pcap_write(&inst) ? BT_EXIT_FAIL : 0;
		bt_instance_close(&inst);
		return ret;
	}
	if (drops_cfg.suppress) {
		__u64 bits[BT_DROP_REASONS / 64];

		if (bt_drops_parse_suppress(drops_cfg.suppress, bits) ||
		    bt_drops_set_suppress(&inst, bits))
			ret = BT_EXIT_FAIL;
	}
	if (!ret)
		bt_print_drops(&inst, drops_cfg.n ? drops_cfg.n : 10);
	bt_instance_close(&inst);
	return ret;
}
