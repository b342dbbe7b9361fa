// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See ipfix.h. libfixbuf (CERT NetSA) encodes: templates, records, message
 * headers with the export time and the sequence number of the observation
 * domain, each message kept under the path MTU. It writes into a buffer of
 * ours (fbExporterAllocBuffer), one message at a time, and we send it: a
 * socket of libfixbuf's own would block an interval on a collector that
 * does not answer (a TCP connect, a full send buffer), and the agent must
 * never wait on one. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <fixbuf/public.h>
#include "instance/drops.h"
#include "flow.h"
#include "instance/instance.h"
#include "instance/wltable.h"
#include "ipfix.h"
#include "base/util.h"

/* Template ids: the data templates by key mode and family, the two
 * options templates. */
#define TID_DATA(mode, v6) (256 + (mode) * 2 + (v6))
/* dropped flows: the same with forwardingStatus */
#define TID_DROPPED(mode, v6) (280 + (mode) * 2 + (v6))
/* sent flows (tc egress): egressInterface instead of ingressInterface */
#define TID_SENT(mode, v6) (288 + (mode) * 2 + (v6))
#define TID_SAMPLING 270
#define TID_ERROR 271
#define TID_INTERNAL 300
#define TCP_PENDING_MAX (1u << 20)	/* bytes a slow TCP collector may owe */
#define CONNECT_TIMEOUT_S 5.0		/* a TCP connect that neither succeeds nor fails */

/* One flow as libfixbuf reads it (the internal template, in this order). */
struct flow_rec {
	uint64_t start_ms, end_ms, packets, l2_bytes;
	uint8_t src6[16], dst6[16];
	uint32_t src4, dst4;
	uint32_t ifindex, out_ifindex;	/* ingressInterface, egressInterface */
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t forwarding;	/* forwardingStatus of a dropped flow */
	uint8_t direction;	/* flowDirection (IE 61): 0 what the interface
				 * received, 1 what it sent */
	uint8_t pad[1];
	fbVarfield_t src_wl, dst_wl;	/* the workloads' names, "": none */
};

/* bloomtap's own elements (docs/operating.md "IPFIX export"): the source's
 * and the destination's workload as the packets passed, UTF-8 strings of
 * variable length, under enterprise number 32473 (RFC 5612's, reserved
 * for documentation: bloomtap holds no number of its own, and no vendor's
 * elements are under that one). */
#define BT_IPFIX_PEN 32473
static fbInfoElement_t bt_elements[] = {
	FB_IE_INIT_FULL("bloomtapSourceWorkload", BT_IPFIX_PEN, 1, FB_IE_VARLEN, 0, 0, 0,
			FB_STRING, "the source address's workload when the packets passed"),
	FB_IE_INIT_FULL("bloomtapDestinationWorkload", BT_IPFIX_PEN, 2, FB_IE_VARLEN, 0, 0, 0,
			FB_STRING, "the destination address's workload when the packets passed"),
	FB_IE_NULL
};

static fbInfoElementSpec_t flow_internal[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "layer2OctetDeltaCount", 8, 0 },
	{ "sourceIPv6Address", 16, 0 },
	{ "destinationIPv6Address", 16, 0 },
	{ "sourceIPv4Address", 4, 0 },
	{ "destinationIPv4Address", 4, 0 },
	{ "ingressInterface", 4, 0 },
	{ "egressInterface", 4, 0 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "forwardingStatus", 1, 0 },
	{ "flowDirection", 1, 0 },
	{ "paddingOctets", 1, 0 },
	{ "bloomtapSourceWorkload", FB_IE_VARLEN, 0 },
	{ "bloomtapDestinationWorkload", FB_IE_VARLEN, 0 },
	FB_IESPEC_NULL
};

/* What a data template holds, by flags: a key mode leaves out the fields
 * it masks (rather than sending zeros); F_IN marks the received (and
 * dropped) flows' templates, F_OUT the sent flows'. */
enum { F_V4 = 1, F_V6 = 2, F_SRC = 4, F_DST = 8, F_PORTS = 16, F_DROPPED = 32, F_IN = 64,
       F_OUT = 128 };

