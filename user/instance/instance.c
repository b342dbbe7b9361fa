// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "instance.h"
#include "base/util.h"

#define BPF_FS_MAGIC_ 0xcafe4a11

/* Whether process pid has a mount namespace other than ours; false when it
 * cannot be told (a sandbox may hide PID 1's even from root). */
static bool other_mounts(pid_t pid)
{
	struct stat self, other;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return !stat("/proc/self/ns/mnt", &self) && !stat(path, &other) &&
	       (self.st_ino != other.st_ino || self.st_dev != other.st_dev);
}

bool bt_private_mounts(void)
{
	/* PID 1's, or the parent's: ip netns exec makes the namespace and
	 * execs us in it, its caller left outside */
	return other_mounts(1) || other_mounts(getppid());
}

static bool bpffs_mounted(void)
{
	struct statfs st;

	return !statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC_;
}

/* A private mount namespace (ip netns exec makes one and mounts a /sys of
 * its own): the host's pins are not there, and a bpffs mounted here
 * vanishes with this process, and the pins with it, while the program
 * stays attached. True then, after saying so and what to run instead. */
static bool foreign_sys(void)
{
	if (bpffs_mounted() || !bt_private_mounts())
		return false;
	bt_err("/sys/fs/bpf here is not the host's: this process runs in a mount "
	       "namespace of its own (ip netns exec gives it a private /sys), where the host's "
	       "pins are not seen and pins made here would vanish when it exits. Run bloomtap "
	       "in the network namespace with nsenter --net=/var/run/netns/NAME bloomtap ... "
	       "instead");
	return true;
}

int bt_pins_visible(void)
{
	return foreign_sys() ? -EXDEV : 0;
}

int bt_ensure_bpffs(void)
{
	if (bpffs_mounted())
		return 0;
	if (foreign_sys())
		return -EPERM;
	/* Pins must outlive this process: mount bpffs where everyone looks. */
	if (mount("bpffs", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int err = -errno;

		bt_err("bpffs is not mounted at /sys/fs/bpf and mounting it failed "
		       "(%s): run 'mount -t bpf bpffs /sys/fs/bpf' as root", strerror(-err));
		return err;
	}
	bt_info("mounted bpffs at /sys/fs/bpf");
	return 0;
}

int bt_instance_name_check(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > BT_NAME_MAX || name[0] == '.' || name[0] == '-')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '@'))
			return -EINVAL;
	}
	return 0;
}

