// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* run: the agent. Attaches to each interface or adopts the instance already
 * pinned for it, then keeps heavy-flow intervals and SPIE windows turning,
 * seals windows into the archive, prunes it, and serves HTTP. Everything it
 * keeps lives in the pins: stopped with SIGTERM it leaves the program
 * attached (unless --detach-on-exit), and started again it goes on where it
 * was, losing no counter, heavy flow or live window. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "agent.h"
#include "archive.h"
#include "commands.h"
#include "common.h"
#include "options.h"

static volatile sig_atomic_t stop, reload;

static void on_stop(int sig)
{
	stop = 1;
}

static void on_hup(int sig)
{
	reload = 1;
}

void bt_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { [3] = "error", [4] = "warning", [6] = "info",
					     [7] = "debug" };
	va_list ap;

	if (level == BT_LOG_DEBUG && !bt_g.verbose)
		return;
	va_start(ap, fmt);
	/* under systemd, "<N>" is the level journald files the line under */
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>", level);
	else
		fprintf(stderr, "bloomtap: %s: ", names[level & 7] ? names[level & 7] : "log");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

#define AGENT_DEFAULTS { .listen = "127.0.0.1:9477", .archive = "/var/lib/bloomtap/archive", \
			.interval_s = 10, .top = 10 }

