// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Messages and JSON output. Diagnostics go to stderr (stdout stays clean
 * for data) except errors in JSON mode, which are data too. */
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "common.h"

struct bt_global bt_g;

/* Is stderr the journal? systemd sets JOURNAL_STREAM to stderr's
 * "device:inode" for a unit's process; a child whose stderr was sent
 * elsewhere inherits the variable, so it must match (sd_journal's rule). */
static bool stderr_is_journal(void)
{
	static int known = -1;
	const char *js;
	unsigned long long dev, ino;
	struct stat st;

	if (known < 0) {
		js = getenv("JOURNAL_STREAM");
		known = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
			!fstat(STDERR_FILENO, &st) && st.st_dev == dev && st.st_ino == ino;
	}
	return known;
}

/* The one logger: a line at a level (syslog's: 3 error to 7 debug). On a
 * terminal or a file "bloomtap: error: text" ("bloomtap: text" for info);
 * into the journal "<N>text", which journald files at priority N under
 * the unit's name. */
static void vlog(int level, const char *fmt, va_list ap)
{
	static const char *const names[] = { [BT_LOG_ERR] = "error: ",
					     [BT_LOG_WARNING] = "warning: ",
					     [BT_LOG_DEBUG] = "debug: " };

	char *msg = NULL;

	if (level == BT_LOG_DEBUG && !bt_g.verbose)
		return;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	/* one fprintf a line: stderr is unbuffered, and three calls were
	 * three writes, which the agent's threads interleaved mid-line */
	if (stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", level, msg ? msg : fmt);
	else
		fprintf(stderr, "bloomtap: %s%s\n", names[level & 7] ? names[level & 7] : "",
			msg ? msg : fmt);
	free(msg);
}

void bt_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void bt_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (bt_g.json && !bt_g.json_out) {
		char buf[1024];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "error", json_object_new_string(buf));
		bt_json_print(o);
	} else {
		vlog(BT_LOG_ERR, fmt, ap);
	}
	va_end(ap);
}

void bt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(BT_LOG_WARNING, fmt, ap);
	va_end(ap);
}

void bt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(BT_LOG_INFO, fmt, ap);
	va_end(ap);
}

void bt_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(BT_LOG_DEBUG, fmt, ap);
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
	bt_g.json_out = true;
}

void bt_err_no_iface(const char *who, const char *ifname)
{
	bt_err("%s%sno such interface: '%s' (see 'ip link'; in another network namespace, run "
	       "bloomtap there with nsenter --net=/var/run/netns/NAME, not ip netns exec)",
	       who ? who : "", who ? ": " : "", ifname);
}
