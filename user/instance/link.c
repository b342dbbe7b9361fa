// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The XDP link: attach and detach an instance's program. The link is a
 * pinned bpf_link, so the program stays attached after the tool exits and
 * nobody replaces it by accident; tap mode; a foreign program removed only
 * when asked. */
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "kernel.h"
#include "drops.h"
#include "base/options.h"
#include "watch.h"
#include "link.h"
#include "recorder.h"
#include "create.h"
#include "base/util.h"

const char *const bt_mode_names[] = { "auto", "native", "skb", NULL };
const char *const bt_attach_dir_names[] = { "ingress", "egress", "both", NULL };

/* enum bpf_attach_type's BPF_TCX_EGRESS (Linux 6.6), which the uapi
 * headers of Debian 12 (6.1) do not have */
#define BT_TCX_EGRESS 47
/* bloomtap's clsact egress filter where tcx is missing: its handle and
 * priority, which detach names it by */
#define BT_TC_HANDLE 0xb10
#define BT_TC_PRIO 0xb10

/* The XDP program attached to ifindex (any mode), 0 if none. */
static __u32 xdp_prog_on(int ifindex, char *name, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = { 0 };
	__u32 ilen = sizeof(info), id;
	int fd;

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id :
	     q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	snprintf(name, len, "?");
	if (id && (fd = bpf_prog_get_fd_by_id(id)) >= 0) {
		if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
			snprintf(name, len, "%s", info.name);
		close(fd);
	}
	return id;
}

/* --force: take whatever XDP program is on the interface off it, whether
 * it was attached through netlink or through a bpf_link of its own. */
static int xdp_remove_foreign(int ifindex)
{
	__u32 id = 0;
	int err = 0;

	if (!bpf_xdp_detach(ifindex, 0, NULL) ||
	    !bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL))
		return 0;
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_XDP && info.xdp.ifindex == (__u32)ifindex)
			err = bpf_link_detach(fd) ? -errno : 0;
		close(fd);
	}
	return err;
}

/* The largest MTU whose frames always fit one page in XDP (4096 bytes less
 * headroom and skb_shared_info), as drivers compute it. */
#define BT_LINEAR_MTU 3498

static int iface_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	if (fd >= 0)
		close(fd);
	return mtu;
}

static int link_create(int prog_fd, int ifindex, enum bt_xdp_mode mode, bool *skb)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int fd;

	*skb = mode == BT_MODE_SKB;
	lo.flags = *skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo);
	if (fd < 0 && mode == BT_MODE_AUTO && (errno == EOPNOTSUPP || errno == EINVAL)) {
		bt_info("native XDP not supported here, using skb (generic) mode");
		*skb = true;
		lo.flags = XDP_FLAGS_SKB_MODE;
		fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lo);
	}
	return fd < 0 ? -errno : fd;
}

/* A pinned link's interface: > 0, 0 when the link lives on but its
 * interface is gone, -errno (-ENOENT: no such pin). */
static int pinned_link_ifindex(const char *name, const char *pin)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	char path[256];
	int fd, err;

	if (bt_instance_path(name, pin, path, sizeof(path)))
		return -EINVAL;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -errno;
	/* a tcx link's ifindex is at xdp's place in the union (Linux 6.6's
	 * info.tcx, which Debian 12's headers do not have) */
	return info.xdp.ifindex;
}

static int tc_egress(int ifindex, int prog_fd, bool attach)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = BT_TC_HANDLE, .priority = BT_TC_PRIO);
	int err;

	if (!attach)
		return bpf_tc_detach(&hook, &o);
	/* the clsact qdisc may be there already (another tool's filters) */
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST)
		return err;
	o.prog_fd = prog_fd;
	return bpf_tc_attach(&hook, &o);
}

/* bloomtap's clsact egress filter is on ifindex */
static bool tc_egress_present(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = BT_TC_HANDLE, .priority = BT_TC_PRIO);

	return !bpf_tc_query(&hook, &o);
}

