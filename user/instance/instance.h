/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* An instance is one loaded XDP program with its maps, pinned under
 * /sys/fs/bpf/bloomtap/<name>/ so that every later command finds it. An
 * attached interface's instance is named after the interface. */
#ifndef BLOOMTAP_INSTANCE_H
#define BLOOMTAP_INSTANCE_H

#include <stdbool.h>
#include <linux/types.h>
#include "bloomtap.h"

#define BT_NAME_MAX 32

/* The instance's maps: one list for the fds below, the pins that open
 * reads (user/instance/instance.c) and those that create writes (user/instance/create.c),
 * by the names of bpf/maps.bpf.h; create refuses a skeleton map that is
 * neither here nor among the scratch maps below. meta comes last: its
 * pin marks an instance complete. dcounters to dfmo are the heavy
 * dropped flows' stage. */
#define BT_INSTANCE_MAPS(X)							\
	X(counters) X(flows) X(ctl) X(cms) X(fm) X(fmc) X(fc) X(fmo)		\
	X(spie) X(windows) X(wcount) X(digest_log)				\
	X(watch_hdr) X(watch_cells) X(watch_counts) X(watch_classes) \
	X(wl_addr) X(wl_counts) X(wl_names)					\
	X(drop_counts) X(drop_counts_subsys) X(drop_counters) X(drop_suppress)	\
	X(drop_shared) X(drop_rec) X(drop_rec_pos) X(drop_follow) X(drop_events) \
	X(wdrops) X(dcounters) X(dcms) X(dfm) X(dfmc) X(dfc) X(dfmo)		\
	X(ecms) X(efm) X(efmc) X(efc) X(efmo)					\
	X(meta)
/* Maps of the object that are the program's alone, never pinned: per-CPU
 * scratch space. */
#define BT_INSTANCE_SCRATCH_MAPS(X) X(watch_scratch) X(drop_scratch) X(egress_scratch)

struct bt_instance {
	char name[BT_NAME_MAX + 1];
	int prog_fd;		/* bloomtap_xdp: linear frames (interfaces) */
	int prog_mb_fd;		/* bloomtap_xdp_mb: multi-buffer (replay, jumbo) */
	int prog_drop_fd;	/* bloomtap_drop, tail-called by the host's drop
				 * program; -1 without one (no kernel BTF) */
	int prog_egress_fd;	/* bloomtap_egress (tc); -1 without bpf_loop */
#define BT_MAP_FD(m) int m##_fd;
	BT_INSTANCE_MAPS(BT_MAP_FD)
#undef BT_MAP_FD
	struct bt_meta meta;
};

/* True in a mount namespace other than PID 1's (ip netns exec's). */
bool bt_private_mounts(void);
int bt_ensure_bpffs(void);
/* Whether the host's pins can be read here: 0, or -EXDEV after saying that
 * this process has a /sys of its own (ip netns exec) and what to run. */
int bt_pins_visible(void);
/* 0 when name is usable as an instance (and directory) name. */
int bt_instance_name_check(const char *name);
int bt_instance_path(const char *name, const char *obj, char *buf, size_t len);
bool bt_instance_exists(const char *name);
/* The instance's pin directory (and the root above), mode 0700: the pins
 * hold the hash key. 0, or -errno after a message. */
int bt_instance_mkdir(const char *name);

/* Opens the pins of an existing instance: -ENOENT when there is none,
 * -EPROTO when it was made by an incompatible bloomtap. Prints nothing. */
int bt_instance_open(const char *name, struct bt_instance *inst);
/* The ABI and creation time (CLOCK_REALTIME, ns) in the meta of any
 * bloomtap's instance, this one's or another's: -ENOENT without a meta,
 * -EPROTO when it is no bloomtap meta. Prints nothing. */
int bt_instance_peek(const char *name, __u32 *abi, __u64 *created_ns);
/* This process's network namespace: the inode of its nsfs file, as
 * stat("/proc/self/ns/net") gives it (what attach records as meta.netns);
 * 0 when it cannot be told. */
__u32 bt_netns_self(void);
/* Whether meta is an interface's of another network namespace than this
 * process's: interface names are per namespace, while the pins, named
 * after the interface, are the host's. False when either is unknown (0: a
 * replay instance, one made by an older bloomtap). */
bool bt_meta_elsewhere(const struct bt_meta *meta);
#define BT_ELSEWHERE_LEN 512
/* The same for instance name's pinned meta; then into why what says so
 * (whose namespace, and that this namespace's interface of the name is
 * another device or none) and into where (BT_ELSEWHERE_LEN each) how to
 * run command line cmd ("detach eth0"; NULL: any) there: with nsenter
 * --net=FILE, FILE a name under /var/run/netns or a process's
 * /proc/PID/ns/net. */
