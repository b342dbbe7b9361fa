// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The agent's HTTP side, with libmicrohttpd: read-only by construction (no
 * route attaches, detaches or changes anything), bodies bounded, requests
 * rate-limited per client, every refusal a 4xx with a JSON error.
 *
 * Two doors: ADDR:PORT over TCP (TLS and basic auth with --web-config, the
 * Prometheus exporters' way), and a unix socket of mode 0600 for the host's
 * root and the service user. A thread a connection, at most a few a client
 * address: a slow trace never holds a scrape up. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include "agent_state.h"
#include "report/heavy_report.h"
#include "report/drops_report.h"
#include "report/trace_query.h"
#include "base/common.h"
#include "base/util.h"
#include "core/pcapng.h"
#include "instance/recorder.h"
#include "http.h"
#include "metrics.h"
#include "webconfig.h"
#include "base/timeparse.h"

#define BODY_MAX (1 << 20)		/* a capture of a few hundred packets */

/* A web config in use: its users, and its certificate and key as GnuTLS
 * takes them for a handshake. A reload swaps in a new one whole; the one
 * it replaces is kept until the agent stops (a connection thread may
 * still read it: a reload is rare, a renewal or a revocation). */
struct web_state {
	struct bt_web_cfg cfg;
	gnutls_pcert_st pcert[8];	/* the chain, the server's first */
	unsigned npcert;
	gnutls_privkey_t key;
	struct web_state *retired;	/* the one it replaced */
};

/* One server: the TCP port or the unix socket. */
struct server {
	struct agent *a;
	struct web_state *web;		/* TCP with --web-config, else NULL;
					 * swapped by bt_http_reload_web() */
	bool local;			/* the unix socket */
	bool metrics_only;		/* /metrics and /healthz, not the API */
	struct MHD_Daemon *d;
};

struct bt_http {
	struct server tcp, unix_sock;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* A token bucket per client (the unix socket is one client; an IPv4
 * address, or an IPv6 /64, which one host usually holds whole): a
 * scraper keeps its share while another client floods. A table of recent
 * clients; a new one takes the slot of the longest idle. */
#define BUCKET_SLOTS 256
#define BUCKET_PROBE 8

struct bucket {
	uint8_t addr[17];		/* family byte, then the address */
	double tokens, last;
	double work_ms, work_last;	/* the API's CPU budget (BT_HTTP_WORK_*) */
};

static struct bucket buckets[BUCKET_SLOTS];
static pthread_mutex_t buckets_lock = PTHREAD_MUTEX_INITIALIZER;

static void client_key(const struct sockaddr *sa, uint8_t key[17])
{
	memset(key, 0, 17);
	if (!sa || sa->sa_family == AF_UNIX) {
		key[0] = AF_UNIX;
	} else if (sa->sa_family == AF_INET) {
		key[0] = AF_INET;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {	/* an IPv4 client of a [::] listener */
			key[0] = AF_INET;
			memcpy(key + 1, &a->s6_addr[12], 4);
		} else {
			key[0] = AF_INET6;
			memcpy(key + 1, a, 8);	/* its /64 */
		}
	}
}

/* Refills b at rate a second (at most rate held), then takes cost when it
 * holds a token; false when it holds none. Under buckets_lock. */
static bool bucket_take(struct bucket *b, double rate, double cost, double now)
{
	b->tokens += (now - b->last) * rate;
	if (b->tokens > rate)
		b->tokens = rate;
	b->last = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= cost;
	return true;
}

/* One bcrypt more this second, for all clients: many addresses (a whole
 * /48) cannot make the agent spend more than this on logins. */
static bool bcrypt_ok(void)
{
	static struct bucket logins = { .tokens = BT_HTTP_BCRYPTS_PER_S };
	bool ok;

	pthread_mutex_lock(&buckets_lock);
	ok = bucket_take(&logins, BT_HTTP_BCRYPTS_PER_S, 1, bt_mono_s());
	pthread_mutex_unlock(&buckets_lock);
	return ok;
}

static void conn_key(struct MHD_Connection *c, uint8_t key[17])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	client_key(ci ? ci->client_addr : NULL, key);
}

/* The client's bucket, made when it has none over the longest idle of
 * its slots, one in the API's debt last (new clients would clear it).
 * Under buckets_lock. */
static struct bucket *bucket_of(const uint8_t key[17], double now)
{
	struct bucket *b = NULL, *idle = NULL, *debtor = NULL;
	uint32_t h = 2166136261u;

	for (int i = 0; i < 17; i++)		/* FNV-1a: a table index, no secret */
		h = (h ^ key[i]) * 16777619u;
	for (int i = 0; i < BUCKET_PROBE && !b; i++) {
		struct bucket *s = &buckets[(h + i) % BUCKET_SLOTS];

		if (s->last && !memcmp(s->addr, key, sizeof(s->addr)))
			b = s;
		else if (s->work_ms < 0 && (!debtor || s->last < debtor->last))
			debtor = s;
		else if (s->work_ms >= 0 && (!idle || s->last < idle->last))
			idle = s;
	}
	if (!b) {
		b = idle ? idle : debtor;
		memcpy(b->addr, key, sizeof(b->addr));
		b->tokens = BT_HTTP_RATE_PER_CLIENT;
		b->last = now;
		b->work_ms = BT_HTTP_WORK_BURST_MS;
		b->work_last = now;
	}
	return b;
}

/* Takes cost tokens from the client's bucket; false when it has none. */
static bool rate_ok(struct MHD_Connection *c, double cost)
{
	double now = bt_mono_s();
	uint8_t key[17];
	bool ok;

	conn_key(c, key);
	pthread_mutex_lock(&buckets_lock);
	ok = bucket_take(bucket_of(key, now), BT_HTTP_RATE_PER_CLIENT, cost, now);
	pthread_mutex_unlock(&buckets_lock);
	return ok;
}

/* Charges the client ms of the API's CPU (0: none, a look); returns
 * what its budget holds then, in ms (0 or less: spent). */
static double work_take(const uint8_t key[17], double ms)
{
	double now = bt_mono_s(), left;
	struct bucket *b;

	pthread_mutex_lock(&buckets_lock);
	b = bucket_of(key, now);
	b->work_ms += (now - b->work_last) * BT_HTTP_WORK_MS_PER_S;
	if (b->work_ms > BT_HTTP_WORK_BURST_MS)
		b->work_ms = BT_HTTP_WORK_BURST_MS;
	b->work_last = now;
	b->work_ms -= ms;
	left = b->work_ms;
	pthread_mutex_unlock(&buckets_lock);
	return left;
}

/* Charges the client ms of the API's CPU (0: none, a look), then says
 * how many seconds its budget needs to be back above nothing: 0 when it
 * is above now. A request is admitted on a budget above nothing and
 * charged what it took: one that took more leaves a debt that refuses
 * the client's next ones until it is paid (a trace's probes are bounded
 * by what is left: route_trace). */
static double work_charge(const uint8_t key[17], double ms)
{
	double left = work_take(key, ms);

	return left > 0 ? 0 : -left / BT_HTTP_WORK_MS_PER_S;
}

/* The CPU this thread has taken, in ms */
static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The connections at once, and the trace requests, of each client: the
 * per-client connection limit counts an IPv6 client by its /64, as the
 * buckets do (libmicrohttpd's own counts exact addresses: one host with
 * a /64 could hold all 64 connections with 8 addresses). And each connection's
 * deadline: libmicrohttpd's timeout is an idle one, which a header line
 * every few seconds resets; a watchdog shuts a connection down whose
 * request is not in by its deadline. A connection is added at its start
 * and removed at its close, both by libmicrohttpd's listening thread,
 * which closes its socket after the removal only: the watchdog, under
 * conns_lock, never shuts a socket that is another's. */
struct client {
	uint8_t key[17];
	int conns, traces;
};

struct conn {
	struct conn *prev, *next;
	uint8_t key[17];
	int fd;
	double deadline;		/* CLOCK_MONOTONIC s; 0: none (an answer
					 * being made) */
	bool shut;
};

/* a client a connection at most (both doors), and free slots */
static struct client clients[2 * BT_HTTP_CONNECTIONS + 2];
static struct conn *conns;
static int tcp_conns;			/* of conns, the TCP door's */
static int traces_all;			/* the TCP clients' traces */
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

/* The client of key, or (make) a free slot for it; NULL when none is
 * free. Under conns_lock. */
static struct client *client_of(const uint8_t key[17], bool make)
{
	struct client *free_slot = NULL;

	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		struct client *cl = &clients[i];

		if (!cl->conns && !cl->traces) {
			if (!free_slot)
				free_slot = cl;
		} else if (!memcmp(cl->key, key, sizeof(cl->key))) {
			return cl;
		}
	}
	if (!make || !free_slot)
		return NULL;
	memcpy(free_slot->key, key, sizeof(free_slot->key));
	return free_slot;
}

