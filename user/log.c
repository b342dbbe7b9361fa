// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Messages and JSON output. Diagnostics go to stderr (stdout stays clean
 * for data) except errors in JSON mode, which are data too. */
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "common.h"

struct bt_global bt_g;

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "bloomtap: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void bt_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (bt_g.json) {
		char buf[1024];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "error", json_object_new_string(buf));
		bt_json_print(o);
	} else {
		vmsg("error: ", fmt, ap);
	}
	va_end(ap);
}

void bt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void bt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void bt_debug(const char *fmt, ...)
{
	va_list ap;

	if (!bt_g.verbose)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", fmt, ap);
	va_end(ap);
}

/* What to add to "bloomtap needs CAP_BPF" when a seccomp filter is on
 * (/proc/self/status, Seccomp: 2): a container runtime's default profile
 * refuses bpf(2) to CAP_BPF, which then looks like a missing capability. */
const char *bt_seccomp_hint(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	bool filtered = false;

	if (!f)
		return "";
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8)) {
			filtered = atoi(line + 8) == 2;
			break;
		}
	fclose(f);
	return filtered ? "; a seccomp filter is on here, and a container runtime's default "
			  "refuses bpf(2) without CAP_SYS_ADMIN (docs/install.md: its profile)" : "";
}

void bt_err_errno(int err, const char *what)
{
	err = err < 0 ? -err : err;
	if (err == EPERM)
		bt_err("%s: %s: bloomtap needs root, or CAP_BPF, CAP_NET_ADMIN "
		       "and CAP_PERFMON (run it with sudo)%s", what, strerror(err),
		       bt_seccomp_hint());
	else if (err == EACCES)	/* from BPF_PROG_LOAD: the verifier said no */
		bt_err("%s: rejected by the verifier (%s); run with -v for its log",
		       what, strerror(err));
	else
		bt_err("%s: %s%s", what, strerror(err),
		       bt_g.verbose ? "" : " (run with -v for libbpf's log)");
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf's log (the verifier's among it) only with -v: bloomtap's
	 * own errors already say what failed and what to do. */
	if (!bt_g.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bt_setup_libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

void bt_json_print(struct json_object *o)
{
	int flags = bt_g.pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
				: JSON_C_TO_STRING_PLAIN;

	puts(json_object_to_json_string_ext(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void bt_err_no_iface(const char *who, const char *ifname)
{
	bt_err("%s%sno such interface: '%s' (see 'ip link'; in another network namespace, run "
	       "bloomtap there with nsenter --net=/var/run/netns/NAME, not ip netns exec)",
	       who ? who : "", who ? ": " : "", ifname);
}
