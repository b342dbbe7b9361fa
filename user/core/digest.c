// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>
#include "digest.h"

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* n bytes as a little-endian word, as the datapath loads them */
static __u64 le_word(const uint8_t *p, uint32_t n)
{
	__u64 w = 0;

	for (uint32_t i = 0; i < n && i < 8; i++)
		w |= (__u64)p[i] << (8 * i);
	return w;
}

static void v4mapped(__u8 dst[16], const uint8_t *addr)
{
	memset(dst, 0, 10);
	dst[10] = dst[11] = 0xff;
	memcpy(dst + 12, addr, 4);
}

/* IPv6's extension headers up to the digest's 8 bytes, as the datapath
 * walks them (bpf/parse.bpf.h ipv6_ext_walk): at most 8 of them, up to a
 * fragment header (whose ID and offset the digest takes), or to one cut
 * short by the frame or the payload length. Their offset from ip; *left
 * (payload bytes from there) and *nh (the header there) updated. */
static uint32_t v6_digest_off(const uint8_t *ip, uint32_t len, uint32_t *left, uint8_t *nh)
{
	uint32_t off = 40;

	for (int i = 0; i < 8; i++) {
		uint32_t n;

		if ((*nh != 0 && *nh != 43 && *nh != 60 && *nh != 51) ||
		    off + 8 > len || *left < 8)
			break;
		n = *nh == 51 ? ((uint32_t)ip[off + 1] + 2) * 4 : ((uint32_t)ip[off + 1] + 1) * 8;
		if (n > *left)
			break;
		*nh = ip[off];
		*left -= n;
		off += n;
	}
	return off;
}

int bt_spie_packet_ip(const uint8_t *ip, uint32_t len, struct bt_spie_packet *p)
{
	uint32_t hl, fixed, after, total, more, dhl, left;
	__u8 addrs[32], hdr[8], nh = 0;
	bool udp;

	memset(p, 0, sizeof(*p));
	if (len < 1)
		return -1;
	if (ip[0] >> 4 == 4) {
		if (len < 20)
			return -1;
		hl = (ip[0] & 0xf) * 4;
		total = be16(ip + 2);
		if (!total)		/* TSO capture: the frame is the bound */
			total = 0xffff;
		if (hl < 20 || total < hl || len < hl)
			return -1;
		v4mapped(addrs, ip + 12);
		v4mapped(addrs + 16, ip + 16);
		memcpy(hdr, ip, 8);
		hdr[1] = ip[9];		/* the protocol where TOS was */
		memcpy(p->legacy, ip, 20);
		p->legacy[1] = 0;
		p->legacy[8] = 0;
		p->legacy[10] = p->legacy[11] = 0;
		fixed = 20;
		dhl = hl;
		udp = ip[9] == 17 && !(be16(ip + 6) & 0x1fff);	/* not a later fragment */
	} else if (ip[0] >> 4 == 6) {
		if (len < 40)
			return -1;
		hl = 40;
		total = be16(ip + 4);
		total = total ? total + 40 : 0xffff;
		memcpy(addrs, ip + 8, 32);
		memcpy(hdr, ip, 8);
		hdr[0] &= 0xf0;
		hdr[1] = hdr[2] = hdr[3] = 0;
		hdr[7] = 0;
		memcpy(p->legacy, ip, 40);
		p->legacy[0] &= 0xf0;
		p->legacy[1] = p->legacy[2] = p->legacy[3] = 0;
		p->legacy[7] = 0;
		fixed = 40;
		nh = ip[6];
		left = total - 40;
		dhl = v6_digest_off(ip, len, &left, &nh);
		udp = nh == 17;
	} else {
		return -1;
	}
	for (int i = 0; i < 4; i++)
		p->w[i] = le_word(addrs + 8 * i, 8);
	p->w[4] = le_word(hdr, 8);
	/* 8 bytes after the header, within the IP packet and the capture:
	 * for archive formats 8 and older, at byte 40 of IPv6 whatever came
	 * there */
	after = total - hl;
	if (after > len - hl)
		after = len - hl;
	if (after > 8)
		after = 8;
	p->w5_v7 = p->w5_raw = le_word(ip + hl, after);
	p->w6_v7 = 0;
	memcpy(p->legacy + fixed, ip + hl, after);
	if (udp && dhl == hl) {
		p->w5_v7 &= 0x0000ffffffffffffULL;
		more = total - hl > len - hl ? len - hl : total - hl;
		if (more > 8)
			p->w6_v7 = le_word(ip + hl + 8, more - 8);
	}
	/* the datapath's and format 9's: after IPv6's extension headers
	 * (v6_digest_off) */
	if (dhl == hl) {
		p->w[5] = p->w5_v7;
		p->w[6] = p->w6_v7;
		return 0;
	}
	after = dhl < len ? len - dhl : 0;
	if (after > total - dhl)
		after = total - dhl;
	more = after;
	p->w[5] = le_word(ip + dhl, after > 8 ? 8 : after);
	/* UDP: the checksum out, the payload's first 8 bytes in word 6 */
	if (udp) {
		p->w[5] &= 0x0000ffffffffffffULL;
		if (more > 8)
			p->w[6] = le_word(ip + dhl + 8, more - 8);
	}
	return 0;
}