/* libmicrohttpd's accept policy on TCP: a client (an IPv6 /64) holds at
 * most BT_HTTP_CONNECTIONS_PER_CLIENT connections, and fewer as the table
 * fills: one more only while it holds under a quarter of what is free.
 * So a client with none is taken while any connection is free: 8 clients
 * of 8 connections each hold 50 of 64, a scrape gets one of the rest.
 * Decided at the accept because that is where libmicrohttpd lets us
 * refuse; the path (/metrics or not) is known only after the headers,
 * when the connection is already had. The counts it checks grow at the
 * connection's start, on the same thread, before the next accept. */
static enum MHD_Result accept_ok(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct client *cl;
	uint8_t key[17];
	bool ok;

	client_key(sa, key);
	pthread_mutex_lock(&conns_lock);
	cl = client_of(key, false);
	ok = !cl || !cl->conns || (cl->conns < BT_HTTP_CONNECTIONS_PER_CLIENT &&
				   cl->conns < (BT_HTTP_CONNECTIONS - tcp_conns) / 4);
	pthread_mutex_unlock(&conns_lock);
	return ok ? MHD_YES : MHD_NO;
}

/* A connection's start and close (libmicrohttpd's listening thread) */
static void connection_event(void *cls, struct MHD_Connection *c, void **socket_context,
			     enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *k = *socket_context;
	struct client *cl;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		if (!(k = calloc(1, sizeof(*k))))
			return;	/* not counted: no deadline but libmicrohttpd's */
		conn_key(c, k->key);
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		k->fd = ci ? ci->connect_fd : -1;
		k->deadline = bt_mono_s() + BT_HTTP_HEADER_S;
		pthread_mutex_lock(&conns_lock);
		if ((cl = client_of(k->key, true)))
			cl->conns++;
		tcp_conns += k->key[0] != AF_UNIX;
		k->next = conns;
		if (conns)
			conns->prev = k;
		conns = k;
		pthread_mutex_unlock(&conns_lock);
		*socket_context = k;
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&conns_lock);
	if ((cl = client_of(k->key, false)) && cl->conns)
		cl->conns--;
	tcp_conns -= k->key[0] != AF_UNIX;
	if (k->prev)
		k->prev->next = k->next;
	else
		conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&conns_lock);
	free(k);
	*socket_context = NULL;
}

/* The connection's deadline: now + s, or none (s = 0) */
static void set_deadline(struct MHD_Connection *c, double s)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;

	if (!k)
		return;
	pthread_mutex_lock(&conns_lock);
	k->deadline = s ? bt_mono_s() + s : 0;
	pthread_mutex_unlock(&conns_lock);
}

/* A trace request's slot, taken on its headers: 0, or the status that
 * refuses it (one client's, or all TCP clients', traces at once: remote
 * clients cannot take the unix socket's, the local admin's) */
static unsigned trace_slot_take(const uint8_t key[17])
{
	unsigned status = 0;
	struct client *cl;

	pthread_mutex_lock(&conns_lock);
	cl = client_of(key, true);
	if (!cl || cl->traces >= BT_HTTP_TRACES_PER_CLIENT)
		status = MHD_HTTP_TOO_MANY_REQUESTS;
	else if (key[0] != AF_UNIX && traces_all >= BT_HTTP_TRACES)
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
	else {
		cl->traces++;
		traces_all += key[0] != AF_UNIX;
	}
	pthread_mutex_unlock(&conns_lock);
	return status;
}

static void trace_slot_give(const uint8_t key[17])
{
	struct client *cl;

	pthread_mutex_lock(&conns_lock);
	if ((cl = client_of(key, false)) && cl->traces) {
		cl->traces--;
		traces_all -= key[0] != AF_UNIX;
	}
	pthread_mutex_unlock(&conns_lock);
}

