/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the running kernel offers bloomtap: probed once, by asking the
 * kernel (bpf(2) and its BTF), never by its version number, since
 * distributions backport. Required features refuse with the feature's
 * name and the first kernel that has it; optional ones switch a part off. */
#ifndef BLOOMTAP_KERNEL_H
#define BLOOMTAP_KERNEL_H

#include <stdbool.h>
#include <json-c/json.h>

enum bt_kfeature {
	BT_KF_BPF,		/* bpf(2) loads XDP programs */
	BT_KF_MMAP_ARRAY,	/* BPF_F_MMAPABLE arrays: the sketch and windows */
	BT_KF_BOOT_NS,		/* bpf_ktime_get_boot_ns(): window stamps */
	BT_KF_XDP_LINK,		/* bpf_link XDP attach */
	BT_KF_ATOMICS,		/* BPF_ATOMIC cmpxchg: the SPIE ring's turns */
	BT_KF_BTF,		/* /sys/kernel/btf/vmlinux */
	BT_KF_DROP_REASONS,	/* kfree_skb's reason argument */
	BT_KF_XDP_FRAGS,	/* multi-buffer XDP: jumbo frames, large replays */
	BT_KF_LIVE_FRAMES,	/* BPF_F_TEST_XDP_LIVE_FRAMES: make bench's live rate */
	BT_KF_LOOP,		/* bpf_loop(): egress digests a TSO skb's segments */
	BT_KF_TCX,		/* tcx links: egress attached as a bpf_link */
	BT_KF_MAX
};

/* 1: present; 0: absent; -1: could not tell (no privilege to ask). */
int bt_kernel_has(enum bt_kfeature f);
const char *bt_kernel_release(void);
/* 0, or -EOPNOTSUPP after an error naming the first required feature
 * this kernel lacks and the first Linux that has it. */
int bt_kernel_require(void);
/* Says once (info) which optional features are off, and what that turns
 * off; nothing when all are there. */
void bt_kernel_note_optional(void);
/* The optional features this kernel lacks (but the bench's live frames),
 * as a JSON array of names; and as one line on stdout, "kernel R: without
 * F (Linux V): what it turns off", nothing when none is missing. */
struct json_object *bt_kernel_off_json(void);
void bt_kernel_print_off(void);
/* The running kernel: release and each feature, as 'kernel -j' prints
 * it; status adds it to its own. */
struct json_object *bt_kernel_json(void);

/* The verifier's work on a loaded object: call before load with the
 * object, then read after; programs without a log are left out. */
struct bpf_object;
struct bt_verifier_logs;
struct bt_verifier_logs *bt_verifier_logs_attach(struct bpf_object *obj);
/* Adds {"program": ..., "insns": n, "processed": n, "limit": n} to arr
 * for each program, and frees the logs. */
void bt_verifier_logs_read(struct bt_verifier_logs *l, struct json_object *arr);

#endif /* BLOOMTAP_KERNEL_H */
