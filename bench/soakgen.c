// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make soak's traffic: the bench generator (BPF_F_TEST_XDP_LIVE_FRAMES,
 * Zipf flows, every packet numbered) sending out of a veth in a namespace
 * for a given time, as fast as this machine goes. It writes the flow
 * sequence and the frame template for tests/oracle/soak.py's ground truth, then
 * a line a chunk: "sent MONOTONIC_SECONDS PACKETS_SO_FAR".
 *
 * Usage: soakgen NETNS IFACE SECONDS SEQ_FILE */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "base/util.h"
#include "driver.h"

#define CHUNK (1u << 20)	/* frames a BPF_PROG_TEST_RUN call, about half a second: each
				 * call with a repeat count switches the XDP dispatcher,
				 * two RCU grace periods */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int write_seq(const char *path, const uint32_t *seq)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(seq, sizeof(*seq), BENCH_SEQ_LEN, f) == BENCH_SEQ_LEN;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct bench_bpf *skel;
	struct frame fr;
	uint32_t *seq;
	cpu_set_t cpu;
	double t0, seconds;
	int ifindex, err;

	if (argc != 5 || (seconds = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: soakgen NETNS IFACE SECONDS SEQ_FILE\n");
		return 2;
	}
	libbpf_set_print(NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* one CPU for traffic (and the peer's NAPI, run after each batch), the
	 * other for the agent */
	CPU_ZERO(&cpu);
	CPU_SET(0, &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	seq = bench_seq_zipf();
	if (!seq || write_seq(argv[4], seq)) {
		fprintf(stderr, "soakgen: writing %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	skel = bench_driver_open(false, seq, 4096, 0, NULL);
	if (!skel) {
		fprintf(stderr, "soakgen: loading the generator failed\n");
		return 1;
	}
	bench_frame_v4_udp(&fr);
	printf("frame ");
	for (size_t i = 0; i < fr.len; i++)
		printf("%02x", fr.b[i]);
	printf("\n");
	fflush(stdout);
	if ((err = bt_enter_netns(argv[1])) || !(ifindex = if_nametoindex(argv[2]))) {
		fprintf(stderr, "soakgen: %s in %s: %s\n", argv[2], argv[1],
			strerror(err ? -err : errno));
		return 1;
	}
	t0 = now_s();
	while (!stop && now_s() - t0 < seconds) {
		err = bench_gen_send(skel, &fr, ifindex, CHUNK);
		if (err) {
			fprintf(stderr, "soakgen: live frames: %s\n", strerror(-err));
			return 1;
		}
		printf("sent %.6f %llu\n", now_s(), (unsigned long long)skel->bss->cursor);
		fflush(stdout);
	}
	printf("done %.6f %llu\n", now_s(), (unsigned long long)skel->bss->cursor);
	bench_bpf__destroy(skel);
	free(seq);
	return 0;
}
