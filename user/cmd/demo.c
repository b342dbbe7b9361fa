// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* demo: the built-in lab. Two network namespaces joined by a veth pair
 * (198.18.0.0/15, RFC 2544 benchmarking space), bloomtap attached at one
 * end, a few seconds of mixed traffic from the other, what bloomtap saw,
 * and everything removed again, also on Ctrl-C. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>
#include "base/common.h"
#include "commands.h"
#include "instance/link.h"
#include "report/heavy_report.h"
#include "report/drops_report.h"
#include "report/counters.h"
#include "report/classes.h"
#include "report/trace_query.h"
#include "base/util.h"
#include "base/options.h"
#include "instance/sketch.h"
#include "instance/watch.h"
#include "instance/recorder.h"
#include "core/pcapng.h"

/* Names carry the demo's PID, so that two demos (or two test runs) on one
 * machine never meet: namespaces btdemo-a-PID (the sender) and btdemo-b-PID
 * (bloomtap watches its interface), veth btda-PID -- btdb-PID. */
static char NS_A[32], NS_B[32], IF_A[IFNAMSIZ], IF_B[IFNAMSIZ];
#define ADDR_A "198.18.0.1"
#define ADDR_B "198.18.0.2"
#define LIGHT_FLOWS 200
#define HEAVY_FLOWS 3

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void lab_names(pid_t pid)
{
	snprintf(NS_A, sizeof(NS_A), "btdemo-a-%d", (int)pid);
	snprintf(NS_B, sizeof(NS_B), "btdemo-b-%d", (int)pid);
	snprintf(IF_A, sizeof(IF_A), "btda-%d", (int)pid);
	snprintf(IF_B, sizeof(IF_B), "btdb-%d", (int)pid);
}

static void lab_down(int home_ns)
{
	if (home_ns >= 0)
		setns(home_ns, CLONE_NEWNET);
	if (bt_instance_exists(IF_B))
		bt_detach(IF_B, false);
	bt_sh("ip netns del %s", NS_A);
	bt_sh("ip netns del %s", NS_B);
}

/* What demos that were killed left behind: the labs of PIDs that no
 * longer run. */
static void leftover_labs_down(int home_ns)
{
	DIR *d = opendir("/var/run/netns");
	struct dirent *de;
	int pid;

	/* either namespace: a demo killed while it made its lab has only A */
	while (d && (de = readdir(d)))
		if ((sscanf(de->d_name, "btdemo-a-%d", &pid) == 1 ||
		     sscanf(de->d_name, "btdemo-b-%d", &pid) == 1) && pid != getpid() &&
		    kill(pid, 0) && errno == ESRCH) {
			lab_names(pid);
			lab_down(home_ns);
		}
	if (d)
		closedir(d);
	lab_names(getpid());
}

static int lab_up(void)
{
	/* IPv6 off so that the counts show only what the demo sends */
	return bt_sh("ip netns add %s", NS_A) || bt_sh("ip netns add %s", NS_B) ||
	       bt_sh("nsenter --net=/var/run/netns/%s sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
		  NS_A) ||
	       bt_sh("nsenter --net=/var/run/netns/%s sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
		  NS_B) ||
	       bt_sh("ip link add %s netns %s type veth peer name %s netns %s", IF_A, NS_A, IF_B,
		  NS_B) ||
	       bt_sh("ip -n %s addr add " ADDR_A "/24 dev %s", NS_A, IF_A) ||
	       bt_sh("ip -n %s addr add " ADDR_B "/24 dev %s", NS_B, IF_B) ||
	       bt_sh("ip -n %s link set %s up", NS_A, IF_A) ||
	       bt_sh("ip -n %s link set %s up", NS_B, IF_B);
}

struct traffic {
	int udp_sink, tcp_listen, tcp_peer, tcp_client, icmp;
	int heavy[HEAVY_FLOWS], light[LIGHT_FLOWS];
	uint64_t udp_sent, udp_bytes, tcp_bytes, pings;
};