/* The watchdog: every quarter of a second, shuts down the connections
 * past their deadline (libmicrohttpd's thread then reads the end of the
 * stream, or fails its send, and closes it). */
static pthread_t watchdog;
static bool watchdog_running;
static pthread_mutex_t watchdog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watchdog_cond = PTHREAD_COND_INITIALIZER;
static bool watchdog_stop;

static void *watchdog_main(void *arg)
{
	struct timespec ts;

	pthread_mutex_lock(&watchdog_lock);
	while (!watchdog_stop) {
		double now = bt_mono_s();

		pthread_mutex_lock(&conns_lock);
		for (struct conn *k = conns; k; k = k->next)
			if (k->deadline && now > k->deadline && !k->shut && k->fd >= 0) {
				/* a reset at the close: what the kernel still
				 * holds of an answer is dropped, not trickled
				 * out to the slow reader after the cut */
				setsockopt(k->fd, SOL_SOCKET, SO_LINGER,
					   &(struct linger){ .l_onoff = 1 }, sizeof(struct linger));
				shutdown(k->fd, SHUT_RDWR);
				k->shut = true;
			}
		pthread_mutex_unlock(&conns_lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&watchdog_cond, &watchdog_lock, &ts);
	}
	pthread_mutex_unlock(&watchdog_lock);
	return NULL;
}

struct route;

struct req {
	const struct route *route;	/* set by admit() */
	bool admitted;			/* else refused on its headers */
	bool trace_slot;		/* holds one of its client's traces */
	uint8_t key[17];		/* its client */
	/* the API's: the connection thread's CPU at its admission, charged
	 * to the client at the request's end (the body's TLS and copy, the
	 * answer, its TLS and send) */
	double cpu0_ms;
	pthread_t thread;
	char *body;
	size_t len;
	bool too_large;
};

/* text is freed; header: one more "Name: value" header, or NULL */
static int reply_with(struct MHD_Connection *c, unsigned status, const char *type, char *text,
		      const char *header, const char *value)
{
	struct MHD_Response *r;
	int ret;

	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", type);
	if (header)
		MHD_add_response_header(r, header, value);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static int reply(struct MHD_Connection *c, unsigned status, const char *type, char *text)
{
	return reply_with(c, status, type, text, NULL, NULL);
}

static char *json_text(struct json_object *o)
{
	char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return text;
}

static int reply_json(struct MHD_Connection *c, unsigned status, struct json_object *o)
{
	return reply(c, status, "application/json", json_text(o));
}

static int reply_error(struct agent *a, struct MHD_Connection *c, unsigned status,
		       const char *msg)
{
	struct json_object *o = json_object_new_object();

	__atomic_add_fetch(&a->rejected, 1, __ATOMIC_RELAXED);
	json_object_object_add(o, "error", json_object_new_string(msg));
	return reply_json(c, status, o);
}

/* ?iface=NAME, or the only interface */
static struct agent_iface *pick_iface(struct agent *a, struct MHD_Connection *c)
{
	const char *want = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "iface");

	if (!want)
		return a->n == 1 ? &a->ifs[0] : NULL;
	for (int i = 0; i < a->n; i++)
		if (!strcmp(a->ifs[i].name, want))
			return &a->ifs[i];
	return NULL;
}

/* The directions of ?direction=ingress|egress|both that f records, as
 * dir[0] (ingress) and dir[1] (egress); without it, every direction f
 * records. NULL, or the 400's message. */
static const char *pick_dirs(struct agent_iface *f, struct MHD_Connection *c, bool dir[BT_DIRS])
{
	const char *want = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "direction");
	bool sends = f->inst.meta.flags & BT_META_EGRESS_MAPS;

	if (!want) {
		dir[BT_DIR_INGRESS] = !(f->inst.meta.flags & BT_META_NO_INGRESS) || !sends;
		dir[BT_DIR_EGRESS] = sends;
		return NULL;
	}
	dir[BT_DIR_INGRESS] = !strcmp(want, "ingress") || !strcmp(want, "both");
	dir[BT_DIR_EGRESS] = !strcmp(want, "egress") || !strcmp(want, "both");
	if (!dir[BT_DIR_INGRESS] && !dir[BT_DIR_EGRESS])
		return "direction is ingress, egress or both";
	if (dir[BT_DIR_EGRESS] && !sends)
		return "this interface does not record what it sends (attached with --direction "
		       "ingress): direction=ingress";
	/* the CLI's words (bt_instance_records): an egress-only instance's
	 * ingress maps stay zero, an answer of [] would say nothing came */
	if (dir[BT_DIR_INGRESS] && f->inst.meta.flags & BT_META_NO_INGRESS)
		return "this interface records what it sends only (attached with --direction "
		       "egress, no XDP program): direction=egress";
	return NULL;
}

/* A route: its path, the method it takes, the query parameters it takes,
 * what it does. */
struct route {
	const char *path;
	bool post;			/* POST; else GET */
	bool open;			/* answered without credentials */
	bool api;			/* /api/v1/: not on a metrics-only door */
	const char *wrong_method;	/* the 405's message */
	enum MHD_Result (*fn)(struct agent *a, struct MHD_Connection *c, struct req *r);
	const char *const params[8];	/* the query's names; NULL-ended */
};

static enum MHD_Result route_healthz(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	/* not healthy once an interface was detached under the agent */
	for (int i = 0; i < a->n; i++)
		if (a->ifs[i].detached) {
			char *text = NULL;

			if (asprintf(&text, "%s: detached\n", a->ifs[i].name) < 0)
				text = NULL;
			return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", text);
		}
	return reply(c, MHD_HTTP_OK, "text/plain", strdup("ok\n"));
}

static enum MHD_Result route_metrics(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	char *text;

	pthread_mutex_lock(&a->lock);
	text = bt_metrics_text(a);
	pthread_mutex_unlock(&a->lock);
	if (!text)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", text);
}

