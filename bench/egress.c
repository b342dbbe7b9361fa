// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's egress section: the egress program's stages as tc
 * programs under BPF_PROG_TEST_RUN, then live, frames forwarded out of a
 * veth of the lab (lab.c). */
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "base/util.h"
#include "bench.h"

/* The egress program's stages, as tc programs */
enum { EG_EMPTY, EG_PARSE, EG_HEAVY, EG_SPIE, EG_ALL, EG_TSO, EG_N };
static const char *const eg_names[EG_N] = {
	[EG_EMPTY] = "empty tc program (the floor)",
	[EG_PARSE] = "egress: parsing and counters",
	[EG_HEAVY] = "egress: parsing + heavy flows",
	[EG_SPIE] = "egress: parsing + SPIE",
	[EG_ALL] = "egress: everything",
	[EG_TSO] = "egress: everything, a TSO skb",
};
static struct target eg[EG_N] = { [EG_EMPTY] = { .drv_prog = "bench_tc_empty" } };

/* A 128-byte Ethernet/IPv4/TCP frame (ACK, 74 bytes of payload), or the
 * head of a TSO skb of segs segments of TSO_MSS bytes: its IP length
 * field is the whole skb's, as the stack sets it (the rest of the skb,
 * which no stage reads, is not there). */
static void frame_v4_tcp(struct frame *f, uint32_t segs)
{
	size_t ip;
	uint16_t tot;

	f->len = 0;
	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, 6, 5, 0x4000);	/* DF, as TCP sends */
	fr_ports(f, 1024, 443, 20);
	f->b[f->len - 8] = 0x50;	/* data offset: 20 bytes */
	f->b[f->len - 7] = 0x10;	/* ACK */
	fr_put(f, NULL, 128 - f->len);
	fr_ipv4_done(f, ip);
	if (segs > 1) {
		tot = htons(40 + segs * TSO_MSS);
		memcpy(f->b + ip + 2, &tot, 2);
	}
}

static int make_egress_targets(void)
{
	static const struct { int which; bool heavy, spie; } v[] = {
		{ EG_PARSE, false, false }, { EG_HEAVY, true, false }, { EG_SPIE, false, true },
		{ EG_ALL, true, true },
	};
	char what[16];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct target *t = &eg[v[i].which];

		snprintf(what, sizeof(what), "eg%d", v[i].which);
		if (make_bloomtap(t, what, v[i].heavy, v[i].spie, BT_META_EGRESS_MAPS, 0, 0) ||
		    t->inst.prog_egress_fd < 0)
			return -1;
		t->fd = t->inst.prog_egress_fd;
	}
	for (int e = 0; e < EG_N; e++)
		eg[e].tc = true;
	/* the TSO skb: the same instance as everything's, not its own */
	eg[EG_TSO] = eg[EG_ALL];
	eg[EG_TSO].name[0] = 0;
	eg[EG_TSO].gso_segs = TSO_SEGS;
	return 0;
}

#define LIVE_NS_C "btbench-c"
#define LIVE_IF_B2 "btbench-b2"
#define LIVE_IF_C "btbench-c"
#define LIVE_B2_MAC "02:00:00:00:00:0c"
#define LIVE_C_MAC "02:00:00:00:00:0d"

/* The egress live run's path: A's frames, addressed to B's MAC (with
 * checksums: gen_accepted), forwarded by B (198.18.0.2 is on B2's link)
 * out of B2 to C, where their rate is counted; 0, or -1 */
static int egress_path_up(void)
{
	return bt_sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
	       bt_sh("ip netns add " LIVE_NS_C) ||
	       bt_sh("ip link add " LIVE_IF_B2 " netns " LIVE_NS_B " address " LIVE_B2_MAC
		  " type veth peer name " LIVE_IF_C " netns " LIVE_NS_C " address " LIVE_C_MAC) ||
	       bt_sh("ip -n " LIVE_NS_B " addr add 198.18.200.1/24 dev " LIVE_IF_B) ||
	       bt_sh("ip -n " LIVE_NS_B " addr add 198.18.201.1/24 dev " LIVE_IF_B2) ||
	       bt_sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B2 " up") ||
	       bt_sh("ip -n " LIVE_NS_B " route add 198.18.0.2/32 dev " LIVE_IF_B2) ||
	       bt_sh("ip -n " LIVE_NS_C " link set " LIVE_IF_C " up") ||
	       bt_sh("ip -n " LIVE_NS_B " neigh replace 198.18.0.2 lladdr " LIVE_C_MAC " dev "
		  LIVE_IF_B2 " nud permanent") ||
	       bt_sh("ip netns exec " LIVE_NS_B " sysctl -qw net.ipv4.ip_forward=1 "
		  "net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 "
		  "net.ipv4.conf." LIVE_IF_B ".rp_filter=0 net.ipv4.conf.all.send_redirects=0") ? -1 : 0;
}

