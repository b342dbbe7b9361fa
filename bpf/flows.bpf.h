/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Exact flow table: the datapath's own account of every flow it keyed, for
 * offline checks (replay --flows). Off on live interfaces, where the bounded
 * sketches do this job in bounded memory. */
#ifndef BLOOMTAP_FLOWS_BPF_H
#define BLOOMTAP_FLOWS_BPF_H

#include "maps.bpf.h"
#include "counters.bpf.h"

static __always_inline void flow_table_add(const struct bt_flow_key *key,
					   __u64 bytes)
{
	struct bt_flow_val *v, init = { .packets = 1, .bytes = bytes };

	v = bpf_map_lookup_elem(&flows, key);
	if (!v) {
		if (!bpf_map_update_elem(&flows, key, &init, BPF_NOEXIST))
			return;
		/* Lost a race with another CPU inserting the same key? */
		v = bpf_map_lookup_elem(&flows, key);
		if (!v) {
			count_event(BT_CTR_FLOW_TABLE_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, bytes);
}

#endif /* BLOOMTAP_FLOWS_BPF_H */