static fbInfoElementSpec_t flow_external[] = {
	{ "sourceIPv4Address", 4, F_V4 | F_SRC },
	{ "destinationIPv4Address", 4, F_V4 | F_DST },
	{ "sourceIPv6Address", 16, F_V6 | F_SRC },
	{ "destinationIPv6Address", 16, F_V6 | F_DST },
	{ "sourceTransportPort", 2, F_PORTS },
	{ "destinationTransportPort", 2, F_PORTS },
	{ "protocolIdentifier", 1, F_PORTS },
	{ "layer2OctetDeltaCount", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "ingressInterface", 4, F_IN },
	{ "egressInterface", 4, F_OUT },
	{ "flowDirection", 1, 0 },
	/* RFC 7270's reduced-size encoding (one byte), as exporters send it */
	{ "forwardingStatus", 1, F_DROPPED },
	/* the addresses' workloads, with the addresses the key mode keeps */
	{ "bloomtapSourceWorkload", FB_IE_VARLEN, F_SRC },
	{ "bloomtapDestinationWorkload", FB_IE_VARLEN, F_DST },
	FB_IESPEC_NULL
};

static const uint32_t mode_flags[] = {
	[BT_KEY_5TUPLE] = F_SRC | F_DST | F_PORTS,
	[BT_KEY_SRC] = F_SRC,
	[BT_KEY_DST] = F_DST,
	[BT_KEY_PAIR] = F_SRC | F_DST,
};

/* Options: every packet was observed (no sampling: 1 in 1, nothing
 * skipped), scoped to the observation domain. Not samplingInterval (34)
 * = 1 as well: nfdump 1.7.1 then doubled every count (tried). */
struct sampling_rec {
	uint32_t domain, interval, space;
};

static fbInfoElementSpec_t sampling_spec[] = {
	{ "observationDomainId", 4, 0 },	/* scope */
	{ "samplingPacketInterval", 4, 0 },
	{ "samplingPacketSpace", 4, 0 },
	FB_IESPEC_NULL
};

/* Options: the counts are estimates, never low, high by at most
 * absoluteError (the interval's eps * N), for one counter element of one
 * interface over one interval. */
struct error_rec {
	uint64_t start_ms, end_ms;
	double abs_error;
	uint32_t domain, ifindex;
	uint16_t ie;
	uint8_t pad[6];
};

static fbInfoElementSpec_t error_internal[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "absoluteError", 8, 0 },
	{ "observationDomainId", 4, 0 },
	{ "ingressInterface", 4, 0 },
	{ "informationElementId", 2, 0 },
	{ "paddingOctets", 6, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t error_external[] = {
	{ "observationDomainId", 4, 0 },	/* scope */
	{ "ingressInterface", 4, 0 },		/* scope */
	{ "informationElementId", 2, 0 },	/* scope */
	{ "absoluteError", 8, 0 },
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	FB_IESPEC_NULL
};

struct bt_ipfix {
	struct bt_ipfix_dest d;
	struct bt_ipfix_cfg cfg;
	char name[300];
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exporter;
	fBuf_t *fbuf;
	uint8_t *msg;			/* libfixbuf's message, one at a time */
	size_t msg_size;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;
	struct gaicb gai;		/* the name's resolution (resolve()) */
	struct addrinfo hints;
	bool resolving;			/* gai under way */
	bool connecting;		/* TCP: connect() not finished */
	unsigned int next_addr;		/* of the name's addresses, the one to use */
	double connect_at;		/* TCP: when connect() began (monotonic s) */
	FILE *file;
	bool send_templates;
	double templates_at;		/* CLOCK_MONOTONIC seconds */
	uint8_t *pending;		/* TCP: bytes the socket has not taken */
	size_t npending;
	/* TCP: the messages those bytes belong to, oldest first: a message
	 * counts as sent once its last byte is in the socket */
	struct backlog_msg {
		size_t left;		/* its bytes still in pending */
		size_t records;
	} *backlog;
	size_t nbacklog;
	size_t msg_records;		/* data records in the message being built */
	struct bt_ipfix_stats st;
};

/* The one place a message counts: sent (in the socket, or the file) ... */
static void delivered(struct bt_ipfix *x, size_t records)
{
	x->st.messages++;
	x->st.records += records;
}

/* ... or not sent, whatever the cause: the unit of
 * bloomtap_ipfix_errors_total is a message. */
static void lost(struct bt_ipfix *x, size_t messages)
{
	x->st.errors += messages;
}


int bt_ipfix_parse_dest(const char *s, struct bt_ipfix_dest *d, char *err, size_t len)
{
	const char *host = s, *port = NULL, *end;
	size_t hl;

	memset(d, 0, sizeof(*d));
	d->transport = BT_IPFIX_UDP;
	if (!strncmp(s, "udp:", 4)) {
		host = s + 4;
	} else if (!strncmp(s, "tcp:", 4)) {
		d->transport = BT_IPFIX_TCP;
		host = s + 4;
	}
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':')) {
			snprintf(err, len, "'%s': an IPv6 address goes in brackets: [ADDR]:PORT", s);
			return -EINVAL;
		}
		host++;
		hl = end - host;
		port = end[1] ? end + 2 : NULL;
	} else {
		end = strrchr(host, ':');
		if (end && strchr(host, ':') != end) {
			snprintf(err, len, "'%s': an IPv6 address goes in brackets: [ADDR]:PORT", s);
			return -EINVAL;
		}
		hl = end ? (size_t)(end - host) : strlen(host);
		port = end ? end + 1 : NULL;
	}
	if (!hl || hl >= sizeof(d->host)) {
		snprintf(err, len, "'%s': no collector host (HOST:PORT)", s);
		return -EINVAL;
	}
	memcpy(d->host, host, hl);
	if (port) {
		char *e;
		unsigned long p = strtoul(port, &e, 10);

		if (!*port || *e || p == 0 || p > 65535) {
			snprintf(err, len, "'%s': the port is 1..65535", s);
			return -EINVAL;
		}
		snprintf(d->port, sizeof(d->port), "%lu", p);
	} else {
		snprintf(d->port, sizeof(d->port), "%s", BT_IPFIX_DEFAULT_PORT);
	}
	return 0;
}

