// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The node's workloads from /proc, /run/netns, rtnetlink and the
 * runtimes' files (see workloads.h and docs/workloads.md). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_addr.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "base/common.h"
#include "base/util.h"
#include "workloads.h"

/* a container's names, read once per id (names do not change for an id) */
struct ctr_ent {
	struct bt_wl_container c;	/* pids unused here */
	bool named;			/* a runtime or the kubelet answered */
	bool seen;			/* in this refresh */
};

/* a namespace seen before: its socket inside it, and what it holds */
struct ns_ent {
	__u64 ino;
	int fd;				/* NETLINK_ROUTE inside it, -1 none */
	bool dumped;			/* addrs hold a whole dump */
	bool news;			/* its socket is readable */
	bool alive;			/* entered in this refresh, or kept */
	int denied;			/* EPERM/EACCES opening or entering it */
	struct bt_wl_addr *addrs;
	size_t n_addrs;
	__u32 peered[BT_WL_PEERED];	/* as struct bt_workload's */
	size_t n_peered;
};

/* what the walk found: a process (pid > 0) or a /run/netns name */
struct sighting {
	__u64 ino;
	pid_t pid;
	long ctr;			/* index into ctrs, -1 none */
	const char *name;		/* /run/netns entry (the dir cache's) */
};

/* a file read again only when its mtime or size moved */
struct cached_file {
	char path[512];
	struct timespec mtime;
	off_t size;
	char *data;
	size_t len;
	struct json_object *json;	/* data parsed, when asked for */
};

/* a /run/netns directory's entries, read again when its mtime moves */
struct dir_cache {
	ino_t dir_ino;
	struct timespec mtim;
	char **paths;
	__u64 *inos;
	size_t n;
	bool valid;
};

struct bt_workloads {
	char root[512];
	int epfd;			/* every kept socket: which have news */
	struct dir_cache dirs[2];
	__u64 host_ino[2];
	struct ctr_ent *ctrs;
	size_t n_ctrs, cap_ctrs;
	struct ns_ent *ns;		/* sorted by ino */
	size_t n_ns;
	struct bt_workload *wl;
	size_t n_wl;
	struct bt_wl_stats stats;
	struct cached_file bolt, containers_json;
	__u32 seq;
	bool warned_denied;
};

const char *bt_wl_kind_name(enum bt_wl_kind k)
{
	return k == BT_WL_POD ? "pod" : k == BT_WL_CONTAINER ? "container" : "netns";
}

const char *bt_wl_escape(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; *s && o + 5 < len; s++) {
		unsigned char ch = *s;

		if (ch > ' ' && ch < 0x7f && ch != '\\')
			buf[o++] = ch;
		else
			o += snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	buf[o] = 0;
	return buf;
}

/* ---- cgroups ---- */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* a 36-character pod UID at s, dashes or (systemd) underscores */
static bool uid_at(const char *s, size_t avail, char out[37])
{
	char uid[37];

	if (avail < 36)
		return false;
	for (int i = 0; i < 36; i++) {
		char ch = s[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? ch != '-' && ch != '_' : !isxdigit((unsigned char)ch))
			return false;
		uid[i] = dash ? '-' : tolower((unsigned char)ch);
	}
	uid[36] = 0;
	if (avail > 36 && isxdigit((unsigned char)s[36]))
		return false;
	/* out untouched unless it matched: the next part of the path is tried
	 * only while no UID was found */
	memcpy(out, uid, sizeof(uid));
	return true;
}

/* the scopes' prefixes: systemd's driver names a container's scope
 * PREFIX-ID.scope, cgroupfs names its directory PREFIX-ID (podman) or ID */
static const struct {
	const char *prefix, *runtime;
} scopes[] = {
	{ "libpod-", "podman" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "docker-", "docker" },
};

/* The outermost match wins: a container with a cgroup delegated to it
 * (systemd inside) may make libpod-ID.scope or podUID below its own, and
 * must not take another container's or pod's name that way. */
static bool parse_path(const char *path, size_t plen, struct bt_wl_container *c)
{
	bool kube = memmem(path, plen, "kubepods", 8) != NULL;
	char bare[65] = "", prev[64] = "";
	const char *p = path, *end = path + plen;

	memset(c, 0, sizeof(*c));
	while (p < end) {
		const char *e = memchr(p, '/', end - p);
		size_t n;

		e = e ? e : end;
		n = e - p;
		if (n > 6 && (!memcmp(e - 6, ".scope", 6) || !memcmp(e - 6, ".slice", 6)))
			n -= 6;
		/* podman's pod under systemd: machine-libpod_pod_ID.slice */
		const char *lp = memmem(p, n, "libpod_pod_", 11);

		if (lp && p + n - (lp + 11) == 64 && is_hex(lp + 11, 64) && !c->pod_id[0])
			memcpy(c->pod_id, lp + 11, 64);
		for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
			size_t l = strlen(scopes[i].prefix);

			if (!c->id[0] && n == l + 64 && !memcmp(p, scopes[i].prefix, l) &&
			    is_hex(p + l, 64)) {
				memcpy(c->id, p + l, 64);
				c->id[64] = 0;
				snprintf(c->runtime, sizeof(c->runtime), "%s", scopes[i].runtime);
				/* podman's pod under cgroupfs: .../POD_ID/libpod-ID */
				if (!strcmp(scopes[i].runtime, "podman") && bare[0] && !c->pod_id[0])
					memcpy(c->pod_id, bare, 65);
			}
		}
		if (!bare[0] && n == 64 && is_hex(p, 64)) {
			memcpy(bare, p, 64);
			bare[64] = 0;
			if (!c->id[0] && !strcmp(prev, "docker"))
				snprintf(c->runtime, sizeof(c->runtime), "docker");
			/* the kubelet's cgroupfs and docker's name the container
			 * bare: it is the container here, whatever lies below */
			if (!c->id[0] && (kube || !strcmp(prev, "docker")))
				memcpy(c->id, bare, 65);
		}
		/* the kubelet's pod: kubepods-QOS-podUID.slice or podUID */
		if (kube && !c->pod_uid[0])
			for (const char *q = p; (q = memmem(q, p + n - q, "pod", 3)); q += 3)
				if (uid_at(q + 3, p + n - (q + 3), c->pod_uid))
					break;
		snprintf(prev, sizeof(prev), "%.*s", (int)(n < 63 ? n : 63), p);
		p = e + 1;
	}
	/* cgroupfs under the kubelet, or docker's: the id bare, last */
	if (!c->id[0] && bare[0] && strcmp(bare, c->pod_id)) {
		memcpy(c->id, bare, 65);
		if (!kube && strcmp(c->runtime, "docker"))
			c->runtime[0] = 0;
	}
	if (!c->id[0] && strcmp(c->runtime, "docker"))
		c->runtime[0] = 0;
	return c->id[0] || c->pod_uid[0];
}