int bt_instance_link_ifindex(const char *name)
{
	struct bt_instance inst;
	int ifindex = pinned_link_ifindex(name, "link");

	if (ifindex != -ENOENT)
		return ifindex;
	if ((ifindex = pinned_link_ifindex(name, "link_egress")) != -ENOENT)
		return ifindex;
	/* attached for egress alone through a clsact filter, which has no
	 * pin: the filter on the interface attach wrote down, or 0 */
	if (bt_instance_open(name, &inst))
		return -ENOENT;
	ifindex = inst.meta.flags & BT_META_NO_INGRESS && inst.meta.flags & BT_META_EGRESS_TC ?
			  (int)inst.meta.ifindex : -ENOENT;
	bt_instance_close(&inst);
	if (ifindex > 0 && !tc_egress_present(ifindex))
		ifindex = 0;
	return ifindex;
}

/* The instance's link pins removed (XDP's, tcx egress's); an error says
 * why one stays (a read-only /sys/fs/bpf under a sandbox): a pin left
 * behind would make the next attach think the interface still had
 * bloomtap. */
static int unlink_link_pin(const char *name)
{
	char path[256];
	int err;

	bt_instance_path(name, "link_egress", path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		return -errno;
	bt_instance_path(name, "link", path, sizeof(path));
	if (!unlink(path) || errno == ENOENT)
		return 0;
	err = -errno;
	bt_err("removing the link pin %s: %s%s", path, strerror(-err),
	       err == -EROFS ? " (is /sys/fs/bpf read-only for this process, as under a "
			       "unit's ProtectKernelTunables=yes without ReadWritePaths?)" : "");
	return err;
}

/* An address of ifname the host uses (IPv4, or IPv6 other than link-local,
 * which the kernel gives every interface that is up), as text in buf:
 * false when it has none. */
static bool iface_host_address(const char *ifname, char *buf, size_t len)
{
	struct ifaddrs *all, *a;
	bool found = false;

	if (getifaddrs(&all))
		return false;
	for (a = all; a && !found; a = a->ifa_next) {
		const struct sockaddr *sa = a->ifa_addr;

		if (!sa || strcmp(a->ifa_name, ifname) ||
		    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		if (sa->sa_family == AF_INET6 &&
		    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr))
			continue;
		found = !getnameinfo(sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
								   : sizeof(struct sockaddr_in6),
				     buf, len, NULL, 0, NI_NUMERICHOST);
	}
	freeifaddrs(all);
	return found;
}

static int tap_refused(const char *ifname, bool force)
{
	char addr[NI_MAXHOST];

	if (force || !iface_host_address(ifname, addr, sizeof(addr)))
		return 0;
	bt_err("'%s' has address %s, which this host uses: tap mode drops every frame the "
	       "interface receives once recorded, so the host would lose that traffic; it is "
	       "meant for a mirror (SPAN) port without addresses: remove the address, or add "
	       "--force", ifname, addr);
	return -EADDRINUSE;
}

int bt_tap_get(const struct bt_instance *inst)
{
	struct bt_ctl c;
	__u32 zero = 0;

	return bpf_map_lookup_elem(inst->ctl_fd, &zero, &c) ? -errno : !!c.tap;
}

int bt_tap_set(const struct bt_instance *inst, const char *ifname, bool tap, bool force)
{
	struct bt_ctl *c;
	size_t len;
	int err;

	if (tap && (err = tap_refused(ifname, force)))
		return err;
	/* one word of the live ctl, through its mapping: a read-modify-write of
	 * the whole value would undo the datapath's rotations meanwhile */
	c = bt_mmap_array(inst->ctl_fd, sizeof(*c), &len);
	if (!c) {
		err = -errno;
		bt_err_errno(err, "setting tap mode");
		return err;
	}
	__atomic_store_n(&c->tap, tap, __ATOMIC_RELAXED);
	munmap(c, len);
	return 0;
}

/* The interface is bloomtap's to take: no instance linked to it, no dead
 * link pin left, and no other XDP program unless --force replaces it.
 * 0, or -errno after saying why. */
static int iface_free(const char *ifname, int ifindex, bool force, bool xdp)
{
	char other[BPF_OBJ_NAME_LEN];
	int linked, err;
	__u32 id;

	linked = bt_instance_link_ifindex(ifname);
	if (linked > 0) {
		bt_err("'%s' already has bloomtap attached (instance %s): 'bloomtap "
		       "detach %s' first", ifname, ifname, ifname);
		return -EEXIST;
	}
	/* ifindex 0: a link pin whose attachment is gone (a detach that could
	 * not unlink it, or its interface was deleted): it holds nothing */
	if (!linked && (err = unlink_link_pin(ifname)))
		return err;
	if (!xdp)	/* egress alone: the XDP hook is not bloomtap's concern */
		return 0;
	id = xdp_prog_on(ifindex, other, sizeof(other));
	/* bloomtap's own program whose pins this process cannot see: never
	 * advise --force over it, which would replace a live instance */
	if (id && !force && !strcmp(other, "bloomtap_xdp")) {
		bt_err("'%s' already runs bloomtap's program (id %u), but its pins are not "
		       "visible here%s: run bloomtap where they are, in the network namespace with "
		       "nsenter --net=/var/run/netns/NAME", ifname, id,
		       bt_private_mounts() ? " (this process has a mount namespace of its own, as "
					     "under ip netns exec)" : "");
		return -EEXIST;
	}
	if (id && !force) {
		bt_err("'%s' already runs XDP program '%s' (id %u) that is not bloomtap's: "
		       "add --force to replace it", ifname, other, id);
		return -EBUSY;
	}
	if (id) {
		bt_info("replacing XDP program '%s' (id %u) on %s (--force)", other, id, ifname);
		if ((err = xdp_remove_foreign(ifindex))) {
			bt_err_errno(err, "removing the XDP program already attached");
			return err;
		}
	}
	return 0;
}

/* A link made by bpf_link_create() (fd), pinned as the instance's pin;
 * what says which link in an error. The fd is closed either way: the pin
 * holds the link (closing the only fd detaches). */
static int pin_link(int fd, const char *name, const char *pin, const char *what)
{
	char path[256], why[64];
	int err = 0;

	bt_instance_path(name, pin, path, sizeof(path));
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		snprintf(why, sizeof(why), "pinning the %s link", what);
		bt_err_errno(err, why);
	}
	close(fd);
	return err;
}

