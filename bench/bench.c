// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench: ns per packet of bloomtap's program against an empty XDP
 * program and reference designs, all measured in one run with
 * BPF_PROG_TEST_RUN, every iteration a different packet (bench.bpf.c's
 * driver), rounds interleaved, medians reported, each figure also as a
 * ratio to the empty program of the same run. Absolute nanoseconds vary
 * with the machine and its load; the ratios are the result. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "bloomtap.h"
#include "common.h"
#include "hash.h"
#include "instance.h"
#include "sketch.h"
#include "commands.h"
#include "util.h"
#include "bench.skel.h"
#include <zstd.h>
#include "../tests/frames.h"
#include "../tests/zipf.h"

#define FLOWS 100000
#define SEQ_LEN (1u << 20)
#define REPEAT (1u << 20)	/* iterations per measurement */
#define ROUNDS 9

enum { P_EMPTY, P_PARSE, P_HEAVY, P_SPIE, P_ALL, P_REF_CMS, P_REF_BLOOM, P_REF_BLOOM_MEM, P_MAX };

static const char *const prog_names[P_MAX] = {
	[P_EMPTY] = "empty XDP program (the floor)",
	[P_PARSE] = "bloomtap: parsing and counters",
	[P_HEAVY] = "bloomtap: parsing + heavy flows",
	[P_SPIE] = "bloomtap: parsing + SPIE",
	[P_ALL] = "bloomtap: everything",
	[P_REF_CMS] = "ref: parsing + plain count-min",
	[P_REF_BLOOM] = "ref: parsing + kernel bloom filter map",
	[P_REF_BLOOM_MEM] = "  the same, with a window's bits (8 MiB)",
};

struct target {
	int fd;
	struct bt_instance inst;	/* bloomtap variants */
	char name[64];
	bool heavy, spie;
	double ns[ROUNDS];
};

static struct target targets[P_MAX];
static const uint32_t *seq_for_archive;

static void cleanup(void)
{
	for (int i = 0; i < P_MAX; i++)
		if (targets[i].name[0]) {
			bt_instance_close(&targets[i].inst);
			bt_instance_remove(targets[i].name);
			targets[i].name[0] = 0;
		}
}

static void on_signal(int sig)
{
	cleanup();
	_exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int make_bloomtap(struct target *t, const char *what, bool heavy, bool spie)
{
	struct bt_instance_cfg cfg = { .flags = (heavy ? 0 : BT_META_NO_HEAVY) |
						(spie ? 0 : BT_META_NO_SPIE) };

	snprintf(t->name, sizeof(t->name), "bench-%s-%d", what, getpid());
	if (bt_instance_create(t->name, &cfg, &t->inst)) {
		t->name[0] = 0;
		return -1;
	}
	t->fd = t->inst.prog_fd;
	t->heavy = heavy;
	t->spie = spie;
	return 0;
}

/* One measurement: REPEAT packets through the driver into target t. */
static int measure(struct bench_bpf *skel, struct target *t, const struct frame *f,
		   double *ns)
{
	int drive = bpf_program__fd(skel->progs.bench_drive);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len,
		    .repeat = REPEAT);
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_progs), &zero, &t->fd, 0))
		return -errno;
	/* a heavy-flow run is one interval of REPEAT packets, nominated as
	 * replay does, starting empty */
	if (t->heavy) {
		struct bt_heavy_maps m;

		if (bt_heavy_map(&t->inst, &m))
			return -ENOMEM;
		bt_heavy_flip(&m);
		bt_heavy_set_nomination(&m, (__u64)REPEAT * f->len);
		bt_heavy_unmap(&m);
	}
	/* and a fresh SPIE window, below its design load at the end */
	if (t->spie) {
		struct bt_spie_maps sm;

		if (bt_spie_map(&t->inst, &sm))
			return -ENOMEM;
		bt_spie_rotate(&sm);
		bt_spie_unmap(&sm);
	}
	if (bpf_prog_test_run_opts(drive, &o))
		return -errno;
	if (o.retval != XDP_PASS)
		return -EPROTO;
	*ns = o.duration;	/* the kernel's average per iteration */
	return 0;
}

