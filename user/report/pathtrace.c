// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* trace --agents: SPIE's traceback across hosts (Snoeren et al., section
 * 4). Each agent is asked, over its /api/v1/trace, which packets it saw.
 * Then, for each packet, the path is walked back along the topology from
 * the agent nearest the victim, through neighbours that saw that packet;
 * an agent that did not answer is walked through and marked unknown (the
 * packet may have passed it). Packets are grouped by the walk they give.
 * An agent that saw a packet but is not on its walk can only be a false
 * positive for it; a fork is a false positive on one side or two sources.
 * Packets may take different paths (ECMP, route changes): each is traced
 * on its own, never by all-or-nothing. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include "trace_query.h"
#include "base/common.h"
#include "pathtrace.h"

#define RESP_MAX (8 << 20)
#define SAW_SEEN 1	/* the agent saw the packet */
#define SAW_LEFT 2	/* ... leave: sent from its host (a window of direction egress) */

struct agent_ref {
	char name[32], addr[64];
	bool answered;
	int seen;		/* IP packets it saw */
	int ndropped;		/* and dropped */
	char error[160];
	uint8_t *saw;		/* one a packet: SAW_SEEN, and SAW_LEFT */
	char **dropped;		/* one a packet: the reason it dropped it with, or NULL */
	int fp;			/* packets it saw off their walk */
};

/* POST body to http://addr/PATH, addr ADDR:PORT or the path of an
 * agent's unix socket (--api-socket); the response body in *out. */
static int http_post(const char *addr, const char *path, const void *body, size_t len,
		     char **out, int *status)
{
	struct sockaddr_storage ss = { 0 };
	char host[64], hdr[512], *resp = NULL, *sep;
	const char *colon = strrchr(addr, ':');
	struct timeval tv = { 5, 0 };
	size_t got = 0;
	ssize_t n;
	int fd, port;

	if (addr[0] == '/') {
		struct sockaddr_un *u = (void *)&ss;

		if (strlen(addr) >= sizeof(u->sun_path))
			return -ENAMETOOLONG;
		u->sun_family = AF_UNIX;
		strcpy(u->sun_path, addr);
		goto connect;
	}
	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host) ||
	    (port = atoi(colon + 1)) <= 0 || port > 65535)
		return -EINVAL;
	memcpy(host, addr, colon - addr);
	host[colon - addr] = 0;
	if (host[0] == '[') {
		struct sockaddr_in6 *a = (void *)&ss;

		host[strlen(host) - 1] = 0;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -EINVAL;
	} else {
		struct sockaddr_in *a = (void *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
	}
connect:
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (void *)&ss, ss.ss_family == AF_UNIX ? sizeof(struct sockaddr_un) :
		    ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		    sizeof(struct sockaddr_in))) {
		int err = -errno;

		close(fd);
		return err;
	}
	snprintf(hdr, sizeof(hdr), "POST %s HTTP/1.0\r\nHost: %s\r\n"
		 "Content-Type: application/octet-stream\r\nContent-Length: %zu\r\n\r\n", path,
		 addr[0] == '/' ? "localhost" : addr, len);
	if (write(fd, hdr, strlen(hdr)) < 0 || write(fd, body, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	resp = malloc(RESP_MAX + 1);
	while (resp && got < RESP_MAX && (n = read(fd, resp + got, RESP_MAX - got)) > 0)
		got += n;
	close(fd);
	if (!resp || !got) {
		free(resp);
		return -EIO;
	}
	resp[got] = 0;
	if (sscanf(resp, "HTTP/%*s %d", status) != 1 || !(sep = strstr(resp, "\r\n\r\n"))) {
		free(resp);
		return -EPROTO;
	}
	memmove(resp, sep + 4, strlen(sep + 4) + 1);
	*out = resp;
	return 0;
}

static int find(const struct agent_ref *a, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return i;
	return -1;
}

int bt_topology_read(FILE *f, const char *path, char (*names)[32], int n,
		     bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS])
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, err = 0;

	memset(adj, 0, sizeof(bool) * BT_MAX_AGENTS * BT_MAX_AGENTS);
	while (!err && getline(&line, &cap, f) >= 0) {
		char *colon, *tok, *save;
		int from = -1;

		lineno++;
		line[strcspn(line, "#\n")] = 0;
		if (!(colon = strchr(line, ':'))) {
			if (strspn(line, " \t\r") != strlen(line)) {
				bt_err("%s:%d: expected 'NAME: NEIGHBOUR ...'", path, lineno);
				err = -EINVAL;
			}
			continue;
		}
		*colon = 0;
		tok = strtok_r(line, " \t\r", &save);
		for (int i = 0; tok && i < n; i++)
			if (!strcmp(names[i], tok))
				from = i;
		if (from < 0) {
			bt_err("%s:%d: '%s' is not one of --agents", path, lineno, tok ? tok : "");
			err = -EINVAL;
			continue;
		}
		for (tok = strtok_r(colon + 1, " \t\r", &save); tok && !err;
		     tok = strtok_r(NULL, " \t\r", &save)) {
			int to = -1;

			for (int i = 0; i < n; i++)
				if (!strcmp(names[i], tok))
					to = i;
			if (to < 0) {
				bt_err("%s:%d: '%s' is not one of --agents", path, lineno, tok);
				err = -EINVAL;
				break;
			}
			/* links go both ways; a repeated link or a loop on itself is
			 * one link or none, whatever the file says */
			if (to != from)
				adj[from][to] = adj[to][from] = true;
		}
	}
	free(line);
	return err;
}

