// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* drops: what the kernel dropped of an instance's packets, by the running
 * kernel's reason names; the host's drops that no instance owns; the
 * reasons this kernel has, and which are suppressed. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "base/common.h"
#include "commands.h"
#include "report/drops_report.h"
#include "report/heavy_report.h"
#include "instance/drops.h"
#include "base/options.h"

static int print_host(void)
{
	struct bt_drop_total *t;
	int n = bt_drops_totals(NULL, &t);

	if (n < 0) {
		bt_err_errno(n, "reading " BT_DROPS_DIR "/drop_host");
		return n;
	}
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "unattributed", bt_drop_totals_json(t, n));
		bt_json_print(o);
	} else {
		printf("drops on interfaces without an instance (skbs)\n");
		bt_print_drop_totals(t, n);
	}
	free(t);
	return 0;
}

static int print_reasons(void)
{
	int n;
	const struct bt_drop_reason *r = bt_drop_reasons(&n);
	__u64 def[BT_DROP_REASONS / 64];

	if (!r) {
		bt_err("cannot read the kernel's drop reasons from %s", bt_drop_reasons_btf());
		return -ENOENT;
	}
	if (bt_drops_parse_suppress("default", def))
		return -EINVAL;
	if (bt_g.json) {
		struct json_object *a = json_object_new_array();

		for (int i = 0; i < n; i++) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "reason", json_object_new_string(r[i].name));
			json_object_object_add(o, "code", json_object_new_uint64(r[i].code));
			json_object_object_add(o, "suppressed_by_default",
					       json_object_new_boolean(bt_drop_suppressed(def, r[i].code)));
			json_object_array_add(a, o);
		}
		bt_json_print(a);
		return 0;
	}
	for (int i = 0; i < n; i++)
		printf("%5u  %s%s\n", r[i].code, r[i].name,
		       bt_drop_suppressed(def, r[i].code) ? "  (suppressed by default)" : "");
	return 0;
}

static struct {
	const char *instance, *suppress;
	bool host, reasons;
	uint32_t n, interval, count;
} drops_cfg = { .n = 10 };

static const struct bt_opt drops_opts[] = {
	BT_INSTANCE_OPT(drops_cfg.instance),
	{ "top", 'n', BT_OPT_U32, &drops_cfg.n, "N",
	  "heavy dropped flows to show of each interval (default 10)", .min = 1,
	  .max = 100000 },
	{ "interval", 0, BT_OPT_U32, &drops_cfg.interval, "SECONDS",
	  "end a heavy-flow interval every SECONDS and print its heavy dropped flows "
	  "(heavy --dropped --interval)", .min = 1, .max = 86400 },
	{ "count", 'c', BT_OPT_U32, &drops_cfg.count, "K", "with --interval: stop after K",
	  .min = 1, .max = UINT32_MAX },
	{ "host", 0, BT_OPT_FLAG, &drops_cfg.host, NULL,
	  "the drops on interfaces without an instance, by reason" },
	{ "reasons", 0, BT_OPT_FLAG, &drops_cfg.reasons, NULL,
	  "list the running kernel's drop reasons (codes and names, from its BTF)" },
	{ "suppress", 0, BT_OPT_STRING, &drops_cfg.suppress, "LIST",
	  "set the instance's suppressed reasons (as attach --drop-suppress)" },
	{ 0 }
};

static const struct bt_cmd_spec drops_spec = {
	"drops", "[IFACE]",
	"What the kernel dropped of the packets an instance saw, per reason (the running\n"
	"kernel's names): packets and bytes, how many got a digest and why the others\n"
	"did not, the frees that were not its drops (a raw socket's delivered echo\n"
	"replies, a shared stacked device's packets it never saw), the stacked devices\n"
	"and who gets their drops; then the heavy dropped flows of the last complete and\n"
	"the current heavy-flow interval, each with its reason (the intervals are the\n"
	"heavy flows': the agent, 'heavy --interval' or --interval here ends them).\n"
	"'bloomtap trace' says which packets were dropped.",
	drops_opts, 0, 1,
};

int cmd_drops(int argc, char **argv)
{
	int n = bt_parse_args(&drops_spec, argc, argv), ret = 0;
	struct bt_instance inst;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (drops_cfg.reasons)
		return print_reasons() ? BT_EXIT_FAIL : 0;
	if (drops_cfg.host)
		return print_host() ? BT_EXIT_FAIL : 0;
	if (drops_cfg.count && !drops_cfg.interval) {
		bt_err("drops: --count needs --interval");
		return BT_EXIT_USAGE;
	}
	if (drops_cfg.interval) {
		/* the heavy flows' loop, on the dropped flows */
		char nb[16], ib[16], cb[16], *hv[12] = { "heavy", "--dropped", "-n", nb,
							 "--interval", ib };
		int hc = 6;

		snprintf(nb, sizeof(nb), "%u", drops_cfg.n);
		snprintf(ib, sizeof(ib), "%u", drops_cfg.interval);
		if (drops_cfg.count) {
			snprintf(cb, sizeof(cb), "%u", drops_cfg.count);
			hv[hc++] = "--count";
			hv[hc++] = cb;
		}
		if (drops_cfg.instance) {
			hv[hc++] = "--instance";
			hv[hc++] = (char *)drops_cfg.instance;
		} else if (n) {
			hv[hc++] = argv[1];
		}
		hv[hc] = NULL;
		return cmd_heavy(hc, hv);
	}
	if (bt_instance_open_arg(n ? argv[1] : NULL, drops_cfg.instance, &inst))
		return BT_EXIT_FAIL;
	if (drops_cfg.suppress) {
		__u64 bits[BT_DROP_REASONS / 64];

		if (bt_drops_parse_suppress(drops_cfg.suppress, bits) ||
		    bt_drops_set_suppress(&inst, bits))
			ret = BT_EXIT_FAIL;
	}
	if (!ret)
		bt_print_drops(&inst, drops_cfg.n);
	bt_instance_close(&inst);
	return ret;
}
