// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* stats: the per-CPU counters, summed. */
#include <inttypes.h>
#include "common.h"
#include "commands.h"
#include "options.h"

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
};
_Static_assert(BT_CTR_MAX == 22, "a name for every counter");

int bt_print_stats(const struct bt_instance *inst)
{
	__u64 c[BT_CTR_MAX];
	int err = bt_instance_counters(inst, c);

	if (err) {
		bt_err_errno(err, "reading the counters map");
		return err;
	}
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "instance", json_object_new_string(inst->name));
		for (int i = 0; i < BT_CTR_MAX; i++)
			json_object_object_add(o, bt_counter_names[i], json_object_new_uint64(c[i]));
		bt_json_print(o);
		return 0;
	}
	printf("instance %s\n", inst->name);
	for (int i = 0; i < BT_CTR_MAX; i++)
		printf("  %-16s %" PRIu64 "\n", bt_counter_names[i], (uint64_t)c[i]);
	return 0;
}

static const char *stats_instance;
static const struct bt_opt stats_opts[] = {
	BT_INSTANCE_OPT(stats_instance),
	{ 0 }
};

static const struct bt_cmd_spec stats_spec = {
	"stats", "[IFACE]",
	"Print the datapath's counters, summed over CPUs: packets and bytes, per L3\n"
	"and L4 protocol, fragments, VLAN-tagged, truncated, malformed.",
	stats_opts, 0, 1,
};

int cmd_stats(int argc, char **argv)
{
	int n = bt_parse_args(&stats_spec, argc, argv), ret;
	struct bt_instance inst;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (bt_instance_open_arg(n ? argv[1] : NULL, stats_instance, &inst))
		return BT_EXIT_FAIL;
	ret = bt_print_stats(&inst) ? BT_EXIT_FAIL : 0;
	bt_instance_close(&inst);
	return ret;
}
