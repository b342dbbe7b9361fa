// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Drops: the host's drop program's life, suppression, counts. See
 * drops.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "drops.h"
#include "instance.h"
#include "kernel.h"
#include "core/links.h"
#include "core/workloads.h"
#include "drops_host.skel.h"

const char *const bt_drop_counter_names[BT_DROP_CTR_MAX] = {
	[BT_DROP_DIGESTED] = "digested",
	[BT_DROP_SUPPRESSED] = "suppressed",
	[BT_DROP_NO_NETWORK] = "no_network_header",
	[BT_DROP_NOT_IP] = "not_ip",
	[BT_DROP_NONLINEAR] = "nonlinear",
	[BT_DROP_SEGS_CAPPED] = "segments_capped",
	[BT_DROP_GSO_NOT_TCP] = "gso_not_tcp",
	[BT_DROP_GRO_SKBS] = "gro_skbs",
	[BT_DROP_DELIVERED_FREED] = "delivered_then_freed",
	[BT_DROP_SHARED_NOT_SEEN] = "shared_not_seen",
	[BT_DROP_WORKLOAD_NOT_SEEN] = "workload_not_seen",
};

bool bt_drops_supported(void)
{
	return bt_kernel_has(BT_KF_DROP_REASONS) > 0;	/* read from the BTF: both or neither */
}

/* ---- suppression ---- */

static int suppress_one(const char *name, bool quiet_unknown, __u64 *bits)
{
	bool off = name[0] == '-';
	__u32 code;

	if (off || name[0] == '+')
		name++;
	if (!*name)
		return 0;
	if (bt_drop_reason_code(name, &code) || code >= BT_DROP_REASONS) {
		if (quiet_unknown)
			return 0;
		bt_err("drop reason '%s' is not one of this kernel's (see 'bloomtap drops "
		       "--reasons')", name);
		return -EINVAL;
	}
	if (off)
		bits[code / 64] &= ~(1ULL << (code % 64));
	else
		bits[code / 64] |= 1ULL << (code % 64);
	return 0;
}

static int suppress_list(const char *list, bool quiet_unknown, __u64 *bits)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!strcmp(tok, "default"))
			err = suppress_list(BT_DROPS_SUPPRESS_DEFAULT, true, bits);
		else if (!strcmp(tok, "none"))
			memset(bits, 0, BT_DROP_REASONS / 8);
		else
			err = suppress_one(tok, quiet_unknown, bits);
	}
	free(copy);
	return err;
}

int bt_drops_parse_suppress(const char *list, __u64 bits[BT_DROP_REASONS / 64])
{
	int n;

	memset(bits, 0, BT_DROP_REASONS / 8);
	if (!bt_drop_reasons(&n)) {
		bt_err("cannot read the kernel's drop reasons from %s", bt_drop_reasons_btf());
		return -ENOENT;
	}
	return suppress_list(list ? list : "default", false, bits);
}

int bt_drops_set_suppress(const struct bt_instance *inst, const __u64 bits[BT_DROP_REASONS / 64])
{
	__u32 zero = 0;

	return bpf_map_update_elem(inst->drop_suppress_fd, &zero, bits, 0) ? -errno : 0;
}

/* ---- the host's program ---- */

/* Attach and detach of any instance take this, so that the first loads
 * the host's program and the last removes it, once; -EWOULDBLOCK when it
 * is held and wait is false. */