static void frame_v4_udp(struct frame *f)
{
	size_t ip;

	f->len = 0;
	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, 17, 5, 0);
	fr_ports(f, 1024, 443, 8);
	fr_put(f, NULL, 64 - f->len);	/* 64-byte frame */
	fr_ipv4_done(f, ip);
}

static void frame_v6_tcp(struct frame *f)
{
	size_t ip;

	f->len = 0;
	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, 6);
	fr_ports(f, 1024, 443, 20);
	fr_ipv6_done(f, ip);
}

static int load_driver(struct bench_bpf **out, bool ipv6, const uint32_t *seq)
{
	const struct bt_meta *m = &targets[P_ALL].inst.meta;
	struct bench_bpf *skel = bench_bpf__open();
	uint32_t *p;

	if (!skel)
		return -1;
	skel->rodata->cfg_seq_mask = SEQ_LEN - 1;
	skel->rodata->cfg_ipv6 = ipv6;
	skel->rodata->cfg_key.k0 = 0x0123456789abcdefULL;
	skel->rodata->cfg_key.k1 = 0xfedcba9876543210ULL;
	bpf_map__set_max_entries(skel->maps.bench_seq, SEQ_LEN);
	/* the kernel's filters, same k: sized for the same design load */
	bpf_map__set_max_entries(skel->maps.ref_bloom, m->design_load);
	bpf_map__set_map_extra(skel->maps.ref_bloom, m->k);
	/* the kernel takes max_entries * k * 7/5 bits, rounded up to a power of
	 * two: the entries that make that a window's bits */
	bpf_map__set_max_entries(skel->maps.ref_bloom_mem, m->window_bits / m->k * 5 / 7);
	bpf_map__set_map_extra(skel->maps.ref_bloom_mem, m->k);
	bpf_map__set_map_flags(skel->maps.bench_seq, BPF_F_MMAPABLE);
	if (bench_bpf__load(skel))
		goto err;
	p = mmap(NULL, SEQ_LEN * sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(skel->maps.bench_seq), 0);
	if (p == MAP_FAILED)
		goto err;
	memcpy(p, seq, SEQ_LEN * sizeof(*p));
	munmap(p, SEQ_LEN * sizeof(*p));
	*out = skel;
	return 0;
err:
	bench_bpf__destroy(skel);
	return -1;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(buf, len, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
}

static void out(FILE *a, FILE *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(a, fmt, ap);
	va_end(ap);
	if (b) {
		va_start(ap, fmt);
		vfprintf(b, fmt, ap);
		va_end(ap);
	}
}

/* The live run: frames generated by BPF_PROG_TEST_RUN in live-frames mode
 * on one end of a veth pair in namespace bench-a, received at the other end
 * in bench-b with bloomtap attached (or an empty program): packets a second
 * that arrive and are counted there. */
#define LIVE_NS_A "btbench-a"
#define LIVE_NS_B "btbench-b"
#define LIVE_IF_A "btbench-a"
#define LIVE_IF_B "btbench-b"
#define LIVE_FRAMES 4000000

static int sh(const char *cmd)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
	return system(buf) ? -1 : 0;
}

static void live_down(void)
{
	sh("ip netns del " LIVE_NS_A);
	sh("ip netns del " LIVE_NS_B);
	bt_instance_remove(LIVE_IF_B);
}


static __u64 rx_packets_b(void)
{
	char buf[256] = "";
	FILE *p = popen("ip -n " LIVE_NS_B " -s -j link show " LIVE_IF_B " | python3 -c "
			"'import json,sys; print(json.load(sys.stdin)[0][\"stats64\"][\"rx\"][\"packets\"])'", "r");

	if (!p)
		return 0;
	if (!fgets(buf, sizeof(buf), p))
		buf[0] = 0;
	pclose(p);
	return strtoull(buf, NULL, 10);
}

