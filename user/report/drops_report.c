// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the kernel dropped of an instance's packets, by the running kernel's
 * reason names, as the CLI and the API answer it: totals, the devices
 * stacked on its interface, the heavy dropped flows. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "base/common.h"
#include "counters.h"
#include "drops_report.h"
#include "instance/link.h"
#include "heavy_report.h"
#include "instance/drops.h"
#include "instance/spie.h"
#include "base/options.h"

static void print_drops(const struct bt_instance *inst, size_t n);

struct json_object *bt_drop_totals_json(const struct bt_drop_total *t, int n)
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

void bt_print_drop_totals(const struct bt_drop_total *t, int n)
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
	[BT_UPPER_SEEN] = "here if seen here",
};

#define SEEN_FORMULA "1 - (1 - f_cur)(1 - f_prev)"

/* The rate at which a drop on a device stacked on the instance's
 * interface and others', of a packet the instance never saw, is taken for
 * its own (bpf/drop.bpf.h drop_seen: the digest probed in the current
 * window and the one before while it holds its bits), as the windows are
 * filled now. */
static struct json_object *seen_fpr_json(const struct bt_instance *inst)
{
	struct json_object *o = json_object_new_object();
	struct bt_spie_maps s;
	double fc = 0, fp = 0;

	if (!bt_spie_map(inst, &s)) {
		uint32_t cur = bt_spie_current(&s), w = s.meta->windows;
		uint32_t prev = cur ? cur - 1 : w - 1;

		fc = bt_window_fpr(&s, cur);
		if (prev != cur && (s.win[prev].state == BT_WIN_CLOSED ||
				    s.win[prev].state == BT_WIN_SEALED))
			fp = bt_window_fpr(&s, prev);
		bt_spie_unmap(&s);
	}
	json_object_object_add(o, "formula", json_object_new_string(SEEN_FORMULA));
	json_object_object_add(o, "f_cur", json_object_new_double(fc));
	json_object_object_add(o, "f_prev", json_object_new_double(fp));
	json_object_object_add(o, "rate", json_object_new_double(1 - (1 - fc) * (1 - fp)));
	return o;
}

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
		if (up[i].state == BT_UPPER_SEEN)
			json_object_object_add(o, "false_attribution", seen_fpr_json(inst));
		json_object_array_add(a, o);
	}
	return a;
}