static int lock_root(bool wait)
{
	int fd = open(BT_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

struct host {
	int owners_fd, progs_fd;
};

/* The host's pins; -ENOENT only when neither is there (no host program
 * yet): any other error (EACCES on pins root made in a directory the
 * agent's user owns) is the caller's to report, never a reason to load a
 * second program. */
static int host_open(struct host *h)
{
	int err;

	h->owners_fd = bpf_obj_get(BT_DROPS_DIR "/drop_owners");
	err = h->owners_fd < 0 ? -errno : 0;
	h->progs_fd = bpf_obj_get(BT_DROPS_DIR "/drop_progs");
	if (!err && h->progs_fd < 0)
		err = -errno;
	if (!err)
		return 0;
	if (h->owners_fd >= 0)
		close(h->owners_fd);
	if (h->progs_fd >= 0)
		close(h->progs_fd);
	return err;
}

static void host_close(struct host *h)
{
	close(h->owners_fd);
	close(h->progs_fd);
}

static const char *const host_pins[] = { "link", "drop_owners", "drop_progs", "drop_host",
					  "drop_host_subsys" };

/* Unlinks the host's pins (those of mask, by host_pins' index), the
 * link's first: its last reference detaches the program. */
static void host_unpin(unsigned int mask)
{
	char path[256];

	for (size_t i = 0; i < sizeof(host_pins) / sizeof(host_pins[0]); i++) {
		if (!(mask & 1u << i))
			continue;
		snprintf(path, sizeof(path), BT_DROPS_DIR "/%s", host_pins[i]);
		unlink(path);
	}
}

/* Every pin in the host's directory, whatever its name, the link's first:
 * a bloomtap of another version may have pinned names this one does not
 * know (0.2 did not know drop_host_subsys, and removing the host left it
 * behind, which then stopped every later load with EEXIST). Under the
 * root lock, with the host's owners and programs pins gone. */
static void host_sweep(void)
{
	DIR *d;
	struct dirent *e;
	char path[512];

	host_unpin(1u);		/* the link: detaches the program */
	if (!(d = opendir(BT_DROPS_DIR)))
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), BT_DROPS_DIR "/%s", e->d_name);
		unlink(path);
	}
	closedir(d);
}

static void host_remove(void)
{
	host_sweep();
	rmdir(BT_DROPS_DIR);
}

int bt_drops_host_verify(struct json_object *arr)
{
	struct drops_host_bpf *skel = drops_host_bpf__open();
	struct bt_verifier_logs *logs;
	int err;

	if (!skel) {
		err = -errno;
		bt_err_errno(err, "opening the host's drop program");
		return err;
	}
	logs = bt_verifier_logs_attach(skel->obj);
	if ((err = drops_host_bpf__load(skel)))
		bt_err_errno(err, "loading the host's drop program");
	bt_verifier_logs_read(logs, arr);
	drops_host_bpf__destroy(skel);
	return err;
}

static int host_load(void)
{
	struct drops_host_bpf *skel = drops_host_bpf__open_and_load();
	struct bpf_link *link;
	unsigned int pinned = 0;
	int err = 0;

	if (!skel) {
		err = -errno;
		bt_err_errno(err, "loading the host's drop program");
		return err;
	}
	link = bpf_program__attach(skel->progs.bloomtap_drops);
	if (!link) {
		err = -errno;
		bt_err_errno(err, "attaching the drop program to tp_btf/kfree_skb");
		goto out;
	}
	if (mkdir(BT_DROPS_DIR, 0700) && errno != EEXIST) {
		err = -errno;
		bt_err_errno(err, "making " BT_DROPS_DIR);
		goto out;
	}
	/* the maps, then the link (host_pins' order, shifted by one); on a
	 * failure only what this call pinned is unlinked: a pin that was
	 * there already (EEXIST) is another program's */
	for (size_t j = 1; j <= sizeof(host_pins) / sizeof(host_pins[0]) && !err; j++) {
		size_t i = j % (sizeof(host_pins) / sizeof(host_pins[0]));
		struct bpf_map *m[] = { NULL, skel->maps.drop_owners, skel->maps.drop_progs,
					skel->maps.drop_host, skel->maps.drop_host_subsys };
		char path[256];

		snprintf(path, sizeof(path), BT_DROPS_DIR "/%s", host_pins[i]);
		err = i ? bpf_map__pin(m[i], path) : bpf_link__pin(link, path);
		if (err) {
			bt_err("pinning the drop program at %s: %s", path, strerror(-err));
			host_unpin(pinned);
		} else {
			pinned |= 1u << i;
		}
	}
out:
	bpf_link__destroy(link);	/* the pin keeps it attached */
	drops_host_bpf__destroy(skel);
	return err;
}

static __u32 prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

/* The slot that holds prog (an id), -1 for none. */
static int slot_of(const struct host *h, __u32 prog)
{
	for (__u32 s = 0; s < BT_DROP_SLOTS; s++) {
		__u32 id;

		if (!bpf_map_lookup_elem(h->progs_fd, &s, &id) && id == prog)
			return s;
	}
	return -1;
}

static int netns_inode(__u32 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = (__u32)st.st_ino;
	return 0;
}

/* Owner entries pointing at slot s go: its own (one, but a re-attach in
 * another namespace leaves the old one) and its stacked devices'. */