bool bt_wl_parse_cgroup(const char *text, struct bt_wl_container *c)
{
	/* the unified hierarchy's line (0::) first, then systemd's named
	 * one, then any controller's: v1 hosts may leave 0:: at "/" */
	for (int pass = 0; pass < 3; pass++) {
		for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			const char *c1 = strchr(l, ':'), *c2, *nl = strchr(l, '\n');
			size_t plen;

			if (!c1 || (nl && c1 > nl) || !(c2 = strchr(c1 + 1, ':')) || (nl && c2 > nl))
				continue;
			bool v2 = c2 == c1 + 1 && c1 - l == 1 && *l == '0';
			bool sd = c2 - c1 - 1 == 12 && !memcmp(c1 + 1, "name=systemd", 12);

			if ((pass == 0 && !v2) || (pass == 1 && !sd) || (pass == 2 && (v2 || sd)))
				continue;
			plen = (nl ? nl : c2 + 1 + strlen(c2 + 1)) - (c2 + 1);
			if (parse_path(c2 + 1, plen, c))
				return true;
		}
	}
	memset(c, 0, sizeof(*c));
	return false;
}

/* ---- the runtimes' and the kubelet's files ---- */

static void rooted(const struct bt_workloads *w, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void rooted(const struct bt_workloads *w, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s", strcmp(w->root, "/") ? w->root : "");

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void cached_read(struct cached_file *f, const char *path)
{
	struct stat st;
	FILE *fp;

	if (strcmp(f->path, path)) {
		free(f->data);
		json_object_put(f->json);
		memset(f, 0, sizeof(*f));
		snprintf(f->path, sizeof(f->path), "%s", path);
	}
	if (!stat(path, &st) && f->data && st.st_size == f->size &&
	    st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec == f->mtime.tv_nsec)
		return;
	free(f->data);
	f->data = NULL;
	f->len = 0;
	json_object_put(f->json);
	f->json = NULL;
	if (stat(path, &st))
		return;
	if (!(fp = fopen(path, "re")))
		return;
	f->data = malloc(st.st_size + 1);
	if (f->data) {
		f->len = fread(f->data, 1, st.st_size, fp);
		f->data[f->len] = 0;
	}
	fclose(fp);
	f->size = st.st_size;
	f->mtime = st.st_mtim;
}

static void set(char *dst, size_t len, const char *src)
{
	if (src && *src && !*dst)
		snprintf(dst, len, "%s", src);
}
#define SET(dst, src) set(dst, sizeof(dst), src)

static const char *ann(struct json_object *a, const char *key)
{
	struct json_object *v;

	return a && json_object_object_get_ex(a, key, &v) ? json_object_get_string(v) : NULL;
}

/* an OCI bundle's config.json: the annotations CRI-O, containerd and
 * podman write. Returns true when the file was there. */
static bool from_bundle(const char *path, struct bt_wl_container *c, const char *runtime)
{
	struct json_object *cfg = json_object_from_file(path), *a = NULL;
	const char *mgr, *type;

	if (!cfg)
		return false;
	json_object_object_get_ex(cfg, "annotations", &a);
	mgr = ann(a, "io.container.manager");
	if (!strcmp(runtime, "containerd")) {
		SET(c->name, ann(a, "io.kubernetes.cri.container-name"));
		SET(c->pod_name, ann(a, "io.kubernetes.cri.sandbox-name"));
		SET(c->pod_namespace, ann(a, "io.kubernetes.cri.sandbox-namespace"));
		SET(c->pod_uid, ann(a, "io.kubernetes.cri.sandbox-uid"));
		SET(c->pod_id, ann(a, "io.kubernetes.cri.sandbox-id"));
		type = ann(a, "io.kubernetes.cri.container-type");
	} else {
		/* containers/storage: CRI-O's, or podman's (which writes some
		 * of CRI-O's keys too, and its manager) */
		runtime = mgr && !strcmp(mgr, "libpod") ? "podman" : "cri-o";
		SET(c->name, ann(a, "io.kubernetes.container.name"));
		SET(c->pod_name, ann(a, "io.kubernetes.pod.name"));
		SET(c->pod_namespace, ann(a, "io.kubernetes.pod.namespace"));
		SET(c->pod_uid, ann(a, "io.kubernetes.pod.uid"));
		if (!strcmp(runtime, "cri-o"))
			SET(c->pod_id, ann(a, "io.kubernetes.cri-o.SandboxID"));
		type = ann(a, "io.kubernetes.cri-o.ContainerType");
	}
	if (type && !strcmp(type, "sandbox"))
		c->infra = true;
	snprintf(c->runtime, sizeof(c->runtime), "%s", runtime);
	json_object_put(cfg);
	return true;
}

/* podman's names: containers.json of containers/storage ("names"), and
 * its pod's name from libpod's state database, whose values are the
 * pods' JSON configurations, stored whole (a bbolt file: no parser
 * needed to find {"id":"POD","name":"NAME" in it) */
static void from_podman(struct bt_workloads *w, struct bt_wl_container *c)
{
	char path[600], key[96];

	rooted(w, path, sizeof(path), "/var/lib/containers/storage/overlay-containers/containers.json");
	cached_read(&w->containers_json, path);
	if (w->containers_json.data && !w->containers_json.json)
		w->containers_json.json = json_tokener_parse(w->containers_json.data);
	if (w->containers_json.json && !c->name[0]) {
		struct json_object *all = w->containers_json.json;

		for (size_t i = 0; all && i < json_object_array_length(all); i++) {
			struct json_object *e = json_object_array_get_idx(all, i), *v;

			if (!json_object_object_get_ex(e, "id", &v) ||
			    strcmp(json_object_get_string(v), c->id))
				continue;
			if (json_object_object_get_ex(e, "names", &v) && json_object_array_length(v))
				SET(c->name, json_object_get_string(json_object_array_get_idx(v, 0)));
			break;
		}
	}
	if (!c->pod_id[0])
		return;
	if (c->name[0] && !strncmp(c->name, c->pod_id, 12) && !strcmp(c->name + 12, "-infra"))
		c->infra = true;
	rooted(w, path, sizeof(path), "/var/lib/containers/storage/libpod/bolt_state.db");
	cached_read(&w->bolt, path);
	snprintf(key, sizeof(key), "{\"id\":\"%s\",\"name\":\"", c->pod_id);
	const char *hit = w->bolt.data ? memmem(w->bolt.data, w->bolt.len, key, strlen(key)) : NULL;

	if (hit) {
		const char *s = hit + strlen(key), *e = s;

		while (e < w->bolt.data + w->bolt.len && *e != '"' && *e != '\\' && e - s < BT_WL_NAME - 1)
			e++;
		if (e < w->bolt.data + w->bolt.len && *e == '"')
			snprintf(c->pod_name, sizeof(c->pod_name), "%.*s", (int)(e - s), s);
	}
}

static void from_docker(struct bt_workloads *w, struct bt_wl_container *c)
{
	char path[600];
	struct json_object *cfg, *v;

	rooted(w, path, sizeof(path), "/var/lib/docker/containers/%s/config.v2.json", c->id);
	if (!(cfg = json_object_from_file(path)))
		return;
	if (json_object_object_get_ex(cfg, "Name", &v)) {
		const char *n = json_object_get_string(v);

		SET(c->name, n && *n == '/' ? n + 1 : n);
	}
	snprintf(c->runtime, sizeof(c->runtime), "docker");
	json_object_put(cfg);
}

static bool containerd_bundle(struct bt_workloads *w, struct bt_wl_container *c)
{
	char dir[600], path[1200];
	struct dirent *d;
	DIR *dp;
	bool found = false;

	rooted(w, dir, sizeof(dir), "/run/containerd/io.containerd.runtime.v2.task");
	if (!(dp = opendir(dir)))
		return false;
	while (!found && (d = readdir(dp)))
		if (d->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s/%s/config.json", dir, d->d_name, c->id);
			found = from_bundle(path, c, "containerd");
		}
	closedir(dp);
	return found;
}

/* the kubelet's logs: /var/log/pods/NAMESPACE_NAME_UID/CONTAINER/ and
 * /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log (names in
 * Kubernetes hold no '_', so the fields split on it) */
static void from_kubelet(struct bt_workloads *w, struct bt_wl_container *c)
{
	char dir[600];
	struct dirent *d;
	DIR *dp;

	if (c->pod_uid[0] && (!c->pod_name[0] || !c->pod_namespace[0])) {
		rooted(w, dir, sizeof(dir), "/var/log/pods");
		if ((dp = opendir(dir))) {
			while ((d = readdir(dp))) {
				char *u = strrchr(d->d_name, '_'), *n = strchr(d->d_name, '_');

				if (!u || u == n || strcmp(u + 1, c->pod_uid))
					continue;
				snprintf(c->pod_namespace, sizeof(c->pod_namespace), "%.*s",
					 (int)(n - d->d_name), d->d_name);
				snprintf(c->pod_name, sizeof(c->pod_name), "%.*s",
					 (int)(u - n - 1), n + 1);
				break;
			}
			closedir(dp);
		}
	}
	if (c->name[0] || !c->id[0])
		return;
	rooted(w, dir, sizeof(dir), "/var/log/containers");
	if (!(dp = opendir(dir)))
		return;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);
		char *n1, *n2;

		if (l < 70 || strcmp(d->d_name + l - 4, ".log") || d->d_name[l - 69] != '-' ||
		    memcmp(d->d_name + l - 68, c->id, 64))
			continue;
		if (!(n1 = strchr(d->d_name, '_')) || !(n2 = strchr(n1 + 1, '_')) ||
		    n2 > d->d_name + l - 69)
			continue;
		snprintf(c->name, sizeof(c->name), "%.*s", (int)(d->d_name + l - 69 - n2 - 1), n2 + 1);
		if (!c->pod_name[0])
			snprintf(c->pod_name, sizeof(c->pod_name), "%.*s", (int)(n1 - d->d_name),
				 d->d_name);
		if (!c->pod_namespace[0])
			snprintf(c->pod_namespace, sizeof(c->pod_namespace), "%.*s",
				 (int)(n2 - n1 - 1), n1 + 1);
		break;
	}
	closedir(dp);
}

