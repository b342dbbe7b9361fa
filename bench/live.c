// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's live sections: bloomtap's programs at the far end of the
 * lab's veth pair (lab.c), frames a second; live: the traffic dropped
 * there by the stack; accepted: delivered to a socket. */
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/util.h"
#include "instance/drops.h"
#include "instance/link.h"
#include "report/counters.h"
#include "bench.h"

/* bloomtap attached at B as a user would (tap mode or not), its ring kept
 * turning: frames a second; with drops_too, also without its drop
 * programs (*xdp_only), the traffic dying in B's stack; -1 on failure. */
/* The drops the last live_attached round's drop programs saw: the
 * instance's, and the host's bucket (no owner), by reason. */
static char live_drops_seen[512];

static void drops_seen(const struct bt_instance *inst)
{
	const struct bt_instance *who[2] = { inst, NULL };
	size_t len = 0;

	live_drops_seen[0] = 0;
	for (int w = 0; w < 2; w++) {
		struct bt_drop_total *t;
		int n = bt_drops_totals(who[w], &t);
		char name[96];

		len += snprintf(live_drops_seen + len, sizeof(live_drops_seen) - len, "%s%s:",
				w ? "; " : "", w ? "host (no owner)" : "the instance");
		for (int i = 0; i < n && i < 3 && len < sizeof(live_drops_seen); i++)
			len += snprintf(live_drops_seen + len, sizeof(live_drops_seen) - len, " %s %llu",
					bt_drop_reason_name(t[i].code, name, sizeof(name)),
					(unsigned long long)t[i].packets);
		if (n <= 0 && len < sizeof(live_drops_seen))
			len += snprintf(live_drops_seen + len, sizeof(live_drops_seen) - len, " none");
		free(n > 0 ? t : NULL);
		if (len >= sizeof(live_drops_seen))
			break;
	}
}

static double live_attached(struct bench_bpf *skel, int home, const struct frame *fr, bool tap,
			    double *xdp_only, __u64 *counted)
{
	struct bt_attach_opts o = { .mode = BT_MODE_NATIVE, .tap = tap, .force = true };
	struct live_keeper lk = { .name = LIVE_IF_B };
	struct bt_instance inst = { .prog_drop_fd = -1 };
	pthread_t th;
	double rate;

	if (bt_enter_netns(LIVE_NS_B) || bt_attach(LIVE_IF_B, &o)) {
		setns(home, CLONE_NEWNET);
		return -1;
	}
	setns(home, CLONE_NEWNET);
	pthread_create(&th, NULL, keep_ring, &lk);
	rate = live_once(skel, home, fr);
	if (xdp_only)
		*xdp_only = -1;
	if (!bt_instance_open(LIVE_IF_B, &inst)) {
		__u64 c[BT_CTR_MAX];

		if (counted && !bt_instance_counters(&inst, c))
			*counted = c[BT_CTR_PACKETS];
		drops_seen(&inst);
		if (xdp_only) {
			bt_drops_unregister(&inst);
			*xdp_only = live_once(skel, home, fr);
		}
		bt_instance_close(&inst);
	}
	lk.stop = true;
	pthread_join(th, NULL);
	bt_detach(LIVE_IF_B, false);
	return rate;
}

/* bloomtap at B, its drops not recorded, while another instance (on B's
 * lo) keeps the host's drop program loaded: each frame's drop pays the
 * tracepoint and the host's program, which finds no owner for B and
 * counts it in its own bucket; the part of the drop path before the tail
 * call. */
static double live_host_only(struct bench_bpf *skel, int home, const struct frame *fr)
{
	struct bt_attach_opts lo = { .mode = BT_MODE_SKB, .force = true };
	double rate = -1;

	if (bt_enter_netns(LIVE_NS_B) || bt_attach("lo", &lo)) {
		setns(home, CLONE_NEWNET);
		return -1;
	}
	setns(home, CLONE_NEWNET);
	/* its rate without B's drop programs is this row's */
	if (live_attached(skel, home, fr, false, &rate, NULL) < 0)
		rate = -1;
	if (!bt_enter_netns(LIVE_NS_B))
		bt_detach("lo", false);
	setns(home, CLONE_NEWNET);
	return rate;
}

/* The empty program at B with an empty program on the drop tracepoint:
 * what any drop recorder pays a frame that dies in the stack. */