static struct agent ag = {
	.cfg = AGENT_DEFAULTS,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static const struct bt_opt run_opts[] = {
	{ "config", 'c', BT_OPT_STRING, &ag.cfg.config, "FILE",
	  "read options from FILE (one 'name = value' a line, as the long options)" },
	{ "listen", 'l', BT_OPT_STRING, &ag.cfg.listen, "ADDR:PORT",
	  "HTTP address (default 127.0.0.1:9477; another address is logged)" },
	{ "interval", 0, BT_OPT_DOUBLE, &ag.cfg.interval_s, "SECONDS",
	  "heavy-flow interval (default 10)", .dmin = 0.1, .dmax = 86400 },
	{ "archive", 'a', BT_OPT_STRING, &ag.cfg.archive, "DIR",
	  "sealed SPIE windows go here (default /var/lib/bloomtap/archive)" },
	{ "archive-max-bytes", 0, BT_OPT_U64, &ag.cfg.archive_max_bytes, "N",
	  "prune the archive to N bytes, oldest first", .min = 1, .max = UINT64_MAX },
	{ "archive-max-age", 0, BT_OPT_U64, &ag.cfg.archive_max_age, "SECONDS",
	  "prune archived windows older than this", .min = 1, .max = UINT64_MAX },
	{ "archive-flush", 0, BT_OPT_DOUBLE, &ag.cfg.archive_flush_s, "SECONDS",
	  "write sealed windows to the archive within this long (default 10; a file "
	  "holds up to 64 windows)", .dmin = 0.01, .dmax = 3600 },
	{ "top", 0, BT_OPT_U32, &ag.cfg.top, "K",
	  "heavy flows per interface in /metrics (default 10)", .min = 1, .max = 1000 },
	{ "check", 0, BT_OPT_FLAG, &ag.cfg.check, NULL,
	  "check the options and the configuration file, attach nothing, exit" },
	{ "detach-on-exit", 0, BT_OPT_FLAG, &ag.cfg.detach_on_exit, NULL,
	  "detach and remove the pins when stopped (default: leave attached)" },
	{ "mode", 'm', BT_OPT_ENUM, &ag.cfg.mode, "MODE", "XDP mode for new attachments",
	  .choices = bt_mode_names },
	{ "force", 'f', BT_OPT_FLAG, &ag.cfg.force, NULL,
	  "replace an XDP program that is not bloomtap's" },
	BT_SKETCH_OPTS(ag.cfg.sketch),
	BT_SPIE_OPTS(ag.cfg.spie),
	{ 0 }
};

static const struct bt_cmd_spec run_spec = {
	"run", "IFACE...",
	"The agent: attach to each IFACE (or adopt its pinned instance), then keep\n"
	"heavy-flow intervals and SPIE windows turning, seal windows into the\n"
	"archive, and serve /metrics (Prometheus), /api/v1/heavy, /api/v1/trace\n"
	"and /healthz. SIGTERM leaves the program attached; SIGHUP re-reads --config.",
	run_opts, 0, BT_AGENT_MAX_IFACES,
};

/* A configuration file is the long options, one "name = value" (or a bare
 * "name" for a flag) a line, '#' comments; "interface = NAME" lines add
 * interfaces. Parsed by the command line's own parser. */
static int read_config(const char *path, char ***argv_out, int *argc_out)
{
	FILE *f = fopen(path, "r");
	char line[1024], **argv;
	int argc = 1, lineno = 0;
	size_t cap = 64;

	if (!f) {
		bt_err("--config %s: %s", path, strerror(errno));
		return -errno;
	}
	argv = calloc(cap, sizeof(*argv));
	argv[0] = "run";
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *eq, *key, *val = NULL, *e;

		lineno++;
		s[strcspn(s, "#\n")] = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
			*--e = 0;
		if (!*s)
			continue;
		if ((eq = strchr(s, '='))) {
			*eq = 0;
			val = eq + 1;
			while (*val == ' ' || *val == '\t')
				val++;
			for (e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
				*--e = 0;
		}
		key = s;
		if ((size_t)argc + 3 >= cap) {
			char **more = realloc(argv, 2 * cap * sizeof(*argv));

			if (!more) {
				bt_err("%s:%d: out of memory", path, lineno);
				goto err;
			}
			argv = more;
			cap *= 2;
		}
		if (!strcmp(key, "interface")) {
			if (!val || !*val) {
				bt_err("%s:%d: 'interface' needs a name", path, lineno);
				goto err;
			}
			argv[argc++] = strdup(val);
			continue;
		}
		if (!strcmp(key, "config")) {
			bt_err("%s:%d: a configuration file cannot name another", path, lineno);
			goto err;
		}
		char opt[sizeof(line) + 2];

		snprintf(opt, sizeof(opt), "--%s", key);
		argv[argc++] = strdup(opt);
		if (val)
			argv[argc++] = strdup(val);
	}
	fclose(f);
	*argv_out = argv;
	*argc_out = argc;
	return 0;
err:
	fclose(f);
	for (int i = 1; i < argc; i++)
		free(argv[i]);
	free(argv);
	return -EINVAL;
}

/* Every configuration file read, kept while the options point into it. */
static struct cfg_read {
	char **owned;	/* what read_config allocated: the parser reorders argv */
	int argc;
} cfg_reads[64];
static int ncfg_reads;

static char **keep_argv[64];	/* the reordered arrays themselves */
static int nkeep;

static void free_configs(void)
{
	for (int i = 0; i < nkeep; i++)
		free(keep_argv[i]);
	nkeep = 0;
	for (int i = 0; i < ncfg_reads; i++) {
		for (int j = 1; j < cfg_reads[i].argc; j++)
			free(cfg_reads[i].owned[j]);
		free(cfg_reads[i].owned);
	}
	ncfg_reads = 0;
}

/* The spec's parser applied to the file; errors name the file. */
static int apply_config(const char *path, char ***names, int *n)
{
	struct bt_cmd_spec spec = run_spec;
	char **argv;
	int argc, npos;

	if (ncfg_reads == (int)(sizeof(cfg_reads) / sizeof(cfg_reads[0]))) {
		bt_err("%s: re-read too many times; restart the agent", path);
		return -EINVAL;
	}
	if (read_config(path, &argv, &argc))
		return -EINVAL;
	/* bt_parse_args() moves the positional arguments forward in argv,
	 * over the option pointers: free from a copy taken before */
	char **owned = malloc(argc * sizeof(*owned));

	if (!owned) {
		for (int i = 1; i < argc; i++)
			free(argv[i]);
		free(argv);
		return -ENOMEM;
	}
	memcpy(owned, argv, argc * sizeof(*owned));
	cfg_reads[ncfg_reads++] = (struct cfg_read){ owned, argc };
	keep_argv[nkeep++] = argv;
	spec.name = path;	/* messages say "FILE: --x ..." */
	npos = bt_parse_args(&spec, argc, argv);
	if (npos < 0 || npos == BT_PARSE_HELP)
		return -EINVAL;
	*names = argv + 1;
	*n = npos;
	return 0;
}

/* Is this pinned instance laid out as this bloomtap expects? Compares
 * every pinned map's key and value size with the program's own; the heavy
 * flow maps' values are sized by the instance's meta. */
static int layout_matches(const struct bt_instance *inst)
{
	struct bt_heavy_shape s;

	bt_heavy_shape(&inst->meta, &s);

	const struct { size_t off; __u32 key, value; } want[] = {
		{ offsetof(struct bt_instance, counters_fd), 4, sizeof(struct bt_counters) },
		{ offsetof(struct bt_instance, ctl_fd), 4, sizeof(struct bt_ctl) },
		{ offsetof(struct bt_instance, cms_fd), 4, s.cms.value },
		{ offsetof(struct bt_instance, fm_fd), 4, s.fm.value },
		{ offsetof(struct bt_instance, fmc_fd), 4, s.fmc.value },
		{ offsetof(struct bt_instance, fc_fd), 4, s.fc.value },
		{ offsetof(struct bt_instance, spie_fd), 4, sizeof(struct bt_bloom_block) },
		{ offsetof(struct bt_instance, windows_fd), 4, sizeof(struct bt_window) },
		{ offsetof(struct bt_instance, wcount_fd), 4, sizeof(__u64) },
		{ offsetof(struct bt_instance, meta_fd), 4, sizeof(struct bt_meta) },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = *(const int *)((const char *)inst + want[i].off);

		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.key_size != want[i].key ||
		    info.value_size != want[i].value)
			return 0;
	}
	return 1;
}

