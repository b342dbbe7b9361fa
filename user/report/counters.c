// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The datapath's per-CPU counters, summed, by name. */
#include <inttypes.h>
#include "base/common.h"
#include "counters.h"
#include "base/options.h"

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
		bt_json_print(o);
		return 0;
	}
	printf("instance %s%s\n", inst->name, dir == BT_DIR_EGRESS ? " (egress)" : "");
	for (int i = 0; i < BT_CTR_MAX; i++)
		printf("  %-16s %" PRIu64 "\n", bt_counter_names[i], (uint64_t)c[i]);
	return 0;
}
