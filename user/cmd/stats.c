// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* stats: the per-CPU counters, summed. */
#include <inttypes.h>
#include "base/common.h"
#include "commands.h"
#include "report/counters.h"
#include "base/options.h"

static const char *stats_instance;
static int stats_dir;

static const struct bt_opt stats_opts[] = {
	BT_INSTANCE_OPT(stats_instance),
	BT_DIRECTION_OPT(stats_dir),
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
	int open_rc = bt_instance_open_arg(n ? argv[1] : NULL, stats_instance, &inst);

	if (open_rc)
		return open_rc;
	ret = bt_instance_records(&inst, stats_dir) || bt_print_stats(&inst, stats_dir) ?
		      BT_EXIT_FAIL : 0;
	bt_instance_close(&inst);
	return ret;
}
