// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's drops section: what a drop event costs, bloomtap attached
 * at the far end of the lab's veth pair (lab.c), each frame dropped by
 * that kernel. */
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "base/util.h"
#include "instance/drops.h"
#include "instance/link.h"
#include "instance/recorder.h"
#include "bench.h"

/* Busy time of all CPUs from /proc/stat, in seconds (USER_HZ ticks). */
static double cpu_busy_s(void)
{
	unsigned long long v[8] = { 0 };
	FILE *p = fopen("/proc/stat", "r");
	int n = p ? fscanf(p, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;

	if (p)
		fclose(p);
	/* user nice system (idle) (iowait) irq softirq steal */
	return n == 8 ? (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK)
		      : 0;
}

/* A program's run time and runs (BPF_ENABLE_STATS) by its id. */
static void prog_stats(__u32 id, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	*ns = *cnt = 0;
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
	if (fd >= 0)
		close(fd);
}

static __u32 pinned_prog_id(const char *link_pin)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(link_pin);
	__u32 id = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.prog_id : 0;

	if (fd >= 0)
		close(fd);
	return id;
}

/* The cost of a drop event: the live generator's frames reach
 * B with a zero IP checksum, addressed to B's MAC: each is dropped by the
 * kernel (IP_CSUM) after bloomtap's XDP program saw it, so each runs the
 * host's drop program and the instance's, and gets a digest. Measured two
 * ways in the same run: the programs' own run time (BPF_ENABLE_STATS, the
 * drop program against the XDP program on the same packets), and the
 * machine's busy time with the drop programs registered and without. */
/* The instance's own owner entry made a workload device's (what the
 * agent writes for a container's veth end: digest-checked, its key in the
 * instance's drop_shared first), so that each drop takes the path of a
 * drop in a workload's namespace: the drop_shared lookup that finds it,
 * and the probe of the windows (drop_seen) that finds the digest the XDP
 * program put there. Called in the instance's namespace. */
static void as_workload(const struct bt_instance *inst)
{
	struct bt_drop_owner k = { .ifindex = inst->meta.ifindex };
	int ofd = bpf_obj_get(BT_DROPS_DIR "/drop_owners");
	__u32 v, one = 1;
	struct stat st;

	if (ofd >= 0 && !stat("/proc/self/ns/net", &st)) {
		k.netns = st.st_ino;
		if (!bpf_map_lookup_elem(ofd, &k, &v) &&
		    !bpf_map_update_elem(inst->drop_shared_fd, &k, &one, 0)) {
			v |= BT_DROP_UPPER | BT_DROP_DIGEST | BT_DROP_WORKLOAD;
			bpf_map_update_elem(ofd, &k, &v, 0);
		}
	}
	if (ofd >= 0)
		close(ofd);
}

