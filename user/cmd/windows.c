// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* windows: the SPIE window ring, and its housekeeping when no agent runs:
 * close the current window (--rotate), or keep the ring turning (--every),
 * sealing and archiving behind the datapath and readying clean windows
 * ahead of it. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/archive.h"
#include "base/common.h"
#include "commands.h"
#include "instance/instance.h"
#include "instance/keeper.h"
#include "base/options.h"
#include "instance/spie.h"
#include "base/util.h"

/* "Overloaded" has one meaning everywhere (windows, archive, the metric):
 * the datapath filled the window to its design load and found no clean
 * window ready, so it went on in this one (BT_WIN_OVERLOADED). A window
 * holds a little more than its load without that: each CPU counts into the
 * shared fill a batch at a time, so the window moves on within a batch a
 * CPU of its load. */
static void print_ring(const struct bt_spie_maps *s)
{
	struct json_object *arr = bt_g.json ? json_object_new_array() : NULL;
	const struct bt_meta *m = s->meta;

	if (!arr)
		printf("%u windows of %" PRIu64 " bits (%.0f KiB), k = %u, sized for %" PRIu64
		       " packets each at a false-positive rate of %g\n", m->windows,
		       (uint64_t)m->window_bits, m->window_bits / 8.0 / 1024.0, m->k,
		       (uint64_t)m->design_load, m->fpr_target_ppb / 1e9);
	for (uint32_t i = 0; i < m->windows; i++) {
		const struct bt_window *w = &s->win[i];
		__u32 st = w->state;
		__u64 start = bt_boot_to_real(w->start_ns), end = bt_boot_to_real(bt_window_end_ns(w));
		uint64_t packets;
		double fpr;
		char a[32], b[32];

		if (st == BT_WIN_EMPTY || st == BT_WIN_READY)
			continue;
		packets = bt_window_packets(s, i);
		fpr = bt_window_fpr(s, i);
		bt_fmt_ns(start, a, sizeof(a), "-");
		bt_fmt_ns(end, b, sizeof(b), "-");
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "index", json_object_new_int(i));
			json_object_object_add(o, "window", json_object_new_int64(w->seq));
			json_object_object_add(o, "state", json_object_new_string(bt_window_state_name(st)));
			json_object_object_add(o, "start", start ? json_object_new_string(a) : NULL);
			json_object_object_add(o, "end", end ? json_object_new_string(b) : NULL);
			json_object_object_add(o, "packets", json_object_new_uint64(packets));
			json_object_object_add(o, "design_load", json_object_new_uint64(m->design_load));
			json_object_object_add(o, "overloaded", json_object_new_boolean(
					       w->flags & BT_WIN_OVERLOADED));
			json_object_object_add(o, "archived", json_object_new_boolean(
					       w->flags & BT_WIN_ARCHIVED));
			json_object_object_add(o, "fpr", json_object_new_double(fpr));
			json_object_array_add(arr, o);
			continue;
		}
		printf("  [%3u] window %-6u %-7s %s .. %s  %9" PRIu64 " packets%s  "
		       "false-positive rate %.2g%s\n", i, w->seq, bt_window_state_name(st), a, b,
		       packets, w->flags & BT_WIN_OVERLOADED ? " (past its load)" : "", fpr, w->flags & BT_WIN_ARCHIVED ? "  archived" : "");
	}
	if (arr)
		bt_json_print(arr);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static struct windows_cfg {
	const char *instance, *archive;
	bool rotate;
	double every, flush;
	uint32_t count;
	uint64_t max_bytes, max_age;
} wcfg;

