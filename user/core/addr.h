/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Addresses and protocol numbers for people (addr.c). */
#ifndef BLOOMTAP_ADDR_H
#define BLOOMTAP_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define BT_ADDR_STRLEN 46	/* INET6_ADDRSTRLEN */

/* IPv4-mapped addresses print as dotted quads, the rest as IPv6. */
const char *bt_addr_str(const __u8 addr[16], char *buf, size_t len);
/* An IPv4 address, stored v4-mapped (::ffff:a.b.c.d)? */
bool bt_addr_is_v4(const __u8 addr[16]);
/* "tcp", "udp", ... or the number. */
const char *bt_proto_name(__u8 proto, char *buf, size_t len);

#endif /* BLOOMTAP_ADDR_H */
