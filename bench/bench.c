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
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include "bloomtap.h"
#include "base/common.h"
#include "hash.h"
#include "instance/create.h"
#include "instance/instance.h"
#include "instance/sketch.h"
#include "instance/wltable.h"
#include "report/counters.h"
#include "instance/link.h"
#include "report/trace_query.h"
#include "core/archive.h"
#include "instance/keeper.h"
#include "instance/spie.h"
#include "base/util.h"
#include "instance/watch.h"
#include "instance/drops.h"
#include "instance/recorder.h"
#include "core/watchlist.h"
#include "../tests/lib/bgp_shape.h"
#include "core/digest.h"
#include "driver.h"
#include <zstd.h>
#include "../tests/lib/zipf.h"

#define FLOWS BENCH_FLOWS
#define SEQ_LEN BENCH_SEQ_LEN
#define REPEAT (1u << 20)	/* iterations per measurement */
#define ROUNDS 9

enum { P_EMPTY, P_PARSE, P_HEAVY, P_SPIE, P_ALL, P_ALL_SEP, P_REF_CMS, P_REF_BLOOM,
       P_REF_BLOOM_MEM, P_MAIN,		/* the main tables' programs end here */
       P_WATCH = P_MAIN, P_REF_HASH, P_REF_LPM,
       P_CHASE1, P_CHASE2, P_CHASE4, P_CHASE4W, P_CHASE4W_INNER, P_MAX };

static const char *const prog_names[P_MAX] = {
	[P_EMPTY] = "empty XDP program (the floor)",
	[P_PARSE] = "bloomtap: parsing and counters",
	[P_HEAVY] = "bloomtap: parsing + heavy flows",
	[P_SPIE] = "bloomtap: parsing + SPIE",
	[P_ALL] = "bloomtap: everything",
	[P_ALL_SEP] = "  the same, heavy flows hashing apart",
	[P_REF_CMS] = "ref: parsing + plain count-min",
	[P_REF_BLOOM] = "ref: parsing + kernel bloom filter map",
	[P_REF_BLOOM_MEM] = "  the same, with 8 MiB of bits",
	[P_WATCH] = "bloomtap: parsing + watch list",
	[P_REF_HASH] = "ref: parsing + kernel hash map",
	[P_REF_LPM] = "ref: parsing + kernel LPM trie",
	[P_CHASE1] = "floor: 1 line an address",
	[P_CHASE2] = "floor: 2 dependent lines an address",
	[P_CHASE4] = "floor: 4 dependent lines an address",
	[P_CHASE4W] = "floor: 4 dependent reads of 4 lines",
	[P_CHASE4W_INNER] = "  the same, each line a call",
};

struct target {
	int fd;
	struct bt_instance inst;	/* bloomtap variants */
	char name[64];
	bool heavy, spie;
	/* a tc program (bench_drive_tc runs it), with the skb's gso_segs */
	bool tc;
	uint32_t gso_segs;
	/* ablation variants: the window they write, set before each run */
	bool ablation, lines;
	uint32_t load_shift, unit_shift, win_mask;
	double ns[ROUNDS];
};

static struct target targets[P_MAX];

/* The heavy-flow stage cut short (issue 20): bloomtap's stage, then with
 * parts left out (struct bt_instance_cfg.cut) or the sketch made small,
 * each against the plain count-min of the same run. */
enum { HB_BLOOMTAP, HB_NO_CACHE, HB_SKETCH, HB_SKETCH_L2, HB_SKETCH_ROW, HB_ROWS2, HB_ROWS1,
       HB_NO_ROWS, HB_CACHE_HASH, HB_ADJACENT, HB_SKETCH_ADJACENT, HB_COLD, HB_SKETCH_COLD,
       HB_LEVERS };
static const char *const hb_names[HB_LEVERS] = {
	[HB_BLOOMTAP] = "bloomtap: flow cache, flow memory, sketch",
	[HB_NO_CACHE] = "- flow cache (every packet keyed)",
	[HB_SKETCH] = "- flow memory too: the sketch alone",
	[HB_SKETCH_L2] = "  the same, 4 x 2048 (128 KiB, in L2)",
	[HB_SKETCH_ROW] = "  the same, 1 x 32768 (one row)",
	[HB_ROWS2] = "bloomtap, 2 x 65536 (same memory)",
	[HB_ROWS1] = "bloomtap, 1 x 131072 (same memory)",
	[HB_NO_ROWS] = "bloomtap without the sketch's rows",
	[HB_CACHE_HASH] = "  and without the flow memory",
	[HB_ADJACENT] = "bloomtap, a flow's 4 cells in adjacent lines",
	[HB_SKETCH_ADJACENT] = "  the sketch alone, so",
	[HB_COLD] = "bloomtap, a Cold Filter layer before the rows",
	[HB_SKETCH_COLD] = "  the layer and the sketch alone",
};
static struct target hb[HB_LEVERS];

/* The ablation (issue 11): window sizes, and the levers added one at a
 * time; the last row is the real program. */
#define AB_SIZES 7
static const uint32_t ab_kib[AB_SIZES] = { 128, 256, 512, 1024, 2048, 4096, 8192 };
enum { AB_FORMER, AB_BLOCK, AB_WORDS, AB_NH, AB_REAL, AB_LEVERS };
static const char *const ab_names[AB_LEVERS] = {
	[AB_FORMER] = "former: byte input, SipHash, 512-bit block, k=5",
	[AB_BLOCK] = "+ 128-bit block, k=8, masks in registers",
	[AB_WORDS] = "+ digest words from word loads",
	[AB_NH] = "+ NH and a mixer instead of SipHash",
	[AB_REAL] = "bloomtap (+ windows it turns itself)",
};
static struct target ab[AB_LEVERS][AB_SIZES];
#define AB_BYTES (8u << 20)	/* the ablation arrays: 8 MiB */
static void *ab_lines_mem, *ab_blocks_mem;	/* mmapped, cleared before each run */

/* Both directions (issue 38): the egress program's stages, as tc programs */
enum { EG_EMPTY, EG_PARSE, EG_HEAVY, EG_SPIE, EG_ALL, EG_TSO, EG_N };
static const char *const eg_names[EG_N] = {
	[EG_EMPTY] = "empty tc program (the floor)",
	[EG_PARSE] = "egress: parsing and counters",
	[EG_HEAVY] = "egress: parsing + heavy flows",
	[EG_SPIE] = "egress: parsing + SPIE",
	[EG_ALL] = "egress: everything",
	[EG_TSO] = "egress: everything, a TSO skb",
};
static struct target eg[EG_N];
#define TSO_SEGS 44	/* a 64 KB TSO skb of 1448-byte segments */
#define TSO_MSS 1448

static void drop_target(struct target *t)
{
	if (t->name[0]) {
		bt_instance_close(&t->inst);
		bt_instance_remove(t->name);
		t->name[0] = 0;
	}
}

static void cleanup(void)
{
	for (int i = 0; i < P_MAX; i++)
		drop_target(&targets[i]);
	for (int l = 0; l < AB_LEVERS; l++)
		for (int z = 0; z < AB_SIZES; z++)
			drop_target(&ab[l][z]);
	for (int l = 0; l < HB_LEVERS; l++)
		drop_target(&hb[l]);
	for (int e = 0; e < EG_N; e++)
		drop_target(&eg[e]);
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

static int make_bloomtap_cfg(struct target *t, const char *what, bool heavy, bool spie,
			     struct bt_instance_cfg cfg)
{
	cfg.flags |= (heavy ? 0 : BT_META_NO_HEAVY) | (spie ? 0 : BT_META_NO_SPIE);

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

static int make_bloomtap(struct target *t, const char *what, bool heavy, bool spie, __u32 flags,
			 uint64_t window_bits, uint32_t windows)
{
	struct bt_instance_cfg cfg = { .flags = flags,
				       .spie = { .window_bits = window_bits, .windows = windows } };

	return make_bloomtap_cfg(t, what, heavy, spie, cfg);
}

/* The breakdown's instances: bloomtap's program, parts cut out. */
static int make_heavy_breakdown(void)
{
	static const struct { __u32 cut, depth, width; } lever[HB_LEVERS] = {
		[HB_BLOOMTAP] = { 0 },
		[HB_NO_CACHE] = { BT_CUT_CACHE },
		[HB_SKETCH] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY },
		[HB_SKETCH_L2] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY, 4, 2048 },
		[HB_SKETCH_ROW] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY, 1, 32768 },
		[HB_ROWS2] = { 0, 2, 65536 },
		[HB_ROWS1] = { 0, 1, 131072 },
		[HB_NO_ROWS] = { BT_CUT_SKETCH },
		[HB_CACHE_HASH] = { BT_CUT_SKETCH | BT_CUT_FLOW_MEMORY },
		[HB_ADJACENT] = { BT_CUT_ADJACENT_ROWS },
		[HB_SKETCH_ADJACENT] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY | BT_CUT_ADJACENT_ROWS },
		/* one row more: the layer lives in the last (bpf/heavy.bpf.h) */
		[HB_COLD] = { BT_CUT_COLD_FILTER, 5, 32768 },
		[HB_SKETCH_COLD] = { BT_CUT_CACHE | BT_CUT_FLOW_MEMORY | BT_CUT_COLD_FILTER, 5, 32768 },
	};
	char what[16];

	for (int l = 0; l < HB_LEVERS; l++) {
		struct bt_instance_cfg cfg = { .cut = lever[l].cut,
					       .sketch = { .depth = lever[l].depth,
							   .width = lever[l].width } };

		snprintf(what, sizeof(what), "hb%d", l);
		if (make_bloomtap_cfg(&hb[l], what, true, false, cfg))
			return -1;
	}
	return 0;
}