static enum MHD_Result route_heavy(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	const char *n = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "n");
	struct agent_iface *f = pick_iface(a, c);
	struct json_object *o = NULL, *sent = NULL;
	const char *bad;
	bool dir[BT_DIRS];
	char *end = NULL;
	long top = n ? strtol(n, &end, 10) : 20;

	if (n && (end == n || *end))
		top = 0;	/* "5x" is no number: refused below */
	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	if (top < 1 || top > 100000)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "n must be 1..100000");
	if ((bad = pick_dirs(f, c, dir)))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, bad);
	/* the received intervals, then the sent ones: each says its direction */
	pthread_mutex_lock(&a->lock);
	o = dir[BT_DIR_INGRESS] ? bt_heavy_json(&f->hm, top, false, NULL) : json_object_new_array();
	if (o && dir[BT_DIR_EGRESS] && (sent = bt_heavy_json(f->hm.egress, top, false, NULL)))
		for (size_t i = 0; i < json_object_array_length(sent); i++)
			json_object_array_add(o, json_object_get(json_object_array_get_idx(sent, i)));
	pthread_mutex_unlock(&a->lock);
	if (o && dir[BT_DIR_EGRESS] && !sent) {
		json_object_put(o);
		o = NULL;
	}
	json_object_put(sent);
	if (!o)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return reply_json(c, MHD_HTTP_OK, o);
}

/* A trace's range: since (default the last BT_HTTP_TRACE_DEFAULT_S)
 * to until; 0, or -EINVAL with the 400's message in err. An until alone
 * before the default since is said so, not as a since never sent. */
static int trace_range(const char *since, const char *until, __u64 *s_ns, __u64 *u_ns,
		       char *err, size_t len)
{
	const __u64 hour = BT_HTTP_TRACE_DEFAULT_S * 1000000000ULL;
	char ago[32];

	if (since || !until) {
		snprintf(ago, sizeof(ago), "-%ds", BT_HTTP_TRACE_DEFAULT_S);
		return bt_parse_time_range(since ? since : ago, until, "", s_ns, u_ns, err, len);
	}
	/* until alone: the hour before it */
	if (bt_parse_time_range(NULL, until, "", s_ns, u_ns, err, len))
		return -EINVAL;
	*s_ns = *u_ns > hour ? *u_ns - hour : 0;
	return 0;
}

static enum MHD_Result route_trace(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	const char *since = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");
	const char *until = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "until");
	const char *skew = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "skew");
	const char *at = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "at");
	const char *any = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "any_time");
	bool any_time = any && strcmp(any, "0");
	const char *dl = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "deadline_ms");
	struct agent_iface *f = pick_iface(a, c);
	__u64 s_ns = 0, u_ns = 0, at_ns = 0;
	double skew_s;
	uint64_t budget;
	double left_ms;
	bool over;
	char *end = NULL;
	long dl_ms = dl ? strtol(dl, &end, 10) : 0;
	char err[600] = "", from[40], *archive, *text;

	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	if (!r->len)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "empty body");
	if (dl && (end == dl || *end || dl_ms < 1 || dl_ms > 3600000))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "deadline_ms must be 1..3600000");
	/* each packet at its own time +- skew (the agent's trace-skew unless
	 * asked), a --hex packet at at= */
	skew_s = skew ? strtod(skew, &end) : a->cfg.trace_skew_s > 0 ? a->cfg.trace_skew_s :
		 BT_TRACE_SKEW_NS / 1e9;
	if (skew && (end == skew || *end || !(skew_s > 0) || skew_s > 1e9))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "skew takes seconds (over 0)");
	if ((skew || at) && any_time)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST,
				   skew ? "skew or any_time, not both" : "at or any_time, not both");
	if (bt_parse_time_named("at", at, &at_ns, err, sizeof(err)))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
	/* unless asked, the last hour: a request opens the files of its time
	 * range only, not a year of archive (an until before it is an empty
	 * range, refused) */
	if (trace_range(since, until, &s_ns, &u_ns, err, sizeof(err)))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
	/* the archive's path copied under the lock (a reload frees old
	 * configurations); then no lock: the query reads the ring as it
	 * turns, and the archive's files, while rotations and flips go on */
	pthread_mutex_lock(&a->lock);
	archive = a->cfg.archive ? strdup(a->cfg.archive) : NULL;
	pthread_mutex_unlock(&a->lock);
	if (a->cfg.archive && !archive)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	/* its probes by what is left of its client's CPU share (admitted
	 * above nothing, it is charged after): one near its limit gets a
	 * small trace, and a trace never runs far past the share */
	left_ms = work_take(r->key, 0);
	budget = left_ms > 0 ? (uint64_t)(left_ms * BT_HTTP_TRACE_PROBES_PER_MS) + 1 : 1;
	text = bt_trace_text(&(struct bt_trace_query){ .inst = &f->inst, .archive = archive,
						       .since = s_ns, .until = u_ns,
						       .max_packets = BT_HTTP_TRACE_MAX_PACKETS,
						       .budget = budget,
						       .skew_ns = (__u64)llround(skew_s * 1e9),
						       .at_ns = at_ns, .any_time = any_time,

						       /* the client's deadline, from now: the
							* archive is searched until it */
						       .deadline = dl ? bt_mono_s() + dl_ms / 1e3 : 0 },
			     r->body, r->len, err, sizeof(err));
	over = !text && errno == E2BIG;
	free(archive);
	if (over) {
		char msg[800];

		snprintf(msg, sizeof(msg), "this client's API requests took their share of CPU "
			 "(%d ms a second): try again in %.0f s, or split the capture (%s)",
			 BT_HTTP_WORK_MS_PER_S, (BT_HTTP_WORK_BURST_MS - left_ms) /
			 BT_HTTP_WORK_MS_PER_S + 0.5, err);
		return reply_error(a, c, MHD_HTTP_TOO_MANY_REQUESTS, msg);
	}
	if (!text)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
	/* the range searched from, for the client to see what the hour left out */
	return reply_with(c, MHD_HTTP_OK, "application/json", text, "X-Bloomtap-Since",
			  bt_fmt_ns(s_ns, from, sizeof(from), "-"));
}

static enum MHD_Result route_drops(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	struct agent_iface *f = pick_iface(a, c);
	struct json_object *o;

	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	/* under the lock, as /api/v1/heavy: the flip clears the idle
	 * interval of the dropped-flow sketches this reads */
	pthread_mutex_lock(&a->lock);
	o = bt_drops_json(&f->inst, 20);
	pthread_mutex_unlock(&a->lock);
	if (!o)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return reply_json(c, MHD_HTTP_OK, o);
}