static void forget_slot(const struct host *h, __u32 s)
{
	struct bt_drop_owner key, next, *prev = NULL;
	__u32 v;

	while (!bpf_map_get_next_key(h->owners_fd, prev, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(h->owners_fd, &key, &v) && (v & BT_DROP_SLOT_MASK) == s) {
			bpf_map_delete_elem(h->owners_fd, &key);
			prev = NULL;	/* start again: the order changed */
			continue;
		}
		prev = &key;
	}
}

static bool owners_empty(const struct host *h)
{
	struct bt_drop_owner next;

	return bpf_map_get_next_key(h->owners_fd, NULL, &next) != 0;
}

/* The instance's map called name, found from its drop program in slot s
 * (a prog array answers user space with the program's id): an fd, or
 * -errno. */
static int slot_map(const struct host *h, __u32 s, const char *name)
{
	__u32 id, ids[64], len = sizeof(struct bpf_prog_info);
	struct bpf_prog_info info = { .nr_map_ids = 64, .map_ids = (__u64)(uintptr_t)ids };
	int pfd, fd = -ENOENT;

	if (bpf_map_lookup_elem(h->progs_fd, &s, &id) || (pfd = bpf_prog_get_fd_by_id(id)) < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len))
		info.nr_map_ids = 0;
	for (__u32 i = 0; i < info.nr_map_ids && i < 64 && fd < 0; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int m = bpf_map_get_fd_by_id(ids[i]);

		if (m >= 0 && !bpf_obj_get_info_by_fd(m, &mi, &mlen) && !strcmp(mi.name, name))
			fd = m;
		else if (m >= 0)
			close(m);
	}
	close(pfd);
	return fd;
}

/* Slot s's drop_shared: an fd, or -errno; -EPROTO for an instance of
 * another build whose keys are not struct bt_drop_owner (its entries are
 * never read into one). */
static int shared_map(const struct host *h, __u32 s)
{
	struct bpf_map_info mi = { 0 };
	__u32 len = sizeof(mi);
	int fd = slot_map(h, s, "drop_shared");

	if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &mi, &len) ||
			mi.key_size != sizeof(struct bt_drop_owner))) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

/* Slot s's drop_shared (fd) made the devices of namespace ns in want that
 * have s | BT_DROP_UPPER | BT_DROP_DIGEST: added (add) or the others of
 * ns removed (those of other namespaces are the workloads'). */
static void sync_shared(int fd, __u32 s, __u32 ns, const struct bt_link *links, int n,
			const __u32 *want, bool add)
{
	struct bt_drop_owner key, next, *prev = NULL;
	__u32 one = BT_SHARED_UPPER, v = s | BT_DROP_UPPER | BT_DROP_DIGEST;

	if (fd < 0)
		return;
	for (int j = 0; add && j < n; j++) {
		key = (struct bt_drop_owner){ .netns = ns, .ifindex = links[j].ifindex };
		if (want[j] == v)
			bpf_map_update_elem(fd, &key, &one, 0);
	}
	while (!add && !bpf_map_get_next_key(fd, prev, &next)) {
		bool kept;

		key = next;
		kept = key.netns != ns;
		for (int j = 0; j < n && !kept; j++)
			kept = links[j].ifindex == key.ifindex && want[j] == v;
		if (!kept && !bpf_map_delete_elem(fd, &key)) {
			prev = NULL;	/* start again: the order changed */
			continue;
		}
		prev = &key;
	}
}

/* The stacked devices' entries of namespace ns, made again from its links
 * and its instances' own entries: a device stacked on one instance's
 * interface gets that instance's slot | BT_DROP_UPPER when all it
 * receives came through that interface (bt_links_only_from, through any
 * depth), with BT_DROP_DIGEST too when it also receives from elsewhere;
 * one stacked on several instances' BT_DROP_SHARED, one with an instance
 * of its own keeps it. New entries are written before stale ones go, so a
 * drop in between finds one or the other; a device's drop_shared entry is
 * there before its owner entry says BT_DROP_DIGEST. Under the root lock. */