/* One measurement: REPEAT packets through the driver into target t. */
static int measure(struct bench_bpf *skel, struct target *t, const struct frame *f,
		   double *ns)
{
	int drive = bpf_program__fd(t->tc ? skel->progs.bench_drive_tc : skel->progs.bench_drive);
	/* a TSO skb: its segments in the skb's shared info, as the stack
	 * hands tc egress one */
	struct __sk_buff skb = { .gso_segs = t->gso_segs, .gso_size = t->gso_segs ? TSO_MSS : 0,
				 /* the qdisc layer's length: each segment's headers */
				 .wire_len = t->gso_segs ? f->len + (t->gso_segs - 1) * 54 : 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len,
		    .repeat = REPEAT, .ctx_in = t->tc ? &skb : NULL,
		    .ctx_size_in = t->tc ? sizeof(skb) : 0);
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(t->tc ? skel->maps.bench_tc_progs
						  : skel->maps.bench_progs), &zero, &t->fd, 0))
		return -errno;
	if (t->ablation) {
		void *a = t->lines ? ab_lines_mem : ab_blocks_mem;

		memset(a, 0, AB_BYTES);	/* clean windows, as the real ring's */
		skel->bss->ab_load_shift = t->load_shift;
		skel->bss->ab_unit_shift = t->unit_shift;
		skel->bss->ab_win_mask = t->win_mask;
		skel->bss->cursor = 0;
	}
	/* a heavy-flow run is one interval of REPEAT packets, starting empty */
	if (t->heavy) {
		struct bt_heavy_maps m;

		if (bt_heavy_map(&t->inst, &m))
			return -ENOMEM;
		bt_heavy_flip(&m);
		bt_heavy_unmap(&m);
	}
	/* and a fresh ring, with clean windows ready for the whole run
	 * (instances are sized so that bt_spie_ahead() covers it) */
	if (t->spie) {
		struct bt_spie_maps sm;

		if (bt_spie_map(&t->inst, &sm))
			return -ENOMEM;
		bt_spie_reset(&sm);
		bt_spie_unmap(&sm);
	}
	if (bpf_prog_test_run_opts(drive, &o))
		return -errno;
	if (o.retval != (t->tc ? (__u32)-1 : XDP_PASS))	/* tc: TC_ACT_UNSPEC */
		return -EPROTO;
	*ns = o.duration;	/* the kernel's average per iteration */
	return 0;
}

/* ---- Watch lists (issue 13): the same entries in bloomtap's table, a
 * kernel hash map and an LPM trie. Set by watch_run() before it measures;
 * run_targets() fills the references of each driver it loads. ---- */
#define WATCH_KEYS 1000000
#define WATCH_CLASS_COUNT 200
static struct watch_ref {
	uint8_t addr[16];	/* v4-mapped for IPv4, masked to len */
	__u32 len;		/* over the 128 bits: IPv4 /L is 96 + L */
	__u32 cls;
} *watch_refs;
static uint32_t nwatch_refs;
/* the real-shaped rows' packets: source and destination, BENCH_SEQ_LEN */
static uint8_t (*watch_traffic)[32];
static long long memlock_hash, memlock_lpm;	/* of the last references filled */
static double watch_one_length_ns;		/* the first table's lookups */

/* Bytes the kernel charges for a map (bpftool's bytes_memlock). */
static long long map_memlock(int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	char cmd[96], buf[4096];
	long long v = -1;
	FILE *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	snprintf(cmd, sizeof(cmd), "bpftool -j map show id %u 2>/dev/null", info.id);
	if (!(p = popen(cmd, "r")))
		return -1;
	if (fgets(buf, sizeof(buf), p)) {
		char *m = strstr(buf, "\"bytes_memlock\":");

		if (m)
			v = atoll(m + strlen("\"bytes_memlock\":"));
	}
	pclose(p);
	return v;
}

static int fill_watch_refs(struct bench_bpf *skel)
{
	struct { __u32 prefixlen; uint8_t addr[16]; } *lk = malloc(nwatch_refs * sizeof(*lk));
	uint8_t (*hk)[16] = malloc(nwatch_refs * sizeof(*hk));
	__u32 *v = malloc(nwatch_refs * sizeof(*v)), n = nwatch_refs;
	int hfd = bpf_map__fd(skel->maps.ref_hash), lfd = bpf_map__fd(skel->maps.ref_lpm), err = -1;

	if (!lk || !hk || !v)
		goto out;
	for (uint32_t i = 0; i < nwatch_refs; i++) {
		memcpy(hk[i], watch_refs[i].addr, 16);
		lk[i].prefixlen = watch_refs[i].len;
		memcpy(lk[i].addr, watch_refs[i].addr, 16);
		v[i] = watch_refs[i].cls;
	}
	if (bpf_map_update_batch(hfd, hk, v, &n, NULL) || n != nwatch_refs)
		goto out;
	n = nwatch_refs;
	if (bpf_map_update_batch(lfd, lk, v, &n, NULL) || n != nwatch_refs)
		goto out;
	memlock_hash = map_memlock(hfd);
	memlock_lpm = map_memlock(lfd);
	err = 0;
out:
	free(lk);
	free(hk);
	free(v);
	return err;
}

/* The kernel's bytes for the watch table in use: its chunks' maps; -1
 * when it has none. */
static long long table_memlock(const struct bt_instance *inst)
{
	struct bt_watch_table t;
	long long mem = -1;
	__u32 slot = 0, id, x;
	int fd;

	if (!bt_watch_table_open(inst, false, &t)) {
		slot = t.slot;
		bt_watch_table_close(&t);
	}
	for (__u32 c = 0; c < BT_WATCH_CHUNKS; c++) {
		x = BT_WATCH_CHUNK_KEY(slot, c);
		if (bpf_map_lookup_elem(inst->watch_cells_fd, &x, &id) ||
		    (fd = bpf_map_get_fd_by_id(id)) < 0)
			break;
		mem = (mem < 0 ? 0 : mem) + map_memlock(fd);
		close(fd);
	}
	return mem;
}

/* The driver, and the ablation arrays it writes mapped for clearing. */
static int load_driver(struct bench_bpf **out, bool ipv6, const uint32_t *seq)
{
	struct bench_bpf *skel = bench_driver_open(ipv6, seq, AB_BYTES, nwatch_refs, watch_traffic);

	if (!skel)
		return -1;
	if (ab_lines_mem)
		munmap(ab_lines_mem, AB_BYTES);
	if (ab_blocks_mem)
		munmap(ab_blocks_mem, AB_BYTES);
	ab_lines_mem = mmap(NULL, AB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			    bpf_map__fd(skel->maps.ab_lines), 0);
	ab_blocks_mem = mmap(NULL, AB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			     bpf_map__fd(skel->maps.ab_blocks), 0);
	if (ab_lines_mem == MAP_FAILED || ab_blocks_mem == MAP_FAILED) {
		ab_lines_mem = ab_blocks_mem = NULL;
		bench_bpf__destroy(skel);
		return -1;
	}
	*out = skel;
	return 0;
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


/* The number a shell command prints (0 when it prints none). */
static __u64 sh_number(const char *cmd)
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
static double live_once(struct bench_bpf *skel, int home, const struct frame *f)
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

/* The agent's part in the live run: the ring kept turning every 10 ms. */
struct live_keeper {
	volatile bool stop;
	const char *name;
};

static void *keep_ring(void *arg)
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
static int live_up(int home, struct bench_bpf **skel, const uint32_t *seq)
{
	live_down();
	return home < 0 || sh("ip netns add " LIVE_NS_A) || sh("ip netns add " LIVE_NS_B) ||
	       sh("ip link add " LIVE_IF_A " netns " LIVE_NS_A " type veth peer name " LIVE_IF_B
		  " netns " LIVE_NS_B) ||
	       sh("ip -n " LIVE_NS_A " link set " LIVE_IF_A " up") ||
	       sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " up") ||
	       load_driver(skel, false, seq) ? -1 : 0;
}

/* One live measurement with a bench instance's program at B (no drop
 * programs), its ring kept turning: -1 when it cannot be attached. */