static int read_topology(const char *path, char (*names)[32], int n,
			 bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS])
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		bt_err("--topology %s: %s", path, strerror(errno));
		return -errno;
	}
	err = bt_topology_read(f, path, names, n, adj);
	fclose(f);
	return err;
}

/* A time bound for a URL: the characters of bt_parse_time()'s forms
 * need no escaping but ':' and '+', escaped anyway. */
static void url_arg(char *dst, size_t len, const char *name, const char *v)
{
	size_t o = snprintf(dst, len, "&%s=", name);

	for (; *v && o + 4 < len; v++)
		o += (*v == ':' || *v == '+') ? (size_t)snprintf(dst + o, len - o, "%%%02X", *v)
					       : (size_t)snprintf(dst + o, len - o, "%c", *v);
}

/* Asks agent i; its answer's IP packets in order, *np of them (the first
 * agent to answer sets it; the others must agree). */
/* a->error: the agent's address, then the message. Built in a copy: GCC's
 * -Wrestrict cannot tell two fields of one array element apart. */
static void set_error(struct agent_ref *a, const char *fmt, ...)
{
	char msg[sizeof(a->error)];
	int n = snprintf(msg, sizeof(msg), "%s: ", a->addr);
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	memcpy(a->error, msg, sizeof(msg));
}

/* A packet's answer has a window of direction egress: it left that host
 * (agents before ABI 14 have no direction: received) */
static bool left_here(struct json_object *pk)
{
	struct json_object *ws, *d;

	if (!json_object_object_get_ex(pk, "windows", &ws))
		return false;
	for (size_t i = 0; i < json_object_array_length(ws); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(ws, i), "direction", &d) &&
		    !strcmp(json_object_get_string(d), "egress"))
			return true;
	return false;
}

static void ask(struct agent_ref *a, const char *path, const void *body, size_t len,
		int *np)
{
	char *resp = NULL;
	int status = 0, err = http_post(a->addr, path, body, len, &resp, &status), cnt;
	struct json_object *o = NULL;

	if (err) {
		set_error(a, "%s", strerror(-err));
	} else if (!(o = json_tokener_parse(resp)) || status != 200 ||
		   !json_object_is_type(o, json_type_array)) {
		set_error(a, "HTTP %d %.100s", status, resp);
	} else if ((cnt = json_object_array_length(o)) != *np && *np >= 0) {
		set_error(a, "answered for %d packets, not %d", cnt, *np);
	} else if (!(a->saw = calloc(cnt ? cnt : 1, 1)) ||
		   !(a->dropped = calloc(cnt ? cnt : 1, sizeof(*a->dropped)))) {
		snprintf(a->error, sizeof(a->error), "out of memory");
	} else {
		*np = cnt;
		a->answered = true;
		for (int p = 0; p < cnt; p++) {
			struct json_object *pk = json_object_array_get_idx(o, p), *s, *d, *r;
			int64_t first;

			a->saw[p] = json_object_object_get_ex(pk, "seen", &s) &&
				    json_object_get_boolean(s);
			a->seen += a->saw[p];
			/* a repeat of an earlier packet: its answer is that one's */
			if (json_object_object_get_ex(pk, "same_as", &s) &&
			    (first = json_object_get_int64(s)) >= 1 && first <= p) {
				a->saw[p] |= a->saw[first - 1] & SAW_LEFT;
				if (a->dropped[first - 1])
					a->ndropped += !!(a->dropped[p] = strdup(a->dropped[first - 1]));
				continue;
			}
			if (left_here(pk))
				a->saw[p] |= SAW_LEFT;
			/* the first drop it reports (agents before drops had none) */
			if (json_object_object_get_ex(pk, "drops", &d) &&
			    json_object_array_length(d) &&
			    json_object_object_get_ex(json_object_array_get_idx(d, 0), "reason", &r))
				a->ndropped += !!(a->dropped[p] = strdup(json_object_get_string(r)));
		}
	}
	json_object_put(o);
	free(resp);
	if (a->error[0])
		bt_warn("agent %s: %s; walked through as unknown", a->name, a->error);
}

