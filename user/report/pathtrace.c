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
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "trace_query.h"
#include "base/common.h"
#include "pathtrace.h"
#include "base/timeparse.h"

#define RESP_MAX (8 << 20)
#define WARN_MAX 5	/* agents that did not answer named on stderr */
#define SAW_SEEN 1	/* the agent saw the packet */
#define SAW_LEFT 2	/* ... leave: sent from its host (a window of direction egress) */

/* a name given (NAME=) or given by the agent itself: at most 63 bytes;
 * the name buffer holds that, '@' and a whole address (an agent without a
 * name is its address, a clash NAME@HOST:PORT), so that no two are cut
 * into one */
#define NAME_GIVEN 64
#define ADDR_LEN 300

struct agent_ref {
	char name[NAME_GIVEN + 1 + ADDR_LEN], addr[ADDR_LEN];
	char *url;		/* scheme://host:port, or http://localhost on a unix socket */
	bool named;		/* the name was given, not asked of /api/v1/status */
	char health[16];	/* Prometheus's up state of it ("up", "down"), or "" */
	char last_error[120];	/* and Prometheus's last scrape error */
	bool answered;
	bool not_asked;		/* plain http, and credentials given */
	bool asked;		/* a request of it was sent (its status or the trace) */
	int seen;		/* IP packets it saw */
	int ndropped;		/* and dropped */
	char error[200];
	uint8_t *saw;		/* one a packet: SAW_SEEN, and SAW_LEFT */
	int64_t *at, *until;	/* one a packet: its windows' first start and last end, ms
				 * (order inferred; INT64_MAX: none, or a window still open) */
	char **dropped;		/* one a packet: the reason it dropped it with, or NULL */
	uint8_t *cut;		/* one a packet: not seen, but UNKNOWN_CUT, its archive
				 * search cut off, or UNKNOWN_DAMAGED, an archive file
				 * of its time damaged: unknown there */
	int ncut, ndamaged;	/* and how many of each */
	bool status_down;	/* its status request got no answer: not asked the trace */
	bool topo_only;		/* a name of the topology's alone, no agent's: unknown */
	int fp;			/* packets it saw off their walk */
};

enum { UNKNOWN_CUT = 1, UNKNOWN_DAMAGED = 2 };

static int find(const struct agent_ref *a, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return i;
	return -1;
}

static int find_name(char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

void bt_topo_free(struct bt_topo *t)
{
	for (int i = 0; t->nbr && i < t->n; i++)
		free(t->nbr[i]);
	free(t->nbr);
	free(t->deg);
	free(t->cap);
	memset(t, 0, sizeof(*t));
}

static int topo_init(struct bt_topo *t, int n)
{
	t->n = n;
	t->deg = calloc(n ? n : 1, sizeof(int));
	t->cap = calloc(n ? n : 1, sizeof(int));
	t->nbr = calloc(n ? n : 1, sizeof(int *));
	if (!t->deg || !t->cap || !t->nbr) {
		bt_topo_free(t);
		return -ENOMEM;
	}
	return 0;
}

/* u's neighbour v, once */
static int topo_link1(struct bt_topo *t, int u, int v)
{
	for (int k = 0; k < t->deg[u]; k++)
		if (t->nbr[u][k] == v)
			return 0;
	if (t->deg[u] == t->cap[u]) {
		int cap = t->cap[u] ? 2 * t->cap[u] : 4, *more = realloc(t->nbr[u], cap * sizeof(int));

		if (!more)
			return -ENOMEM;
		t->nbr[u] = more;
		t->cap[u] = cap;
	}
	t->nbr[u][t->deg[u]++] = v;
	return 0;
}

/* The ':' that ends a line's NAME: the first one followed by a blank or
 * the line's end, so that a name may hold ':' (vm@198.18.10.2:9477,
 * [2001:db8::1]:9477) */
static char *name_end(char *line)
{
	for (char *c = strchr(line, ':'); c; c = strchr(c + 1, ':'))
		if (!c[1] || strchr(" \t\r", c[1]))
			return c;
	return NULL;
}

/* The first few of names[], for an error: "a, b, c, ... (1000 in all)" */
static void some_names(char *dst, size_t len, char *const *names, int n)
{
	size_t o = 0;

	dst[0] = 0;
	for (int i = 0; i < n && i < 8 && o < len; i++)
		o += snprintf(dst + o, len - o, "%s%s", i ? ", " : "", names[i]);
	if (n > 8 && o < len)
		snprintf(dst + o, len - o, ", ... (%d in all)", n);
}

/* A topology's names that are none of the agents', each once */
struct name_list {
	char **v;
	int n;
};

static void name_list_free(struct name_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int name_list_add(struct name_list *l, const char *name)
{
	char **more;

	if (find_name(l->v, l->n, name) >= 0)
		return 0;
	if (!(more = realloc(l->v, (l->n + 1) * sizeof(*more))) || !(more[l->n] = strdup(name))) {
		if (more)
			l->v = more;
		return -ENOMEM;
	}
	l->v = more;
	l->n++;
	return 0;
}

/* A topology's NAME that is none of the agents' names: an error that
 * gives theirs (a typo, or a name the agents do not give themselves) */
static int not_agent(const char *path, int lineno, const char *name, char *const *names, int n)
{
	char known[600];

	some_names(known, sizeof(known), names, n);
	bt_err("%s:%d: '%s' is not one of the agents (they are named: %s)", path, lineno, name,
	       known);
	return -EINVAL;
}

/* The topology's lines into t over names[]; miss non-NULL: only the
 * names that are none of names[] into it (t untouched), else such a
 * name is an error */
static int topo_parse(FILE *f, const char *path, char *const *names, int n,
		      struct bt_topo *t, struct name_list *miss)
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, err = miss ? 0 : topo_init(t, n);

	while (!err && getline(&line, &cap, f) >= 0) {
		char *colon, *tok, *save;
		int from;

		lineno++;
		line[strcspn(line, "#\n")] = 0;
		if (!(colon = name_end(line))) {
			if (strspn(line, " \t\r") != strlen(line)) {
				bt_err("%s:%d: expected 'NAME: NEIGHBOUR ...'", path, lineno);
				err = -EINVAL;
			}
			continue;
		}
		*colon = 0;
		tok = strtok_r(line, " \t\r", &save);
		from = tok ? find_name(names, n, tok) : -1;
		if (from < 0 && (!miss || !tok)) {
			err = not_agent(path, lineno, tok ? tok : "", names, n);
			continue;
		}
		if (from < 0)
			err = name_list_add(miss, tok);
		for (tok = strtok_r(colon + 1, " \t\r", &save); tok && !err;
		     tok = strtok_r(NULL, " \t\r", &save)) {
			int to = find_name(names, n, tok);

			if (to < 0 && miss)
				err = name_list_add(miss, tok);
			else if (to < 0)
				err = not_agent(path, lineno, tok, names, n);
			/* links go both ways; a repeated link or a loop on itself is
			 * one link or none, whatever the file says */
			else if (!miss && to != from && (topo_link1(t, from, to) || topo_link1(t, to, from)))
				err = -ENOMEM;
		}
	}
	free(line);
	if (err && !miss)
		bt_topo_free(t);
	return err;
}

int bt_topology_read(FILE *f, const char *path, char *const *names, int n,
		     struct bt_topo *t)
{
	return topo_parse(f, path, names, n, t, NULL);
}

static int read_topology(const char *path, char *const *names, int n, struct bt_topo *t,
			 struct name_list *miss)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		err = -errno;
		bt_err("--topology %s: %s", path, strerror(errno));
		return err;
	}
	err = topo_parse(f, path, names, n, t, miss);
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

/* The trace request's query after its deadline (each agent's own, put
 * first when its request starts): what every agent is asked. */
static void trace_path(char *path, size_t len, const struct bt_fleet_opts *o)
{
	char arg[100];

	path[0] = 0;
	if (o->since) {
		url_arg(arg, sizeof(arg), "since", o->since);
		strncat(path, arg, len - strlen(path) - 1);
	}
	if (o->until) {
		url_arg(arg, sizeof(arg), "until", o->until);
		strncat(path, arg, len - strlen(path) - 1);
	}
	/* each packet's time is in the capture; times: how far around it */
	if (o->times && *o->times) {
		strncat(path, "&", len - strlen(path) - 1);
		strncat(path, o->times, len - strlen(path) - 1);
	}
}

/* src into dst with every byte that is not printable ASCII as \xHH:
 * what an agent or Prometheus sends goes to a terminal only so (a raw
 * newline breaks a line, an escape sequence would drive the terminal) */
static void printable(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	for (; *src && o + 5 < len; src++)
		o += *src >= 0x20 && *src < 0x7f ? (size_t)snprintf(dst + o, len - o, "%c", *src)
		     : (size_t)snprintf(dst + o, len - o, "\\x%02x", (unsigned char)*src);
	if (len)
		dst[o] = 0;
}

/* The address an agent is asked at: its URL (scheme://HOST:PORT), or
 * its unix socket's path */
static const char *asked_at(const struct agent_ref *a)
{
	return a->addr[0] == '/' || !a->url ? a->addr : a->url;
}

/* a->error: the URL the agent is asked at, then the message, made
 * printable. Built in a copy: GCC's -Wrestrict cannot tell two fields
 * of one array element apart. */
static void set_error(struct agent_ref *a, const char *fmt, ...)
{
	char msg[sizeof(a->error)];
	int n = snprintf(msg, sizeof(msg), "%s: ", asked_at(a));
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	printable(a->error, sizeof(a->error), msg);
}

/* A packet's answer has a window of direction egress: it left that host
 * (an answer without a direction, an older agent's: received) */
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

/* An ISO time of bt_fmt_ns's form (2026-12-01T10:00:00.123Z), ms since
 * 1970; INT64_MAX for none or null (a window still open) */
static int64_t iso_ms(struct json_object *w, const char *key)
{
	struct json_object *st;
	struct tm tm = { 0 };
	const char *v;
	char *rest;

	if (!json_object_object_get_ex(w, key, &st) || !(v = json_object_get_string(st)) ||
	    !(rest = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm)))
		return INT64_MAX;
	return (int64_t)timegm(&tm) * 1000 + (*rest == '.' ? atoi(rest + 1) : 0);
}

/* The span of a packet's windows: the earliest start into *lo, the
 * latest end into *hi (INT64_MAX both for none; *hi for an open one) */
