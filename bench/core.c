// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's measuring machinery (bench.h): bloomtap's instances made
 * and removed, ns per packet of a target with BPF_PROG_TEST_RUN, every
 * iteration a different packet (bench.bpf.c's driver), rounds
 * interleaved, medians reported, and the table they make. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "instance/sketch.h"
#include "instance/spie.h"
#include "bench.h"

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

struct target targets[P_MAX] = {
	[P_EMPTY] = { .drv_prog = "bench_empty" },
	[P_REF_CMS] = { .drv_prog = "bench_ref_cms" },
	[P_REF_BLOOM] = { .drv_prog = "bench_ref_bloom" },
	[P_REF_BLOOM_MEM] = { .drv_prog = "bench_ref_bloom_mem" },
	[P_REF_HASH] = { .drv_prog = "bench_ref_hash" },
	[P_REF_LPM] = { .drv_prog = "bench_ref_lpm" },
	[P_CHASE1] = { .drv_prog = "bench_ref_chase1" },
	[P_CHASE2] = { .drv_prog = "bench_ref_chase2" },
	[P_CHASE4] = { .drv_prog = "bench_ref_chase4" },
	[P_CHASE4W] = { .drv_prog = "bench_ref_chase4w" },
	[P_CHASE4W_INNER] = { .drv_prog = "bench_ref_chase4w_inner" },
};
static void *ab_lines_mem, *ab_blocks_mem;	/* mmapped, cleared before each run */

struct watch_ref *watch_refs;
uint32_t nwatch_refs;
uint8_t (*watch_traffic)[32];
long long memlock_hash, memlock_lpm;

/* The instances made and not yet dropped, for cleanup() */
#define MADE_MAX 64
static struct target *made[MADE_MAX];
static int nmade;

void drop_target(struct target *t)
{
	if (t->name[0]) {
		bt_instance_close(&t->inst);
		bt_instance_remove(t->name);
		t->name[0] = 0;
	}
	for (int i = 0; i < nmade; i++)
		if (made[i] == t)
			made[i--] = made[--nmade];
}

void cleanup(void)
{
	while (nmade)
		drop_target(made[nmade - 1]);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int make_bloomtap_cfg(struct target *t, const char *what, bool heavy, bool spie,
		      struct bt_instance_cfg cfg)
{
	cfg.flags |= (heavy ? 0 : BT_META_NO_HEAVY) | (spie ? 0 : BT_META_NO_SPIE);

	if (nmade == MADE_MAX)
		return -1;
	snprintf(t->name, sizeof(t->name), "bench-%s-%d", what, getpid());
	if (bt_instance_create(t->name, &cfg, &t->inst)) {
		t->name[0] = 0;
		return -1;
	}
	made[nmade++] = t;
	t->fd = t->inst.prog_fd;
	t->heavy = heavy;
	t->spie = spie;
	return 0;
}

int make_bloomtap(struct target *t, const char *what, bool heavy, bool spie, __u32 flags,
		  uint64_t window_bits, uint32_t windows)
{
	struct bt_instance_cfg cfg = { .flags = flags,
				       .spie = { .window_bits = window_bits, .windows = windows } };

	return make_bloomtap_cfg(t, what, heavy, spie, cfg);
}

int bench_prepare(struct bench_bpf *skel, struct target *t)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(t->tc ? skel->maps.bench_tc_progs
						  : skel->maps.bench_progs), &zero, &t->fd, 0))
		return -errno;
	if (t->floor) {
		uint32_t off = 0;

		skel->bss->floor_n = t->floor->n;
		for (uint32_t j = 0; j < t->floor->n; j++) {
			skel->bss->floor_off[j] = off;
			skel->bss->floor_lines[j] = t->floor->lines[j];
			skel->bss->floor_p[j] = t->floor->p[j];
			off += t->floor->lines[j];
		}
		if (off > 1u << 17)	/* FLOOR_MAX_LINES */
			return -E2BIG;
	}
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
	int err = bench_prepare(skel, t);

	if (err)
		return err;
	if (bpf_prog_test_run_opts(drive, &o))
		return -errno;
	if (o.retval != (t->tc ? (__u32)-1 : XDP_PASS))	/* tc: TC_ACT_UNSPEC */
		return -EPROTO;
	*ns = o.duration;	/* the kernel's average per iteration */
	return 0;
}

/* Bytes the kernel charges for a map (bpftool's bytes_memlock). */
long long map_memlock(int fd)
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


/* The driver, and the ablation arrays it writes mapped for clearing. */
int load_driver(struct bench_bpf **out, bool ipv6, const uint32_t *seq)
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

void out(FILE *a, FILE *b, const char *fmt, ...)
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

/* Medians of ROUNDS interleaved rounds over the n targets t[] (rotating
 * the order each round); frame f, flow sequence seq. 0, or -1 after a
 * message. */
int run_targets(const struct frame *f, bool ipv6, const uint32_t *seq,
		struct target **t, int n, double *med)
{
	struct bench_bpf *skel;

	if (load_driver(&skel, ipv6, seq)) {
		fprintf(stderr, "bench: loading the driver failed\n");
		return -1;
	}
	for (int k = 0; k < n; k++)
		if (t[k]->drv_prog)
			t[k]->fd = bpf_program__fd(bpf_object__find_program_by_name(skel->obj,
										    t[k]->drv_prog));
	if (nwatch_refs && fill_watch_refs(skel)) {
		fprintf(stderr, "bench: filling the hash map and LPM trie failed\n");
		bench_bpf__destroy(skel);
		return -1;
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

int run_case(const struct frame *f, bool ipv6, const uint32_t *seq, unsigned which,
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

void print_table(FILE *f, const char *title, unsigned which, const double med[P_MAX])
{
	out(stdout, f, "\n%s\n", title);
	out(stdout, f, "  %-40s %8s %8s\n", "program", "ns/pkt", "ratio");
	for (int p = 0; p < P_MAX; p++)
		if (which & (1u << p))
			out(stdout, f, "  %-40s %8.1f %8.2f\n", prog_names[p], med[p],
			    med[p] / med[P_EMPTY]);
}
