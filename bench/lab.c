// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The live sections' lab (bench.h): a veth pair between two namespaces,
 * the driver's generator at one end, a program at the other, and the
 * rate of frames that arrive there. */
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "base/util.h"
#include "instance/keeper.h"
#include "instance/link.h"
#include "instance/spie.h"
#include "bench.h"

void live_down(void)
{
	bt_sh("ip netns del " LIVE_NS_A);
	bt_sh("ip netns del " LIVE_NS_B);
	bt_instance_remove(LIVE_IF_B);
}

/* The number a shell command prints (0 when it prints none). */
__u64 sh_number(const char *cmd)
{
	char buf[256] = "";
	FILE *p = popen(cmd, "r");

	if (!p)
		return 0;
	if (!fgets(buf, sizeof(buf), p))
		buf[0] = 0;
	pclose(p);
	return strtoull(buf, NULL, 10);
}

static __u64 rx_packets_b(void)
{
	return sh_number("ip -n " LIVE_NS_B " -s -j link show " LIVE_IF_B " | python3 -c "
			 "'import json,sys; print(json.load(sys.stdin)[0][\"stats64\"][\"rx\"][\"packets\"])'");
}

/* One live measurement: frames a second received at B. */
double live_once(struct bench_bpf *skel, int home, const struct frame *f)
{
	struct timespec t0, t1;
	__u64 before = rx_packets_b(), after;
	int err;

	if (bt_enter_netns(LIVE_NS_A))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bench_gen_send(skel, f, if_nametoindex(LIVE_IF_A), LIVE_FRAMES);
	usleep(20000);	/* the last frames cross the veth */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	setns(home, CLONE_NEWNET);
	if (err) {
		fprintf(stderr, "bench: live frames: %s\n", strerror(-err));
		return -1;
	}
	after = rx_packets_b();
	return (after - before) / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

void *keep_ring(void *arg)
{
	struct live_keeper *lk = arg;
	struct bt_instance inst;
	struct bt_spie_maps sm;
	struct bt_keeper k = { .sm = &sm };

	if (bt_instance_open(lk->name, &inst))
		return NULL;
	if (!bt_spie_map(&inst, &sm)) {
		k.name = inst.name;
		while (!lk->stop) {
			bt_keeper_turn(&k, false, false);
			usleep(10000);
		}
		bt_spie_unmap(&sm);
	}
	bt_instance_close(&inst);
	return NULL;
}

/* The live runs' veth pair and generator: 0, or -1 (then skipped). */
int live_up(int home, struct bench_bpf **skel, const uint32_t *seq)
{
	live_down();
	return home < 0 || bt_sh("ip netns add " LIVE_NS_A) || bt_sh("ip netns add " LIVE_NS_B) ||
	       bt_sh("ip link add " LIVE_IF_A " netns " LIVE_NS_A " type veth peer name " LIVE_IF_B
		  " netns " LIVE_NS_B) ||
	       bt_sh("ip -n " LIVE_NS_A " link set " LIVE_IF_A " up") ||
	       bt_sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " up") ||
	       load_driver(skel, false, seq) ? -1 : 0;
}

/* One live measurement with a bench instance's program at B (no drop
 * programs), its ring kept turning: -1 when it cannot be attached. */
double live_target(struct bench_bpf *skel, int home, const struct frame *fr,
		   const struct target *t)
{
	struct live_keeper lk = { .name = t->name };
	pthread_t th;
	double rate;
	int ifindex;

	if (bt_enter_netns(LIVE_NS_B) || !(ifindex = if_nametoindex(LIVE_IF_B)) ||
	    bpf_xdp_attach(ifindex, t->fd, XDP_FLAGS_DRV_MODE, NULL)) {
		setns(home, CLONE_NEWNET);
		return -1;
	}
	setns(home, CLONE_NEWNET);
	if (t->spie)
		pthread_create(&th, NULL, keep_ring, &lk);
	rate = live_once(skel, home, fr);
	if (t->spie) {
		lk.stop = true;
		pthread_join(th, NULL);
	}
	if (bt_enter_netns(LIVE_NS_B) || bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL))
		rate = -1;
	setns(home, CLONE_NEWNET);
	return rate;
}