static void window_span(struct json_object *pk, int64_t *lo, int64_t *hi)
{
	struct json_object *ws;

	*lo = *hi = INT64_MAX;
	if (!json_object_object_get_ex(pk, "windows", &ws))
		return;
	for (size_t i = 0; i < json_object_array_length(ws); i++) {
		struct json_object *w = json_object_array_get_idx(ws, i);
		int64_t s = iso_ms(w, "start"), e = iso_ms(w, "end");

		if (s == INT64_MAX)
			continue;
		if (*lo == INT64_MAX || e > *hi)
			*hi = e;
		if (s < *lo)
			*lo = s;
	}
}

/* A printable copy of what an agent sent (printable()), or NULL */
static char *clean_dup(const char *s)
{
	size_t len = 4 * strlen(s ? s : "") + 1;
	char *d = malloc(len);

	if (d)
		printable(d, len, s ? s : "");
	return d;
}

/* The packets sent, as an agent numbers them: the frame numbers (from 1,
 * ascending) of the IP packets, n of them. An answer lists those and no
 * others; the walk indexes them 0..n-1. */
struct sent {
	const uint32_t *num;
	int n;
};

/* The index of frame number v among those sent, or -1 */
static int sent_index(const struct sent *s, int64_t v)
{
	int lo = 0, hi = s->n - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->num[mid] == v)
			return mid;
		if (s->num[mid] < v)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* An answer entry's packet number (an agent before numbers had none:
 * its position k, from 1) */
static int64_t entry_number(struct json_object *pk, int k)
{
	struct json_object *v;

	return json_object_object_get_ex(pk, "packet", &v) ? json_object_get_int64(v) : k + 1;
}

/* The answer, of as many entries as packets sent, lists each once:
 * idx[k], the packet of entry k. Else the first entry that is not one
 * of them, or a repeat. An agent that answers for other packets is not
 * believed at all, and the others are not judged by it. */
static int map_entries(struct json_object *o, const struct sent *s, int *idx, uint8_t *hit)
{
	int cnt = json_object_array_length(o);

	for (int k = 0; k < cnt; k++) {
		int i = sent_index(s, entry_number(json_object_array_get_idx(o, k), k));

		if (i < 0 || hit[i])
			return k;
		hit[i] = 1;
		idx[k] = i;
	}
	return cnt;
}

/* A packet the agent did not see whose archive search its deadline (or
 * its probe budget) cut off: unknown there, not "not seen" */
static bool cut_off(struct json_object *pk)
{
	struct json_object *v;

	return json_object_object_get_ex(pk, "archive_cut", &v) &&
	       json_object_is_type(v, json_type_string);
}

/* A packet the agent did not see whose time has archive files it could
 * not read in full: it may be in them, so unknown there too */
static bool damaged_files(struct json_object *pk)
{
	struct json_object *v;

	return json_object_object_get_ex(pk, "archive_damaged", &v) &&
	       json_object_get_int64(v) > 0;
}

/* Packet p, not seen, unknown at a for the reasons in why */
static void mark_unknown(struct agent_ref *a, int p, uint8_t why)
{
	a->cut[p] = why;
	a->ncut += !!(why & UNKNOWN_CUT);
	a->ndamaged += !!(why & UNKNOWN_DAMAGED);
}

/* One entry, not a repeat: packet p's windows, whether it left, its drop */
static void take_packet(struct agent_ref *a, struct json_object *pk, int p)
{
	struct json_object *s, *d, *r;

	a->saw[p] = json_object_object_get_ex(pk, "seen", &s) && json_object_get_boolean(s);
	a->seen += a->saw[p];
	if (!a->saw[p])
		mark_unknown(a, p, (cut_off(pk) ? UNKNOWN_CUT : 0) |
				   (damaged_files(pk) ? UNKNOWN_DAMAGED : 0));
	if (a->at)
		window_span(pk, &a->at[p], &a->until[p]);
	if (left_here(pk))
		a->saw[p] |= SAW_LEFT;
	/* the first drop it reports (agents before drops had none) */
	if (json_object_object_get_ex(pk, "drops", &d) && json_object_array_length(d) &&
	    json_object_object_get_ex(json_object_array_get_idx(d, 0), "reason", &r))
		a->ndropped += !!(a->dropped[p] = clean_dup(json_object_get_string(r)));
}

/* The packet an entry for packet p repeats (same_as: a frame number, of
 * one sent before it), or -1: an entry of its own */
static int repeat_of(struct json_object *pk, int p, const struct sent *sp)
{
	struct json_object *v;
	int f;

	if (!json_object_object_get_ex(pk, "same_as", &v))
		return -1;
	f = sent_index(sp, json_object_get_int64(v));
	return f < p ? f : -1;
}

/* Entry pk, packet p: on the first pass (repeats false) those of their
 * own, on the second the repeats, whose answer is that of their first */
static void take_entry(struct agent_ref *a, struct json_object *pk, int p,
		       const struct sent *sp, bool repeats)
{
	struct json_object *s;
	int f = repeat_of(pk, p, sp);

	if ((f >= 0) != repeats)
		return;
	if (f < 0) {
		take_packet(a, pk, p);
		return;
	}
	a->saw[p] = json_object_object_get_ex(pk, "seen", &s) && json_object_get_boolean(s);
	a->seen += a->saw[p];
	a->saw[p] |= a->saw[f] & SAW_LEFT;
	if (!a->saw[p])
		mark_unknown(a, p, a->cut[f]);
	if (a->at) {
		a->at[p] = a->at[f];
		a->until[p] = a->until[f];
	}
	if (a->dropped[f])
		a->ndropped += !!(a->dropped[p] = strdup(a->dropped[f]));
}

/* Agent a's answer (its body and HTTP status), judged against the packets
 * sent: an answer for other packets is named and not taken. */
static void take_answer(struct agent_ref *a, const char *resp, long status,
			const struct sent *sp, bool inferred)
{
	struct json_object *o = NULL;
	int cnt = 0, n = sp->n ? sp->n : 1, bad, *idx = NULL;
	uint8_t *hit = NULL;

	if (!(o = json_tokener_parse(resp)) || status != 200 ||
	    !json_object_is_type(o, json_type_array)) {
		set_error(a, "HTTP %ld %.100s", status, resp);
	} else if (!(idx = calloc((cnt = json_object_array_length(o)) + 1, sizeof(int))) ||
		   !(hit = calloc(n, 1)) || !(a->saw = calloc(n, 1)) || !(a->cut = calloc(n, 1)) ||
		   !(a->dropped = calloc(n, sizeof(*a->dropped))) ||
		   (inferred && (!(a->at = calloc(n, sizeof(*a->at))) ||
				 !(a->until = calloc(n, sizeof(*a->until)))))) {
		snprintf(a->error, sizeof(a->error), "out of memory");
	} else if (cnt != sp->n) {
		set_error(a, "answered for %d packets, not the %d sent; its answer is not taken",
			  cnt, sp->n);
	} else if ((bad = map_entries(o, sp, idx, hit)) != cnt) {
		set_error(a, "answered for packet %" PRId64 " %s; its answer is not taken",
			  entry_number(json_object_array_get_idx(o, bad), bad),
			  sent_index(sp, entry_number(json_object_array_get_idx(o, bad), bad)) < 0 ?
			  "not sent" : "twice");
	} else {
		a->answered = true;
		a->error[0] = 0;	/* its status request may have failed first */
		for (int k = 0; k < cnt; k++)
			take_entry(a, json_object_array_get_idx(o, k), idx[k], sp, false);
		/* repeats after their firsts, whatever the order of the entries */
		for (int k = 0; k < cnt; k++)
			take_entry(a, json_object_array_get_idx(o, k), idx[k], sp, true);
	}
	free(idx);
	free(hit);
	json_object_put(o);
}

/* Packet p is unknown at agent a: it did not answer, or its search for
 * p was cut off before it found it or met a damaged file. The walk goes
 * through it. */
static bool unknown_at(const struct agent_ref *a, int p)
{
	return !a->answered || a->cut[p];
}

/* Scratch for the walks: n ints each, allocated once; and the packets'
 * numbers, to print */
struct walk_buf {
	int *order, *kids;
	const struct sent *sp;
	int64_t skew_ms;	/* how far the hosts' clocks may differ (order inferred) */
};

/* One packet's walk: parent[] of the agents reached (-1: not, -2: the
 * start), through those that saw it and those that did not answer; an
 * unknown agent is kept only with a known one behind it. */
static void walk(const struct agent_ref *a, int n, const struct bt_topo *t, int start, int p,
		 int *parent, struct walk_buf *wb)
{
	int *order = wb->order, *kids = wb->kids, head = 0, tail = 0;

	for (int i = 0; i < n; i++) {
		parent[i] = -1;
		kids[i] = 0;
	}
	if (!unknown_at(&a[start], p) && !a[start].saw[p])
		return;
	parent[start] = -2;
	order[tail++] = start;
	while (head < tail) {
		int u = order[head++];

		for (int k = 0; k < t->deg[u]; k++) {
			int v = t->nbr[u][k];

			if (parent[v] == -1 && (unknown_at(&a[v], p) || a[v].saw[p])) {
				parent[v] = u;
				kids[u]++;
				order[tail++] = v;
			}
		}
	}
	/* prune unknown leaves, from the far end inwards */
	for (int k = tail - 1; k > 0; k--) {
		int v = order[k];

		if (unknown_at(&a[v], p) && !kids[v]) {
			kids[parent[v]]--;
			parent[v] = -1;
		}
	}
	if (unknown_at(&a[start], p) && !kids[start])
		parent[start] = -1;
}

/* Where the answers place agent i on packet p's path: 0 its host sent
 * it (it left there), 2 it dropped it, 1 between */
static int place_rank(const struct agent_ref *a, int i, int p)
{
	return a[i].saw[p] & SAW_LEFT ? 0 : a[i].dropped[p] ? 2 : 1;
}

/* No topology: the agents that saw packet p, source side first, by what
 * the answers prove: the agent whose host sent it (a window of egress)
 * first, the one that dropped it last; between the others, A before B
 * only when A's windows end before B's begin, by more than the skew the
 * hosts' clocks may have (wb->skew_ms). Windows that overlap prove no
 * order: those agents make one step, tie[] (parent[n + i]) 1 from an
 * agent to the next in its step, and are listed by name, so that packets
 * of one set of agents print and group alike whatever their windows'
 * times. The last is the start; the agents that did not answer cannot
 * be placed. */
static void walk_inferred(const struct agent_ref *a, int n, int p, int *parent,
			  struct walk_buf *wb)
{
	int *order = wb->order, *tie = parent + n, c = 0;
	int64_t hi = INT64_MIN;

