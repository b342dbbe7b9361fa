/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What every part of the tool shares: global options, messages, JSON out. */
#ifndef BLOOMTAP_COMMON_H
#define BLOOMTAP_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

/* BT_VERSION: debian/changelog's, from the Makefile (-DBT_VERSION) */
#define BT_PIN_ROOT "/sys/fs/bpf/bloomtap"
#define BT_VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* Exit codes, as bpftool and xdp-tools use them: 0 success, 1 failure.
 * trace uses 1 for "some packets not seen" and 2 for errors. */
/* BT_EXIT_INCOMPATIBLE: run refused an instance of another ABI (the unit's
 * RestartPreventExitStatus=: starting again would refuse it again). */
enum { BT_EXIT_OK = 0, BT_EXIT_FAIL = 1, BT_EXIT_USAGE = 2, BT_EXIT_INCOMPATIBLE = 3 };

struct bt_global {
	bool json;
	bool pretty;
	int verbose;
	bool json_out;	/* a JSON document went to stdout (or one is open) */
};
extern struct bt_global bt_g;

/* Errors name the problem and what to do. In JSON mode they are one JSON
 * object on stdout, {"error": "..."}, so a consumer always gets JSON; once
 * a document is on stdout (data, or a first error), further errors go to
 * stderr as text: stdout holds one document. */
/* Levels as syslog's (and journald's "<N>" prefix) */
enum { BT_LOG_ERR = 3, BT_LOG_WARNING = 4, BT_LOG_INFO = 6, BT_LOG_DEBUG = 7 };
void bt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An errno from a bpf(2) or netlink call, turned into advice. */
void bt_err_errno(int err, const char *what);
const char *bt_seccomp_hint(void);
/* An interface that does not exist here, with the hint for another
 * network namespace; who: the command ("run"), or NULL. */
void bt_err_no_iface(const char *who, const char *ifname);
void bt_setup_libbpf_log(void);

/* Prints a JSON value on stdout, pretty with -p, and frees it. A command
 * prints one, except those that stream one a period (heavy --interval). */
void bt_json_print(struct json_object *o);

#endif /* BLOOMTAP_COMMON_H */