/* One packet's walk: parent[] of the agents reached (-1: not, -2: the
 * start), through those that saw it and those that did not answer; an
 * unknown agent is kept only with a known one behind it. */
static void walk(const struct agent_ref *a, int n, bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS],
		 int start, int p, int *parent)
{
	int order[BT_MAX_AGENTS], head = 0, tail = 0, kids[BT_MAX_AGENTS] = { 0 };

	for (int i = 0; i < n; i++)
		parent[i] = -1;
	if (a[start].answered && !a[start].saw[p])
		return;
	parent[start] = -2;
	order[tail++] = start;
	while (head < tail) {
		int u = order[head++];

		for (int v = 0; v < n; v++)
			if (adj[u][v] && parent[v] == -1 &&
			    (!a[v].answered || a[v].saw[p])) {
				parent[v] = u;
				kids[u]++;
				order[tail++] = v;
			}
	}
	/* prune unknown leaves, from the far end inwards */
	for (int t = tail - 1; t > 0; t--) {
		int v = order[t];

		if (!a[v].answered && !kids[v]) {
			kids[parent[v]]--;
			parent[v] = -1;
		}
	}
	if (!a[start].answered && !kids[start])
		parent[start] = -1;
}

struct group {
	int parent[BT_MAX_AGENTS];
	int dropped_at;			/* the agent that dropped them, -1: none */
	const char *reason;		/* its reason */
	int *packets, n;		/* packet numbers, from 1 */
};

/* The agent that dropped packet p, -1 for none: the walk starts there,
 * since the agents past it never saw the packet. */
static int dropper(const struct agent_ref *a, int n, int p)
{
	for (int i = 0; i < n; i++)
		if (a[i].answered && a[i].dropped[p])
			return i;
	return -1;
}

/* The paths of a group's walk, source side first, one per leaf. */
/* Every packet of the group left agent i's host: the path starts there */
static bool group_left(const struct agent_ref *a, int i, const struct group *g)
{
	if (!a[i].answered || !g->n)
		return false;
	for (int k = 0; k < g->n; k++)
		if (!(a[i].saw[g->packets[k] - 1] & SAW_LEFT))
			return false;
	return true;
}

static void group_paths(const struct agent_ref *a, int n, const struct group *g,
			struct json_object *jpaths)
{
	for (int leaf = 0; leaf < n; leaf++) {
		int chain[BT_MAX_AGENTS], c = 0;
		bool is_leaf = g->parent[leaf] != -1;

		for (int v = 0; v < n && is_leaf; v++)
			if (g->parent[v] == leaf)
				is_leaf = false;
		if (!is_leaf)
			continue;
		for (int v = leaf; v >= 0; v = g->parent[v])
			chain[c++] = v;
		if (jpaths) {
			struct json_object *o = json_object_new_object(), *p = json_object_new_array(),
					   *u = json_object_new_array(), *pk = json_object_new_array(),
					   *l = json_object_new_array();

			for (int k = 0; k < c; k++) {
				json_object_array_add(p, json_object_new_string(a[chain[k]].name));
				if (!a[chain[k]].answered)
					json_object_array_add(u, json_object_new_string(a[chain[k]].name));
				if (group_left(a, chain[k], g))
					json_object_array_add(l, json_object_new_string(a[chain[k]].name));
			}
			/* the agents whose hosts sent the packets */
			json_object_object_add(o, "left", l);
			for (int k = 0; k < g->n; k++)
				json_object_array_add(pk, json_object_new_int(g->packets[k]));
			json_object_object_add(o, "path", p);
			if (g->dropped_at >= 0) {
				json_object_object_add(o, "dropped_at", json_object_new_string(
						       a[g->dropped_at].name));
				json_object_object_add(o, "reason", json_object_new_string(g->reason));
			}
			json_object_object_add(o, "unknown", u);
			json_object_object_add(o, "packets", pk);
			json_object_array_add(jpaths, o);
			continue;
		}
		printf("%d packet%s: path (source side first):", g->n, g->n > 1 ? "s" : "");
		for (int k = 0; k < c; k++)
			printf("%s%s%s%s", k ? " -> " : " ", a[chain[k]].name,
			       a[chain[k]].answered ? "" : "?",
			       group_left(a, chain[k], g) ? " (left)" : "");
		if (g->dropped_at >= 0)
			printf("  dropped at %s (reason %s)", a[g->dropped_at].name, g->reason);
		printf("\n");
	}
}

