/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The traffic of make bench and make soak: bench.bpf.c's driver and
 * generator loaded with a flow sequence, and the frames they rewrite. */
#ifndef BLOOMTAP_BENCH_DRIVER_H
#define BLOOMTAP_BENCH_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "hash.h"
#include "bench.skel.h"
#include "../tests/lib/frames.h"

#define BENCH_FLOWS 100000
#define BENCH_SEQ_LEN (1u << 20)	/* the sequence repeats after this */

/* The flows of BENCH_SEQ_LEN packets, Zipf(1.1) over BENCH_FLOWS, the
 * same on every run; malloc'd. */
uint32_t *bench_seq_zipf(void);

/* Lines (64 bytes) of the lookup floor's array, ref_chase: set before
 * bench_driver_open to the watch table's size. */
extern uint32_t bench_chase_lines;

/* The driver loaded with seq (BENCH_SEQ_LEN entries); ab_bytes sizes the
 * ablation arrays (core.c maps them), ref_entries the watch-list
 * references' hash map and LPM trie; addrs, when not NULL, the source and
 * destination of each packet (BENCH_SEQ_LEN pairs of 16-byte addresses,
 * v4-mapped for IPv4); NULL on error. */
struct bench_bpf *bench_driver_open(bool ipv6, const uint32_t *seq, uint32_t ab_bytes,
				    uint32_t ref_entries, const uint8_t (*addrs)[32]);

/* 64-byte Ethernet/IPv4/UDP 198.18.0.1:1024 -> 198.18.0.2:443, and an
 * Ethernet/IPv6/TCP frame; the driver rewrites source address and port
 * and L4 bytes 4..7 (the packet's number). */
void bench_frame_v4_udp(struct frame *f);
void bench_frame_v6_tcp(struct frame *f);

/* Sends frames generated from f out of ifindex (in the caller's network
 * namespace) with BPF_F_TEST_XDP_LIVE_FRAMES: XDP_TX to the veth peer. */
int bench_gen_send(struct bench_bpf *skel, const struct frame *f, int ifindex, uint32_t frames);

#endif