int bt_ipfix_parse_list(const char *s, struct bt_ipfix_dest *d, int *n, char *err, size_t len)
{
	char buf[1024], *save = NULL, *tok;

	*n = 0;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, len, "too long a list of collectors");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == BT_IPFIX_MAX_DEST) {
			snprintf(err, len, "at most %d collectors", BT_IPFIX_MAX_DEST);
			return -EINVAL;
		}
		if (bt_ipfix_parse_dest(tok, &d[*n], err, len))
			return -EINVAL;
		(*n)++;
	}
	if (!*n) {
		snprintf(err, len, "no collector given");
		return -EINVAL;
	}
	return 0;
}

/* A template from spec (flags as fbTemplateAppendSpecArray takes them),
 * added to the session; scope: its first scope fields (options). */
static bool add_template(struct bt_ipfix *x, fbInfoElementSpec_t *spec, uint32_t flags,
			 int scope, gboolean internal, uint16_t tid, GError **err)
{
	fbTemplate_t *t = fbTemplateAlloc(x->model);

	if (!fbTemplateAppendSpecArray(t, spec, flags, err)) {
		fbTemplateFreeUnused(t);
		return false;
	}
	if (scope)
		fbTemplateSetOptionsScope(t, scope);
	if (!fbSessionAddTemplate(x->session, internal, tid, t, err)) {
		fbTemplateFreeUnused(t);
		return false;
	}
	return true;
}

/* The collector's address number x->next_addr (wrapping) of its name as
 * it resolves now: resolved again at each (re)connect, since a name's
 * addresses change, and each address tried in turn, since a collector may
 * listen on the second of them only (localhost as ::1 first, a collector
 * on 127.0.0.1).
 *
 * Resolved by glibc's getaddrinfo_a on its own thread, waited for
 * RESOLVE_WAIT_S at most: this runs inside an interval's export, under
 * the agent's lock, and a resolver that answers in 5 s held the windows
 * and the scrapes that long. A name not resolved by then is -EINPROGRESS
 * (this message not sent, counted); the next (re)connect takes the answer. */
#define RESOLVE_WAIT_S 0.02

static int resolve(struct bt_ipfix *x)
{
	struct timespec wait = { 0, (long)(RESOLVE_WAIT_S * 1e9) };
	const struct gaicb *wait_list[1] = { &x->gai };
	struct addrinfo *a;
	int rc, n = 0;

	if (!x->resolving) {
		struct gaicb *list[1] = { &x->gai };

		x->hints = (struct addrinfo){ .ai_socktype = x->d.transport == BT_IPFIX_TCP ?
							     SOCK_STREAM : SOCK_DGRAM,
					      .ai_flags = AI_NUMERICSERV };
		x->gai = (struct gaicb){ .ar_name = x->d.host, .ar_service = x->d.port,
					 .ar_request = &x->hints };
		if ((rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL)))
			return rc == EAI_SYSTEM ? -errno : -EAGAIN;
		x->resolving = true;
		gai_suspend(wait_list, 1, &wait);	/* EAI_AGAIN past the wait */
	}
	rc = gai_error(&x->gai);
	if (rc == EAI_INPROGRESS)
		return -EINPROGRESS;
	x->resolving = false;
	if (rc)
		return rc == EAI_SYSTEM ? -EIO : -EHOSTUNREACH;
	for (a = x->gai.ar_result; a; a = a->ai_next)
		n++;
	a = x->gai.ar_result;
	for (int i = x->next_addr % n; i > 0; i--)
		a = a->ai_next;
	memcpy(&x->addr, a->ai_addr, a->ai_addrlen);
	x->addrlen = a->ai_addrlen;
	freeaddrinfo(x->gai.ar_result);
	x->gai.ar_result = NULL;
	return 0;
}

