/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Traceback across hosts (pathtrace.c): the topology file. */
#ifndef BLOOMTAP_PATHTRACE_H
#define BLOOMTAP_PATHTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define BT_MAX_AGENTS 64

/* "NAME: NEIGHBOUR ..." lines, '#' comments, links both ways, into adj
 * over the n agents names[] (a repeated link is one link, a link to
 * itself none). Errors name the file and the line. 0 or -EINVAL. */
int bt_topology_read(FILE *f, const char *path, char (*names)[32], int n,
		     bool adj[BT_MAX_AGENTS][BT_MAX_AGENTS]);

/* trace --agents: ask each agent, walk the path back; since and until as
 * the command line gave them (NULL: open). Returns trace's exit status. */
int bt_trace_agents(const char *agents, const char *topology, const char *from,
		    const char *since, const char *until, const char *times, const void *body,
		    size_t len);

#endif /* BLOOMTAP_PATHTRACE_H */