/* The recorder's drops as pcapng (drops --pcap): reason, since and n as
 * there, n at most BT_HTTP_DROPS_PCAP_MAX, the answer at most
 * BT_HTTP_DROPS_PCAP_BYTES (the newest that fit). The work is bounded
 * with them: the ring is read from each CPU's newest record back to the
 * n-th that passes (bt_recorder_read), n x CPUs slots without a reason
 * filter. Built in a memfd, so that an answer is whole or an error. */
static enum MHD_Result route_drops_pcap(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	const char *reason = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "reason");
	const char *since = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");
	const char *ns = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "n");
	struct agent_iface *f = pick_iface(a, c);
	unsigned long n = BT_HTTP_DROPS_PCAP_MAX;
	struct MHD_Response *resp;
	struct bt_rec_filter flt;
	struct bt_rec_dump d = { 0 };
	struct bt_pcapng w;
	char err[640], *end, *buf;
	enum MHD_Result ret;
	off_t len;
	int fd, got;

	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	if (!f->inst.meta.drop_ring)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND,
				   "this interface records no drops (attach --drop-ring N)");
	if (ns) {
		errno = 0;
		n = strtoul(ns, &end, 10);
		if (errno || end == ns || *end || !n || n > BT_HTTP_DROPS_PCAP_MAX) {
			snprintf(err, sizeof(err), "n: a number from 1 to %d", BT_HTTP_DROPS_PCAP_MAX);
			return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
		}
	}
	if (bt_rec_filter_parse(&flt, reason, since, n, err, sizeof(err)))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
	flt.max_bytes = BT_HTTP_DROPS_PCAP_BYTES;
	if ((fd = memfd_create("bloomtap-drops", MFD_CLOEXEC)) < 0)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "memfd_create failed");
	got = bt_pcapng_start(&w, fd);
	if (!got)
		got = bt_recorder_dump(&f->inst, &w, &flt, &d);
	bt_pcapng_free(&w);
	len = got < 0 ? -1 : lseek(fd, 0, SEEK_END);
	buf = len > 0 ? malloc(len) : NULL;
	if (!buf || pread(fd, buf, len, 0) != len) {
		free(buf);
		close(fd);
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "reading the recorder failed");
	}
	close(fd);
	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "application/x-pcapng");
	snprintf(err, sizeof(err), "%d", got);
	MHD_add_response_header(resp, "X-Bloomtap-Drops", err);
	snprintf(err, sizeof(err), "%u", d.slots_read);
	MHD_add_response_header(resp, "X-Bloomtap-Slots-Read", err);
	if (d.cut)
		MHD_add_response_header(resp, "X-Bloomtap-Cut", "bytes");
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Who answers: the host's name and the instances, for a client that
 * found the agent by its address (trace --agents-from-prometheus) */
static enum MHD_Result route_status(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	struct json_object *o = json_object_new_object(), *ins = json_object_new_array();
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "instance", a->n ? json_object_new_string(a->ifs[0].inst.name)
						  : NULL);
	for (int i = 0; i < a->n; i++)
		json_object_array_add(ins, json_object_new_string(a->ifs[i].inst.name));
	json_object_object_add(o, "instances", ins);
	json_object_object_add(o, "version", json_object_new_string(BT_VERSION));
	return reply_json(c, MHD_HTTP_OK, o);
}

static const struct route routes[] = {
	{ "/healthz", false, true, false, "use GET", route_healthz, { NULL } },
	{ "/metrics", false, false, false, "use GET", route_metrics, { NULL } },
	{ "/api/v1/heavy", false, false, true, "use GET", route_heavy,
	  { "iface", "n", "direction", NULL } },
	{ "/api/v1/drops", false, false, true, "use GET", route_drops, { "iface", NULL } },
	{ "/api/v1/drops/pcap", false, false, true, "use GET", route_drops_pcap,
	  { "iface", "reason", "since", "n", NULL } },
	{ "/api/v1/trace", true, false, true, "use POST with packet bytes in hex, or a pcap",
	  route_trace, { "iface", "since", "until", "skew", "at", "any_time", "deadline_ms", NULL } },
	{ "/api/v1/status", false, false, true, "use GET", route_status, { NULL } },
};

/* The first query parameter the route does not take, into a 400's
 * message; libmicrohttpd's iterator over the query */
struct param_check {
	const struct route *route;
	char msg[200];
};

static enum MHD_Result param_known(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct param_check *pc = cls;
	char takes[80] = "";

	for (const char *const *p = pc->route->params; *p; p++)
		if (!strcmp(*p, key))
			return MHD_YES;
	for (const char *const *p = pc->route->params; *p; p++)
		snprintf(takes + strlen(takes), sizeof(takes) - strlen(takes), "%s%s",
			 p == pc->route->params ? "" : ", ", *p);
	snprintf(pc->msg, sizeof(pc->msg), "unknown parameter '%.40s' (%s takes %s)", key,
		 pc->route->path, takes[0] ? takes : "none");
	return MHD_NO;
}

/* With users in the web config, every route but /healthz wants one of
 * them (the unix socket's file mode is its credential): 1, 0, or -EBUSY
 * when the check needs a bcrypt and its client has no tokens left for it
 * or all clients together have had their BT_HTTP_BCRYPTS_PER_S. */
static int authorized(struct server *srv, struct MHD_Connection *c)
{
	struct web_state *ws = __atomic_load_n(&srv->web, __ATOMIC_ACQUIRE);
	struct bt_web_cfg *w = ws ? &ws->cfg : NULL;
	char *pass = NULL, *user;
	int ok = 0;

	if (srv->local || !w || !w->nusers)
		return 1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user && pass && (ok = bt_web_auth(w, user, pass, false)) == -EAGAIN) {
		/* a bcrypt: its client pays for it before it runs (so that
		 * concurrent attempts cannot all start on one bucket's last
		 * token), then all clients' bound */
		if (!rate_ok(c, BT_HTTP_AUTH_FAIL_COST - 1) || !bcrypt_ok())
			ok = -EBUSY;
		else
			ok = bt_web_auth(w, user, pass, true);
	}
	if (pass)
		explicit_bzero(pass, strlen(pass));
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static enum MHD_Result reply_unauthorized(struct server *srv, struct MHD_Connection *c)
{
	const char *msg = "{\"error\":\"unauthorized: basic auth with a user of the web "
			  "config\"}";
	struct MHD_Response *r;
	enum MHD_Result ret;

	__atomic_add_fetch(&srv->a->rejected, 1, __ATOMIC_RELAXED);
	r = MHD_create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_basic_auth_fail_response(c, "bloomtap", r);
	MHD_destroy_response(r);
	return ret;
}

