// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench: ns per packet of bloomtap's program against an empty XDP
 * program and reference designs, all measured in one run with
 * BPF_PROG_TEST_RUN, every iteration a different packet (bench.bpf.c's
 * driver), rounds interleaved, medians reported, each figure also as a
 * ratio to the empty program of the same run. Absolute nanoseconds vary
 * with the machine and its load; the ratios are the result. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "instance/spie.h"
#include "bench.h"
#include "hash.h"
#include "../tests/lib/zipf.h"

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(buf, len, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
}

static void on_signal(int sig)
{
	cleanup();
	_exit(1);
}

/* The sections in make bench's order; a selection runs in this order. */
static const struct section {
	const char *name;
	int (*run)(struct bench_run *r);
	int (*make)(void);	/* its instances, made before any section runs */
	bool not_default;	/* only when named */
	bool takes_arg;		/* NAME=ARG */
	bool needs_arg;		/* only NAME=ARG */
	const char *what;
} sections[] = {
	{ "tables", bench_tables,
	  .what = "every stage on IPv4/UDP and IPv6/TCP, and uniform traffic" },
	{ "heavy", bench_heavy, bench_heavy_make,
	  .what = "the heavy-flow stage, whole and cut short" },
	{ "ablation", bench_ablation, bench_ablation_make,
	  .what = "the SPIE stage by window size, levers added one at a time" },
	{ "floor", bench_floor, .what = "lines a packet by stage, stages against their memory floor" },
	{ "cpus", bench_cpus, .what = "every CPU driving one instance at once" },
	{ "memory", bench_memory, .what = "memory at the default sizes" },
	{ "archive", bench_archive, .what = "the archive's size and query time" },
	{ "watch", bench_watch, .what = "watch lists of one length and of real shapes" },
	{ "live", bench_live, .what = "frames through a veth pair, dropped at its far end" },
	{ "accepted", bench_accepted, .what = "the same, traffic the far end accepts" },
	{ "drops", bench_drops, .takes_arg = true,
	  .what = "the cost of a drop event (drops=workload: the direct and the workload rows)" },
	{ "egress", bench_egress, .what = "the egress program, tested and live" },
	{ "workloads", bench_workloads, .what = "the workload table's lookups" },
	{ "watch-list", bench_watch_list, .not_default = true, .takes_arg = true,
	  .needs_arg = true,
	  .what = "watch-list=FILE: what the list FILE costs" },
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* The environment's names for sections: when the command line names
 * none, the first of them set picks its sections, its value their ARG. */
static const struct {
	const char *env;
	const char *names;
} aliases[] = {
	{ "BENCH_WATCH_LIST", "watch-list" },
	{ "BENCH_EGRESS", "egress" },
	{ "BENCH_DROPS", "drops" },
	{ "BENCH_WATCH", "watch" },
	{ "BENCH_LIVE", "live accepted" },
	{ "BENCH_ACCEPTED", "accepted" },
	{ "BENCH_HEAVY", "heavy" },
	{ "BENCH_WORKLOADS", "workloads" },
	{ "BENCH_QUICK", "tables heavy" },
};

static void usage(FILE *to)
{
	fprintf(to, "usage: bench [-o FILE] [SECTION[=ARG]...]\n"
		"  -o FILE  the report's copy (default .output/bench.txt)\n"
		"sections, run in this order (all but watch-list when none is named):\n");
	for (size_t i = 0; i < NSECTIONS; i++)
		fprintf(to, "  %-11s %s\n", sections[i].name, sections[i].what);
	fprintf(to, "when none is named, the first of these variables set names them (its\n"
		"value their ARG):\n");
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		fprintf(to, "  %-17s %s\n", aliases[i].env, aliases[i].names);
}

/* Marks the section of name (NAME or NAME=ARG) in chosen[], its ARG in
 * arg[] (def when it has none); -1 after a message when there is no such
 * section or it takes no ARG. */
static int choose(const char *name, const char *def, bool *chosen, const char **arg)
{
	size_t len = strcspn(name, "=");

	for (size_t i = 0; i < NSECTIONS; i++)
		if (strlen(sections[i].name) == len && !strncmp(sections[i].name, name, len)) {
			if (name[len] && !sections[i].takes_arg) {
				fprintf(stderr, "bench: %s takes no ARG\n", sections[i].name);
				return -1;
			}
			chosen[i] = true;
			arg[i] = name[len] ? name + len + 1 : def;
			return 0;
		}
	fprintf(stderr, "bench: no section '%.*s'\n", (int)len, name);
	return -1;
}

/* The sections the command line (or an alias) chose; -1 after a message. */
static int choose_all(int argc, char **argv, bool *chosen, const char **arg)
{
	bool any = false;

	for (int i = 0; i < argc; i++, any = true)
		if (choose(argv[i], NULL, chosen, arg)) {
			usage(stderr);
			return -1;
		}
	for (size_t a = 0; !any && a < sizeof(aliases) / sizeof(aliases[0]); a++) {
		const char *v = getenv(aliases[a].env);
		char names[64], *save, *n;

		if (!v)
			continue;
		snprintf(names, sizeof(names), "%s", aliases[a].names);
		for (n = strtok_r(names, " ", &save); n; n = strtok_r(NULL, " ", &save))
			choose(n, v, chosen, arg);
		any = true;
	}
	for (size_t i = 0; !any && i < NSECTIONS; i++)
		chosen[i] = !sections[i].not_default;
	for (size_t i = 0; i < NSECTIONS; i++)
		if (chosen[i] && sections[i].needs_arg && !arg[i]) {
			fprintf(stderr, "bench: %s needs an argument: %s\n", sections[i].name,
				sections[i].what);
			return -1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = ".output/bench.txt";
	bool chosen[NSECTIONS] = { false };
	const char *arg[NSECTIONS] = { NULL };
	uint32_t *seq, *useq;
	uint64_t rng = 0x5eed;	/* the uniform sequence's */
	char cpu[128], date[32];
	struct utsname u;
	time_t now = time(NULL);
	struct bench_run r = { 0 };
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "ho:")) != -1)
		switch (opt) {
		case 'o':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	if (choose_all(argc - optind, argv + optind, chosen, arg))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "bench: needs root (bpf(2) with BPF_PROG_TEST_RUN, pins under "
			"/sys/fs/bpf): run 'make bench' as root\n");
		return 1;
	}
	if (!getenv("BENCH_VERBOSE"))
		libbpf_set_print(NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	seq = bench_seq_zipf();
	useq = malloc(SEQ_LEN * sizeof(*useq));
	if (!seq || !useq)
		return 1;
	for (uint32_t i = 0; i < SEQ_LEN; i++)
		useq[i] = bt_rng(&rng) % FLOWS;

	if (make_bloomtap(&targets[P_PARSE], "parse", false, false, 0, 0, 0) ||
	    make_bloomtap(&targets[P_HEAVY], "heavy", true, false, 0, 0, 0) ||
	    make_bloomtap(&targets[P_SPIE], "spie", false, true, 0, 0, 0) ||
	    make_bloomtap(&targets[P_ALL], "all", true, true, 0, 0, 0) ||
	    make_bloomtap(&targets[P_ALL_SEP], "allsep", true, true, BT_META_SEPARATE_HASH, 0, 0))
		rc = 1;
	for (size_t i = 0; !rc && i < NSECTIONS; i++)
		if (chosen[i] && sections[i].make && sections[i].make())
			rc = 1;
	if (rc) {
		fprintf(stderr, "bench: loading bloomtap failed\n");
		cleanup();
		return 1;
	}
	r.f = fopen(path, "w");
	r.seq = seq;
	r.useq = useq;
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	out(stdout, r.f, "bloomtap bench, %s: %s, %ld CPUs, Linux %s\n", date, cpu,
	    sysconf(_SC_NPROCESSORS_ONLN), u.release);
	out(stdout, r.f, "BPF_PROG_TEST_RUN, %u packets a measurement, median of %d interleaved "
	    "rounds; flows Zipf(1.1) over %d, a different packet every iteration\n",
	    REPEAT, ROUNDS, FLOWS);
	char desc[256];

	bt_spie_describe(&targets[P_ALL].inst.meta, desc, sizeof(desc));
	out(stdout, r.f, "defaults: %s\n", desc);
	for (size_t i = 0; !rc && i < NSECTIONS; i++)
		if (chosen[i]) {
			r.arg = arg[i];
			rc = sections[i].run(&r);
		}
	if (r.f) {
		fclose(r.f);
		if (!rc)
			printf("(written to %s)\n", path);
	}
	cleanup();
	free(seq);
	free(useq);
	return rc ? 1 : 0;
}
