// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* workloads: the node's pods, containers and network namespaces, from
 * what the node holds (core/workloads.c). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include "commands.h"
#include "base/common.h"
#include "base/options.h"
#include "base/util.h"
#include "core/addr.h"
#include "core/workloads.h"
#include "instance/wltable.h"

static struct {
	const char *root;
	uint32_t repeat;
	const char *instance;
} wl_cfg;

static const struct bt_opt wl_opts[] = {
	BT_INSTANCE_OPT(wl_cfg.instance),
	{ "root", 0, BT_OPT_STRING, &wl_cfg.root, "DIR",
	  "read the runtimes' and the kubelet's files (var/log/pods, var/log/containers, "
	  "run/containerd, var/lib/containers, run/containers, var/lib/docker) under DIR "
	  "instead of / (default: $BT_WORKLOADS_ROOT, else /); /proc and /run/netns stay "
	  "the running system's" },
	{ "repeat", 0, BT_OPT_U32, &wl_cfg.repeat, "N",
	  "refresh N more times after the first scan, as the agent will, and print on stderr "
	  "what the first scan and a refresh cost", 0, 1000000 },
	{ 0 }
};

static const struct bt_cmd_spec wl_spec = {
	"workloads", "[IFACE]",
	"The node's workloads, discovered from the node itself (no Kubernetes API): each\n"
	"network namespace but the host's, from /proc/PID/ns/net and /run/netns, with\n"
	"its addresses (rtnetlink inside it), the containers whose processes are in it\n"
	"(their cgroups give the container id and the kubelet's pod UID) and their names\n"
	"(podman's, containerd's, CRI-O's and docker's files, /var/log/pods). Kind: pod,\n"
	"container, or netns (no container). Names are printed with unprintable bytes,\n"
	"spaces and backslashes as \\xHH; JSON keeps them exact. Not covered: pods on\n"
	"the host's network, other nodes' pods, addresses behind NAT. See\n"
	"docs/workloads.md.\n\n"
	"With IFACE (or --instance): that instance's table instead, as its datapath\n"
	"names packets now: each address, its workload generation's id and name (the\n"
	"agent's workloads = auto writes it, within a second of a change).",
	wl_opts, 0, 1,
};

/* IFACE's table as the datapath reads it now */
static int print_table(const char *iface)
{
	struct bt_wl_entry *v;
	struct bt_wl_names names;
	struct bt_instance inst;
	struct json_object *arr;
	char a[BT_ADDR_STRLEN], b[4 * BT_WL_NAME_LEN + 8];
	size_t n;
	int err;

	int open_rc = bt_instance_open_arg(iface, wl_cfg.instance, &inst);

	if (open_rc)
		return open_rc;
	if ((err = bt_wl_table_read(&inst, &v, &n))) {
		bt_err("workloads: cannot read %s's table: %s", inst.name, strerror(-err));
		bt_instance_close(&inst);
		return BT_EXIT_FAIL;
	}
	bt_wl_names_open(&inst, &names);
	arr = bt_g.json ? json_object_new_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = bt_wl_name_of(&names, v[i].id);

		bt_addr_str(v[i].addr, a, sizeof(a));
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "address", json_object_new_string(a));
			json_object_object_add(o, "id", json_object_new_int(v[i].id));
			json_object_object_add(o, "workload", bt_wl_name_json(&names, v[i].id));
			json_object_array_add(arr, o);
		} else {
			printf("%-39s %4u %s\n", a, v[i].id, name ? bt_wl_escape(name, b, sizeof(b)) : "-");
		}
	}
	if (arr)
		bt_json_print(arr);
	else if (!n)
		printf("%s: no address in the workload table (the agent fills it with "
		       "workloads = auto; none runs, or it found no workload)\n", inst.name);
	bt_wl_names_close(&names);
	bt_instance_close(&inst);
	free(v);
	return 0;
}

static const char *esc(const char *s, char *buf, size_t len)
{
	return *s ? bt_wl_escape(s, buf, len) : "-";
}

static void print_pids(const pid_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", p[i]);
	if (!n)
		printf("-");
}