static double live_tracepoint_floor(struct bench_bpf *skel, int home, const struct frame *fr,
				    const struct target *empty)
{
	struct bpf_link *l = bpf_program__attach(skel->progs.bench_kfree_empty);
	double rate;

	if (!l)
		return -1;
	rate = live_target(skel, home, fr, empty);
	bpf_link__destroy(l);
	return rate;
}

/* The live run's programs at B, measured in turn in each round. */
enum { LV_EMPTY, LV_PARSE, LV_SPIE, LV_HEAVY, LV_ALL, LV_FLOOR, LV_HOST, LV_XDP, LV_WITH,
       LV_DROP_EMPTY, LV_TAP, LV_N };
#define LIVE_ROUNDS 5

static void live_run(FILE *f, const uint32_t *seq)
{
	struct bench_bpf *skel = NULL;
	struct frame fr;
	double rate[LV_N][LIVE_ROUNDS], m[LV_N];
	__u64 counted = 0;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (live_up(home, &skel, seq)) {
		out(stdout, f, "\nlive run: skipped (could not set up the veth pair)\n");
		goto out;
	}
	bench_frame_v4_udp(&fr);
	for (int r = 0; r < LIVE_ROUNDS; r++) {
		struct target empty = { .fd = bpf_program__fd(skel->progs.bench_empty) };
		struct target drop = { .fd = bpf_program__fd(skel->progs.bench_empty_drop) };

		/* the bench's instances (no drop programs); veth needs a
		 * program at B for XDP_TX, so "without" is the empty one */
		rate[LV_EMPTY][r] = live_target(skel, home, &fr, &empty);
		rate[LV_PARSE][r] = live_target(skel, home, &fr, &targets[P_PARSE]);
		rate[LV_SPIE][r] = live_target(skel, home, &fr, &targets[P_SPIE]);
		rate[LV_HEAVY][r] = live_target(skel, home, &fr, &targets[P_HEAVY]);
		rate[LV_ALL][r] = live_target(skel, home, &fr, &targets[P_ALL]);
		rate[LV_FLOOR][r] = live_tracepoint_floor(skel, home, &fr, &empty);
		rate[LV_HOST][r] = live_host_only(skel, home, &fr);
		/* B's stack drops every frame (not addressed to it:
		 * OTHERHOST), so the drop programs run once a frame */
		rate[LV_WITH][r] = live_attached(skel, home, &fr, false, &rate[LV_XDP][r], &counted);
		rate[LV_DROP_EMPTY][r] = live_target(skel, home, &fr, &drop);
		rate[LV_TAP][r] = live_attached(skel, home, &fr, true, NULL, NULL);
		for (int v = 0; v < LV_N; v++)
			if (rate[v][r] < 0)
				goto fail;
	}
	for (int v = 0; v < LV_N; v++)
		m[v] = median(rate[v], LIVE_ROUNDS);
	/* ns a frame over the empty program's; the share of its rate */
#define LIVE_NS(v) (1e9 / m[v] - 1e9 / m[LV_EMPTY])
#define OF(v, ref) (m[v] / m[ref])
#define MET(x, op, t) ((x) op (t) ? "met" : "MISSED")
	out(stdout, f, "\nlive run: %d frames (64-byte IPv4/UDP, Zipf flows) generated with "
	    "BPF_F_TEST_XDP_LIVE_FRAMES into a veth pair, received at the far end and dropped "
	    "there by its stack (OTHERHOST, a suppressed reason: a mirror port's traffic); "
	    "medians of %d rounds, the programs in turn:\n"
	    "  empty program:                      %.2f Mpps (%.0f ns a frame)\n"
	    "  parsing and counters:               %.2f Mpps, %3.0f %% (%+.0f ns a frame)\n"
	    "  parsing and SPIE:                   %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  parsing and heavy flows:            %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  everything (the bench's instance):  %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  empty program + an empty program on the drop tracepoint (the floor of any drop "
	    "recorder): %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  bloomtap attached, drops not recorded: %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  the same, the host's drop program loaded (by another instance), no owner for these "
	    "frames: %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  bloomtap attached:                  %.2f Mpps, %3.0f %% (%+.0f ns; %llu packets "
	    "counted by it in the last round)\n"
	    "  empty XDP_DROP program:             %.2f Mpps\n"
	    "  bloomtap attached in tap mode:      %.2f Mpps, %3.0f %% of the empty XDP_DROP "
	    "program (%+.0f ns a frame over it)\n"
	    "  target: the XDP program alone at least 75 %% of the empty program: %.0f %%: %s\n"
	    "  target: attached (drops recorded) at least 70 %%: %.0f %%: %s\n"
	    "  target: attached at least 0.95 of drops not recorded (a suppressed drop costs a "
	    "count): %.2f (the tracepoint's floor: %.2f of the empty program): %s\n"
	    "  target: tap mode at least 60 %% of the empty XDP_DROP program: %.0f %%: %s\n",
	    LIVE_FRAMES, LIVE_ROUNDS, m[LV_EMPTY] / 1e6, 1e9 / m[LV_EMPTY],
	    m[LV_PARSE] / 1e6, 100 * OF(LV_PARSE, LV_EMPTY), LIVE_NS(LV_PARSE),
	    m[LV_SPIE] / 1e6, 100 * OF(LV_SPIE, LV_EMPTY), LIVE_NS(LV_SPIE),
	    m[LV_HEAVY] / 1e6, 100 * OF(LV_HEAVY, LV_EMPTY), LIVE_NS(LV_HEAVY),
	    m[LV_ALL] / 1e6, 100 * OF(LV_ALL, LV_EMPTY), LIVE_NS(LV_ALL),
	    m[LV_FLOOR] / 1e6, 100 * OF(LV_FLOOR, LV_EMPTY), LIVE_NS(LV_FLOOR),
	    m[LV_XDP] / 1e6, 100 * OF(LV_XDP, LV_EMPTY), LIVE_NS(LV_XDP),
	    m[LV_HOST] / 1e6, 100 * OF(LV_HOST, LV_EMPTY), LIVE_NS(LV_HOST),
	    m[LV_WITH] / 1e6, 100 * OF(LV_WITH, LV_EMPTY), LIVE_NS(LV_WITH),
	    (unsigned long long)counted,
	    m[LV_DROP_EMPTY] / 1e6,
	    m[LV_TAP] / 1e6, 100 * OF(LV_TAP, LV_DROP_EMPTY), 1e9 / m[LV_TAP] - 1e9 / m[LV_DROP_EMPTY],
	    100 * OF(LV_XDP, LV_EMPTY), MET(OF(LV_XDP, LV_EMPTY), >=, 0.75),
	    100 * OF(LV_WITH, LV_EMPTY), MET(OF(LV_WITH, LV_EMPTY), >=, 0.70),
	    OF(LV_WITH, LV_XDP), OF(LV_FLOOR, LV_EMPTY), MET(OF(LV_WITH, LV_XDP), >=, 0.95),
	    100 * OF(LV_TAP, LV_DROP_EMPTY), MET(OF(LV_TAP, LV_DROP_EMPTY), >=, 0.60));
	goto out;
fail:
	setns(home, CLONE_NEWNET);
	out(stdout, f, "\nlive run: failed\n");
out:
	if (skel)
		bench_bpf__destroy(skel);
	live_down();
	if (home >= 0)
		close(home);
}