static int adopt_or_attach(struct agent_iface *f)
{
	int link = bt_instance_link_ifindex(f->name), err;

	if (link > 0) {
		err = bt_instance_open(f->name, &f->inst);
		if (err == -EPROTO || (!err && !layout_matches(&f->inst))) {
			if (!err)
				bt_instance_close(&f->inst);
			bt_err("%s: the pinned instance has another map layout (made by another "
			       "bloomtap version): 'bloomtap detach %s' first; nothing was changed",
			       f->name, f->name);
			return -EPROTO;
		}
		if (err) {
			bt_instance_open_or_explain(f->name, &f->inst);
			return err;
		}
		bt_log(BT_LOG_INFO, "%s: adopted the attached instance (%s)", f->name,
		       BT_PIN_ROOT);
		return 0;
	}
	err = bt_attach(f->name, ag.cfg.mode, ag.cfg.force, &ag.cfg.sketch, &ag.cfg.spie);
	if (err)
		return err;
	err = bt_instance_open_or_explain(f->name, &f->inst);
	if (!err)
		bt_log(BT_LOG_INFO, "%s: attached", f->name);
	return err;
}

/* mkdir -p, mode 0700 */
static int mkdir_p(const char *path)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0700) && errno != EEXIST ? -1 : 0;
}

static double window_s(const struct agent_iface *f)
{
	return ag.cfg.spie.window_s > 0 ? ag.cfg.spie.window_s : f->inst.meta.window_ms / 1000.0;
}

static int run(int argc, char **argv);

int cmd_run(int argc, char **argv)
{
	int ret = run(argc, argv);

	free_configs();
	return ret;
}