int bt_instance_path(const char *name, const char *obj, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s%s", BT_PIN_ROOT, name, obj ? "/" : "",
			 obj ? obj : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool bt_instance_exists(const char *name)
{
	char path[256];
	struct stat st;

	return !bt_instance_path(name, "meta", path, sizeof(path)) && !stat(path, &st);
}

/* The pins an instance is opened from: its programs, then its maps. */
struct pin_ent {
	const char *name;
	size_t fd_off;
	bool optional;
};
static const struct pin_ent pins[] = {
	{ "prog", offsetof(struct bt_instance, prog_fd) },
	{ "prog_mb", offsetof(struct bt_instance, prog_mb_fd), true },	/* Linux >= 5.18 */
	{ "prog_drop", offsetof(struct bt_instance, prog_drop_fd), true },
	{ "prog_egress", offsetof(struct bt_instance, prog_egress_fd), true },	/* Linux >= 5.17 */
#define BT_MAP_PIN(m) { #m, offsetof(struct bt_instance, m##_fd) },
	BT_INSTANCE_MAPS(BT_MAP_PIN)
#undef BT_MAP_PIN
};

static int *pin_fd(struct bt_instance *inst, const struct pin_ent *p)
{
	return (int *)((char *)inst + p->fd_off);
}

static int mkdir_private(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	/* Pins hold the hash key: only root may read them. */
	return chmod(path, 0700) ? -errno : 0;
}

int bt_instance_mkdir(const char *name)
{
	char dir[256];
	int err;

	bt_instance_path(name, NULL, dir, sizeof(dir));
	if ((err = mkdir_private(BT_PIN_ROOT)) || (err = mkdir_private(dir)))
		bt_err("cannot create %s: %s", dir, strerror(-err));
	return err;
}

/* An instance is its pins. The meta first: without it there is no instance
 * (-ENOENT, and the caller may make one); with another ABI, or without a
 * pin this version expects, it was made by another bloomtap (-EPROTO: it
 * must be removed, never made again over). */
int bt_instance_open(const char *name, struct bt_instance *inst)
{
	char path[256];
	__u32 zero = 0;
	int err, fd;

	memset(inst, 0, sizeof(*inst));
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
		*pin_fd(inst, &pins[i]) = -1;
	if (bt_instance_name_check(name))
		return -EINVAL;
	snprintf(inst->name, sizeof(inst->name), "%s", name);

	bt_instance_path(name, "meta", path, sizeof(path));
	inst->meta_fd = bpf_obj_get(path);
	if (inst->meta_fd < 0)
		return -errno;
	/* a meta of another size is another bloomtap's (and a lookup would
	 * write its value_size bytes into ours) */
	struct bpf_map_info mi = { 0 };
	__u32 mlen = sizeof(mi);

	if (bpf_obj_get_info_by_fd(inst->meta_fd, &mi, &mlen)) {
		err = -errno;
		goto err;
	}
	if (mi.value_size != sizeof(inst->meta)) {
		err = -EPROTO;
		goto err;
	}
	if (bpf_map_lookup_elem(inst->meta_fd, &zero, &inst->meta)) {
		err = -errno;
		goto err;
	}
	if (inst->meta.magic != BT_META_MAGIC || inst->meta.abi_version != BT_ABI_VERSION) {
		err = -EPROTO;
		goto err;
	}
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		if (*pin_fd(inst, &pins[i]) >= 0)
			continue;	/* the meta */
		bt_instance_path(name, pins[i].name, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0 && errno == ENOENT && pins[i].optional)
			continue;
		if (fd < 0) {
			err = errno == ENOENT ? -EPROTO : -errno;
			goto err;
		}
		*pin_fd(inst, &pins[i]) = fd;
	}
	return 0;
err:
	bt_instance_close(inst);
	return err;
}

int bt_instance_peek(const char *name, __u32 *abi, __u64 *created_ns)
{
	struct bpf_map_info mi = { 0 };
	__u32 mlen = sizeof(mi), zero = 0;
	struct bt_meta *m;
	char path[256];
	int fd, err = 0;

	if (bt_instance_name_check(name))
		return -EINVAL;
	bt_instance_path(name, "meta", path, sizeof(path));
	if ((fd = bpf_obj_get(path)) < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
		err = -errno;
		goto out;
	}
	/* every bloomtap's meta begins as this one's: magic, ABI, ... created_ns */
	if (mi.value_size < offsetof(struct bt_meta, created_ns) + sizeof(m->created_ns)) {
		err = -EPROTO;
		goto out;
	}
	if (!(m = calloc(1, mi.value_size > sizeof(*m) ? mi.value_size : sizeof(*m)))) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, m))
		err = -errno;
	else if (m->magic != BT_META_MAGIC)
		err = -EPROTO;
	else
		*abi = m->abi_version, *created_ns = m->created_ns;
	free(m);
out:
	close(fd);
	return err;
}

int bt_instance_open_or_explain(const char *name, struct bt_instance *inst)
{
	int err = bt_instance_open(name, inst);

	if (!err)
		return 0;
	if (err == -EINVAL)
		bt_err("'%s' is not a valid instance name", name);
	else if (err == -ENOENT && bt_pins_visible())
		err = -EXDEV;
	else if (err == -ENOENT)
		bt_err("no bloomtap instance '%s' (see 'bloomtap status'; make one "
		       "with 'bloomtap attach IFACE' or 'bloomtap replay FILE')", name);
	else if (err == -EACCES || err == -EPERM)
		bt_err("cannot open the pins of instance '%s': %s: bloomtap needs root, "
		       "or CAP_BPF and read access to " BT_PIN_ROOT "%s", name, strerror(-err),
		       bt_seccomp_hint());
	else if (err == -EPROTO)
		bt_err("instance '%s' was made by an incompatible bloomtap; remove it "
		       "with 'bloomtap detach --instance %s'", name, name);
	else
		bt_err_errno(err, "opening the instance's pins");
	return err;
}