static int udp_from(uint16_t sport)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(sport) };
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(5000) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, ADDR_A, &a.sin_addr);
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)) || connect(fd, (void *)&b, sizeof(b)))
		return -1;
	return fd;
}

/* Sockets are bound to the namespace they are made in: the receivers in B,
 * the senders in A, all driven from this one thread. */
static int traffic_open(struct traffic *t)
{
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(5000) };
	int one = 1;

	memset(t, 0, sizeof(*t));
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	if (bt_enter_netns(NS_B))
		return -1;
	t->udp_sink = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	t->tcp_listen = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(t->tcp_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t->udp_sink, (void *)&b, sizeof(b)))
		return -1;
	b.sin_port = htons(8080);
	if (bind(t->tcp_listen, (void *)&b, sizeof(b)) || listen(t->tcp_listen, 1))
		return -1;

	if (bt_enter_netns(NS_A))
		return -1;
	for (int i = 0; i < HEAVY_FLOWS; i++)
		if ((t->heavy[i] = udp_from(10000 + i)) < 0)
			return -1;
	for (int i = 0; i < LIGHT_FLOWS; i++)
		if ((t->light[i] = udp_from(20000 + i)) < 0)
			return -1;
	t->tcp_client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (connect(t->tcp_client, (void *)&b, sizeof(b)) && errno != EINPROGRESS)
		return -1;
	t->icmp = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMP);
	t->tcp_peer = -1;
	return t->icmp < 0 ? -1 : 0;
}

static void traffic_close(struct traffic *t)
{
	int fds[] = { t->udp_sink, t->tcp_listen, t->tcp_peer, t->tcp_client, t->icmp };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] > 0)
			close(fds[i]);
	for (int i = 0; i < HEAVY_FLOWS; i++)
		if (t->heavy[i] > 0)
			close(t->heavy[i]);
	for (int i = 0; i < LIGHT_FLOWS; i++)
		if (t->light[i] > 0)
			close(t->light[i]);
}

static void send_ping(struct traffic *t, uint16_t seq)
{
	struct sockaddr_in b = { .sin_family = AF_INET };
	struct icmphdr h = { .type = ICMP_ECHO, .un.echo.id = htons(0xb100), .un.echo.sequence = htons(seq) };
	uint32_t sum = 0;
	uint16_t *w = (uint16_t *)&h;

	for (size_t i = 0; i < sizeof(h) / 2; i++)
		sum += w[i];
	h.checksum = ~(uint16_t)(sum + (sum >> 16));
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	if (sendto(t->icmp, &h, sizeof(h), 0, (void *)&b, sizeof(b)) == sizeof(h))
		t->pings++;
}


/* A few heavy UDP flows (big datagrams, every round), many light ones (a
 * small datagram each, now and then), one TCP bulk transfer, pings. */
static void traffic_run(struct traffic *t, double seconds)
{
	static char buf[65536];
	double end = bt_mono_s() + seconds, next_ping = 0;
	unsigned round = 0;

	while (!stop && bt_mono_s() < end) {
		for (int i = 0; i < HEAVY_FLOWS; i++) {
			ssize_t n = send(t->heavy[i], buf, 1200 - 200 * i, 0);

			if (n > 0) {
				t->udp_sent++;
				t->udp_bytes += n;
			}
		}
		if (round % 10 == 0) {
			ssize_t n = send(t->light[(round / 10) % LIGHT_FLOWS], buf, 64, 0);

			if (n > 0) {
				t->udp_sent++;
				t->udp_bytes += n;
			}
		}
		ssize_t n = send(t->tcp_client, buf, 16384, MSG_NOSIGNAL);
		if (n > 0)
			t->tcp_bytes += n;
		if (t->tcp_peer < 0)
			t->tcp_peer = accept4(t->tcp_listen, NULL, NULL, SOCK_NONBLOCK);
		while (t->tcp_peer >= 0 && recv(t->tcp_peer, buf, sizeof(buf), 0) > 0)
			;
		while (recv(t->udp_sink, buf, sizeof(buf), 0) > 0)
			;
		if (bt_mono_s() >= next_ping) {
			send_ping(t, t->pings);
			next_ping = bt_mono_s() + 0.1;
		}
		round++;
		usleep(200);
	}
}