static void print_text(const struct bt_workloads *w)
{
	char a[4 * BT_WL_NAME + 8], b[4 * BT_WL_NAME + 8];

	for (size_t i = 0; i < bt_workloads_count(w); i++) {
		const struct bt_workload *wl = bt_workloads_get(w, i);
		const struct bt_wl_container *own = NULL;

		for (size_t c = 0; c < wl->n_ctrs; c++)
			if (!own || (own->infra && !wl->ctrs[c].infra))
				own = &wl->ctrs[c];
		printf("%s", bt_wl_kind_name(wl->kind));
		if (wl->kind == BT_WL_POD) {
			printf(" %s/%s", esc(own->pod_namespace, a, sizeof(a)),
			       esc(own->pod_name, b, sizeof(b)));
			if (own->pod_uid[0])
				printf(" uid %s", own->pod_uid);
			else if (own->pod_id[0])
				printf(" id %.12s", own->pod_id);
		} else if (wl->kind == BT_WL_CONTAINER) {
			printf(" %s", esc(own->name, a, sizeof(a)));
		}
		if (own && own->runtime[0])
			printf(" runtime %s", own->runtime);
		printf("%s %llu", wl->kind == BT_WL_NETNS ? "" : " netns",
		       (unsigned long long)wl->netns_ino);
		if (wl->netns_name[0])
			printf(" %s", esc(wl->netns_name, a, sizeof(a)));
		printf("\n  addresses");
		for (size_t j = 0; j < wl->n_addrs; j++) {
			inet_ntop(wl->addrs[j].family, wl->addrs[j].addr, a, sizeof(a));
			printf(" %s/%u%s%s", a, wl->addrs[j].prefixlen, wl->addrs[j].ifname[0] ? "@" : "",
			       wl->addrs[j].ifname);
		}
		printf("%s\n", wl->n_addrs ? "" : " -");
		for (size_t c = 0; c < wl->n_ctrs; c++) {
			const struct bt_wl_container *ct = &wl->ctrs[c];

			printf("  container %s %.12s%s pids ", esc(ct->name, a, sizeof(a)),
			       ct->id[0] ? ct->id : "-", ct->infra ? " (infra)" : "");
			print_pids(ct->pids, ct->n_pids);
			printf("\n");
		}
		printf("  pids ");
		print_pids(wl->pids, wl->n_pids);
		printf("\n");
	}
	if (!bt_workloads_count(w))
		printf("no workloads: no network namespace but the host's\n");
}

int cmd_workloads(int argc, char **argv)
{
	int n = bt_parse_args(&wl_spec, argc, argv), err;
	struct bt_workloads *w;
	struct bt_wl_stats st, rs = { 0 };
	struct stat dir;
	double t0, first, rest = 0;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if ((n || wl_cfg.instance) && (wl_cfg.root || wl_cfg.repeat)) {
		bt_err("workloads: --root and --repeat are the node's scan's, not an instance's table");
		return BT_EXIT_USAGE;
	}
	if (n || wl_cfg.instance)
		return print_table(n ? argv[1] : NULL);
	/* a runtime's file missing under it is normal; the root itself, a typo */
	errno = 0;
	if (wl_cfg.root && (stat(wl_cfg.root, &dir) || !S_ISDIR(dir.st_mode))) {
		bt_err("workloads: --root %s: %s", wl_cfg.root, errno ? strerror(errno) :
		       "not a directory");
		return BT_EXIT_FAIL;
	}
	if (!(w = bt_workloads_new(wl_cfg.root))) {
		bt_err("workloads: out of memory");
		return BT_EXIT_FAIL;
	}
	t0 = bt_mono_s();
	err = bt_workloads_refresh(w);
	first = bt_mono_s() - t0;
	bt_workloads_stats(w, &st);
	for (uint32_t i = 0; !err && i < wl_cfg.repeat; i++) {
		struct bt_wl_stats s;

		t0 = bt_mono_s();
		err = bt_workloads_refresh(w);
		rest += bt_mono_s() - t0;
		bt_workloads_stats(w, &s);
		rs.entered += s.entered;
		rs.dumped += s.dumped;
		rs.named += s.named;
	}
	if (err) {
		bt_err("workloads: cannot read /proc: %s", strerror(-err));
		bt_workloads_free(w);
		return BT_EXIT_FAIL;
	}
	if (wl_cfg.repeat)
		fprintf(stderr, "bloomtap: workloads: first scan %.2f ms (%zu processes, %zu "
			"namespaces entered, %zu address dumps, %zu containers named); a refresh "
			"%.3f ms on average over %u (%zu entered, %zu dumps, %zu named in all)\n",
			first * 1e3, st.processes, st.entered, st.dumped, st.named,
			rest * 1e3 / wl_cfg.repeat, wl_cfg.repeat, rs.entered, rs.dumped, rs.named);
	if (bt_g.json)
		bt_json_print(bt_workloads_json(w));
	else
		print_text(w);
	bt_workloads_free(w);
	return 0;
}