static double live_target(struct bench_bpf *skel, int home, const struct frame *fr,
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
	    sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
	    sh("ip -n " LIVE_NS_B " addr add 198.18.0.2/15 dev " LIVE_IF_B) ||
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

/* The cost of a drop event (issue 19): the live generator's frames reach
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
	    sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
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

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The archive: windows filled to their design load by the real program
 * (the driver's Zipf traffic, every packet distinct), sealed and archived
 * by the keeper as the agent does; its size a packet, and the time of a
 * one-packet query against decompressing each window whole. */
#define ARCHIVE_WINDOWS 1024

static void archive_run(FILE *f, const uint32_t *seq)
{
	struct target *t = &targets[P_SPIE];
	const struct bt_meta *m = &t->inst.meta;
	char dir[] = "/tmp/bloomtap-bench-archive-XXXXXX";
	struct bench_bpf *skel = NULL;
	struct bt_spie_maps sm;
	struct bt_keeper k;
	struct frame fr;
	char **names = NULL;
	int nfiles = 0;
	uint64_t bytes = 0, windows = 0;
	double t0, q[5], full = 0;
	__u32 zero = 0;

	if (!mkdtemp(dir) || load_driver(&skel, false, seq) || bt_spie_map(&t->inst, &sm))
		goto out;
	k = (struct bt_keeper){ .sm = &sm, .name = t->name, .archive = dir };
	bench_frame_v4_udp(&fr);
	bt_spie_reset(&sm);
	bpf_map_update_elem(bpf_map__fd(skel->maps.bench_progs), &zero, &t->fd, 0);
	/* 16 windows a run, the keeper between runs */
	while (k.archived < ARCHIVE_WINDOWS) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = fr.len,
			    .repeat = 16 * m->design_load);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_drive), &o))
			goto out_unmap;
		bt_keeper_turn(&k, false, k.sealed + 16 >= ARCHIVE_WINDOWS);
	}
	if (bt_archive_list(dir, NULL, &names, &nfiles) || !nfiles)
		goto out_unmap;
	for (int i = 0; i < nfiles; i++) {
		char path[600];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st))
			bytes += st.st_size;
	}
	double bits = bytes * 8.0 / ((double)k.archived * m->design_load);

	out(stdout, f, "\narchive: %llu windows filled to their design load of %llu packets, in "
	    "%d files (%.1f MiB): %.1f bits a packet, %.2f %% of link capacity at 800-byte "
	    "packets (SPIE reported 0.5 %%)\n", (unsigned long long)k.archived,
	    (unsigned long long)m->design_load, nfiles, bytes / 1048576.0, bits,
	    100 * bits / (800 * 8));

	/* one packet (one the archive does not hold: every window is read) */
	const char *hex = "4500001c00010000401100000a0000010a000002d431003500080000";

	for (int r = 0; r < 5; r++) {
		char err[256];
		struct json_object *o;

		t0 = now_s();
		o = bt_trace_buffer(&(struct bt_trace_query){ .archive = dir }, hex, strlen(hex), err,
				    sizeof(err));
		q[r] = now_s() - t0;
		if (!o)
			goto out_unmap;
		if (r == 0) {
			struct json_object *p = json_object_array_get_idx(o, 0), *v;

			if (p && json_object_object_get_ex(p, "windows_searched", &v))
				windows = json_object_get_int64(v);
		}
		json_object_put(o);
	}
	/* each window decompressed whole, as format 2 stored it and as its
	 * queries read it: one zstd frame a window */
	{
		size_t raw = m->window_bits / 8, cap = ZSTD_compressBound(raw), clen = 0;
		void *buf = malloc(raw), *cbuf = malloc(cap);
		const char *why;
		struct bt_archive_file *af = bt_archive_open(dir, names[0], &why);
		int n = 0;

		if (buf && cbuf && af && !bt_archive_read_window(af, 0, buf))
			clen = ZSTD_compress(cbuf, cap, buf, raw, 3);
		t0 = now_s();
		for (; clen && !ZSTD_isError(clen) && n < 200; n++)
			if (ZSTD_decompress(buf, raw, cbuf, clen) != raw)
				break;
		full = (now_s() - t0) / (n ? n : 1);
		bt_archive_close(af);
		free(buf);
		free(cbuf);
	}
	double one = median(q, 5) / (windows ? windows : 1);

	out(stdout, f, "archive query: one packet against %llu windows: %.1f ms, %.1f us a window; "
	    "decompressing a window whole (one frame, format 2): %.0f us\n"
	    "  target: a one-packet query at least 50 x faster a window than full decompression: "
	    "%.0f x: %s\n", (unsigned long long)windows, median(q, 5) * 1e3, one * 1e6, full * 1e6,
	    full / one, full >= 50 * one ? "met" : "MISSED");
out_unmap:
	bt_spie_unmap(&sm);
out:
	if (names) {
		for (int i = 0; i < nfiles; i++) {
			char path[600];

			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
		bt_strv_free(names, nfiles);
	}
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		sh(cmd);
	}
	if (skel)
		bench_bpf__destroy(skel);
}

/* Medians of ROUNDS interleaved rounds over the n targets t[] (rotating
 * the order each round); frame f, flow sequence seq. 0, or -1 after a
 * message. */
static int run_targets(const struct frame *f, bool ipv6, const uint32_t *seq,
		       struct target **t, int n, double *med)
{
	struct bench_bpf *skel;

	if (load_driver(&skel, ipv6, seq)) {
		fprintf(stderr, "bench: loading the driver failed\n");
		return -1;
	}
	targets[P_EMPTY].fd = bpf_program__fd(skel->progs.bench_empty);
	eg[EG_EMPTY].fd = bpf_program__fd(skel->progs.bench_tc_empty);
	targets[P_REF_CMS].fd = bpf_program__fd(skel->progs.bench_ref_cms);
	targets[P_REF_BLOOM].fd = bpf_program__fd(skel->progs.bench_ref_bloom);
	targets[P_REF_BLOOM_MEM].fd = bpf_program__fd(skel->progs.bench_ref_bloom_mem);
	targets[P_REF_HASH].fd = bpf_program__fd(skel->progs.bench_ref_hash);
	targets[P_REF_LPM].fd = bpf_program__fd(skel->progs.bench_ref_lpm);
	targets[P_CHASE1].fd = bpf_program__fd(skel->progs.bench_ref_chase1);
	targets[P_CHASE2].fd = bpf_program__fd(skel->progs.bench_ref_chase2);
	targets[P_CHASE4].fd = bpf_program__fd(skel->progs.bench_ref_chase4);
	targets[P_CHASE4W].fd = bpf_program__fd(skel->progs.bench_ref_chase4w);
	targets[P_CHASE4W_INNER].fd = bpf_program__fd(skel->progs.bench_ref_chase4w_inner);
	if (nwatch_refs && fill_watch_refs(skel)) {
		fprintf(stderr, "bench: filling the hash map and LPM trie failed\n");
		bench_bpf__destroy(skel);
		return -1;
	}
	for (int s = 0; s < AB_SIZES; s++) {
		ab[AB_FORMER][s].fd = bpf_program__fd(skel->progs.ab_former);
		ab[AB_BLOCK][s].fd = bpf_program__fd(skel->progs.ab_block);
		ab[AB_WORDS][s].fd = bpf_program__fd(skel->progs.ab_words);
		ab[AB_NH][s].fd = bpf_program__fd(skel->progs.ab_nh);
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < n; k++) {
			struct target *x = t[(k + r) % n];
			int err = measure(skel, x, f, &x->ns[r]);

			if (err) {
				fprintf(stderr, "bench: a measurement failed: %s\n", strerror(-err));
				bench_bpf__destroy(skel);
				return -1;
			}
		}
	for (int k = 0; k < n; k++)
		med[k] = median(t[k]->ns, ROUNDS);
	bench_bpf__destroy(skel);
	return 0;
}

static int run_case(const struct frame *f, bool ipv6, const uint32_t *seq, unsigned which,
		    double med[P_MAX]);
static void print_table(FILE *f, const char *title, unsigned which, const double med[P_MAX]);

static void watch_addr(struct watch_ref *r, uint32_t a4, const uint8_t *a6)
{
	memset(r->addr, 0, 16);
	r->len = 128;
	if (a6) {
		memcpy(r->addr, a6, 16);
	} else {
		r->addr[10] = r->addr[11] = 0xff;
		a4 = htonl(a4);
		memcpy(r->addr + 12, &a4, 4);
	}
}

/* A table of n random IPv6 /128s under 2001:db8::/32; its build time. */
static double watch_build_s(size_t n, uint64_t *rng, double *bits)
{
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	struct bt_hash_key_raw raw = { bt_rng(rng), bt_rng(rng) };
	struct bt_hash_keys hk;
	struct bt_watch_built b;
	double t0, t = -1;

	if (!k)
		return -1;
	bt_hash_keys_derive(&raw, &hk);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct bt_watch_key){ 0x20010db800000000ULL | (bt_rng(rng) >> 32), bt_rng(rng),
					      128, 1 + i % WATCH_CLASS_COUNT };
	t0 = now_s();
	if (!bt_watch_build(&hk, k, n, BT_WATCH_CHECK_BITS, bt_rng(rng), 0, &b)) {
		t = now_s() - t0;
		*bits = bt_watch_bits_per_entry(&b.b.hdr);
		bt_watch_built_free(&b);
	}
	free(k);
	return t;
}