const char *bt_attach_dir_of(const struct bt_meta *meta)
{
	return bt_attach_dir_names[!(meta->flags & BT_META_EGRESS) ? BT_ATTACH_INGRESS
				   : meta->flags & BT_META_NO_INGRESS ? BT_ATTACH_EGRESS
								     : BT_ATTACH_BOTH];
}

const char *bt_egress_hook(const struct bt_meta *meta)
{
	if (!(meta->flags & BT_META_EGRESS))
		return "-";
	return meta->flags & BT_META_EGRESS_TC ? "tc" : "tcx";
}

/* The egress program attached: a pinned tcx link (Linux 6.6), or a
 * clsact filter, which stays on the interface without a pin (*tc). */
static int egress_attach(const struct bt_instance *inst, const char *ifname, int ifindex,
			 bool *tc)
{
	int fd, err;

	if (inst->prog_egress_fd < 0) {
		bt_err("this kernel (%s) has no bpf_loop (Linux 5.17), which the egress program "
		       "needs: attach %s without --direction", bt_kernel_release(), ifname);
		return -EOPNOTSUPP;
	}
	*tc = bt_kernel_has(BT_KF_TCX) <= 0;
	if (*tc) {
		if ((err = tc_egress(ifindex, inst->prog_egress_fd, true)))
			bt_err_errno(err, err == -EEXIST ? "attaching the egress filter (a filter "
				     "of bloomtap's handle and priority, 0xb10, is there already)"
				     : "attaching the egress filter (clsact)");
		return err;
	}
	fd = bpf_link_create(inst->prog_egress_fd, ifindex, BT_TCX_EGRESS, NULL);
	if (fd < 0) {
		err = -errno;
		bt_err_errno(err, "attaching the egress program (tcx)");
		return err;
	}
	return pin_link(fd, ifname, "link_egress", "egress");
}