void bt_instance_close(struct bt_instance *inst)
{
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		int *fd = pin_fd(inst, &pins[i]);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int bt_instance_remove(const char *name)
{
	char dir[256], path[512];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (bt_instance_name_check(name))
		return -EINVAL;
	bt_instance_path(name, NULL, dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

static bool is_instance_name(const char *name)
{
	return !bt_instance_name_check(name);
}

int bt_instance_names(char ***names, int *n)
{
	int err = bt_pins_visible();

	*names = NULL;
	*n = 0;
	if (err)
		return err;
	err = bt_list_dir(BT_PIN_ROOT, is_instance_name, names, n);

	return err == -ENOENT ? 0 : err;
}

void bt_instance_names_free(char **names, int n)
{
	bt_strv_free(names, n);
}

/* Instance name's meta map, opened by its pin and read into *meta: its
 * fd, or -1 when there is none to read, or it is another bloomtap's (a
 * lookup writes the map's value_size bytes, and another ABI keeps its
 * fields elsewhere). */
static int meta_pin_read(const char *name, struct bt_meta *meta)
{
	struct bpf_map_info mi = { 0 };
	__u32 mlen = sizeof(mi), zero = 0;
	char path[256];
	int fd;

	if (bt_instance_path(name, "meta", path, sizeof(path)) || (fd = bpf_obj_get(path)) < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) || mi.value_size != sizeof(*meta) ||
	    bpf_map_lookup_elem(fd, &zero, meta) || meta->magic != BT_META_MAGIC ||
	    meta->abi_version != BT_ABI_VERSION) {
		close(fd);
		return -1;
	}
	return fd;
}

__u32 bt_netns_self(void)
{
	struct stat st;

	/* nsfs inodes are proc_inum's, 32 bits wide */
	return stat("/proc/self/ns/net", &st) ? 0 : (__u32)st.st_ino;
}

bool bt_meta_elsewhere(const struct bt_meta *meta)
{
	__u32 self = meta->netns ? bt_netns_self() : 0;

	return self && self != meta->netns;
}

/* A file that enters network namespace ino, for nsenter --net=: its name
 * under /var/run/netns (ip netns add's bind mounts), else the first
 * process's /proc/PID/ns/net there. False when none is: the namespace gone
 * (and its interfaces with it), or held only where this process cannot
 * see (another mount namespace's bind mount, an open file). */
static bool netns_file(__u32 ino, char *buf, size_t len)
{
	static const char *const dirs[] = { "/var/run/netns", "/proc" };
	bool found = false;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !found; i++) {
		bool proc = i == 1;
		struct dirent *de;
		DIR *d = opendir(dirs[i]);
		struct stat st;

		while (d && !found && (de = readdir(d))) {
			if (de->d_name[0] == '.' || (proc && (de->d_name[0] < '0' || de->d_name[0] > '9')))
				continue;
			snprintf(buf, len, "%s/%s%s", dirs[i], de->d_name, proc ? "/ns/net" : "");
			found = !stat(buf, &st) && (__u32)st.st_ino == ino;
		}
		if (d)
			closedir(d);
	}
	return found;
}

bool bt_instance_elsewhere(const char *name, const char *cmd, char *why, char *where)
{
	struct bt_meta m;
	char file[300];
	int fd = bt_instance_name_check(name) ? -1 : meta_pin_read(name, &m);

	if (fd < 0)
		return false;
	close(fd);
	if (!bt_meta_elsewhere(&m))
		return false;
	m.ifname[sizeof(m.ifname) - 1] = 0;
	cmd = cmd ? cmd : "...";
	snprintf(why, BT_ELSEWHERE_LEN, "interface %s of another network namespace (net:[%u]; "
		 "this process is in net:[%u]), and this namespace %s %s: interface names are "
		 "per namespace, the pins under " BT_PIN_ROOT " the host's", m.ifname, m.netns,
		 bt_netns_self(), if_nametoindex(m.ifname) ? "has another device named" : "has no",
		 m.ifname);
	if (netns_file(m.netns, file, sizeof(file)))
		snprintf(where, BT_ELSEWHERE_LEN, "run bloomtap in that namespace: nsenter "
			 "--net=%s bloomtap %s", file, cmd);
	else
		snprintf(where, BT_ELSEWHERE_LEN, "run bloomtap in that namespace (nsenter "
			 "--net=FILE bloomtap %s), though no process and no name under "
			 "/var/run/netns is in it now: it may be gone", cmd);
	return true;
}

int bt_instance_here_or_explain(const char *name, const char *cmd, const char *or_else)
{
	char why[BT_ELSEWHERE_LEN], where[BT_ELSEWHERE_LEN];

	if (!bt_instance_elsewhere(name, cmd, why, where))
		return 0;
	bt_err("instance '%s' belongs to %s. To work on it, %s%s%s", name, why, where,
	       or_else ? "; " : "", or_else ? or_else : "");
	return -EREMOTE;
}

/* The holder's PID in the instance's meta: a field no datapath reads and
 * only attach otherwise writes (before it takes the lock). */
static void record_holder(const char *name)
{
	struct bt_meta meta;
	__u32 zero = 0;
	int fd = meta_pin_read(name, &meta);

	if (fd < 0)
		return;
	meta.holder_pid = getpid();
	bpf_map_update_elem(fd, &zero, &meta, BPF_EXIST);
	close(fd);
}

int bt_instance_lock(const char *name, int *fd)
{
	char dir[256];
	int err;

	*fd = -1;
	if (bt_instance_name_check(name) || bt_instance_path(name, NULL, dir, sizeof(dir)))
		return -EINVAL;
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (!flock(*fd, LOCK_EX | LOCK_NB)) {
		record_holder(name);
		return 0;
	}
	err = errno == EWOULDBLOCK ? -EBUSY : -errno;
	close(*fd);
	*fd = -1;
	return err;
}

int bt_instance_set_archive(struct bt_instance *inst, const char *dir)
{
	char real[PATH_MAX];
	__u32 zero = 0;
	int err;

	if (!realpath(dir, real))
		return -errno;
	if (strlen(real) >= sizeof(inst->meta.archive))
		return -ENAMETOOLONG;
	if ((err = bt_instance_reread_meta(inst)) || !strcmp(inst->meta.archive, real))
		return err;
	memcpy(inst->meta.archive, real, strlen(real) + 1);	/* its length checked above */
	return bpf_map_update_elem(inst->meta_fd, &zero, &inst->meta, BPF_EXIST) ? -errno : 0;
}

int bt_instance_reread_meta(struct bt_instance *inst)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(inst->meta_fd, &zero, &inst->meta) ? -errno : 0;
}