bool bt_drop_suppressed(const __u64 *bits, __u32 code)
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
	json_object_object_add(o, "reasons", bt_drop_totals_json(t, n > 0 ? n : 0));
	free(t);
	bt_drops_counters(inst, c);
	json_object_object_add(o, "digested", json_object_new_uint64(c[BT_DROP_DIGESTED]));
	for (int i = BT_DROP_DIGESTED + 1; i < BT_DROP_GRO_SKBS; i++)
		json_object_object_add(nd, bt_drop_counter_names[i], json_object_new_uint64(c[i]));
	json_object_object_add(o, "not_digested", nd);
	json_object_object_add(o, "gro_skbs", json_object_new_uint64(c[BT_DROP_GRO_SKBS]));
	for (int i = BT_DROP_GRO_SKBS + 1; i < BT_DROP_CTR_MAX; i++)	/* frees, not drops */
		json_object_object_add(o, bt_drop_counter_names[i], json_object_new_uint64(c[i]));
	/* the drop digests' batches that found no clean window ready (stats
	 * counts XDP's, stats --direction egress tc egress's) */
	__u64 dc[BT_CTR_MAX];

	if (bt_instance_counters_dir(inst, BT_DIRS, dc))
		memset(dc, 0, sizeof(dc));
	json_object_object_add(o, "spie_no_ready_window",
			       json_object_new_uint64(dc[BT_CTR_SPIE_NO_READY]));
	bpf_map_lookup_elem(inst->drop_suppress_fd, &zero, bits);
	r = bt_drop_reasons(&nr);
	for (int i = 0; r && i < nr; i++)
		if (bt_drop_suppressed(bits, r[i].code))
			json_object_array_add(sup, json_object_new_string(r[i].name));
	json_object_object_add(o, "suppressed", sup);
	json_object_object_add(o, "stacked", stacked_json(inst));
	/* the workloads' devices in other namespaces (a container's veth
	 * end): digest-checked as a shared stacked device is */
	struct bt_drop_owner dev[256];
	int nw = bt_drops_workload_devices(inst, dev, 256);
	struct json_object *wd = json_object_new_object(), *wl = json_object_new_array();

	for (int i = 0; i < nw && i < 256; i++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "netns", json_object_new_uint64(dev[i].netns));
		json_object_object_add(d, "ifindex", json_object_new_uint64(dev[i].ifindex));
		json_object_array_add(wl, d);
	}
	json_object_object_add(wd, "count", json_object_new_int(nw));
	json_object_object_add(wd, "devices", wl);	/* the first 256 */
	if (nw)
		json_object_object_add(wd, "false_attribution", seen_fpr_json(inst));
	json_object_object_add(o, "workload_devices", wd);
	/* by the workloads of the drops' addresses when they were dropped */
	if (bt_workload_counts(inst, BT_WL_DROPPED, NULL, o))
		json_object_object_add(o, "workloads", NULL);
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
	       : inst->meta.flags & BT_META_NO_INGRESS
			? " [not recording: egress alone; what the interface receives is dropped"
			  " unseen, in drops --host]"
			: " [not recording: not attached, or no drop program]");
	bt_print_drop_totals(t, n > 0 ? n : 0);
	free(t);
	printf("digested %" PRIu64 "; not digested:",
	       json_object_get_uint64(json_object_object_get(o, "digested")));
	json_object_object_foreach(json_object_object_get(o, "not_digested"), key, val) {
		printf("%s %s %" PRIu64, sep, key, json_object_get_uint64(val));
		sep = ",";
	}
	printf("\nfreed, not drops here:");
	for (int i = BT_DROP_GRO_SKBS + 1; i < BT_DROP_CTR_MAX; i++)
		printf("%s %s %" PRIu64, i > BT_DROP_GRO_SKBS + 1 ? "," : "", bt_drop_counter_names[i],
		       json_object_get_uint64(json_object_object_get(o, bt_drop_counter_names[i])));
	printf("\nsuppressed (counted, no digest):");
	v = json_object_object_get(o, "suppressed");
	for (size_t i = 0; i < json_object_array_length(v); i++)
		printf("%s %s", i ? "," : "", json_object_get_string(json_object_array_get_idx(v, i)));
	printf("%s\n", json_object_array_length(v) ? "" : " none");
	v = json_object_object_get(o, "stacked");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *u = json_object_array_get_idx(v, i);

		const char *to = json_object_get_string(json_object_object_get(u, "drops"));
		struct json_object *fa = json_object_object_get(u, "false_attribution");

		printf("%s %s (%s): %s", i ? "," : "stacked devices, whose drops go to:",
		       json_object_get_string(json_object_object_get(u, "name")),
		       json_object_get_string(json_object_object_get(u, "kind")),
		       !strcmp(to, "here") ? "this instance" : fa ?
		       "this instance when its windows hold the packet's digest" : to);
		if (fa)
			printf(" (a packet never seen here taken for one at %s = %.2g)", SEEN_FORMULA,
			       json_object_get_double(json_object_object_get(fa, "rate")));
	}
	printf("%s", json_object_array_length(v) ? "\n" : "");
	v = json_object_object_get(o, "workload_devices");
	if (json_object_get_int(json_object_object_get(v, "count")))
		printf("workloads' devices in other namespaces (containers' veth ends), whose drops "
		       "go to this instance when its windows hold the packet's digest: %d (a packet "
		       "never seen here taken for one at %s = %.2g)\n",
		       json_object_get_int(json_object_object_get(v, "count")), SEEN_FORMULA,
		       json_object_get_double(json_object_object_get(
			       json_object_object_get(v, "false_attribution"), "rate")));
	if (json_object_get_uint64(json_object_object_get(o, "spie_no_ready_window")))
		printf("past their load: %" PRIu64 " batches of drop digests found no clean "
		       "window ready (nobody keeps the ring, or it is behind)\n",
		       json_object_get_uint64(json_object_object_get(o, "spie_no_ready_window")));
	json_object_put(o);
	bt_workload_counts(inst, BT_WL_DROPPED, "dropped, by the workloads their addresses had "
			   "when dropped:", NULL);
	printf("\n");
	bt_print_heavy_dropped(inst, n_heavy);
}