/* One live measurement: frames a second received at B. */
static double live_once(struct bench_bpf *skel, int home, const struct frame *f)
{
	/* the kernel wants data_end to be the frame length */
	struct xdp_md ctx = { .data_end = f->len };
	struct timespec t0, t1;
	__u64 before = rx_packets_b(), after;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = LIVE_FRAMES,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
	int err;

	if (bt_enter_netns(LIVE_NS_A))
		return -1;
	ctx.ingress_ifindex = if_nametoindex(LIVE_IF_A);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_gen), &o);
	usleep(20000);	/* the last frames cross the veth */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	setns(home, CLONE_NEWNET);
	if (err) {
		fprintf(stderr, "bench: live frames: %s\n", strerror(errno));
		return -1;
	}
	after = rx_packets_b();
	return (after - before) / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static void live_run(FILE *f, const uint32_t *seq)
{
	struct bench_bpf *skel = NULL;
	struct frame fr;
	double with[3], without[3];
	__u64 counted = 0;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	char cmd[256];

	live_down();
	if (home < 0 || sh("ip netns add " LIVE_NS_A) || sh("ip netns add " LIVE_NS_B) ||
	    sh("ip link add " LIVE_IF_A " netns " LIVE_NS_A " type veth peer name " LIVE_IF_B
	       " netns " LIVE_NS_B) ||
	    sh("ip -n " LIVE_NS_A " link set " LIVE_IF_A " up") ||
	    sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " up") ||
	    load_driver(&skel, false, seq)) {
		out(stdout, f, "\nlive run: skipped (could not set up the veth pair)\n");
		goto out;
	}
	frame_v4_udp(&fr);
	for (int r = 0; r < 3; r++) {
		/* without: the empty program at B (veth needs one for XDP_TX) */
		snprintf(cmd, sizeof(cmd), "ip -n %s link set %s xdpdrv obj %s sec xdp", LIVE_NS_B,
			 LIVE_IF_B, ".output/tests/xdp_pass.bpf.o");
		if (sh(cmd))
			goto fail;
		without[r] = live_once(skel, home, &fr);
		sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " xdpdrv off");
		/* with bloomtap */
		if (bt_enter_netns(LIVE_NS_B) || bt_attach(LIVE_IF_B, BT_MODE_NATIVE, false, NULL, NULL))
			goto fail;
		setns(home, CLONE_NEWNET);
		with[r] = live_once(skel, home, &fr);
		{
			struct bt_instance inst;
			__u64 c[BT_CTR_MAX];

			if (!bt_instance_open(LIVE_IF_B, &inst)) {
				if (!bt_instance_counters(&inst, c))
					counted = c[BT_CTR_PACKETS];
				bt_instance_close(&inst);
			}
		}
		bt_detach(LIVE_IF_B, false);
		if (with[r] < 0 || without[r] < 0)
			goto fail;
	}
	out(stdout, f, "\nlive run: %d frames (64-byte IPv4/UDP, Zipf flows) generated with "
	    "BPF_F_TEST_XDP_LIVE_FRAMES into a veth pair, received at the far end:\n"
	    "  without bloomtap (empty program): %.2f Mpps\n"
	    "  with bloomtap attached:           %.2f Mpps (last run: %llu packets counted by it)\n",
	    LIVE_FRAMES, median(without, 3) / 1e6, median(with, 3) / 1e6,
	    (unsigned long long)counted);
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

/* Archive size: a window filled to its design load with the Zipf traffic,
 * sealed and compressed as bloomtap archives it. */
static void archive_cost(FILE *f)
{
	struct target *t = &targets[P_ALL];
	const struct bt_meta *m = &t->inst.meta;
	struct bench_bpf *skel;
	struct bt_spie_maps sm;
	struct frame fr;
	uint32_t w;
	size_t raw, clen;
	void *buf;

	if (load_driver(&skel, false, seq_for_archive) || bt_spie_map(&t->inst, &sm))
		return;
	frame_v4_udp(&fr);
	bt_spie_rotate(&sm);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = fr.len,
		    .repeat = m->design_load);
	__u32 zero = 0;

	/* distinct packets: the driver also varies the IP ID */
	bpf_map_update_elem(bpf_map__fd(skel->maps.bench_progs), &zero, &t->fd, 0);
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_drive), &o))
		goto out;
	w = bt_spie_rotate(&sm);
	raw = sm.bpw * sizeof(struct bt_bloom_block);
	buf = malloc(ZSTD_compressBound(raw));
	clen = ZSTD_compress(buf, ZSTD_compressBound(raw), &sm.blocks[(uint64_t)w * sm.bpw], raw, 3);
	if (!ZSTD_isError(clen)) {
		double bits = clen * 8.0 / bt_window_packets(&sm, w);

		out(stdout, f, "archive at the design load: %llu packets, %.1f MiB filter -> %.2f MiB "
		    "with zstd: %.1f bits a packet, %.2f %% of link capacity at 800-byte packets "
		    "(SPIE reported 0.5 %%)\n", (unsigned long long)bt_window_packets(&sm, w),
		    raw / 1048576.0, clen / 1048576.0, bits, 100 * bits / (800 * 8));
	}
	free(buf);
