/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Drops in user space: the running kernel's reason names (from its BTF,
 * never a table here), the host's one drop program (loaded with the first
 * instance attached, removed with the last), the suppression of noisy
 * reasons, and the counts and window reasons the programs keep. */
#ifndef BLOOMTAP_DROPS_H
#define BLOOMTAP_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

struct bt_instance;
struct bt_spie_maps;

#define BT_DROPS_DIR BT_PIN_ROOT "_drops"	/* beside the instances (bpffs takes no dot in a name) */
/* The reasons suppressed unless configured otherwise: ordinary TCP close
 * and teardown, packets for another host, and the unspecified reason. */
#define BT_DROPS_SUPPRESS_DEFAULT						\
	"NOT_SPECIFIED,OTHERHOST,SOCKET_CLOSE,QUEUE_PURGE,TCP_CLOSE,"		\
	"TCP_OLD_DATA,TCP_OLD_ACK,TCP_OLD_SEQUENCE,TCP_ABORT_ON_CLOSE"

#define BT_DROPS_OPT(field)						\
	{ "drop-suppress", 0, BT_OPT_STRING, &(field), "LIST",		\
	  "drop reasons counted but not digested: names, 'default' (ordinary TCP " \
	  "close, OTHERHOST, NOT_SPECIFIED), 'none', -NAME to take one out" }

/* Can this kernel run the drop programs (tp_btf needs its BTF, and
 * kfree_skb its reason)? */
bool bt_drops_supported(void);
/* Loads the host's drop program, attaches nothing, and adds the
 * verifier's figures to arr (bt_verifier_logs_read). */
struct json_object;
int bt_drops_host_verify(struct json_object *arr);

/* The kernel's enum skb_drop_reason, read once from
 * /sys/kernel/btf/vmlinux, or from the BTF file (raw, or an ELF vmlinux
 * with its .BTF section) the environment variable BT_DROP_BTF_ENV names:
 * reasons are then named, and names looked up, as on that kernel (an
 * archive written or read as on another kernel: tests/live/drops.sh). */
#define BT_DROP_BTF_ENV "BLOOMTAP_DROP_REASONS_BTF"
struct bt_drop_reason {
	__u32 code;
	char name[60];	/* without SKB_DROP_REASON_ / SKB_ */
};
/* All core reasons, sorted by code; NULL when the BTF cannot be read. */
const struct bt_drop_reason *bt_drop_reasons(int *n);
/* The core reasons and every subsystem reason the BTF names (a built-in
 * subsystem's enum, and the running kernel's loaded modules' when the
 * names are its own), sorted by code; read once. */
const struct bt_drop_reason *bt_drop_reasons_all(int *n);
/* The BTF file reasons are named from. */
const char *bt_drop_reasons_btf(void);
/* Names reasons from the BTF file at path (NULL: the running kernel's)
 * from now on; before any other thread names one (tests). */
void bt_drop_reasons_from(const char *path);
/* The reason's name on this kernel: a core reason's, a subsystem's from
 * its module's BTF, else "subsystem S (NAME), reason N" ("subsystem S,
 * reason N" when the core does not name S either). */
const char *bt_drop_reason_name(__u32 code, char *buf, size_t len);
/* How many times a subsystem reason's name was looked for in the modules'
 * BTF (once a code: the names are kept). */
unsigned long bt_drop_reason_scans(void);
/* A core reason's code by name (with or without SKB_DROP_REASON_). */
int bt_drop_reason_code(const char *name, __u32 *code);

/* Parses a suppression list into bits (BT_DROP_REASONS): comma-separated
 * reason names, "default" for BT_DROPS_SUPPRESS_DEFAULT, "none", and
 * -NAME to take one out. Default names this kernel lacks are skipped;
 * an unknown name given by the user is an error (-EINVAL, printed). */
int bt_drops_parse_suppress(const char *list, __u64 bits[BT_DROP_REASONS / 64]);
int bt_drops_set_suppress(const struct bt_instance *inst, const __u64 bits[BT_DROP_REASONS / 64]);