static void name_container(struct bt_workloads *w, struct ctr_ent *e)
{
	struct bt_wl_container *c = &e->c;
	char path[600];
	const char *rt = c->runtime;
	bool bundle = false;

	if (!c->id[0]) {
		from_kubelet(w, c);
		e->named = c->pod_name[0];
		return;
	}
	if (!*rt || !strcmp(rt, "containerd"))
		bundle = containerd_bundle(w, c);
	if (!bundle && (!*rt || !strcmp(rt, "podman") || !strcmp(rt, "cri-o"))) {
		rooted(w, path, sizeof(path),
		       "/run/containers/storage/overlay-containers/%s/userdata/config.json", c->id);
		bundle = from_bundle(path, c, "");
		if (!bundle) {
			rooted(w, path, sizeof(path),
			       "/var/lib/containers/storage/overlay-containers/%s/userdata/config.json",
			       c->id);
			bundle = from_bundle(path, c, "");
		}
	}
	if (!strcmp(c->runtime, "podman"))
		from_podman(w, c);
	if (!bundle && (!*c->runtime || !strcmp(c->runtime, "docker")))
		from_docker(w, c);
	from_kubelet(w, c);
	e->named = c->name[0] || c->pod_name[0];
	w->stats.named++;
}

/* ---- rtnetlink inside a namespace ---- */

static int nl_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
	};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* true when the socket has news (a change, or an overflow) */
static bool nl_news(int fd)
{
	char buf[8192];
	bool news = false;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0 || (n < 0 && errno == ENOBUFS)) {
			news = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return news;
	}
}