out:
	bt_spie_unmap(&sm);
	bench_bpf__destroy(skel);
}

/* The medians of ROUNDS interleaved rounds of the programs in `which` (a
 * bit per P_*), frame f, flow sequence seq; 0 or -1 after a message. */
static int run_case(const struct frame *f, bool ipv6, const uint32_t *seq, unsigned which,
		    double med[P_MAX])
{
	struct bench_bpf *skel;

	if (load_driver(&skel, ipv6, seq)) {
		fprintf(stderr, "bench: loading the driver failed\n");
		return -1;
	}
	targets[P_EMPTY].fd = bpf_program__fd(skel->progs.bench_empty);
	targets[P_REF_CMS].fd = bpf_program__fd(skel->progs.bench_ref_cms);
	targets[P_REF_BLOOM].fd = bpf_program__fd(skel->progs.bench_ref_bloom);
	targets[P_REF_BLOOM_MEM].fd = bpf_program__fd(skel->progs.bench_ref_bloom_mem);
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < P_MAX; k++) {
			int p = (k + r) % P_MAX;	/* rotate the order */
			int err = which & (1u << p) ? measure(skel, &targets[p], f, &targets[p].ns[r]) : 0;

			if (err) {
				fprintf(stderr, "bench: %s: %s\n", prog_names[p], strerror(-err));
				bench_bpf__destroy(skel);
				return -1;
			}
		}
	for (int p = 0; p < P_MAX; p++)
		med[p] = which & (1u << p) ? median(targets[p].ns, ROUNDS) : 0;
	bench_bpf__destroy(skel);
	return 0;
}

