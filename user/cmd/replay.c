// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* replay: a capture through the real program (replay.c), its summary and
 * (--flows) the flows it keyed. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "core/capture.h"
#include "base/common.h"
#include "commands.h"
#include "instance/link.h"
#include "instance/create.h"
#include "report/flow.h"
#include "instance/keeper.h"
#include "base/options.h"
#include "instance/replay.h"
#include "instance/sketch.h"
#include "instance/spie.h"
#include "instance/watch.h"

static void print_flows(const struct bt_flow_ent *v, size_t n)
{
	if (bt_g.json) {
		struct json_object *arr = json_object_new_array();

		for (size_t i = 0; i < n; i++) {
			struct json_object *o = json_object_new_object();

			bt_flow_key_json(o, &v[i].key);
			json_object_object_add(o, "packets", json_object_new_uint64(v[i].val.packets));
			json_object_object_add(o, "bytes", json_object_new_uint64(v[i].val.bytes));
			json_object_array_add(arr, o);
		}
		bt_json_print(arr);
		return;
	}
	printf("%-64s %12s %14s\n", "flow", "packets", "bytes");
	for (size_t i = 0; i < n; i++) {
		char buf[160];

		printf("%-64s %12" PRIu64 " %14" PRIu64 "\n",
		       bt_flow_str(&v[i].key, buf, sizeof(buf)),
		       (uint64_t)v[i].val.packets, (uint64_t)v[i].val.bytes);
	}
}

static void print_summary(const char *path, const struct bt_replay_result *r,
			  const char *instance, bool to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	if (bt_g.json && !to_stderr) {
		struct json_object *o = json_object_new_object(), *sk = json_object_new_object();

		json_object_object_add(o, "file", json_object_new_string(path));
		json_object_object_add(o, "instance", json_object_new_string(instance));
		json_object_object_add(o, "linktype", json_object_new_string(r->linktype));
		json_object_object_add(o, "read", json_object_new_uint64(r->read));
		json_object_object_add(o, "replayed", json_object_new_uint64(r->replayed));
		json_object_object_add(o, "not_pass", json_object_new_uint64(r->not_pass));
		for (int i = 0; i < BT_SKIP_KINDS && r->skip[i].why; i++)
			json_object_object_add(sk, r->skip[i].why, json_object_new_uint64(r->skip[i].count));
		json_object_object_add(o, "skipped", sk);
		bt_json_print(o);
		return;
	}
	fprintf(f, "%s (%s): %" PRIu64 " packets read, %" PRIu64 " replayed into "
		"instance %s, %" PRIu64 " skipped\n", path, r->linktype, (uint64_t)r->read,
		(uint64_t)r->replayed, instance, (uint64_t)r->skipped);
	for (int i = 0; i < BT_SKIP_KINDS && r->skip[i].why; i++)
		fprintf(f, "  skipped %" PRIu64 ": %s\n", (uint64_t)r->skip[i].count, r->skip[i].why);
	if (r->not_pass)
		fprintf(f, "  %" PRIu64 " packets did not get XDP_PASS\n", (uint64_t)r->not_pass);
}

static struct replay_cfg {
	const char *instance, *watch;
	bool flows, reset, capture_time;
	uint32_t flow_table;
	struct bt_sketch_cfg sketch;
	struct bt_spie_cfg spie;
} rcfg = { .instance = "replay", .flow_table = 1 << 20 };

static const struct bt_opt replay_opts[] = {
	{ "instance", 'i', BT_OPT_STRING, &rcfg.instance, "NAME",
	  "instance to replay into, created when missing (default: replay)" },
	{ "flows", 'F', BT_OPT_FLAG, &rcfg.flows, NULL,
	  "print every flow the datapath keyed, with exact packets and bytes" },
	{ "reset", 'r', BT_OPT_FLAG, &rcfg.reset, NULL,
	  "start from an empty instance (removes the existing one first)" },
	{ "capture-time", 0, BT_OPT_FLAG, &rcfg.capture_time, NULL,
	  "stamp the SPIE windows with the capture's packet times, not the replay's, "
	  "so that trace searches each packet at its own time (without it a replayed "
	  "window is searched for every packet)" },
	{ "flow-table", 0, BT_OPT_U32, &rcfg.flow_table, "N",
	  "exact flow table entries of a new instance", .min = 1024, .max = 1 << 24 },
	BT_WATCH_OPT(rcfg.watch),
	BT_SKETCH_OPTS(rcfg.sketch),
	BT_SPIE_OPTS(rcfg.spie),
	{ 0 }
};

static const struct bt_cmd_spec replay_spec = {
	"replay", "FILE",
	"Run every packet of a capture (pcap or pcapng; Ethernet, Linux cooked,\n"
	"raw IP) through the real XDP program with BPF_PROG_TEST_RUN, into a pinned\n"
	"instance that stats, heavy and trace then read like a live interface.",
	replay_opts, 1, 1,
};