struct dump_ctx {
	struct bt_wl_addr *addrs;
	size_t n, cap;
	struct { __u32 index; char name[16]; } *links;
	size_t n_links, cap_links;
	__u32 peered[BT_WL_PEERED];
	__s32 peer_nsid[BT_WL_PEERED];	/* IFLA_LINK_NETNSID of each */
	size_t n_peered;
	__s32 self_nsid;		/* RTM_NEWNSID's answer: ours, there */
};

static void dump_msg(struct nlmsghdr *h, struct dump_ctx *d)
{
	if (h->nlmsg_type == RTM_NEWLINK) {
		struct ifinfomsg *ifi = NLMSG_DATA(h);
		int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));

		if (d->n_links == d->cap_links) {
			void *m = realloc(d->links, (d->cap_links = d->cap_links * 2 + 8) *
						    sizeof(*d->links));
			if (!m)
				return;
			d->links = m;
		}
		d->links[d->n_links].index = ifi->ifi_index;
		d->links[d->n_links].name[0] = 0;
		for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == IFLA_IFNAME)
				snprintf(d->links[d->n_links].name, 16, "%s", (char *)RTA_DATA(a));
			/* its peer's or lower's namespace, as this one numbers it */
			if (a->rta_type == IFLA_LINK_NETNSID && d->n_peered < BT_WL_PEERED &&
			    RTA_PAYLOAD(a) >= sizeof(__s32)) {
				d->peer_nsid[d->n_peered] = *(__s32 *)RTA_DATA(a);
				d->peered[d->n_peered++] = ifi->ifi_index;
			}
		}
		d->n_links++;
		return;
	}
	if (h->nlmsg_type == RTM_NEWNSID) {
		struct rtgenmsg *g = NLMSG_DATA(h);
		int len = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*g)));

		for (struct rtattr *a = (struct rtattr *)((char *)g + NLMSG_ALIGN(sizeof(*g)));
		     RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == NETNSA_NSID && RTA_PAYLOAD(a) >= sizeof(__s32))
				d->self_nsid = *(__s32 *)RTA_DATA(a);
		return;
	}
	if (h->nlmsg_type != RTM_NEWADDR)
		return;
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	struct rtattr *addr = NULL, *local = NULL;
	size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;

	/* loopback's own (scope host) name no workload */
	if ((ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) ||
	    ifa->ifa_scope == RT_SCOPE_HOST)
		return;
	for (struct rtattr *a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFA_ADDRESS)
			addr = a;
		if (a->rta_type == IFA_LOCAL)
			local = a;
	}
	/* a point-to-point IFA_ADDRESS is the peer; IFA_LOCAL is ours */
	addr = local ? local : addr;
	if (!addr || RTA_PAYLOAD(addr) < alen)
		return;
	if (d->n == d->cap) {
		void *m = realloc(d->addrs, (d->cap = d->cap * 2 + 4) * sizeof(*d->addrs));

		if (!m)
			return;
		d->addrs = m;
	}
	struct bt_wl_addr *o = &d->addrs[d->n++];

	memset(o, 0, sizeof(*o));
	o->family = ifa->ifa_family;
	memcpy(o->addr, RTA_DATA(addr), alen);
	o->prefixlen = ifa->ifa_prefixlen;
	o->ifindex = ifa->ifa_index;
}

/* A dump of type (RTM_GETLINK, RTM_GETADDR) into d; RTM_GETNSID: the id
 * this namespace gives the one of the descriptor nsfd (d->self_nsid). */
static int nl_dump(int fd, __u32 seq, int type, struct dump_ctx *d, bool *news, int nsfd)
{
	struct {
		struct nlmsghdr h;
		struct ifaddrmsg m;	/* ifinfomsg is larger: padded below */
		char pad[16];
	} req = {
		.h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = seq },
	};
	static char buf[32768];

	req.h.nlmsg_len = type == RTM_GETLINK ? NLMSG_LENGTH(sizeof(struct ifinfomsg))
					      : NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	if (type == RTM_GETNSID) {	/* struct rtgenmsg, then NETNSA_FD */
		struct rtattr *a = (struct rtattr *)((char *)&req.m + NLMSG_ALIGN(1));

		req.h.nlmsg_flags = NLM_F_REQUEST;
		a->rta_type = NETNSA_FD;
		a->rta_len = RTA_LENGTH(sizeof(__u32));
		*(__u32 *)RTA_DATA(a) = nsfd;
		req.h.nlmsg_len = NLMSG_LENGTH(NLMSG_ALIGN(1) + a->rta_len);
	}
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				*news = true;
				continue;
			}
			return -errno;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			/* a change announced meanwhile: dump again next time */
			if (h->nlmsg_seq != seq) {
				*news = true;
				continue;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == RTM_NEWNSID) {	/* not a dump: one answer */
				dump_msg(h, d);
				return 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EPROTO;
			}
			dump_msg(h, d);
		}
	}
}

/* the namespace's addresses again; returns true when that worked */
static bool ns_dump(struct bt_workloads *w, struct ns_ent *ns, bool *news)
{
	struct dump_ctx d = { 0 };

	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	*news = false;
	d.self_nsid = NETNSA_NSID_NOT_ASSIGNED;
	/* the id it gives ours: a device peered with ours has it as
	 * IFLA_LINK_NETNSID; none (an error) leaves no device peered */
	if (self >= 0 && nl_dump(ns->fd, ++w->seq, RTM_GETNSID, &d, news, self))
		d.self_nsid = NETNSA_NSID_NOT_ASSIGNED;
	if (self >= 0)
		close(self);
	if (nl_dump(ns->fd, ++w->seq, RTM_GETLINK, &d, news, -1) ||
	    nl_dump(ns->fd, ++w->seq, RTM_GETADDR, &d, news, -1)) {
		free(d.addrs);
		free(d.links);
		return false;
	}
	for (size_t i = 0; i < d.n; i++)
		for (size_t j = 0; j < d.n_links; j++)
			if (d.links[j].index == d.addrs[i].ifindex)
				memcpy(d.addrs[i].ifname, d.links[j].name, 16);
	free(d.links);
	free(ns->addrs);
	ns->addrs = d.addrs;
	ns->n_addrs = d.n;
	/* only the devices peered with the namespace this runs in (the
	 * node's, where the agent is): where the node hands the namespace
	 * what it received */
	ns->n_peered = 0;
	for (size_t i = 0; i < d.n_peered; i++)
		if (d.self_nsid != NETNSA_NSID_NOT_ASSIGNED && d.peer_nsid[i] == d.self_nsid)
			ns->peered[ns->n_peered++] = d.peered[i];
	w->stats.dumped++;
	return true;
}