/* The egress program off the interface, and its pin removed */
static int egress_detach(const struct bt_instance *inst)
{
	char path[256];
	int fd, err = 0;

	if (inst->meta.flags & BT_META_EGRESS_TC) {
		err = tc_egress(inst->meta.ifindex, -1, false);
		/* the interface, or its clsact qdisc, gone with the filter */
		return err == -ENOENT || err == -ENODEV || err == -EINVAL ? 0 : err;
	}
	bt_instance_path(inst->name, "link_egress", path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_link_detach(fd) && errno != ENOLINK && errno != EINVAL)
		err = -errno;
	close(fd);
	if (!err && unlink(path) && errno != ENOENT)
		err = -errno;
	return err;
}

/* What attach made, in words (not in JSON mode). */
static void say_attached(const struct bt_instance *inst, const char *ifname, bool skb, bool tap)
{
	char desc[BT_DESCRIBE_MAX];

	const char *hook = inst->meta.flags & BT_META_EGRESS_TC ? "a clsact filter" : "a tcx link";

	if (inst->meta.flags & BT_META_NO_INGRESS)
		bt_info("attached to %s's egress (%s, no XDP program): records what it sends "
			"only, not what it receives; pinned under %s/%s", ifname, hook,
			BT_PIN_ROOT, ifname);
	else
		bt_info("attached to %s (%s mode), pinned under %s/%s", ifname,
			skb ? "skb" : "native", BT_PIN_ROOT, ifname);
	if (inst->meta.flags & BT_META_EGRESS && !(inst->meta.flags & BT_META_NO_INGRESS))
		bt_info("egress recorded too (%s): what %s sends traces as 'left here'", hook,
			ifname);
	bt_sketch_describe(&inst->meta, desc, sizeof(desc));
	bt_info("%s", desc);
	bt_spie_describe(&inst->meta, desc, sizeof(desc));
	bt_info("%s", desc);
	if (inst->meta.drop_ring)
		bt_info("drop recorder: %u slots a CPU, %u bytes of each dropped frame: %llu KiB a "
			"CPU (drops --pcap)", inst->meta.drop_ring, inst->meta.drop_head,
			(unsigned long long)bt_recorder_bytes_per_cpu(&inst->meta) / 1024);
	else
		bt_info("drop recorder: off (--drop-ring 0)");
	if (tap)
		bt_info("tap mode: every frame is recorded, then dropped before the stack "
			"(no drops to record there)");
}

/* An instance of ifname's name that is another network namespace's
 * interface's (attached there, kept by detach --keep-maps, or its interface
 * gone) is not this namespace's to attach: refused before anything of it
 * changes, saying whose it is and where to detach it. */
static int attach_elsewhere(const char *ifname)
{
	char why[BT_ELSEWHERE_LEN], where[BT_ELSEWHERE_LEN], cmd[64];

	snprintf(cmd, sizeof(cmd), "detach %s", ifname);
	if (!bt_instance_elsewhere(ifname, cmd, why, where))
		return 0;
	if (bt_instance_link_ifindex(ifname) > 0)
		bt_err("'%s' already has bloomtap attached (instance %s) in another network "
		       "namespace: the instance belongs to %s. An instance is named after its "
		       "interface, so this namespace's %s can be attached once that one is "
		       "detached; to detach it, %s", ifname, ifname, why, ifname, where);
	else
		bt_err("instance %s, not attached, belongs to %s; attaching it here would take "
		       "its counters and windows over for this namespace's %s. To remove it, %s",
		       ifname, why, ifname, where);
	return -EEXIST;
}

/* What refuses an attach before anything is loaded; the interface's index */
static int attach_refused(const char *ifname, const struct bt_attach_opts *o, int *ifindex)
{
	int err;

	*ifindex = if_nametoindex(ifname);
	if (!*ifindex) {
		bt_err_no_iface(NULL, ifname);
		return -ENODEV;
	}
	if (bt_instance_name_check(ifname)) {
		bt_err("interface name '%s' cannot name an instance", ifname);
		return -EINVAL;
	}
	if (o->tap && o->dir == BT_ATTACH_EGRESS) {
		bt_err("tap mode drops what %s receives: it needs the ingress direction", ifname);
		return -EINVAL;
	}
	if (o->tap && (err = tap_refused(ifname, o->force)))
		return err;
	if ((err = bt_ensure_bpffs()) || (err = attach_elsewhere(ifname)))
		return err;
	return iface_free(ifname, *ifindex, o->force, o->dir != BT_ATTACH_EGRESS);
}

