// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* trace --agents: SPIE's traceback across hosts. Each agent is asked, over
 * its /api/v1/trace, whether it saw the packets; then, from the agent
 * nearest the victim, the path is walked back along the topology through
 * neighbours that saw them too (Snoeren et al., section 4). An agent that
 * saw them but is not connected to that walk can only be a false positive;
 * a fork in the walk is a false positive on one side or a second source. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "commands.h"
#include "common.h"

#define MAX_AGENTS 64
#define RESP_MAX (8 << 20)

struct agent_ref {
	char name[32], addr[64];
	int seen, total;	/* IP packets seen, of total; -1: no answer */
	char error[160];
	int nb[MAX_AGENTS], nnb;
	int parent, children;
};

/* POST body to http://addr/PATH; the response body in *out. */
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
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (void *)&ss, sizeof(ss))) {
		int err = -errno;

		close(fd);
		return err;
	}
	snprintf(hdr, sizeof(hdr), "POST %s HTTP/1.0\r\nHost: %s\r\n"
		 "Content-Type: application/octet-stream\r\nContent-Length: %zu\r\n\r\n", path, addr,
		 len);
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

static int find(struct agent_ref *a, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return i;
	return -1;
}

/* "NAME: NEIGHBOUR ..." lines, '#' comments; links go both ways. */
static int read_topology(const char *path, struct agent_ref *a, int n)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0;

	if (!f) {
		bt_err("--topology %s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon, *tok, *save;
		int from;

		lineno++;
		line[strcspn(line, "#\n")] = 0;
		if (!(colon = strchr(line, ':'))) {
			if (strspn(line, " \t") != strlen(line)) {
				bt_err("%s:%d: expected 'NAME: NEIGHBOUR ...'", path, lineno);
				fclose(f);
				return -EINVAL;
			}
			continue;
		}
		*colon = 0;
		tok = strtok_r(line, " \t", &save);
		if (!tok || (from = find(a, n, tok)) < 0) {
			bt_err("%s:%d: '%s' is not one of --agents", path, lineno, tok ? tok : "");
			fclose(f);
			return -EINVAL;
		}
		for (tok = strtok_r(colon + 1, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			int to = find(a, n, tok);

			if (to < 0) {
				bt_err("%s:%d: '%s' is not one of --agents", path, lineno, tok);
				fclose(f);
				return -EINVAL;
			}
			a[from].nb[a[from].nnb++] = to;
			a[to].nb[a[to].nnb++] = from;
		}
	}
	fclose(f);
	return 0;
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

int bt_trace_agents(const char *agents, const char *topology, const char *from,
		    const char *since, const char *until, const void *body, size_t len)
{
	char path[256] = "/api/v1/trace?", arg[100];

	if (since) {
		url_arg(arg, sizeof(arg), "since", since);
		strncat(path, arg, sizeof(path) - strlen(path) - 1);
	}
	if (until) {
		url_arg(arg, sizeof(arg), "until", until);
		strncat(path, arg, sizeof(path) - strlen(path) - 1);
	}

	struct agent_ref a[MAX_AGENTS] = { 0 };
	char *list = strdup(agents), *tok, *save;
	int n = 0, start, order[MAX_AGENTS], head = 0, tail = 0;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || n == MAX_AGENTS || eq - tok >= (int)sizeof(a[n].name) ||
		    strlen(eq + 1) >= sizeof(a[n].addr)) {
			bt_err("--agents: give NAME=ADDR:PORT,... (not '%s')", tok);
			free(list);
			return BT_EXIT_USAGE;
		}
		*eq = 0;
		snprintf(a[n].name, sizeof(a[n].name), "%s", tok);
		snprintf(a[n].addr, sizeof(a[n].addr), "%s", eq + 1);
		a[n].parent = -1;
		n++;
	}
	free(list);
	if (!topology || read_topology(topology, a, n))
		return BT_EXIT_USAGE;
	start = from ? find(a, n, from) : 0;
	if (start < 0) {
		bt_err("--from %s is not one of --agents", from);
		return BT_EXIT_USAGE;
	}

	/* ask every agent */
	for (int i = 0; i < n; i++) {
		char *resp = NULL;
		int status = 0, err = http_post(a[i].addr, path, body, len, &resp, &status);
		struct json_object *o = NULL;

		char msg[sizeof(a[i].error)] = "";

		a[i].seen = -1;
		if (err) {
			snprintf(msg, sizeof(msg), "%s: %s", a[i].addr, strerror(-err));
		} else if (!(o = json_tokener_parse(resp)) || status != 200 ||
			   !json_object_is_type(o, json_type_array)) {
			snprintf(msg, sizeof(msg), "%s: HTTP %d %.100s", a[i].addr, status, resp);
		} else {
			a[i].seen = 0;
			a[i].total = json_object_array_length(o);
			for (int p = 0; p < a[i].total; p++) {
				struct json_object *s;

				if (json_object_object_get_ex(json_object_array_get_idx(o, p), "seen", &s) &&
				    json_object_get_boolean(s))
					a[i].seen++;
			}
		}
		json_object_put(o);
		free(resp);
		memcpy(a[i].error, msg, sizeof(msg));
		if (a[i].error[0])
			bt_warn("agent %s: %s", a[i].name, a[i].error);
	}

	/* walk back from the victim's side through neighbours that saw it all */
#define SAW(i) (a[i].seen > 0 && a[i].seen == a[i].total)
	bool visited[MAX_AGENTS] = { 0 };

	if (SAW(start)) {
		visited[start] = true;
		order[tail++] = start;
	}
	while (head < tail) {
		int u = order[head++];

		for (int k = 0; k < a[u].nnb; k++) {
			int v = a[u].nb[k];

			if (visited[v] || !SAW(v))
				continue;
			visited[v] = true;
			a[v].parent = u;
			a[u].children++;
			order[tail++] = v;
		}
	}

	struct json_object *res = bt_g.json ? json_object_new_object() : NULL, *paths = NULL,
			   *fps = NULL, *ag = NULL;

	if (res) {
		paths = json_object_new_array();
		fps = json_object_new_array();
		ag = json_object_new_object();
	}
	for (int i = 0; i < n; i++) {
		if (res) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "seen", json_object_new_boolean(SAW(i)));
			json_object_object_add(o, "packets_seen", json_object_new_int(a[i].seen));
			json_object_object_add(o, "packets", json_object_new_int(a[i].total));
			if (a[i].error[0])
				json_object_object_add(o, "error", json_object_new_string(a[i].error));
			json_object_object_add(ag, a[i].name, o);
		} else {
			printf("%-12s %-24s %s\n", a[i].name, a[i].addr, a[i].seen < 0 ? "no answer" :
			       SAW(i) ? "saw the packets" : a[i].seen ? "saw some of them" : "did not see them");
		}
	}
	if (!SAW(start) && !res)
		printf("%s, nearest the victim, did not see the packets: no path\n", a[start].name);
	/* one path per leaf of the walk, printed from the source side */
	for (int t = 0; t < tail; t++) {
		int chain[MAX_AGENTS], c = 0;

		if (a[order[t]].children)
			continue;
		for (int v = order[t]; v >= 0; v = a[v].parent)
			chain[c++] = v;
		if (res) {
			struct json_object *p = json_object_new_array();

			for (int k = 0; k < c; k++)
				json_object_array_add(p, json_object_new_string(a[chain[k]].name));
			json_object_array_add(paths, p);
			continue;
		}
		printf("path (source side first):");
		for (int k = 0; k < c; k++)
			printf("%s%s", k ? " -> " : " ", a[chain[k]].name);
		printf("\n");
	}
	for (int t = 0; t < tail; t++)
		if (a[order[t]].children > 1 && !res)
			printf("fork at %s: one branch is a false positive, or there are two sources\n",
			       a[order[t]].name);
	for (int i = 0; i < n; i++)
		if (SAW(i) && !visited[i]) {
			if (res)
				json_object_array_add(fps, json_object_new_string(a[i].name));
			else
				printf("%s saw the packets but is not connected to the path: a false "
				       "positive\n", a[i].name);
		}
	if (res) {
		json_object_object_add(res, "agents", ag);
		json_object_object_add(res, "paths", paths);
		json_object_object_add(res, "false_positives", fps);
		bt_json_print(res);
	}
	for (int i = 0; i < n; i++)
		if (a[i].seen < 0)
			return BT_EXIT_USAGE;
	return SAW(start) ? BT_EXIT_OK : BT_EXIT_FAIL;
}
