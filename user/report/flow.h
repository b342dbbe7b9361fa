/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Flow keys for people and for JSON. */
#ifndef BLOOMTAP_FLOW_H
#define BLOOMTAP_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <json-c/json.h>
#include "bloomtap.h"
#include "core/addr.h"

/* A dropped flow's reason (its key's pad bytes, include/bloomtap.h
 * "Drops"); 0 for a flow the XDP program counted. */
__u32 bt_flow_key_reason(const struct bt_flow_key *k);
/* "src:sport -> dst:dport proto" ([addr]:port for IPv6). */
const char *bt_flow_str(const struct bt_flow_key *k, char *buf, size_t len);
/* Adds src, dst, sport, dport, proto to a JSON object. */
void bt_flow_key_json(struct json_object *o, const struct bt_flow_key *k);

#endif /* BLOOMTAP_FLOW_H */