/* The cost of prefix lengths (no target): a million IPv4 entries at eight
 * lengths, /32 to /16 in other parts of the space and 198.16.0.0/12 over
 * the traffic, so that both addresses of every packet take all eight
 * probes (the worst case) before their hit; the LPM trie holds the same
 * prefixes. */
static void watch_lengths_run(FILE *f, const uint32_t *seq, struct target *w,
			      struct bt_watch_list *l)
{
	static const struct { uint32_t len, count, base; } part[] = {
		{ 32, 400000, 0x01000000 }, { 28, 200000, 0x02000000 },
		{ 24, 200000, 0x03000000 }, { 22, 100000, 0x14000000 },
		{ 20, 50000, 0x28000000 },  { 18, 30000, 0x3c000000 },
		{ 16, 19999, 0x64000000 },  { 12, 1, 0xc6100000 },
	};
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_LPM;
	struct bt_watch_loaded info;
	double med[P_MAX];
	struct frame fr;
	uint32_t n = 0;

	memset(l->entries, 0, sizeof(l->entries));
	for (size_t p = 0; p < sizeof(part) / sizeof(part[0]); p++)
		for (uint32_t j = 0; j < part[p].count; j++, n++) {
			struct watch_ref *r = &watch_refs[n];
			uint32_t a = part[p].base + (j << (32 - part[p].len));

			watch_addr(r, a, NULL);
			r->len = 96 + part[p].len;
			r->cls = 1 + n % WATCH_CLASS_COUNT;
			bt_watch_words(r->addr, &l->e[n].key.hi, &l->e[n].key.lo);
			l->e[n].key.len = r->len;
			l->e[n].key.class_id = r->cls;
			l->entries[r->cls]++;
		}
	l->n = n;
	if (bt_watch_load(&w->inst, l, BT_WATCH_CHECK_BITS, &info))
		return;
	nwatch_refs = n;
	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, seq, which, med)) {
		nwatch_refs = 0;
		return;
	}
	nwatch_refs = 0;
	print_table(f, "watch lists, the cost of prefix lengths (no target): 1,000,000 IPv4 "
		    "entries at 8 lengths, both addresses matching only the shortest", which, med);
	out(stdout, f, "  at most %u reads an address (the range table's bound): +%.1f ns on top of "
	    "parsing (LPM trie +%.1f); one length above: +%.1f\n", info.probes[0],
	    med[P_WATCH] - med[P_PARSE],
	    med[P_REF_LPM] - med[P_PARSE], watch_one_length_ns);
}

/* ---- Watch lists of real shapes (issue 18): generated BGP-shaped lists
 * and BENCH_WATCH_LIST=FILE, each against the LPM trie holding the same
 * list, with traffic over the list's networks ---- */

/* What one list costs, for the rows and the one-line summary. */
struct watch_cost {
	double ns, lpm_ns;		/* both addresses, on top of parsing */
	long long mem, lpm_mem;		/* bytes_memlock */
	double probes_mean;
	uint32_t probes_max, bound;	/* seen; the table's bound */
	double build_s;
	size_t keys, markers;
	size_t ranges, lines;		/* IPv4's range table */
	bool v6;			/* the traffic's family */
	bool tree;			/* IPv6 in the range tree */
	size_t v6_ranges;
	/* IPv6: the floor, P_CHASE1..P_CHASE4W on top of parsing */
	double floor[P_MAX - P_CHASE1];
};

/* Probes of the traffic's lookups in user space (the datapath's search):
 * mean and most; and, for the ablation, the probes ABI 8 took (every
 * length of the family, longest first, to the first hit). */
static void watch_probes(const struct bt_instance *inst, bool v6, struct watch_cost *c,
			 double *linear_mean)
{
	struct bt_watch_table t;
	uint64_t sum = 0, lin = 0, n = 0;

	c->probes_max = 0;
	if (bt_watch_table_open(inst, false, &t))
		return;
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		for (int d = 0; d < 2; d++) {
			struct bt_watch_how how;
			const uint8_t *a = watch_traffic[i] + 16 * d;
			uint32_t nl = t.hdr.nlen[v6], r = nl;

			bt_watch_table_classify(&t, a, !v6, &how);
			sum += how.probes;
			c->probes_max = how.probes > c->probes_max ? how.probes : c->probes_max;
			for (uint32_t j = 0; how.len && j < nl; j++)
				if (t.hdr.len[v6][nl - 1 - j] == how.len)
					r = j + 1;
			lin += r;
			n++;
		}
	bt_watch_table_close(&t);
	c->probes_mean = (double)sum / n;
	if (linear_mean)
		*linear_mean = (double)lin / n;
}

/* Loads list l into bloomtap (flags: BT_WATCH_F_*) and the LPM trie,
 * draws traffic of one family over it (9 packets in 10 from an address
 * under a random entry, 1 from anywhere in the family's unicast space),
 * measures both. 0, or -1. */
static int watch_list_cost(const uint32_t *seq, struct target *w, const struct bt_watch_list *l,
			   bool v6, unsigned flags, struct watch_cost *c, double *linear_mean)
{
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_LPM;
	const unsigned chase = 1u << P_CHASE1 | 1u << P_CHASE2 | 1u << P_CHASE4 | 1u << P_CHASE4W |
			       1u << P_CHASE4W_INNER;
	struct bt_watch_loaded info;
	uint32_t *fam = malloc(l->n * sizeof(*fam)), nfam = 0;
	uint64_t rng = 0x18b6;
	double med[P_MAX];
	struct frame fr;
	int err = -1;

	memset(c, 0, sizeof(*c));
	c->v6 = v6;
	watch_refs = calloc(l->n, sizeof(*watch_refs));
	watch_traffic = malloc((size_t)BENCH_SEQ_LEN * sizeof(*watch_traffic));
	if (!fam || !watch_refs || !watch_traffic)
		goto out;
	for (size_t i = 0; i < l->n; i++) {
		const struct bt_watch_key *k = &l->e[i].key;
		__u64 hi = htobe64(k->hi), lo = htobe64(k->lo);

		memcpy(watch_refs[i].addr, &hi, 8);
		memcpy(watch_refs[i].addr + 8, &lo, 8);
		watch_refs[i].len = k->len;
		watch_refs[i].cls = k->class_id;
		if (bt_watch_key_is_v4(k) != v6)
			fam[nfam++] = i;
	}
	if (!nfam)
		goto out;
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		for (int d = 0; d < 2; d++) {
			struct bt_watch_key any = { 0, 0xffff00000000ULL, v6 ? 3 : BT_WATCH_V4, 0 };

			if (v6)
				any.hi = 0x2000000000000000ULL;
			bgp_addr_under(bt_rng(&rng) % 10 ? &l->e[fam[bt_rng(&rng) % nfam]].key : &any,
					 watch_traffic[i] + 16 * d, &rng);
		}
	if (bt_watch_load_flags(&w->inst, l, BT_WATCH_CHECK_BITS, flags, &info))
		goto out;
	c->keys = info.keys;
	c->markers = info.markers;
	c->ranges = info.ranges;
	c->lines = info.lines;
	c->build_s = info.build_s;
	c->bound = info.probes[v6];
	c->tree = info.v6_tree;
	c->v6_ranges = info.v6_ranges;
	c->mem = table_memlock(&w->inst);
	watch_probes(&w->inst, v6, c, linear_mean);
	nwatch_refs = l->n;
	if (v6)
		bench_frame_v6_tcp(&fr);
	else
		bench_frame_v4_udp(&fr);
	/* IPv6's floor, in an array of the table's bytes */
	bench_chase_lines = v6 && c->mem > 64 ? c->mem / 64 : 1;
	if (run_case(&fr, v6, seq, which | (v6 ? chase : 0), med))
		goto out;
	c->ns = med[P_WATCH] - med[P_PARSE];
	c->lpm_ns = med[P_REF_LPM] - med[P_PARSE];
	c->lpm_mem = memlock_lpm;
	for (int p = P_CHASE1; v6 && p < P_MAX; p++)
		c->floor[p - P_CHASE1] = med[p] - med[P_PARSE];
	err = 0;
out:
	bench_chase_lines = 1;
	nwatch_refs = 0;
	free(watch_refs);
	watch_refs = NULL;
	free(watch_traffic);
	watch_traffic = NULL;
	free(fam);
	return err;
}

/* The one line an operator reads before loading a list (docs/watch-lists.md,
 * "What a list costs"). */
static void watch_cost_line(FILE *f, const char *what, const struct watch_cost *c)
{
	out(stdout, f, "  cost of %s: +%.0f ns a packet (both addresses; the LPM trie +%.0f), "
	    "%.1f MiB (%.1f bytes an entry), %.2f %s an address (at most %u), built in "
	    "%.2f s\n", what, c->ns, c->lpm_ns, c->mem / 1048576.0,
	    (double)c->mem / c->keys, c->probes_mean,
	    c->v6 && !c->tree ? "probes" : "lines", c->bound, c->build_s);
}

