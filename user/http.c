// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The agent's HTTP side, with libmicrohttpd: read-only by construction (no
 * route attaches, detaches or changes anything), bodies bounded, requests
 * rate-limited, every refusal a 4xx with a JSON error. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include "agent.h"
#include "commands.h"
#include "common.h"
#include "util.h"
#include "http.h"
#include "metrics.h"

#define BODY_MAX (1 << 20)		/* a capture of a few hundred packets */
#define RATE_PER_S 100			/* requests a second, all clients */

struct req {
	char *body;
	size_t len;
	bool too_large;
};

static int reply(struct MHD_Connection *c, unsigned status, const char *type, char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text,
								MHD_RESPMEM_MUST_FREE);
	int ret;

	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static int reply_json(struct MHD_Connection *c, unsigned status, struct json_object *o)
{
	char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return reply(c, status, "application/json", text);
}

static int reply_error(struct agent *a, struct MHD_Connection *c, unsigned status,
		       const char *msg)
{
	struct json_object *o = json_object_new_object();

	a->rejected++;
	json_object_object_add(o, "error", json_object_new_string(msg));
	return reply_json(c, status, o);
}

/* A token bucket over all clients: a scraper or a few tools fit, a flood
 * does not reach the maps. */
static bool rate_ok(void)
{
	static double tokens = RATE_PER_S, last;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	double now = bt_mono_s();
	bool ok;

	pthread_mutex_lock(&mu);
	tokens += (now - last) * RATE_PER_S;
	if (tokens > RATE_PER_S)
		tokens = RATE_PER_S;
	last = now;
	ok = tokens >= 1;
	if (ok)
		tokens--;
	pthread_mutex_unlock(&mu);
	return ok;
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

/* A route: its path, the method it takes, what it does. */
struct route {
	const char *path;
	bool post;			/* POST; else GET */
	const char *wrong_method;	/* the 405's message */
	enum MHD_Result (*fn)(struct agent *a, struct MHD_Connection *c, struct req *r);
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
	struct json_object *o;
	char *end = NULL;
	long top = n ? strtol(n, &end, 10) : 20;

	if (n && (end == n || *end))
		top = 0;	/* "5x" is no number: refused below */
	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	if (top < 1 || top > 100000)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "n must be 1..100000");
	pthread_mutex_lock(&a->lock);
	o = bt_heavy_json(&f->hm, top, false, NULL);
	pthread_mutex_unlock(&a->lock);
	if (!o)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return reply_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result route_trace(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	const char *since = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");
	const char *until = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "until");
	struct agent_iface *f = pick_iface(a, c);
	struct json_object *o;
	__u64 s_ns = 0, u_ns = 0;
	char err[600] = "";

	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	if (!r->len)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, "empty body");
	if ((since && bt_parse_time(since, &s_ns)) || (until && bt_parse_time(until, &u_ns)))
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST,
				   "since and until take epoch seconds, YYYY-MM-DDTHH:MM:SSZ or -N[smhd]");
	/* no lock: the query reads the ring as it turns, and the archive's
	 * files, while rotations and flips go on */
	o = bt_trace_buffer(&f->inst, a->cfg.archive, r->body, r->len, s_ns, u_ns, err,
			    sizeof(err));
	if (!o)
		return reply_error(a, c, MHD_HTTP_BAD_REQUEST, err);
	return reply_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result route_drops(struct agent *a, struct MHD_Connection *c, struct req *r)
{
	struct agent_iface *f = pick_iface(a, c);
	struct json_object *o;

	if (!f)
		return reply_error(a, c, MHD_HTTP_NOT_FOUND, "no such interface (?iface=NAME)");
	o = bt_drops_json(&f->inst, 20);
	if (!o)
		return reply_error(a, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return reply_json(c, MHD_HTTP_OK, o);
}

static const struct route routes[] = {
	{ "/healthz", false, "use GET", route_healthz },
	{ "/metrics", false, "use GET", route_metrics },
	{ "/api/v1/heavy", false, "use GET", route_heavy },
	{ "/api/v1/drops", false, "use GET", route_drops },
	{ "/api/v1/trace", true, "use POST with packet bytes in hex, or a pcap", route_trace },
};

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **con_cls)
{
	struct agent *a = cls;
	struct req *r = *con_cls;

	if (!r) {	/* first call: headers only */
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*con_cls = r;
		return MHD_YES;
	}
	if (*size) {	/* body, piece by piece, bounded */
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
	a->requests++;
	if (!rate_ok())
		return reply_error(a, c, MHD_HTTP_TOO_MANY_REQUESTS, "too many requests");
	if (r->too_large)
		return reply_error(a, c, MHD_HTTP_CONTENT_TOO_LARGE, "request body over 1 MiB");
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(url, routes[i].path))
			continue;
		if (strcmp(method, routes[i].post ? "POST" : "GET"))
			return reply_error(a, c, MHD_HTTP_METHOD_NOT_ALLOWED, routes[i].wrong_method);
		return routes[i].fn(a, c, r);
	}
	return reply_error(a, c, MHD_HTTP_NOT_FOUND,
			   "no such path (/metrics, /healthz, /api/v1/heavy, /api/v1/drops, /api/v1/trace)");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	if (r) {
		free(r->body);
		free(r);
	}
	*con_cls = NULL;
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

struct MHD_Daemon *bt_http_start(struct agent *a, const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;

	if (parse_listen(listen, &ss)) {
		snprintf(err, errlen, "--listen %s: give ADDR:PORT (127.0.0.1:9477, [::1]:9477)", listen);
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, ntohs(((struct sockaddr_in *)&ss)->sin_port), NULL, NULL,
			     &handle, a, MHD_OPTION_SOCK_ADDR, &ss,
			     MHD_OPTION_NOTIFY_COMPLETED, &completed, NULL,
			     MHD_OPTION_CONNECTION_LIMIT, 64,
			     MHD_OPTION_CONNECTION_TIMEOUT, 10,
			     MHD_OPTION_END);
	if (!d)
		snprintf(err, errlen, "cannot listen on %s: %s (in use, or not an address here)",
			 listen, strerror(errno));
	return d;
}

void bt_http_stop(struct MHD_Daemon *d)
{
	if (d)
		MHD_stop_daemon(d);
}
