// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The datapath's per-CPU counters, summed, by name. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "base/common.h"
#include "counters.h"
#include "base/options.h"
#include "core/workloads.h"
#include "instance/wltable.h"

const char *const bt_counter_names[BT_CTR_MAX] = {
	[BT_CTR_PACKETS] = "packets",
	[BT_CTR_BYTES] = "bytes",
	[BT_CTR_L3_IPV4] = "ipv4",
	[BT_CTR_L3_IPV6] = "ipv6",
	[BT_CTR_L3_OTHER] = "l3_other",
	[BT_CTR_L4_TCP] = "tcp",
	[BT_CTR_L4_UDP] = "udp",
	[BT_CTR_L4_SCTP] = "sctp",
	[BT_CTR_L4_ICMP] = "icmp",
	[BT_CTR_L4_ICMPV6] = "icmpv6",
	[BT_CTR_L4_OTHER] = "l4_other",
	[BT_CTR_FRAGMENTS] = "fragments",
	[BT_CTR_VLAN] = "vlan",
	[BT_CTR_TRUNCATED] = "truncated",
	[BT_CTR_MALFORMED] = "malformed",
	[BT_CTR_TOO_DEEP] = "too_deep",
	[BT_CTR_FLOW_TABLE_FULL] = "flow_table_full",
	[BT_CTR_NOMINATED] = "nominated",
	[BT_CTR_FM_FULL] = "flow_memory_full",
	[BT_CTR_SPIE_INSERTED] = "digests",
	[BT_CTR_SPIE_PRESENT] = "digests_present",
	[BT_CTR_SPIE_NO_READY] = "spie_no_ready_window",
	[BT_CTR_GSO_SEGMENTS] = "gso_segments",
	[BT_CTR_GSO_NOT_DIGESTED] = "gso_not_digested",
};
_Static_assert(BT_CTR_MAX == 24, "a name for every counter");

int bt_workload_counts(const struct bt_instance *inst, int stage, const char *title,
		       struct json_object *o)
{
	struct bt_watch_count *n = calloc(BT_WL_IDS, sizeof(*n));
	struct json_object *arr = o ? json_object_new_array() : NULL;
	struct bt_wl_names wl;
	bool head = false;
	int err;

	if (!n)
		return -ENOMEM;
	if ((err = bt_wl_counts(inst, stage, n))) {
		free(n);
		json_object_put(arr);
		return err;
	}
	bt_wl_names_open(inst, &wl);
	for (__u32 id = 1; id < BT_WL_IDS; id++) {
		const struct bt_watch_count *x = &n[id];
		const char *name = bt_wl_name_of(&wl, id);
		char e[2 * BT_WL_NAME_LEN];

		if (!x->packets[0] && !x->packets[1])
			continue;
		if (arr) {
			struct json_object *w = json_object_new_object();

			json_object_object_add(w, "workload", bt_wl_name_json(&wl, id));
			json_object_object_add(w, "id", json_object_new_int(id));
			json_object_object_add(w, "src_packets", json_object_new_uint64(x->packets[0]));
			json_object_object_add(w, "src_bytes", json_object_new_uint64(x->bytes[0]));
			json_object_object_add(w, "dst_packets", json_object_new_uint64(x->packets[1]));
			json_object_object_add(w, "dst_bytes", json_object_new_uint64(x->bytes[1]));
			json_object_array_add(arr, w);
			continue;
		}
		if (!head && title)
			printf("%s\n", title);
		if (!head)
			printf("  %-40s %5s %12s %14s %12s %14s\n", "workload", "id", "src_packets",
			       "src_bytes", "dst_packets", "dst_bytes");
		head = true;
		printf("  %-40s %5u %12" PRIu64 " %14" PRIu64 " %12" PRIu64 " %14" PRIu64 "\n",
		       name ? bt_wl_escape(name, e, sizeof(e)) : "-", id, (uint64_t)x->packets[0],
		       (uint64_t)x->bytes[0], (uint64_t)x->packets[1], (uint64_t)x->bytes[1]);
	}
	if (o)
		json_object_object_add(o, "workloads", arr);
	bt_wl_names_close(&wl);
	free(n);
	return 0;
}

int bt_print_stats(const struct bt_instance *inst, enum bt_direction dir)
{
	__u64 c[BT_CTR_MAX];
	int err = bt_instance_counters_dir(inst, dir, c);

	if (err) {
		bt_err_errno(err, "reading the counters map");
		return err;
	}
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "instance", json_object_new_string(inst->name));
		json_object_object_add(o, "direction", json_object_new_string(
			dir == BT_DIR_EGRESS ? "egress" : "ingress"));
		for (int i = 0; i < BT_CTR_MAX; i++)
			json_object_object_add(o, bt_counter_names[i], json_object_new_uint64(c[i]));
		if ((err = bt_workload_counts(inst, dir, NULL, o))) {
			json_object_put(o);
			bt_err_errno(err, "reading the workloads' counters");
			return err;
		}
		bt_json_print(o);
		return 0;
	}
	printf("instance %s%s\n", inst->name, dir == BT_DIR_EGRESS ? " (egress)" : "");
	for (int i = 0; i < BT_CTR_MAX; i++)
		printf("  %-16s %" PRIu64 "\n", bt_counter_names[i], (uint64_t)c[i]);
	if ((err = bt_workload_counts(inst, dir, NULL, NULL)))
		bt_err_errno(err, "reading the workloads' counters");
	return err;
}