static __u64 rx_packets_c(void)
{
	return sh_number("ip -n " LIVE_NS_C " -s -j link show " LIVE_IF_C " | python3 -c "
			 "'import json,sys; print(json.load(sys.stdin)[0][\"stats64\"][\"rx\"][\"packets\"])'");
}

/* Frames a second forwarded to C with prog_fd (-1: none) on B2's egress,
 * a clsact filter (every kernel has it), B's ring kept turning when t */
static double live_egress_once(struct bench_bpf *skel, int home, const struct frame *fr,
			       int prog_fd, const struct target *t)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = 1, .priority = 1, .prog_fd = prog_fd);
	struct live_keeper lk = { .name = t ? t->name : NULL };
	struct timespec t0, t1;
	__u64 before, after;
	pthread_t th;
	int err = 0;

	if (bt_enter_netns(LIVE_NS_B) || !(hook.ifindex = if_nametoindex(LIVE_IF_B2)))
		err = -1;
	if (!err && prog_fd >= 0) {
		bpf_tc_hook_create(&hook);
		err = bpf_tc_attach(&hook, &o);
	}
	setns(home, CLONE_NEWNET);
	if (err)
		return -1;
	if (t)
		pthread_create(&th, NULL, keep_ring, &lk);
	before = rx_packets_c();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (bt_enter_netns(LIVE_NS_A) ||
	    bench_gen_send(skel, fr, if_nametoindex(LIVE_IF_A), LIVE_FRAMES / 4))
		err = -1;
	usleep(20000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	setns(home, CLONE_NEWNET);
	after = rx_packets_c();
	if (t) {
		lk.stop = true;
		pthread_join(th, NULL);
	}
	if (prog_fd >= 0 && !bt_enter_netns(LIVE_NS_B)) {
		o.prog_fd = o.prog_id = o.flags = 0;
		bpf_tc_detach(&hook, &o);
	}
	setns(home, CLONE_NEWNET);
	return err ? -1 : (after - before) / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* The egress program live: frames forwarded out of a veth (B2), with it
 * on B2's egress and without, an empty tc program the hook's floor; the
 * ingress live run is live_run's */
static void egress_live(FILE *f, const uint32_t *seq)
{
	/* none, then the egress targets EG_EMPTY (a bench program) to EG_ALL */
	enum { EL_NONE, EL_N = 1 + EG_ALL + 1, EL_ROUNDS = 9 };
	struct bench_bpf *skel = NULL;
	double rate[EL_N][EL_ROUNDS], m[EL_N], d[EL_ROUNDS];
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), xdp = 0;
	struct frame fr;

	if (live_up(home, &skel, seq) || egress_path_up() || bt_enter_netns(LIVE_NS_B) ||
	    !(xdp = if_nametoindex(LIVE_IF_B)) ||
	    bpf_xdp_attach(xdp, bpf_program__fd(skel->progs.bench_empty), XDP_FLAGS_DRV_MODE, NULL)) {
		setns(home, CLONE_NEWNET);
		out(stdout, f, "  live, forwarded out of a veth: skipped (could not set it up)\n");
		goto out;
	}
	setns(home, CLONE_NEWNET);
	skel->bss->gen_accepted = 1;
	bench_frame_v4_udp(&fr);
	for (int r = 0; r < EL_ROUNDS; r++) {
		rate[EL_NONE][r] = live_egress_once(skel, home, &fr, -1, NULL);
		rate[1 + EG_EMPTY][r] = live_egress_once(skel, home, &fr,
							 bpf_program__fd(skel->progs.bench_tc_empty),
							 NULL);
		for (int e = EG_PARSE; e <= EG_ALL; e++)
			rate[1 + e][r] = live_egress_once(skel, home, &fr, eg[e].fd,
							  eg[e].spie ? &eg[e] : NULL);
		for (int v = 0; v < EL_N; v++)
			if (rate[v][r] <= 0) {
				out(stdout, f, "  live, forwarded out of a veth: failed\n");
				goto out;
			}
	}
	for (int v = 0; v < EL_N; v++)
		m[v] = median(rate[v], EL_ROUNDS);
	out(stdout, f, "  live, %d frames (64-byte IPv4/UDP, Zipf flows) forwarded by B out of a "
	    "veth to C, medians of %d rounds; ns a frame over no program and over the empty one, "
	    "and the rounds' spread of the first (each against its own round's):\n"
	    "    %-38s %.2f Mpps (%.0f ns a frame)\n", LIVE_FRAMES / 4, EL_ROUNDS, "no egress program",
	    m[EL_NONE] / 1e6, 1e9 / m[EL_NONE]);
	for (int e = EG_EMPTY; e <= EG_ALL; e++) {
		for (int r = 0; r < EL_ROUNDS; r++)
			d[r] = 1e9 / rate[1 + e][r] - 1e9 / rate[EL_NONE][r];
		qsort(d, EL_ROUNDS, sizeof(*d), cmp_double);
		out(stdout, f, "    %-38s %.2f Mpps, %3.0f %% (%+4.0f ns, %+4.0f; rounds %+.0f to %+.0f)\n",
		    eg_names[e], m[1 + e] / 1e6, 100 * m[1 + e] / m[EL_NONE],
		    1e9 / m[1 + e] - 1e9 / m[EL_NONE], 1e9 / m[1 + e] - 1e9 / m[1 + EG_EMPTY], d[0],
		    d[EL_ROUNDS - 1]);
	}
out:
	if (skel)
		bench_bpf__destroy(skel);
	bt_sh("ip netns del " LIVE_NS_C);
	live_down();
	if (home >= 0)
		close(home);
}

