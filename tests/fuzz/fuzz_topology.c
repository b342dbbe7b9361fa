// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: a topology file (trace --agents --topology) over eight
 * agents, the names a mutation is likely to hit among them. The reader
 * once wrote past a fixed neighbour array on a hub with many links. */
#include <stdint.h>
#include <stdio.h>
#include "fuzz.h"
#include "report/pathtrace.h"

static char names[8][32] = { "a", "b", "r1", "r2", "r3", "r4", "s", "victim" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS];
	FILE *f = fmemopen((void *)data, size, "r");

	if (!f)
		return 0;
	if (!bt_topology_read(f, "fuzz", names, 8, adj))
		for (int i = 0; i < BT_MAX_AGENTS; i++)
			for (int j = 0; j < BT_MAX_AGENTS; j++)
				if (adj[i][j] && (i >= 8 || j >= 8 || !adj[j][i] || i == j))
					__builtin_trap();	/* a link to nobody, or one way */
	fclose(f);
	return 0;
}
