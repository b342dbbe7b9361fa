/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Traceback across hosts (user/pathtrace.c): the topology file. */
#ifndef BLOOMTAP_PATHTRACE_H
#define BLOOMTAP_PATHTRACE_H

#include <stdbool.h>
#include <stdio.h>

#define BT_MAX_AGENTS 64

/* "NAME: NEIGHBOUR ..." lines, '#' comments, links both ways, into adj
 * over the n agents names[] (a repeated link is one link, a link to
 * itself none). Errors name the file and the line. 0 or -EINVAL. */
int bt_topology_read(FILE *f, const char *path, char (*names)[32], int n,
		     bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS]);

#endif /* BLOOMTAP_PATHTRACE_H */