/* The route of url, or NULL. */
static const struct route *route_of(const char *url)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(url, routes[i].path))
			return &routes[i];
	return NULL;
}

/* Everything that can refuse a request, from its headers alone: the
 * client's rate, the path, the credentials, the method and the announced
 * length. A refusal is queued before any byte of the body is read (MHD
 * then closes the connection): an unknown client can no longer make the
 * agent buffer 1 MiB a connection first. */
static enum MHD_Result admit(struct server *srv, struct MHD_Connection *c, const char *url,
			     const char *method, struct req *r)
{
	struct agent *a = srv->a;
	struct param_check pc = { .route = NULL };
	const char *length;
	int auth = 1;	/* an open route's */
	unsigned busy;
	double wait;

	__atomic_add_fetch(&a->requests, 1, __ATOMIC_RELAXED);
	conn_key(c, r->key);
	if (!rate_ok(c, 1))
		return reply_error(a, c, MHD_HTTP_TOO_MANY_REQUESTS, "too many requests");
	if (!(r->route = route_of(url)))
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such path (/metrics, /healthz, "
				   "/api/v1/heavy, /api/v1/drops, /api/v1/trace)");
	if (r->route->api && srv->metrics_only)
		return reply_error(a, c, MHD_HTTP_FORBIDDEN, "the API is not served on this "
				   "address (listen-metrics-only): use the agent's --api-socket");
	if (!r->route->open)
		auth = authorized(srv, c);
	if (auth == -EBUSY)
		return reply_error(a, c, MHD_HTTP_TOO_MANY_REQUESTS,
				   "too many logins to check at once: try again");
	if (auth != 1)
		return reply_unauthorized(srv, c);
	if (strcmp(method, r->route->post ? "POST" : "GET"))
		return reply_error(a, c, MHD_HTTP_METHOD_NOT_ALLOWED, r->route->wrong_method);
	length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (length && strtoull(length, NULL, 10) > BODY_MAX)
		return reply_error(a, c, MHD_HTTP_CONTENT_TOO_LARGE, "request body over 1 MiB");
	pc.route = r->route;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, param_known, &pc);
	if (pc.msg[0])
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, pc.msg);
	/* the API is charged its CPU; /metrics and /healthz are not, so that
	 * a client's traces never refuse its scrapes */
	if (r->route->api && (wait = work_charge(r->key, 0)) > 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "this client's API requests took their share of CPU "
			 "(%d ms a second): try again in %.0f s", BT_HTTP_WORK_MS_PER_S, wait + 0.5);
		return reply_error(a, c, MHD_HTTP_TOO_MANY_REQUESTS, msg);
	}
	if (r->route->fn == route_trace) {
		if ((busy = trace_slot_take(r->key)) == MHD_HTTP_TOO_MANY_REQUESTS)
			return reply_error(a, c, busy, "a trace of this client's is under way: one "
					   "at a time, retry later");
		if (busy)
			return reply_error(a, c, busy, "traces of other clients fill what the agent "
					   "runs at once: try again");
		r->trace_slot = true;
	}
	/* a body has its own time to come; an answer none */
	set_deadline(c, r->route->post ? BT_HTTP_BODY_S : 0);
	if (r->route->api) {
		r->cpu0_ms = thread_cpu_ms();
		r->thread = pthread_self();
	}
	r->admitted = true;
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **con_cls)
{
	struct server *srv = cls;
	struct req *r = *con_cls;
	enum MHD_Result ret;

	if (!r) {	/* first call: headers only */
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		return admit(srv, c, url, method, r);
	}
	if (!r->admitted) {	/* refused, answered: the body is not kept */
		*size = 0;
		return MHD_YES;
	}
	if (*size) {	/* body, piece by piece, bounded (chunked has no length) */
		if (r->len + *size > BODY_MAX) {
			r->too_large = true;
		} else {
			char *nb = realloc(r->body, r->len + *size + 1);

			if (!nb)
				return MHD_NO;
			r->body = nb;
			memcpy(r->body + r->len, data, *size);
			r->len += *size;
			r->body[r->len] = 0;
		}
		*size = 0;
		return MHD_YES;
	}
	set_deadline(c, 0);
	if (r->too_large)
		ret = reply_error(srv->a, c, MHD_HTTP_CONTENT_TOO_LARGE, "request body over 1 MiB");
	else
		ret = r->route->fn(srv->a, c, r);
	/* the answer is queued: its sending has a deadline of its own (the
	 * idle timeout alone let a reader that takes a byte now and then
	 * hold the connection for ever) */
	set_deadline(c, BT_HTTP_ANSWER_S);
	return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	if (r) {
		/* on the connection's thread (not at the daemon's stop) */
		if (r->cpu0_ms && pthread_equal(r->thread, pthread_self()))
			work_charge(r->key, thread_cpu_ms() - r->cpu0_ms);
		if (r->trace_slot)
			trace_slot_give(r->key);
		free(r->body);
		free(r);
	}
	*con_cls = NULL;
	/* the next request's headers, on a connection kept alive */
	set_deadline(c, BT_HTTP_HEADER_S);
}

/* "127.0.0.1:9477", "[::1]:9477" or ":9477" (loopback) */
static int parse_listen(const char *s, struct sockaddr_storage *ss)
{
	char host[128];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	memset(ss, 0, sizeof(*ss));
	if (!host[0])
		strcpy(host, "127.0.0.1");
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *a6 = (void *)ss;

		host[strlen(host) - 1] = 0;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *a4 = (void *)ss;

	a4->sin_family = AF_INET;
	a4->sin_port = htons(port);
	return inet_pton(AF_INET, host, &a4->sin_addr) == 1 ? 0 : -EINVAL;
}

int bt_listen_check(const char *s, bool *loopback)
{
	struct sockaddr_storage ss;
	int err = parse_listen(s, &ss);

	if (err)
		return err;
	if (ss.ss_family == AF_INET)
		*loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	else
		*loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return 0;
}

