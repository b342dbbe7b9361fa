// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The namespace's links by an RTM_GETLINK dump (see links.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include "links.h"

/* Kinds whose IFLA_LINK is the device they receive from; a veth's names
 * its peer, a tunnel's its underlay (whose packets are not the ones it
 * delivers), so those are not stacked. */
static bool stacked_kind(const char *kind)
{
	static const char *const kinds[] = { "vlan", "macvlan", "macvtap", "ipvlan", "ipvtap" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/* Does a macvlan or ipvlan take packets from its siblings on one lower
 * without the lower's receive, wherever those siblings are (another
 * namespace's are not in this one's dump)? drivers/net/macvlan.c
 * macvlan_queue_xmit: a macvlan in bridge mode hands a sibling in bridge
 * mode its frames directly; in private, vepa, passthru and source mode
 * every frame goes out through the lower (vepa's come back from the
 * switch through the lower's receive, which the instance sees).
 * drivers/net/ipvlan/ipvlan_core.c ipvlan_xmit_mode_l2, _l3: an ipvlan
 * hands a sibling what is addressed to it, in l2, l3 and l3s mode alike,
 * unless the port is private (consumed) or vepa (sent out); in l2 mode
 * its multicast goes to the siblings whatever the flags. A mode the
 * kernel did not report counts as passing. */
static bool from_siblings(const struct bt_link *l)
{
	if (strstr(l->kind, "macv") == l->kind)
		return !l->mode || l->mode == MACVLAN_MODE_BRIDGE;
	if (strstr(l->kind, "ipv") == l->kind)
		return l->mode == IPVLAN_MODE_L2 ||
		       !(l->flags & (IPVLAN_F_PRIVATE | IPVLAN_F_VEPA));
	return false;
}

/* IFLA_INFO_DATA's mode (and ipvlan's flags) of a macvlan or ipvlan */
static void parse_mode(struct rtattr *data, struct bt_link *l)
{
	bool macv = strstr(l->kind, "macv") == l->kind, ipv = strstr(l->kind, "ipv") == l->kind;
	int len = RTA_PAYLOAD(data);

	for (struct rtattr *a = RTA_DATA(data); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (macv && a->rta_type == IFLA_MACVLAN_MODE && RTA_PAYLOAD(a) >= sizeof(__u32))
			l->mode = *(__u32 *)RTA_DATA(a);
		else if (ipv && a->rta_type == IFLA_IPVLAN_MODE && RTA_PAYLOAD(a) >= sizeof(__u16))
			l->mode = *(__u16 *)RTA_DATA(a);
		else if (ipv && a->rta_type == IFLA_IPVLAN_FLAGS && RTA_PAYLOAD(a) >= sizeof(__u16))
			l->flags = *(__u16 *)RTA_DATA(a);
	}
}

static void parse_link(struct nlmsghdr *h, struct bt_link *l)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));
	struct rtattr *data = NULL;
	bool other_ns = false;
	__u32 link = 0;

	memset(l, 0, sizeof(*l));
	l->ifindex = ifi->ifi_index;
	for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case IFLA_IFNAME:
			strncpy(l->name, RTA_DATA(a), sizeof(l->name) - 1);
			break;
		case IFLA_MASTER:
			l->master = *(__u32 *)RTA_DATA(a);
			break;
		case IFLA_LINK:
			link = *(__u32 *)RTA_DATA(a);
			break;
		case IFLA_LINK_NETNSID:
			other_ns = true;
			break;
		case IFLA_LINKINFO: {
			int ilen = RTA_PAYLOAD(a);

			for (struct rtattr *i = RTA_DATA(a); RTA_OK(i, ilen); i = RTA_NEXT(i, ilen))
				if (i->rta_type == IFLA_INFO_KIND)
					strncpy(l->kind, RTA_DATA(i), sizeof(l->kind) - 1);
				else if (i->rta_type == IFLA_INFO_DATA)
					data = i;
			break;
		}
		}
	}
	if (!other_ns && link != l->ifindex && stacked_kind(l->kind))
		l->lower = link;
	if (data)	/* the kind may come after it */
		parse_mode(data, l);
}

int bt_links_dump(struct bt_link **out)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg ifi;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC },
	};
	struct bt_link *links = NULL;
	size_t n = 0, cap = 0;
	char buf[32768];
	int fd, err = 0;
	bool done = false;

	*out = NULL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		err = -errno;
		goto out;
	}
	while (!done && !err) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				err = e->error ? e->error : -EPROTO;
				break;
			}
			if (h->nlmsg_type != RTM_NEWLINK)
				continue;
			if (n == cap) {
				struct bt_link *more = realloc(links, (cap = cap ? cap * 2 : 32) * sizeof(*links));

				if (!more) {
					err = -ENOMEM;
					break;
				}
				links = more;
			}
			parse_link(h, &links[n++]);
		}
	}
out:
	close(fd);
	if (err) {
		free(links);
		return err;
	}
	*out = links;
	return (int)n;
}

/* The links received again on top of links[i]: its master, and those
 * whose lower it is. */
static bool stacked_on(const struct bt_link *up, const struct bt_link *low)
{
	return low->master == up->ifindex || up->lower == low->ifindex;
}

size_t bt_links_uppers(const struct bt_link *links, size_t n, __u32 ifindex,
		       size_t *ups, size_t max)
{
	size_t found = 0, next = 0;
	size_t self = n;

	for (size_t i = 0; i < n; i++)
		if (links[i].ifindex == ifindex)
			self = i;
	if (self == n)
		return 0;
	/* breadth first from ifindex; ups doubles as the queue */
	for (size_t cur = self;; cur = ups[next++]) {
		for (size_t j = 0; j < n && found < max; j++) {
			bool seen = j == self;

			for (size_t k = 0; k < found && !seen; k++)
				seen = ups[k] == j;
			if (!seen && stacked_on(&links[j], &links[cur]))
				ups[found++] = j;
		}
		if (next == found)
			break;
	}
	return found;
}

bool bt_links_only_from(const struct bt_link *links, size_t n, size_t j, const __u32 *tag)
{
	const struct bt_link *up = &links[j];

	if (up->lower && from_siblings(up))
		return false;
	for (size_t k = 0; k < n; k++)
		if (k != j && stacked_on(up, &links[k]) && tag[k] != tag[j])
			return false;
	return true;
}
