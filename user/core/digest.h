/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE digests in user space: include/hash.h's words, as bpf/spie.bpf.h,
 * from a captured frame or a bare IP packet; the instance's hash keys;
 * and the digests of the older archive formats. */
#ifndef BLOOMTAP_DIGEST_H
#define BLOOMTAP_DIGEST_H

#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "hash.h"

/* A packet as SPIE sees it: the digest's words before hashing
 * (include/hash.h "The SPIE digest"), and the 48-byte input of archive formats 1 and 2
 * (the IP header with TOS, TTL and checksum zeroed, 8 bytes after it). */
struct bt_spie_packet {
	__u64 w[BT_SPIE_WORDS];
	__u64 w5_raw;		/* word 5 with UDP's checksum: archive
				 * formats 3 to 6 hold it */
	__u64 w5_v7, w6_v7;	/* words 5 and 6 as archive formats 7 and 8
				 * hold them: taken at IPv6's byte 40,
				 * extension headers or not; w5_raw is too */
	__u8 legacy[48] __attribute__((aligned(8)));
};

/* The words of an Ethernet frame, under the datapath's parsing rules (two
 * VLAN tags at most, a valid IPv4/IPv6 header). 0, or -1 when the frame
 * carries no IP packet the datapath would record. */
int bt_spie_packet_frame(const uint8_t *frame, uint32_t len, struct bt_spie_packet *p);
/* Where a frame's IP packet starts under the same rules, or -1. */
int bt_frame_ip_offset(const uint8_t *frame, uint32_t len);
/* The same from a bare IP packet (first byte: version 4 or 6). */
int bt_spie_packet_ip(const uint8_t *ip, uint32_t len, struct bt_spie_packet *p);

/* The instance's hash keys, derived from its 128-bit key with SipHash (a
 * PRF: the derived words are independent and reveal nothing of the key). */
void bt_hash_keys_derive(const struct bt_hash_key_raw *key, struct bt_hash_keys *out);
__u64 bt_spie_digest(const struct bt_hash_keys *k, const struct bt_spie_packet *p);
/* The digest of archive format 7: IPv6's extension
 * headers not walked. */
__u64 bt_spie_digest_v7(const struct bt_hash_keys *k, const struct bt_spie_packet *p);
/* The digest of archive formats 3 to 6: UDP's checksum in
 * word 5, no word 6. */
__u64 bt_spie_digest_abi13(const struct bt_hash_keys *k, const struct bt_spie_packet *p);
/* The digest of archive formats 1 and 2: SipHash-1-3 of the 48 bytes. */
__u64 bt_spie_digest_legacy(const struct bt_hash_key_raw *key, const struct bt_spie_packet *p);

#endif /* BLOOMTAP_DIGEST_H */
