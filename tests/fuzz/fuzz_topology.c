// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: a topology file (trace --agents --topology) over eight
 * agents, the names a mutation is likely to hit among them: whatever the
 * file, each neighbour list holds each link once, both ways, none to
 * itself, however many links a hub has. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "fuzz.h"
#include "report/pathtrace.h"

static char n0[] = "a", n1[] = "b", n2[] = "r1", n3[] = "r2", n4[] = "r3", n5[] = "r4",
	    n6[] = "s", n7[] = "victim";
static char *const names[8] = { n0, n1, n2, n3, n4, n5, n6, n7 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

/* j among i's neighbours */
static bool linked(const struct bt_topo *t, int i, int j)
{
	for (int k = 0; k < t->deg[i]; k++)
		if (t->nbr[i][k] == j)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct bt_topo t = { 0 };

	if (!f)
		return 0;
	if (!bt_topology_read(f, "fuzz", names, 8, &t)) {
		if (t.n != 8)
			__builtin_trap();
		for (int i = 0; i < 8; i++)
			for (int k = 0; k < t.deg[i]; k++) {
				int j = t.nbr[i][k];

				/* a link to nobody, to itself, twice, or one way */
				if (j < 0 || j >= 8 || j == i || !linked(&t, j, i))
					__builtin_trap();
				for (int l = 0; l < k; l++)
					if (t.nbr[i][l] == j)
						__builtin_trap();
			}
		bt_topo_free(&t);
	}
	fclose(f);
	return 0;
}
