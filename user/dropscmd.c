// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* drops: what the kernel dropped of an instance's packets, by the running
 * kernel's reason names; the host's drops that no instance owns; the
 * reasons this kernel has, and which are suppressed. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "common.h"
#include "commands.h"
#include "drops.h"
#include "options.h"

static void print_drops(const struct bt_instance *inst, size_t n);

static struct json_object *totals_json(const struct bt_drop_total *t, int n)
{
	struct json_object *a = json_object_new_array();
	char buf[96];

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "reason", json_object_new_string(
			bt_drop_reason_name(t[i].code, buf, sizeof(buf))));
		json_object_object_add(o, "code", json_object_new_uint64(t[i].code));
		json_object_object_add(o, "packets", json_object_new_uint64(t[i].packets));
		json_object_object_add(o, "bytes", json_object_new_uint64(t[i].bytes));
		json_object_array_add(a, o);
	}
	return a;
}

static void print_totals(const struct bt_drop_total *t, int n)
{
	char buf[96];

	if (!n) {
		printf("  none\n");
		return;
	}
	printf("  %-28s %12s %14s\n", "reason", "packets", "bytes");
	for (int i = 0; i < n; i++)
		printf("  %-28s %12" PRIu64 " %14" PRIu64 "\n",
		       bt_drop_reason_name(t[i].code, buf, sizeof(buf)), (uint64_t)t[i].packets,
		       (uint64_t)t[i].bytes);
}

static const char *const upper_states[] = {
	[BT_UPPER_OURS] = "here",
	[BT_UPPER_SHARED] = "host (shared with another instance)",
	[BT_UPPER_ITS_OWN] = "its own instance",
	[BT_UPPER_PENDING] = "nobody yet (the agent refreshes every second, attach once)",
};

/* The devices stacked on the instance's interface: a drop there (after a
 * bridge's local delivery, a VLAN's or a bond's receive) is one of its. */
static struct json_object *stacked_json(const struct bt_instance *inst)
{
	struct json_object *a = json_object_new_array();
	struct bt_drop_upper up[32];
	int n = bt_drops_uppers(inst, up, 32);

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(up[i].name));
		json_object_object_add(o, "kind", json_object_new_string(up[i].kind));
		json_object_object_add(o, "drops", json_object_new_string(upper_states[up[i].state]));
		json_object_array_add(a, o);
	}
	return a;
}

static bool suppressed(const __u64 *bits, __u32 code)
{
	return code < BT_DROP_REASONS && (bits[code / 64] >> (code % 64) & 1);
}

struct json_object *bt_drops_json(const struct bt_instance *inst, size_t n_heavy)
{
	struct json_object *o = json_object_new_object(), *nd = json_object_new_object(),
			   *sup = json_object_new_array();
	__u64 c[BT_DROP_CTR_MAX], bits[BT_DROP_REASONS / 64] = { 0 };
	struct bt_drop_total *t;
	const struct bt_drop_reason *r;
	int n = bt_drops_totals(inst, &t), nr;
	__u32 zero = 0;

	json_object_object_add(o, "instance", json_object_new_string(inst->name));
	json_object_object_add(o, "recording", json_object_new_boolean(bt_drops_registered(inst)));
	json_object_object_add(o, "reasons", totals_json(t, n > 0 ? n : 0));
	free(t);
	bt_drops_counters(inst, c);
	json_object_object_add(o, "digested", json_object_new_uint64(c[BT_DROP_DIGESTED]));
	for (int i = BT_DROP_DIGESTED + 1; i < BT_DROP_GRO_SKBS; i++)
		json_object_object_add(nd, bt_drop_counter_names[i], json_object_new_uint64(c[i]));
	json_object_object_add(o, "not_digested", nd);
	json_object_object_add(o, "gro_skbs", json_object_new_uint64(c[BT_DROP_GRO_SKBS]));
	bpf_map_lookup_elem(inst->drop_suppress_fd, &zero, bits);
	r = bt_drop_reasons(&nr);
	for (int i = 0; r && i < nr; i++)
		if (suppressed(bits, r[i].code))
			json_object_array_add(sup, json_object_new_string(r[i].name));
	json_object_object_add(o, "suppressed", sup);
	json_object_object_add(o, "stacked", stacked_json(inst));
	/* 0: without (the plain output prints them itself) */
	if (n_heavy)
		json_object_object_add(o, "heavy", bt_heavy_dropped_json(inst, n_heavy));
	return o;
}

