// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* run's configuration: its options, the configuration file, and reloads.
 * Each load builds a fresh struct agent_cfg, defaults first, then the file,
 * then the command line on top (the command line always wins), and checks
 * every value before the caller applies it: a bad file changes nothing. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent_state.h"
#include "instance/drops.h"
#include "instance/link.h"
#include "agent.h"
#include "http.h"
#include "base/common.h"
#include "base/options.h"
#include "instance/watch.h"
#include "webconfig.h"

#define RUN_OPTS(c)								\
	{ "config", 'c', BT_OPT_STRING, &(c).config, "FILE",			\
	  "read options from FILE (one 'name = value' a line, as the long options)" }, \
	{ "listen", 'l', BT_OPT_STRING, &(c).listen, "ADDR:PORT",		\
	  "HTTP address (default 127.0.0.1:9477; another address is logged)" }, \
	{ "web-config", 0, BT_OPT_STRING, &(c).web_config, "FILE",		\
	  "TLS and basic auth for --listen, in the Prometheus exporters' web "	\
	  "configuration format (tls_server_config, basic_auth_users)" },	\
	{ "listen-metrics-only", 0, BT_OPT_FLAG, &(c).listen_metrics_only, NULL, \
	  "--listen serves /metrics and /healthz alone; the API (traces, "	\
	  "flows, drops) only on --api-socket (the packaged configuration)" },	\
	{ "api-socket", 0, BT_OPT_STRING, &(c).api_socket, "PATH",		\
	  "also serve the API on this unix socket, mode 0600 (the packaged "	\
	  "configuration: /run/bloomtap/api.sock)" },				\
	{ "interval", 0, BT_OPT_DOUBLE, &(c).interval_s, "SECONDS",		\
	  "heavy-flow interval (default 10)", .dmin = 0.1, .dmax = 86400 },	\
	{ "archive", 'a', BT_OPT_STRING, &(c).archive, "DIR",			\
	  "sealed SPIE windows go here (default /var/lib/bloomtap/archive)" },	\
	{ "archive-max-bytes", 0, BT_OPT_U64, &(c).archive_max_bytes, "N",	\
	  "prune the archive directory to N bytes, oldest first (default 1G; 0: no " \
	  "budget)", .min = 0, .max = UINT64_MAX },				\
	{ "archive-max-age", 0, BT_OPT_U64, &(c).archive_max_age, "SECONDS",	\
	  "prune archived windows older than this", .min = 1, .max = UINT64_MAX }, \
	{ "archive-flush", 0, BT_OPT_DOUBLE, &(c).archive_flush_s, "SECONDS",	\
	  "write sealed windows to the archive within this long (default 10; a file " \
	  "holds up to 64 windows)", .dmin = 0.01, .dmax = 3600 },		\
	{ "trace-skew", 0, BT_OPT_DOUBLE, &(c).trace_skew_s, "SECONDS",	\
	  "/api/v1/trace searches each packet in the windows of its capture time " \
	  "+- this, unless the request says (default 2)", .dmin = 0.000001,	\
	  .dmax = 1e9 },							\
	{ "top", 0, BT_OPT_U32, &(c).top, "K",					\
	  "heavy flows per interface in /metrics (default 10)", .min = 1, .max = 1000 }, \
	{ "metrics-workloads", 0, BT_OPT_U32, &(c).metrics_workloads, "N",	\
	  "workloads with series of their own in /metrics, per interface and " \
	  "direction; the rest summed under overflow=\"true\" (default 100)",	\
	  .min = 0, .max = 4095 },						\
	{ "check", 0, BT_OPT_FLAG, &(c).check, NULL,				\
	  "check the options and the configuration file, attach nothing, exit" }, \
	{ "detach-on-exit", 0, BT_OPT_FLAG, &(c).detach_on_exit, NULL,		\
	  "detach and remove the pins when stopped (default: leave attached)" }, \
	{ "recreate-incompatible", 0, BT_OPT_FLAG, &(c).recreate_incompatible, NULL, \
	  "an interface's instance made by a bloomtap of an older ABI, held by no " \
	  "running agent: detach it and attach anew, its live windows and counters " \
	  "lost (default: refuse; a newer ABI's is always refused; the packaged " \
	  "unit sets it)" },						\
	{ "watch", 0, BT_OPT_STRING, &(c).watch, "FILE",			\
	  "watch list for every interface (one 'ADDRESS[/LEN] CLASS' a line; SIGHUP " \
	  "reloads it)" },							\
	{ "workloads", 0, BT_OPT_ENUM, &(c).workloads, "MODE",		\
	  "name each address's workload (container, pod) in heavy flows and "	\
	  "stats, as the packets passed: auto keeps a table of the node's "	\
	  "workloads, scanned every second (default auto)",			\
	  .choices = bt_agent_workloads_names },				\
	{ "ipfix", 0, BT_OPT_STRING, &(c).ipfix, "[tcp:]HOST:PORT,...",	\
	  "export each interval's heavy flows as IPFIX to these collectors (UDP "	\
	  "unless tcp:; at most 4)" },						\
	{ "ipfix-domain", 0, BT_OPT_U32, &(c).ipfix_cfg.domain, "ID",		\
	  "IPFIX observation domain (default 1)" },				\
	{ "ipfix-mtu", 0, BT_OPT_U32, &(c).ipfix_cfg.mtu, "BYTES",		\
	  "path MTU to the collectors: a message fits one datagram (default 1500)", \
	  .min = 576, .max = 65535 },						\
	{ "ipfix-template-refresh", 0, BT_OPT_DOUBLE,				\
	  &(c).ipfix_cfg.template_refresh_s, "SECONDS",			\
	  "UDP: send the templates again this often (default 60)", .dmin = 0.1,	\
	  .dmax = 86400 },							\
	{ "ipfix-dropped", 0, BT_OPT_FLAG, &(c).ipfix_cfg.dropped, NULL,		\
	  "export the heavy dropped flows too, with forwardingStatus Dropped (a "	\
	  "collector summing every record counts their packets twice)" },	\
	{ "mode", 'm', BT_OPT_ENUM, &(c).mode, "MODE", "XDP mode for new attachments", \
	  .choices = bt_mode_names },						\
	{ "force", 'f', BT_OPT_FLAG, &(c).force, NULL,				\
	  "replace an XDP program that is not bloomtap's; allow tap on an "	\
	  "interface with addresses; make anew an attached instance of other " \
	  "directions than --direction" },					\
	{ "tap", 0, BT_OPT_FLAG, &(c).tap, NULL,					\
	  "tap mode, for mirror (SPAN) ports: record every frame, then drop it" }, \
	BT_ATTACH_DIR_OPT((c).dir),						\
	BT_DROPS_OPT((c).drop_suppress),					\
	BT_SKETCH_OPTS((c).sketch),						\
	BT_SPIE_OPTS((c).spie)

