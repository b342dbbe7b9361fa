/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Helpers for the tests that load the real XDP program. */
#ifndef BLOOMTAP_TESTLIB_H
#define BLOOMTAP_TESTLIB_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "bloomtap.h"
#include "hash.h"
#include "bloomtap.skel.h"
#include "instance/create.h"
#include "instance/instance.h"
#include "instance/replay.h"

/* The real program, loaded fresh for one test, not pinned. */
struct dp {
	struct bloomtap_bpf *skel;
	struct bt_instance inst;	/* fds borrowed from skel */
	const void *arg;		/* a table-driven test's row */
};

/* The CPUs the tests may use: the process's affinity as it started (taskset
 * may have given it any set, CPU 0 or not), read before the first pinning. */
static inline int allowed_cpus(const int **list)
{
	static int cpus[CPU_SETSIZE], n = -1;
	cpu_set_t set;

	if (n < 0) {
		n = 0;
		if (!sched_getaffinity(0, sizeof(set), &set))
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					cpus[n++] = c;
	}
	if (list)
		*list = cpus;
	return n;
}

/* Pins the calling thread to the i-th allowed CPU (BPF_PROG_TEST_RUN runs
 * on the caller's CPU): "both CPUs" are two distinct ones of the set. */
static inline int pin_to_cpu(int i)
{
	const int *cpus;
	int n = allowed_cpus(&cpus);
	cpu_set_t set;

	if (i >= n)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpus[i], &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Skips the test, saying why, unless two CPUs are allowed. */
#define skip_unless_two_cpus() do {						\
	if (allowed_cpus(NULL) < 2) {						\
		print_message("SKIP: needs two allowed CPUs (this process may use %d)\n", \
			      allowed_cpus(NULL));					\
		skip();								\
	}									\
} while (0)

static inline void skip_unless_root(void)
{
	if (geteuid() != 0) {
		print_message("SKIP: needs root for bpf(2) (BPF_PROG_TEST_RUN)\n");
		skip();
	}
}

/* An instance a test makes for itself: named here, and removed by the
 * teardown, also when the test failed. */
static char own_name[64] __attribute__((unused));

static inline const char *own_instance(const char *what)
{
	snprintf(own_name, sizeof(own_name), "test-%s-%d", what, getpid());
	return own_name;
}

static inline int own_instance_teardown(void **state)
{
	if (own_name[0])
		bt_instance_remove(own_name);
	own_name[0] = 0;
	return 0;
}

/* The group's instance: made by group_instance_setup() with the settings
 * in group_instance_cfg (the suite sets them first), removed by
 * group_instance_teardown(), also when a test failed. *state is the open
 * instance, or NULL when not root (every test then skips). */
static struct bt_instance_cfg group_instance_cfg __attribute__((unused));
static char group_name[64] __attribute__((unused));

static inline int group_instance_setup(void **state)
{
	struct bt_instance *inst;

	*state = NULL;
	if (geteuid() != 0)
		return 0;
	inst = calloc(1, sizeof(*inst));
	snprintf(group_name, sizeof(group_name), "test-group-%d", getpid());
	bt_instance_remove(group_name);	/* a run killed before its teardown */
	if (!inst || bt_instance_create(group_name, &group_instance_cfg, inst)) {
		free(inst);
		return -1;
	}
	*state = inst;
	return 0;
}

static inline int group_instance_teardown(void **state)
{
	if (*state) {
		bt_instance_close(*state);
		free(*state);
		bt_instance_remove(group_name);
	}
	return 0;
}

static inline int dp_setup(void **state)
{
	struct dp *dp;

	if (geteuid() != 0) {
		*state = NULL;
		return 0;
	}
	dp = calloc(1, sizeof(*dp));
	if (!dp || !(dp->skel = bloomtap_bpf__open()))
		goto err;
	dp->skel->rodata->cfg_flow_table = 1;
	bpf_map__set_max_entries(dp->skel->maps.flows, 65536);
	if (bloomtap_bpf__load(dp->skel))
		goto err;
	dp->inst.prog_fd = bpf_program__fd(dp->skel->progs.bloomtap_xdp);
	dp->inst.prog_mb_fd = bpf_program__fd(dp->skel->progs.bloomtap_xdp_mb);
	dp->inst.counters_fd = bpf_map__fd(dp->skel->maps.counters);
	dp->inst.flows_fd = bpf_map__fd(dp->skel->maps.flows);
	dp->inst.meta_fd = bpf_map__fd(dp->skel->maps.meta);
	*state = dp;
	return 0;
err:
	if (dp)
		bloomtap_bpf__destroy(dp->skel);
	free(dp);
	return -1;
}

static inline int dp_teardown(void **state)
{
	struct dp *dp = *state;

	if (dp) {
		bloomtap_bpf__destroy(dp->skel);
		free(dp);
	}
	return 0;
}

/* Runs one frame and checks the one promise every packet gets: XDP_PASS.
 * Frames that do not fit a page go to the multi-buffer entry point. */
static inline void dp_run(struct dp *dp, const void *frame, uint32_t len)
{
	uint32_t action = 0;
	int fd = len > 3000 ? dp->inst.prog_mb_fd : dp->inst.prog_fd;
	int err = bt_run_frame(fd, frame, len, &action);

	assert_int_equal(err, 0);
	assert_int_equal(action, XDP_PASS);
}

static inline void dp_counters(struct dp *dp, __u64 c[BT_CTR_MAX])
{
	assert_int_equal(bt_instance_counters(&dp->inst, c), 0);
	/* The class invariants hold after every test (include/bloomtap.h). */
	assert_int_equal(c[BT_CTR_PACKETS],
			 c[BT_CTR_L3_IPV4] + c[BT_CTR_L3_IPV6] + c[BT_CTR_L3_OTHER]);
	assert_int_equal(c[BT_CTR_L3_IPV4] + c[BT_CTR_L3_IPV6],
			 c[BT_CTR_L4_TCP] + c[BT_CTR_L4_UDP] + c[BT_CTR_L4_SCTP] +
			 c[BT_CTR_L4_ICMP] + c[BT_CTR_L4_ICMPV6] + c[BT_CTR_L4_OTHER]);
}

/* The only flow in the table; fails unless there is exactly one. */
static inline void dp_only_flow(struct dp *dp, struct bt_flow_key *k, struct bt_flow_val *v)
{
	struct bt_flow_ent *e;
	size_t n;

	assert_int_equal(bt_flow_table_dump(dp->inst.flows_fd, &e, &n), 0);
	assert_int_equal(n, 1);
	*k = e[0].key;
	*v = e[0].val;
	free(e);
}

static inline size_t dp_nflows(struct dp *dp)
{
	struct bt_flow_ent *e;
	size_t n;

	assert_int_equal(bt_flow_table_dump(dp->inst.flows_fd, &e, &n), 0);
	free(e);
	return n;
}

#endif /* BLOOMTAP_TESTLIB_H */