int bt_print_drops(const struct bt_instance *inst, size_t n)
{
	if (bt_g.json) {
		bt_json_print(bt_drops_json(inst, n));
		return 0;
	}
	print_drops(inst, n);
	return 0;
}

static void print_drops(const struct bt_instance *inst, size_t n_heavy)
{
	struct json_object *o = bt_drops_json(inst, 0), *v;
	struct bt_drop_total *t;
	int n = bt_drops_totals(inst, &t);
	const char *sep = "";

	printf("instance %s: drops by reason (this kernel's names)%s\n", inst->name,
	       json_object_get_boolean(json_object_object_get(o, "recording")) ? ""
	       : bt_tap_get(inst) > 0 ? " [not recording: tap mode, no frame reaches the stack]"
			: " [not recording: not attached, or no drop program]");
	print_totals(t, n > 0 ? n : 0);
	free(t);
	printf("digested %" PRIu64 "; not digested:",
	       json_object_get_uint64(json_object_object_get(o, "digested")));
	json_object_object_foreach(json_object_object_get(o, "not_digested"), key, val) {
		printf("%s %s %" PRIu64, sep, key, json_object_get_uint64(val));
		sep = ",";
	}
	printf("\nsuppressed (counted, no digest):");
	v = json_object_object_get(o, "suppressed");
	for (size_t i = 0; i < json_object_array_length(v); i++)
		printf("%s %s", i ? "," : "", json_object_get_string(json_object_array_get_idx(v, i)));
	printf("%s\n", json_object_array_length(v) ? "" : " none");
	v = json_object_object_get(o, "stacked");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *u = json_object_array_get_idx(v, i);

		const char *to = json_object_get_string(json_object_object_get(u, "drops"));

		printf("%s %s (%s): %s", i ? "," : "stacked devices, whose drops go to:",
		       json_object_get_string(json_object_object_get(u, "name")),
		       json_object_get_string(json_object_object_get(u, "kind")),
		       !strcmp(to, "here") ? "this instance" : to);
	}
	printf("%s", json_object_array_length(v) ? "\n" : "");
	json_object_put(o);
	printf("\n");
	bt_print_heavy_dropped(inst, n_heavy);
}

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

		json_object_object_add(o, "unattributed", totals_json(t, n));
		bt_json_print(o);
	} else {
		printf("drops on interfaces without an instance (skbs)\n");
		print_totals(t, n);
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
		bt_err("cannot read the kernel's drop reasons from /sys/kernel/btf/vmlinux");
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
					       json_object_new_boolean(suppressed(def, r[i].code)));
			json_object_array_add(a, o);
		}
		bt_json_print(a);
		return 0;
	}
	for (int i = 0; i < n; i++)
		printf("%5u  %s%s\n", r[i].code, r[i].name,
		       suppressed(def, r[i].code) ? "  (suppressed by default)" : "");
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
	"What the kernel dropped of the packets an instance saw, per reason (the\n"
	"running kernel's names): packets and bytes, how many got a digest and why\n"
	"the others did not; then the heavy dropped flows of the last complete and the\n"
	"current heavy-flow interval, each with its reason (the intervals are the heavy\n"
	"flows': the agent, 'heavy --interval' or --interval here ends them). 'bloomtap\n"
	"trace' says which packets were dropped.",
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
