// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timeparse.h"

/* Epoch seconds, an ISO 8601 UTC time, or -N[smhd] before now. */
/* The clock's range: __u64 nanoseconds since the epoch, up to
 * 18446744073.7 s, 2554-07-21T23:34:33Z (whole seconds below it). */
#define TIME_MAX_S 18446744073.0

int bt_parse_time(const char *s, __u64 *ns)
{
	struct tm tm = { 0 };
	char *end;
	double v;
	time_t t;

	if (s[0] == '-') {
		v = strtod(s + 1, &end);
		double mult = *end == 's' || !*end ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 :
			      *end == 'd' ? 86400 : -1;

		if (end == s + 1 || mult < 0 || (*end && end[1]) || !(v >= 0))
			return -EINVAL;
		v = (double)time(NULL) - v * mult;
		if (!(v >= 0 && v <= TIME_MAX_S))	/* before 1970, or inf */
			return -ERANGE;
		*ns = (__u64)(v * 1e9);
		return 0;
	}
	v = strtod(s, &end);
	if (end != s && !*end && v >= 0) {
		if (!(v <= TIME_MAX_S))
			return -ERANGE;
		*ns = (__u64)(v * 1e9);
		return 0;
	}
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, "Z")))
		return -EINVAL;
	t = timegm(&tm);
	if (t < 0 || t > (time_t)TIME_MAX_S)
		return -ERANGE;
	*ns = (__u64)t * 1000000000ULL;
	return 0;
}

int bt_parse_time_named(const char *name, const char *s, __u64 *ns, char *err, size_t len)
{
	int rc = s ? bt_parse_time(s, ns) : 0;

	if (rc == -ERANGE)
		snprintf(err, len, "%s '%s' is outside the clock's range: from 0 "
			 "(1970-01-01T00:00:00Z) to %.0f (2554-07-21T23:34:33Z) epoch seconds, "
			 "or -N[smhd] back to 1970 (at most -%llds)", name, s, TIME_MAX_S,
			 (long long)time(NULL));
	else if (rc)
		snprintf(err, len, "%s '%s': give epoch seconds, YYYY-MM-DDTHH:MM:SS[Z] or "
			 "-N[smhd]", name, s);
	return rc;
}

int bt_parse_time_range(const char *since, const char *until, const char *dashes, __u64 *s_ns,
			__u64 *u_ns, char *err, size_t len)
{
	char sn[16], un[16];
	int rc;

	snprintf(sn, sizeof(sn), "%ssince", dashes);
	snprintf(un, sizeof(un), "%suntil", dashes);
	if ((rc = bt_parse_time_named(sn, since, s_ns, err, len)) ||
	    (rc = bt_parse_time_named(un, until, u_ns, err, len)))
		return rc;
	if (since && until && *s_ns > *u_ns) {
		snprintf(err, len, "%s '%s' is after %s '%s': the range is empty", sn, since, un,
			 until);
		return -EINVAL;
	}
	return 0;
}