static void refresh_uppers(const struct host *h, __u32 ns)
{
	struct bt_drop_owner key, next, *prev = NULL;
	struct { __u32 ifindex, v; } own[BT_DROP_SLOTS], stale[BT_DROP_SLOTS * 4];
	size_t nown = 0, nstale = 0, *ups = NULL;
	struct bt_link *links;
	__u32 *want = NULL, *tag = NULL, v;
	int sfd[BT_DROP_SLOTS];	/* own[i]'s drop_shared */
	int n = bt_links_dump(&links);
	bool changed = true;

	if (n < 0)
		return;
	while (!bpf_map_get_next_key(h->owners_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.netns != ns || bpf_map_lookup_elem(h->owners_fd, &key, &v))
			continue;
		if (!(v & BT_DROP_UPPER) && nown < BT_DROP_SLOTS)
			own[nown++] = (typeof(own[0])){ key.ifindex, v };
		else if (v & BT_DROP_UPPER && !(v & BT_DROP_WORKLOAD) &&
			 nstale < sizeof(stale) / sizeof(stale[0]))
			stale[nstale++] = (typeof(stale[0])){ key.ifindex, v };
	}
	want = calloc(n + 1, sizeof(*want));
	tag = calloc(n + 1, sizeof(*tag));
	ups = calloc(n + 1, sizeof(*ups));
	if (!want || !tag || !ups)
		goto out;
	for (size_t i = 0; i < nown; i++) {
		size_t k = bt_links_uppers(links, n, own[i].ifindex, ups, n);

		for (size_t j = 0; j < k; j++) {
			__u32 *w = &want[ups[j]];

			*w = !*w || *w == (own[i].v | BT_DROP_UPPER) ? own[i].v | BT_DROP_UPPER
								      : BT_DROP_SHARED;
		}
	}
	for (size_t i = 0; i < nown; i++)	/* an instance of its own */
		for (int j = 0; j < n; j++)
			if (links[j].ifindex == own[i].ifindex) {
				want[j] = 0;
				tag[j] = own[i].v | BT_DROP_UPPER;
			}
	/* the instance's only while every lower is, down to its interface:
	 * demoted to BT_DROP_DIGEST until nothing changes */
	while (changed) {
		changed = false;
		for (int j = 0; j < n; j++)
			if (want[j])
				tag[j] = want[j];
		for (int j = 0; j < n; j++)
			if (want[j] && want[j] != BT_DROP_SHARED && !(want[j] & BT_DROP_DIGEST) &&
			    !bt_links_only_from(links, n, j, tag)) {
				want[j] |= BT_DROP_DIGEST;
				changed = true;
			}
	}
	for (size_t i = 0; i < nown; i++) {
		sfd[i] = shared_map(h, own[i].v & BT_DROP_SLOT_MASK);
		sync_shared(sfd[i], own[i].v & BT_DROP_SLOT_MASK, ns, links, n, want, true);
	}
	for (int j = 0; j < n; j++) {
		key = (struct bt_drop_owner){ .netns = ns, .ifindex = links[j].ifindex };
		if (want[j])
			bpf_map_update_elem(h->owners_fd, &key, &want[j], 0);
	}
	for (size_t i = 0; i < nstale; i++) {
		bool kept = false;

		for (int j = 0; j < n && !kept; j++)
			kept = links[j].ifindex == stale[i].ifindex && want[j];
		key = (struct bt_drop_owner){ .netns = ns, .ifindex = stale[i].ifindex };
		if (!kept)
			bpf_map_delete_elem(h->owners_fd, &key);
	}
	for (size_t i = 0; i < nown; i++) {
		sync_shared(sfd[i], own[i].v & BT_DROP_SLOT_MASK, ns, links, n, want, false);
		if (sfd[i] >= 0)
			close(sfd[i]);
	}
out:
	free(want);
	free(tag);
	free(ups);
	free(links);
}

static void refresh_workloads(const struct host *h, __u32 ns, const struct bt_workloads *w);

/* The stacked devices' entries, or the workloads' (from w; NULL: none),
 * of the current namespace. Never waits: an attach holding the lock
 * refreshes itself. */
static void refresh_nowait(bool workloads, const struct bt_workloads *w)
{
	struct host h;
	__u32 ns = 0;
	int lock;

	if (netns_inode(&ns) || (lock = lock_root(false)) < 0)
		return;
	if (!host_open(&h)) {
		if (workloads)
			refresh_workloads(&h, ns, w);
		else
			refresh_uppers(&h, ns);
		host_close(&h);
	}
	close(lock);
}

void bt_drops_refresh_uppers(void)
{
	refresh_nowait(false, NULL);
}