static void drops_run_ring(FILE *f, const uint32_t *seq, __u32 ring, bool workload)
{
	struct bench_bpf *skel = NULL;
	struct frame fr;
	double with[3], without[3], dns[3], xns[3];
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), stats_fd = -1;
	struct bt_instance inst = { .prog_drop_fd = -1 };
	bool opened = false;
	__u64 drops = 0;

	if (live_up(home, &skel, seq) ||
	    bt_sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
	    bt_enter_netns(LIVE_NS_B) ||
	    bt_attach(LIVE_IF_B, &(struct bt_attach_opts){ .mode = BT_MODE_NATIVE,
							   .drop_ring_set = true,
							   .drop_ring = ring })) {
		setns(home, CLONE_NEWNET);
		out(stdout, f, "\ndrop cost: skipped (could not set up the veth pair)\n");
		goto out;
	}
	opened = !bt_instance_open(LIVE_IF_B, &inst);
	if (opened && workload)
		as_workload(&inst);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	bench_frame_v4_udp(&fr);
	for (int r = 0; opened && r < 3; r++) {
		__u32 host = pinned_prog_id(BT_DROPS_DIR "/link");
		__u32 xdp = pinned_prog_id(BT_PIN_ROOT "/" LIVE_IF_B "/link");
		__u64 h0, hc0, x0, xc0, h1, hc1, x1, xc1;
		struct live_keeper lk = { .name = LIVE_IF_B };
		pthread_t th;
		double c0, c1;

		/* with: registered (attach did, and again after each without) */
		pthread_create(&th, NULL, keep_ring, &lk);
		prog_stats(host, &h0, &hc0);
		prog_stats(xdp, &x0, &xc0);
		c0 = cpu_busy_s();
		live_once(skel, home, &fr);
		c1 = cpu_busy_s();
		prog_stats(host, &h1, &hc1);
		prog_stats(xdp, &x1, &xc1);
		lk.stop = true;
		pthread_join(th, NULL);
		with[r] = c1 - c0;
		dns[r] = hc1 > hc0 ? (double)(h1 - h0) / (hc1 - hc0) : 0;
		xns[r] = xc1 > xc0 ? (double)(x1 - x0) / (xc1 - xc0) : 0;
		drops = hc1 - hc0;
		/* without: the same instance, its drops not registered (the
		 * host program goes with the last) */
		bt_drops_unregister(&inst);
		c0 = cpu_busy_s();
		live_once(skel, home, &fr);
		without[r] = cpu_busy_s() - c0;
		if (bt_enter_netns(LIVE_NS_B) || bt_drops_register(&inst, NULL))
			break;
		if (workload)
			as_workload(&inst);
		setns(home, CLONE_NEWNET);
	}
	setns(home, CLONE_NEWNET);
	if (!opened || !drops) {
		out(stdout, f, "\ndrop cost: failed (no drop counted)\n");
		goto out;
	}
	double md = median(dns, 3), mx = median(xns, 3), mw = median(with, 3),
	       mo = median(without, 3), cpu_ns = (mw - mo) * 1e9 / drops;

	if (workload)
		out(stdout, f, "\ndrop cost of a workload device's drop (--drop-ring 0; the "
		    "device's entry digest-checked, as a container's veth end's: the digest "
		    "looked for in the windows, and found):");
	else if (ring)
		out(stdout, f, "\ndrop cost with the drop recorder: %u slots a CPU of %u bytes "
		    "(%u bytes a slot, %llu bytes a CPU), each drop's head copied:", ring,
		    BT_DROP_HEAD_DEFAULT, (unsigned)BT_DROP_REC_SIZE(BT_DROP_HEAD_DEFAULT),
		    (unsigned long long)bt_recorder_bytes_per_cpu(&inst.meta));
	else
		out(stdout, f, "\ndrop cost without the drop recorder (--drop-ring 0):");
	out(stdout, f, "\ndrop cost: %d frames into a veth pair (BPF_F_TEST_XDP_LIVE_FRAMES), each "
	    "dropped by B's kernel (IP_CSUM) after bloomtap's XDP program (%llu drop events in the "
	    "last round):\n"
	    "  programs' own run time (BPF_ENABLE_STATS, which adds two clock reads to each run):\n"
	    "    drop event (host program + the instance's, tail-called): %.0f ns\n"
	    "    XDP program, the same packets:                            %.0f ns\n"
	    "    ratio %.2f; target at most 2: %s\n"
	    "  busy time of the machine, 3 rounds each: with the drop programs %.2f s, without "
	    "%.2f s: %.0f ns a drop, %.1f %% of a core at 1 Mpps of drops\n",
	    LIVE_FRAMES, (unsigned long long)drops, md, mx, md / mx,
	    md <= 2 * mx ? "met" : "MISSED", mw, mo, cpu_ns, cpu_ns / 10);
	if (workload) {
		__u64 c[BT_DROP_CTR_MAX];

		bt_drops_counters(&inst, c);
		out(stdout, f, "  the instance's counters (all rounds): digested %llu, shared_not_seen "
		    "%llu\n", (unsigned long long)c[BT_DROP_DIGESTED],
		    (unsigned long long)c[BT_DROP_SHARED_NOT_SEEN]);
	}
out:
	if (stats_fd >= 0)
		close(stats_fd);
	if (opened) {
		bt_drops_unregister(&inst);
		bt_instance_close(&inst);
	}
	/* detached where its interface is: from the home namespace the
	 * instance is not found, and the next run's attach met its pins */
	if (!bt_enter_netns(LIVE_NS_B))
		bt_detach(LIVE_IF_B, false);
	setns(home, CLONE_NEWNET);
	if (skel)
		bench_bpf__destroy(skel);
	live_down();
	if (home >= 0)
		close(home);
}

/* The drop event without the recorder, then with it at its default
 * size, then a workload device's (without the recorder): the rows to
 * compare. */
static void drops_run(FILE *f, const uint32_t *seq, const char *arg)
{
	bool wl = !strcmp(arg ? arg : "", "workload");

	drops_run_ring(f, seq, 0, false);
	if (!wl)	/* drops=workload: the direct and the workload rows */
		drops_run_ring(f, seq, BT_DROP_RING_DEFAULT, false);
	drops_run_ring(f, seq, 0, true);
}

int bench_drops(struct bench_run *r)
{
	drops_run(r->f, r->seq, r->arg);
	return 0;
}