int bt_listen_free(const char *s)
{
	struct sockaddr_storage ss;
	int fd, one = 1, err;

	if ((err = parse_listen(s, &ss)))
		return err;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	err = bind(fd, (struct sockaddr *)&ss, ss.ss_family == AF_INET6 ?
		   sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) ? -errno : 0;
	close(fd);
	return err;
}

int bt_api_socket_check(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	if (path[0] != '/' || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "--api-socket %s: an absolute path of at most %zu bytes",
			 path, sizeof(sun.sun_path) - 1);
		return -EINVAL;
	}
	if (lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--api-socket %s: exists and is no socket", path);
		return -EEXIST;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--api-socket %s: %s", path, strerror(errno));
		return -errno;
	}
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (!rc) {
		snprintf(err, errlen, "--api-socket %s: another agent answers on it (give each its "
			 "own)", path);
		return -EADDRINUSE;
	}
	return 0;
}

/* The unix socket, made 0600 (the umask covers the moment between bind
 * and chmod); one left by an agent that died is replaced, one another
 * agent answers on is not. */
static int unix_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	if (bt_api_socket_check(path, err, errlen))
		return -1;
	unlink(path);	/* a dead agent's */
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc || chmod(path, 0600) || listen(fd, 64))
		goto fail;
	return fd;
fail:
	snprintf(err, errlen, "--api-socket %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The certificate of a handshake: the web config's in use now, so that a
 * renewed one serves the next connection without a restart. One TCP door
 * an agent: GnuTLS's callback takes no pointer of ours, so a static. */
static struct web_state *tls_web;

static int tls_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
			   int nreqs, const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
			   gnutls_pcert_st **pcert, unsigned int *pcert_length,
			   gnutls_privkey_t *pkey)
{
	struct web_state *ws = __atomic_load_n(&tls_web, __ATOMIC_ACQUIRE);

	if (!ws || !ws->npcert)
		return -1;
	*pcert = ws->pcert;
	*pcert_length = ws->npcert;
	*pkey = ws->key;
	return 0;
}

static void web_state_free(struct web_state *ws)
{
	while (ws) {
		struct web_state *next = ws->retired;

		for (unsigned i = 0; i < ws->npcert; i++)
			gnutls_pcert_deinit(&ws->pcert[i]);
		if (ws->key)
			gnutls_privkey_deinit(ws->key);
		bt_web_config_free(&ws->cfg);
		free(ws);
		ws = next;
	}
}

/* A loaded web config (taken over: w is emptied) as a state, its
 * certificate and key imported for the handshakes; NULL with err set. */
static struct web_state *web_state_new(struct bt_web_cfg *w, char *err, size_t errlen)
{
	struct web_state *ws = calloc(1, sizeof(*ws));
	gnutls_datum_t cert, key;
	int rc = 0;

	if (!ws) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ws->cfg = *w;
	memset(w, 0, sizeof(*w));
	if (!ws->cfg.cert_pem)
		return ws;
	cert = (gnutls_datum_t){ (unsigned char *)ws->cfg.cert_pem, ws->cfg.cert_len };
	key = (gnutls_datum_t){ (unsigned char *)ws->cfg.key_pem, ws->cfg.key_len };
	ws->npcert = sizeof(ws->pcert) / sizeof(ws->pcert[0]);
	if ((rc = gnutls_pcert_list_import_x509_raw(ws->pcert, &ws->npcert, &cert,
						    GNUTLS_X509_FMT_PEM, 0)) < 0)
		ws->npcert = 0;
	else if ((rc = gnutls_privkey_init(&ws->key)) >= 0)
		rc = gnutls_privkey_import_x509_raw(ws->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "%s: the certificate or key: %s", ws->cfg.path,
			 gnutls_strerror(rc));
		web_state_free(ws);
		return NULL;
	}
	return ws;
}

static struct MHD_Daemon *start_tcp(struct server *srv, const char *listen, char *err,
				    size_t errlen)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	struct bt_web_cfg *w = srv->web ? &srv->web->cfg : NULL;
	bool tls = w && w->cert_pem;
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;

	if (parse_listen(listen, &ss)) {
		snprintf(err, errlen, "--listen %s: give ADDR:PORT (127.0.0.1:9477, [::1]:9477)", listen);
		return NULL;
	}
	if (tls && (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
		    MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)) {
		snprintf(err, errlen, "--web-config %s: this libmicrohttpd has no TLS, or no "
			 "certificate callback", w->path);
		return NULL;
	}
	if (tls)
		__atomic_store_n(&tls_web, srv->web, __ATOMIC_RELEASE);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (tls)
		flags |= MHD_USE_TLS;
	/* the TLS options last: without TLS, the END before them ends the list */
	d = MHD_start_daemon(flags, ntohs(((struct sockaddr_in *)&ss)->sin_port), &accept_ok, NULL,
			     &handle, srv, MHD_OPTION_SOCK_ADDR, &ss,
			     MHD_OPTION_NOTIFY_COMPLETED, &completed, NULL,
			     MHD_OPTION_NOTIFY_CONNECTION, &connection_event, NULL,
			     MHD_OPTION_CONNECTION_LIMIT, BT_HTTP_CONNECTIONS,
			     MHD_OPTION_CONNECTION_TIMEOUT, BT_HTTP_HEADER_S,
			     tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, &tls_certificate,
			     MHD_OPTION_HTTPS_PRIORITIES, tls ? w->priorities : NULL,
			     MHD_OPTION_END);
	if (!d)
		snprintf(err, errlen, "cannot listen on %s%s: %s (in use, or not an address here)",
			 listen, tls ? " with TLS" : "", strerror(errno));
	return d;
}

bool bt_http_exposure(const struct bt_http_cfg *cfg, char *buf, size_t len)
{
	int nusers = cfg->web ? cfg->web->nusers : 0;
	bool tls = cfg->web && cfg->web->cert_pem, loopback = false;
	char sock[160] = "";

	bt_listen_check(cfg->listen, &loopback);
	if (cfg->socket)
		snprintf(sock, sizeof(sock), "; %s on the socket %s (mode 0600)",
			 cfg->metrics_only ? "the API" : "all", cfg->socket);
	else if (cfg->metrics_only)
		snprintf(sock, sizeof(sock), "; the API nowhere (no --api-socket)");
	snprintf(buf, len, "HTTP on %s (%s%s, %s): %s%s", cfg->listen,
		 loopback ? "loopback" : "beyond loopback", tls ? ", TLS" : "",
		 nusers ? "a user's password but for /healthz" :
		 loopback ? "no password: every local user" : "no password: anyone who reaches it",
		 cfg->metrics_only ? "/metrics and /healthz alone" : "/metrics, /healthz and the API",
		 sock);
	return !loopback && !nusers && !cfg->metrics_only;
}

