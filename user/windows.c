// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* windows: the SPIE window ring, and rotation (sealing, archiving) until the
 * agent does it: on time, or earlier when the current window's expected
 * false-positive rate passes its target. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "archive.h"
#include "common.h"
#include "commands.h"
#include "options.h"
#include "spie.h"
#include "util.h"

static const char *const state_names[] = { "empty", "current", "sealed" };


static void print_ring(const struct bt_spie_maps *s)
{
	struct json_object *arr = bt_g.json ? json_object_new_array() : NULL;
	const struct bt_meta *m = s->meta;

	if (!arr)
		printf("%u windows of %" PRIu64 " bits (%.1f MiB), k = %u, sized for %" PRIu64
		       " packets each at a false-positive rate of %g\n", m->windows,
		       (uint64_t)m->window_bits, m->window_bits / 8.0 / 1048576.0, m->k,
		       (uint64_t)m->design_load, m->fpr_target_ppb / 1e9);
	for (uint32_t i = 0; i < m->windows; i++) {
		const struct bt_window *w = &s->win[i];
		__u64 set = w->set_bits;
		double fpr = 0;
		char a[32], b[32];

		if (w->state == BT_WIN_EMPTY && !arr)
			continue;
		if (w->state != BT_WIN_EMPTY)
			bt_bloom_fill(&s->blocks[(uint64_t)i * s->bpw], s->bpw, m->k, &set, &fpr);
		bt_fmt_ns(w->start_ns, a, sizeof(a), "-");
		bt_fmt_ns(w->end_ns, b, sizeof(b), "-");
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "index", json_object_new_int(i));
			json_object_object_add(o, "window", json_object_new_int64(w->seq));
			json_object_object_add(o, "state", json_object_new_string(state_names[w->state % 3]));
			json_object_object_add(o, "start", json_object_new_string(a));
			json_object_object_add(o, "end", json_object_new_string(b));
			json_object_object_add(o, "packets", json_object_new_uint64(bt_window_packets(s, i)));
			json_object_object_add(o, "set_bits", json_object_new_uint64(set));
			json_object_object_add(o, "fpr", json_object_new_double(fpr));
			json_object_array_add(arr, o);
			continue;
		}
		printf("  [%u] window %-6u %-8s %s .. %s  %10" PRIu64 " packets  fill %5.2f%%  "
		       "false-positive rate %.2g\n", i, w->seq, state_names[w->state % 3], a, b,
		       (uint64_t)bt_window_packets(s, i), 100.0 * set / m->window_bits, fpr);
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
	double every;
	uint32_t count;
	uint64_t max_bytes, max_age;
} wcfg;

static const struct bt_opt windows_opts[] = {
	BT_INSTANCE_OPT(wcfg.instance),
	{ "rotate", 'r', BT_OPT_FLAG, &wcfg.rotate, NULL, "seal the current window, start the next" },
	{ "every", 0, BT_OPT_DOUBLE, &wcfg.every, "SECONDS",
	  "rotate every SECONDS (0: the instance's --window), or earlier when full",
	  .dmin = 0, .dmax = 86400 },
	{ "count", 'c', BT_OPT_U32, &wcfg.count, "K", "with --every: stop after K rotations",
	  .min = 1, .max = 100000000 },
	{ "archive", 'a', BT_OPT_STRING, &wcfg.archive, "DIR", "write sealed windows to DIR" },
	{ "max-bytes", 0, BT_OPT_U64, &wcfg.max_bytes, "N",
	  "prune the archive to N bytes (oldest first)", .min = 1, .max = UINT64_MAX },
	{ "max-age", 0, BT_OPT_U64, &wcfg.max_age, "SECONDS",
	  "prune archived windows older than this", .min = 1, .max = UINT64_MAX },
	{ 0 }
};

static const struct bt_cmd_spec windows_spec = {
	"windows", "[IFACE]",
	"The ring of SPIE windows: state, time range, packets, fill, false-positive\n"
	"rate. --rotate seals the current window; --every keeps rotating (on time,\n"
	"or earlier when a window's false-positive rate would pass its target) and\n"
	"with --archive writes every sealed window to a file.",
	windows_opts, 0, 1,
};

static int seal(struct bt_spie_maps *s, const char *name)
{
	uint32_t w = bt_spie_rotate(s);
	char path[512];

	if (!wcfg.archive)
		return 0;
	if (bt_archive_write(wcfg.archive, name, s->meta, &s->win[w],
			     &s->blocks[(uint64_t)w * s->bpw], s->bpw, path, sizeof(path)))
		return -EIO;
	bt_debug("sealed window %u into %s", s->win[w].seq, path);
	if (wcfg.max_bytes || wcfg.max_age)
		bt_archive_prune(wcfg.archive, name, wcfg.max_bytes, wcfg.max_age);
	return 0;
}

int cmd_windows(int argc, char **argv)
{
	int n = bt_parse_args(&windows_spec, argc, argv), ret = BT_EXIT_FAIL;
	struct bt_spie_maps s = { 0 };
	struct bt_instance inst;
	const char *name;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (wcfg.count && !wcfg.every) {
		bt_err("windows: --count needs --every");
		return BT_EXIT_USAGE;
	}
	if (bt_instance_open_arg(n ? argv[1] : NULL, wcfg.instance, &inst))
		return BT_EXIT_FAIL;
	name = inst.name;
	if (bt_spie_map(&inst, &s)) {
		bt_err("windows: mapping the SPIE windows of '%s' failed", name);
		goto out;
	}
	if (wcfg.rotate && seal(&s, name))
		goto out;
	if (wcfg.every > 0 || (argc > 1 && wcfg.count)) {
		struct sigaction sa = { .sa_handler = on_signal };
		double every = wcfg.every > 0 ? wcfg.every : inst.meta.window_ms / 1000.0;

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		for (uint32_t k = 0; !stop && (!wcfg.count || k < wcfg.count); k++) {
			/* on time, or as soon as the window is full: check every 10 ms */
			for (double t = 0; t < every && !stop && !bt_spie_full(&s); t += 0.01)
				usleep(10000);
			if (stop)
				break;
			if (seal(&s, name))
				goto out;
		}
	}
	print_ring(&s);
	ret = 0;
out:
	if (s.ctl)
		bt_spie_unmap(&s);
	bt_instance_close(&inst);
	return ret;
}
