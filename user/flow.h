/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Flow keys for people and for JSON. */
#ifndef BLOOMTAP_FLOW_H
#define BLOOMTAP_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <json-c/json.h>
#include "bloomtap.h"

#define BT_ADDR_STRLEN 46	/* INET6_ADDRSTRLEN */

/* IPv4-mapped addresses print as dotted quads, the rest as IPv6. */
const char *bt_addr_str(const __u8 addr[16], char *buf, size_t len);
/* An IPv4 address, stored v4-mapped (::ffff:a.b.c.d)? */
bool bt_addr_is_v4(const __u8 addr[16]);
/* "tcp", "udp", ... or the number. */
const char *bt_proto_name(__u8 proto, char *buf, size_t len);
/* "src:sport -> dst:dport proto" ([addr]:port for IPv6). */
/* A dropped flow's reason (its key's pad bytes, include/bloomtap.h
 * "Drops"); 0 for a flow the XDP program counted. */
__u32 bt_flow_key_reason(const struct bt_flow_key *k);
const char *bt_flow_str(const struct bt_flow_key *k, char *buf, size_t len);
/* Adds src, dst, sport, dport, proto to a JSON object. */
void bt_flow_key_json(struct json_object *o, const struct bt_flow_key *k);

#endif /* BLOOMTAP_FLOW_H */