/* The egress program under BPF_PROG_TEST_RUN: its stages on a
 * 128-byte TCP frame against an empty tc program, beside the XDP program
 * on the same frame; then a TSO skb of TSO_SEGS segments, whose digests
 * are rebuilt from its header one segment at a time (bpf/segments.bpf.h). */
static void egress_run(FILE *f, const uint32_t *seq)
{
	struct target *one[] = { &eg[EG_EMPTY], &eg[EG_PARSE], &eg[EG_HEAVY], &eg[EG_SPIE],
				 &eg[EG_ALL], &targets[P_EMPTY], &targets[P_ALL] };
	struct target *tso[] = { &eg[EG_EMPTY], &eg[EG_TSO] };
	double m[7], mt[2];
	struct frame fr, ft;

	if (make_egress_targets()) {
		out(stdout, f, "\negress: skipped (no egress program: this kernel has no bpf_loop)\n");
		return;
	}
	frame_v4_tcp(&fr, 1);
	frame_v4_tcp(&ft, TSO_SEGS);
	if (run_targets(&fr, false, seq, one, 7, m) || run_targets(&ft, false, seq, tso, 2, mt)) {
		out(stdout, f, "\negress: failed\n");
		return;
	}
	out(stdout, f, "\negress (tc, issue 38): BPF_PROG_TEST_RUN through a tc driver, a 128-byte "
	    "IPv4/TCP frame, Zipf flows; ns a packet, and over the empty tc program:\n");
	for (int e = EG_EMPTY; e <= EG_ALL; e++)
		out(stdout, f, "  %-40s %6.1f ns  %+6.1f\n", eg_names[e], m[e], m[e] - m[EG_EMPTY]);
	out(stdout, f, "  %-40s %6.1f ns  %+6.1f (over the empty XDP program, %.1f ns)\n",
	    "XDP: everything, the same frame", m[6], m[6] - m[5], m[5]);
	out(stdout, f, "  %-40s %6.1f ns  %+6.1f: %.1f ns a segment, %.2f of a packet's %+.1f "
	    "(%d segments' digests from one pass over the header)\n", eg_names[EG_TSO], mt[1],
	    mt[1] - mt[0], (mt[1] - mt[0]) / TSO_SEGS,
	    (mt[1] - mt[0]) / TSO_SEGS / (m[EG_ALL] - m[EG_EMPTY]), m[EG_ALL] - m[EG_EMPTY],
	    TSO_SEGS);
	egress_live(f, seq);
}

int bench_egress(struct bench_run *r)
{
	egress_run(r->f, r->seq);
	return 0;
}