/* The flows the demo made heavy: the heavy UDP senders and the TCP
 * transfer (A -> B; B's ACKs leave through B and are not seen). */
static size_t expected_heavy(const struct traffic *t, struct bt_flow_key *keys)
{
	struct sockaddr_in a = { 0 };
	socklen_t len = sizeof(a);
	size_t n = 0;

	for (int i = 0; i <= HEAVY_FLOWS; i++) {
		struct bt_flow_key *k = &keys[n++];

		memset(k, 0, sizeof(*k));
		k->src[10] = k->src[11] = k->dst[10] = k->dst[11] = 0xff;
		inet_pton(AF_INET, ADDR_A, k->src + 12);
		inet_pton(AF_INET, ADDR_B, k->dst + 12);
		if (i < HEAVY_FLOWS) {
			k->proto = IPPROTO_UDP;
			k->sport = htons(10000 + i);
			k->dport = htons(5000);
		} else {
			k->proto = IPPROTO_TCP;
			getsockname(t->tcp_client, (void *)&a, &len);
			k->sport = a.sin_port;
			k->dport = htons(8080);
		}
	}
	return n;
}

/* bloomtap heavy on the demo's interval, and whether it found exactly the
 * flows the demo made heavy. */
static int show_heavy(const struct bt_instance *inst, const struct traffic *t)
{
	struct bt_flow_key want[HEAVY_FLOWS + 1];
	size_t nwant = expected_heavy(t, want), found = 0;
	struct bt_heavy_maps m;
	struct bt_heavy_report r;
	bool exact;

	if (bt_heavy_map(inst, &m) || bt_heavy_collect(&m, m.ctl->interval & 1, NULL, false, &r)) {
		bt_err("demo: reading the heavy flows failed");
		bt_heavy_unmap(&m);
		return -1;
	}
	for (size_t i = 0; i < r.n; i++)
		for (size_t j = 0; j < nwant; j++)
			found += !memcmp(&r.flows[i].key, &want[j], sizeof(want[j]));
	exact = found == nwant && r.n == nwant;
	bt_heavy_report_free(&r);
	bt_heavy_unmap(&m);
	if (!bt_g.json)
		printf("\nbloomtap heavy (flows with at least 0.1%% of the bytes):\n");
	if (bt_print_heavy(inst, 10, false, NULL))
		return -1;
	if (!bt_g.json)
		printf("\ndemo: made %zu flows heavy (%d UDP, 1 TCP) among %d light ones; "
		       "bloomtap found %s\n", nwant, HEAVY_FLOWS, LIGHT_FLOWS,
		       exact ? "exactly those" : "a different set");
	return exact ? 0 : -1;
}

/* A raw IP socket in A (IP_HDRINCL: the demo chooses every byte of what it
 * sends, so that it can trace it afterwards), -1 on failure. */
static int raw_socket_a(void)
{
	int fd, one = 1;

	if (bt_enter_netns(NS_A))
		return -1;
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one));
	return fd;
}