static void watch_cost_rows(FILE *f, const char *title, const struct watch_cost *c)
{
	long long ours = c->mem;

	out(stdout, f, "\n%s\n", title);
	out(stdout, f, "  %-34s %12s %14s %12s %14s\n", "", "ns/pkt (+)", "bytes_memlock",
	    "bytes/entry", "probes/lookup");
	out(stdout, f, "  %-34s %12.1f %11.1f MiB %12.1f %8.2f (max %u, bound %u)\n",
	    "bloomtap", c->ns, ours / 1048576.0, (double)ours / c->keys, c->probes_mean,
	    c->probes_max, c->bound);
	out(stdout, f, "  %-34s %12.1f %11.1f MiB %12.1f\n", "kernel LPM trie", c->lpm_ns,
	    c->lpm_mem / 1048576.0, (double)c->lpm_mem / c->keys);
	out(stdout, f, "  entries %zu, markers %zu (%.2f a key); build %.2f s (%.2f s a million "
	    "entries)\n", c->keys, c->markers, (double)c->markers / c->keys, c->build_s,
	    c->build_s / (c->keys / 1e6));
	if (c->lines && !c->v6)
		out(stdout, f, "  IPv4: probes are lines read (index and ranges); %zu ranges (%.2f an "
		    "entry) in %zu lines of 64 bytes with their index (%.1f bytes a range)\n",
		    c->ranges, (double)c->ranges / c->keys, c->lines, 64.0 * c->lines / c->ranges);
	if (c->tree && c->v6)
		out(stdout, f, "  IPv6: in the range tree, probes are lines read (a node a level and "
		    "the leaf); %zu ranges (%.2f an entry)\n", c->v6_ranges,
		    (double)c->v6_ranges / c->keys);
}

/* IPv6's floor (issue 40): what reading lines alone costs, in an array of
 * the table's size, lines chosen by the line before as a search's are;
 * how many such lines an address the time target leaves. */
static void watch_floor(FILE *f, const struct watch_cost *c, double ns_max)
{
	const double *x = c->floor;	/* P_CHASE1.. on top of parsing */
	double step = (x[P_CHASE4 - P_CHASE1] - x[0]) / 3;	/* a dependent line, 2 addresses */
	double call = (x[P_CHASE4W_INNER - P_CHASE1] - x[P_CHASE4W - P_CHASE1]) / 32;
	double calls = 2 * BT_WATCH_WAYS * c->probes_mean;	/* ABI 16: a call a cell */
	int k = 0;

	while (k < 16 && x[0] + k * step <= ns_max)
		k++;
	out(stdout, f, "  the floor (reads of random 64-byte lines in an array of the table's "
	    "size, each waiting for the one before; both addresses, on top of parsing):\n"
	    "    1 line an address +%.0f ns, 2 lines +%.0f, 4 lines +%.0f; 4 reads of 4 lines "
	    "each (4 probes' cells) +%.0f\n"
	    "    the same, each line a call (an inner map of its own size) +%.0f: "
	    "%.1f ns a call\n"
	    "    a dependent line costs +%.0f ns a packet (the two addresses' reads overlap); "
	    "+%.0f ns leaves %d such lines an address\n",
	    x[0], x[P_CHASE2 - P_CHASE1], x[P_CHASE4 - P_CHASE1], x[P_CHASE4W - P_CHASE1],
	    x[P_CHASE4W_INNER - P_CHASE1], call, step, ns_max, k);
	if (c->tree)
		out(stdout, f, "    this tree: %.2f lines an address, one a level (the upper levels "
		    "in cache), the two addresses side by side\n", c->probes_mean);
	else
		out(stdout, f, "    this search: %.2f probes an address, 4 cells each, read inline "
		    "(ABI 16 called for each: %.0f calls a packet, %.0f ns at that cost)\n",
		    c->probes_mean, calls, calls * call);
}

/* Issue 40's targets, against the LPM trie of the same run: IPv4 at most
 * +150 ns a packet and 0.08 of the trie, IPv6 +300 and 0.1; memory at
 * most mem_bytes an entry (0: not checked). */
static void watch_targets(FILE *f, const struct watch_cost *c, bool v6, double mem_bytes)
{
	double ns_max = v6 ? 300 : 150, ratio_max = v6 ? 0.10 : 0.08;
	double per_entry = (double)c->mem / c->keys;

	out(stdout, f, "  targets:\n");
	out(stdout, f, "  - at most +%.0f ns a packet: +%.0f: %s\n", ns_max, c->ns,
	    c->ns <= ns_max ? "met" : "MISSED");
	out(stdout, f, "  - at most %.2f of the LPM trie's: %.3f: %s\n", ratio_max,
	    c->ns / c->lpm_ns, c->ns <= ratio_max * c->lpm_ns ? "met" : "MISSED");
	if (mem_bytes)
		out(stdout, f, "  - memory at most %.1f bytes an entry: %.1f: %s\n", mem_bytes,
		    per_entry, per_entry <= mem_bytes ? "met" : "MISSED");
	if (v6)
		watch_floor(f, c, ns_max);
}

/* A generated list of n BGP-shaped prefixes of one family, 200 classes. */
static int bgp_list(struct bt_watch_list *l, size_t n, bool v6)
{
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	uint64_t rng = v6 ? 0xb6b6 : 0xb4b4;

	memset(l, 0, sizeof(*l));
	l->e = calloc(n, sizeof(*l->e));
	if (!k || !l->e) {
		free(k);
		free(l->e);
		return -1;
	}
	bgp_shape_make(k, n, !v6, v6 ? 57 : 50, WATCH_CLASS_COUNT, &rng);
	for (size_t i = 0; i < n; i++) {
		l->e[i].key = k[i];
		l->entries[k[i].class_id]++;
	}
	l->n = n;
	l->nclasses = WATCH_CLASS_COUNT;
	for (uint32_t c = 1; c <= WATCH_CLASS_COUNT; c++)
		snprintf(l->names[c], sizeof(l->names[c]), "c%u", c);
	free(k);
	return 0;
}

static void watch_shapes_run(FILE *f, const uint32_t *seq, struct target *w)
{
	for (int v6 = 0; v6 <= 1; v6++) {
		struct bt_watch_list l;
		struct watch_cost c, flat;
		double linear = 0;
		char title[200];

		if (bgp_list(&l, WATCH_KEYS, v6))
			continue;
		if (watch_list_cost(seq, w, &l, v6, 0, &c, v6 ? &linear : NULL)) {
			out(stdout, f, "\nwatch lists, generated %s: failed\n", v6 ? "IPv6" : "IPv4");
			bt_watch_list_free(&l);
			continue;
		}
		snprintf(title, sizeof(title), "watch lists, a generated %s list of 1,000,000 "
			 "prefixes of a BGP table's lengths (tests/lib/bgp_shape.h), 200 classes; "
			 "traffic 90 %% under its prefixes", v6 ? "IPv6" : "IPv4");
		watch_cost_rows(f, title, &c);
		/* today's memory (ABI 15) an entry: issue 40's bound */
		watch_targets(f, &c, v6, v6 ? 10.4 : 8.6);
		out(stdout, f, "  - build at most 1 s a million entries, markers included: %.2f s: "
		    "%s\n", c.build_s / (c.keys / 1e6),
		    c.build_s <= c.keys / 1e6 ? "met" : "MISSED");
		/* the ablation: ABI 8's probes, binary search on lengths (IPv4
		 * in the Bloomier table too), the range table (IPv4) */
		if (!v6 && !watch_list_cost(seq, w, &l, v6, BT_WATCH_F_FLAT, &flat, &linear))
			out(stdout, f, "  ablation (ns on top of parsing):\n"
			    "    every length, longest first (ABI 8): %.2f probes\n"
			    "    binary search on all the family's lengths: %.2f probes (max %u), "
			    "+%.1f ns, %.1f bytes an entry, %zu markers\n", linear, flat.probes_mean,
			    flat.probes_max, flat.ns, (double)flat.mem / flat.keys,
			    flat.markers);
		if (v6)
			out(stdout, f, "  ablation (ns on top of parsing):\n"
			    "    every length, longest first (ABI 8): %.2f probes\n"
			    "    binary search on the family's lengths: %.2f probes (max %u), +%.1f "
			    "ns, %zu markers%s\n", linear, c.probes_mean, c.probes_max, c.ns,
			    c.markers, c.tree ? " (the tree's: the choice below)" : "");
		/* the range tree, which the load does not choose when it takes
		 * more memory than the search's table (ABI 18) */
		if (v6 && !watch_list_cost(seq, w, &l, v6, BT_WATCH_B_V6_TREE, &flat, NULL))
			out(stdout, f, "    the range tree (ABI 18%s): %.2f lines (max %u), +%.1f ns, "
			    "%.1f bytes an entry, %zu ranges\n", c.tree ? "" : ", not chosen: more memory",
			    flat.probes_mean, flat.probes_max, flat.ns, (double)flat.mem / flat.keys,
			    flat.v6_ranges);
		else if (v6)
			out(stdout, f, "    the range tree: failed\n");
		else
			out(stdout, f, "    the range table (ABI 16): %.2f lines (max %u), +%.1f ns, "
			    "%.1f bytes an entry\n", c.probes_mean, c.probes_max, c.ns,
			    (double)c.mem / c.keys);
		watch_cost_line(f, v6 ? "this IPv6 list" : "this IPv4 list", &c);
		bt_watch_list_free(&l);
	}
}