const char *const bt_agent_workloads_names[] = { "auto", "off", NULL };

static struct agent_cfg help_cfg;
static const struct bt_opt help_opts[] = { RUN_OPTS(help_cfg), { 0 } };

const struct bt_cmd_spec bt_run_spec = {
	"run", "IFACE...",
	"The agent: attach to each IFACE (or adopt its pinned instance), then keep\n"
	"heavy-flow intervals and SPIE windows turning, seal windows into the\n"
	"archive, and serve /metrics (Prometheus), /api/v1/heavy, /api/v1/drops,\n"
	"/api/v1/trace and /healthz. SIGTERM leaves the program attached; SIGHUP\n"
	"re-reads --config (the command line stays on top of it; --listen,\n"
	"--listen-metrics-only, --web-config, --api-socket and --tap take effect at the\n"
	"next start).",
	help_opts, 0, BT_AGENT_MAX_IFACES,
};

/* What the struct agent_cfg strings point into: argument vectors of
 * configuration files (their strings), each tagged with the load that made
 * it (a generation: the start is 1, each SIGHUP the next). A reload frees
 * what loads before the one it replaces made, so memory stays flat over
 * any number of SIGHUPs; the start's stays (listen, web-config and
 * api-socket keep pointing into it). */
struct kept_ptr {
	void *p;
	unsigned gen;
};

static struct kept_ptr *kept;
static size_t nkept, kept_cap;
static unsigned generation;

