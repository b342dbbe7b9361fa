/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Traceback across hosts (pathtrace.c): the agents, asked in parallel,
 * the topology, and the walk. */
#ifndef BLOOMTAP_PATHTRACE_H
#define BLOOMTAP_PATHTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Who is whose neighbour: a list of neighbours for each of n agents */
struct bt_topo {
	int n;
	int *deg, *cap;
	int **nbr;
};

void bt_topo_free(struct bt_topo *t);

/* "NAME: NEIGHBOUR ..." lines, '#' comments, links both ways, into t
 * over the n agents names[] (a repeated link is one link, a link to
 * itself none). Errors name the file and the line. 0 or -EINVAL. */
int bt_topology_read(FILE *f, const char *path, char *const *names, int n,
		     struct bt_topo *t);

/* trace --agents and its kin: where the agents are, how to reach them */
struct bt_fleet_opts {
	const char *agents, *agents_file, *prometheus, *dns;
	const char *topology, *from, *since, *until;
	const char *times;	/* the query's skew=, at= or any_time= (NULL: none) */
	const char *cacert, *cert, *key, *user, *netrc, *tls_server_name;
	double timeout_s, agent_timeout_s;	/* total; each agent's */
	int parallel;				/* requests at once */
	/* the numbers (from 1, ascending) of the IP packets sent, the
	 * frames an agent answers for: each answer is judged against them */
	const uint32_t *sent;
	size_t nsent;
	double skew_s;		/* how far the hosts' clocks may differ (0: BT_ORDER_SKEW_S) */
};

/* The skew an inferred order allows between two hosts' windows, s: the
 * agents' default trace-skew */
#define BT_ORDER_SKEW_S 2.0

/* Ask each agent, walk the path back. Returns trace's exit status. */
int bt_trace_agents(const struct bt_fleet_opts *o, const void *body, size_t len);

/* The walk over answers already in hand: answers[i] agent i's JSON text
 * (NULL: it did not answer); topology (its lines) NULL: the order inferred from the
 * windows' times. For the unit test and the bench. Exit status. */
int bt_trace_answers(char *const *names, char *const *answers, int n, FILE *topology,
		     const char *from);

#endif /* BLOOMTAP_PATHTRACE_H */