/* BENCH_WATCH_LIST=FILE: the operator's own list, each family it holds. */
static int watch_user_list_run(FILE *f, const uint32_t *seq, struct target *w, const char *path)
{
	const char *how = getenv("BENCH_WATCH_IPV6");	/* IPv6's lookup: auto, tree, search */
	unsigned flags = how && !strcmp(how, "tree")	 ? BT_WATCH_B_V6_TREE :
			 how && !strcmp(how, "search") ? BT_WATCH_B_V6_SEARCH : 0;
	struct bt_watch_list l;
	char err[BT_WATCH_ERR_LEN];
	int rc = 0;

	if (bt_watch_list_read(path, &l, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	for (int v6 = 0; v6 <= 1; v6++) {
		struct watch_cost c;
		char title[600];
		size_t n = 0;

		for (size_t i = 0; i < l.n; i++)
			n += bt_watch_key_is_v4(&l.e[i].key) != v6;
		if (!n)
			continue;
		if (watch_list_cost(seq, w, &l, v6, flags, &c, NULL)) {
			out(stdout, f, "\n%s, %s traffic: failed\n", path, v6 ? "IPv6" : "IPv4");
			rc = 1;
			continue;
		}
		snprintf(title, sizeof(title), "BENCH_WATCH_LIST=%s: %zu entries in %u classes "
			 "(%zu of them %s); %s traffic, 90 %% under them", path, l.n, l.nclasses, n,
			 v6 ? "IPv6" : "IPv4", v6 ? "IPv6" : "IPv4");
		watch_cost_rows(f, title, &c);
		watch_targets(f, &c, v6, 0);
		watch_cost_line(f, v6 ? "this list, IPv6 traffic" : "this list, IPv4 traffic", &c);
	}
	bt_watch_list_free(&l);
	return rc;
}

/* Lookups of both addresses of every packet, a million entries of one
 * prefix length (the traffic's 131,072 sources among them, so every
 * lookup hits), against the kernel's hash map and LPM trie; memory from
 * the kernel's accounting; bits a key; build time. */
static void watch_run(FILE *f, const uint32_t *seq)
{
	static struct bt_watch_list l;
	struct target *w = &targets[P_WATCH];
	struct bt_watch_loaded info;
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_HASH |
			       1u << P_REF_LPM;
	double med[P_MAX], build1, build10, bits1, bits10;
	uint64_t rng = 0x3a7c4;
	struct frame fr;
	long long mem_w = -1;

	watch_refs = calloc(WATCH_KEYS, sizeof(*watch_refs));
	l.e = calloc(WATCH_KEYS, sizeof(*l.e));
	if (!watch_refs || !l.e || make_bloomtap(w, "watch", false, false, 0, 0, 0))
		goto fail;
	for (uint32_t i = 0; i < WATCH_KEYS; i++) {
		struct watch_ref *r = &watch_refs[i];

		if (i < 0x20000) {			/* the traffic: 198.18.0.0/15 */
			watch_addr(r, 0xc6120000 + i, NULL);
		} else if (i < 0x20000 + 400000) {	/* 10.0.0.0 on */
			watch_addr(r, 0x0a000000 + i, NULL);
		} else {				/* 2001:db8::/32 */
			uint64_t a[2] = { htobe64(0x20010db800000000ULL | (bt_rng(&rng) >> 32)),
					  bt_rng(&rng) };

			watch_addr(r, 0, (const uint8_t *)a);
		}
		r->cls = 1 + i % WATCH_CLASS_COUNT;
		bt_watch_words(r->addr, &l.e[i].key.hi, &l.e[i].key.lo);
		l.e[i].key.len = 128;
		l.e[i].key.class_id = r->cls;
		l.entries[r->cls]++;
	}
	l.n = WATCH_KEYS;
	l.nclasses = WATCH_CLASS_COUNT;
	for (uint32_t c = 1; c <= WATCH_CLASS_COUNT; c++)
		snprintf(l.names[c], sizeof(l.names[c]), "c%u", c);
	if (bt_watch_load(&w->inst, &l, BT_WATCH_CHECK_BITS, &info))
		goto fail;
	mem_w = table_memlock(&w->inst);
	nwatch_refs = WATCH_KEYS;
	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, seq, which, med))
		goto fail;
	nwatch_refs = 0;
	print_table(f, "watch lists: 64-byte IPv4/UDP frames, both addresses looked up among "
		    "1,000,000 entries of one prefix length", which, med);
	double dw = med[P_WATCH] - med[P_PARSE], dh = med[P_REF_HASH] - med[P_PARSE];

	watch_one_length_ns = dw;

	build1 = watch_build_s(1000000, &rng, &bits1);
	build10 = watch_build_s(10000000, &rng, &bits10);
	out(stdout, f, "  memory (the kernel's bytes_memlock): bloomtap's table %.1f MiB (%.1f bytes "
	    "an entry), hash map %.1f MiB (%.1f), LPM trie %.1f MiB (%.1f)\n",
	    mem_w / 1048576.0, (double)mem_w / WATCH_KEYS, memlock_hash / 1048576.0,
	    (double)memlock_hash / WATCH_KEYS, memlock_lpm / 1048576.0,
	    (double)memlock_lpm / WATCH_KEYS);
	out(stdout, f, "  targets:\n");
	out(stdout, f, "  - lookups on top of parsing no more than the hash map's: +%.1f vs +%.1f ns "
	    "(LPM trie +%.1f): %s\n", dw, dh, med[P_REF_LPM] - med[P_PARSE],
	    dw <= dh ? "met" : "MISSED");
	out(stdout, f, "  - memory at least 10 x less than the hash map's: %.1f x: %s\n",
	    (double)memlock_hash / mem_w, memlock_hash >= 10 * mem_w ? "met" : "MISSED");
	const double need = 10 + BT_WATCH_CHECK_BITS;

	out(stdout, f, "  - bits a key at most 1.13 x the class, check, leaf and marker bits (%.0f "
	    "+ %d): %.2f bits, %.3f x: %s\n", 10.0, BT_WATCH_CHECK_BITS, info.bits_per_key,
	    info.bits_per_key / need, info.bits_per_key <= 1.13 * need ? "met" : "MISSED");
	out(stdout, f, "  - build at most 1 s per million keys: 1,000,000 in %.2f s, 10,000,000 in "
	    "%.2f s (%.2f bits a key): %s\n", build1, build10, bits10,
	    build1 >= 0 && build1 <= 1 && build10 >= 0 && build10 <= 10 ? "met" : "MISSED");
	out(stdout, f, "  (loading the million-key list into the instance: built in %.2f s, %u "
	    "retries)\n", info.build_s, info.retries);
	watch_lengths_run(f, seq, w, &l);
	free(watch_refs);	/* the shapes' rows make their own */
	watch_refs = NULL;
	watch_shapes_run(f, seq, w);
	goto out;
fail:
	nwatch_refs = 0;
	out(stdout, f, "\nwatch lists: failed\n");
out:
	free(watch_refs);
	watch_refs = NULL;
	free(l.e);
	l.e = NULL;
}