/* A namespace whose drops are followed: a container's or a pod's. A
 * namespace with no container in it (ip netns add, unshare --net, a VPN's)
 * is no workload of the node's: in a lab of namespaces each one stands for
 * a host of its own (tests/live/multihop.sh), whose neighbours' drops are
 * not its drops. */
static bool followed(const struct bt_workload *wl)
{
	return wl->kind != BT_WL_NETNS;
}

/* Is (netns, ifindex) one of the workloads' devices of w? */
static bool workload_device(const struct bt_workloads *w, __u32 ns, __u32 netns, __u32 ifindex)
{
	for (size_t i = 0, n = w ? bt_workloads_count(w) : 0; i < n; i++) {
		const struct bt_workload *wl = bt_workloads_get(w, i);

		if ((__u32)wl->netns_ino != netns || netns == ns || !followed(wl))
			continue;
		for (size_t j = 0; j < wl->n_peered; j++)
			if (wl->peered[j] == ifindex)
				return true;
	}
	return false;
}

/* The workloads' devices (w: the other namespaces' devices peered with
 * another namespace) given to the ingress instance of namespace ns with
 * the lowest slot, digest-checked: slot s | BT_DROP_UPPER | BT_DROP_DIGEST
 * | BT_DROP_WORKLOAD, and the device in s's drop_shared before its owner
 * entry points there. A device that has an entry of another kind (an
 * instance of its own, a stacked device) or another namespace's
 * instance's keeps it. Entries of devices gone, or given to another of
 * ns's instances before, are moved or removed: the owner entry first,
 * then the drop_shared entry it needed. Under the root lock. */
static void refresh_workloads(const struct host *h, __u32 ns, const struct bt_workloads *w)
{
	struct bt_drop_owner key, next, *prev = NULL;
	__u32 slots[BT_DROP_SLOTS], v, one = BT_SHARED_WORKLOAD, want, len = sizeof(struct bpf_map_info);
	struct bpf_map_info mi = { 0 };
	size_t nslots = 0, room = 0;
	int s = -1, fd = -1;

	/* room: the entries left past what the instances' own and their
	 * stacked devices' may take (an older host's map, of 64, has none) */
	if (!bpf_obj_get_info_by_fd(h->owners_fd, &mi, &len) && mi.max_entries >= BT_DROP_OWNERS)
		room = mi.max_entries - BT_DROP_SLOTS * 4;
	while (!bpf_map_get_next_key(h->owners_fd, prev, &next)) {
		key = next;
		prev = &key;
		room -= room > 0;
		if (key.netns == ns && !bpf_map_lookup_elem(h->owners_fd, &key, &v) &&
		    !(v & BT_DROP_UPPER) && nslots < BT_DROP_SLOTS) {
			slots[nslots++] = v & BT_DROP_SLOT_MASK;
			if (s < 0 || (v & BT_DROP_SLOT_MASK) < (__u32)s)
				s = v & BT_DROP_SLOT_MASK;
		}
	}
	if (s >= 0 && w && (fd = shared_map(h, s)) < 0)
		s = -1;	/* an instance of another build: nobody's */
	want = s | BT_DROP_UPPER | BT_DROP_DIGEST | BT_DROP_WORKLOAD;
	for (size_t i = 0, n = w && s >= 0 ? bt_workloads_count(w) : 0; i < n; i++) {
		const struct bt_workload *wl = bt_workloads_get(w, i);

		for (size_t j = 0; followed(wl) && j < wl->n_peered && (__u32)wl->netns_ino != ns; j++) {
			key = (struct bt_drop_owner){ .netns = wl->netns_ino, .ifindex = wl->peered[j] };
			if (!bpf_map_lookup_elem(h->owners_fd, &key, &v) &&
			    (v == want || !(v & BT_DROP_WORKLOAD)))
				continue;	/* ours already, or not a workload's */
			if (!bpf_map_lookup_elem(h->owners_fd, &key, &v)) {
				bool mine = false;

				for (size_t k = 0; k < nslots && !mine; k++)
					mine = (v & BT_DROP_SLOT_MASK) == slots[k];
				if (!mine)
					continue;	/* another namespace's agent's */
			}
			if (!room)
				continue;	/* full: left to the host's count */
			room -= bpf_map_lookup_elem(h->owners_fd, &key, &v) != 0;
			if (!bpf_map_update_elem(fd, &key, &one, 0))
				bpf_map_update_elem(h->owners_fd, &key, &want, 0);
		}
	}
	/* what is not wanted now, of ns's instances */
	prev = NULL;
	while (!bpf_map_get_next_key(h->owners_fd, prev, &next)) {
		bool mine = false;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(h->owners_fd, &key, &v) || !(v & BT_DROP_WORKLOAD))
			continue;
		for (size_t k = 0; k < nslots && !mine; k++)
			mine = (v & BT_DROP_SLOT_MASK) == slots[k];
		if (mine && (v != want || !workload_device(w, ns, key.netns, key.ifindex)) &&
		    !bpf_map_delete_elem(h->owners_fd, &key))
			prev = NULL;	/* start again: the order changed */
	}
	/* each of ns's instances' drop_shared: only what its entries need */
	for (size_t k = 0; k < nslots; k++) {
		int sf = shared_map(h, slots[k]);
		struct bt_drop_owner *sp = NULL;

		while (sf >= 0 && !bpf_map_get_next_key(sf, sp, &next)) {
			key = next;
			sp = &key;
			if (key.netns == ns || (slots[k] == (__u32)s &&
			    !bpf_map_lookup_elem(h->owners_fd, &key, &v) && v == want))
				continue;
			if (!bpf_map_delete_elem(sf, &key))
				sp = NULL;
		}
		if (sf >= 0)
			close(sf);
	}
	if (fd >= 0)
		close(fd);
}

