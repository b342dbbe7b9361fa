/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One entry point per command (after bpftool's do_<object>()); what they
 * share with the agent and the API is in instance/ and report/. */
#ifndef BLOOMTAP_COMMANDS_H
#define BLOOMTAP_COMMANDS_H

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_heavy(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_windows(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_drops(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_workloads(int argc, char **argv);

#endif /* BLOOMTAP_COMMANDS_H */