static int run_case(const struct frame *f, bool ipv6, const uint32_t *seq, unsigned which,
		    double med[P_MAX])
{
	struct target *t[P_MAX];
	double m[P_MAX];
	int n = 0;

	for (int p = 0; p < P_MAX; p++)
		if (which & (1u << p))
			t[n++] = &targets[p];
	if (run_targets(f, ipv6, seq, t, n, m))
		return -1;
	n = 0;
	for (int p = 0; p < P_MAX; p++)
		med[p] = which & (1u << p) ? m[n++] : 0;
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

static int log2u(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* The ablation's targets: the bench programs set to each window size,
 * and a bloomtap instance of each size whose ring covers a whole run. */
static int make_ablation(void)
{
	for (int z = 0; z < AB_SIZES; z++) {
		uint64_t bytes = (uint64_t)ab_kib[z] << 10, load = bytes * 8 / 32;

		for (int l = AB_FORMER; l <= AB_NH; l++) {
			struct target *t = &ab[l][z];
			uint64_t unit = l == AB_FORMER ? 64 : 16;

			t->ablation = true;
			t->lines = l == AB_FORMER;
			t->load_shift = log2u(load);
			t->unit_shift = log2u(bytes / unit);
			t->win_mask = (AB_BYTES / bytes) - 1;
		}
		/* windows: bt_spie_ahead() = W / 8 covers REPEAT / load */
		uint32_t w = 8 * (REPEAT / load + 2);
		char what[32];

		snprintf(what, sizeof(what), "ab%u", ab_kib[z]);
		if (make_bloomtap(&ab[AB_REAL][z], what, false, true, 0, bytes * 8, w < 16 ? 16 : w))
			return -1;
	}
	return 0;
}

static void ablation(FILE *f, const uint32_t *seq, double parse_ns)
{
	struct target *t[AB_LEVERS * AB_SIZES];
	double med[AB_LEVERS * AB_SIZES];
	struct frame fr;
	int n = 0;

	for (int l = 0; l < AB_LEVERS; l++)
		for (int z = 0; z < AB_SIZES; z++)
			t[n++] = &ab[l][z];
	bench_frame_v4_udp(&fr);
	if (run_targets(&fr, false, seq, t, n, med))
		return;
	out(stdout, f, "\nablation: the SPIE stage (ns a packet on top of parsing and counters, "
	    "%.1f ns) by window size,\nlevers added one at a time (64-byte IPv4/UDP, 32 bits a "
	    "packet, each window filled to its design load)\n  %-50s", parse_ns, "window size");
	for (int z = 0; z < AB_SIZES; z++)
		out(stdout, f, ab_kib[z] >= 1024 ? " %4u MiB" : " %4u KiB",
		    ab_kib[z] >= 1024 ? ab_kib[z] >> 10 : ab_kib[z]);
	out(stdout, f, "\n");
	for (int l = 0; l < AB_LEVERS; l++) {
		out(stdout, f, "  %-50s", ab_names[l]);
		for (int z = 0; z < AB_SIZES; z++)
			out(stdout, f, " %+8.1f", med[l * AB_SIZES + z] - parse_ns);
		out(stdout, f, "\n");
	}
}

/* The heavy stage on top of parsing, whole and cut short, against the
 * plain count-min's: Zipf and uniform, IPv4 and IPv6, and few flows
 * (HB_FEW_FLOWS, each one heavy: nearly every packet a flow cache hit, so
 * that column is what a hit costs). */
#define HB_FEW_FLOWS 64
#define HB_TRAFFIC 5
static void heavy_breakdown(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	uint32_t *fseq = malloc(SEQ_LEN * sizeof(*fseq));
	const struct { const char *name; bool v6; const uint32_t *seq; } traffic[HB_TRAFFIC] = {
		{ "Zipf IPv4", false, seq }, { "Zipf IPv6", true, seq },
		{ "uniform IPv4", false, useq }, { "uniform IPv6", true, useq },
		{ "64 flows IPv4", false, fseq },
	};
	double stage[HB_LEVERS + 1][HB_TRAFFIC];
	struct target *t[HB_LEVERS + 2];
	double med[HB_LEVERS + 2];
	uint64_t rng = 0xfe3;

	if (!fseq)
		return;
	for (uint32_t i = 0; i < SEQ_LEN; i++)
		fseq[i] = bt_rng(&rng) % HB_FEW_FLOWS;
	for (int c = 0; c < HB_TRAFFIC; c++) {
		struct frame fr;
		int n = 0;

		if (traffic[c].v6)
			bench_frame_v6_tcp(&fr);
		else
			bench_frame_v4_udp(&fr);
		t[n++] = &targets[P_PARSE];
		t[n++] = &targets[P_REF_CMS];
		for (int l = 0; l < HB_LEVERS; l++)
			t[n++] = &hb[l];
		if (run_targets(&fr, traffic[c].v6, traffic[c].seq, t, n, med)) {
			free(fseq);
			return;
		}
		for (int l = 0; l <= HB_LEVERS; l++)
			stage[l][c] = med[1 + l] - med[0];
	}
	free(fseq);
	out(stdout, f, "\nheavy-flow stage on top of parsing, ns (and its ratio to the plain "
	    "count-min's), whole and cut short\n");
	out(stdout, f, "  %-44s", "");
	for (int c = 0; c < HB_TRAFFIC; c++)
		out(stdout, f, " %16s", traffic[c].name);
	out(stdout, f, "\n");
	for (int l = 0; l <= HB_LEVERS; l++) {
		out(stdout, f, "  %-44s", l ? hb_names[l - 1] : "ref: plain count-min 4 x 65536");
		for (int c = 0; c < HB_TRAFFIC; c++)
			out(stdout, f, "      %+6.1f %4.2f", stage[l][c], stage[l][c] / stage[0][c]);
		out(stdout, f, "\n");
	}
}

/* The sections one variable runs alone (the README's benchmark page lists
 * them); make bench runs them all. */
static void watch_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	watch_run(f, seq);
}

static void live_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	live_run(f, seq);
	accepted_run(f, seq);
}

static void accepted_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	accepted_run(f, seq);
}

/* The drop event without the recorder, then with it at its default
 * size, then a workload device's (without the recorder): the rows to
 * compare. */
static void drops_run(FILE *f, const uint32_t *seq)
{
	bool wl = !strcmp(getenv("BENCH_DROPS") ? getenv("BENCH_DROPS") : "", "workload");

	drops_run_ring(f, seq, 0, false);
	if (!wl)	/* BENCH_DROPS=workload: the direct and the workload rows */
		drops_run_ring(f, seq, BT_DROP_RING_DEFAULT, false);
	drops_run_ring(f, seq, 0, true);
}

static void drops_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	drops_run(f, seq);
}

/* The workload table's lookups (bpf/workloads.bpf.h): the whole program
 * with its table empty (no lookup), holding 1,002 addresses and full
 * (BT_WL_ADDRS, the most the agent writes): the sources of the driver's
 * lowest flows, 198.18.0.0 + flow, which Zipf(1.1) makes the busiest, and
 * among them the frame's destination, 198.18.0.2; against the empty
 * program, in one run. */
#define WL_SIZES 2
static void workloads_run(FILE *f, const uint32_t *seq)
{
	static const uint32_t size[WL_SIZES] = { 1002, BT_WL_ADDRS };
	struct target off = { 0 }, tab[WL_SIZES] = { 0 };
	struct target *t[2 + WL_SIZES] = { &targets[P_EMPTY], &off, &tab[0], &tab[1] };
	struct bt_wl_entry *v = calloc(BT_WL_ADDRS, sizeof(*v));
	struct bt_watch_count *c = calloc(BT_WL_IDS, sizeof(*c));
	unsigned long long src[WL_SIZES] = { 0 }, dst[WL_SIZES] = { 0 };
	const double pkts = (double)REPEAT * ROUNDS;
	size_t placed[WL_SIZES] = { 0 };
	double med[2 + WL_SIZES];
	struct frame fr;
	char what[16];

	bench_frame_v4_udp(&fr);
	if (!v || !c || make_bloomtap(&off, "wloff", true, true, 0, 0, 0))
		goto out;
	for (uint32_t i = 0; i < BT_WL_ADDRS; i++) {
		__u32 a = htonl(0xc6120000 + i);

		v[i].addr[10] = v[i].addr[11] = 0xff;	/* v4-mapped, as a flow key */
		memcpy(v[i].addr + 12, &a, 4);
		v[i].id = 1 + i % (BT_WL_IDS - 1);
	}
	for (int k = 0; k < WL_SIZES; k++) {
		snprintf(what, sizeof(what), "wl%u", size[k]);
		if (make_bloomtap(&tab[k], what, true, true, 0, 0, 0) ||
		    bt_wl_table_write(&tab[k].inst, v, size[k], &placed[k]) < 0)
			goto out;
	}
	if (run_targets(&fr, false, seq, t, 2 + WL_SIZES, med))
		goto out;
	/* what the run's packets found: counted per id and side (0 the
	 * source, 1 the destination) */
	for (int k = 0; k < WL_SIZES; k++) {
		if (bt_wl_counts(&tab[k].inst, 0, c))
			goto out;
		for (__u32 id = 1; id < BT_WL_IDS; id++) {
			src[k] += c[id].packets[0];
			dst[k] += c[id].packets[1];
		}
	}
	out(stdout, f, "\nworkloads: the whole program on 64-byte IPv4/UDP by its workload table "
	    "(the busiest flows' sources\nand the frame's destination in it)\n");
	out(stdout, f, "  %-44s %8.1f ns\n", "empty program", med[0]);
	out(stdout, f, "  %-44s %8.1f ns  %5.2f x empty\n", "table empty (no lookup)", med[1],
	    med[1] / med[0]);
	for (int k = 0; k < WL_SIZES; k++) {
		char row[64];

		snprintf(row, sizeof(row), "%zu addresses (%.0f %% of sources found)", placed[k],
			 100.0 * src[k] / pkts);
		out(stdout, f, "  %-44s %8.1f ns  %5.2f x empty, %+.1f ns (%.2f x the table "
		    "empty)%s\n", row, med[2 + k], med[2 + k] / med[0], med[2 + k] - med[1],
		    med[2 + k] / med[1], dst[k] == (unsigned long long)pkts ? "" : "; a destination missed");
	}
out:
	drop_target(&off);
	for (int k = 0; k < WL_SIZES; k++)
		drop_target(&tab[k]);
	free(v);
	free(c);
}

static void workloads_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	workloads_run(f, seq);
}

static void egress_run(FILE *f, const uint32_t *seq);

static void egress_alone(FILE *f, const uint32_t *seq, const uint32_t *useq)
{
	egress_run(f, seq);
}

static const struct {
	const char *env;
	void (*run)(FILE *f, const uint32_t *seq, const uint32_t *useq);
} alone[] = {
	{ "BENCH_EGRESS", egress_alone },	/* the egress program */
	{ "BENCH_DROPS", drops_alone },		/* the cost of a drop event */
	{ "BENCH_WATCH", watch_alone },		/* the watch lists */
	{ "BENCH_LIVE", live_alone },		/* frames through a veth pair */
	{ "BENCH_ACCEPTED", accepted_alone },	/* traffic the far end accepts */
	{ "BENCH_HEAVY", heavy_breakdown },	/* the heavy-flow stage's breakdown */
	{ "BENCH_WORKLOADS", workloads_alone },	/* the workload table's lookups */
};

