/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The times a user gives: trace's --since/--until/--at, the API's
 * since=, until=, at=, the recorder's --since. */
#ifndef BLOOMTAP_TIMEPARSE_H
#define BLOOMTAP_TIMEPARSE_H

#include <stddef.h>
#include <linux/types.h>

/* Epoch seconds, YYYY-MM-DDTHH:MM:SS[Z] (UTC), or -N[smhd] ago, into ns:
 * 0, -EINVAL for another form, -ERANGE outside 1970 to 2554 (what __u64
 * nanoseconds hold). */
int bt_parse_time(const char *s, __u64 *ns);
/* s (NULL: *ns left as it is) into ns, named name in err's message: 0,
 * or -EINVAL/-ERANGE with the problem in err (a bad form; a time outside
 * the clock's range, with that range). */
int bt_parse_time_named(const char *name, const char *s, __u64 *ns, char *err, size_t len);
/* since and until (each may be NULL: left as they are) into ns, named
 * dashes + "since" in messages: 0, or -EINVAL/-ERANGE with the problem in
 * err (a bad form, a time outside the clock's range, with that range, or
 * since after until). */
int bt_parse_time_range(const char *since, const char *until, const char *dashes, __u64 *s_ns,
			__u64 *u_ns, char *err, size_t len);

#endif /* BLOOMTAP_TIMEPARSE_H */
