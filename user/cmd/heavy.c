// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* heavy: the heavy flows of the last complete and the current interval,
 * and (--interval) a small loop that ends intervals until the agent does. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/common.h"
#include "commands.h"
#include "report/heavy_report.h"
#include "report/flow.h"
#include "report/ipfix.h"
#include "base/options.h"
#include "instance/sketch.h"
#include "instance/spie.h"
#include "base/util.h"
#include "instance/watch.h"

/* The interval's flows of every stage, as the agent exports them: the
 * received, the sent (an instance recording them), the dropped after */
static int export_ipfix(struct bt_ipfix *x, const struct bt_heavy_maps *m, __u32 iv,
			const struct bt_threshold *thr)
{
	const struct bt_heavy_maps *stage[3] = { m, m->egress, m->drops };
	int err = 0;

	for (int s = 0; s < 3 && !err; s++) {
		int rc;

		if (stage[s] && (rc = bt_ipfix_export_interval(&x, 1, stage[s], iv, thr, &err)))
			err = rc;
	}
	if (err)
		bt_err("writing IPFIX to %s: %s", bt_ipfix_name(x), strerror(-err));
	return err;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static struct heavy_cfg {
	const char *instance, *ipfix_file;
	uint32_t n, interval, count, ipfix_domain;
	int by, dir;	/* dir: enum bt_direction */
	bool flip, dropped;
	double fraction;
	uint64_t bytes, packets;
} hcfg = { .n = 20, .ipfix_domain = 1 };

static const char *const by_names[] = { "bytes", "packets", NULL };

static const struct bt_opt heavy_opts[] = {
	BT_INSTANCE_OPT(hcfg.instance),
	BT_DIRECTION_OPT(hcfg.dir),
	{ "dropped", 0, BT_OPT_FLAG, &hcfg.dropped, NULL,
	  "the heavy dropped flows instead, each with the kernel's drop reason" },
	{ "top", 'n', BT_OPT_U32, &hcfg.n, "N", "at most N flows per interval (default 20)",
	  .min = 1, .max = 1000000 },
	{ "by", 0, BT_OPT_ENUM, &hcfg.by, "WHAT", "order by", .choices = by_names },
	{ "fraction", 0, BT_OPT_DOUBLE, &hcfg.fraction, "F",
	  "report flows with at least F of the interval's bytes", .dmin = 1e-6, .dmax = 1 },
	{ "bytes", 0, BT_OPT_U64, &hcfg.bytes, "N", "report flows with at least N bytes",
	  .min = 1, .max = UINT64_MAX / 2 },
	{ "packets", 0, BT_OPT_U64, &hcfg.packets, "N", "report flows with at least N packets",
	  .min = 1, .max = UINT64_MAX / 2 },
	{ "flip", 0, BT_OPT_FLAG, &hcfg.flip, NULL,
	  "end the current interval after printing (the next one starts empty)" },
	{ "interval", 0, BT_OPT_U32, &hcfg.interval, "SECONDS",
	  "every SECONDS, end the interval and print its heavy flows", .min = 1, .max = 86400 },
	{ "count", 'c', BT_OPT_U32, &hcfg.count, "K", "with --interval: stop after K intervals",
	  .min = 1, .max = 1000000 },
	{ "ipfix-file", 0, BT_OPT_STRING, &hcfg.ipfix_file, "FILE",
	  "with --interval or --flip: each interval ended, as IPFIX, into FILE (as the "
	  "agent's --ipfix sends it)" },
	{ "ipfix-domain", 0, BT_OPT_U32, &hcfg.ipfix_domain, "ID",
	  "the IPFIX observation domain (default 1)" },
	{ 0 }
};

static const struct bt_cmd_spec heavy_spec = {
	"heavy", "[IFACE]",
	"Heavy flows (top talkers) of the last complete and of the current interval:\n"
	"key, estimated bytes and packets (never below the truth), what was counted\n"
	"exactly since the flow was nominated, and the error bound. By default a\n"
	"flow is heavy at the threshold the instance was made with (--fraction\n"
	"0.001 of the interval's bytes unless set at attach or replay).",
	heavy_opts, 0, 1,
};

/* The options that go together, checked; the threshold given (*thrp
 * NULL when none). -EINVAL after saying why. */
static int heavy_opts_check(struct bt_threshold *thr, struct bt_threshold **thrp)
{
	*thrp = NULL;
	if ((hcfg.fraction > 0) + (hcfg.bytes > 0) + (hcfg.packets > 0) > 1) {
		bt_err("heavy: give one of --fraction, --bytes, --packets");
		return -EINVAL;
	}
	if (hcfg.dropped && hcfg.dir != BT_DIR_INGRESS) {
		bt_err("heavy: --dropped has no direction (drops are counted where the kernel "
		       "drops)");
		return -EINVAL;
	}
	if (hcfg.count && !hcfg.interval) {
		bt_err("heavy: --count needs --interval");
		return -EINVAL;
	}
	if (hcfg.ipfix_file && !hcfg.interval && !hcfg.flip) {
		bt_err("heavy: --ipfix-file needs --interval or --flip (it exports intervals "
		       "as they end)");
		return -EINVAL;
	}
	if (hcfg.fraction > 0)
		*thr = (struct bt_threshold){ BT_THR_FRACTION, llround(hcfg.fraction * 1e9) };
	else if (hcfg.bytes)
		*thr = (struct bt_threshold){ BT_THR_BYTES, hcfg.bytes };
	else if (hcfg.packets)
		*thr = (struct bt_threshold){ BT_THR_PACKETS, hcfg.packets };
	if (hcfg.fraction > 0 || hcfg.bytes || hcfg.packets)
		*thrp = thr;
	return 0;
}

/* --ipfix-file: an IPFIX file exporter; NULL after saying why. */
static struct bt_ipfix *open_ipfix_file(void)
{
	struct bt_ipfix_dest d = { .transport = BT_IPFIX_FILE };
	struct bt_ipfix_cfg c = BT_IPFIX_CFG_DEFAULTS;
	struct bt_ipfix *x;
	char err[512];

	c.domain = hcfg.ipfix_domain;
	snprintf(d.host, sizeof(d.host), "%s", hcfg.ipfix_file);
	if (!(x = bt_ipfix_open(&d, &c, err, sizeof(err))))
		bt_err("heavy: --ipfix-file: %s", err);
	return x;
}

int cmd_heavy(int argc, char **argv)
{
	int n = bt_parse_args(&heavy_spec, argc, argv), ret = BT_EXIT_FAIL;
	struct bt_threshold thr, *thrp = NULL;
	struct bt_heavy_maps m = { 0 };
	struct bt_instance inst;
	struct bt_ipfix *ipfix = NULL;
	int lock = -1;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (heavy_opts_check(&thr, &thrp))
		return BT_EXIT_USAGE;

	int open_rc = bt_instance_open_arg(n ? argv[1] : NULL, hcfg.instance, &inst);

	if (open_rc)
		return open_rc;
	if (bt_instance_records(&inst, hcfg.dir))
		goto out;
	if (thrp && (thr.kind != (int)inst.meta.threshold_kind || thr.value < inst.meta.threshold))
		bt_warn("flows are nominated at the instance's own threshold; flows below it "
			"but above yours may be missing");
	if ((hcfg.flip || hcfg.interval) &&
	    bt_instance_lock_or_explain(inst.name, "end its intervals", &lock))
		goto out;
	if (bt_heavy_map(&inst, &m)) {
		bt_err("mapping the sketch of '%s' failed", inst.name);
		goto out;
	}
	if (hcfg.ipfix_file && !(ipfix = open_ipfix_file()))
		goto out;

	/* the stage printed: the received flows, the sent or the dropped ones
	 * (all end their intervals together) */
	const struct bt_heavy_maps *shown = hcfg.dropped ? m.drops
					    : hcfg.dir == BT_DIR_EGRESS ? m.egress : &m;

	if (!hcfg.interval) {
		__u32 ivs[2];

		bt_heavy_both_intervals(&m, ivs);
		if (bt_heavy_print_intervals(shown, ivs, 2, hcfg.n, hcfg.by == 1, thrp))
			goto out;
		if (hcfg.flip) {
			bt_heavy_flip(&m);
			if (ipfix && export_ipfix(ipfix, &m, ivs[1], thrp))
				goto out;
		}
		ret = 0;
		goto out;
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (uint32_t k = 0; !stop && (!hcfg.count || k < hcfg.count); k++) {
		__u32 done;

		for (uint32_t s = 0; s < hcfg.interval * 10 && !stop; s++)
			usleep(100000);
		if (stop)
			break;
		done = m.ctl->interval & 1;
		bt_heavy_flip(&m);
		if (bt_heavy_print_intervals(shown, &done, 1, hcfg.n, hcfg.by == 1, thrp))
			goto out;
		if (ipfix && export_ipfix(ipfix, &m, done, thrp))
			goto out;
		fflush(stdout);
	}
	ret = 0;
out:
	bt_ipfix_close(ipfix);
	if (lock >= 0)
		close(lock);
	bt_heavy_unmap(&m);
	bt_instance_close(&inst);
	return ret;
}