int bt_frame_ip_offset(const uint8_t *f, uint32_t len)
{
	uint32_t off = 14, et;

	if (len < 14)
		return -1;
	et = be16(f + 12);
	/* the datapath's tags: 802.1Q, 802.1ad, 0x9100 (bpf/parse.bpf.h) */
	for (int tags = 0; et == 0x8100 || et == 0x88a8 || et == 0x9100; tags++) {
		if (tags == 2 || len < off + 4)
			return -1;	/* the datapath stops at two tags */
		et = be16(f + off + 2);
		off += 4;
	}
	if ((et == 0x0800 && len > off && f[off] >> 4 != 4) ||
	    (et == 0x86dd && len > off && f[off] >> 4 != 6) ||
	    (et != 0x0800 && et != 0x86dd))
		return -1;
	return off;
}

int bt_spie_packet_frame(const uint8_t *f, uint32_t len, struct bt_spie_packet *p)
{
	int off = bt_frame_ip_offset(f, len);

	return off < 0 ? -1 : bt_spie_packet_ip(f + off, len - off, p);
}

void bt_hash_keys_derive(const struct bt_hash_key_raw *key, struct bt_hash_keys *out)
{
	const struct bt_hash_key k = { key->k0, key->k1 };
	__u64 words[BT_HASH_KEY_WORDS];

	_Static_assert(sizeof(*out) == sizeof(words), "bt_hash_keys is BT_HASH_KEY_WORDS words");
	for (__u64 i = 0; i < BT_HASH_KEY_WORDS; i++) {
		const __u64 in[2] = { 0x626c6f6f6d746170ULL /* "bloomtap" */, i };

		words[i] = bt_siphash13(&k, in, 2);
	}
	memcpy(out, words, sizeof(words));
}

__u64 bt_spie_digest(const struct bt_hash_keys *k, const struct bt_spie_packet *p)
{
	return bt_hash_spie_finish(k, bt_hash_addrs(k, p->w), p->w[4], p->w[5], p->w[6]);
}

__u64 bt_spie_digest_v7(const struct bt_hash_keys *k, const struct bt_spie_packet *p)
{
	return bt_hash_spie_finish(k, bt_hash_addrs(k, p->w), p->w[4], p->w5_v7, p->w6_v7);
}

__u64 bt_spie_digest_abi13(const struct bt_hash_keys *k, const struct bt_spie_packet *p)
{
	return bt_hash_spie_finish(k, bt_hash_addrs(k, p->w), p->w[4], p->w5_raw, 0);
}

__u64 bt_spie_digest_legacy(const struct bt_hash_key_raw *key, const struct bt_spie_packet *p)
{
	const struct bt_hash_key k = { key->k0, key->k1 };

	return bt_siphash13(&k, (const __u64 *)p->legacy, 6);
}