/* The walk of every packet, grouped: returns the number of groups, or -1. */
static int walk_all(struct agent_ref *a, int n, bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS],
		    int start, int np, struct group **out, int *no_path)
{
	struct group *g = NULL;
	int ng = 0, parent[BT_MAX_AGENTS];

	*no_path = 0;
	for (int p = 0; p < np; p++) {
		int k, d = dropper(a, n, p), from = d >= 0 ? d : start;

		walk(a, n, adj, from, p, parent);
		if (parent[from] == -1) {
			(*no_path)++;
			continue;
		}
		for (int i = 0; i < n; i++)
			if (a[i].answered && a[i].saw[p] && parent[i] == -1)
				a[i].fp++;
		for (k = 0; k < ng; k++)
			if (!memcmp(g[k].parent, parent, n * sizeof(int)) && g[k].dropped_at == d &&
			    (d < 0 || !strcmp(g[k].reason, a[d].dropped[p])))
				break;
		if (k == ng) {
			struct group *more = realloc(g, (ng + 1) * sizeof(*g));

			if (!more)
				goto err;
			g = more;
			memset(&g[ng], 0, sizeof(g[ng]));
			memcpy(g[ng].parent, parent, sizeof(parent));
			g[ng].dropped_at = d;
			g[ng].reason = d >= 0 ? a[d].dropped[p] : NULL;
			if (!(g[ng].packets = calloc(np, sizeof(int))))
				goto err;
			ng++;
		}
		g[k].packets[g[k].n++] = p + 1;
	}
	*out = g;
	return ng;
err:
	for (int k = 0; k < ng; k++)
		free(g[k].packets);
	free(g);
	return -1;
}

static int leaves(const struct group *g, int n)
{
	int l = 0;

	for (int u = 0; u < n; u++) {
		bool leaf = g->parent[u] != -1;

		for (int v = 0; v < n && leaf; v++)
			leaf = g->parent[v] != u;
		l += leaf;
	}
	return l;
}

static void print_plain(const struct agent_ref *a, int n, int start, int np,
			const struct group *g, int ng, int no_path)
{
	bool unknown = false;

	for (int i = 0; i < n; i++) {
		if (a[i].answered)
			printf("%-12s %-24s saw %d of %d packets%s%.0d%s\n", a[i].name, a[i].addr,
			       a[i].seen, np, a[i].ndropped ? " (dropped " : "", a[i].ndropped,
			       a[i].ndropped ? ")" : "");
		else
			printf("%-12s %-24s no answer: unknown\n", a[i].name, a[i].addr);
	}
	for (int k = 0; k < ng; k++) {
		group_paths(a, n, &g[k], NULL);
		if (leaves(&g[k], n) > 1)
			printf("  a fork: one branch is a false positive, or there are two sources\n");
		for (int i = 0; i < n; i++)
			unknown |= g[k].parent[i] != -1 && !a[i].answered;
	}
	if (unknown)
		printf("  NAME? did not answer and was walked through: the packets may have "
		       "passed it\n");
	if (no_path)
		printf("%d packet%s: no path (%s, nearest the victim, did not see %s)\n", no_path,
		       no_path > 1 ? "s" : "", a[start].name, no_path > 1 ? "them" : "it");
	for (int i = 0; i < n; i++)
		if (a[i].fp)
			printf("%s saw %d packet%s off their path: false positives\n", a[i].name,
			       a[i].fp, a[i].fp > 1 ? "s" : "");
}

