/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Drop reasons: the running kernel's names for them (from its BTF, never a
 * table here), and the reasons of one window's drop digests. */
#ifndef BLOOMTAP_REASONS_H
#define BLOOMTAP_REASONS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bloomtap.h"

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

/* The reasons of one window's drop digests: per reason its digests, and
 * whether some found no slot (then every reason must be tried). */
#define BT_WIN_REASONS_MAX 32
struct bt_win_reasons {
	int n;
	bool other;
	__u32 code[BT_WIN_REASONS_MAX];
	__u32 count[BT_WIN_REASONS_MAX];
};
/* Merges one CPU's (or one record's) slots into out. */
void bt_win_reasons_add(struct bt_win_reasons *out, const struct bt_window_drops *d);
/* The reasons to try for a window's digests: its own, and when some
 * found no slot every other reason of all (nall of them; all NULL: of
 * this kernel, its subsystems' too, bt_drop_reasons_all). Returns how
 * many are in codes. */
int bt_win_reasons_try(const struct bt_win_reasons *r, const struct bt_drop_reason *all,
		       int nall, __u32 *codes, int max);

#endif /* BLOOMTAP_REASONS_H */