/* The lock's holder from /proc/locks, for a holder older than the meta's
 * field: "1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF" (proc(5)). */
static int holder_from_proc_locks(const char *dir)
{
	char line[256];
	struct stat st;
	FILE *f;
	int pid = 0;

	if (stat(dir, &st) || !(f = fopen("/proc/locks", "r")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long ino;
		int p;

		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &p, &maj, &min, &ino) == 4 &&
		    ino == st.st_ino && makedev(maj, min) == st.st_dev)
			pid = p;
	}
	fclose(f);
	return pid;
}

int bt_instance_lock_holder(const char *name)
{
	struct bt_meta meta;
	char dir[256];
	int fd, pid = 0;

	if (bt_instance_path(name, NULL, dir, sizeof(dir)))
		return 0;
	/* held at all? the lock says, whoever can see whom */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!flock(fd, LOCK_SH | LOCK_NB) || errno != EWOULDBLOCK) {
		close(fd);	/* free (our shared lock goes with the fd) */
		return 0;
	}
	close(fd);
	if ((fd = meta_pin_read(name, &meta)) >= 0) {
		pid = meta.holder_pid;
		close(fd);
	}
	if (!pid)
		pid = holder_from_proc_locks(dir);
	/* held, by a process nobody could name: still held */
	return pid ? pid : -1;
}

const char *bt_holder_str(int pid, char *buf, size_t len)
{
	if (pid > 0)
		snprintf(buf, len, "PID %d", pid);
	else
		snprintf(buf, len, "PID unknown");
	return buf;
}

int bt_instance_lock_or_explain(const char *name, const char *what, int *fd)
{
	int err = bt_instance_lock(name, fd);
	char who[32];

	if (err == -EBUSY)
		bt_err("another bloomtap process (%s: an agent, or windows --every) keeps "
		       "instance '%s' turning: it cannot %s by hand meanwhile; stop that process "
		       "first", bt_holder_str(bt_instance_lock_holder(name), who, sizeof(who)),
		       name, what);
	else if (err)
		bt_err("locking instance '%s': %s", name, strerror(-err));
	return err;
}

