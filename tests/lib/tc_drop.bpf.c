// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A tc ingress filter that drops every frame it is given (TC_ACT_SHOT):
 * the drops test's TC_INGRESS, after XDP. This kernel has neither
 * cls_matchall nor act_gact; cls_bpf in direct-action mode does the same. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tc")
int tc_drop(struct __sk_buff *skb)
{
	return 2;	/* TC_ACT_SHOT */
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
