// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The empty XDP program: the floor of every cost measured in make bench,
 * and "someone else's program" in the attach tests. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