static int run(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop }, sh = { .sa_handler = on_hup };
	struct MHD_Daemon *http = NULL;
	struct bt_keeper *keepers[BT_AGENT_MAX_IFACES];
	char **names = NULL, err[512];
	int n, ncfg = 0, ret = BT_EXIT_FAIL;
	bool loopback;

	/* the file first, so that the command line overrides it */
	for (int i = 1; i < argc - 1; i++)
		if (!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c"))
			ag.cfg.config = argv[i + 1];
	if (ag.cfg.config && apply_config(ag.cfg.config, &names, &ncfg))
		return BT_EXIT_USAGE;
	n = bt_parse_args(&run_spec, argc, argv);
	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;

	/* every interface, from the file and the command line */
	for (int i = 0; i < ncfg + n; i++) {
		const char *name = i < ncfg ? names[i] : argv[1 + i - ncfg];
		bool dup = false;

		for (int j = 0; j < ag.n; j++)
			dup |= !strcmp(ag.ifs[j].name, name);
		if (dup)
			continue;
		if (ag.n == BT_AGENT_MAX_IFACES || strlen(name) >= IFNAMSIZ) {
			bt_err("run: too many interfaces, or '%s' is too long a name", name);
			return BT_EXIT_USAGE;
		}
		snprintf(ag.ifs[ag.n++].name, IFNAMSIZ, "%s", name);
	}
	/* every bad value is an error now, before anything is attached */
	if (!ag.n) {
		bt_err("run: name at least one interface (see bloomtap run --help)");
		return BT_EXIT_USAGE;
	}
	for (int i = 0; i < ag.n; i++)
		if (!if_nametoindex(ag.ifs[i].name)) {
			bt_err("run: no such interface: '%s' (see 'ip link')", ag.ifs[i].name);
			return BT_EXIT_USAGE;
		}
	if (bt_listen_check(ag.cfg.listen, &loopback)) {
		bt_err("run: --listen %s: give ADDR:PORT (127.0.0.1:9477, [::1]:9477)",
		       ag.cfg.listen);
		return BT_EXIT_USAGE;
	}
	{
		struct bt_meta probe = { 0 };
		struct bt_sketch_cfg sk = ag.cfg.sketch;
		struct bt_spie_cfg sp = ag.cfg.spie;

		if (bt_sketch_resolve(&sk, &probe) || bt_spie_resolve(&sp, &probe))
			return BT_EXIT_USAGE;
	}
	if (ag.cfg.archive && !ag.cfg.check && mkdir_p(ag.cfg.archive)) {
		bt_err("run: --archive %s: %s", ag.cfg.archive, strerror(errno));
		return BT_EXIT_USAGE;
	}
	if (ag.cfg.check) {
		printf("configuration OK: %d interface%s, HTTP on %s\n", ag.n, ag.n > 1 ? "s" : "",
		       ag.cfg.listen);
		return 0;
	}

	for (int i = 0; i < ag.n; i++) {
		struct agent_iface *f = &ag.ifs[i];

		f->lock_fd = -1;
		if (!adopt_or_attach(f) && bt_instance_lock(f->name, &f->lock_fd))
			bt_err("run: %s: another bloomtap process (an agent, or windows --every) "
			       "keeps this instance turning; one at a time", f->name);
		if (f->lock_fd < 0 || bt_heavy_map(&f->inst, &f->hm) ||
		    bt_spie_map(&f->inst, &f->sm)) {
			bt_err("run: %s: could not attach or adopt", f->name);
			ag.n = i + (f->inst.meta_fd > 0);
			goto out;
		}
		f->next_flip = mono() + ag.cfg.interval_s;
		f->keeper = (struct bt_keeper){ .sm = &f->sm, .name = f->name,
			.archive = ag.cfg.archive, .max_bytes = ag.cfg.archive_max_bytes,
			.max_age_s = ag.cfg.archive_max_age, .window_s = window_s(f),
			.flush_s = ag.cfg.archive_flush_s };
		keepers[i] = &f->keeper;
	}
	http = bt_http_start(&ag, ag.cfg.listen, err, sizeof(err));
	if (!http) {
		bt_err("run: %s", err);
		goto out;
	}
	if (!loopback)
		bt_log(BT_LOG_WARNING, "listening on %s, beyond loopback: anyone who reaches it "
		       "can read the metrics and query traces", ag.cfg.listen);
	bt_log(BT_LOG_INFO, "running on %d interface%s, HTTP on %s, archive %s", ag.n,
	       ag.n > 1 ? "s" : "", ag.cfg.listen, ag.cfg.archive);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sh, NULL);
	signal(SIGPIPE, SIG_IGN);
	ag.started = mono();
	while (!stop) {
		/* every 10 ms: the datapath may fill a window in that time */
		usleep(10000);
		if (reload) {
			reload = 0;
			if (ag.cfg.config && !apply_config(ag.cfg.config, &names, &ncfg))
				bt_log(BT_LOG_INFO, "re-read %s (interval %g s, window %g s)",
				       ag.cfg.config, ag.cfg.interval_s, ag.cfg.spie.window_s);
			else if (ag.cfg.config)
				bt_log(BT_LOG_ERR, "%s: not applied, the previous settings stay",
				       ag.cfg.config);
		}
		pthread_mutex_lock(&ag.lock);
		for (int i = 0; i < ag.n; i++) {
			struct agent_iface *f = &ag.ifs[i];
			double now = mono();

			if (now >= f->next_flip) {
				bt_heavy_flip(&f->hm);
				f->next_flip = now + ag.cfg.interval_s;
			}
			f->keeper.window_s = window_s(f);
		}
		bt_keeper_turn_all(keepers, ag.n, false, false);
		pthread_mutex_unlock(&ag.lock);
	}
	bt_keeper_turn_all(keepers, ag.n, false, true);
	bt_log(BT_LOG_INFO, "stopping; %s", ag.cfg.detach_on_exit ?
	       "detaching (--detach-on-exit)" : "the programs stay attached, the maps pinned");
	ret = 0;
out:
	bt_http_stop(http);
	for (int i = 0; i < ag.n; i++) {
		struct agent_iface *f = &ag.ifs[i];

		if (f->hm.ctl)
			bt_heavy_unmap(&f->hm);
		if (f->sm.ctl)
			bt_spie_unmap(&f->sm);
		if (f->lock_fd > 0)
			close(f->lock_fd);
		bt_instance_close(&f->inst);
		if (ag.cfg.detach_on_exit && !ret)
			bt_detach(f->name, false);
	}
	return ret;
}

int bt_run_parse_only(int argc, char **argv)
{
	int ret;

	ag.n = 0;
	ag.cfg = (struct agent_cfg)AGENT_DEFAULTS;
	ret = cmd_run(argc, argv);
	ag.cfg.check = false;
	return ret;
}
