// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* status: every instance, what it is attached to and how. */
#include <inttypes.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "base/common.h"
#include "instance/recorder.h"
#include "instance/drops.h"
#include "instance/kernel.h"
#include "commands.h"
#include "instance/link.h"
#include "base/options.h"

/* elsewhere: the instance is an interface's of another network namespace,
 * whose index link_ifindex is there */
static const char *attach_state(int link_ifindex, bool elsewhere)
{
	if (link_ifindex > 0)
		return elsewhere ? "other netns" : "attached";
	if (link_ifindex == 0)
		return "interface gone";
	return "not attached";
}

static __u32 prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The drop recorder's size and counts (attach --drop-ring) */
static struct json_object *recorder_json(const struct bt_instance *inst)
{
	struct json_object *o = json_object_new_object();
	struct bt_drop_rec_pos c = { 0 };
	__u32 pid = 0;

	bt_recorder_follower(inst, &pid);	/* a killed one's flag cleared */
	bt_recorder_counts(inst, &c);
	json_object_object_add(o, "slots_per_cpu", json_object_new_int64(inst->meta.drop_ring));
	json_object_object_add(o, "head_bytes", json_object_new_int64(inst->meta.drop_head));
	json_object_object_add(o, "bytes_per_cpu",
			       json_object_new_uint64(bt_recorder_bytes_per_cpu(&inst->meta)));
	json_object_object_add(o, "records", json_object_new_uint64(c.written));
	json_object_object_add(o, "overwritten", json_object_new_uint64(c.overwritten));
	json_object_object_add(o, "follow_sent", json_object_new_uint64(c.follow_sent));
	json_object_object_add(o, "follow_lost", json_object_new_uint64(c.follow_lost));
	json_object_object_add(o, "follower_pid", json_object_new_int64(pid));
	return o;
}

static void status_one(const char *name, struct json_object *arr)
{
	struct bt_instance inst;
	int link = bt_instance_link_ifindex(name), err;
	const char *kind, *mode;
	char created[32] = "?";

	err = bt_instance_open(name, &inst);
	if (err) {
		const char *why = err == -EPROTO ? "made by an incompatible bloomtap (detach "
						   "removes it)" : strerror(-err);

		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(name));
			json_object_object_add(o, "error", json_object_new_string(why));
			json_object_array_add(arr, o);
		} else {
			printf("%-16s unreadable: %s\n", name, why);
		}
		return;
	}
	/* interface names are per namespace: another's ifname is not ours */
	bool elsewhere = bt_meta_elsewhere(&inst.meta);

	kind = inst.meta.flags & BT_META_ATTACHED ? "interface" : "replay";
	mode = link < 0 || inst.meta.flags & BT_META_NO_INGRESS ? "-"
	       : inst.meta.flags & BT_META_SKB_MODE ? "skb" : "native";
	time_t t = inst.meta.created_ns / 1000000000ULL;
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	/* the host's drop program hands it this instance's drops */
	bool drops = bt_drops_registered(&inst);
	/* tap mode: every frame dropped once recorded (attach --tap) */
	bool tap = bt_tap_get(&inst) > 0;
	struct bt_drop_rec_pos rc;
	__u32 fpid = 0;

	if (arr) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "kind", json_object_new_string(kind));
		json_object_object_add(o, "ifname", json_object_new_string(inst.meta.ifname));
		json_object_object_add(o, "ifindex", json_object_new_int(inst.meta.ifindex));
		json_object_object_add(o, "state",
				       json_object_new_string(attach_state(link, elsewhere)));
		json_object_object_add(o, "netns", json_object_new_uint64(inst.meta.netns));
		json_object_object_add(o, "here", json_object_new_boolean(!elsewhere));
		json_object_object_add(o, "mode", json_object_new_string(mode));
		json_object_object_add(o, "prog_id", json_object_new_int64(prog_id(inst.prog_fd)));
		json_object_object_add(o, "flow_table", json_object_new_int64(inst.meta.flow_table_size));
		json_object_object_add(o, "created", json_object_new_string(created));
		json_object_object_add(o, "drops_recording", json_object_new_boolean(drops));
		json_object_object_add(o, "tap", json_object_new_boolean(tap));
		json_object_object_add(o, "direction",
				       json_object_new_string(bt_attach_dir_of(&inst.meta)));
		json_object_object_add(o, "egress_hook",
				       json_object_new_string(bt_egress_hook(&inst.meta)));
		json_object_object_add(o, "multi_buffer", json_object_new_boolean(inst.prog_mb_fd >= 0));
		json_object_object_add(o, "kernel_features_off", bt_kernel_off_json());
		json_object_object_add(o, "drop_recorder", recorder_json(&inst));
		json_object_array_add(arr, o);
	} else {
		char ns[96] = "";

		if (elsewhere)
			snprintf(ns, sizeof(ns), "  of another network namespace, net:[%u] "
				 "(not this one's %.16s)", inst.meta.netns, inst.meta.ifname);
		printf("%-16s %-9s %-16s %-14s %-6s prog %-6u flow table %-8u created %s%s%s%s%s%s\n",
		       name, kind, inst.meta.ifname[0] ? inst.meta.ifname : "-",
		       attach_state(link, elsewhere), mode, prog_id(inst.prog_fd),
		       inst.meta.flow_table_size, created, ns, drops ? "  drops recorded" : "",
		       tap ? "  tap mode (frames dropped once recorded)" : "",
		       inst.meta.flags & BT_META_NO_INGRESS ? "  egress alone: "
		       : inst.meta.flags & BT_META_EGRESS ? "  egress recorded: " : "",
		       inst.meta.flags & BT_META_EGRESS ? bt_egress_hook(&inst.meta) : "");
		if (inst.meta.drop_ring && !bt_recorder_follower(&inst, &fpid) &&
		    !bt_recorder_counts(&inst, &rc))
			printf("%-16s drop recorder: %u slots a CPU of %u bytes (%" PRIu64
			       " bytes a CPU), %" PRIu64 " records, %" PRIu64
			       " overwritten before a follower read them, %" PRIu64 " lost by followers%s\n", "",
			       inst.meta.drop_ring, inst.meta.drop_head,
			       bt_recorder_bytes_per_cpu(&inst.meta), (uint64_t)rc.written,
			       (uint64_t)rc.overwritten, (uint64_t)rc.follow_lost,
			       fpid ? ", a follower runs" : "");
	}
	bt_instance_close(&inst);
}

static const struct bt_cmd_spec status_spec = {
	"status", "",
	"List bloomtap instances: interface, attachment, mode, program, sizes.",
	NULL, 0, 0,
};

int cmd_status(int argc, char **argv)
{
	int n = bt_parse_args(&status_spec, argc, argv), cnt, err;
	struct json_object *arr = NULL;
	char **names;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	err = bt_instance_names(&names, &cnt);
	if (err) {
		if (err != -EXDEV)
			bt_err_errno(err, "listing " BT_PIN_ROOT);
		return BT_EXIT_FAIL;
	}
	if (bt_g.json)
		arr = json_object_new_array();
	else if (!cnt)
		printf("no bloomtap instances (pins under %s)\n", BT_PIN_ROOT);
	for (int i = 0; i < cnt; i++)
		status_one(names[i], arr);
	if (!arr)
		bt_kernel_print_off();
	if (arr)
		bt_json_print(arr);
	bt_instance_names_free(names, cnt);
	return 0;
}