	for (int i = 0; i < n; i++) {
		parent[i] = -1;
		tie[i] = 0;
		if (a[i].answered && a[i].saw[p]) {
			int k = c++, r = place_rank(a, i, p);

			/* insertion by rank, then time: a path is a few agents */
			while (k > 0 && (place_rank(a, order[k - 1], p) > r ||
					 (place_rank(a, order[k - 1], p) == r &&
					  a[order[k - 1]].at[p] > a[i].at[p]))) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = i;
		}
	}
	for (int k = 0; k < c; k++) {
		const struct agent_ref *x = &a[order[k]];

		if (k && place_rank(a, order[k], p) != place_rank(a, order[k - 1], p))
			hi = INT64_MIN;
		/* a step ends where the next rank begins, or where every
		 * window so far ends a skew before the next one starts */
		if (x->until[p] == INT64_MAX || hi == INT64_MAX)
			hi = INT64_MAX;
		else if (x->until[p] > hi)
			hi = x->until[p];
		if (k < c - 1) {
			const struct agent_ref *y = &a[order[k + 1]];

			tie[order[k]] = place_rank(a, order[k], p) == place_rank(a, order[k + 1], p) &&
					(hi == INT64_MAX || y->at[p] == INT64_MAX ||
					 hi + wb->skew_ms >= y->at[p]);
		}
	}
	/* each step's agents by name (a path is a few agents) */
	for (int lo = 0, end; lo < c; lo = end + 1) {
		for (end = lo; end < c - 1 && tie[order[end]]; end++)
			;
		for (int k = lo + 1; k <= end; k++)
			for (int j = k; j > lo && strcmp(a[order[j - 1]].name, a[order[j]].name) > 0; j--) {
				int x = order[j];

				order[j] = order[j - 1];
				order[j - 1] = x;
			}
		for (int k = lo; k <= end; k++)
			tie[order[k]] = k < end;
	}
	for (int k = 0; k < c; k++)
		parent[order[k]] = k == c - 1 ? -2 : order[k + 1];
}

/* Where a walk along the topology starts, in this order: the agent that
 * dropped the packet (those past it never saw it), the one whose host
 * sent it (the walk then goes towards the victim: printed root first),
 * --from, else the first agent */
enum walk_from { FROM_DROPPED, FROM_LEFT, FROM_GIVEN, FROM_FIRST, FROM_INFERRED };

static const char *const from_names[] = { "dropped", "left", "--from", "first agent",
					  "inferred" };

struct group {
	int *parent;			/* and n tie flags after it (walk_inferred) */
	enum walk_from from;
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

/* The agent whose host sent packet p (the first that says so), -1 for
 * none */
static int leaver(const struct agent_ref *a, int n, int p)
{
	for (int i = 0; i < n; i++)
		if (a[i].answered && (a[i].saw[p] & SAW_LEFT))
			return i;
	return -1;
}

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

/* kids[] of a group's walk; returns its leaves */
static int group_kids(const struct group *g, int n, int *kids)
{
	int l = 0;

	memset(kids, 0, n * sizeof(int));
	for (int v = 0; v < n; v++)
		if (g->parent[v] >= 0)
			kids[g->parent[v]]++;
	for (int v = 0; v < n; v++)
		l += g->parent[v] != -1 && !kids[v];
	return l;
}

/* The chain from leaf to the root of a group's walk into chain,
 * source side first (a walk from where the packets left: root first);
 * its length */
static int group_chain(const struct group *g, int n, int leaf, int *chain)
{
	int c = 0;

	for (int v = leaf; v >= 0 && c < n; v = g->parent[v])
		chain[c++] = v;
	for (int k = 0; g->from == FROM_LEFT && k < c / 2; k++) {
		int x = chain[k];

		chain[k] = chain[c - 1 - k];
		chain[c - 1 - k] = x;
	}
	return c;
}

/* chain[k] and chain[k + 1] in one step: their order is not known */
static bool tied(const struct group *g, int n, const int *chain, int k)
{
	return g->parent[n + chain[k]];
}

/* A path's steps for JSON: [[names], ...], one name a step when the
 * order is known, several when it is not */
static struct json_object *json_steps(const struct agent_ref *a, const struct group *g, int n,
				      const int *chain, int c)
{
	struct json_object *steps = json_object_new_array(), *step = NULL;

	for (int k = 0; k < c; k++) {
		if (!step)
			step = json_object_new_array();
		json_object_array_add(step, json_object_new_string(a[chain[k]].name));
		if (k == c - 1 || !tied(g, n, chain, k)) {
			json_object_array_add(steps, step);
			step = NULL;
		}
	}
	return steps;
}

/* The paths of a group's walk, source side first, one per leaf. */
static void group_paths(const struct agent_ref *a, int n, const struct group *g,
			struct json_object *jpaths, struct walk_buf *wb)
{
	int *chain = wb->order, *kids = wb->kids;

	group_kids(g, n, kids);
	for (int leaf = 0; leaf < n; leaf++) {
		int c;

		if (g->parent[leaf] == -1 || kids[leaf])
			continue;
		c = group_chain(g, n, leaf, chain);
		if (jpaths) {
			struct json_object *o = json_object_new_object(), *p = json_object_new_array(),
					   *u = json_object_new_array(), *pk = json_object_new_array(),
					   *l = json_object_new_array();

			for (int k = 0; k < c; k++) {
				json_object_array_add(p, json_object_new_string(a[chain[k]].name));
				if (unknown_at(&a[chain[k]], g->packets[0] - 1))
					json_object_array_add(u, json_object_new_string(a[chain[k]].name));
				if (group_left(a, chain[k], g))
					json_object_array_add(l, json_object_new_string(a[chain[k]].name));
			}
			/* the agents whose hosts sent the packets */
			json_object_object_add(o, "left", l);
			for (int k = 0; k < g->n; k++)
				json_object_array_add(pk, json_object_new_int64(
						      wb->sp->num[g->packets[k] - 1]));
			json_object_object_add(o, "path", p);
			/* the order the evidence gives: a step of several agents
			 * is one whose order is not known */
			json_object_object_add(o, "steps", json_steps(a, g, n, chain, c));
			json_object_object_add(o, "walked_from",
					       json_object_new_string(from_names[g->from]));
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
		for (int k = 0; k < c; k++) {
			bool open = tied(g, n, chain, k) && k < c - 1 && (!k || !tied(g, n, chain, k - 1));
			bool close = k && tied(g, n, chain, k - 1) && (k == c - 1 || !tied(g, n, chain, k));

			printf("%s%s%s%s%s%s", !k ? " " : tied(g, n, chain, k - 1) ? ", " : " -> ",
			       open ? "{" : "", a[chain[k]].name,
			       unknown_at(&a[chain[k]], g->packets[0] - 1) ? "?" : "",
			       group_left(a, chain[k], g) ? " (left)" : "", close ? "}" : "");
		}
		if (g->dropped_at >= 0)
			printf("  dropped at %s (reason %s)", a[g->dropped_at].name, g->reason);
		printf("\n");
	}
}

static bool has_start(const int *parent, int n)
{
	for (int i = 0; i < n; i++)
		if (parent[i] == -2)
			return true;
	return false;
}

static void free_groups(struct group *g, int ng)
{
	for (int k = 0; k < ng; k++) {
		free(g[k].packets);
		free(g[k].parent);
	}
	free(g);
}

/* Packets q and p are unknown at the same agents of a walk: one group
 * (its path marks them) */
static bool same_unknown(const struct agent_ref *a, int n, const int *parent, int q, int p)
{
	for (int i = 0; i < n; i++)
		if (parent[i] != -1 && unknown_at(&a[i], q) != unknown_at(&a[i], p))
			return false;
	return true;
}

/* The walk of every packet, grouped: returns the number of groups, or -1.
 * t NULL: the order inferred from the windows' times. */
static int walk_all(struct agent_ref *a, int n, const struct bt_topo *t, int start, int np,
		    struct group **out, int *no_path, struct walk_buf *wb)
{
	struct group *g = NULL;
	int ng = 0, *parent = malloc(2 * n * sizeof(int));

	*no_path = 0;
	if (!parent)
		return -1;
	for (int p = 0; p < np; p++) {
		int k, d = dropper(a, n, p), l = leaver(a, n, p), from = start < 0 ? 0 : start;
		enum walk_from how = !t ? FROM_INFERRED : d >= 0 ? FROM_DROPPED : l >= 0 ? FROM_LEFT
				     : start >= 0 ? FROM_GIVEN : FROM_FIRST;

		from = how == FROM_DROPPED ? d : how == FROM_LEFT ? l : from;
		memset(parent + n, 0, n * sizeof(int));
		if (t)
			walk(a, n, t, from, p, parent, wb);
		else
			walk_inferred(a, n, p, parent, wb);
		if (t ? parent[from] == -1 : !has_start(parent, n)) {
			(*no_path)++;
			continue;
		}
		for (int i = 0; i < n; i++)
			if (a[i].answered && a[i].saw[p] && parent[i] == -1)
				a[i].fp++;
		for (k = 0; k < ng; k++)
			if (!memcmp(g[k].parent, parent, 2 * n * sizeof(int)) && g[k].dropped_at == d &&
			    g[k].from == how && (d < 0 || !strcmp(g[k].reason, a[d].dropped[p])) &&
			    same_unknown(a, n, parent, g[k].packets[0] - 1, p))
				break;
		if (k == ng) {
			struct group *more = realloc(g, (ng + 1) * sizeof(*g));

			if (!more)
				goto err;
			g = more;
			memset(&g[ng], 0, sizeof(g[ng]));
			g[ng].dropped_at = d;
			g[ng].from = how;
			g[ng].reason = d >= 0 ? a[d].dropped[p] : NULL;
			g[ng].packets = calloc(np, sizeof(int));
			g[ng].parent = malloc(2 * n * sizeof(int));
			ng++;
			if (!g[k].packets || !g[k].parent)
				goto err;
			memcpy(g[k].parent, parent, 2 * n * sizeof(int));
		}
		g[k].packets[g[k].n++] = p + 1;
	}
	free(parent);
	*out = g;
	return ng;
err:
	free(parent);
	free_groups(g, ng);
	return -1;
}

/* The agents that did not answer, for the partial answer's note */
static int unanswered(const struct agent_ref *a, int n)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += !a[i].answered && !a[i].topo_only;
	return c;
}

/* The names of the topology's alone, at the end of the agents */
static int topo_only(const struct agent_ref *a, int n)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += a[i].topo_only;
	return c;
}

/* The packets an agent that answered did not see but cut off its
 * archive search for (or met damaged files of, damaged true): the answer
 * is partial for those */