static const struct bt_opt windows_opts[] = {
	BT_INSTANCE_OPT(wcfg.instance),
	{ "rotate", 'r', BT_OPT_FLAG, &wcfg.rotate, NULL,
	  "close the current window, seal it, archive it with --archive" },
	{ "every", 0, BT_OPT_DOUBLE, &wcfg.every, "SECONDS",
	  "keep the ring turning: close the current window after SECONDS, or when "
	  "the datapath fills it", .dmin = 0.01, .dmax = 86400 },
	{ "count", 'c', BT_OPT_U32, &wcfg.count, "K", "with --every: stop after K windows sealed",
	  .min = 1, .max = 100000000 },
	{ "archive", 'a', BT_OPT_STRING, &wcfg.archive, "DIR", "write sealed windows to DIR" },
	{ "archive-flush", 0, BT_OPT_DOUBLE, &wcfg.flush, "SECONDS",
	  "with --every: write sealed windows within this long (default 10)",
	  .dmin = 0.01, .dmax = 3600 },
	{ "max-bytes", 0, BT_OPT_U64, &wcfg.max_bytes, "N",
	  "prune the archive directory to N bytes (oldest first)", .min = 1, .max = UINT64_MAX },
	{ "max-age", 0, BT_OPT_U64, &wcfg.max_age, "SECONDS",
	  "prune archived windows older than this", .min = 1, .max = UINT64_MAX },
	{ 0 }
};

static const struct bt_cmd_spec windows_spec = {
	"windows", "[IFACE]",
	"The ring of SPIE windows: state, time range, packets, false-positive rate.\n"
	"The datapath moves to the next window itself when one reaches its design\n"
	"load; closing one on time (the agent's --window, 1 s by default) is the\n"
	"keeper's work: with no agent and no --every, a window stays open until it\n"
	"is full. --rotate closes the current one now and seals it; --every keeps\n"
	"the ring turning as the agent does (sealing behind the datapath, readying\n"
	"clean windows ahead of it) and with --archive writes sealed windows to files.",
	windows_opts, 0, 1,
};

int cmd_windows(int argc, char **argv)
{
	int n = bt_parse_args(&windows_spec, argc, argv), ret = BT_EXIT_FAIL;
	struct bt_spie_maps s = { 0 };
	struct bt_keeper k = { 0 };
	struct bt_instance inst;
	int lock = -1;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (wcfg.count && !wcfg.every) {
		bt_err("windows: --count needs --every");
		return BT_EXIT_USAGE;
	}
	int open_rc = bt_instance_open_arg(n ? argv[1] : NULL, wcfg.instance, &inst);

	if (open_rc)
		return open_rc;
	if (bt_spie_map(&inst, &s)) {
		bt_err("windows: mapping the SPIE windows of '%s' failed", inst.name);
		goto out;
	}
	if ((wcfg.rotate || wcfg.every > 0) &&
	    bt_instance_lock_or_explain(inst.name, "rotate its windows", &lock))
		goto out;
	k = (struct bt_keeper){ .sm = &s, .name = inst.name, .archive = wcfg.archive,
				.max_bytes = wcfg.max_bytes, .max_age_s = wcfg.max_age,
				.flush_s = wcfg.flush };
	if (wcfg.rotate) {
		/* first mend and ready what a killed keeper may have left */
		bt_keeper_turn(&k, false, true);
		if (bt_spie_close_current(&s)) {
			bt_err("windows: the next window is not ready (run 'bloomtap windows --every' "
			       "or the agent to keep the ring turning)");
			goto out;
		}
		bt_keeper_turn(&k, false, true);
		if (k.archive_errors)
			goto out;
	}
	if (wcfg.every > 0) {
		struct sigaction sa = { .sa_handler = on_signal };

		k.window_s = wcfg.every;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		while (!stop && (!wcfg.count || k.sealed < wcfg.count)) {
			bt_keeper_turn(&k, false, false);
			usleep(10000);
		}
		bt_keeper_turn(&k, false, true);
	}
	print_ring(&s);
	ret = 0;
out:
	if (lock >= 0)
		close(lock);
	if (s.ctl)
		bt_spie_unmap(&s);
	bt_instance_close(&inst);
	return ret;
}