/* The instance's drops go to its program from now on (attach): loads the
 * host's program when it is the first. 0 when done or when this kernel
 * has no drop program (said once); -errno after a message. */
int bt_drops_register(const struct bt_instance *inst, const char *suppress);
/* ...and no more (detach): the last one removes the host's program. */
int bt_drops_unregister(const struct bt_instance *inst);
/* Is the instance registered (its program in the host's array, and an
 * owner entry: one attached for egress alone has none, false)? */
bool bt_drops_registered(const struct bt_instance *inst);
/* The devices stacked on the current namespace's instances' interfaces
 * (bridge, VLAN, bond, macvlan) given their drops again, from the links
 * as they are now: the agent's loop calls it every second, attach and
 * detach once. Never waits for the lock an attach holds. */
void bt_drops_refresh_uppers(void);
/* The workloads' devices (w's namespaces' devices peered with another
 * namespace: a container's veth end) given the drops of the packets the
 * current namespace's ingress instance of the lowest slot saw, checked by
 * their digests; NULL: none now. The agent's loop calls it every second
 * after bt_workloads_refresh. Never waits for the lock. */
struct bt_workloads;
void bt_drops_refresh_workloads(const struct bt_workloads *w);
/* How many workloads' devices give the instance their drops; the first
 * max of them into out. */
int bt_drops_workload_devices(const struct bt_instance *inst, struct bt_drop_owner *out, int max);
/* A device stacked on the instance's interface, and who gets its drops:
 * this instance, this instance for the packets its windows hold (the
 * device receives from other interfaces too), the host (shared with
 * another instance's interface), an instance on that device, or nobody
 * yet (made since the last refresh). */
struct bt_drop_upper {
	char name[16], kind[16];
	enum { BT_UPPER_OURS, BT_UPPER_SHARED, BT_UPPER_ITS_OWN, BT_UPPER_PENDING,
	       BT_UPPER_SEEN } state;
};
/* Into out (at most max); returns how many, or -errno. */
int bt_drops_uppers(const struct bt_instance *inst, struct bt_drop_upper *out, int max);

/* Per reason, summed over the CPUs. */
struct bt_drop_total {
	__u32 code;
	__u64 packets, bytes;
};
/* The instance's counts, or the host's bucket of drops without an
 * instance (inst NULL); *out sorted by packets, descending. Returns the
 * count, or -errno. */
int bt_drops_totals(const struct bt_instance *inst, struct bt_drop_total **out);
/* The instance's digested drops and causes (enum bt_drop_counter). */
int bt_drops_counters(const struct bt_instance *inst, __u64 out[BT_DROP_CTR_MAX]);
extern const char *const bt_drop_counter_names[BT_DROP_CTR_MAX];

/* The reasons of one window's drop digests: per reason its digests, and
 * whether some found no slot (then every reason must be tried). */
#define BT_WIN_REASONS_MAX 32
struct bt_win_reasons {
	int n;
	bool other;
	__u32 code[BT_WIN_REASONS_MAX];
	__u32 count[BT_WIN_REASONS_MAX];
};
/* Window i's, summed over the CPUs' slots. */
void bt_window_reasons(const struct bt_instance *inst, int ncpu, __u32 i,
		       struct bt_win_reasons *out);
/* Merges one CPU's (or one record's) slots into out. */
void bt_win_reasons_add(struct bt_win_reasons *out, const struct bt_window_drops *d);
/* The reasons to try for a window's digests: its own, and when some
 * found no slot every other reason of all (nall of them; all NULL: of
 * this kernel, its subsystems' too, bt_drop_reasons_all). Returns how
 * many are in codes. */
int bt_win_reasons_try(const struct bt_win_reasons *r, const struct bt_drop_reason *all,
		       int nall, __u32 *codes, int max);

#endif /* BLOOMTAP_DROPS_H */
