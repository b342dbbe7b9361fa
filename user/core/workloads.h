/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The node's workloads, from what the node itself holds (no Kubernetes
 * API): every network namespace other than the host's (found through
 * /proc/PID/ns/net and the bind mounts of /run/netns), its addresses (by
 * rtnetlink inside it), the containers whose processes live in it (their
 * cgroup names the container id and the kubelet's pod UID), and their
 * names from the runtimes' and the kubelet's files (podman's storage,
 * containerd's and CRI-O's OCI bundles, docker's config, /var/log/pods).
 * See docs/workloads.md.
 *
 * Incremental: a namespace is entered once, when first seen, to open a
 * NETLINK_ROUTE socket inside it that also listens for its address and
 * link changes; later refreshes dump its addresses again only when that
 * socket has news. A container's names are read once per id. What every
 * refresh does: one walk of /proc (a stat and, outside the host's
 * namespace, a cgroup read a process) and a readdir of /run/netns. */
#ifndef BLOOMTAP_WORKLOADS_H
#define BLOOMTAP_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <json-c/json.h>

#define BT_WL_NAME 256	/* names kept whole up to this (Kubernetes' are at
			 * most 253; a netns file name at most 255) */

struct bt_wl_addr {
	int family;		/* AF_INET or AF_INET6 */
	unsigned char addr[16];
	__u8 prefixlen;
	__u32 ifindex;
	char ifname[16];
};

/* One container, with what its runtime and the kubelet say of it. Empty
 * strings are what nobody said. */
struct bt_wl_container {
	char id[65];			/* lower-case hex, 64 digits */
	char runtime[16];		/* podman, containerd, cri-o, docker, "" */
	char name[BT_WL_NAME];
	char pod_uid[37];		/* the kubelet's, with dashes */
	char pod_id[65];		/* the runtime's sandbox (podman's pod) */
	char pod_name[BT_WL_NAME];
	char pod_namespace[BT_WL_NAME];
	bool infra;			/* the sandbox's own (pause) container */
	pid_t *pids;			/* of this scan, ascending */
	size_t n_pids;
};

enum bt_wl_kind { BT_WL_NETNS, BT_WL_CONTAINER, BT_WL_POD };

#define BT_WL_PEERED 8	/* a namespace's devices peered elsewhere, kept */

/* A workload is one network namespace: what owns an address. */
struct bt_workload {
	enum bt_wl_kind kind;
	__u64 netns_ino;
	char netns_name[BT_WL_NAME];	/* its /run/netns name, "" none */
	struct bt_wl_addr *addrs;
	size_t n_addrs;
	/* its devices whose peer or lower is in the namespace the scan runs
	 * in (IFLA_LINK_NETNSID, the id it gives that one: a veth end whose
	 * other end is the node's, a macvlan on the node's device), by
	 * ifindex: where the node hands it packets (user/instance/drops.c) */
	__u32 peered[BT_WL_PEERED];
	size_t n_peered;
	pid_t *pids;			/* every process seen in it, ascending */
	size_t n_pids;
	struct bt_wl_container *ctrs;	/* sorted by pod, then name, then id */
	size_t n_ctrs;
};

struct bt_workloads;

/* Where the runtimes' and the kubelet's files are read: "/" by default;
 * a directory holding var/log/pods, run/containerd and the like instead
 * (tests; a node's root mounted elsewhere). /proc and /run/netns are
 * always the running system's. NULL: $BT_WORKLOADS_ROOT, else "/". */
struct bt_workloads *bt_workloads_new(const char *root);
void bt_workloads_free(struct bt_workloads *w);

/* Scans again, reusing what has not changed. A namespace or a process
 * that vanishes meanwhile is left out, never an error. Returns 0, or
 * -errno when /proc cannot be read. */
int bt_workloads_refresh(struct bt_workloads *w);

/* The workloads of the last refresh, sorted by kind (pods first), then
 * names, then the namespace's inode. */
size_t bt_workloads_count(const struct bt_workloads *w);
const struct bt_workload *bt_workloads_get(const struct bt_workloads *w, size_t i);

/* What the last refresh cost: namespaces entered (first seen), address
 * dumps (first seen or changed), containers whose names were read. */
struct bt_wl_stats {
	size_t processes, namespaces, entered, dumped, named;
	size_t denied;		/* new namespaces not opened or entered: EPERM, EACCES */
	size_t denied_pids;	/* processes whose ns/net was not permitted */
};
void bt_workloads_stats(const struct bt_workloads *w, struct bt_wl_stats *s);

/* The last refresh as a JSON array (names exact), for -j and the API. */
struct json_object *bt_workloads_json(const struct bt_workloads *w);

const char *bt_wl_kind_name(enum bt_wl_kind k);

/* s with every byte that is not printable ASCII, a space or a backslash
 * written \xHH, into buf (cut at len); returns buf. For text output. */
const char *bt_wl_escape(const char *s, char *buf, size_t len);

/* Parses one /proc/PID/cgroup text: the container id, its runtime (from
 * the scope's prefix), podman's pod id and the kubelet's pod UID.
 * Returns true when any was found. Exposed for the unit tests. */
bool bt_wl_parse_cgroup(const char *text, struct bt_wl_container *c);

#endif /* BLOOMTAP_WORKLOADS_H */
