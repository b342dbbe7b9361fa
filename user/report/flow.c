// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Flow keys for people and for JSON. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "instance/drops.h"
#include "flow.h"

const char *bt_flow_str(const struct bt_flow_key *k, char *buf, size_t len)
{
	char s[BT_ADDR_STRLEN], d[BT_ADDR_STRLEN], p[8];
	bool v6 = !bt_addr_is_v4(k->src);

	bt_addr_str(k->src, s, sizeof(s));
	bt_addr_str(k->dst, d, sizeof(d));
	char r[64] = "";
	__u32 reason = bt_flow_key_reason(k);

	/* a dropped flow's key carries the kernel's reason */
	if (reason)
		snprintf(r, sizeof(r), " %s", bt_drop_reason_name(reason, r + 1, sizeof(r) - 1));
	snprintf(buf, len, v6 ? "[%s]:%u -> [%s]:%u %s%s" : "%s:%u -> %s:%u %s%s",
		 s, ntohs(k->sport), d, ntohs(k->dport),
		 bt_proto_name(k->proto, p, sizeof(p)), r);
	return buf;
}

__u32 bt_flow_key_reason(const struct bt_flow_key *k)
{
	return k->pad[0] | (__u32)k->pad[1] << 8 | (__u32)k->pad[2] << 16;
}

void bt_flow_key_json(struct json_object *o, const struct bt_flow_key *k)
{
	char a[BT_ADDR_STRLEN];

	json_object_object_add(o, "src", json_object_new_string(bt_addr_str(k->src, a, sizeof(a))));
	json_object_object_add(o, "dst", json_object_new_string(bt_addr_str(k->dst, a, sizeof(a))));
	json_object_object_add(o, "sport", json_object_new_int(ntohs(k->sport)));
	json_object_object_add(o, "dport", json_object_new_int(ntohs(k->dport)));
	json_object_object_add(o, "proto", json_object_new_int(k->proto));
	if (bt_flow_key_reason(k)) {
		char r[64];

		json_object_object_add(o, "reason", json_object_new_string(
			bt_drop_reason_name(bt_flow_key_reason(k), r, sizeof(r))));
	}
}
