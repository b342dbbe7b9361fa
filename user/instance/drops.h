/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Drops in user space: the host's one drop program (loaded with the first
 * instance attached, removed with the last), the suppression of noisy
 * reasons, and the counts and window reasons the programs keep. The
 * reasons' names are core/reasons.h's. */
#ifndef BLOOMTAP_DROPS_H
#define BLOOMTAP_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "core/reasons.h"

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

/* Window i's, summed over the CPUs' slots. */
void bt_window_reasons(const struct bt_instance *inst, int ncpu, __u32 i,
		       struct bt_win_reasons *out);

#endif /* BLOOMTAP_DROPS_H */