static void print_table(FILE *f, const char *title, unsigned which, const double med[P_MAX])
{
	out(stdout, f, "\n%s\n", title);
	out(stdout, f, "  %-40s %8s %8s\n", "program", "ns/pkt", "ratio");
	for (int p = 0; p < P_MAX; p++)
		if (which & (1u << p))
			out(stdout, f, "  %-40s %8.1f %8.2f\n", prog_names[p], med[p],
			    med[p] / med[P_EMPTY]);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : ".output/bench.txt";
	uint32_t *seq = malloc(SEQ_LEN * sizeof(*seq));
	uint64_t rng = 0x5eed;
	struct zipf z;
	char cpu[128], date[32];
	struct utsname u;
	time_t now = time(NULL);
	/* BENCH_QUICK: the heavy-flow figures only, in seconds */
	bool quick = getenv("BENCH_QUICK");
	const unsigned all_progs = (1u << P_MAX) - 1;
	const unsigned heavy_progs = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_HEAVY | 1u << P_REF_CMS;
	uint32_t *useq = malloc(SEQ_LEN * sizeof(*useq));
	FILE *f;

	if (geteuid() != 0) {
		fprintf(stderr, "bench: needs root (bpf(2) with BPF_PROG_TEST_RUN, pins under "
			"/sys/fs/bpf): run 'make bench' as root\n");
		return 1;
	}
	if (!getenv("BENCH_VERBOSE"))
		libbpf_set_print(NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!seq || !useq || zipf_init(&z, FLOWS, 1.1))
		return 1;
	for (uint32_t i = 0; i < SEQ_LEN; i++)
		seq[i] = zipf_draw(&z, &rng);
	zipf_free(&z);
	seq_for_archive = seq;

	if (make_bloomtap(&targets[P_PARSE], "parse", false, false) ||
	    make_bloomtap(&targets[P_HEAVY], "heavy", true, false) ||
	    make_bloomtap(&targets[P_SPIE], "spie", false, true) ||
	    make_bloomtap(&targets[P_ALL], "all", true, true)) {
		fprintf(stderr, "bench: loading bloomtap failed\n");
		cleanup();
		return 1;
	}
	f = fopen(path, "w");
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	out(stdout, f, "bloomtap bench, %s: %s, %ld CPUs, Linux %s\n", date, cpu,
	    sysconf(_SC_NPROCESSORS_ONLN), u.release);
	out(stdout, f, "BPF_PROG_TEST_RUN, %u packets a measurement, median of %d interleaved "
	    "rounds; flows Zipf(1.1) over %d, a different packet every iteration\n",
	    REPEAT, ROUNDS, FLOWS);

	for (int v6 = 0; v6 <= 1; v6++) {
		struct frame fr;
		double med[P_MAX];
		char title[64];

		if (v6)
			frame_v6_tcp(&fr);
		else
			frame_v4_udp(&fr);
		if (run_case(&fr, v6, seq, quick ? heavy_progs : all_progs, med)) {
			cleanup();
			return 1;
		}
		snprintf(title, sizeof(title), "%zu-byte Ethernet/%s frames", fr.len,
			 v6 ? "IPv6/TCP" : "IPv4/UDP");
		print_table(f, title, quick ? heavy_progs : all_progs, med);
		out(stdout, f, "  targets:\n");
		if (!quick)
			out(stdout, f, "  - everything at most 1.6 x the empty program: %.2f: %s\n",
			    med[P_ALL] / med[P_EMPTY],
			    med[P_ALL] <= 1.6 * med[P_EMPTY] ? "met" : "MISSED");
		out(stdout, f, "  - heavy flows on top of parsing no more than a plain count-min\n"
		    "    (4 x 65536 shared, one hash) on top of the same parsing: +%.1f vs +%.1f ns: %s\n",
		    med[P_HEAVY] - med[P_PARSE], med[P_REF_CMS] - med[P_PARSE],
		    med[P_HEAVY] <= med[P_REF_CMS] ? "met" : "MISSED");
		if (!quick)
			out(stdout, f, "  - SPIE insert at most half the kernel bloom filter map (same k,\n"
			    "    same digest): +%.1f vs +%.1f ns: %s\n", med[P_SPIE] - med[P_PARSE],
			    med[P_REF_BLOOM] - med[P_PARSE],
			    med[P_SPIE] - med[P_PARSE] <= (med[P_REF_BLOOM] - med[P_PARSE]) / 2 ?
			    "met" : "MISSED");
	}

	/* The flow cache's other side: traffic without heavy flows, where
	 * every packet takes the keyed path and pays the cache probe too. */
	{
		struct frame fr;
		double med[P_MAX];

		for (uint32_t i = 0; i < SEQ_LEN; i++)
			useq[i] = bt_rng(&rng) % FLOWS;
		frame_v4_udp(&fr);
		if (run_case(&fr, false, useq, heavy_progs, med)) {
			cleanup();
			return 1;
		}
		print_table(f, "64-byte Ethernet/IPv4/UDP frames, uniform over the same flows "
			    "(no heavy flow; no target)", heavy_progs, med);
		out(stdout, f, "  heavy flows on top of parsing +%.1f ns, plain count-min +%.1f ns\n",
		    med[P_HEAVY] - med[P_PARSE], med[P_REF_CMS] - med[P_PARSE]);
	}

	if (quick)
		goto done;
	const struct bt_meta *m = &targets[P_ALL].inst.meta;

	out(stdout, f, "\nmemory at default sizes (%u CPUs): heavy flows %.1f MiB "
	    "(sketch %u x %u x 2 intervals per CPU, flow memory 2 x %u slots); SPIE %u windows "
	    "x %.0f MiB = %.0f MiB, %.0f bits a packet at the design load of %llu packets, k = %u\n",
	    m->ncpu, bt_sketch_bytes(m) / 1048576.0, m->depth, m->width, m->fm_slots, m->windows,
	    m->window_bits / 8.0 / 1048576, m->window_bits / 8.0 / 1048576 * m->windows,
	    (double)m->window_bits / m->design_load, (unsigned long long)m->design_load, m->k);
	archive_cost(f);
	live_run(f, seq);
done:
	if (f) {
		fclose(f);
		printf("(written to %s)\n", path);
	}
	cleanup();
	free(seq);
	free(useq);
	return 0;
}