/* A packet's bytes as the hex that trace --hex reads. */
static void packet_hex(const uint8_t *p, size_t n, char *hex, size_t len)
{
	for (size_t i = 0; i < n && 2 * i + 3 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", p[i]);
}

/* One UDP packet, traced afterwards; its hex goes to hex. */
static int send_traced_packet(char *hex, size_t len)
{
	uint8_t p[28 + 12] = {
		0x45, 0, 0, sizeof(p), 0xb1, 0x00, 0x40, 0x00, 64, IPPROTO_UDP, 0, 0,
		198, 18, 0, 1, 198, 18, 0, 2,			/* ADDR_A -> ADDR_B */
		0x9c, 0x40, 0x13, 0x88, 0, 20, 0, 0,		/* 40000 -> 5000 */
		'b', 'l', 'o', 'o', 'm', 't', 'a', 'p', ' ', 'd', 'e', 'm',
	};
	struct sockaddr_in b = { .sin_family = AF_INET };
	int fd = raw_socket_a();
	ssize_t n;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	n = sendto(fd, p, sizeof(p), 0, (void *)&b, sizeof(b));
	close(fd);
	packet_hex(p, sizeof(p), hex, len);
	return n == sizeof(p) ? 0 : -1;
}

/* The demo's dropped flow: nft drops UDP to this port in B. */
#define DROP_PORT 5999
#define DROP_PACKETS 25

static int drop_rule(void)
{
	return bt_sh("nsenter --net=/var/run/netns/%s nft add table inet btdemo", NS_B) ||
	       bt_sh("nsenter --net=/var/run/netns/%s nft add chain inet btdemo in "
		  "'{ type filter hook input priority 0; }'", NS_B) ||
	       bt_sh("nsenter --net=/var/run/netns/%s nft add rule inet btdemo in udp dport %d drop",
		  NS_B, DROP_PORT);
}

/* DROP_PACKETS datagrams of one flow to the dropped port, the last one's
 * bytes (IP_HDRINCL: the demo chooses each) into hex for the trace. */
static int send_dropped_flow(char *hex, size_t len)
{
	uint8_t p[28 + 8] = {
		0x45, 0, 0, sizeof(p), 0xd0, 0x00, 0x40, 0x00, 64, IPPROTO_UDP, 0, 0,
		198, 18, 0, 1, 198, 18, 0, 2,				/* ADDR_A -> ADDR_B */
		0x9c, 0x41, DROP_PORT >> 8, DROP_PORT & 0xff, 0, 16, 0, 0,	/* 40001 -> 5999 */
		'd', 'r', 'o', 'p', 'p', 'e', 'd', 0,
	};
	struct sockaddr_in b = { .sin_family = AF_INET };
	int fd = raw_socket_a(), sent = 0;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, ADDR_B, &b.sin_addr);
	for (int i = 0; i < DROP_PACKETS; i++) {
		p[5] = i;	/* IP ID: each datagram its own digest */
		p[35] = i;
		sent += sendto(fd, p, sizeof(p), 0, (void *)&b, sizeof(b)) == sizeof(p);
	}
	close(fd);
	packet_hex(p, sizeof(p), hex, len);
	return sent == DROP_PACKETS ? 0 : -1;
}

/* The drops by reason, and the trace of one dropped packet: seen here,
 * dropped here, NETFILTER_DROP. */
static int show_drops(const struct bt_instance *inst, const char *hex)
{
	char *argv[] = { "trace", "--instance", IF_B, "--hex", (char *)hex, NULL }, err[256];
	struct json_object *o, *p, *d = NULL;
	const char *reason = NULL;

	if (!bt_g.json)
		printf("\nbloomtap drops (nft drops the UDP flow to port %d):\n", DROP_PORT);
	if (bt_print_drops(inst, 5))
		return -1;
	if (!bt_g.json)
		printf("\nbloomtap trace of a packet of that flow:\n");
	cmd_trace(5, argv);
	o = bt_trace_buffer(&(struct bt_trace_query){ .inst = inst }, hex, strlen(hex), err,
			    sizeof(err));
	p = o ? json_object_array_get_idx(o, 0) : NULL;
	if (p && json_object_object_get_ex(p, "drops", &d) && json_object_array_length(d))
		reason = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(d, 0), "reason"));
	reason = reason && !strcmp(reason, "NETFILTER_DROP") ? reason : NULL;
	if (!bt_g.json)
		printf("demo: that packet was %s\n", reason ? "seen here, then dropped here "
		       "(NETFILTER_DROP)" : "not found dropped");
	json_object_put(o);
	return reason ? 0 : -1;
}

/* The nft-dropped packets from the drop recorder into a pcapng that the
 * demo leaves behind, in a directory of its own (mkdtemp: no name another
 * user could have made first), and tshark's one-line summary of the last
 * one: what `tshark -r FILE` prints for a packet. */