struct bt_http *bt_http_start(struct agent *a, const struct bt_http_cfg *cfg, char *err,
			      size_t errlen)
{
	struct bt_http *h = calloc(1, sizeof(*h));
	int fd;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->tcp = (struct server){ .a = a, .metrics_only = cfg->metrics_only };
	watchdog_stop = false;
	if (pthread_create(&watchdog, NULL, watchdog_main, NULL)) {
		snprintf(err, errlen, "the HTTP watchdog thread: %s", strerror(errno));
		free(h);
		return NULL;
	}
	watchdog_running = true;
	/* the config the caller loaded, taken over (not read from the files
	 * again: what the caller checked is what is served) */
	if (cfg->web && !(h->tcp.web = web_state_new(cfg->web, err, errlen)))
		goto fail;
	if (!(h->tcp.d = start_tcp(&h->tcp, cfg->listen, err, errlen)))
		goto fail;
	if (!cfg->socket)
		return h;
	if ((fd = unix_listen(cfg->socket, err, errlen)) < 0)
		goto fail;
	snprintf(h->socket_path, sizeof(h->socket_path), "%s", cfg->socket);
	h->unix_sock = (struct server){ .a = a, .local = true };
	h->unix_sock.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
					  MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
					  &handle, &h->unix_sock, MHD_OPTION_LISTEN_SOCKET, fd,
					  MHD_OPTION_NOTIFY_COMPLETED, &completed, NULL,
					  MHD_OPTION_NOTIFY_CONNECTION, &connection_event, NULL,
					  MHD_OPTION_CONNECTION_LIMIT, BT_HTTP_CONNECTIONS,
					  MHD_OPTION_CONNECTION_TIMEOUT, BT_HTTP_HEADER_S,
					  MHD_OPTION_END);
	if (!h->unix_sock.d) {
		snprintf(err, errlen, "--api-socket %s: cannot serve it: %s", cfg->socket,
			 strerror(errno));
		close(fd);
		unlink(cfg->socket);
		h->socket_path[0] = 0;
		goto fail;
	}
	return h;
fail:
	bt_http_stop(h);
	return NULL;
}

/* Whether two web configs say the same: users and hashes, certificate
 * and key. */
static bool same_web(const struct bt_web_cfg *a, const struct bt_web_cfg *b)
{
	if (a->nusers != b->nusers || a->cert_len != b->cert_len || a->key_len != b->key_len ||
	    strcmp(a->priorities, b->priorities) ||
	    (a->cert_len && memcmp(a->cert_pem, b->cert_pem, a->cert_len)) ||
	    (a->key_len && memcmp(a->key_pem, b->key_pem, a->key_len)))
		return false;
	for (int i = 0; i < a->nusers; i++)
		if (strcmp(a->users[i].name, b->users[i].name) ||
		    strcmp(a->users[i].hash, b->users[i].hash))
			return false;
	return true;
}

static int reload_web(struct bt_http *h, char *msg, size_t len)
{
	struct web_state *cur = h ? h->tcp.web : NULL, *ws;
	struct bt_web_cfg w;
	bool prio_changed;
	char err[600];

	if (!cur)
		return 0;
	if (bt_web_config_load(cur->cfg.path, &w, err, sizeof(err))) {
		snprintf(msg, len, "%s; the web config in use stays", err);
		return -EINVAL;
	}
	if (same_web(&w, &cur->cfg)) {
		bt_web_config_free(&w);
		return 0;
	}
	if (!w.cert_pem != !cur->cfg.cert_pem) {
		snprintf(msg, len, "%s: TLS turned %s: that takes effect at the next start; the "
			 "web config in use stays", cur->cfg.path, w.cert_pem ? "on" : "off");
		bt_web_config_free(&w);
		return -EINVAL;
	}
	/* the daemon's priorities are set at its start */
	prio_changed = strcmp(w.priorities, cur->cfg.priorities) != 0;
	if (!(ws = web_state_new(&w, err, sizeof(err)))) {
		bt_web_config_free(&w);
		snprintf(msg, len, "%s; the web config in use stays", err);
		return -EINVAL;
	}
	ws->retired = cur;
	/* under reload_lock: handshakes and logins only read these */
	__atomic_store_n(&h->tcp.web, ws, __ATOMIC_RELEASE);
	if (ws->npcert)
		__atomic_store_n(&tls_web, ws, __ATOMIC_RELEASE);
	snprintf(msg, len, "re-read %s: %d user%s%s%s", ws->cfg.path, ws->cfg.nusers,
		 ws->cfg.nusers == 1 ? "" : "s", ws->npcert ? ", its certificate" : "",
		 prio_changed ? " (min_version and cipher_suites take effect at the next "
		 "start)" : "");
	return 1;
}

/* SIGHUP's reload thread and the loop's look at the files, one at a time */
int bt_http_reload_web(struct bt_http *h, char *msg, size_t len)
{
	static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;
	int rc;

	pthread_mutex_lock(&reload_lock);
	rc = reload_web(h, msg, len);
	pthread_mutex_unlock(&reload_lock);
	return rc;
}

void bt_http_stop(struct bt_http *h)
{
	if (!h)
		return;
	if (h->tcp.d)
		MHD_stop_daemon(h->tcp.d);
	__atomic_store_n(&tls_web, NULL, __ATOMIC_RELEASE);
	web_state_free(h->tcp.web);
	if (h->unix_sock.d)
		MHD_stop_daemon(h->unix_sock.d);	/* closes the socket */
	if (h->socket_path[0])
		unlink(h->socket_path);
	free(h);
	if (watchdog_running) {
		pthread_mutex_lock(&watchdog_lock);
		watchdog_stop = true;
		pthread_cond_signal(&watchdog_cond);
		pthread_mutex_unlock(&watchdog_lock);
		pthread_join(watchdog, NULL);
		watchdog_running = false;
	}
}