bool bt_instance_elsewhere(const char *name, const char *cmd, char *why, char *where);
/* 0 when instance name may be taken for this namespace's interface of
 * that name (none such, one of this namespace, of an unknown one), else
 * -EREMOTE after an error that says whose it is, how to run cmd there
 * (bt_instance_elsewhere), then or_else (NULL: nothing more). */
int bt_instance_here_or_explain(const char *name, const char *cmd, const char *or_else);
/* Opens, or prints an error that says how to make one. */
int bt_instance_open_or_explain(const char *name, struct bt_instance *inst);
void bt_instance_close(struct bt_instance *inst);
/* Unpins everything of the instance (maps, program, link) and its dir. */
int bt_instance_remove(const char *name);
/* Names of all instances, sorted; free with bt_instance_names_free().
 * -EXDEV after bt_pins_visible()'s error. */
int bt_instance_names(char ***names, int *n);
void bt_instance_names_free(char **names, int n);

/* Digest log entries kept by instances with the flow table (replay). */
#define BT_DIGEST_LOG 65536

/* Records in the instance's meta where its agent archives (realpath of
 * dir), for trace to search. 0, or -errno (-ENAMETOOLONG past
 * BT_META_ARCHIVE_LEN). */
int bt_instance_set_archive(struct bt_instance *inst, const char *dir);
/* The right to turn an instance's SPIE windows and heavy-flow intervals
 * (rotate, seal, ready, flip): one process at a time, an flock on its pin
 * directory, held until *fd is closed. -EBUSY when another process (an
 * agent, windows --every) holds it. */
int bt_instance_lock(const char *name, int *fd);
/* The same, or an error printed that says who to stop; what is a verb
 * for the message ("rotate windows", "end the interval"). */
/* inst->meta read again from its pin (attach rewrites the interface's). */
int bt_instance_reread_meta(struct bt_instance *inst);
/* Who holds instance name's lock: its PID (as recorded in the meta by
 * bt_instance_lock, else from /proc/locks), -1 when held by a process
 * neither names, 0 when free. */
int bt_instance_lock_holder(const char *name);
/* "PID 1234" or "PID unknown" for a holder, into buf. */
const char *bt_holder_str(int pid, char *buf, size_t len);
int bt_instance_lock_or_explain(const char *name, const char *what, int *fd);

/* Each CPU's counters of what was received, as the datapath keeps them;
 * *out is malloc'd. */
int bt_instance_counters_cpus(const struct bt_instance *inst, struct bt_counters **out,
			      int *ncpu);
/* The same from any per-CPU struct bt_counters map (the drop stage's), at
 * key 0, or at key (an enum bt_direction of the counters map). */
int bt_counters_cpus(int fd, struct bt_counters **out, int *ncpu_out);
int bt_counters_cpus_at(int fd, __u32 key, struct bt_counters **out, int *ncpu_out);
/* Counters summed over all possible CPUs: received, or of a direction;
 * dir BT_DIRS: the dropped traffic's (dcounters: the heavy dropped flows'
 * stage's counts, and the drop program's batches that found no ready
 * window, BT_CTR_SPIE_NO_READY). */
int bt_instance_counters(const struct bt_instance *inst, __u64 out[BT_CTR_MAX]);
int bt_instance_counters_dir(const struct bt_instance *inst, enum bt_direction dir,
			     __u64 out[BT_CTR_MAX]);

/* enum bt_direction's names, "ingress" and "egress" (--direction, JSON,
 * the /metrics label) */
extern const char *const bt_direction_names[];
/* A reading command's --direction (an enum bt_direction) */
#define BT_DIRECTION_OPT(var)							\
	{ "direction", 'd', BT_OPT_ENUM, &(var), "DIR",				\
	  "what the interface received (ingress, the default), or what it sent "	\
	  "(egress: attached with --direction egress or both)",			\
	  .choices = bt_direction_names }
/* Does the instance record dir? Egress: when it was made to (attach
 * --direction egress or both); ingress: unless attached for egress alone.
 * 0, or -ENOENT after saying it does not. */
int bt_instance_records(const struct bt_instance *inst, int dir);

/* bt_instance_resolve() then bt_instance_open_or_explain(): the instance a
 * command works on, opened (0), or an error printed and the command's exit
 * status: BT_EXIT_USAGE (an interface and --instance both, or several
 * instances and none named), BT_EXIT_FAIL (none such, unreadable, or an
 * interface's of another network namespace, unless named by --instance:
 * bt_instance_here_or_explain). */
int bt_instance_open_arg(const char *iface, const char *instance, struct bt_instance *inst);

/* Picks the instance a command works on: --instance NAME, else the IFACE
 * argument, else the only instance there is. Prints an error on failure. */
int bt_instance_resolve(const char *iface, const char *instance, const char **name,
			char ***names, int *n);
#endif /* BLOOMTAP_INSTANCE_H */