static int show_recorded(const struct bt_instance *inst)
{
	char dir[] = "/tmp/bloomtap-demo-XXXXXX", path[64], cmd[160], line[512], err[128];
	struct bt_rec_filter f;
	struct bt_pcapng w;
	int fd, n;
	FILE *p;

	if (bt_g.json)
		return 0;
	if (!mkdtemp(dir)) {
		bt_err_errno(-errno, "demo: a directory for the recorded drops");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/drops.pcapng", dir);
	if (bt_rec_filter_parse(&f, "NETFILTER_DROP", NULL, 0, err, sizeof(err)) ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return -1;
	n = bt_pcapng_start(&w, fd);
	if (!n)
		n = bt_recorder_dump(inst, &w, &f, NULL);
	bt_pcapng_free(&w);
	close(fd);
	if (n < 0) {
		bt_err("demo: writing the recorded drops: %s", strerror(-n));
		return -1;
	}
	printf("\nbloomtap drops %s --pcap %s --reason NETFILTER_DROP: %d dropped packets, "
	       "each with its reason\n", IF_B, path, n);
	if (system("command -v tshark >/dev/null 2>&1")) {
		printf("demo: tshark is not installed: open %s in Wireshark\n", path);
		return 0;
	}
	/* the path is mkdtemp's: letters and digits, nothing the shell reads */
	snprintf(cmd, sizeof(cmd), "tshark -r %s 2>/dev/null | tail -1", path);
	if ((p = popen(cmd, "r"))) {
		if (fgets(line, sizeof(line), p))
			printf("tshark -r %s (the last):\n%s", path, line);
		pclose(p);
	}
	return 0;
}

/* bloomtap trace on the packet the demo sent, and on one it did not send
 * (the same with another IP ID). */
static int show_trace(const char *hex)
{
	char never[128], *argv[] = { "trace", "--instance", IF_B, "--hex", (char *)hex, NULL };
	int seen, unseen;

	snprintf(never, sizeof(never), "%s", hex);
	never[8] = never[9] = 'f';	/* IP ID 0xb100 -> 0xff00 */
	if (!bt_g.json)
		printf("\nbloomtap trace of a packet the demo sent:\n");
	seen = cmd_trace(5, argv);
	argv[4] = never;
	if (!bt_g.json)
		printf("\nbloomtap trace of a packet nobody sent:\n");
	unseen = cmd_trace(5, argv);
	return seen == 0 && unseen == 1 ? 0 : -1;
}

/* The demo's watch list: each end of the veth, and the lab's /24. */
static const char demo_watch[] =
	"# the lab's watch list\n"
	ADDR_A "/32 sender\n"
	ADDR_B "/32 receiver\n"
	"198.18.0.0/24 lab\n";

static int load_demo_watch(void)
{
	FILE *f = fmemopen((void *)demo_watch, sizeof(demo_watch) - 1, "r");
	struct bt_watch_list l;
	char err[BT_WATCH_ERR_LEN];
	int rc = f ? bt_watch_list_parse(f, "demo watch list", &l, err, sizeof(err)) : -errno;

	if (f)
		fclose(f);
	if (rc) {
		bt_err("demo: %s", f ? err : strerror(-rc));
		return rc;
	}
	rc = bt_watch_load_named(IF_B, &l);
	bt_watch_list_free(&l);
	return rc;
}

static int show_watch(const struct bt_instance *inst)
{
	if (!bt_g.json)
		printf("\nbloomtap watch show (the demo's list: %s sender, %s receiver, "
		       "198.18.0.0/24 lab):\n", ADDR_A, ADDR_B);
	return bt_print_watch(inst, BT_DIR_INGRESS);
}

static uint32_t demo_seconds = 3;
static const struct bt_opt demo_opts[] = {
	{ "duration", 'd', BT_OPT_U32, &demo_seconds, "SECONDS",
	  "how long to send traffic (default 3)", .min = 1, .max = 60 },
	{ 0 }
};

static const struct bt_cmd_spec demo_spec = {
	"demo", "",
	"The built-in lab: namespaces btdemo-a-PID and btdemo-b-PID joined by a veth\n"
	"pair btda-PID -- btdb-PID (" ADDR_A " -> " ADDR_B "), bloomtap attached to\n"
	"btdb-PID, a few seconds of UDP, TCP and ICMP from A (and a UDP flow that nft\n"
	"drops in B), then what bloomtap counted, and what the kernel dropped, why. Everything the demo makes is removed when it ends, also on Ctrl-C;\n"
	"a lab left by a demo that was killed is removed by the next one.",
	demo_opts, 0, 0,
};

int cmd_demo(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct traffic t = { 0 };
	struct bt_instance inst;
	char hex[128] = "", drop_hex[128] = "";
	int n, home, ret = BT_EXIT_FAIL;

	n = bt_parse_args(&demo_spec, argc, argv);
	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (geteuid() != 0) {
		bt_err("demo: needs root (it makes network namespaces and attaches XDP): "
		       "run it with sudo");
		return BT_EXIT_FAIL;
	}
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0) {
		bt_err("demo: cannot open /proc/self/ns/net: %s", strerror(errno));
		return BT_EXIT_FAIL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	leftover_labs_down(home);
	if (!bt_g.json)
		printf("demo: namespaces %s and %s, veth %s (%s) -> %s (%s)\n", NS_A, NS_B,
		       IF_A, ADDR_A, IF_B, ADDR_B);
	if (lab_up()) {
		bt_err("demo: setting up the lab failed (is iproute2 installed? run with -v)");
		goto out;
	}
	if (drop_rule()) {
		bt_err("demo: the nft rule failed (is nftables installed? run with -v)");
		goto out;
	}
	if (bt_enter_netns(NS_B) || bt_attach(IF_B, &(struct bt_attach_opts){ 0 }) ||
	    load_demo_watch())
		goto out;
	setns(home, CLONE_NEWNET);

	if (stop || traffic_open(&t)) {
		if (!stop)
			bt_err("demo: opening the traffic sockets failed: %s", strerror(errno));
		goto out;
	}
	if (!bt_g.json)
		printf("demo: sending %u s of traffic: %d heavy and %d light UDP flows, "
		       "one TCP transfer, pings\n", demo_seconds, HEAVY_FLOWS, LIGHT_FLOWS);
	fflush(stdout);		/* seen now, also through a pipe or a file */
	traffic_run(&t, demo_seconds);
	if (send_traced_packet(hex, sizeof(hex)))
		bt_warn("demo: sending the traced packet failed: %s", strerror(errno));
	if (send_dropped_flow(drop_hex, sizeof(drop_hex)))
		bt_warn("demo: sending the dropped flow failed: %s", strerror(errno));
	setns(home, CLONE_NEWNET);
	usleep(100000);		/* let the last frames cross the veth */
	if (stop)
		goto out;

	if (!bt_g.json)
		printf("demo: sent %" PRIu64 " UDP datagrams (%" PRIu64 " bytes of payload), "
		       "%" PRIu64 " bytes over TCP, %" PRIu64 " pings\n\n"
		       "bloomtap saw on %s:\n", t.udp_sent, t.udp_bytes, t.tcp_bytes,
		       t.pings, IF_B);
	if (bt_instance_open_or_explain(IF_B, &inst))
		goto out;
	ret = bt_print_stats(&inst, BT_DIR_INGRESS) || show_heavy(&inst, &t) || show_watch(&inst) ||
	      show_trace(hex) || show_drops(&inst, drop_hex) || show_recorded(&inst) ?
		      BT_EXIT_FAIL : 0;
	bt_instance_close(&inst);
out:
	traffic_close(&t);
	lab_down(home);
	close(home);
	if (stop) {
		bt_info("demo: interrupted; the lab is removed");
		return 130;
	}
	if (!bt_g.json && !ret)
		printf("\ndemo: lab removed (namespaces, veth, pins)\n");
	return ret;
}