/* A bad file, or a bad watch list, is reported before anything is created */
static int inputs_readable(const char *path, struct bt_watch_list *wl)
{
	struct bt_capture *cap;
	char msg[512];

	if (bt_capture_open(path, &cap, msg, sizeof(msg))) {
		bt_err("%s", msg);
		return -1;
	}
	bt_capture_close(cap);
	return rcfg.watch ? bt_watch_list_read_or_explain(rcfg.watch, wl) : 0;
}

/* The instance replayed into: made again under --reset, opened when it
 * exists, made otherwise; its watch list loaded */
static int instance_ready(struct bt_instance *inst, const struct bt_watch_list *wl)
{
	struct bt_instance_cfg cfg = {
		.flow_table_size = rcfg.flow_table, .sketch = rcfg.sketch, .spie = rcfg.spie,
	};

	struct bt_spie_cfg sp = rcfg.spie;
	struct bt_meta probe = { 0 };
	bool created;
	char differ[512];

	/* the settings refused before the instance they would replace is
	 * gone */
	if (rcfg.reset && (bt_spie_resolve(&sp, &probe) || bt_sketch_check(&rcfg.sketch)))
		return -1;
	if (rcfg.reset && bt_instance_exists(rcfg.instance) && bt_detach(rcfg.instance, false))
		return -1;
	if (bt_instance_open_or_create(rcfg.instance, &cfg, inst, &created))
		return -1;
	/* its maps have the sizes it was made with: never ignore an option */
	if (!created && bt_kept_sizes_differ(&inst->meta, &rcfg.sketch, &rcfg.spie, differ,
					     sizeof(differ))) {
		bt_err("instance '%s' exists, with the sizes it was made with: %s. Replay "
		       "without these options to add to it, or with --reset to make it anew "
		       "with them", rcfg.instance, differ);
		return 1;
	}
	if (rcfg.watch && bt_watch_load_named(inst->name, wl))
		return 1;
	if (rcfg.flows && !(inst->meta.flags & BT_META_FLOW_TABLE)) {
		bt_err("instance '%s' keeps no flow table (it was made by attach): replay "
		       "into another instance for --flows", rcfg.instance);
		return 1;
	}
	return 0;
}

/* The capture through the program, the ring turning as under the agent
 * (sealed behind, ready ahead) unless an agent keeps this instance, which
 * then does it. -1 when it could not start (said); else 0 with *err,
 * bt_replay_file's answer. */
static int replay_kept(const struct bt_instance *inst, const char *path,
		       struct bt_replay_result *r, int *err)
{
	struct bt_spie_maps sm;
	struct bt_keeper keeper = { .sm = &sm, .name = inst->name };
	int lock;

	if ((*err = bt_spie_map(inst, &sm))) {
		bt_err_errno(*err, "mapping the SPIE windows");
		return -1;
	}
	if (bt_instance_lock(inst->name, &lock))
		bt_debug("%s: another process keeps the windows turning", inst->name);
	/* the multi-buffer program takes frames past a page; before Linux
	 * 5.18 there is none, and the kernel refuses those frames */
	*err = bt_replay_file(inst->prog_mb_fd >= 0 ? inst->prog_mb_fd : inst->prog_fd, path,
			      lock >= 0 ? &keeper : NULL, &sm, rcfg.capture_time, r);
	if (lock >= 0)
		close(lock);
	bt_spie_unmap(&sm);
	return 0;
}

static int print_flow_table(const struct bt_instance *inst)
{
	struct bt_flow_ent *v;
	size_t cnt;

	if (bt_flow_table_dump(inst->flows_fd, &v, &cnt)) {
		bt_err("reading the flow table failed");
		return -1;
	}
	print_flows(v, cnt);
	free(v);
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	struct bt_watch_list wl = { 0 };
	struct bt_replay_result r;
	struct bt_instance inst;
	int n, err, ret = BT_EXIT_FAIL;
	const char *path;

	n = bt_parse_args(&replay_spec, argc, argv);
	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	path = argv[1];
	if (inputs_readable(path, &wl))
		return BT_EXIT_FAIL;
	if ((err = instance_ready(&inst, &wl)) < 0) {
		bt_watch_list_free(&wl);
		return BT_EXIT_FAIL;
	}
	if (err)
		goto out;
	if (replay_kept(&inst, path, &r, &err))
		goto out;
	if (err && !r.read) {
		bt_err("%s", r.error);
		goto out;
	}
	print_summary(path, &r, rcfg.instance, rcfg.flows);
	if (rcfg.flows && print_flow_table(&inst))
		goto out;
	if (err) {
		bt_err("%s", r.error);
		goto out;
	}
	ret = 0;
out:
	bt_watch_list_free(&wl);
	bt_instance_close(&inst);
	return ret;
}
