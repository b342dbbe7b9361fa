/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Building test frames header by header. Length fields are filled by the
 * *_done() calls once the payload is in, so a template reads top-down like
 * the packet. Checksums are left zero: XDP does not verify them. */
#ifndef BLOOMTAP_FRAMES_H
#define BLOOMTAP_FRAMES_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

struct frame {
	uint8_t b[16384];
	size_t len;
};

static inline void *fr_put(struct frame *f, const void *p, size_t n)
{
	void *at = f->b + f->len;

	if (p)
		memcpy(at, p, n);
	else
		memset(at, 0, n);
	f->len += n;
	return at;
}

static inline void fr_u8(struct frame *f, uint8_t v) { fr_put(f, &v, 1); }
static inline void fr_u16(struct frame *f, uint16_t v) { v = htons(v); fr_put(f, &v, 2); }
static inline void fr_u32(struct frame *f, uint32_t v) { v = htonl(v); fr_put(f, &v, 4); }

static inline void fr_eth(struct frame *f, uint16_t ethertype)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };

	fr_put(f, macs, 12);
	fr_u16(f, ethertype);
}

/* A tag whose TCI is vid, followed by the inner ethertype. */
static inline void fr_vlan(struct frame *f, uint16_t vid, uint16_t inner)
{
	fr_u16(f, vid);
	fr_u16(f, inner);
}

/* IPv4 header of ihl 32-bit words (options are NOPs); returns its offset
 * for fr_ipv4_done(). Addresses 198.18.0.1 -> 198.18.0.2. */
static inline size_t fr_ipv4(struct frame *f, uint8_t proto, uint8_t ihl, uint16_t frag)
{
	size_t off = f->len;

	fr_u8(f, 0x40 | (ihl & 0xf));
	fr_u8(f, 0);
	fr_u16(f, 0);		/* total length: fr_ipv4_done() */
	fr_u16(f, 0x1234);
	fr_u16(f, frag);
	fr_u8(f, 64);
	fr_u8(f, proto);
	fr_u16(f, 0);
	fr_u32(f, 0xc6120001);
	fr_u32(f, 0xc6120002);
	for (int i = 5; i < ihl; i++)
		fr_u32(f, 0x01010101);
	return off;
}

static inline void fr_ipv4_done(struct frame *f, size_t off)
{
	uint16_t tot = htons(f->len - off);

	memcpy(f->b + off + 2, &tot, 2);
}

/* IPv6 fixed header, 2001:db8::1 -> 2001:db8::2. */
static inline size_t fr_ipv6(struct frame *f, uint8_t nexthdr)
{
	static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	size_t off = f->len;

	fr_u32(f, 0x60000000);
	fr_u16(f, 0);		/* payload length: fr_ipv6_done() */
	fr_u8(f, nexthdr);
	fr_u8(f, 64);
	fr_put(f, src, 16);
	fr_put(f, dst, 16);
	return off;
}

static inline void fr_ipv6_done(struct frame *f, size_t off)
{
	uint16_t pl = htons(f->len - off - 40);

	memcpy(f->b + off + 4, &pl, 2);
}

/* Hop-by-hop, routing or destination options header of 8 * units bytes. */
static inline void fr_ext6(struct frame *f, uint8_t next, uint8_t units)
{
	fr_u8(f, next);
	fr_u8(f, units - 1);
	fr_put(f, NULL, units * 8 - 2);
}

static inline void fr_frag6(struct frame *f, uint8_t next, uint16_t offset8, int more)
{
	fr_u8(f, next);
	fr_u8(f, 0);
	fr_u16(f, offset8 << 3 | (more ? 1 : 0));
	fr_u32(f, 0xabcd);
}

/* AH with a 12-byte ICV: 24 bytes, length field 4 (RFC 4302 2.2). */
static inline void fr_ah(struct frame *f, uint8_t next)
{
	fr_u8(f, next);
	fr_u8(f, 4);
	fr_put(f, NULL, 22);
}

static inline void fr_ports(struct frame *f, uint16_t sport, uint16_t dport, size_t hdrlen)
{
	fr_u16(f, sport);
	fr_u16(f, dport);
	fr_put(f, NULL, hdrlen - 4);
}

static inline void fr_icmp(struct frame *f, uint8_t type, uint8_t code)
{
	fr_u8(f, type);
	fr_u8(f, code);
	fr_put(f, NULL, 6);
}

#endif /* BLOOMTAP_FRAMES_H */