void bt_drops_refresh_workloads(const struct bt_workloads *w)
{
	refresh_nowait(true, w);
}

int bt_drops_workload_devices(const struct bt_instance *inst, struct bt_drop_owner *out, int max)
{
	__u32 id = prog_id(inst->prog_drop_fd), v;
	struct bt_drop_owner key, next, *prev = NULL;
	struct host h;
	int s, n = 0;

	if (!id || host_open(&h))
		return 0;
	s = slot_of(&h, id);
	while (s >= 0 && !bpf_map_get_next_key(h.owners_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(h.owners_fd, &key, &v) && v & BT_DROP_WORKLOAD &&
		    (v & BT_DROP_SLOT_MASK) == (__u32)s && n++ < max)
			out[n - 1] = key;
	}
	host_close(&h);
	return n;
}

int bt_drops_register(const struct bt_instance *inst, const char *suppress)
{
	__u64 bits[BT_DROP_REASONS / 64];
	struct bt_drop_owner o = { .ifindex = inst->meta.ifindex };
	struct host h;
	int lock, err, s;
	bool loaded = false;
	__u32 id = prog_id(inst->prog_drop_fd), v;

	if (!id) {
		bt_info("%s: no drop program (this kernel has %s): drops are not recorded",
			inst->name, bt_kernel_has(BT_KF_BTF) > 0 ?
			"no drop reasons in its BTF: Linux 5.17" : "no BTF at " BT_VMLINUX_BTF);
		return 0;
	}
	if ((err = bt_drops_parse_suppress(suppress, bits)) ||
	    (err = bt_drops_set_suppress(inst, bits)))
		return err;
	if ((err = netns_inode(&o.netns)))
		return err;
	if ((lock = lock_root(true)) < 0)
		return lock;
	err = host_open(&h);
	/* no host: what its directory still holds is a removed one's leftovers */
	if (err == -ENOENT) {
		host_sweep();
		if (!(err = host_load()) && !(err = host_open(&h)))
			loaded = true;
	}
	if (err) {
		if (!loaded && err != -ENOENT)
			bt_err_errno(err, "opening the host's drop program at " BT_DROPS_DIR
				     " (pinned by another user?); nothing was changed");
		goto out;
	}
	s = slot_of(&h, id);
	for (__u32 i = 0; s < 0 && i < BT_DROP_SLOTS; i++)
		if (bpf_map_lookup_elem(h.progs_fd, &i, &v))
			s = i;
	if (s < 0) {
		err = -ENOSPC;
		bt_err("no room for %s's drops: %d instances record drops already",
		       inst->name, BT_DROP_SLOTS);
		goto out_close;
	}
	v = s;
	forget_slot(&h, s);
	/* The owner entry hands it the drops of what its interface received
	 * (skb_iif): an instance attached for egress alone saw none of that,
	 * so it has no entry (nor stacked devices'), and those drops go to
	 * the host's count, as on an interface without an instance. Its
	 * program keeps its slot, so that the host's program stays loaded
	 * to count them. */
	if (bpf_map_update_elem(h.progs_fd, &v, &inst->prog_drop_fd, 0) ||
	    (!(inst->meta.flags & BT_META_NO_INGRESS) &&
	     bpf_map_update_elem(h.owners_fd, &o, &v, 0))) {
		err = -errno;
		bt_err_errno(err, "registering the instance's drop program");
		bpf_map_delete_elem(h.progs_fd, &v);
	}
	/* a failure here leaves the stacked devices' drops to the host */
	refresh_uppers(&h, o.netns);
	/* the workloads' devices of now: without an agent, nobody refreshes
	 * them, so a container started later is not covered */
	if (!err && !(inst->meta.flags & BT_META_NO_INGRESS)) {
		struct bt_workloads *w = bt_workloads_new(NULL);

		if (w && !bt_workloads_refresh(w))
			refresh_workloads(&h, o.netns, w);
		bt_workloads_free(w);
	}
out_close:
	/* a host program this call loaded, left without owners */
	if (err && loaded && owners_empty(&h))
		host_remove();
	host_close(&h);
out:
	close(lock);
	return err;
}

