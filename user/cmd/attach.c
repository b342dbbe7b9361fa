// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* attach and detach: the commands over link.c. */
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "instance/kernel.h"
#include "instance/drops.h"
#include "base/options.h"
#include "instance/watch.h"
#include "commands.h"
#include "instance/link.h"
#include "instance/create.h"
#include "base/util.h"

static struct attach_cfg {
	int mode, dir;
	bool force, tap;
	const char *watch, *drop_suppress;
	struct bt_sketch_cfg sketch;
	struct bt_spie_cfg spie;
	__u32 drop_ring, drop_head;
} attach_cfg = { .drop_ring = BT_DROP_RING_DEFAULT, .drop_head = BT_DROP_HEAD_DEFAULT };

static const struct bt_opt attach_opts[] = {
	{ "mode", 'm', BT_OPT_ENUM, &attach_cfg.mode, "MODE",
	  "XDP mode: auto tries native, then skb", .choices = bt_mode_names },
	{ "force", 'f', BT_OPT_FLAG, &attach_cfg.force, NULL,
	  "replace an XDP program that is not bloomtap's; allow --tap on an interface "
	  "with addresses" },
	BT_ATTACH_DIR_OPT(attach_cfg.dir),
	{ "tap", 0, BT_OPT_FLAG, &attach_cfg.tap, NULL,
	  "tap mode, for a mirror (SPAN) port: record every frame, then drop it, so "
	  "neither the stack nor the drop programs pay for it" },
	BT_WATCH_OPT(attach_cfg.watch),
	BT_DROPS_OPT(attach_cfg.drop_suppress),
	{ "drop-ring", 0, BT_OPT_U32, &attach_cfg.drop_ring, "N",
	  "the drop recorder's slots per CPU: the recent drops' frames that 'drops "
	  "--pcap' writes (default 512; 0: off)", .max = BT_DROP_RING_MAX },
	{ "drop-head", 0, BT_OPT_U32, &attach_cfg.drop_head, "BYTES",
	  "bytes of each dropped frame the recorder keeps (default 256, at most 9216)",
	  .min = 14, .max = BT_DROP_HEAD_MAX },
	BT_SKETCH_OPTS(attach_cfg.sketch),
	BT_SPIE_OPTS(attach_cfg.spie),
	{ 0 }
};

static const struct bt_cmd_spec attach_spec = {
	"attach", "IFACE",
	"Load bloomtap's XDP program, pin its maps under /sys/fs/bpf/bloomtap/IFACE/\n"
	"and attach it to IFACE.", attach_opts, 1, 1,
};

int cmd_attach(int argc, char **argv)
{
	int n = bt_parse_args(&attach_spec, argc, argv);

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	struct bt_watch_list wl = { 0 };

	/* a bad list is refused before anything is attached */
	if (attach_cfg.watch && bt_watch_list_read_or_explain(attach_cfg.watch, &wl))
		return BT_EXIT_FAIL;
	struct bt_attach_opts o = {
		.mode = attach_cfg.mode, .force = attach_cfg.force, .tap = attach_cfg.tap,
		.dir = attach_cfg.dir,
		.sketch = &attach_cfg.sketch, .spie = &attach_cfg.spie,
		.drop_suppress = attach_cfg.drop_suppress,
		.drop_ring_set = true, .drop_ring = attach_cfg.drop_ring,
		.drop_head = attach_cfg.drop_head,
	};

	if (bt_attach(argv[1], &o) ||
	    (attach_cfg.watch && bt_watch_load_named(argv[1], &wl))) {
		bt_watch_list_free(&wl);
		return BT_EXIT_FAIL;
	}
	bt_watch_list_free(&wl);
	if (bt_g.json) {
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "attached", json_object_new_string(argv[1]));
		json_object_object_add(j, "tap", json_object_new_boolean(attach_cfg.tap));
		json_object_object_add(j, "direction",
				       json_object_new_string(bt_attach_dir_names[attach_cfg.dir]));
		bt_json_print(j);
	}
	return 0;
}

static struct detach_cfg {
	bool keep_maps, force;
	const char *instance;
} detach_cfg;

static const struct bt_opt detach_opts[] = {
	{ "keep-maps", 'k', BT_OPT_FLAG, &detach_cfg.keep_maps, NULL,
	  "keep the pinned maps (counters stay readable; attach again reuses them)" },
	{ "force", 'f', BT_OPT_FLAG, &detach_cfg.force, NULL,
	  "detach even while an agent (or windows --every) keeps the instance (another "
	  "network namespace's instance of IFACE's name stays refused)" },
	BT_INSTANCE_OPT(detach_cfg.instance),
	{ 0 }
};

static const struct bt_cmd_spec detach_spec = {
	"detach", "[IFACE]",
	"Detach bloomtap from IFACE and remove its pins (or those of --instance NAME).\n"
	"IFACE is this network namespace's: the pins are the host's, named after the\n"
	"interface, and an instance of that name from another namespace is refused,\n"
	"with or without --force; detach it in its namespace, or name it with\n"
	"--instance NAME.",
	detach_opts, 0, 1,
};

int cmd_detach(int argc, char **argv)
{
	int n = bt_parse_args(&detach_spec, argc, argv), lock = -1, err;
	const char *name;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if ((n == 1) == !!detach_cfg.instance) {
		bt_err("detach: give IFACE or --instance NAME (see bloomtap detach --help)");
		return BT_EXIT_USAGE;
	}
	name = n == 1 ? argv[1] : detach_cfg.instance;
	/* IFACE is this namespace's interface: another's instance of that
	 * name is never removed by it (--force is about an agent, not this) */
	if (n == 1) {
		char cmd[64], more[128];

		snprintf(cmd, sizeof(cmd), "detach %s", name);
		snprintf(more, sizeof(more), "'bloomtap detach --instance %s' removes it from "
			 "here, whichever namespace it is in", name);
		if (bt_instance_here_or_explain(name, cmd, more))
			return BT_EXIT_FAIL;
	}
	/* an agent keeping the instance would go on serving frozen counters */
	if (!detach_cfg.force && bt_instance_lock(name, &lock) == -EBUSY) {
		bt_err("detach: another bloomtap process (an agent, or windows --every) keeps "
		       "instance '%s': stop it first (an agent stopped with --detach-on-exit "
		       "detaches itself), or add --force", name);
		return BT_EXIT_FAIL;
	}
	err = bt_detach(name, detach_cfg.keep_maps);
	if (lock >= 0)
		close(lock);
	if (err)
		return BT_EXIT_FAIL;
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "detached", json_object_new_string(name));
		json_object_object_add(o, "kept_maps", json_object_new_boolean(detach_cfg.keep_maps));
		bt_json_print(o);
	} else {
		bt_info("detached %s%s", name, detach_cfg.keep_maps ? " (maps kept)" : "");
	}
	return 0;
}
