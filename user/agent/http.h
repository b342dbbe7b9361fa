/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's HTTP side (libmicrohttpd): /metrics, /healthz,
 * /api/v1/heavy, /api/v1/drops, /api/v1/trace, over TCP and a unix
 * socket. */
#ifndef BLOOMTAP_HTTP_H
#define BLOOMTAP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct agent;
struct bt_http;
struct bt_web_cfg;

/* Limits, documented in the README's "Operating bloomtap". */
#define BT_HTTP_RATE_PER_CLIENT 50	/* requests a second a client address */
#define BT_HTTP_AUTH_FAIL_COST 10	/* tokens a failed login takes (a bcrypt) */
#define BT_HTTP_BCRYPTS_PER_S 10	/* bcrypts a second, all clients together */
#define BT_HTTP_CONNECTIONS 64		/* at once, all clients */
#define BT_HTTP_CONNECTIONS_PER_CLIENT 8	/* an IPv4 address, an IPv6 /64, and
						 * fewer while the table fills: at
						 * most max(1, free / 4) where free is
						 * what the TCP door has left */
#define BT_HTTP_HEADER_S 10		/* a request's headers, from the connection or
					 * the answer before: in by then, or closed */
#define BT_HTTP_BODY_S 30		/* its body, from its headers */
#define BT_HTTP_ANSWER_S 30		/* its answer's sending, from its queueing: a
					 * reader slower than that is cut (9.6 MB,
					 * the largest answer, at 320 KB/s) */
/* The API's CPU (the connection thread's, what its answer took) a client:
 * a budget of BT_HTTP_WORK_BURST_MS that refills BT_HTTP_WORK_MS_PER_S; a
 * request is charged what it took, and the client is refused (429) while
 * the budget is spent. /metrics and /healthz take none of it. */
#define BT_HTTP_WORK_MS_PER_S 100
#define BT_HTTP_WORK_BURST_MS 1000
#define BT_HTTP_TRACES_PER_CLIENT 1	/* trace requests at once, from headers to answer */
#define BT_HTTP_TRACES 2		/* ... of all TCP clients; the unix socket
					 * (the local admin) has its own */
#define BT_HTTP_DROPS_PCAP_MAX 1000	/* drops a /api/v1/drops/pcap answer holds
					 * (n's default and bound) */
#define BT_HTTP_DROPS_PCAP_BYTES (4u << 20) /* ... and its bytes at most: the
					 * newest drops that fit (1,000 at the default
					 * 256-byte head take 0.6 MB; at the 9216-byte
					 * head, 430 fit) */
#define BT_HTTP_TRACE_MAX_PACKETS 8192	/* packets a trace request (a 1 MiB body of small ones holds more) */
#define BT_HTTP_TRACE_DEFAULT_S 3600	/* a trace without since: the last hour */
/* A trace request's window x packet probes, live and archived, for each
 * ms left of its client's BT_HTTP_WORK budget (at most 2^26 in all): a
 * probe of an archived window took 0.2 us here (8,192 packets by 245
 * windows in 0.42 s), a live one less; a trace that would take more is
 * refused (429) */
#define BT_HTTP_TRACE_PROBES_PER_MS 4000

struct bt_http_cfg {
	const char *listen;		/* ADDR:PORT */
	struct bt_web_cfg *web;		/* TLS and users, or NULL; bt_http_start
					 * takes it over (it is emptied) */
	const char *socket;		/* the unix socket's path, or NULL */
	bool metrics_only;		/* listen: /metrics and /healthz alone */
};

/* What listen serves, and to whom, in one line (run --check and the
 * agent's start say it); true when the API is open beyond loopback
 * without users: anyone who reaches it traces packets and reads flows. */
bool bt_http_exposure(const struct bt_http_cfg *cfg, char *buf, size_t len);

/* Starts serving: NULL with err set when the port or the socket cannot be
 * had. */
struct bt_http *bt_http_start(struct agent *a, const struct bt_http_cfg *cfg, char *err,
			      size_t errlen);
void bt_http_stop(struct bt_http *h);
/* The web config read again from its file: 1 when swapped in (msg says
 * what it holds), 0 when it says what the one in use says, -EINVAL when
 * it does not load or turns TLS on or off (msg says why; the one in use
 * stays). For SIGHUP, and for the loop's look at the files. */
int bt_http_reload_web(struct bt_http *h, char *msg, size_t len);
/* 0 when an agent could serve its API on the unix socket path: nothing
 * there, or a socket nobody answers on (a dead agent's); else -errno with
 * err set. */
int bt_api_socket_check(const char *path, char *err, size_t errlen);
/* 0 when s is ADDR:PORT; *loopback says whether ADDR is. */
int bt_listen_check(const char *s, bool *loopback);
/* 0 when nothing listens on s here (a bind would take it), else -errno
 * (-EADDRINUSE: another process has it). */
int bt_listen_free(const char *s);

#endif /* BLOOMTAP_HTTP_H */