static int keep(void *p)
{
	if (nkept == kept_cap) {
		size_t cap = kept_cap ? 2 * kept_cap : 64;
		struct kept_ptr *more = realloc(kept, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		kept = more;
		kept_cap = cap;
	}
	kept[nkept++] = (struct kept_ptr){ p, generation };
	return 0;
}

/* Frees what the loads of generations [from, to] made. */
static void release(unsigned from, unsigned to)
{
	size_t j = 0;

	for (size_t i = 0; i < nkept; i++) {
		if (kept[i].gen >= from && kept[i].gen <= to)
			free(kept[i].p);
		else
			kept[j++] = kept[i];
	}
	nkept = j;
}

void bt_agent_config_applied(void)
{
	if (generation > 2)
		release(2, generation - 2);
}

void bt_agent_config_discard(void)
{
	if (generation > 1)
		release(generation, generation);
}

void bt_agent_config_free(void)
{
	release(0, ~0u);
	free(kept);
	kept = NULL;
	nkept = kept_cap = 0;
}

/* argv parsed into c (a copy of the array: the parser moves positional
 * arguments forward). The positional arguments into names[*n...]. */
static int parse_into(struct agent_cfg *c, const char *name, int argc, char **argv,
		      char names[][IFNAMSIZ], int *n)
{
	struct bt_opt opts[] = { RUN_OPTS(*c), { 0 } };
	struct bt_cmd_spec spec = bt_run_spec;
	char **v = malloc((argc + 1) * sizeof(*v));
	int npos;

	if (!v || keep(v)) {
		free(v);
		return -ENOMEM;
	}
	memcpy(v, argv, argc * sizeof(*v));
	v[argc] = NULL;
	spec.name = name;	/* a file's errors say "FILE: --x ..." */
	spec.command = "run";	/* and point to bloomtap run --help */
	spec.opts = opts;
	npos = bt_parse_args(&spec, argc, v);
	if (npos < 0 || npos == BT_PARSE_HELP)
		return npos < 0 ? -EINVAL : BT_PARSE_HELP;
	for (int i = 0; i < npos; i++) {
		bool dup = false;

		for (int j = 0; j < *n; j++)
			dup |= !strcmp(names[j], v[1 + i]);
		if (dup)
			continue;
		if (*n == BT_AGENT_MAX_IFACES || strlen(v[1 + i]) >= IFNAMSIZ) {
			bt_err("%s: too many interfaces, or '%s' is too long a name", name, v[1 + i]);
			return -EINVAL;
		}
		snprintf(names[(*n)++], IFNAMSIZ, "%s", v[1 + i]);
	}
	return 0;
}

/* A configuration file is the long options, one "name = value" (or a bare
 * "name" for a flag) a line, '#' comments; "interface = NAME" lines add
 * interfaces: the argument vector they make, for the command line's own
 * parser. */
static int read_config(const char *path, char ***argv_out, int **lines_out, int *argc_out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, **argv;
	size_t cap = 64, lcap = 0, slot;
	int argc = 1, lineno = 0, err = 0, *lines;

	if (!f) {
		err = -errno;
		bt_err("--config %s: %s", path, strerror(-err));
		return err;
	}
	argv = calloc(cap, sizeof(*argv));
	lines = calloc(cap, sizeof(*lines));	/* each argument's line */
	if (!argv || !lines || keep(argv)) {
		free(argv);
		free(lines);
		fclose(f);
		return -ENOMEM;
	}
	slot = nkept - 1;	/* where argv is kept, if realloc moves it */
	argv[0] = "run";
	while (!err && getline(&line, &lcap, f) >= 0) {
		char *s = line, *eq, *val = NULL, *e, opt[64];

		lineno++;
		s[strcspn(s, "#\n")] = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); )
			*--e = 0;
		if (!*s)
			continue;
		if ((eq = strchr(s, '='))) {
			*eq = 0;
			val = eq + 1;
			while (*val == ' ' || *val == '\t')
				val++;
			for (e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t'); )
				*--e = 0;
		}
		if ((size_t)argc + 3 >= cap) {
			char **more = realloc(argv, 2 * cap * sizeof(*argv));
			int *more_lines;

			if (more)
				kept[slot].p = argv = more;
			if (!more || !(more_lines = realloc(lines, 2 * cap * sizeof(*lines)))) {
				err = -ENOMEM;
				break;
			}
			lines = more_lines;
			cap *= 2;
		}
		lines[argc] = lines[argc + 1] = lineno;
		if (!strcmp(s, "config")) {
			bt_err("%s:%d: a configuration file cannot name another", path, lineno);
			err = -EINVAL;
		} else if (!strcmp(s, "interface") && (!val || !*val)) {
			bt_err("%s:%d: 'interface' needs a name", path, lineno);
			err = -EINVAL;
		} else if (!strcmp(s, "interface")) {
			if (!(argv[argc] = strdup(val)) || keep(argv[argc]))
				err = -ENOMEM;
			argc++;
		} else {
			snprintf(opt, sizeof(opt), "--%.60s", s);
			if (!(argv[argc] = strdup(opt)) || keep(argv[argc]))
				err = -ENOMEM;
			argc++;
			if (val && !err) {
				if (!(argv[argc] = strdup(val)) || keep(argv[argc]))
					err = -ENOMEM;
				argc++;
			}
		}
	}
	free(line);
	fclose(f);
	if (err == -ENOMEM)
		bt_err("%s: out of memory", path);
	*argv_out = argv;
	*lines_out = lines;
	*argc_out = argc;
	return err;
}