int bt_drops_unregister(const struct bt_instance *inst)
{
	__u32 id = prog_id(inst->prog_drop_fd), ns = 0;
	struct host h;
	int lock, s;

	if (!id)
		return 0;
	if ((lock = lock_root(true)) < 0)
		return lock;
	if (!host_open(&h)) {
		s = slot_of(&h, id);
		if (s >= 0) {
			__u32 v = s;

			forget_slot(&h, v);
			bpf_map_delete_elem(h.progs_fd, &v);
		}
		if (!netns_inode(&ns))
			refresh_uppers(&h, ns);	/* a device shared with it is not now */
		if (owners_empty(&h))
			host_remove();
		host_close(&h);
	}
	close(lock);
	return 0;
}

bool bt_drops_registered(const struct bt_instance *inst)
{
	__u32 id = prog_id(inst->prog_drop_fd);
	struct host h;
	bool yes;

	/* egress alone: registered without an owner entry, handed no drops */
	if (!id || inst->meta.flags & BT_META_NO_INGRESS || host_open(&h))
		return false;
	yes = slot_of(&h, id) >= 0;
	host_close(&h);
	return yes;
}

int bt_drops_uppers(const struct bt_instance *inst, struct bt_drop_upper *out, int max)
{
	__u32 id = prog_id(inst->prog_drop_fd), ns = 0;
	struct bt_link *links;
	size_t *ups = NULL, k = 0;
	struct host h;
	int n, s = -1, err;

	if ((err = netns_inode(&ns)))
		return err;
	if ((n = bt_links_dump(&links)) < 0)
		return n;
	if (id && !host_open(&h)) {
		s = slot_of(&h, id);
		if (s < 0)
			host_close(&h);
	}
	if (!(ups = calloc(n + 1, sizeof(*ups)))) {
		err = -ENOMEM;
		goto out;
	}
	k = bt_links_uppers(links, n, inst->meta.ifindex, ups, max < n ? max : n);
	for (size_t i = 0; i < k; i++) {
		struct bt_drop_owner key = { .netns = ns, .ifindex = links[ups[i]].ifindex };
		__u32 v;

		snprintf(out[i].name, sizeof(out[i].name), "%s", links[ups[i]].name);
		snprintf(out[i].kind, sizeof(out[i].kind), "%s", links[ups[i]].kind);
		out[i].state = BT_UPPER_PENDING;
		if (s >= 0 && !bpf_map_lookup_elem(h.owners_fd, &key, &v))
			out[i].state = v == BT_DROP_SHARED ? BT_UPPER_SHARED
				     : v == (s | BT_DROP_UPPER) ? BT_UPPER_OURS
				     : v == (s | BT_DROP_UPPER | BT_DROP_DIGEST) ? BT_UPPER_SEEN
				     : !(v & BT_DROP_UPPER) ? BT_UPPER_ITS_OWN : BT_UPPER_PENDING;
	}
out:
	if (s >= 0)
		host_close(&h);
	free(ups);
	free(links);
	return err ? err : (int)k;
}

/* ---- counts ---- */