static int unknown_packets(const struct agent_ref *a, bool damaged)
{
	return a->answered ? (damaged ? a->ndamaged : a->ncut) : 0;
}

static int cut_agents(const struct agent_ref *a, int n, bool damaged)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += unknown_packets(&a[i], damaged) > 0;
	return c;
}

static void print_cut_agents(const struct agent_ref *a, int n, bool damaged)
{
	int c = cut_agents(a, n, damaged);

	if (!c)
		return;
	if (damaged)
		printf("partial answer: %d agent%s could not read archive files (damaged) of the "
		       "time of some packets not seen:", c, c > 1 ? "s" : "");
	else
		printf("partial answer: %d agent%s cut off %s archive search (its deadline or "
		       "budget) before finding some packets:", c, c > 1 ? "s" : "",
		       c > 1 ? "their" : "its");
	for (int i = 0; i < n; i++)
		if (unknown_packets(&a[i], damaged))
			printf(" %s", a[i].name);
	printf("\n");
}

static void print_plain(const struct agent_ref *a, int n, const struct bt_topo *t, int start,
			int np, const struct group *g, int ng, int no_path, struct walk_buf *wb)
{
	int down = unanswered(a, n), wn = 12, wa = 24;
	bool unknown = false;

	/* the columns as wide as the longest name and address */
	for (int i = 0; i < n; i++) {
		wn = (int)strlen(a[i].name) > wn ? (int)strlen(a[i].name) : wn;
		wa = (int)strlen(a[i].addr) > wa ? (int)strlen(a[i].addr) : wa;
	}
	for (int i = 0; i < n; i++) {
		if (a[i].topo_only)
			continue;
		if (a[i].answered)
			printf("%-*s %-*s saw %d of %d packet%s%s%.0d%s%s%.0d%s%s%.0d%s\n", wn,
			       a[i].name, wa, a[i].addr, a[i].seen, np, np == 1 ? "" : "s",
			       a[i].ndropped ? " (dropped " : "",
			       a[i].ndropped, a[i].ndropped ? ")" : "",
			       a[i].ncut ? "; its archive search cut off for " : "", a[i].ncut,
			       a[i].ncut ? ": unknown there" : "",
			       a[i].ndamaged ? "; damaged archive files of the time of " : "",
			       a[i].ndamaged, a[i].ndamaged ? ": unknown there" : "");
		else
			printf("%-*s %-*s %s%s\n", wn, a[i].name, wa, a[i].addr,
			       a[i].not_asked ? "not asked (plain http, credentials given)"
					      : "no answer: unknown",
			       !strcmp(a[i].health, "down") ? " (Prometheus finds it down too)" : "");
	}
	if (down) {
		printf("partial answer: %d of %d agents did not answer:", down, n - topo_only(a, n));
		for (int i = 0; i < n; i++)
			if (!a[i].answered && !a[i].topo_only)
				printf(" %s", a[i].name);
		printf("\n");
	}
	print_cut_agents(a, n, false);
	print_cut_agents(a, n, true);
	if (!t && n > 1)
		printf("order inferred (no --topology): the agent a packet left first, the one "
		       "that dropped it last, the others by their windows' times where those "
		       "are more than %.3g s apart; {a, b}: their order is not known; the agents "
		       "that did not answer are not placed\n", wb->skew_ms / 1e3);
	for (int k = 0; k < ng; k++)
		if (g[k].from == FROM_FIRST) {
			printf("walked from %s, the first agent (no --from, and no agent says the "
			       "packets left it): give --from the agent nearest the victim\n",
			       a[0].name);
			break;
		}
	for (int k = 0; k < ng; k++) {
		group_paths(a, n, &g[k], NULL, wb);
		if (group_kids(&g[k], n, wb->kids) > 1)
			printf("  a fork: one branch is a false positive, or there are two sources\n");
		for (int i = 0; i < n; i++)
			unknown |= g[k].parent[i] != -1 && unknown_at(&a[i], g[k].packets[0] - 1);
	}
	if (unknown)
		printf("  NAME? did not answer, or its search was cut off or met damaged "
		       "archive files, and was walked through: the packets may have passed "
		       "it\n");
	if (no_path && t)
		printf("%d packet%s: no path (%s, nearest the victim, did not see %s)\n", no_path,
		       no_path > 1 ? "s" : "", a[start < 0 ? 0 : start].name,
		       no_path > 1 ? "them" : "it");
	else if (no_path)
		printf("%d packet%s: no path (no agent that answered saw %s)\n", no_path,
		       no_path > 1 ? "s" : "", no_path > 1 ? "them" : "it");
	for (int i = 0; i < n; i++)
		if (a[i].fp)
			printf("%s saw %d packet%s off their path: false positives\n", a[i].name,
			       a[i].fp, a[i].fp > 1 ? "s" : "");
}

static void print_json(const struct agent_ref *a, int n, const struct bt_topo *t,
		       const struct group *g, int ng, int no_path, struct walk_buf *wb)
{
	struct json_object *res = json_object_new_object(), *paths = json_object_new_array(),
			   *fps = json_object_new_array(), *ag = json_object_new_object(),
			   *down = json_object_new_array(), *cut = json_object_new_array(),
			   *damaged = json_object_new_array(), *topo = json_object_new_array();

	for (int i = 0; i < n; i++) {
		struct json_object *o;

		/* the topology's names that no agent had: walked through */
		if (a[i].topo_only) {
			json_object_array_add(topo, json_object_new_string(a[i].name));
			continue;
		}
		o = json_object_new_object();
		/* packets not seen whose search it cut off: unknown there */
		json_object_object_add(o, "packets_cut_off", json_object_new_int(a[i].ncut));
		if (unknown_packets(&a[i], false))
			json_object_array_add(cut, json_object_new_string(a[i].name));
		/* and those of whose time it could not read every archive file */
		json_object_object_add(o, "packets_archive_damaged",
				       json_object_new_int(a[i].ndamaged));
		if (unknown_packets(&a[i], true))
			json_object_array_add(damaged, json_object_new_string(a[i].name));

		json_object_object_add(o, "address", json_object_new_string(a[i].addr));
		json_object_object_add(o, "answered", json_object_new_boolean(a[i].answered));
		json_object_object_add(o, "packets_seen", json_object_new_int(a[i].seen));
		json_object_object_add(o, "packets_dropped", json_object_new_int(a[i].ndropped));
		if (a[i].error[0])
			json_object_object_add(o, "error", json_object_new_string(a[i].error));
		/* Prometheus's view of it, when Prometheus listed it */
		if (a[i].health[0])
			json_object_object_add(o, "prometheus_health",
					       json_object_new_string(a[i].health));
		if (a[i].last_error[0])
			json_object_object_add(o, "prometheus_error",
					       json_object_new_string(a[i].last_error));
		json_object_object_add(ag, a[i].name, o);
		if (!a[i].answered)
			json_object_array_add(down, json_object_new_string(a[i].name));
		if (a[i].fp) {
			struct json_object *f = json_object_new_object();

			json_object_object_add(f, "agent", json_object_new_string(a[i].name));
			json_object_object_add(f, "packets", json_object_new_int(a[i].fp));
			json_object_array_add(fps, f);
		}
	}
	for (int k = 0; k < ng; k++)
		group_paths(a, n, &g[k], paths, wb);
	json_object_object_add(res, "agents", ag);
	json_object_object_add(res, "partial", json_object_new_boolean(
			       json_object_array_length(down) || json_object_array_length(cut) ||
			       json_object_array_length(damaged)));
	json_object_object_add(res, "unanswered", down);
	json_object_object_add(res, "cut_off", cut);
	json_object_object_add(res, "archive_damaged", damaged);
	json_object_object_add(res, "topology_unmatched", topo);
	json_object_object_add(res, "order", json_object_new_string(t || n < 2 ? "topology" : "inferred"));
	json_object_object_add(res, "paths", paths);
	json_object_object_add(res, "no_path", json_object_new_int(no_path));
	json_object_object_add(res, "false_positives", fps);
	bt_json_print(res);
}

static void free_agents(struct agent_ref *a, int n, int np)
{
	for (int i = 0; i < n; i++) {
		for (int p = 0; a[i].dropped && p < np; p++)
			free(a[i].dropped[p]);
		free(a[i].dropped);
		free(a[i].saw);
		free(a[i].at);
		free(a[i].cut);
		free(a[i].until);
		free(a[i].url);
	}
	free(a);
}

static int answered_any(const struct agent_ref *a, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].answered)
			return 1;
	return 0;
}

/* The walk and its answer, once the agents have answered (none did: an
 * error); t NULL: the order inferred. Exit status. */
static int report(struct agent_ref *a, int n, const struct bt_topo *t, int start,
		  const struct sent *sp, double skew_s)
{
	struct walk_buf wb = { malloc(n * sizeof(int)), malloc(n * sizeof(int)), sp,
			       (int64_t)(skew_s * 1e3) };
	int np = answered_any(a, n) ? sp->n : -1;
	struct group *g = NULL;
	int ng = -1, no_path = 0, ret = BT_EXIT_USAGE;

	if (np >= 0 && wb.order && wb.kids)
		ng = walk_all(a, n, t, start, np, &g, &no_path, &wb);
	if (np >= 0 && ng < 0) {
		bt_err("trace: out of memory");
	} else if (np >= 0) {
		if (bt_g.json)
			print_json(a, n, t, g, ng, no_path, &wb);
		else
			print_plain(a, n, t, start, np, g, ng, no_path, &wb);
		/* 0: every packet has a path from the victim's side; 1: some not */
		ret = no_path || !np ? BT_EXIT_FAIL : BT_EXIT_OK;
		free_groups(g, ng);
	}
	free(wb.order);
	free(wb.kids);
	return ret;
}

