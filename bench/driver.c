// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See driver.h. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bloomtap.h"
#include "hash.h"
#include "core/digest.h"
#include "driver.h"
#include "../tests/lib/zipf.h"

/* The kernel reference: k = 5, and the design load
 * of the former 8 MiB windows (2,097,152 packets at 32 bits each), which
 * the kernel sizes to 2 MiB. */
#define REF_BLOOM_K 5
#define REF_BLOOM_ENTRIES (1u << 21)

uint32_t *bench_seq_zipf(void)
{
	uint32_t *seq = malloc(BENCH_SEQ_LEN * sizeof(*seq));
	uint64_t rng = 0x5eed;
	struct zipf z;

	if (!seq || zipf_init(&z, BENCH_FLOWS, 1.1)) {
		free(seq);
		return NULL;
	}
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		seq[i] = zipf_draw(&z, &rng);
	zipf_free(&z);
	return seq;
}

uint32_t bench_chase_lines = 1;

struct bench_bpf *bench_driver_open(bool ipv6, const uint32_t *seq, uint32_t ab_bytes,
				    uint32_t ref_entries, const uint8_t (*addrs)[32])
{
	struct bench_bpf *skel = bench_bpf__open();
	struct bt_hash_keys keys;
	const struct bt_hash_key_raw master = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	uint64_t *p;

	if (!skel)
		return NULL;
	skel->rodata->cfg_seq_mask = BENCH_SEQ_LEN - 1;
	skel->rodata->cfg_ipv6 = ipv6;
	skel->rodata->cfg_addrs = addrs != NULL;
	bpf_map__set_max_entries(skel->maps.bench_addrs, addrs ? BENCH_SEQ_LEN : 1);
	skel->rodata->cfg_key.k0 = master.k0;
	skel->rodata->cfg_key.k1 = master.k1;
	bt_hash_keys_derive(&master, &keys);
	memcpy((void *)&skel->rodata->cfg_nh_keys, &keys, sizeof(keys));
	bpf_map__set_max_entries(skel->maps.bench_seq, BENCH_SEQ_LEN);
	bpf_map__set_max_entries(skel->maps.ref_bloom, REF_BLOOM_ENTRIES);
	bpf_map__set_map_extra(skel->maps.ref_bloom, REF_BLOOM_K);
	/* the kernel takes max_entries * k * 7/5 bits, rounded up to a power of
	 * two: the entries that make that 8 MiB */
	bpf_map__set_max_entries(skel->maps.ref_bloom_mem, (8u << 23) / REF_BLOOM_K * 5 / 7);
	bpf_map__set_map_extra(skel->maps.ref_bloom_mem, REF_BLOOM_K);
	bpf_map__set_map_flags(skel->maps.bench_seq, BPF_F_MMAPABLE);
	bpf_map__set_max_entries(skel->maps.ab_lines, ab_bytes / 64);
	bpf_map__set_max_entries(skel->maps.ab_blocks, ab_bytes / 16);
	bpf_map__set_max_entries(skel->maps.ref_hash, ref_entries ? ref_entries : 1);
	bpf_map__set_max_entries(skel->maps.ref_lpm, ref_entries ? ref_entries : 1);
	bpf_map__set_max_entries(skel->maps.ref_chase, bench_chase_lines);
	skel->rodata->cfg_chase_lines = bench_chase_lines;
	if (bench_bpf__load(skel))
		goto err;
	/* the floor's array again as an inner map (not inlined) */
	{
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP);
		__u32 zero = 0;
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ref_chase_in", sizeof(__u32), 64,
					bench_chase_lines, &o);

		if (fd < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.ref_chase_outer), &zero,
						  &fd, 0)) {
			if (fd >= 0)
				close(fd);
			goto err;
		}
		close(fd);	/* the outer map holds it */
	}
	p = mmap(NULL, BENCH_SEQ_LEN * sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(skel->maps.bench_seq), 0);
	if (p == MAP_FAILED)
		goto err;
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		p[i] = seq[i];
	munmap(p, BENCH_SEQ_LEN * sizeof(*p));
	for (uint32_t i = 0; addrs && i < BENCH_SEQ_LEN; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_addrs), &i, addrs[i], 0))
			goto err;
	return skel;
err:
	bench_bpf__destroy(skel);
	return NULL;
}

void bench_frame_v4_udp(struct frame *f)
{
	size_t ip;

	f->len = 0;
	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, 17, 5, 0);
	fr_ports(f, 1024, 443, 8);
	fr_put(f, NULL, 64 - f->len);	/* 64-byte frame */
	fr_ipv4_done(f, ip);
}

void bench_frame_v6_tcp(struct frame *f)
{
	size_t ip;

	f->len = 0;
	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, 6);
	fr_ports(f, 1024, 443, 20);
	fr_ipv6_done(f, ip);
}

int bench_gen_send(struct bench_bpf *skel, const struct frame *f, int ifindex, uint32_t frames)
{
	/* the kernel wants data_end to be the frame length */
	struct xdp_md ctx = { .data_end = f->len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

	return bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_gen), &o) ? -errno : 0;
}