static int cmp_total(const void *a, const void *b)
{
	const struct bt_drop_total *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets > y->packets ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

/* One reason's per-CPU counts summed into t (n of cap); an unused
 * reason reads zero and is left out. */
static void total_add(struct bt_drop_total **t, int *n, int *cap, __u32 code,
		      const struct bt_drop_count *v, int ncpu)
{
	struct bt_drop_total sum = { .code = code };

	for (int c = 0; c < ncpu; c++) {
		sum.packets += v[c].packets;
		sum.bytes += v[c].bytes;
	}
	if (!sum.packets && !sum.bytes)
		return;
	if (*n == *cap) {
		struct bt_drop_total *g = realloc(*t, (*cap = *cap ? 2 * *cap : 16) * sizeof(*g));

		if (!g)
			return;
		*t = g;
	}
	(*t)[(*n)++] = sum;
}

#define TOTALS_BATCH 256

/* Adds one count map's reasons to t (n of cap): the array of core reasons
 * or the hash of a subsystem's, TOTALS_BATCH keys a system call (a
 * /metrics scrape reads them per interface: 1,024 reasons were 2,048
 * calls); a kernel without batch lookups (before 5.6) is walked a key at
 * a time. */
static int totals_add(int fd, struct bt_drop_total **t, int *n, int *cap)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct bt_drop_count *v = ncpu > 0 ? calloc((size_t)TOTALS_BATCH * ncpu, sizeof(*v)) : NULL;
	__u32 keys[TOTALS_BATCH], token, key, *prev = NULL;
	void *in = NULL;

	if (!v)
		return -ENOMEM;
	for (;;) {
		__u32 count = TOTALS_BATCH;
		bool last = bpf_map_lookup_batch(fd, in, &token, keys, v, &count, NULL) != 0;

		if (last && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < count; i++)
			total_add(t, n, cap, keys[i], &v[(size_t)i * ncpu], ncpu);
		if (last)
			break;
		in = &token;
	}
	/* 524: the kernel's ENOTSUPP, what 5.x answered for a map without */
	if (err && !in && (err == -EINVAL || err == -524 || err == -EOPNOTSUPP)) {
		err = 0;
		while (!bpf_map_get_next_key(fd, prev, &key)) {
			prev = &key;
			if (!bpf_map_lookup_elem(fd, &key, v))
				total_add(t, n, cap, key, v, ncpu);
		}
	}
	free(v);
	return err;
}

int bt_drops_totals(const struct bt_instance *inst, struct bt_drop_total **out)
{
	int fd[2] = { -1, -1 }, n = 0, cap = 0, err = 0;
	struct bt_drop_total *t = NULL;

	*out = NULL;
	if (inst) {
		fd[0] = inst->drop_counts_fd;
		fd[1] = inst->drop_counts_subsys_fd;
	} else if ((fd[0] = bpf_obj_get(BT_DROPS_DIR "/drop_host")) < 0) {
		return errno == ENOENT ? 0 : -errno;
	} else {
		/* a host program loaded by bloomtap before 0.3 has no such pin */
		fd[1] = bpf_obj_get(BT_DROPS_DIR "/drop_host_subsys");
	}
	for (int i = 0; i < 2 && !err; i++)
		if (fd[i] >= 0)
			err = totals_add(fd[i], &t, &n, &cap);
	if (!inst)
		for (int i = 0; i < 2; i++)
			if (fd[i] >= 0)
				close(fd[i]);
	if (err) {
		free(t);
		return err;
	}
	if (n)
		qsort(t, n, sizeof(*t), cmp_total);
	*out = t;
	return n;
}

int bt_drops_counters(const struct bt_instance *inst, __u64 out[BT_DROP_CTR_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	struct bt_drop_counters *v;
	__u32 zero = 0;

	memset(out, 0, BT_DROP_CTR_MAX * sizeof(*out));
	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(inst->drop_counters_fd, &zero, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++)
		for (int i = 0; i < BT_DROP_CTR_MAX; i++)
			out[i] += v[c].c[i];
	free(v);
	return 0;
}

/* ---- window reasons ---- */

void bt_window_reasons(const struct bt_instance *inst, int ncpu, __u32 i,
		       struct bt_win_reasons *out)
{
	struct bt_window_drops *v = calloc(ncpu, sizeof(*v));

	memset(out, 0, sizeof(*out));
	if (!v || bpf_map_lookup_elem(inst->wdrops_fd, &i, v))
		out->other = true;	/* cannot tell: try them all */
	else
		for (int c = 0; c < ncpu; c++)
			bt_win_reasons_add(out, &v[c]);
	free(v);
}