static int by_number(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The packets a simulation sent: those the first answer lists, into
 * *num (malloc'd). The count, or -1. */
static int sent_of(const char *resp, uint32_t **num)
{
	struct json_object *o = json_tokener_parse(resp);
	int cnt = o && json_object_is_type(o, json_type_array) ? (int)json_object_array_length(o) : -1;

	*num = cnt >= 0 ? calloc(cnt + 1, sizeof(**num)) : NULL;
	for (int k = 0; *num && k < cnt; k++)
		(*num)[k] = entry_number(json_object_array_get_idx(o, k), k);
	if (*num)
		qsort(*num, cnt, sizeof(**num), by_number);
	json_object_put(o);
	return *num ? cnt : -1;
}

int bt_trace_answers(char *const *names, char *const *answers, int n, FILE *topology,
		     const char *from)
{
	struct agent_ref *a = calloc(n ? n : 1, sizeof(*a));
	struct bt_topo topo = { 0 };
	struct sent sp = { 0 };
	uint32_t *num = NULL;
	int start = -1, ret = BT_EXIT_USAGE;

	if (!a)
		return ret;
	for (int i = 0; i < n && !num; i++)
		if (answers[i] && (sp.n = sent_of(answers[i], &num)) < 0)
			sp.n = 0;
	sp.num = num;
	for (int i = 0; i < n; i++) {
		snprintf(a[i].name, sizeof(a[i].name), "%s", names[i]);
		snprintf(a[i].addr, sizeof(a[i].addr), "simulated");
		if (answers[i])
			take_answer(&a[i], answers[i], 200, &sp, !topology);
		else
			set_error(&a[i], "no answer");
	}
	if ((!topology || !bt_topology_read(topology, "topology", names, n, &topo)) &&
	    (!from || (start = find(a, n, from)) >= 0))
		ret = report(a, n, topology ? &topo : NULL, start, &sp, BT_ORDER_SKEW_S);
	bt_topo_free(&topo);
	free_agents(a, n, sp.n);
	free(num);
	return ret;
}

/* The agents: a growing list */
struct fleet {
	struct agent_ref *a;
	int n, cap;
	bool https;		/* a bare ADDR:PORT is asked over HTTPS (--cacert, --cert) */
};

/* What makes two entries one agent, into k: a unix socket's path, or
 * the URL asked with its scheme and host in lower case and the
 * scheme's port when none is given (https://H and https://h:443 are one) */
static void agent_key(const struct agent_ref *a, char *k, size_t len)
{
	const char *hp = strstr(a->url, "://"), *port;
	size_t i;

	if (a->addr[0] == '/' || !hp) {
		snprintf(k, len, "%s", a->addr);
		return;
	}
	snprintf(k, len, "%s", a->url);
	for (i = 0; k[i]; i++)
		k[i] = k[i] >= 'A' && k[i] <= 'Z' ? k[i] - 'A' + 'a' : k[i];
	port = strrchr(hp + 3, ':');
	if (!port || strchr(port, ']'))
		strncat(k, strncmp(a->url, "https://", 8) ? ":80" : ":443", len - strlen(k) - 1);
}

/* The agent already listed that x is (its key the same), or -1 */
static int fleet_find(const struct fleet *f, const struct agent_ref *x)
{
	char kx[sizeof(x->addr) + 8], ki[sizeof(x->addr) + 8];

	agent_key(x, kx, sizeof(kx));
	for (int i = 0; i < f->n; i++) {
		agent_key(&f->a[i], ki, sizeof(ki));
		if (!strcmp(ki, kx))
			return i;
	}
	return -1;
}

/* One agent, NAME=ADDR or ADDR; ADDR ADDR:PORT, [V6]:PORT, a URL
 * (http[s]://HOST:PORT, its path dropped) or a unix socket's path; the
 * entry made printable first (a Prometheus answer's address is printed
 * as the agent's name and address). hint: its name until /api/v1/status
 * gives one (NULL: the address). An agent listed twice (its key the
 * same) is asked once: the agent takes one trace of a client at a time,
 * a second copy would get HTTP 429. The one kept takes a NAME= given
 * either time. Its index, or -errno. */
static int fleet_add(struct fleet *f, const char *raw, const char *hint, const char *what)
{
	char entry[4 * ADDR_LEN], base[ADDR_LEN + sizeof("https://")];
	const char *eq, *addr = entry, *slash = NULL;
	struct agent_ref *x;
	int dup, err = 0;

	printable(entry, sizeof(entry), raw);
	eq = strchr(entry, '=');
	/* NAME= only before the address's own '/' or ':' */
	if (eq && eq > entry && !memchr(entry, '/', eq - entry) && !memchr(entry, ':', eq - entry))
		addr = eq + 1;
	else
		eq = NULL;
	if (!*addr || strlen(addr) >= sizeof(x->addr) ||
	    (eq && (size_t)(eq - entry) >= NAME_GIVEN)) {
		bt_err("%s: give [NAME=]ADDR:PORT, [NAME=]https://HOST:PORT or [NAME=]/SOCKET/PATH "
		       "(not '%s')", what, entry);
		return -EINVAL;
	}
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 16;
		struct agent_ref *more = realloc(f->a, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		f->a = more;
		f->cap = cap;
	}
	x = &f->a[f->n];
	memset(x, 0, sizeof(*x));
	memcpy(x->addr, addr, strlen(addr) + 1);	/* its length checked above */
	if (addr[0] == '/')
		snprintf(base, sizeof(base), "http://localhost");
	else if (!strncmp(addr, "http://", 7) || !strncmp(addr, "https://", 8)) {
		slash = strchr(strstr(addr, "//") + 2, '/');
		snprintf(base, sizeof(base), "%.*s", (int)(slash ? slash - addr : (long)strlen(addr)),
			 addr);
	} else
		snprintf(base, sizeof(base), "%s://%.*s", f->https ? "https" : "http",
			 ADDR_LEN - 1, addr);
	if (!(x->url = strdup(base)))
		return -ENOMEM;
	if (slash)	/* a scrape URL's path: not ours; base is addr's prefix */
		memcpy(x->addr, base, strlen(base) + 1);
	x->named = eq;
	if (eq)
		snprintf(x->name, sizeof(x->name), "%.*s", (int)(eq - entry), entry);
	else	/* Prometheus's instance label, or the address */
		printable(x->name, sizeof(x->name), hint ? hint : x->addr);
	dup = fleet_find(f, x);
	for (int i = 0; x->named && i < f->n && !err; i++)
		if (i != dup && f->a[i].named && !strcmp(f->a[i].name, x->name)) {
			bt_err("%s: '%s' twice", what, x->name);
			err = -EINVAL;
		}
	if (!err && dup >= 0 && x->named && f->a[dup].named && strcmp(f->a[dup].name, x->name)) {
		bt_err("%s: '%s' and '%s' are one agent (%s)", what, f->a[dup].name, x->name,
		       asked_at(x));
		err = -EINVAL;
	} else if (!err && dup >= 0 && x->named) {
		memcpy(f->a[dup].name, x->name, sizeof(x->name));
		f->a[dup].named = true;
	}
	if (err || dup >= 0) {
		free(x->url);
		x->url = NULL;
		return err ? err : dup;
	}
	return f->n++;
}

/* A response body, up to RESP_MAX */
struct body {
	char *buf;
	size_t len;
	bool over;	/* cut at RESP_MAX */
};

static size_t body_write(char *data, size_t size, size_t nmemb, void *cls)
{
	struct body *b = cls;
	size_t n = size * nmemb;
	char *more;

	if ((b->over = b->len + n > RESP_MAX) || !(more = realloc(b->buf, b->len + n + 1)))
		return 0;	/* curl: CURLE_WRITE_ERROR */
	memcpy(more + b->len, data, n);
	b->len += n;
	more[b->len] = 0;
	b->buf = more;
	return n;
}

/* An agent asked in clear text: over TCP, not HTTPS. Credentials go to
 * none of them (basic auth's password is in every request, readable on
 * the way); a unix socket stays on the host. */
static bool clear_text(const struct agent_ref *a)
{
	return a->addr[0] != '/' && strncmp(a->url, "https://", 8);
}

static bool creds(const struct bt_fleet_opts *o)
{
	return o->user || o->netrc;
}

/* TLS and credentials, for every request to an agent. The password is
 * never in argv: BLOOMTAP_PASSWORD, or the --netrc file; and never sent
 * in clear text. */
static void agent_opts(CURL *h, const struct bt_fleet_opts *o, const struct agent_ref *a)
{
	const char *pw = getenv("BLOOMTAP_PASSWORD");

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* no proxy, whatever the environment says (https_proxy, all_proxy):
	 * the agents and Prometheus are asked directly, and credentials and
	 * packets go to no one else */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	if (a && a->addr[0] == '/')
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, a->addr);
	if (o->cacert) {
		curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);
		/* that CA alone: not the system's directory too, which curl
		 * would read again for each connection */
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (!a || clear_text(a))
		return;		/* Prometheus: its CA alone; clear text: no credentials */
	if (o->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, o->cert);
	if (o->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, o->key);
	/* --netrc: the file's login and password for the URL's host; curl
	 * reads the file only when CURLOPT_USERNAME is unset, so --user
	 * goes in the URL (url_user), and the password for that login */
	if (o->netrc) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_NETRC, (long)CURL_NETRC_REQUIRED);
		curl_easy_setopt(h, CURLOPT_NETRC_FILE, o->netrc);
	} else if (o->user) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, o->user);
		if (pw)
			curl_easy_setopt(h, CURLOPT_PASSWORD, pw);
	}
}

/* --user with --netrc: the login in the URL (scheme://USER@HOST...),
 * escaped, for curl to find its password in the file */
