/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Small helpers more than one command needs. */
#ifndef BLOOMTAP_UTIL_H
#define BLOOMTAP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A BPF_F_MMAPABLE array map, read-write; NULL on failure (errno set). */
void *bt_mmap_array(int fd, size_t bytes, size_t *mapped_len);
/* The same, read-only unless writable. */
void *bt_mmap_array_prot(int fd, size_t bytes, size_t *mapped_len, bool writable);
/* CLOCK_REALTIME ns as ISO 8601 UTC with milliseconds; none_text for 0. */
const char *bt_fmt_ns(__u64 ns, char *buf, size_t len, const char *none_text);
/* Sorted names in dir that keep() accepts; free with bt_strv_free(). */
int bt_list_dir(const char *dir, bool (*keep)(const char *name), char ***out, int *n);
void bt_strv_free(char **v, int n);
/* CLOCK_MONOTONIC in seconds: intervals, timeouts, rates. */
double bt_mono_s(void);
/* Runs a shell command line made as printf makes it, logged at debug
 * level, its output thrown away unless -v: 0 when it exits 0, else -1.
 * For labs of namespaces and veth pairs (ip(8)), never for user input. */
int bt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Moves the calling thread into the network namespace /var/run/netns/NAME
 * (setns, not ip netns exec: /sys and its bpffs stay as they are). */
int bt_enter_netns(const char *name);

/* Returns once no XDP program that began before can still be running:
 * whatever it read before, it wrote (an RCU grace period, 5 to 50 ms here). */
void bt_grace_period(void);

/* Tests only: with BLOOMTAP_TEST_KILL=STEP:N in the environment, the Nth
 * time the process reaches the named step it SIGKILLs itself there, so a
 * test can stop a keeper at a chosen point of its turn instead of guessing
 * with a sleep. Costs one comparison when the variable is unset. */
void bt_test_kill_point(const char *step);
/* Tests only: with BLOOMTAP_TEST_PAUSE=STEP:FILE, the first time the
 * process reaches the step it says so on stderr ("test: paused at STEP")
 * and waits until FILE exists (a minute at most): a test holds a race's
 * window open while it does the other side, no timing involved. */
void bt_test_pause(const char *step);

#endif /* BLOOMTAP_UTIL_H */
