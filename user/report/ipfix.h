/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* IPFIX export (RFC 7011) of heavy flows, encoded by libfixbuf into one
 * message at a time and sent by bloomtap itself, without blocking: UDP or
 * TCP to a collector, or a file. README "IPFIX" has the records. */
#ifndef BLOOMTAP_IPFIX_H
#define BLOOMTAP_IPFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "instance/sketch.h"

#define BT_IPFIX_MAX_DEST 4
#define BT_IPFIX_DEFAULT_PORT "4739"	/* IANA's for IPFIX */

enum bt_ipfix_transport { BT_IPFIX_UDP, BT_IPFIX_TCP, BT_IPFIX_FILE };

struct bt_ipfix_dest {
	enum bt_ipfix_transport transport;
	char host[256], port[16];	/* or host: the file's path */
};

struct bt_ipfix_cfg {
	uint32_t domain;		/* observation domain id */
	uint32_t mtu;			/* path MTU: messages fit in one datagram */
	double template_refresh_s;	/* UDP: templates again this often */
	bool dropped;			/* the agent: the heavy dropped flows too
					 * (forwardingStatus Dropped) */
};

#define BT_IPFIX_CFG_DEFAULTS { .domain = 1, .mtu = 1500, .template_refresh_s = 60 }

/* "[udp:|tcp:]HOST[:PORT]" (an IPv6 host in brackets) into d; a list is
 * comma-separated. 0, or -EINVAL with the reason in err. */
int bt_ipfix_parse_dest(const char *s, struct bt_ipfix_dest *d, char *err, size_t len);
int bt_ipfix_parse_list(const char *s, struct bt_ipfix_dest *d, int *n, char *err, size_t len);

struct bt_ipfix;

/* An exporter to d. Nothing is sent, and no connection made, until the
 * first export; a destination that cannot be resolved is an error here. */
struct bt_ipfix *bt_ipfix_open(const struct bt_ipfix_dest *d, const struct bt_ipfix_cfg *cfg,
			       char *err, size_t len);
void bt_ipfix_close(struct bt_ipfix *x);
/* Before a close: TCP's backlog sent for at most timeout_s seconds; what
 * is still owed then is counted as not sent (*unsent messages) and the
 * connection closed. */
int bt_ipfix_finish(struct bt_ipfix *x, double timeout_s, uint64_t *unsent);

/* An interval's heavy flows: r's flows (key mode key_mode), the interval
 * [r->start_ns, end_ns) (CLOCK_REALTIME), received on ifindex (ingressInterface,
 * flowDirection 0), or sent there (egressInterface, flowDirection 1), their
 * workloads named by wl (NULL: none). Never blocks: a
 * message the socket does not take now is dropped and counted. 0 when all
 * went out, else -errno of the first failure (counted, and logged by the
 * caller). */
struct bt_wl_names;
int bt_ipfix_export(struct bt_ipfix *x, const struct bt_heavy_report *r, uint64_t end_ns,
		    uint32_t ifindex, int key_mode, bool sent, const struct bt_wl_names *wl);

/* Interval iv of m, just ended (its end is the next one's start): its
 * heavy flows at thr (NULL: the instance's threshold), collected once and
 * out to each of the n exporters as above, err[i] what exporter i gave.
 * 0, or -errno when the flows could not be collected (nothing sent). */
int bt_ipfix_export_interval(struct bt_ipfix *const *x, int n, const struct bt_heavy_maps *m,
			     __u32 iv, const struct bt_threshold *thr, int *err);

/* Messages, and the records in them, that reached the socket (or the
 * file) whole; messages that did not, whatever the cause. */
struct bt_ipfix_stats {
	uint64_t messages, records, errors;
};
void bt_ipfix_stats(const struct bt_ipfix *x, struct bt_ipfix_stats *s);
const char *bt_ipfix_name(const struct bt_ipfix *x);
/* Whether x exports to d with cfg: a reload keeps it, with its session,
 * its connection and its counters. */
bool bt_ipfix_same(const struct bt_ipfix *x, const struct bt_ipfix_dest *d,
		   const struct bt_ipfix_cfg *cfg);

/* RFC 7270 forwardingStatus of a dropped flow: Dropped, with the reason
 * code closest to the kernel's drop reason (128: unknown). */
uint8_t bt_forwarding_status(__u32 reason);

#endif /* BLOOMTAP_IPFIX_H */