static void print_json(const struct agent_ref *a, int n, const struct group *g, int ng,
		       int no_path)
{
	struct json_object *res = json_object_new_object(), *paths = json_object_new_array(),
			   *fps = json_object_new_array(), *ag = json_object_new_object();

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "answered", json_object_new_boolean(a[i].answered));
		json_object_object_add(o, "packets_seen", json_object_new_int(a[i].seen));
		json_object_object_add(o, "packets_dropped", json_object_new_int(a[i].ndropped));
		if (a[i].error[0])
			json_object_object_add(o, "error", json_object_new_string(a[i].error));
		json_object_object_add(ag, a[i].name, o);
		if (a[i].fp) {
			struct json_object *f = json_object_new_object();

			json_object_object_add(f, "agent", json_object_new_string(a[i].name));
			json_object_object_add(f, "packets", json_object_new_int(a[i].fp));
			json_object_array_add(fps, f);
		}
	}
	for (int k = 0; k < ng; k++)
		group_paths(a, n, &g[k], paths);
	json_object_object_add(res, "agents", ag);
	json_object_object_add(res, "paths", paths);
	json_object_object_add(res, "no_path", json_object_new_int(no_path));
	json_object_object_add(res, "false_positives", fps);
	bt_json_print(res);
}

int bt_trace_agents(const char *agents, const char *topology, const char *from,
		    const char *since, const char *until, const char *times, const void *body,
		    size_t len)
{
	char path[512] = "/api/v1/trace?", arg[100], names[BT_MAX_AGENTS][32];
	static bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS];
	struct agent_ref a[BT_MAX_AGENTS] = { 0 };
	char *list = strdup(agents), *tok, *save;
	int n = 0, start, np = -1, ng, no_path, ret = BT_EXIT_USAGE;
	struct group *g = NULL;

	if (since) {
		url_arg(arg, sizeof(arg), "since", since);
		strncat(path, arg, sizeof(path) - strlen(path) - 1);
	}
	if (until) {
		url_arg(arg, sizeof(arg), "until", until);
		strncat(path, arg, sizeof(path) - strlen(path) - 1);
	}
	/* each packet's time is in the capture; times: how far around it */
	if (times && *times) {
		strncat(path, "&", sizeof(path) - strlen(path) - 1);
		strncat(path, times, sizeof(path) - strlen(path) - 1);
	}
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || n == BT_MAX_AGENTS || eq - tok >= (int)sizeof(a[n].name) ||
		    strlen(eq + 1) >= sizeof(a[n].addr)) {
			bt_err("--agents: give NAME=ADDR:PORT or NAME=/SOCKET/PATH,... (at most %d; "
			       "not '%s')",
			       BT_MAX_AGENTS, tok);
			free(list);
			return BT_EXIT_USAGE;
		}
		*eq = 0;
		if (find(a, n, tok) >= 0) {
			bt_err("--agents: '%s' twice", tok);
			free(list);
			return BT_EXIT_USAGE;
		}
		snprintf(a[n].name, sizeof(a[n].name), "%s", tok);
		snprintf(names[n], sizeof(names[n]), "%s", tok);
		snprintf(a[n].addr, sizeof(a[n].addr), "%s", eq + 1);
		n++;
	}
	free(list);
	/* one agent is its own path: no topology needed */
	if (!n || (topology ? read_topology(topology, names, n, adj) : n > 1))
		return BT_EXIT_USAGE;
	start = from ? find(a, n, from) : 0;
	if (start < 0) {
		bt_err("--from %s is not one of --agents", from);
		return BT_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		ask(&a[i], path, body, len, &np);
	if (np < 0) {
		bt_err("trace: no agent answered");
		goto out;
	}
	ng = walk_all(a, n, adj, start, np, &g, &no_path);
	if (ng < 0) {
		bt_err("trace: out of memory");
		goto out;
	}
	if (bt_g.json)
		print_json(a, n, g, ng, no_path);
	else
		print_plain(a, n, start, np, g, ng, no_path);
	/* 0: every packet has a path from the victim's side; 1: some not */
	ret = no_path || !np ? BT_EXIT_FAIL : BT_EXIT_OK;
	for (int k = 0; k < ng; k++)
		free(g[k].packets);
	free(g);
out:
	for (int i = 0; i < n; i++) {
		for (int p = 0; a[i].dropped && p < np; p++)
			free(a[i].dropped[p]);
		free(a[i].dropped);
		free(a[i].saw);
	}
	return ret;
}
