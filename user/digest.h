/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* SPIE digests in user space: the same input bytes and hash as
 * bpf/spie.bpf.h, from a captured frame or a bare IP packet. */
#ifndef BLOOMTAP_DIGEST_H
#define BLOOMTAP_DIGEST_H

#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

/* The digest input of an Ethernet frame, under the datapath's parsing
 * rules (two VLAN tags at most, a valid IPv4/IPv6 header). 0, or -1 when
 * the frame carries no IP packet the datapath would record. */
int bt_spie_input_frame(const uint8_t *frame, uint32_t len, struct bt_spie_input *in);
/* The same from a bare IP packet (first byte: version 4 or 6). */
int bt_spie_input_ip(const uint8_t *ip, uint32_t len, struct bt_spie_input *in);
__u64 bt_spie_digest(const struct bt_meta *meta, const struct bt_spie_input *in);

#endif /* BLOOMTAP_DIGEST_H */