/* Past one page, frames come in several buffers: the program must say it
 * takes them, and then pays for asking the frame's length. */
static int program_for_mtu(const struct bt_instance *inst, const char *ifname)
{
	int mtu = iface_mtu(ifname), prog = mtu > BT_LINEAR_MTU ? inst->prog_mb_fd : inst->prog_fd;

	if (prog < 0) {
		bt_err("%s has MTU %d, above what a linear XDP frame holds (%d), and this kernel "
		       "(%s) has no multi-buffer XDP (Linux 5.18): lower the MTU to attach",
		       ifname, mtu, BT_LINEAR_MTU, bt_kernel_release());
		return -EOPNOTSUPP;
	}
	if (prog == inst->prog_mb_fd)
		bt_info("%s has MTU %d: attaching the multi-buffer program", ifname, mtu);
	return prog;
}

/* The XDP link made and pinned in the instance's directory */
static int link_pinned(int prog, const char *ifname, int ifindex, enum bt_xdp_mode mode, bool *skb)
{
	int link_fd;

	link_fd = link_create(prog, ifindex, mode, skb);
	if (link_fd < 0) {
		if (link_fd == -EBUSY || link_fd == -EEXIST)
			bt_err("'%s' got another XDP program meanwhile: try again, with --force "
			       "to replace it", ifname);
		else
			bt_err_errno(link_fd, "attaching XDP");
		return link_fd;
	}
	return pin_link(link_fd, ifname, "link", "XDP");
}

/* An instance kept by 'detach --keep-maps' from an ingress attach has no
 * egress maps to count in */
static int egress_refused(const struct bt_instance *inst, const char *ifname,
			  const struct bt_attach_opts *o)
{
	if (o->dir == BT_ATTACH_INGRESS || inst->meta.flags & BT_META_EGRESS_MAPS)
		return 0;
	bt_err("instance %s was made to record ingress only (it was kept by 'detach "
	       "--keep-maps'): 'bloomtap detach %s' to remove it, then attach with "
	       "--direction %s", ifname, ifname, bt_attach_dir_names[o->dir]);
	return -EINVAL;
}

/* An instance kept by 'detach --keep-maps' has the sizes and thresholds
 * it was made with (its maps are those sizes): an option that asks others
 * is refused, never ignored. Options left out take the kept values. */
static int kept_sizes_refused(const struct bt_instance *inst, const char *ifname,
			      const struct bt_attach_opts *o)
{
	char buf[512];

	if (!bt_kept_sizes_differ(&inst->meta, o->sketch, o->spie, buf, sizeof(buf)))
		return 0;
	bt_err("instance %s was kept by 'detach --keep-maps' with the sizes it was made with, "
	       "which its maps have: %s. Attach without these options to go on with its "
	       "counters and windows, or 'bloomtap detach %s' first to make it anew with them",
	       ifname, buf, ifname);
	return -EINVAL;
}

/* The XDP program on the interface (unless egress alone), then the egress
 * program (unless ingress alone); *skb and *tc say how */
static int attach_hooks(const struct bt_instance *inst, const char *ifname, int ifindex,
			const struct bt_attach_opts *o, bool *skb, bool *tc)
{
	int prog, err;

	*skb = *tc = false;
	if (o->dir != BT_ATTACH_EGRESS) {
		prog = program_for_mtu(inst, ifname);
		if (prog < 0)
			return prog;
		/* the mode before the link: no frame passes that tap mode should drop */
		if ((err = bt_tap_set(inst, ifname, o->tap, true)) ||
		    (err = link_pinned(prog, ifname, ifindex, o->mode, skb)))
			return err;
	}
	if (o->dir != BT_ATTACH_INGRESS)
		return egress_attach(inst, ifname, ifindex, tc);
	return 0;
}

