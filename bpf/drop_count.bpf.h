/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A drop counted by its reason, per CPU, in struct bt_drop_count: a core
 * reason in an array indexed by it, a subsystem's in a hash (the host's
 * bucket, bpf/drops_host.bpf.c, and each instance's, bpf/drop.bpf.h). */
#ifndef BLOOMTAP_DROP_COUNT_BPF_H
#define BLOOMTAP_DROP_COUNT_BPF_H

#include <bpf/bpf_helpers.h>
#include "bloomtap.h"

static __always_inline void drop_count_add(void *array, void *hash, __u32 reason,
					   __u32 packets, __u64 bytes)
{
	struct bt_drop_count *dc, fresh;

	if (reason < BT_DROP_REASONS && (dc = bpf_map_lookup_elem(array, &reason))) {
		dc->packets += packets;
		dc->bytes += bytes;
		return;
	}
	dc = bpf_map_lookup_elem(hash, &reason);
	if (dc) {
		dc->packets += packets;
		dc->bytes += bytes;
		return;
	}
	fresh.packets = packets;
	fresh.bytes = bytes;
	/* a race with another CPU's first drop of this reason: theirs and
	 * ours are per-CPU values, BPF_NOEXIST fails only for this CPU */
	bpf_map_update_elem(hash, &reason, &fresh, BPF_NOEXIST);
}

#endif /* BLOOMTAP_DROP_COUNT_BPF_H */
