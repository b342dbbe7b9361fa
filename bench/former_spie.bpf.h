/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The former SPIE stage, kept only as make
 * bench's reference for the ablation table: the 48-byte input built with
 * byte copies, SipHash-1-3 of it, and k bits set in a 512-bit block with an
 * 8-word mask array. Not used by the product. */
#ifndef BLOOMTAP_FORMER_SPIE_BPF_H
#define BLOOMTAP_FORMER_SPIE_BPF_H

#include "parse.bpf.h"
#include "hash.h"

struct former_input {
	__u8 b[48];
} __attribute__((aligned(8)));

struct former_block {
	__u64 w[8];
};

static __always_inline bool former_input(const struct pkt_info *pi, void *data,
					 void *data_end, struct former_input *in)
{
	__u8 *ip = data + (pi->l3_off & BT_HDR_OFF_MASK), *after;
	__u32 hl = pi->l3_hlen, fixed, i;

	__builtin_memset(in, 0, sizeof(*in));
	if (pi->l3 == BT_CTR_L3_IPV4) {
		if ((void *)(ip + 20) > data_end)
			return false;
		__builtin_memcpy(in->b, ip, 20);
		in->b[1] = 0;
		in->b[8] = 0;
		in->b[10] = in->b[11] = 0;
		fixed = 20;
		hl &= 0x3c;
	} else {
		if ((void *)(ip + 40) > data_end)
			return false;
		__builtin_memcpy(in->b, ip, 40);
		in->b[0] &= 0xf0;
		in->b[1] = in->b[2] = in->b[3] = 0;
		in->b[7] = 0;
		fixed = 40;
		hl = 40;
	}
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

/* Positions: the top 9 bits of successive LCG steps seeded by the digest. */
static __always_inline bool former_insert(struct former_block *blk, __u64 h, __u32 k)
{
	__u64 m[8] = {}, x = h;
	bool present = true;
	__u32 i;

#pragma unroll
	for (i = 0; i < 16; i++) {
		__u32 pos;

		if (i >= k)
			break;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		pos = x >> 55;
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

#endif /* BLOOMTAP_FORMER_SPIE_BPF_H */
