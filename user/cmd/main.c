// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bloomtap: command table and global options (after bpftool's main.c). */
#include <string.h>
#include "base/common.h"
#include "commands.h"
#include "instance/kernel.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd cmds[] = {
	{ "attach", cmd_attach, "load, pin and attach the XDP program to an interface" },
	{ "detach", cmd_detach, "detach from an interface and remove the pins" },
	{ "status", cmd_status, "list instances and their attachment" },
	{ "stats", cmd_stats, "print the datapath's counters" },
	{ "heavy", cmd_heavy, "heavy flows (top talkers) of the last and current interval" },
	{ "trace", cmd_trace, "did these packets pass here, and when (SPIE)" },
	{ "drops", cmd_drops, "what the kernel dropped of an instance's packets, and why" },
	{ "windows", cmd_windows, "the SPIE window ring; rotate, seal, archive" },
	{ "archive", cmd_archive, "what an archive of sealed SPIE windows holds" },
	{ "replay", cmd_replay, "run a capture file through the real program" },
	{ "run", cmd_run, "the agent: intervals, windows, archive, /metrics and API" },
	{ "watch", cmd_watch, "watch lists: traffic per class of addresses (Bloomier filter)" },
	{ "demo", cmd_demo, "the built-in lab: namespaces, traffic, what bloomtap saw" },
	{ "kernel", cmd_kernel, "what the running kernel offers bloomtap; the verifier's figures" },
	{ "workloads", cmd_workloads, "the node's pods, containers and network namespaces" },
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: bloomtap [-j|-p] [-v] COMMAND [options]\n\n"
		   "XDP network observability: counters, heavy flows, packet traceback.\n\n"
		   "Commands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-9s %s\n", c->name, c->summary);
	fprintf(f, "\nGlobal options: -j/--json, -p/--pretty (JSON), -v/--verbose,\n"
		   "-h/--help, -V/--version. 'bloomtap COMMAND --help' for a command.\n"
		   "Unique prefixes of command names are accepted.\n");
}

/* Exact name, else a unique prefix (as xdp-tools and bpftool allow). */
static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *hit = NULL;
	size_t len = strlen(name);
	int n = 0;

	for (const struct cmd *c = cmds; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
		if (!strncmp(c->name, name, len)) {
			hit = c;
			n++;
		}
	}
	return n == 1 ? hit : NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			bt_g.json = true;
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			bt_g.json = bt_g.pretty = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			bt_g.verbose++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("bloomtap %s\n", BT_VERSION);
			return 0;
		} else {
			bt_err("unknown global option '%s' (see bloomtap --help)", a);
			return BT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		if (bt_g.json)
			bt_err("give a command (see bloomtap --help)");
		return BT_EXIT_USAGE;
	}
	c = find_cmd(argv[i]);
	if (!c) {
		bt_err("unknown or ambiguous command '%s' (see bloomtap --help)", argv[i]);
		return BT_EXIT_USAGE;
	}
	bt_setup_libbpf_log();
	return c->fn(argc - i, argv + i);
}
