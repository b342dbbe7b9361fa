// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Addresses as the datapath stores them (IPv4 v4-mapped), and protocol
 * numbers, for people. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "addr.h"

static const __u8 v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

bool bt_addr_is_v4(const __u8 addr[16])
{
	return !memcmp(addr, v4mapped_prefix, sizeof(v4mapped_prefix));
}

const char *bt_addr_str(const __u8 addr[16], char *buf, size_t len)
{
	if (bt_addr_is_v4(addr))
		inet_ntop(AF_INET, addr + 12, buf, len);
	else
		inet_ntop(AF_INET6, addr, buf, len);
	return buf;
}

const char *bt_proto_name(__u8 proto, char *buf, size_t len)
{
	switch (proto) {
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 58: return "icmpv6";
	case 132: return "sctp";
	}
	snprintf(buf, len, "%u", proto);
	return buf;
}