/* A resolution still under way holds pointers into x: cancelled, or
 * waited for (at a close: a reload's or the exit's, outside the lock). */
static void resolve_end(struct bt_ipfix *x)
{
	const struct gaicb *list[1] = { &x->gai };

	if (!x->resolving)
		return;
	if (gai_cancel(&x->gai) != EAI_CANCELED)
		while (gai_error(&x->gai) == EAI_INPROGRESS)
			gai_suspend(list, 1, NULL);
	if (x->gai.ar_result)
		freeaddrinfo(x->gai.ar_result);
	x->resolving = false;
}

/* This address failed: the next one, next time. */
static void next_address(struct bt_ipfix *x)
{
	x->next_addr++;
}

static int open_socket(struct bt_ipfix *x)
{
	int type = x->d.transport == BT_IPFIX_TCP ? SOCK_STREAM : SOCK_DGRAM, err;

	if ((err = resolve(x)))
		return err;
	x->fd = socket(x->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	/* UDP: connected, so that a collector's ICMP unreachable comes back
	 * as an error of a later send, counted */
	if (connect(x->fd, (struct sockaddr *)&x->addr, x->addrlen) && errno != EINPROGRESS) {
		err = -errno;
		close(x->fd);
		x->fd = -1;
		next_address(x);
		return err;
	}
	x->connecting = x->d.transport == BT_IPFIX_TCP;
	x->connect_at = bt_mono_s();
	x->send_templates = true;	/* a new stream, or a new start */
	return 0;
}

/* The connection gone (broken, reset, or closed at a reload or at exit):
 * what it still owed will never arrive. */
static void close_socket(struct bt_ipfix *x)
{
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	x->connecting = false;
	lost(x, x->nbacklog);
	x->nbacklog = 0;
	x->npending = 0;
}

struct bt_ipfix *bt_ipfix_open(const struct bt_ipfix_dest *d, const struct bt_ipfix_cfg *cfg,
			       char *err, size_t len)
{
	struct bt_ipfix *x = calloc(1, sizeof(*x));
	GError *gerr = NULL;
	bool ok;

	if (!x) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	x->d = *d;
	x->cfg = *cfg;
	x->fd = -1;
	if (d->transport == BT_IPFIX_FILE)
		snprintf(x->name, sizeof(x->name), "%s", d->host);
	else
		snprintf(x->name, sizeof(x->name), "%s:%s%s%s:%s",
			 d->transport == BT_IPFIX_TCP ? "tcp" : "udp",
			 strchr(d->host, ':') ? "[" : "", d->host, strchr(d->host, ':') ? "]" : "",
			 d->port);
	/* a message fits a datagram of the path MTU over IPv6 (40 + 8) */
	x->msg_size = cfg->mtu - 48;
	x->msg = malloc(x->msg_size);
	if (d->transport == BT_IPFIX_TCP) {
		x->pending = malloc(TCP_PENDING_MAX);
		/* a message is more than its 16-byte header */
		x->backlog = calloc(TCP_PENDING_MAX / 16, sizeof(*x->backlog));
	}
	if (!x->msg || (d->transport == BT_IPFIX_TCP && (!x->pending || !x->backlog))) {
		snprintf(err, len, "out of memory");
		goto fail;
	}
	if (d->transport == BT_IPFIX_FILE) {
		x->file = fopen(d->host, "we");
		if (!x->file) {
			snprintf(err, len, "%s: %s", d->host, strerror(errno));
			goto fail;
		}
		x->send_templates = true;
	} else {
		struct addrinfo hints = { .ai_socktype = d->transport == BT_IPFIX_TCP ?
							 SOCK_STREAM : SOCK_DGRAM,
					  .ai_flags = AI_NUMERICSERV }, *ai;
		int rc = getaddrinfo(d->host, d->port, &hints, &ai);

		/* a name that does not resolve at start is a configuration
		 * error; later it is resolved again at each (re)connect */
		if (rc) {
			snprintf(err, len, "collector %s: %s", x->name, gai_strerror(rc));
			goto fail;
		}
		freeaddrinfo(ai);
		/* connecting while the interval runs; a collector not there yet
		 * is tried again at each export (counted) */
		open_socket(x);
	}

	x->model = fbInfoModelAlloc();
	fbInfoModelAddElementArray(x->model, bt_elements);
	x->session = fbSessionAlloc(x->model);
	fbSessionSetDomain(x->session, cfg->domain);	/* before its templates */
	ok = add_template(x, flow_internal, 0, 0, TRUE, TID_INTERNAL, &gerr) &&
	     add_template(x, sampling_spec, 0, 0, TRUE, TID_SAMPLING, &gerr) &&
	     add_template(x, sampling_spec, 0, 1, FALSE, TID_SAMPLING, &gerr) &&
	     add_template(x, error_internal, 0, 0, TRUE, TID_ERROR, &gerr) &&
	     add_template(x, error_external, 0, 3, FALSE, TID_ERROR, &gerr);
	for (int mode = BT_KEY_5TUPLE; ok && mode <= BT_KEY_PAIR; mode++)
		for (int v6 = 0; ok && v6 <= 1; v6++)
			ok = add_template(x, flow_external, mode_flags[mode] | F_IN |
					  (v6 ? F_V6 : F_V4), 0, FALSE, TID_DATA(mode, v6), &gerr) &&
			     add_template(x, flow_external, mode_flags[mode] | F_IN | F_DROPPED |
					  (v6 ? F_V6 : F_V4), 0, FALSE, TID_DROPPED(mode, v6), &gerr) &&
			     add_template(x, flow_external, mode_flags[mode] | F_OUT |
					  (v6 ? F_V6 : F_V4), 0, FALSE, TID_SENT(mode, v6), &gerr);
	if (!ok) {
		snprintf(err, len, "IPFIX templates: %s", gerr->message);
		g_clear_error(&gerr);
		goto fail;
	}
	x->exporter = fbExporterAllocBuffer(x->msg, x->msg_size);
	x->fbuf = fBufAllocForExport(x->session, x->exporter);
	return x;
fail:
	bt_ipfix_close(x);
	return NULL;
}

void bt_ipfix_close(struct bt_ipfix *x)
{
	if (!x)
		return;
	if (x->fbuf)
		fBufFree(x->fbuf);	/* the session and the exporter with it */
	else if (x->session)
		fbSessionFree(x->session);
	if (x->model)
		fbInfoModelFree(x->model);
	close_socket(x);
	resolve_end(x);
	if (x->file)
		fclose(x->file);
	free(x->msg);
	free(x->pending);
	free(x->backlog);
	free(x);
}

/* TCP: n bytes of the backlog taken by the socket; the messages they end
 * are sent. */
static void backlog_sent(struct bt_ipfix *x, size_t n)
{
	size_t done = 0;

	memmove(x->pending, x->pending + n, x->npending - n);
	x->npending -= n;
	while (n && done < x->nbacklog) {
		struct backlog_msg *m = &x->backlog[done];
		size_t take = n < m->left ? n : m->left;

		m->left -= take;
		n -= take;
		if (m->left)
			break;
		delivered(x, m->records);
		done++;
	}
	memmove(x->backlog, x->backlog + done, (x->nbacklog - done) * sizeof(*x->backlog));
	x->nbacklog -= done;
}

/* TCP: what the socket owes sent first; 0 when nothing is left owing. */
static int flush_pending(struct bt_ipfix *x)
{
	while (x->npending) {
		ssize_t n = send(x->fd, x->pending, x->npending, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
		backlog_sent(x, n);
	}
	return 0;
}

/* One whole message out, or dropped and counted: a stream never carries
 * part of one. */
static int put(struct bt_ipfix *x, const uint8_t *p, size_t n)
{
	ssize_t sent = 0;
	int err = 0;

	switch (x->d.transport) {
	case BT_IPFIX_FILE:
		if (fwrite(p, 1, n, x->file) != n || fflush(x->file))
			err = errno ? -errno : -EIO;
		break;
	case BT_IPFIX_UDP:
		if (x->fd < 0 && (err = open_socket(x)))
			break;
		if (send(x->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			err = -errno;
		/* refused (an ICMP unreachable for an earlier datagram): the
		 * name resolved again, its next address, at the next message */
		if (err == -ECONNREFUSED) {
			close_socket(x);
			next_address(x);
		}
		break;
	case BT_IPFIX_TCP:
		if (x->fd < 0 || x->connecting) {
			err = -ENOTCONN;
			break;
		}
		err = flush_pending(x);
		if (!err) {
			sent = send(x->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (sent < 0) {
				err = errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
				sent = 0;
			}
		} else if (err == -EAGAIN) {
			err = 0;
		}
		if (err) {		/* the connection broke: a new one next time */
			close_socket(x);
			next_address(x);
			break;
		}
		if ((size_t)sent < n) {
			if (x->npending + (n - sent) > TCP_PENDING_MAX) {
				err = -ENOBUFS;	/* the collector is this far behind */
				break;
			}
			memcpy(x->pending + x->npending, p + sent, n - sent);
			x->npending += n - sent;
			x->backlog[x->nbacklog++] = (struct backlog_msg){ n - sent, x->msg_records };
			return 0;	/* sent when its last byte is */
		}
		break;
	}
	if (err) {
		lost(x, 1);
		return err;
	}
	delivered(x, x->msg_records);
	return 0;
}

/* The message libfixbuf has built, out. */
static int emit(struct bt_ipfix *x)
{
	GError *gerr = NULL;
	int err;

	if (!fBufEmit(x->fbuf, &gerr)) {
		g_clear_error(&gerr);
		lost(x, 1);
		x->msg_records = 0;
		return -EIO;
	}
	err = fbExporterGetMsgLen(x->exporter) ? put(x, x->msg, fbExporterGetMsgLen(x->exporter))
					       : 0;
	x->msg_records = 0;
	return err;
}

/* The message being built, ended and never sent (libfixbuf 2 has no
 * rewind): the sequence number moves past its records, so the collector
 * sees the loss as a gap, as it would a datagram lost on the way. */
static void discard(struct bt_ipfix *x)
{
	GError *gerr = NULL;

	if (!fBufEmit(x->fbuf, &gerr))
		g_clear_error(&gerr);
	x->msg_records = 0;
	lost(x, 1);
}

/* Appends one record under the given templates; a full message goes out
 * first. A record libfixbuf refuses ends the export: the message being
 * built is dropped (counted), never sent without it. */
static int append(struct bt_ipfix *x, uint16_t internal, uint16_t external, const void *rec,
		  size_t len, bool data, int *first_err)
{
	GError *gerr = NULL;

	if (!fBufSetInternalTemplate(x->fbuf, internal, &gerr) ||
	    !fBufSetExportTemplate(x->fbuf, external, &gerr))
		goto fail;
	if (!fBufAppend(x->fbuf, (uint8_t *)rec, len, &gerr)) {
		if (!g_error_matches(gerr, FB_ERROR_DOMAIN, FB_ERROR_EOM))
			goto fail;
		g_clear_error(&gerr);
		{
			int err = emit(x);

			if (err && !*first_err)
				*first_err = err;
		}
		if (!fBufSetInternalTemplate(x->fbuf, internal, &gerr) ||
		    !fBufSetExportTemplate(x->fbuf, external, &gerr) ||
		    !fBufAppend(x->fbuf, (uint8_t *)rec, len, &gerr))
			goto fail;
	}
	x->msg_records += data;
	return 0;
fail:
	g_clear_error(&gerr);
	discard(x);
	if (!*first_err)
		*first_err = -EIO;
	return -EIO;
}

/* The templates and the sampling record, in a message of their own. */
static int templates(struct bt_ipfix *x, int *first_err)
{
	struct sampling_rec s = { .domain = x->cfg.domain, .interval = 1, .space = 0 };
	GError *gerr = NULL;
	int err;

	/* libfixbuf writes templates only at a message's start, which
	 * automatic mode begins; they fit one message */
	fBufSetAutomaticMode(x->fbuf, TRUE);
	if (!fbSessionExportTemplates(x->session, &gerr)) {
		g_clear_error(&gerr);
		fBufSetAutomaticMode(x->fbuf, FALSE);
		discard(x);
		return *first_err ? *first_err : (*first_err = -EIO);
	}
	fBufSetAutomaticMode(x->fbuf, FALSE);
	if ((err = append(x, TID_SAMPLING, TID_SAMPLING, &s, sizeof(s), false, first_err)))
		return err;
	err = emit(x);
	if (err && !*first_err)
		*first_err = err;
	if (!err) {
		x->send_templates = false;
		x->templates_at = bt_mono_s();
	}
	return err;
}

/* TCP: is the connection up? Starts one when there is none. */
static bool tcp_ready(struct bt_ipfix *x)
{
	if (x->fd < 0 && open_socket(x))
		return false;
	if (x->connecting) {
		struct pollfd p = { .fd = x->fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (poll(&p, 1, 0) <= 0) {
			/* an address that answers nothing (no RST, no
			 * unreachable): the next one after a while */
			if (bt_mono_s() - x->connect_at >= CONNECT_TIMEOUT_S) {
				close_socket(x);
				next_address(x);
				open_socket(x);
			}
			return false;
		}
		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
			/* refused or unreachable: the next address, now */
			close_socket(x);
			next_address(x);
			open_socket(x);		/* connecting: ready at a later export */
			return false;
		}
		x->connecting = false;
	}
	return true;
}

/* RFC 7270's forwardingStatus for a kernel drop reason: status Dropped
 * (0b10 in the top two bits) with the closest reason code, by name (the
 * kernel's values move between versions; its names are what is stable). */
uint8_t bt_forwarding_status(__u32 reason)
{
	static const struct {
		const char *prefix;
		uint8_t code;
	} map[] = {
		{ "NETFILTER_DROP", 129 },	/* ACL deny */
		{ "TC_", 130 },			/* ACL drop */
		{ "IP_INNOROUTES", 131 },	/* unroutable */
		{ "IP_OUTNOROUTES", 131 },
		{ "NEIGH_", 132 },		/* adjacency */
		{ "PKT_TOO_BIG", 133 },		/* fragmentation and DF set */
		{ "IP_CSUM", 134 },		/* bad header checksum */
		{ "UDP_CSUM", 134 },
		{ "TCP_CSUM", 134 },
		{ "ICMP_CSUM", 134 },
		{ "PKT_TOO_SMALL", 135 },	/* bad total length */
		{ "IP_RPFILTER", 140 },		/* RPF */
		{ "QDISC_", 139 },		/* a queue's drop: WRED is the closest */
		{ "NO_SOCKET", 141 },		/* for us */
		{ "SOCKET_", 141 },
		{ "TCP_", 141 },
		{ "UDP_", 141 },
	};
	char buf[64];
	const char *name = bt_drop_reason_name(reason, buf, sizeof(buf));

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strncmp(name, map[i].prefix, strlen(map[i].prefix)))
			return map[i].code;
	return 128;	/* dropped, reason unknown */
}

/* A workload's name as a string element: "" for none. */
static fbVarfield_t wl_field(const struct bt_wl_names *wl, __u32 id)
{
	const char *s = wl ? bt_wl_name_of(wl, id) : NULL;

	return (fbVarfield_t){ .len = s ? strlen(s) : 0, .buf = (uint8_t *)(s ? s : "") };
}

int bt_ipfix_export(struct bt_ipfix *x, const struct bt_heavy_report *r, uint64_t end_ns,
		    uint32_t ifindex, int key_mode, bool sent, const struct bt_wl_names *wl)
{
	bool dropped = r->n && bt_flow_key_reason(&r->flows[0].key);
	const uint16_t counters[] = { 352, 2 };	/* layer2OctetDeltaCount, packetDeltaCount */
	uint64_t start_ms = r->start_ns / 1000000, end_ms = end_ns / 1000000;
	int first_err = 0;

	if (key_mode < BT_KEY_5TUPLE || key_mode > BT_KEY_PAIR)
		return -EINVAL;
	/* TCP down (connecting, or gone): the messages are built all the
	 * same, and put() counts each as not sent; the templates wait for
	 * the connection they start */
	if (x->d.transport == BT_IPFIX_TCP && !tcp_ready(x))
		first_err = -ENOTCONN;
	if (x->d.transport == BT_IPFIX_UDP &&
	    bt_mono_s() - x->templates_at >= x->cfg.template_refresh_s)
		x->send_templates = true;
	if (!first_err && x->send_templates)
		templates(x, &first_err);	/* failed: counted, and tried again next time */

	/* the error bounds: of the received flows' report (a dropped or sent
	 * flows' report has its own bounds, which the records, scoped by
	 * ingressInterface, cannot tell apart) */
	for (size_t i = 0; i < 2 && r->n && !dropped && !sent; i++) {
		struct error_rec e = {
			.start_ms = start_ms, .end_ms = end_ms, .domain = x->cfg.domain,
			.ifindex = ifindex, .ie = counters[i],
			.abs_error = i ? (double)r->error_packets : (double)r->error_bytes,
		};

		if (append(x, TID_ERROR, TID_ERROR, &e, sizeof(e), false, &first_err))
			return first_err;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct flow_rec rec = {
			.start_ms = start_ms, .end_ms = end_ms, .packets = f->packets,
			.l2_bytes = f->bytes, .ifindex = sent ? 0 : ifindex,
			.out_ifindex = sent ? ifindex : 0, .direction = sent,
			.sport = ntohs(f->key.sport), .dport = ntohs(f->key.dport),
			.proto = f->key.proto,
			.forwarding = dropped ? bt_forwarding_status(bt_flow_key_reason(&f->key)) : 0,
			.src_wl = wl_field(wl, f->wl[0]), .dst_wl = wl_field(wl, f->wl[1]),
		};
		/* the family: of the addresses the key mode keeps */
		bool v4 = (key_mode == BT_KEY_DST || bt_addr_is_v4(f->key.src)) &&
			  (key_mode == BT_KEY_SRC || bt_addr_is_v4(f->key.dst));

		if (v4) {
			memcpy(&rec.src4, f->key.src + 12, 4);
			memcpy(&rec.dst4, f->key.dst + 12, 4);
			rec.src4 = ntohl(rec.src4);
			rec.dst4 = ntohl(rec.dst4);
		} else {
			memcpy(rec.src6, f->key.src, 16);
			memcpy(rec.dst6, f->key.dst, 16);
		}
		if (append(x, TID_INTERNAL, dropped ? TID_DROPPED(key_mode, !v4) :
			   sent ? TID_SENT(key_mode, !v4) : TID_DATA(key_mode, !v4), &rec,
			   sizeof(rec), true, &first_err))
			return first_err;
	}
	if (r->n) {
		int err = emit(x);

		if (err && !first_err)
			first_err = err;
	}
	return first_err;
}

int bt_ipfix_finish(struct bt_ipfix *x, double timeout_s, uint64_t *unsent)
{
	double end = bt_mono_s() + timeout_s;

	while (x->fd >= 0 && !x->connecting && x->npending) {
		struct pollfd p = { .fd = x->fd, .events = POLLOUT };
		double left = end - bt_mono_s();
		int err;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) < 0)
			break;
		if ((err = flush_pending(x)) && err != -EAGAIN)
			break;
	}
	*unsent = x->nbacklog;
	close_socket(x);	/* what is left: counted as not sent */
	return 0;
}

int bt_ipfix_export_interval(struct bt_ipfix *const *x, int n, const struct bt_heavy_maps *m,
			     __u32 iv, const struct bt_threshold *thr, int *err)
{
	struct bt_heavy_report r;
	struct bt_wl_names wl;
	int rc = bt_heavy_collect(m, iv & 1, thr, false, &r);

	if (rc)
		return rc;
	bt_wl_names_open(m->inst, &wl);
	for (int i = 0; i < n; i++)
		err[i] = bt_ipfix_export(x[i], &r, m->ctl->interval_start_ns[!(iv & 1)],
					 m->inst->meta.ifindex, m->inst->meta.key_mode,
					 !m->dropped && m->counters_key == BT_DIR_EGRESS, &wl);
	bt_wl_names_close(&wl);
	bt_heavy_report_free(&r);
	return 0;
}

void bt_ipfix_stats(const struct bt_ipfix *x, struct bt_ipfix_stats *s)
{
	*s = x->st;
}

const char *bt_ipfix_name(const struct bt_ipfix *x)
{
	return x->name;
}

bool bt_ipfix_same(const struct bt_ipfix *x, const struct bt_ipfix_dest *d,
		   const struct bt_ipfix_cfg *cfg)
{
	/* field by field: a struct's padding is not its value */
	return x->d.transport == d->transport && !strcmp(x->d.host, d->host) &&
	       !strcmp(x->d.port, d->port) && x->cfg.domain == cfg->domain &&
	       x->cfg.mtu == cfg->mtu && x->cfg.template_refresh_s == cfg->template_refresh_s &&
	       x->cfg.dropped == cfg->dropped;
}