/* The main tables: every stage on one IPv4/UDP and one IPv6/TCP frame,
 * Zipf traffic, with the targets each is held to. Returns 1 on failure;
 * parse_v4: parsing's cost on the IPv4 frame, for the ablation. */
static int frame_tables(FILE *f, const uint32_t *seq, double *parse_v4)
{
	const unsigned all_progs = (1u << P_MAIN) - 1;

	for (int v6 = 0; v6 <= 1; v6++) {
		struct frame fr;
		double med[P_MAX];
		char title[64];

		if (v6)
			bench_frame_v6_tcp(&fr);
		else
			bench_frame_v4_udp(&fr);
		if (run_case(&fr, v6, seq, all_progs, med))
			return 1;
		if (!v6)
			*parse_v4 = med[P_PARSE];
		snprintf(title, sizeof(title), "%zu-byte Ethernet/%s frames", fr.len,
			 v6 ? "IPv6/TCP" : "IPv4/UDP");
		print_table(f, title, all_progs, med);
		double spie = med[P_SPIE] - med[P_PARSE], kern = med[P_REF_BLOOM] - med[P_PARSE];
		double all = med[P_ALL] - med[P_EMPTY], heavy = med[P_HEAVY] - med[P_PARSE],
		       ref = med[P_REF_CMS] - med[P_PARSE];

		out(stdout, f, "  targets:\n");
		out(stdout, f, "  - everything at most 40 ns on top of the empty program: +%.1f "
		    "(parsing +%.1f, heavy +%.1f, SPIE +%.1f, the stages meeting %+.1f): %s\n", all,
		    med[P_PARSE] - med[P_EMPTY], heavy, spie,
		    all - (med[P_PARSE] - med[P_EMPTY]) - heavy - spie, all <= 40 ? "met" : "MISSED");
		out(stdout, f, "  - the SPIE stage at most a quarter of the kernel bloom filter map's\n"
		    "    (k = 5, 2 MiB, the same digest input): +%.1f vs +%.1f ns (%.2f): %s\n",
		    spie, kern, spie / kern, spie <= kern / 4 ? "met" : "MISSED");
		out(stdout, f, "  - heavy flows on top of parsing at most half a plain count-min's\n"
		    "    (4 x 65536 shared, one hash) on top of the same parsing: +%.1f vs +%.1f ns "
		    "(%.2f): %s\n", heavy, ref, heavy / ref, heavy <= ref / 2 ? "met" : "MISSED");
		out(stdout, f, "  one hash pass for both stages: everything %.1f ns, hashing apart %.1f ns\n",
		    med[P_ALL], med[P_ALL_SEP]);
	}
	return 0;
}

/* The flow cache's other side: traffic without heavy flows, where every
 * packet takes the keyed path and pays the cache probe too. */
static int uniform_table(FILE *f, const uint32_t *useq)
{
	const unsigned heavy_progs = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_HEAVY | 1u << P_REF_CMS;
	struct frame fr;
	double med[P_MAX];

	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, useq, heavy_progs, med))
		return 1;
	print_table(f, "64-byte Ethernet/IPv4/UDP frames, uniform over the same flows "
		    "(no heavy flow)", heavy_progs, med);
	double heavy = med[P_HEAVY] - med[P_PARSE], ref = med[P_REF_CMS] - med[P_PARSE];

	out(stdout, f, "  target: heavy flows on top of parsing no more than the plain "
	    "count-min: +%.1f vs +%.1f ns (%.2f): %s\n", heavy, ref, heavy / ref,
	    heavy <= ref ? "met" : "MISSED");
	return 0;
}

/* Memory at the default sizes, and how long the ring holds packets. */
static void memory_line(FILE *f)
{
	const struct bt_meta *m = &targets[P_ALL].inst.meta;

	out(stdout, f, "\nmemory at default sizes (%u CPUs): heavy flows %.1f MiB "
	    "(sketch %u x %u x 2 intervals per CPU, flow memory 2 x %u slots); SPIE %u windows "
	    "x %.0f KiB = %.0f MiB, %.0f bits a packet at the design load of %llu packets, k = %u; "
	    "the ring holds %.1f million packets: %.1f s at 1 Mpps, %.2f s at 10 Mpps\n",
	    m->ncpu, bt_sketch_bytes(m) / 1048576.0, m->depth, m->width, m->fm_slots, m->windows,
	    m->window_bits / 8.0 / 1024, m->window_bits / 8.0 / 1048576 * m->windows,
	    (double)m->window_bits / m->design_load, (unsigned long long)m->design_load, m->k,
	    (double)m->windows * m->design_load / 1e6, (double)m->windows * m->design_load / 1e6,
	    (double)m->windows * m->design_load / 1e7);
}

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
	return sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B " address 02:00:00:00:00:02") ||
	       sh("ip netns add " LIVE_NS_C) ||
	       sh("ip link add " LIVE_IF_B2 " netns " LIVE_NS_B " address " LIVE_B2_MAC
		  " type veth peer name " LIVE_IF_C " netns " LIVE_NS_C " address " LIVE_C_MAC) ||
	       sh("ip -n " LIVE_NS_B " addr add 198.18.200.1/24 dev " LIVE_IF_B) ||
	       sh("ip -n " LIVE_NS_B " addr add 198.18.201.1/24 dev " LIVE_IF_B2) ||
	       sh("ip -n " LIVE_NS_B " link set " LIVE_IF_B2 " up") ||
	       sh("ip -n " LIVE_NS_B " route add 198.18.0.2/32 dev " LIVE_IF_B2) ||
	       sh("ip -n " LIVE_NS_C " link set " LIVE_IF_C " up") ||
	       sh("ip -n " LIVE_NS_B " neigh replace 198.18.0.2 lladdr " LIVE_C_MAC " dev "
		  LIVE_IF_B2 " nud permanent") ||
	       sh("ip netns exec " LIVE_NS_B " sysctl -qw net.ipv4.ip_forward=1 "
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
	sh("ip netns del " LIVE_NS_C);
	live_down();
	if (home >= 0)
		close(home);
}

/* The egress program (issue 38) under BPF_PROG_TEST_RUN: its stages on a
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

/* The sections after the main tables, in make bench's order. */
static void (*const sections[])(FILE *f, const uint32_t *seq) = {
	archive_run, watch_run, live_run, accepted_run, drops_run, egress_run, workloads_run,
};

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : ".output/bench.txt";
	uint32_t *seq = bench_seq_zipf();
	uint64_t rng = 0x5eed;	/* the uniform sequence's */
	char cpu[128], date[32];
	struct utsname u;
	time_t now = time(NULL);
	/* BENCH_QUICK: the main tables only, in seconds; BENCH_WATCH: below */
	bool quick = getenv("BENCH_QUICK");
	uint32_t *useq = malloc(SEQ_LEN * sizeof(*useq));
	double parse_v4 = 0;
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
	if (!seq || !useq)
		return 1;
	for (uint32_t i = 0; i < SEQ_LEN; i++)
		useq[i] = bt_rng(&rng) % FLOWS;

	if (make_bloomtap(&targets[P_PARSE], "parse", false, false, 0, 0, 0) ||
	    make_bloomtap(&targets[P_HEAVY], "heavy", true, false, 0, 0, 0) ||
	    make_bloomtap(&targets[P_SPIE], "spie", false, true, 0, 0, 0) ||
	    make_bloomtap(&targets[P_ALL], "all", true, true, 0, 0, 0) ||
	    make_bloomtap(&targets[P_ALL_SEP], "allsep", true, true, BT_META_SEPARATE_HASH, 0, 0) ||
	    make_heavy_breakdown() || (!quick && make_ablation())) {
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
	char desc[256];

	bt_spie_describe(&targets[P_ALL].inst.meta, desc, sizeof(desc));
	out(stdout, f, "defaults: %s\n", desc);
	/* BENCH_WATCH_LIST=FILE: what that list costs, only */
	if (getenv("BENCH_WATCH_LIST")) {
		int rc = make_bloomtap(&targets[P_WATCH], "watch", false, false, 0, 0, 0) ||
			 watch_user_list_run(f, seq, &targets[P_WATCH], getenv("BENCH_WATCH_LIST"));

		if (f)
			fclose(f);
		cleanup();
		free(seq);
		free(useq);
		return rc;
	}
	/* a section alone, when its variable is set (make bench: all) */
	for (size_t i = 0; i < sizeof(alone) / sizeof(alone[0]); i++)
		if (getenv(alone[i].env)) {
			alone[i].run(f, seq, useq);
			goto done;
		}

	if (frame_tables(f, seq, &parse_v4) || uniform_table(f, useq)) {
		cleanup();
		return 1;
	}
	heavy_breakdown(f, seq, useq);
	if (quick)
		goto done;
	ablation(f, seq, parse_v4);
	memory_line(f);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		sections[i](f, seq);
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
