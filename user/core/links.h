/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The current network namespace's links and how they stack: which devices
 * a packet received on an interface goes on to be received by again (a
 * bridge's local delivery, a VLAN sub-interface, a bond's master, a
 * macvlan or ipvlan). Read by rtnetlink, which answers for the calling
 * thread's namespace; sysfs answers for the namespace it was mounted in. */
#ifndef BLOOMTAP_LINKS_H
#define BLOOMTAP_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct bt_link {
	__u32 ifindex;
	__u32 master;		/* IFLA_MASTER: bridge, bond, team, VRF; 0 none */
	__u32 lower;		/* IFLA_LINK of a device stacked on one in the
				 * same namespace (vlan, macvlan, macvtap,
				 * ipvlan, ipvtap); 0 for any other kind */
	char name[16];
	char kind[16];		/* IFLA_INFO_KIND, "" for a plain device */
	__u32 mode;		/* IFLA_MACVLAN_MODE (macvlan, macvtap; 0 not
				 * reported) or IFLA_IPVLAN_MODE (ipvlan,
				 * ipvtap; 0 is l2) */
	__u16 flags;		/* IFLA_IPVLAN_FLAGS: IPVLAN_F_PRIVATE, _VEPA */
};

/* Every link of the current network namespace into *out (malloc'd, the
 * caller frees). Returns the count, or -errno. */
int bt_links_dump(struct bt_link **out);

/* The devices stacked above ifindex, directly or not, into ups (at most
 * max, by index into links); returns how many. */
size_t bt_links_uppers(const struct bt_link *links, size_t n, __u32 ifindex,
		       size_t *ups, size_t max);

/* Does links[j] receive only what its lowers received first, each of them
 * tagged as it is (tag[k] == tag[j], tag by index into links)? Not when a
 * lower has another tag (a bridge's other port, a bond's other slave),
 * nor for a macvlan or ipvlan in a mode that takes its siblings' packets
 * without the lower's receive (macvlan's bridge mode; ipvlan's l2 mode,
 * and l3 and l3s unless private or vepa), whether or not a sibling is in
 * this namespace. */
bool bt_links_only_from(const struct bt_link *links, size_t n, size_t j, const __u32 *tag);

#endif
