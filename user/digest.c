// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>
#include "digest.h"
#include "hash.h"

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

int bt_spie_input_ip(const uint8_t *ip, uint32_t len, struct bt_spie_input *in)
{
	uint32_t hl, fixed, after, total;

	memset(in, 0, sizeof(*in));
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
		memcpy(in->b, ip, 20);
		in->b[1] = 0;
		in->b[8] = 0;
		in->b[10] = in->b[11] = 0;
		fixed = 20;
	} else if (ip[0] >> 4 == 6) {
		if (len < 40)
			return -1;
		hl = 40;
		total = be16(ip + 4);
		total = total ? total + 40 : 0xffff;
		memcpy(in->b, ip, 40);
		in->b[0] &= 0xf0;
		in->b[1] = in->b[2] = in->b[3] = 0;
		in->b[7] = 0;
		fixed = 40;
	} else {
		return -1;
	}
	/* 8 bytes after the header, within the IP packet and the capture */
	after = total - hl;
	if (after > len - hl)
		after = len - hl;
	if (after > 8)
		after = 8;
	memcpy(in->b + fixed, ip + hl, after);
	return 0;
}

int bt_spie_input_frame(const uint8_t *f, uint32_t len, struct bt_spie_input *in)
{
	uint32_t off = 14, et;

	if (len < 14)
		return -1;
	et = be16(f + 12);
	for (int tags = 0; et == 0x8100 || et == 0x88a8; tags++) {
		if (tags == 2 || len < off + 4)
			return -1;	/* the datapath stops at two tags */
		et = be16(f + off + 2);
		off += 4;
	}
	if ((et == 0x0800 && len > off && f[off] >> 4 != 4) ||
	    (et == 0x86dd && len > off && f[off] >> 4 != 6) ||
	    (et != 0x0800 && et != 0x86dd))
		return -1;
	return bt_spie_input_ip(f + off, len - off, in);
}

__u64 bt_spie_digest(const struct bt_meta *meta, const struct bt_spie_input *in)
{
	struct bt_hash_key k = { meta->spie_key.k0, meta->spie_key.k1 };

	return bt_siphash13(&k, (const __u64 *)in->b, BT_SPIE_INPUT_WORDS);
}
