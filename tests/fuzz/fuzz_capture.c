// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: a capture file as replay and trace read it (libpcap, the
 * link-type conversion, the digest input), and the same bytes as an HTTP
 * body of /api/v1/trace (hex or capture, no instance). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz.h"
#include "core/capture.h"
#include "report/trace_query.h"
#include "base/common.h"
#include "core/digest.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bt_capture *cap;
	struct bt_packet p;
	char err[600];

	if (!bt_capture_open_mem(data, size, &cap, err, sizeof(err))) {
		while (bt_capture_next(cap, &p) == 1) {
			struct bt_spie_packet in;

			if (!p.skip)
				bt_spie_packet_frame(p.data, p.len, &in);
		}
		bt_capture_close(cap);
	}
	struct json_object *o = bt_trace_buffer(&(struct bt_trace_query){ 0 }, data, size, err, sizeof(err));

	json_object_put(o);
	return 0;
}
