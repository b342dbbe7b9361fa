/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent (bloomtap run): agent.c, its configuration agent_config.c. */
#ifndef BLOOMTAP_AGENT_H
#define BLOOMTAP_AGENT_H


/* run's whole life: options, configuration, the loop, the exit status. */
int bt_agent_main(int argc, char **argv);
/* run's option and configuration parsing and checks from a clean state
 * (argv must hold --check): for tests and fuzzing. */
int bt_run_parse_only(int argc, char **argv);

#endif /* BLOOMTAP_AGENT_H */