int bt_attach(const char *ifname, const struct bt_attach_opts *o)
{
	struct bt_instance_cfg cfg = { .ifname = ifname, .flags = BT_META_ATTACHED };
	struct bt_instance inst;
	int ifindex, err;
	bool created = false, skb, tc;
	__u32 zero = 0;

	if ((err = attach_refused(ifname, o, &ifindex)))
		return err;
	/* An instance kept by 'detach --keep-maps' is attached again with its
	 * counters; otherwise a fresh one is loaded. */
	if (o->sketch)
		cfg.sketch = *o->sketch;
	if (o->spie)
		cfg.spie = *o->spie;
	if (o->dir != BT_ATTACH_INGRESS)
		cfg.flags |= BT_META_EGRESS_MAPS;
	cfg.drop_ring = o->drop_ring_set ? o->drop_ring : BT_DROP_RING_DEFAULT;
	cfg.drop_head = o->drop_head;
	if ((err = bt_instance_open_or_create(ifname, &cfg, &inst, &created)))
		return err;
	if ((err = egress_refused(&inst, ifname, o)) ||
	    (!created && (err = kept_sizes_refused(&inst, ifname, o))))
		goto out;
	if ((err = attach_hooks(&inst, ifname, ifindex, o, &skb, &tc))) {
		bt_detach(ifname, !created);	/* what was attached before the failure */
		bt_instance_close(&inst);
		return err;
	}

	inst.meta.ifindex = ifindex;
	inst.meta.netns = bt_netns_self();
	inst.meta.flags = (inst.meta.flags & ~(BT_META_SKB_MODE | BT_META_EGRESS | BT_META_EGRESS_TC |
					       BT_META_NO_INGRESS)) |
			  BT_META_ATTACHED | (skb ? BT_META_SKB_MODE : 0) |
			  (o->dir != BT_ATTACH_INGRESS ? BT_META_EGRESS : 0) |
			  (tc ? BT_META_EGRESS_TC : 0) |
			  (o->dir == BT_ATTACH_EGRESS ? BT_META_NO_INGRESS : 0);
	snprintf(inst.meta.ifname, sizeof(inst.meta.ifname), "%s", ifname);
	bpf_map_update_elem(inst.meta_fd, &zero, &inst.meta, 0);
	/* tap mode: no frame reaches the stack, so none can be dropped there */
	if (!o->tap && (err = bt_drops_register(&inst, o->drop_suppress))) {
		bt_detach(ifname, !created);
		bt_instance_close(&inst);
		return err;
	}
	if (!bt_g.json)
		say_attached(&inst, ifname, skb, o->tap);
	bt_instance_close(&inst);
	return 0;
out:
	bt_instance_close(&inst);
	if (created)
		bt_instance_remove(ifname);
	return err;
}

int bt_detach(const char *name, bool keep_maps)
{
	struct bt_instance inst;
	char path[256];
	int fd, err = 0;

	if (!bt_instance_exists(name)) {
		if (bt_pins_visible())
			return -EXDEV;
		bt_err("no bloomtap instance '%s' (see 'bloomtap status')", name);
		return -ENOENT;
	}
	if (!bt_instance_open(name, &inst)) {
		bt_drops_unregister(&inst);
		err = egress_detach(&inst);
		bt_instance_close(&inst);
		if (err) {
			bt_err_errno(err, "detaching the egress program");
			return err;
		}
	} else {
		/* another bloomtap's instance: its drop program out of the host's
		 * table by its pin alone (the table's reference would keep it
		 * running, and its maps, the SPIE ring among them, in memory) */
		bt_instance_path(name, "prog_drop", path, sizeof(path));
		inst.prog_drop_fd = bpf_obj_get(path);
		if (inst.prog_drop_fd >= 0) {
			bt_drops_unregister(&inst);
			close(inst.prog_drop_fd);
		}
	}
	bt_instance_path(name, "link", path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		/* ENOLINK: the interface went away and took the attachment */
		if (bpf_link_detach(fd) && errno != ENOLINK && errno != EINVAL)
			err = -errno;
		close(fd);
		if (err) {
			bt_err_errno(err, "detaching XDP");
			return err;
		}
		if ((err = unlink_link_pin(name)))
			return err;
	}
	if (!keep_maps && (err = bt_instance_remove(name))) {
		bt_err("removing the pins under %s/%s: %s", BT_PIN_ROOT, name, strerror(-err));
		return err;
	}
	return 0;
}