/* ---- the walk ---- */

static __u64 ns_ino_of(const char *path, dev_t *dev)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (dev)
		*dev = st.st_dev;
	return st.st_ino;
}

static int cmp_ctr_ent(const void *a, const void *b)
{
	const struct ctr_ent *x = a, *y = b;
	int r = strcmp(x->c.id, y->c.id);

	return r ? r : strcmp(x->c.pod_uid, y->c.pod_uid);
}

static long ctr_lookup(const struct bt_workloads *w, const struct bt_wl_container *c)
{
	struct ctr_ent key;
	struct ctr_ent *hit;

	memcpy(key.c.id, c->id, sizeof(key.c.id));
	memcpy(key.c.pod_uid, c->pod_uid, sizeof(key.c.pod_uid));
	hit = w->n_ctrs ? bsearch(&key, w->ctrs, w->n_ctrs, sizeof(*w->ctrs), cmp_ctr_ent) : NULL;
	return hit ? hit - w->ctrs : -1;
}

struct walk {
	struct sighting *s;
	size_t n, cap;
	struct ctr_ent *fresh;	/* containers first seen in this walk */
	size_t n_fresh, cap_fresh;
};

static int push(struct walk *k, struct sighting s)
{
	if (k->n == k->cap) {
		void *m = realloc(k->s, (k->cap = k->cap * 2 + 64) * sizeof(*k->s));

		if (!m)
			return -ENOMEM;
		k->s = m;
	}
	k->s[k->n++] = s;
	return 0;
}

/* one process: its namespace, and outside the host's, its container.
 * Relative to a descriptor of /proc/PID, so that a PID reused between
 * the reads cannot mix two processes (the old one's directory answers
 * ESRCH once it is gone). */
static int walk_pid(struct bt_workloads *w, struct walk *k, int procfd, const char *pid)
{
	int dfd = openat(procfd, pid, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, err = 0;
	struct bt_wl_container c;
	struct stat st;
	char buf[16384];	/* v1: a line a hierarchy, 13 of them */
	ssize_t n;
	long ctr = -1;

	if (dfd < 0)
		return 0;
	if (fstatat(dfd, "ns/net", &st, 0)) {
		/* another user's process: ptrace's read check (PID 1 is the
		 * host's: a sandbox may hide it from its own root) */
		w->stats.denied_pids += (errno == EACCES || errno == EPERM) && strcmp(pid, "1");
		goto out;
	}
	if (st.st_ino == w->host_ino[0] || st.st_ino == w->host_ino[1])
		goto out;
	if ((fd = openat(dfd, "cgroup", O_RDONLY | O_CLOEXEC)) < 0)
		goto out;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		goto out;	/* gone meanwhile */
	buf[n] = 0;
	if (bt_wl_parse_cgroup(buf, &c)) {
		ctr = ctr_lookup(w, &c);
		if (ctr < 0) {
			for (size_t i = 0; i < k->n_fresh && ctr < 0; i++)
				if (!strcmp(k->fresh[i].c.id, c.id) &&
				    !strcmp(k->fresh[i].c.pod_uid, c.pod_uid))
					ctr = w->n_ctrs + i;
		}
		if (ctr < 0) {
			if (k->n_fresh == k->cap_fresh) {
				void *m = realloc(k->fresh, (k->cap_fresh = k->cap_fresh * 2 + 16) *
							     sizeof(*k->fresh));
				if (!m) {
					err = -ENOMEM;
					goto out;
				}
				k->fresh = m;
			}
			memset(&k->fresh[k->n_fresh], 0, sizeof(k->fresh[0]));
			k->fresh[k->n_fresh].c = c;
			ctr = w->n_ctrs + k->n_fresh++;
		}
	}
	w->stats.processes++;
	err = push(k, (struct sighting){ .ino = st.st_ino, .pid = atoi(pid), .ctr = ctr });
out:
	close(dfd);
	return err;
}

static int walk_proc(struct bt_workloads *w, struct walk *k)
{
	DIR *dp = opendir("/proc");
	struct dirent *d;
	int err = 0;

	if (!dp)
		return -errno;
	while (!err && (d = readdir(dp)))
		if (isdigit((unsigned char)d->d_name[0]))
			err = walk_pid(w, k, dirfd(dp), d->d_name);
	closedir(dp);
	return err;
}

static void dir_cache_clear(struct dir_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->inos);
	memset(c, 0, sizeof(*c));
}

/* a directory's namespaces into c: each entry that is an nsfs bind mount
 * (a name left behind unmounted is tmpfs) and not the host's */
static int dir_cache_read(struct bt_workloads *w, struct dir_cache *c, const char *dir,
			  dev_t nsfs)
{
	struct dirent *d;
	struct stat st;
	DIR *dp = opendir(dir);
	size_t cap = 0;

	dir_cache_clear(c);
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' && (!d->d_name[1] || !strcmp(d->d_name, "..")))
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, 0) || st.st_dev != nsfs ||
		    st.st_ino == w->host_ino[0] || st.st_ino == w->host_ino[1])
			continue;
		if (c->n == cap) {
			char **p = realloc(c->paths, (cap = cap * 2 + 16) * sizeof(*p));
			__u64 *q = p ? realloc(c->inos, cap * sizeof(*q)) : NULL;

			if (p)
				c->paths = p;
			if (!q) {
				closedir(dp);
				dir_cache_clear(c);
				return -ENOMEM;
			}
			c->inos = q;
		}
		if (asprintf(&c->paths[c->n], "%s/%s", dir, d->d_name) < 0) {
			closedir(dp);
			dir_cache_clear(c);
			return -ENOMEM;
		}
		c->inos[c->n++] = st.st_ino;
	}
	closedir(dp);
	return 0;
}

/* /run/netns and /var/run/netns (one directory on most systems: by
 * inode). A directory whose mtime has not moved is not read again; one
 * changed in the last second is (its mtime ticks coarsely: a change in
 * the same tick as the last read would not move it). */
