/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE: the packet's digest into the current window's blocked Bloom filter
 * (Snoeren et al., "Hash-Based IP Traceback", SIGCOMM 2001). The input
 * layout is in include/bloomtap.h; user/digest.c builds the same bytes. */
#ifndef BLOOMTAP_SPIE_BPF_H
#define BLOOMTAP_SPIE_BPF_H

#include "maps.bpf.h"
#include "parse.bpf.h"
#include "hash.h"

const volatile struct bt_hash_key cfg_spie_key = {};
const volatile __u32 cfg_k = 12;		/* bits per packet, <= BT_MAX_K */
const volatile __u32 cfg_block_mask = 0;	/* blocks per window - 1 */
const volatile __u32 cfg_windows = 1;		/* W */

/* The digest input from the IP header at l3; false when the header is not
 * all there (a keyed packet always has it). */
static __always_inline bool spie_input(const struct pkt_info *pi, void *data,
				       void *data_end, struct bt_spie_input *in)
{
	__u8 *ip = data + (pi->l3_off & BT_HDR_OFF_MASK), *after;
	__u32 hl = pi->l3_hlen, fixed, i;

	__builtin_memset(in, 0, sizeof(*in));
	if (pi->l3 == BT_CTR_L3_IPV4) {
		if ((void *)(ip + 20) > data_end)
			return false;
		__builtin_memcpy(in->b, ip, 20);
		in->b[1] = 0;			/* TOS: routers may rewrite DSCP/ECN */
		in->b[8] = 0;			/* TTL */
		in->b[10] = in->b[11] = 0;	/* checksum */
		fixed = 20;
		hl &= 0x3c;			/* IHL * 4 <= 60 */
	} else {
		if ((void *)(ip + 40) > data_end)
			return false;
		__builtin_memcpy(in->b, ip, 40);
		in->b[0] &= 0xf0;		/* traffic class, high nibble */
		in->b[1] = in->b[2] = in->b[3] = 0;	/* TC low nibble, flow label */
		in->b[7] = 0;			/* hop limit */
		fixed = 40;
		hl = 40;
	}
	/* the first 8 bytes after the whole header, inside the IP packet */
	after = ip + hl;
#pragma unroll
	for (i = 0; i < 8; i++) {
		__u32 at = fixed + i;

		if (i >= pi->ip_after || (void *)(after + i + 1) > data_end ||
		    at >= sizeof(in->b))
			break;
		in->b[at] = after[i];
	}
	return true;
}

/* Sets the packet's k bits in one 512-bit block. An atomic OR only for a
 * word that lacks some of its bits: at the design load about half of them
 * are set, and a locked instruction costs more than the load that avoids
 * it. Returns whether every bit was already set. */
static __always_inline bool spie_insert(__u64 h, __u32 win)
{
	__u64 m[8] = {}, x = h;
	__u32 idx = win * (cfg_block_mask + 1) + (h & cfg_block_mask), i;
	struct bt_bloom_block *blk = bpf_map_lookup_elem(&spie, &idx);
	bool present = true;

	if (!blk)
		return false;
#pragma unroll
	for (i = 0; i < BT_MAX_K; i++) {
		__u32 pos;

		if (i >= cfg_k)
			break;
		x = bt_bloom_step(x);
		pos = bt_bloom_pos(x);
		m[pos >> 6] |= 1ULL << (pos & 63);
	}
#pragma unroll
	for (i = 0; i < 8; i++) {
		__u64 w = blk->w[i];

		if ((w & m[i]) != m[i]) {
			present = false;
			__sync_fetch_and_or(&blk->w[i], m[i]);
		}
	}
	return present;
}

static __always_inline void spie_record(const struct pkt_info *pi, void *data,
					void *data_end, const struct bt_ctl *c,
					struct bt_counters *ctr, bool log_digests)
{
	struct bt_spie_input in;
	struct bt_hash_key hk = { cfg_spie_key.k0, cfg_spie_key.k1 };
	__u32 win = c->window;
	__u64 h;

	if (win >= cfg_windows || !spie_input(pi, data, data_end, &in))
		return;
	h = bt_siphash13(&hk, (const __u64 *)in.b, BT_SPIE_INPUT_WORDS);
	if (log_digests) {
		__u32 n = ctr->c[BT_CTR_SPIE_INSERTED];
		__u64 *slot = bpf_map_lookup_elem(&digest_log, &n);

		if (slot)
			*slot = h;
	}
	if (spie_insert(h, win))
		ctr->c[BT_CTR_SPIE_PRESENT]++;
	ctr->c[BT_CTR_SPIE_INSERTED]++;
}

#endif /* BLOOMTAP_SPIE_BPF_H */