/* A file's argument vector parsed line by line, so that each error names
 * its FILE:LINE as the watch list's do. */
static int parse_file(struct agent_cfg *c, const char *path, int argc, char **argv,
		      const int *lines, char names[][IFNAMSIZ], int *n)
{
	for (int i = 1, j; i < argc; i = j) {
		char name[PATH_MAX + 16], *v[4] = { argv[0] };
		int err;

		for (j = i; j < argc && lines[j] == lines[i]; j++)
			v[1 + j - i] = argv[j];		/* a line makes at most 2 */
		snprintf(name, sizeof(name), "%s:%d", path, lines[i]);
		if ((err = parse_into(c, name, 1 + j - i, v, names, n)))
			return err;
	}
	return 0;
}

int bt_agent_config_check(const struct agent_cfg *c)
{
	struct bt_meta probe = { 0 };
	struct bt_sketch_cfg sk = c->sketch;
	struct bt_spie_cfg sp = c->spie;
	bool loopback;

	if (bt_listen_check(c->listen, &loopback)) {
		bt_err("run: --listen %s: give ADDR:PORT (127.0.0.1:9477, [::1]:9477)", c->listen);
		return -EINVAL;
	}
	/* at a SIGHUP the web config is read again, and a bad one reported
	 * and refused alone, by the HTTP side (reload_web in agent.c) */
	if (c->web_config && generation == 1) {
		struct bt_web_cfg w;
		char err[600];

		if (bt_web_config_load(c->web_config, &w, err, sizeof(err))) {
			bt_err("run: %s", err);
			return -EINVAL;
		}
		bt_web_config_free(&w);
	}
	if (c->api_socket && c->api_socket[0] != '/') {
		bt_err("run: --api-socket %s: give an absolute path", c->api_socket);
		return -EINVAL;
	}
	if (bt_sketch_resolve(&sk, &probe) || bt_spie_resolve(&sp, &probe))
		return -EINVAL;
	if (c->ipfix) {
		struct bt_ipfix_dest d[BT_IPFIX_MAX_DEST];
		char err[512];
		int n;

		if (bt_ipfix_parse_list(c->ipfix, d, &n, err, sizeof(err))) {
			bt_err("run: --ipfix: %s", err);
			return -EINVAL;
		}
	}
	if (c->drop_suppress && bt_drops_supported()) {
		__u64 bits[BT_DROP_REASONS / 64];

		if (bt_drops_parse_suppress(c->drop_suppress, bits))
			return -EINVAL;
	}
	return 0;
}

static const char *refused = "";

const char *bt_agent_config_refused(void)
{
	return refused;
}

int bt_agent_config_load(int argc, char **argv, struct agent_cfg *out,
			 char names[][IFNAMSIZ], int *n)
{
	struct agent_cfg cli = AGENT_DEFAULTS;
	char scratch[BT_AGENT_MAX_IFACES][IFNAMSIZ];
	int ns = 0, err;

	*out = (struct agent_cfg)AGENT_DEFAULTS;
	*n = 0;
	generation++;
	refused = "the command line";
	/* the command line alone first: --config FILE or --config=FILE, --help */
	if ((err = parse_into(&cli, "run", argc, argv, scratch, &ns)))
		return err;
	if (cli.config) {
		char **fargv = NULL;
		int fargc = 0, *lines = NULL;

		refused = "the file";
		if (!(err = read_config(cli.config, &fargv, &lines, &fargc)))
			err = parse_file(out, cli.config, fargc, fargv, lines, names, n);
		free(lines);
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	/* then the command line again, on top of the file */
	refused = "the command line";
	if ((err = parse_into(out, "run", argc, argv, names, n)))
		return err;
	out->config = cli.config;
	refused = "a setting";
	if ((err = bt_agent_config_check(out)))
		return err;
	/* the list read whole once, to check it and to load it */
	refused = "the watch list";
	if (out->watch) {
		out->watch_list = calloc(1, sizeof(*out->watch_list));
		if (!out->watch_list || bt_watch_list_read_or_explain(out->watch, out->watch_list)) {
			free(out->watch_list);
			out->watch_list = NULL;
			return -EINVAL;
		}
	}
	return 0;
}
