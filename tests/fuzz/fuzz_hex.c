// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: hex packet input (trace --hex, the API's hex bodies), then
 * the digest input of whatever it decodes to, as an IP packet or a frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/capture.h"
#include "core/digest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	uint8_t out[4096];
	struct bt_spie_packet in;
	int n;

	memcpy(s, data, size);
	s[size] = 0;
	n = bt_parse_hex(s, out, sizeof(out));
	if (n > 0) {
		bt_spie_packet_ip(out, n, &in);
		bt_spie_packet_frame(out, n, &in);
	}
	free(s);
	return 0;
}
