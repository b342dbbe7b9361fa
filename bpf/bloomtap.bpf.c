// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bloomtap's XDP program: parse, key, count; always XDP_PASS.
 * The stages live in the headers beside this file, one concern each. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "bloomtap.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "counters.bpf.h"
#include "flows.bpf.h"
#include "heavy.bpf.h"

/* Set by user space through skel->rodata before load; the verifier prunes
 * the branches they switch off. */
const volatile __u8 cfg_flow_table = 0;
const volatile __u8 cfg_heavy = 1;

/* "xdp.frags": the program accepts multi-buffer frames (jumbo frames, and
 * large captured packets in replay); headers are parsed from the linear
 * part, bytes counted over the whole frame. */
SEC("xdp.frags")
int bloomtap_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pkt_info pi;
	struct bt_ctl *c;
	__u32 zero = 0;
	__u64 bytes;

	__builtin_memset(&pi, 0, sizeof(pi));
	parse_packet(data, data_end, &pi);
	bytes = bpf_xdp_get_buff_len(ctx);
	count_packet(&pi, bytes);

	if (cfg_flow_table && (pi.flags & BT_F_KEYED))
		flow_table_add(&pi.key, bytes);

	c = bpf_map_lookup_elem(&ctl, &zero);
	if (cfg_heavy && c) {
		heavy_total(bytes, c);
		if (pi.flags & BT_F_KEYED)
			heavy_count(&pi.key, bytes, c);
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