/* The accepted traffic's receiver: a UDP socket at B's address, drained
 * by a thread with recvmmsg until stop. */
struct live_sink {
	volatile bool stop;
	int fd;
	__u64 got;
};

static void *drain_sink(void *arg)
{
	struct live_sink *k = arg;
	static char bufs[64][128];
	struct mmsghdr msgs[64];
	struct iovec iov[64];

	for (int i = 0; i < 64; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (!k->stop) {
		struct timespec t = { 0, 10000000 };
		int n = recvmmsg(k->fd, msgs, 64, MSG_WAITFORONE, &t);

		if (n > 0)
			k->got += n;
	}
	return NULL;
}

static int sink_open(struct live_sink *k, int home)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(443),
				 .sin_addr.s_addr = htonl(0xc6120002) };
	struct timeval tv = { 0, 20000 };
	int big = 64 << 20;

	if (bt_enter_netns(LIVE_NS_B))
		return -1;
	k->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	setns(home, CLONE_NEWNET);
	if (k->fd < 0)
		return -1;
	setsockopt(k->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return bind(k->fd, (struct sockaddr *)&a, sizeof(a));
}

/* B's UDP drops at the socket (its receive buffer full), from its SNMP. */
static __u64 udp_rcvbuf_errors(void)
{
	return sh_number("ip netns exec " LIVE_NS_B " nstat -az UdpRcvbufErrors | "
			 "awk '/UdpRcvbufErrors/ {print $2}'");
}

