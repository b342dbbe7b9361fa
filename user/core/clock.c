// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CLOCK_BOOTTIME to CLOCK_REALTIME. See clock.h. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <linux/types.h>
#include "clock.h"

__u64 bt_boot_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_BOOTTIME, &t);
	return (__u64)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static __s64 ts_ns(const struct timespec *t)
{
	return (__s64)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* CLOCK_REALTIME - CLOCK_BOOTTIME, from the tightest of three brackets
 * (boot, real, boot): the two clocks cannot be read at one instant. */
static __s64 real_minus_boot(void)
{
	/* a test steps the clock through this input of the conversion */
	const char *step = getenv("BLOOMTAP_TEST_CLOCK_STEP_S");
	__s64 shift = step ? (__s64)(atof(step) * 1e9) : 0, best = 0, gap = INT64_MAX;

	for (int i = 0; i < 3; i++) {
		struct timespec b0, r, b1;

		clock_gettime(CLOCK_BOOTTIME, &b0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_BOOTTIME, &b1);
		if (ts_ns(&b1) - ts_ns(&b0) < gap) {
			gap = ts_ns(&b1) - ts_ns(&b0);
			best = shift + ts_ns(&r) - (ts_ns(&b0) + gap / 2);
		}
	}
	return best;
}

/* The offset is kept while it moves by less than a millisecond (the unit
 * times are printed in), so that a window keeps one start in every answer
 * of a process: read afresh a conversion at a time, its jitter (the
 * reads' gap, tens of microseconds in a TCG guest) flipped the printed
 * millisecond between two answers. A clock step is taken at the next
 * second. */
__u64 bt_boot_to_real(__u64 boot_ns)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* the API's threads */
	static __s64 offset;
	static __u64 checked;	/* CLOCK_BOOTTIME ns */
	__u64 now, real;

	if (!boot_ns)
		return 0;
	now = bt_boot_ns();
	pthread_mutex_lock(&lock);
	if (!checked || now - checked >= 1000000000ULL) {
		__s64 fresh = real_minus_boot();

		if (!checked || llabs(fresh - offset) >= 1000000)
			offset = fresh;
		checked = now;
	}
	real = boot_ns + offset;
	pthread_mutex_unlock(&lock);
	return real;
}

__s64 bt_real_minus_boot(void)
{
	return (__s64)(bt_boot_to_real(1) - 1);
}