static int walk_netns_dirs(struct bt_workloads *w, struct walk *k, dev_t nsfs)
{
	static const char *const dirs[] = { "/run/netns", "/var/run/netns" };
	ino_t seen_dir = 0;
	struct timespec now;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < 2 && !err; i++) {
		struct dir_cache *c = &w->dirs[i];
		struct stat ds;

		if (stat(dirs[i], &ds) || ds.st_ino == seen_dir) {
			dir_cache_clear(c);
			continue;
		}
		seen_dir = ds.st_ino;
		if (!c->valid || c->dir_ino != ds.st_ino || c->mtim.tv_sec != ds.st_mtim.tv_sec ||
		    c->mtim.tv_nsec != ds.st_mtim.tv_nsec || now.tv_sec - ds.st_mtim.tv_sec < 2) {
			if ((err = dir_cache_read(w, c, dirs[i], nsfs)))
				break;
			c->valid = true;
			c->dir_ino = ds.st_ino;
			c->mtim = ds.st_mtim;
		}
		for (size_t j = 0; j < c->n && !err; j++)
			err = push(k, (struct sighting){ .ino = c->inos[j], .pid = 0, .ctr = -1,
							 .name = c->paths[j] });
	}
	return err;
}

static int cmp_sighting(const void *a, const void *b)
{
	const struct sighting *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	/* names first (sorted), then processes by PID */
	if (!x->pid != !y->pid)
		return x->pid ? 1 : -1;
	if (!x->pid)
		return strcmp(x->name, y->name);
	return x->pid - y->pid;
}

/* ---- entering new namespaces, on a thread of their own ---- */

struct enter_job {
	struct bt_workloads *w;
	struct ns_ent **todo;
	const struct sighting **first;	/* the first sighting of each */
	const struct sighting *end;
	size_t n;
};

/* into the namespace by its name or a process's, checking that the file
 * opened is still the namespace seen (PID reuse), then a socket in it */
static void enter_one(struct ns_ent *ns, const struct sighting *s, const struct sighting *end)
{
	char path[64];

	for (; s < end && s->ino == ns->ino && !ns->alive; s++) {
		const char *p = s->name;
		struct stat st;
		int nsfd;

		if (!p) {
			snprintf(path, sizeof(path), "/proc/%d/ns/net", s->pid);
			p = path;
		}
		if ((nsfd = open(p, O_RDONLY | O_CLOEXEC)) < 0) {
			/* another user's process: ptrace's read check */
			if (errno == EACCES || errno == EPERM)
				ns->denied = errno;
			continue;	/* gone: the next sighting, or none */
		}
		/* still the namespace seen: listed, with its addresses when a
		 * socket could be made in it (descriptors may run out) */
		if (!fstat(nsfd, &st) && st.st_ino == ns->ino) {
			ns->alive = true;
			if (!setns(nsfd, CLONE_NEWNET)) {
				int fd = nl_open();

				ns->fd = fd < 0 ? -1 : fd;
			} else if (errno == EPERM) {
				ns->denied = errno;
			}
		}
		close(nsfd);
	}
}

static void *enter_thread(void *arg)
{
	struct enter_job *j = arg;

	for (size_t i = 0; i < j->n; i++)
		enter_one(j->todo[i], j->first[i], j->end);
	return NULL;
}

/* ---- building the answer ---- */

static void free_workloads(struct bt_workloads *w)
{
	for (size_t i = 0; i < w->n_wl; i++) {
		for (size_t c = 0; c < w->wl[i].n_ctrs; c++)
			free(w->wl[i].ctrs[c].pids);
		free(w->wl[i].ctrs);
		free(w->wl[i].pids);
		free(w->wl[i].addrs);
	}
	free(w->wl);
	w->wl = NULL;
	w->n_wl = 0;
}

static const struct bt_wl_container *owner(const struct bt_workload *wl)
{
	const struct bt_wl_container *best = NULL;

	for (size_t i = 0; i < wl->n_ctrs; i++)
		if (!best || (best->infra && !wl->ctrs[i].infra))
			best = &wl->ctrs[i];
	return best;
}

static int cmp_ctr(const void *a, const void *b)
{
	const struct bt_wl_container *x = a, *y = b;
	int r;

	if (x->infra != y->infra)
		return x->infra ? 1 : -1;
	if ((r = strcmp(x->name, y->name)))
		return r;
	return strcmp(x->id, y->id);
}

static int cmp_wl(const void *a, const void *b)
{
	const struct bt_workload *x = a, *y = b;
	const struct bt_wl_container *ox = owner(x), *oy = owner(y);
	int r;

	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1;
	if (ox && oy) {
		if ((r = strcmp(ox->pod_namespace, oy->pod_namespace)) ||
		    (r = strcmp(ox->pod_name, oy->pod_name)) || (r = strcmp(ox->name, oy->name)))
			return r;
	}
	if ((r = strcmp(x->netns_name, y->netns_name)))
		return r;
	return x->netns_ino < y->netns_ino ? -1 : x->netns_ino > y->netns_ino;
}