enum { LA_EMPTY, LA_XDP, LA_WITH, LA_N };

/* The live run with traffic B accepts: each frame addressed to B's MAC,
 * address and a UDP port whose socket a thread drains, so the stack
 * delivers it; rows as in live_run, the drop programs idle unless the
 * socket overflows (counted). */
static void accepted_run(FILE *f, const uint32_t *seq)
{
	struct bench_bpf *skel = NULL;
	struct live_sink sink = { .fd = -1 };
	struct frame fr;
	double rate[LA_N][LIVE_ROUNDS], m[LA_N];
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	__u64 delivered0, overflow0;
	pthread_t th;
	bool draining = false;

	if (live_up(home, &skel, seq) ||
	    bt_sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
	    bt_sh("ip -n " LIVE_NS_B " addr add 198.18.0.2/15 dev " LIVE_IF_B) ||
	    sink_open(&sink, home)) {
		out(stdout, f, "\nlive run, accepted traffic: skipped (could not set up the lab)\n");
		goto out;
	}
	skel->bss->gen_accepted = 1;
	bench_frame_v4_udp(&fr);
	pthread_create(&th, NULL, drain_sink, &sink);
	draining = true;
	delivered0 = sink.got;
	overflow0 = udp_rcvbuf_errors();
	for (int r = 0; r < LIVE_ROUNDS; r++) {
		struct target empty = { .fd = bpf_program__fd(skel->progs.bench_empty) };

		rate[LA_EMPTY][r] = live_target(skel, home, &fr, &empty);
		rate[LA_WITH][r] = live_attached(skel, home, &fr, false, &rate[LA_XDP][r], NULL);
		for (int v = 0; v < LA_N; v++)
			if (rate[v][r] < 0)
				goto fail;
	}
	for (int v = 0; v < LA_N; v++)
		m[v] = median(rate[v], LIVE_ROUNDS);
	out(stdout, f, "\nlive run, accepted traffic: the same frames addressed to the far end's "
	    "MAC, address and a UDP port whose socket a thread drains (%llu datagrams delivered "
	    "in all, %llu dropped at the full socket); medians of %d rounds:\n"
	    "  empty program:                      %.2f Mpps (%.0f ns a frame)\n"
	    "  bloomtap attached, drops not recorded: %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  bloomtap attached:                  %.2f Mpps, %3.0f %% (%+.0f ns)\n"
	    "  target: attached at least 85 %% of the empty program: %.0f %%: %s\n"
	    "  drop events in the last attached round, by reason: %s\n",
	    (unsigned long long)(sink.got - delivered0),
	    (unsigned long long)(udp_rcvbuf_errors() - overflow0), LIVE_ROUNDS,
	    m[LA_EMPTY] / 1e6, 1e9 / m[LA_EMPTY],
	    m[LA_XDP] / 1e6, 100 * m[LA_XDP] / m[LA_EMPTY], 1e9 / m[LA_XDP] - 1e9 / m[LA_EMPTY],
	    m[LA_WITH] / 1e6, 100 * m[LA_WITH] / m[LA_EMPTY], 1e9 / m[LA_WITH] - 1e9 / m[LA_EMPTY],
	    100 * m[LA_WITH] / m[LA_EMPTY], MET(m[LA_WITH] / m[LA_EMPTY], >=, 0.85),
	    live_drops_seen);
#undef LIVE_NS
#undef OF
#undef MET
	goto out;
fail:
	setns(home, CLONE_NEWNET);
	out(stdout, f, "\nlive run, accepted traffic: failed\n");
out:
	if (draining) {
		sink.stop = true;
		pthread_join(th, NULL);
	}
	if (sink.fd >= 0)
		close(sink.fd);
	if (skel)
		bench_bpf__destroy(skel);
	live_down();
	if (home >= 0)
		close(home);
}

int bench_live(struct bench_run *r)
{
	live_run(r->f, r->seq);
	return 0;
}

int bench_accepted(struct bench_run *r)
{
	accepted_run(r->f, r->seq);
	return 0;
}