static void url_user(char *url, size_t len, const char *user)
{
	char *esc = curl_easy_escape(NULL, user, 0), *hp = strstr(url, "://"), rest[700];

	if (esc && hp) {
		snprintf(rest, sizeof(rest), "%s", hp + 3);
		snprintf(hp + 3, len - (hp + 3 - url), "%s@%s", esc, rest);
	}
	curl_free(esc);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One request to one agent: its /api/v1/status, or the trace */
struct xfer {
	struct agent_ref *a;
	const struct bt_fleet_opts *o;
	bool status;
	bool skipped;		/* a trace not asked: its agent's status request failed */
	CURL *h;
	struct body b;
	char url[700], err[CURL_ERROR_SIZE];
	struct curl_slist *connect_to;	/* --tls-server-name: the name in the URL */
	CURLcode rc;
	long code;
};

/* With --tls-server-name NAME, the URL names NAME (what the certificate
 * is checked against, SNI) and CURLOPT_CONNECT_TO the agent's address:
 * a DaemonSet's pods share one certificate for one name. The base URL
 * into dst, https://NAME:PORT, or the agent's own. */
static void tls_name(struct xfer *x, const char *name, char *dst, size_t len)
{
	const char *hp = strstr(x->a->url, "://"), *port;
	char rule[600];

	snprintf(dst, len, "%s", x->a->url);
	if (!name || strncmp(x->a->url, "https://", 8) || !(port = strrchr(hp + 3, ':')) ||
	    strchr(port, ']'))
		return;
	snprintf(dst, len, "https://%s%s", name, port);
	snprintf(rule, sizeof(rule), "%s%s:%.*s%s", name, port, (int)(port - hp - 3), hp + 3, port);
	x->connect_to = curl_slist_append(NULL, rule);
}

/* The deadline_ms a trace request carries, for a client that waits ms
 * for its answer: less the time the answer takes to come back (a TLS
 * handshake, the request and the answer on the wire, which may start
 * before the agent reads the request), so that an agent that answers at
 * its deadline is not cut off: a quarter of ms, at most DEADLINE_MARGIN_MS */
#define DEADLINE_MARGIN_MS 1000
static long agent_deadline_ms(long ms)
{
	return ms - (ms / 4 < DEADLINE_MARGIN_MS ? ms / 4 : DEADLINE_MARGIN_MS);
}

/* Starts x: the agent's own deadline, cut to what is left of the total
 * (the trace request carries it, less a margin: the agent need not work
 * past it) */
static int xfer_start(CURLM *m, struct xfer *x, const struct bt_fleet_opts *o, const char *path,
		      const void *body, size_t len, struct curl_slist *hdrs, double end)
{
	long ms = (long)(1000 * (o->agent_timeout_s < end - now_s() ? o->agent_timeout_s
								     : end - now_s()));
	char base[400];

	x->o = o;
	if (ms < 1 || !(x->h = curl_easy_init())) {
		x->rc = ms < 1 ? CURLE_OPERATION_TIMEDOUT : CURLE_OUT_OF_MEMORY;
		snprintf(x->err, sizeof(x->err), "%s", ms < 1 ? "not asked: --timeout passed first"
							      : "out of memory");
		return -1;
	}
	tls_name(x, o->tls_server_name, base, sizeof(base));
	if (x->status)
		snprintf(x->url, sizeof(x->url), "%s/api/v1/status", base);
	else
		snprintf(x->url, sizeof(x->url), "%s/api/v1/trace?deadline_ms=%ld%s", base,
			 agent_deadline_ms(ms), path);
	if (o->user && o->netrc && !clear_text(x->a))
		url_user(x->url, sizeof(x->url), o->user);
	agent_opts(x->h, o, x->a);
	if (x->connect_to)
		curl_easy_setopt(x->h, CURLOPT_CONNECT_TO, x->connect_to);
	curl_easy_setopt(x->h, CURLOPT_URL, x->url);
	curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(x->h, CURLOPT_ERRORBUFFER, x->err);
	curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(x->h, CURLOPT_WRITEDATA, &x->b);
	curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
	if (!x->status) {
		curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(x->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_multi_add_handle(m, x->h);
	x->a->asked = true;
	return 0;
}

static void xfer_done(struct xfer *x, const struct sent *sp, bool inferred);

/* Every request, at most o->parallel at once, all by end (CLOCK_MONOTONIC
 * s); each taken as it completes (xfer_done), judged against the packets
 * sent */
static void run_all(struct xfer *x, int nx, const struct bt_fleet_opts *o, const char *path,
		    const void *body, size_t len, double end, const struct sent *sp)
{
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	CURLM *m = curl_multi_init();
	int next = 0, active = 0, running;
	CURLMsg *msg;

	/* no "Expect: 100-continue": its wait is a second per agent */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!m || !hdrs) {
		for (int k = 0; k < nx; k++) {
			x[k].rc = CURLE_OUT_OF_MEMORY;
			snprintf(x[k].err, sizeof(x[k].err), "out of memory");
			xfer_done(&x[k], sp, !o->topology);
		}
		next = nx;
	}
	while (next < nx || active) {
		while (active < o->parallel && next < nx) {
			if ((x[next].skipped = !x[next].status && x[next].a->status_down))
				xfer_done(&x[next], sp, !o->topology);
			else if (!xfer_start(m, &x[next], o, path, body, len, hdrs, end))
				active++;
			else
				xfer_done(&x[next], sp, !o->topology);
			next++;
		}
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &running))) {
			struct xfer *d;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&d);
			d->rc = msg->data.result;
			curl_easy_getinfo(d->h, CURLINFO_RESPONSE_CODE, &d->code);
			curl_multi_remove_handle(m, d->h);
			curl_easy_cleanup(d->h);
			d->h = NULL;
			active--;
			xfer_done(d, sp, !o->topology);
		}
		if (active)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	curl_multi_cleanup(m);
	curl_slist_free_all(hdrs);
}

/* The host of a URL (scheme://[USER@]HOST[:PORT]...), without the
 * port: what curl looks up in a netrc file */
static void url_host(const char *url, char *host, size_t len)
{
	const char *h = strstr(url, "://"), *at;
	size_t n;

	h = h ? h + 3 : url;
	if ((at = strchr(h, '@')) && at < h + strcspn(h, "/"))
		h = at + 1;
	n = *h == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/?");
	snprintf(host, len, "%.*s", (int)n, h);
}

/* The netrc file has a line for host (a "machine HOST" entry of login
 * user when user is given, or a "default" one when dflt): curl sends
 * credentials */