int bt_instance_counters_cpus(const struct bt_instance *inst, struct bt_counters **out,
			      int *ncpu_out)
{
	return bt_counters_cpus(inst->counters_fd, out, ncpu_out);
}

int bt_counters_cpus(int fd, struct bt_counters **out, int *ncpu_out)
{
	return bt_counters_cpus_at(fd, 0, out, ncpu_out);
}

int bt_counters_cpus_at(int fd, __u32 key, struct bt_counters **out, int *ncpu_out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bt_counters *v;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, v)) {
		int err = -errno;

		free(v);
		return err;
	}
	*out = v;
	*ncpu_out = ncpu;
	return 0;
}

const char *const bt_direction_names[] = { "ingress", "egress", NULL };

int bt_instance_records(const struct bt_instance *inst, int dir)
{
	/* egress alone: no XDP program, so the ingress maps stay zero */
	if (dir == BT_DIR_INGRESS && inst->meta.flags & BT_META_NO_INGRESS) {
		bt_err("instance %s records what it sends only (attached with --direction "
		       "egress, no XDP program): ask with --direction egress, or attach it "
		       "with --direction both to record what it receives too", inst->name);
		return -ENOENT;
	}
	if (dir == BT_DIR_INGRESS || inst->meta.flags & BT_META_EGRESS_MAPS)
		return 0;
	bt_err("instance %s does not record what it sends: attach it with --direction egress "
	       "or both", inst->name);
	return -ENOENT;
}

int bt_instance_counters(const struct bt_instance *inst, __u64 out[BT_CTR_MAX])
{
	return bt_instance_counters_dir(inst, BT_DIR_INGRESS, out);
}

int bt_instance_counters_dir(const struct bt_instance *inst, enum bt_direction dir,
			     __u64 out[BT_CTR_MAX])
{
	struct bt_counters *v;
	int ncpu, err;

	memset(out, 0, sizeof(__u64) * BT_CTR_MAX);
	if ((err = dir == BT_DIRS ? bt_counters_cpus_at(inst->dcounters_fd, 0, &v, &ncpu)
				  : bt_counters_cpus_at(inst->counters_fd, dir, &v, &ncpu)))
		return err;
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < BT_CTR_MAX; i++)
			out[i] += v[cpu].c[i];
	free(v);
	return 0;
}

int bt_instance_resolve(const char *iface, const char *instance, const char **name,
			char ***names, int *n)
{
	int err;

	*names = NULL;
	*n = 0;
	if (iface && instance) {
		bt_err("give an interface or --instance, not both");
		return -EINVAL;
	}
	if (iface || instance) {
		*name = iface ? iface : instance;
		return 0;
	}
	if ((err = bt_instance_names(names, n)) == -EXDEV)
		return err;
	if (err || *n == 0) {
		bt_err("no bloomtap instance exists: attach one with 'bloomtap attach "
		       "IFACE' or fill one with 'bloomtap replay FILE'");
		return -ENOENT;
	}
	if (*n > 1) {
		bt_err("%d instances exist (see 'bloomtap status'): name one, as IFACE "
		       "or --instance NAME", *n);
		return -EINVAL;
	}
	*name = (*names)[0];
	return 0;
}

int bt_instance_open_arg(const char *iface, const char *instance, struct bt_instance *inst)
{
	const char *name;
	char **names;
	int cnt, err;

	err = bt_instance_resolve(iface, instance, &name, &names, &cnt);
	/* both named, or several and none: the command line's to fix */
	if (err)
		err = err == -EINVAL ? BT_EXIT_USAGE : BT_EXIT_FAIL;
	else if (bt_instance_open_or_explain(name, inst))
		err = BT_EXIT_FAIL;
	/* an interface's name (or the only instance, unnamed) is this
	 * namespace's interface; --instance names the instance itself */
	else if (!instance && bt_instance_here_or_explain(name, NULL, "or name it with "
							   "--instance NAME to read it from here")) {
		bt_instance_close(inst);
		err = BT_EXIT_FAIL;
	}
	bt_instance_names_free(names, cnt);
	return err;
}