/* the workload of sightings s[0..n) (one namespace), into wl */
static int build_one(struct bt_workloads *w, const struct ns_ent *ns, const struct sighting *s,
		     size_t n, struct bt_workload *wl)
{
	memset(wl, 0, sizeof(*wl));
	wl->netns_ino = ns->ino;
	wl->kind = BT_WL_NETNS;
	if (!s[0].pid) {
		const char *b = strrchr(s[0].name, '/');

		snprintf(wl->netns_name, sizeof(wl->netns_name), "%s", b ? b + 1 : s[0].name);
	}
	if (ns->n_addrs) {
		if (!(wl->addrs = malloc(ns->n_addrs * sizeof(*wl->addrs))))
			return -ENOMEM;
		memcpy(wl->addrs, ns->addrs, ns->n_addrs * sizeof(*wl->addrs));
		wl->n_addrs = ns->n_addrs;
	}
	memcpy(wl->peered, ns->peered, sizeof(wl->peered));
	wl->n_peered = ns->n_peered;
	if (!(wl->pids = calloc(n, sizeof(*wl->pids))) || !(wl->ctrs = calloc(n, sizeof(*wl->ctrs))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct bt_wl_container *c = NULL;

		if (!s[i].pid)
			continue;
		wl->pids[wl->n_pids++] = s[i].pid;
		if (s[i].ctr < 0)
			continue;
		const struct bt_wl_container *src = &w->ctrs[s[i].ctr].c;

		for (size_t j = 0; j < wl->n_ctrs && !c; j++)
			if (!strcmp(wl->ctrs[j].id, src->id) && !strcmp(wl->ctrs[j].pod_uid, src->pod_uid))
				c = &wl->ctrs[j];
		if (!c) {
			c = &wl->ctrs[wl->n_ctrs++];
			*c = *src;
			if (!(c->pids = calloc(n, sizeof(*c->pids))))
				return -ENOMEM;
			c->n_pids = 0;
		}
		c->pids[c->n_pids++] = s[i].pid;
	}
	if (wl->n_ctrs > 1)	/* qsort's base may not be NULL, even for none */
		qsort(wl->ctrs, wl->n_ctrs, sizeof(*wl->ctrs), cmp_ctr);
	for (size_t j = 0; j < wl->n_ctrs; j++) {
		const struct bt_wl_container *c = &wl->ctrs[j];

		if (c->pod_uid[0] || c->pod_name[0] || c->pod_id[0])
			wl->kind = BT_WL_POD;
		else if (wl->kind == BT_WL_NETNS && c->id[0])
			wl->kind = BT_WL_CONTAINER;
	}
	return 0;
}

static struct ns_ent *ns_find(struct ns_ent *arr, size_t n, __u64 ino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (arr[mid].ino == ino)
			return &arr[mid];
		if (arr[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int bt_workloads_refresh(struct bt_workloads *w)
{
	struct walk k = { 0 };
	struct ns_ent *next = NULL;
	size_t n_next = 0, n_todo = 0;
	struct ns_ent **todo = NULL;
	const struct sighting **first = NULL;
	dev_t nsfs = 0;
	int err;

	memset(&w->stats, 0, sizeof(w->stats));
	free_workloads(w);
	ns_ino_of("/proc/self/ns/net", &nsfs);
	if ((err = walk_proc(w, &k)) || (err = walk_netns_dirs(w, &k, nsfs)))
		goto out;
	if (k.n > 1)
		qsort(k.s, k.n, sizeof(*k.s), cmp_sighting);

	/* the containers first seen join the cache (sorted again below) */
	if (k.n_fresh) {
		void *m = realloc(w->ctrs, (w->n_ctrs + k.n_fresh) * sizeof(*w->ctrs));

		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		w->ctrs = m;
		memcpy(w->ctrs + w->n_ctrs, k.fresh, k.n_fresh * sizeof(*k.fresh));
		w->n_ctrs += k.n_fresh;
	}

	/* the namespaces of this walk: kept ones move over, new ones wait */
	next = calloc(k.n + 1, sizeof(*next));
	todo = calloc(k.n + 1, sizeof(*todo));
	first = calloc(k.n + 1, sizeof(*first));
	if (!next || !todo || !first) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < k.n; i++) {
		if (i && k.s[i].ino == k.s[i - 1].ino)
			continue;
		struct ns_ent *old = ns_find(w->ns, w->n_ns, k.s[i].ino), *e = &next[n_next++];

		if (old && old->fd >= 0) {
			*e = *old;
			e->alive = true;
			old->fd = -1;
			old->addrs = NULL;
		} else {
			memset(e, 0, sizeof(*e));
			e->ino = k.s[i].ino;
			e->fd = -1;
			first[n_todo] = &k.s[i];
			todo[n_todo++] = e;
		}
	}
	/* tests hold a namespace's vanishing here, between seen and entered */
	bt_test_pause("workloads-enter");
	if (n_todo) {
		struct enter_job job = { w, todo, first, k.s + k.n, n_todo };
		pthread_t t;

		if (pthread_create(&t, NULL, enter_thread, &job)) {
			err = -EAGAIN;
			goto out;
		}
		pthread_join(t, NULL);
		w->stats.entered = n_todo;
		for (size_t i = 0; i < n_todo; i++)
			w->stats.denied += todo[i]->denied != 0;
	}
	/* once a process: each refresh tries them again, as they come */
	if ((w->stats.denied || w->stats.denied_pids) && !w->warned_denied) {
		w->warned_denied = true;
		bt_warn("workloads: not permitted to read the network namespace of %zu "
			"processes (CAP_SYS_PTRACE) or to enter %zu namespaces (CAP_SYS_ADMIN, "
			"setns): their workloads go unnamed; workloads = off stops the scan",
			w->stats.denied_pids, w->stats.denied);
	}
	/* the kept sockets that have news, all in one call */
	for (;;) {
		struct epoll_event ev[256];
		int n = epoll_wait(w->epfd, ev, 256, 0);

		for (int e = 0; e < n; e++) {
			struct ns_ent *ns = ns_find(next, n_next, ev[e].data.u64);

			if (ns)
				ns->news = true;
		}
		if (n < 256)
			break;
	}
	for (size_t i = 0; i < n_next; i++) {
		bool news;

		if (next[i].fd < 0)
			continue;	/* vanished before it was entered, or no socket */
		if (!next[i].dumped) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = next[i].ino };

			epoll_ctl(w->epfd, EPOLL_CTL_ADD, next[i].fd, &ev);
		} else if (!next[i].news || !nl_news(next[i].fd)) {
			continue;
		}
		next[i].news = false;
		/* a change announced during the dump: once more */
		next[i].dumped = ns_dump(w, &next[i], &news);
		if (next[i].dumped && news)
			next[i].dumped = ns_dump(w, &next[i], &news) && !news;
	}

	/* names: containers seen for the first time, or unnamed so far */
	for (size_t i = 0; i < w->n_ctrs; i++)
		w->ctrs[i].seen = false;
	for (size_t i = 0; i < k.n; i++)
		if (k.s[i].ctr >= 0)
			w->ctrs[k.s[i].ctr].seen = true;
	for (size_t i = 0; i < w->n_ctrs; i++)
		if (w->ctrs[i].seen && !w->ctrs[i].named)
			name_container(w, &w->ctrs[i]);

	/* the answer */
	w->wl = calloc(n_next + 1, sizeof(*w->wl));
	if (!w->wl) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, j = 0; i < n_next; i++) {
		size_t b;

		while (k.s[j].ino != next[i].ino)
			j++;
		for (b = j; b < k.n && k.s[b].ino == next[i].ino; b++)
			;
		if (next[i].alive && (err = build_one(w, &next[i], k.s + j, b - j, &w->wl[w->n_wl++])))
			goto out;
		j = b;
	}
	if (w->n_wl > 1)
		qsort(w->wl, w->n_wl, sizeof(*w->wl), cmp_wl);
	w->stats.namespaces = w->n_wl;

	/* the cache keeps what was seen; the unseen go */
	{
		size_t o = 0;

		for (size_t i = 0; i < w->n_ctrs; i++)
			if (w->ctrs[i].seen)
				w->ctrs[o++] = w->ctrs[i];
		w->n_ctrs = o;
		if (w->n_ctrs > 1)
			qsort(w->ctrs, w->n_ctrs, sizeof(*w->ctrs), cmp_ctr_ent);
	}
	/* namespaces kept: those entered; the rest close */
	{
		size_t o = 0;

		for (size_t i = 0; i < n_next; i++)
			if (next[i].fd >= 0)
				next[o++] = next[i];
			else
				free(next[i].addrs);
		for (size_t i = 0; i < w->n_ns; i++) {
			if (w->ns[i].fd >= 0)
				close(w->ns[i].fd);
			free(w->ns[i].addrs);
		}
		free(w->ns);
		w->ns = next;
		w->n_ns = o;
		next = NULL;
		n_next = 0;
	}
out:
	if (next) {
		for (size_t i = 0; i < n_next; i++) {
			if (next[i].fd >= 0)
				close(next[i].fd);
			free(next[i].addrs);
		}
		free(next);
	}
	if (err && w->n_ctrs > 1)	/* the cache stays sorted for the next walk */
		qsort(w->ctrs, w->n_ctrs, sizeof(*w->ctrs), cmp_ctr_ent);
	free(todo);
	free(first);
	free(k.s);
	free(k.fresh);
	return err;
}