static bool netrc_has(const char *path, const char *host, const char *user, bool dflt)
{
	FILE *f = fopen(path, "r");
	char tok[256], machine[256] = "", login[256] = "";
	bool found = false, in = false;

	/* an entry ends where the next begins, or at the file's end */
	while (f && !found) {
		bool end = fscanf(f, "%255s", tok) != 1;

		if (end || !strcmp(tok, "machine") || !strcmp(tok, "default")) {
			found = in && ((dflt && !strcmp(machine, "*")) || !strcmp(machine, host)) &&
				(!user || !strcmp(login, user));
			in = !end;
			login[0] = 0;
			if (end)
				break;
			if (!strcmp(tok, "default"))
				snprintf(machine, sizeof(machine), "*");
			else if (fscanf(f, "%255s", machine) != 1)
				break;
		} else if (!strcmp(tok, "login") && fscanf(f, "%255s", login) != 1) {
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* An HTTP 401: no credentials sent (none given, or no netrc line for
 * the host), or the ones sent refused */
static void unauthorized(struct agent_ref *a, const struct xfer *x)
{
	const struct bt_fleet_opts *o = x->o;
	char host[256];

	url_host(x->url, host, sizeof(host));
	if (!o || !creds(o))
		set_error(a, "HTTP 401: the agent asks for credentials (give --user NAME, and "
			  "BLOOMTAP_PASSWORD or --netrc FILE)");
	else if (o->netrc && !netrc_has(o->netrc, host, o->user, true))
		set_error(a, "HTTP 401: no netrc line for %s%s%s in %s (machine HOST login NAME "
			  "password PW; HOST without the port)", host, o->user ? " login " : "",
			  o->user ? o->user : "", o->netrc);
	else
		set_error(a, "HTTP 401: the agent refused the credentials (--user, and "
			  "BLOOMTAP_PASSWORD or --netrc)");
}

/* A certificate for another name than the one asked: OpenSSL's curl says
 * "certificate subject name (A) does not match target host name 'B'" or
 * "no alternative certificate subject name matches target host name 'B'" */
static bool name_mismatch(struct agent_ref *a, const struct xfer *x, const char *why)
{
	const char *t = strstr(why, "target host name '"), *sub = strstr(why, "subject name (");
	const char *flag = x->o && x->o->tls_server_name ? "--tls-server-name"
				  : "the address asked; --tls-server-name NAME checks another";
	char target[256] = "";

	if (!t)
		return false;
	snprintf(target, sizeof(target), "%.*s", (int)strcspn(t + 18, "'"), t + 18);
	if (sub && strstr(sub, ") does not match"))
		set_error(a, "its certificate is for '%.*s', not '%s' (%s)",
			  (int)(strstr(sub, ") does not match") - sub - 14), sub + 14, target, flag);
	else
		set_error(a, "its certificate does not name '%s' (%s)", target, flag);
	return true;
}

/* x's failure, said as plainly as curl lets: the usual causes named */
static void xfer_error(struct agent_ref *a, const struct xfer *x)
{
	const char *why = x->err[0] ? x->err : curl_easy_strerror(x->rc);

	if (x->rc == CURLE_WRITE_ERROR && x->b.over)
		set_error(a, "its answer is over the %d MiB an answer may take", RESP_MAX >> 20);
	else if (x->rc == CURLE_PEER_FAILED_VERIFICATION && name_mismatch(a, x, why))
		return;
	else if (x->rc == CURLE_PEER_FAILED_VERIFICATION || x->rc == CURLE_SSL_CACERT_BADFILE)
		set_error(a, "its certificate is not one --cacert vouches for (%s)", why);
	else if (x->rc == CURLE_OPERATION_TIMEDOUT)
		set_error(a, "no answer in time (%s)", why);
	else if (x->rc == CURLE_GOT_NOTHING && clear_text(a))
		set_error(a, "no answer over plain http (%s): an agent with a web config speaks "
			  "HTTPS; give --cacert", why);
	else if (x->rc)
		set_error(a, "%s", why);
	else if (x->code == 401)
		unauthorized(a, x);
	/* the agent answers a client's traces one at a time, and one the
	 * client gave up on (--timeout, ^C) runs on to its deadline_ms */
	else if (x->code == 429 && x->b.buf && strstr(x->b.buf, "under way"))
		set_error(a, "HTTP 429: it is still answering an earlier trace of this client: "
			  "retry in a few seconds (or give --timeout longer than its work)");
	else
		set_error(a, "HTTP %ld %.100s", x->code, x->b.buf ? x->b.buf : "");
}

/* The name an agent gives itself in /api/v1/status: its host, else its
 * instance */
static void take_status(struct agent_ref *a, const struct xfer *x)
{
	struct json_object *o, *v;
	const char *name = NULL;

	if (a->named || x->rc || x->code != 200 || !x->b.buf || !(o = json_tokener_parse(x->b.buf)))
		return;
	if ((json_object_object_get_ex(o, "host", &v) && (name = json_object_get_string(v)) &&
	     *name) ||
	    (json_object_object_get_ex(o, "instance", &v) && (name = json_object_get_string(v)) &&
	     *name))
		printable(a->name, NAME_GIVEN, name);
	json_object_put(o);
}

/* An agent's address without its scheme: HOST:PORT, or a socket's path */
static const char *host_port(const struct agent_ref *a)
{
	const char *hp = strstr(a->addr, "://");

	return hp ? hp + 3 : a->addr;
}

/* A name that another agent holds too gets its HOST:PORT after it,
 * name@HOST:PORT, on every agent that shares it whatever gave the name
 * (its /api/v1/status, Prometheus's instance label): none keeps it bare,
 * which one would change with the order of the answers. A name given on
 * the command line (NAME=) stays as given. Then no two may be one: the
 * JSON answer's agents are keyed by name, a topology names them. 0, or
 * -EINVAL with the clash said. */
static int unique_names(struct fleet *f)
{
	bool *clash = calloc(f->n ? f->n : 1, sizeof(*clash));
	int err = clash ? 0 : -ENOMEM;

	for (int i = 0; clash && i < f->n; i++)
		for (int k = 0; !f->a[i].named && k < f->n && !clash[i]; k++)
			clash[i] = k != i && !strcmp(f->a[k].name, f->a[i].name);
	for (int i = 0; clash && i < f->n; i++)
		if (clash[i]) {
			struct agent_ref *a = &f->a[i];
			char both[sizeof(a->name) + sizeof(a->addr) + 1];

			snprintf(both, sizeof(both), "%s@%s", a->name, host_port(a));
			both[sizeof(a->name) - 1] = 0;
			memcpy(a->name, both, sizeof(a->name));
		}
	free(clash);
	for (int i = 0; !err && i < f->n; i++)
		for (int k = i + 1; !err && k < f->n; k++)
			if (!strcmp(f->a[i].name, f->a[k].name)) {
				bt_err("trace: two agents are named '%s' (%s and %s): name them "
				       "NAME=ADDR", f->a[i].name, asked_at(&f->a[i]),
				       asked_at(&f->a[k]));
				err = -EINVAL;
			}
	return err;
}

/* A request's answer, taken as it completes and its body freed: the
 * bodies held at once are those of the requests under way, at most
 * o->parallel of RESP_MAX each, however many agents are asked */
static void xfer_done(struct xfer *x, const struct sent *sp, bool inferred)
{
	if (x->status && x->rc && !x->a->answered) {
		/* no connection, or no answer in time: the trace would wait as
		 * long again, in a slot another agent could use */
		xfer_error(x->a, x);
		strncat(x->a->error, "; its status request, so not asked the trace",
			sizeof(x->a->error) - strlen(x->a->error) - 1);
		x->a->status_down = true;
	} else if (x->status)
		take_status(x->a, x);
	else if (x->skipped)
		;	/* its status request said why */
	else if (x->rc || x->code != 200)
		xfer_error(x->a, x);
	else
		take_answer(x->a, x->b.buf ? x->b.buf : "", x->code, sp, inferred);
	free(x->b.buf);
	x->b = (struct body){ 0 };
}

/* GET url into *b with the CA of --cacert; 0 or a message */
static int get_one(const char *url, const struct bt_fleet_opts *o, double end, struct body *b,
		   char *err, size_t errlen)
{
	CURL *h = curl_easy_init();
	char cerr[CURL_ERROR_SIZE] = "", host[256];
	long code = 0, ms = (long)(1000 * (end - now_s()));
	CURLcode rc;

	if (!h)
		return snprintf(err, errlen, "out of memory"), -1;
	agent_opts(h, o, NULL);
	/* Prometheus's own credentials: the --netrc line of its host, over
	 * HTTPS only; not a "default" line, which is the agents' (the login
	 * the line's: --user is the agents'). A URL's USER[:PW]@ wins. */
	url_host(url, host, sizeof(host));
	if (o->netrc && !strncmp(url, "https://", 8) && netrc_has(o->netrc, host, NULL, false)) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
		curl_easy_setopt(h, CURLOPT_NETRC_FILE, o->netrc);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	if (rc == CURLE_WRITE_ERROR && b->over)
		snprintf(err, errlen, "its answer is over the %d MiB an answer may take",
			 RESP_MAX >> 20);
	else if (rc)
		snprintf(err, errlen, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
	else if (code == 401)
		snprintf(err, errlen, "HTTP 401: Prometheus asks for credentials (a 'machine %.100s "
			 "login NAME password PW' line of --netrc, over https)", host);
	else if (code != 200)
		snprintf(err, errlen, "HTTP %ld", code);
	return rc || code != 200 ? -1 : 0;
}

/* url without its userinfo (scheme://HOST..., not scheme://USER:PW@HOST...):
 * what a message may print of a URL given with credentials */
static void without_userinfo(char *dst, size_t len, const char *url)
{
	const char *hp = strstr(url, "://"), *at;
	size_t auth;

	if (!hp) {
		snprintf(dst, len, "%s", url);
		return;
	}
	hp += 3;
	auth = strcspn(hp, "/?#");
	for (at = hp + auth; at > hp && at[-1] != '@'; at--)
		;
	snprintf(dst, len, "%.*s%s", (int)(hp - url), url, at > hp ? at : hp);
}

/* A JSON value's text, "" for none or null */
static const char *text_of(struct json_object *v)
{
	const char *t = v ? json_object_get_string(v) : NULL;

	return t ? t : "";
}

/* --agents-from-prometheus URL[?job=NAME]: the active targets of
 * Prometheus's /api/v1/targets (of that job: a target without a job
 * label is not one of it), each by its scrape URL's scheme, host and
 * port; named by its instance label until it names itself. A target
 * Prometheus finds down is asked all the same (its state is a scrape
 * old, and Prometheus's own credentials may be what fails); its health
 * and last error are kept for the answer. Only http:// and https://
 * scrape URLs are taken: what Prometheus answers is not the user's word,
 * and a unix socket's path would get the credentials (a socket is not
 * clear text) wherever it leads; those refused are named once. */
static int from_prometheus(struct fleet *f, const struct bt_fleet_opts *o, double end)
{
	char url[600], shown[600], err[300], *q, job[128] = "", refused[400] = "";
	struct json_object *root = NULL, *data, *act;
	struct body b = { 0 };
	int ret = -EINVAL, took = 0, nrefused = 0;

	without_userinfo(shown, sizeof(shown), o->prometheus);
	snprintf(url, sizeof(url), "%s", o->prometheus);
	if ((q = strchr(url, '?'))) {
		*q = 0;
		if (strncmp(q + 1, "job=", 4) || !q[5]) {
			bt_err("--agents-from-prometheus %s: the only parameter is ?job=NAME", shown);
			return -EINVAL;
		}
		snprintf(job, sizeof(job), "%s", q + 5);
	}
	/* Prometheus scrapes more than the agents (node exporters, itself):
	 * credentials and packets go only to the job named */
	if (!job[0] && creds(o)) {
		bt_err("--agents-from-prometheus %s: with --user or --netrc, name the agents' "
		       "job (URL?job=NAME): every target Prometheus scrapes would get the "
		       "credentials and the packets", shown);
		return -EINVAL;
	}
	while (*url && url[strlen(url) - 1] == '/')
		url[strlen(url) - 1] = 0;
	strncat(url, "/api/v1/targets?state=active", sizeof(url) - strlen(url) - 1);
	if (get_one(url, o, end, &b, err, sizeof(err))) {
		bt_err("--agents-from-prometheus %s: %s", shown, err);
		goto out;
	}
	if (!(root = json_tokener_parse(b.buf)) || !json_object_object_get_ex(root, "data", &data) ||
	    !json_object_object_get_ex(data, "activeTargets", &act) ||
	    !json_object_is_type(act, json_type_array)) {
		bt_err("--agents-from-prometheus %s: not Prometheus's /api/v1/targets answer", shown);
		goto out;
	}
	ret = 0;
	for (size_t i = 0; i < json_object_array_length(act) && !ret; i++) {
		struct json_object *t = json_object_array_get_idx(act, i), *l, *v;
		const char *su = NULL, *inst = NULL;
		int k;

		if (!json_object_object_get_ex(t, "labels", &l))
			l = NULL;
		if (job[0] && (!l || !json_object_object_get_ex(l, "job", &v) || strcmp(text_of(v), job)))
			continue;
		if (json_object_object_get_ex(t, "scrapeUrl", &v))
			su = text_of(v);
		if (l && json_object_object_get_ex(l, "instance", &v))
			inst = text_of(v);
		if (!su || !*su)
			continue;
		if (strncmp(su, "http://", 7) && strncmp(su, "https://", 8)) {
			char one[100];

			printable(one, sizeof(one), su);
			if (nrefused++ < WARN_MAX)
				snprintf(refused + strlen(refused), sizeof(refused) - strlen(refused),
					 "%s%s", nrefused > 1 ? ", " : "", one);
			continue;
		}
		if ((k = fleet_add(f, su, inst, "--agents-from-prometheus")) < 0) {
			ret = k;
			continue;
		}
		took++;
		if (json_object_object_get_ex(t, "health", &v))
			printable(f->a[k].health, sizeof(f->a->health), text_of(v));
		if (json_object_object_get_ex(t, "lastError", &v))
			printable(f->a[k].last_error, sizeof(f->a->last_error), text_of(v));
	}
	if (nrefused)
		bt_warn("--agents-from-prometheus %s: %d target%s not asked, %s scrape URL not "
			"http:// or https://: %s%s", shown, nrefused, nrefused > 1 ? "s" : "",
			nrefused > 1 ? "their" : "its", refused, nrefused > WARN_MAX ? ", ..." : "");
	if (!ret && !took) {
		bt_err("--agents-from-prometheus %s: no active target%s%s", shown,
		       job[0] ? " of job " : "", job);
		ret = -ENOENT;
	}
out:
	json_object_put(root);
	free(b.buf);
	return ret;
}

/* --agents-from-dns NAME:PORT: every address the name has (A and AAAA;
 * a Kubernetes headless Service's names its pods) */
static int from_dns(struct fleet *f, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *r;
	char host[256], entry[320], ip[64];
	int err = 0;

	if (!colon || colon == arg || !colon[1] || (size_t)(colon - arg) >= sizeof(host)) {
		bt_err("--agents-from-dns: give NAME:PORT (not '%s')", arg);
		return -EINVAL;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - arg), arg);
	if ((err = getaddrinfo(host, colon + 1, &hints, &res))) {
		if (err == EAI_NONAME || err == EAI_AGAIN)
			bt_err("--agents-from-dns %s: '%s' did not resolve (%s): %s", arg, host,
			       gai_strerror(err), err == EAI_NONAME ? "no such name, or none with "
			       "addresses" : "no DNS server answered, or the name's failed");
		else
			bt_err("--agents-from-dns %s: %s", arg, gai_strerror(err));
		return -ENOENT;
	}
	/* an address given twice (a name on two lines of /etc/hosts) is one
	 * agent (fleet_add) */
	for (r = res; r; r = r->ai_next) {
		bool v6 = r->ai_family == AF_INET6;

		if (getnameinfo(r->ai_addr, r->ai_addrlen, ip, sizeof(ip), NULL, 0, NI_NUMERICHOST))
			continue;
		snprintf(entry, sizeof(entry), v6 ? "[%s]:%s" : "%s:%s", ip, colon + 1);
		if ((err = fleet_add(f, entry, NULL, "--agents-from-dns")) < 0)
			break;
	}
	freeaddrinfo(res);
	return err < 0 ? err : 0;
}

/* --agents-file FILE: an agent a line, as --agents takes it; '#' comments */
static int from_file(struct fleet *f, const char *path)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL, what[300];
	size_t cap = 0;
	int err = 0, lineno = 0;

	if (!fp) {
		bt_err("--agents-file %s: %s", path, strerror(errno));
		return -errno;
	}
	while (!err && getline(&line, &cap, fp) >= 0) {
		char *s = line;

		lineno++;
		s[strcspn(s, "#\r\n")] = 0;
		s += strspn(s, " \t");
		s[strcspn(s, " \t")] = 0;
		snprintf(what, sizeof(what), "--agents-file %s:%d", path, lineno);
		if (*s && (err = fleet_add(f, s, NULL, what)) > 0)
			err = 0;
	}
	free(line);
	fclose(fp);
	return err;
}

/* An agent's name before its error, or "" when it is the address the
 * error starts with */
static const char *same_addr(const struct agent_ref *a)
{
	return strcmp(a->name, a->addr) ? a->name : "";
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct agent_ref *)a)->name, ((const struct agent_ref *)b)->name);
}

/* The files of the options, read before any agent is asked: one error
 * naming the file, not the same failure from every agent. A netrc file
 * that another user owns, or that group or others may read or write,
 * holds passwords in the open or lets another choose where they go
 * (ssh's rule for its keys): refused. */
static int check_files(const struct bt_fleet_opts *o)
{
	const char *const files[][2] = { { "--netrc", o->netrc }, { "--cacert", o->cacert },
					 { "--cert", o->cert }, { "--key", o->key } };
	char buf[4096];
	struct stat st;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;
		size_t got;

		if (!files[i][1])
			continue;
		if (!(f = fopen(files[i][1], "r")) || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
			bt_err("trace: %s %s: %s", files[i][0], files[i][1],
			       f ? "not a regular file" : strerror(errno));
			if (f)
				fclose(f);
			return -EINVAL;
		}
		got = fread(buf, 1, sizeof(buf) - 1, f);
		buf[got] = 0;
		fclose(f);
		if (i == 0 && st.st_uid != geteuid()) {
			bt_err("trace: --netrc %s: owned by uid %u, not %u who runs trace: chown "
			       "it, chmod 600 it", files[i][1], (unsigned)st.st_uid,
			       (unsigned)geteuid());
			return -EINVAL;
		}
		if (i == 0 && (st.st_mode & 066)) {
			bt_err("trace: --netrc %s: group or others may read or write it (mode "
			       "%03o): chmod 600 it", files[i][1], (unsigned)(st.st_mode & 0777));
			return -EINVAL;
		}
		/* PEM: a DER file or a key would fail every handshake alike */
		if (i == 1 && !strstr(buf, "-----BEGIN CERTIFICATE-----")) {
			bt_err("trace: --cacert %s: not a PEM certificate (no -----BEGIN "
			       "CERTIFICATE----- line)", o->cacert);
			return -EINVAL;
		}
	}
	return 0;
}

/* --topology over the agents' names. An agent that did not answer and
 * was not named NAME= could not be asked its name: it is its address or
 * Prometheus's instance label, not the host the file names it by. So
 * while such an agent is down, a name of the file that no agent has is
 * one more agent, unanswered, walked through as unknown (r1?) as a down
 * one is, and warned of; with every agent named, it is an error. */
static int fleet_topology(struct fleet *f, const char *path, char ***names, struct bt_topo *t)
{
	struct name_list miss = { 0 };
	char some[600], **more_names;
	struct agent_ref *more;
	int nameless = 0, err = 0;

	for (int i = 0; i < f->n; i++)
		nameless += !f->a[i].answered && !f->a[i].named;
	if (nameless && ((err = read_topology(path, *names, f->n, t, &miss)) ||
			 !answered_any(f->a, f->n)))
		goto out;	/* none answered: the trace ends there */
	if (miss.n) {
		if (!(more = realloc(f->a, (f->n + miss.n) * sizeof(*more)))) {
			err = -ENOMEM;
			goto out;
		}
		f->a = more;
		f->cap = f->n + miss.n;
		if (!(more_names = realloc(*names, (f->n + miss.n) * sizeof(**names)))) {
			err = -ENOMEM;
			goto out;
		}
		*names = more_names;
		for (int k = 0; k < miss.n; k++) {
			memset(&f->a[f->n], 0, sizeof(f->a[f->n]));
			snprintf(f->a[f->n].name, sizeof(f->a[f->n].name), "%s", miss.v[k]);
			f->a[f->n++].topo_only = true;
		}
		for (int i = 0; i < f->n; i++)
			(*names)[i] = f->a[i].name;
		some_names(some, sizeof(some), miss.v, miss.n);
		bt_warn("--topology %s: %s match%s no agent that answered: walked through as "
			"unknown; %d agent%s did not answer, so could not be asked %s name "
			"(NAME=ADDR names an agent)", path, some, miss.n > 1 ? "" : "es", nameless,
			nameless > 1 ? "s" : "", nameless > 1 ? "their" : "its");
	}
	err = read_topology(path, *names, f->n, t, NULL);
out:
	name_list_free(&miss);
	if (err == -ENOMEM)
		bt_err("trace: out of memory");
	return err;
}

int bt_trace_agents(const struct bt_fleet_opts *o, const void *body, size_t len)
{
	double end = now_s() + o->timeout_s;
	struct fleet f = { .https = o->cacert || o->cert };
	struct bt_topo topo = { 0 };
	struct xfer *x = NULL;
	char path[256], **names = NULL;
	struct sent sp = { o->sent, (int)o->nsent };
	int start = -1, nx = 0, ret = BT_EXIT_USAGE, down = 0, err = 0, clear = 0, told = 0;

	if (o->user && !o->netrc && !getenv("BLOOMTAP_PASSWORD")) {
		bt_err("trace: --user needs its password in BLOOMTAP_PASSWORD or a --netrc FILE");
		return BT_EXIT_USAGE;
	}
	if (check_files(o))
		return BT_EXIT_USAGE;
	trace_path(path, sizeof(path), o);
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return BT_EXIT_USAGE;
	if (o->agents) {
		char *list = strdup(o->agents), *tok, *save;

		for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && !err;
		     tok = strtok_r(NULL, ",", &save))
			if ((err = fleet_add(&f, tok, NULL, "--agents")) > 0)
				err = 0;
		err = err ? err : list ? 0 : -ENOMEM;
		free(list);
	}
	if (!err && o->agents_file)
		err = from_file(&f, o->agents_file);
	if (!err && o->dns)
		err = from_dns(&f, o->dns);
	if (!err && o->prometheus)
		err = from_prometheus(&f, o, end);
	if (err || !f.n) {
		if (!err)
			bt_err("trace: no agents to ask");
		goto out;
	}
	if (!(x = calloc(2 * f.n, sizeof(*x))) || !(names = calloc(f.n, sizeof(*names)))) {
		bt_err("trace: out of memory");
		goto out;
	}
	/* credentials go over HTTPS or a unix socket, never in clear text */
	for (int i = 0; creds(o) && i < f.n; i++)
		clear += clear_text(&f.a[i]);
	if (clear && clear == f.n) {
		bt_err("trace: --user and --netrc go only over HTTPS or a unix socket, and every "
		       "agent is plain http (%s%s): give --cacert (a bare ADDR:PORT is then asked "
		       "over HTTPS) or https:// addresses", f.a[0].url, f.n > 1 ? ", ..." : "");
		goto out;
	}
	/* the status requests of the agents to be named, and every trace:
	 * one round, in parallel */
	for (int i = 0; i < f.n; i++)
		if (clear && clear_text(&f.a[i])) {
			set_error(&f.a[i], "not asked: it is plain http, and --user and --netrc go "
				  "only over HTTPS or a unix socket");
			f.a[i].not_asked = true;
		}
		else if (!f.a[i].named)
			x[nx++] = (struct xfer){ .a = &f.a[i], .status = true };
	for (int i = 0; i < f.n; i++)
		if (!clear || !clear_text(&f.a[i]))
			x[nx++] = (struct xfer){ .a = &f.a[i] };
	run_all(x, nx, o, path, body, len, end, &sp);
	if (unique_names(&f))
		goto out;
	for (int i = 0; i < f.n; i++)
		down += !!f.a[i].error[0];
	/* agents found, in whatever order their source gave: by name */
	if ((o->agents_file || o->dns || o->prometheus) && f.n > 1)
		qsort(f.a, f.n, sizeof(*f.a), by_name);
	for (int i = 0; i < f.n; i++)
		names[i] = f.a[i].name;
	if (o->topology && fleet_topology(&f, o->topology, &names, &topo))
		goto out;
	if (o->from && (start = find(f.a, f.n, o->from)) < 0) {
		bt_err("--from %s is not one of the agents", o->from);
		goto out;
	}
	/* the first few are named on stderr; the answer names them all */
	for (int i = 0; i < f.n && told < WARN_MAX; i++)
		if (f.a[i].error[0]) {
			bt_warn("agent %s%s%s; walked through as unknown", same_addr(&f.a[i]),
				*same_addr(&f.a[i]) ? ": " : "", f.a[i].error);
			told++;
		}
	if (down > told)
		bt_warn("and %d more agent%s did not answer; walked through as unknown (the "
			"answer names them)", down - told, down - told > 1 ? "s" : "");
	/* the count of those asked, and the error of the first of them (one
	 * never asked has only why not) */
	if (!answered_any(f.a, f.n)) {
		int i = 0, asked = 0;

		for (int k = 0; k < f.n; k++)
			asked += f.a[k].asked;
		while (i < f.n - 1 && !(f.a[i].error[0] && (f.a[i].asked || !asked)))
			i++;
		bt_err("trace: no agent answered (%d asked%s%.0d%s; %s%s%s)", asked,
		       asked < f.n ? ", " : "", f.n - asked, asked < f.n ? " not asked" : "",
		       same_addr(&f.a[i]), *same_addr(&f.a[i]) ? ": " : "", f.a[i].error);
		ret = BT_EXIT_FAIL;	/* a failure, not the command line's */
		goto out;
	}
	ret = report(f.a, f.n, o->topology ? &topo : NULL, start, &sp,
		     o->skew_s > 0 ? o->skew_s : BT_ORDER_SKEW_S);
out:
	for (int k = 0; k < nx; k++)
		curl_slist_free_all(x[k].connect_to);
	free(x);
	free(names);
	bt_topo_free(&topo);
	free_agents(f.a, f.n, sp.n);
	curl_global_cleanup();
	return ret;
}