struct bt_workloads *bt_workloads_new(const char *root)
{
	struct bt_workloads *w = calloc(1, sizeof(*w));
	struct rlimit rl;

	if (!w)
		return NULL;
	if (!root)
		root = getenv("BT_WORKLOADS_ROOT");
	snprintf(w->root, sizeof(w->root), "%s", root && *root ? root : "/");
	if ((w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		free(w);
		return NULL;
	}
	w->host_ino[0] = ns_ino_of("/proc/self/ns/net", NULL);
	w->host_ino[1] = ns_ino_of("/proc/1/ns/net", NULL);
	if (!w->host_ino[1])
		w->host_ino[1] = w->host_ino[0];
	/* a socket a namespace: as many descriptors as allowed */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return w;
}

void bt_workloads_free(struct bt_workloads *w)
{
	if (!w)
		return;
	free_workloads(w);
	for (size_t i = 0; i < w->n_ns; i++) {
		if (w->ns[i].fd >= 0)
			close(w->ns[i].fd);
		free(w->ns[i].addrs);
	}
	free(w->ns);
	free(w->ctrs);
	dir_cache_clear(&w->dirs[0]);
	dir_cache_clear(&w->dirs[1]);
	close(w->epfd);
	free(w->bolt.data);
	free(w->containers_json.data);
	json_object_put(w->containers_json.json);
	free(w);
}

size_t bt_workloads_count(const struct bt_workloads *w)
{
	return w->n_wl;
}

const struct bt_workload *bt_workloads_get(const struct bt_workloads *w, size_t i)
{
	return i < w->n_wl ? &w->wl[i] : NULL;
}

void bt_workloads_stats(const struct bt_workloads *w, struct bt_wl_stats *s)
{
	*s = w->stats;
}

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static struct json_object *pids_json(const pid_t *p, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int(p[i]));
	return a;
}

struct json_object *bt_workloads_json(const struct bt_workloads *w)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < w->n_wl; i++) {
		const struct bt_workload *wl = &w->wl[i];
		const struct bt_wl_container *own = owner(wl);
		struct json_object *o = json_object_new_object(), *ns = json_object_new_object(),
				   *addrs = json_object_new_array(), *ctrs = json_object_new_array();

		json_object_object_add(o, "kind", json_object_new_string(bt_wl_kind_name(wl->kind)));
		json_object_object_add(o, "namespace", str_or_null(own ? own->pod_namespace : NULL));
		json_object_object_add(o, "pod", str_or_null(own ? own->pod_name : NULL));
		json_object_object_add(o, "pod_uid", str_or_null(own ? own->pod_uid : NULL));
		json_object_object_add(o, "pod_id", str_or_null(own ? own->pod_id : NULL));
		json_object_object_add(o, "runtime", str_or_null(own ? own->runtime : NULL));
		json_object_object_add(ns, "inode", json_object_new_uint64(wl->netns_ino));
		json_object_object_add(ns, "name", str_or_null(wl->netns_name));
		json_object_object_add(o, "netns", ns);
		for (size_t a = 0; a < wl->n_addrs; a++) {
			struct json_object *e = json_object_new_object();
			char buf[INET6_ADDRSTRLEN];

			inet_ntop(wl->addrs[a].family, wl->addrs[a].addr, buf, sizeof(buf));
			json_object_object_add(e, "address", json_object_new_string(buf));
			json_object_object_add(e, "prefixlen", json_object_new_int(wl->addrs[a].prefixlen));
			json_object_object_add(e, "ifname", str_or_null(wl->addrs[a].ifname));
			json_object_array_add(addrs, e);
		}
		json_object_object_add(o, "addresses", addrs);
		for (size_t c = 0; c < wl->n_ctrs; c++) {
			const struct bt_wl_container *ct = &wl->ctrs[c];
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "name", str_or_null(ct->name));
			json_object_object_add(e, "id", str_or_null(ct->id));
			json_object_object_add(e, "runtime", str_or_null(ct->runtime));
			json_object_object_add(e, "infra", json_object_new_boolean(ct->infra));
			json_object_object_add(e, "pids", pids_json(ct->pids, ct->n_pids));
			json_object_array_add(ctrs, e);
		}
		json_object_object_add(o, "containers", ctrs);
		json_object_object_add(o, "pids", pids_json(wl->pids, wl->n_pids));
		json_object_array_add(arr, o);
	}
	return arr;
}
