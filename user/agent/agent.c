// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* run: the agent. Attaches to each interface or adopts the instance already
 * pinned for it, then keeps heavy-flow intervals and SPIE windows turning,
 * seals windows into the archive, prunes it, and serves HTTP. Everything it
 * keeps lives in the pins: stopped with SIGTERM it leaves the program
 * attached (unless --detach-on-exit), and started again it goes on where it
 * was, losing no counter, heavy flow or live window. An interface deleted
 * and made again is attached again, the instance's maps kept. */
#include <dirent.h>
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
#include "agent_state.h"
#include "instance/watch.h"
#include "core/archive.h"
#include "instance/drops.h"
#include "instance/link.h"
#include "report/heavy_report.h"
#include "instance/create.h"
#include "http.h"
#include "instance/kernel.h"
#include "instance/recorder.h"
#include "webconfig.h"
#include "base/common.h"
#include "base/options.h"
#include "base/util.h"
#include "core/workloads.h"

static volatile sig_atomic_t stop, reload;

static void on_stop(int sig)
{
	stop = 1;
}

static void on_hup(int sig)
{
	reload = 1;
}

static struct agent ag = {
	.cfg = AGENT_DEFAULTS,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* The instance is kept; its link is made again on the interface of that
 * name now (its old link died with the interface it was on). */
static int reattach(const char *name)
{
	int err = bt_detach(name, true);

	struct bt_attach_opts o = { .mode = ag.cfg.mode, .force = ag.cfg.force, .tap = ag.cfg.tap,
				    .dir = ag.cfg.dir, .drop_suppress = ag.cfg.drop_suppress };

	return err ? err : bt_attach(name, &o);
}

/* An adopted instance in the mode the configuration asks; drops recorded
 * unless in tap mode (no frame of a tap port reaches the stack). */
static int adopt_tap(const struct agent_iface *f)
{
	int was = bt_tap_get(&f->inst), err;

	if (was < 0 || was == ag.cfg.tap)
		return 0;
	if ((err = bt_tap_set(&f->inst, f->name, ag.cfg.tap, ag.cfg.force)))
		return err;
	if (ag.cfg.tap)
		bt_drops_unregister(&f->inst);
	else if ((err = bt_drops_register(&f->inst, ag.cfg.drop_suppress)))
		return err;
	bt_log(BT_LOG_INFO, "%s: tap mode %s, as configured", f->name, ag.cfg.tap ? "on" : "off");
	return 0;
}

/* An instance attached before keeps the directions it was attached for
 * (an ingress instance has no egress maps to add a program to): true when
 * they are not the configuration's, said with the way out. At start with
 * --force the instance is then made anew; --check says what start would do. */
static bool direction_differs(const char *name, const struct bt_meta *meta, bool starting)
{
	const char *has = bt_attach_dir_of(meta), *want = bt_attach_dir_names[ag.cfg.dir];

	if (!strcmp(has, want))
		return false;
	if (ag.cfg.force)
		bt_log(starting ? BT_LOG_INFO : BT_LOG_WARNING, "%s: the instance attached there "
		       "records direction %s, the configuration asks %s: %s detach%s it and "
		       "attach%s anew (--force; its counters and windows start again)", name,
		       has, want, starting ? "the agent" : "run would", starting ? "es" : "",
		       starting ? "es" : "");
	else
		bt_warn("%s: the instance attached there records direction %s, the configuration "
			"asks %s: %s (%s). To apply the configuration's, 'bloomtap detach %s' "
			"before the agent starts, or start it with --force (it detaches the "
			"instance, its counters and windows, and attaches anew)", name, has, want,
			starting ? "adopted as it is" : "run would adopt it as it is",
			!strcmp(has, "ingress") ?
			"what the interface sends is not recorded" : !strcmp(has, "egress") ?
			"what the interface receives is not recorded" : "both directions recorded",
			name);
	return true;
}

/* Whether instance name is pinned by a bloomtap this one cannot read
 * (another ABI, or another map layout): then its ABI into *abi (0 when
 * its meta is none this one can read) and when it was made into when. */
static bool incompatible(const char *name, __u32 *abi, char *when, size_t len)
{
	struct bt_instance inst;
	__u64 created = 0;
	int err;

	*abi = 0;
	snprintf(when, len, "?");
	if (!bt_instance_exists(name))
		return false;
	err = bt_instance_open(name, &inst);
	if (!err) {
		bool same = bt_instance_layout_matches(&inst);

		bt_instance_close(&inst);
		if (same)
			return false;
	} else if (err != -EPROTO) {
		return false;	/* adopt_or_attach explains it */
	}
	if (!bt_instance_peek(name, abi, &created)) {
		time_t t = created / 1000000000ULL;

		strftime(when, len, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	}
	return true;
}

/* Such an instance that another process holds (pid, -1 unnamed): an
 * agent of that version, running (the DaemonSet's beside the package's). */
static int refuse_held(const char *name, __u32 abi, const char *when, int pid)
{
	char who[32];

	bt_err("%s: the pinned instance (ABI %u, made %s; this one is ABI %u) is held by "
	       "another bloomtap agent (%s), running: not made anew under it. Stop or "
	       "upgrade that agent, then start this one; nothing was changed", name, abi,
	       when, BT_ABI_VERSION, bt_holder_str(pid, who, sizeof(who)));
	ag.incompatible = true;
	return -EPROTO;
}

/* An interface's instance this bloomtap cannot read: refused (-EPROTO,
 * nothing changed), or with recreate-incompatible detached and removed,
 * saying what went with it, for adopt_or_attach to attach anew. Only an
 * older ABI's, and only while no process holds its lock (taken here, held
 * through the detach): a newer one's is a downgrade's or a newer agent's
 * beside this one, and a held one is another agent's, running. 0 when
 * there is none or it is this one's. */
static int drop_incompatible(struct agent_iface *f)
{
	char when[32];
	__u32 abi;
	int err, lock_fd = -1;

	if (!incompatible(f->name, &abi, when, sizeof(when)))
		return 0;
	if (!ag.cfg.recreate_incompatible) {
		bt_err("%s: the pinned instance has another map layout (made by another "
		       "bloomtap version): 'bloomtap detach %s' first, or run with "
		       "--recreate-incompatible; nothing was changed", f->name, f->name);
		ag.incompatible = true;
		return -EPROTO;
	}
	if (abi >= BT_ABI_VERSION || !abi) {
		if (!abi)
			bt_err("%s: the pinned instance's meta is none this bloomtap (ABI %u) "
			       "can read: not made anew, as it may be a newer one's", f->name,
			       BT_ABI_VERSION);
		else if (abi > BT_ABI_VERSION)
			bt_err("%s: the pinned instance was made by a newer bloomtap (ABI %u, "
			       "made %s; this one is ABI %u): not made anew, which would discard "
			       "its live windows and counters under a newer agent that may run "
			       "beside this one. Upgrade this bloomtap, or 'bloomtap detach %s' "
			       "to discard it", f->name, abi, when, BT_ABI_VERSION, f->name);
		else
			bt_err("%s: the pinned instance has this ABI (%u, made %s) but another "
			       "map layout (another build of it): not made anew, as it may be "
			       "the newer", f->name, abi, when);
		bt_err("%s: nothing was changed; 'bloomtap detach %s' removes it", f->name,
		       f->name);
		ag.incompatible = true;
		return -EPROTO;
	}
	if (bt_instance_lock(f->name, &lock_fd) == -EBUSY)
		return refuse_held(f->name, abi, when, bt_instance_lock_holder(f->name));
	err = bt_detach(f->name, false);
	if (lock_fd >= 0)
		close(lock_fd);
	if (err)
		return err;
	bt_log(BT_LOG_WARNING, "%s: the pinned instance (ABI %u, made %s) was made by an older "
	       "bloomtap version (this one is ABI %u), which cannot read it: detached and made "
	       "anew (recreate-incompatible). Lost with it: its live SPIE windows (what was not "
	       "yet sealed into the archive), the heavy-flow interval in progress and its "
	       "counters; kept: the archive %s", f->name, abi, when, BT_ABI_VERSION,
	       ag.cfg.archive ? ag.cfg.archive : "(none)");
	f->recreated = true;
	return 0;
}

static int adopt_or_attach(struct agent_iface *f)
{
	int link, err;

	link = bt_instance_link_ifindex(f->name);
	if (link == 0) {
		/* pinned, but its interface was deleted (and perhaps made again) */
		if ((err = reattach(f->name)))
			return err;
		bt_log(BT_LOG_INFO, "%s: the interface was made again since: attached to it, "
		       "the instance's counters and windows kept", f->name);
		f->reattached++;
		link = bt_instance_link_ifindex(f->name);
	}
	if (link > 0) {
		err = bt_instance_open(f->name, &f->inst);
		if (err) {
			bt_instance_open_or_explain(f->name, &f->inst);
			return err;
		}
		if (direction_differs(f->name, &f->inst.meta, true) && ag.cfg.force) {
			bt_instance_close(&f->inst);
			if ((err = bt_detach(f->name, false)))
				return err;
			link = -ENOENT;
		}
	}
	if (link > 0) {
		if (!f->reattached)
			bt_log(BT_LOG_INFO, "%s: adopted the attached instance (%s)", f->name,
			       BT_PIN_ROOT);
		return adopt_tap(f);
	}
	struct bt_attach_opts o = { .mode = ag.cfg.mode, .force = ag.cfg.force, .tap = ag.cfg.tap,
				    .dir = ag.cfg.dir, .sketch = &ag.cfg.sketch, .spie = &ag.cfg.spie,
				    .drop_suppress = ag.cfg.drop_suppress };

	err = bt_attach(f->name, &o);
	if (err)
		return err;
	err = bt_instance_open_or_explain(f->name, &f->inst);
	if (!err)
		bt_log(BT_LOG_INFO, "%s: attached%s", f->name,
		       f->recreated ? " (a new instance, of this ABI)" : "");
	return err;
}

static void end_interval(struct agent_iface *f, double now, bool held_for_tests);

/* The interface went away, or was made again: attach to it again once it
 * is there, logged. Checked once a second. The interval counted on the old
 * interface ends when it is seen gone (or made again, when it came back
 * between two looks): its records carry that interface's index, and no
 * interval holds packets of both (IPFIX's ingressInterface is one an
 * interval). */
static void check_iface(struct agent_iface *f)
{
	int ifindex, link;

	/* detached under the agent (detach --force): the operator's call, not
	 * a re-created interface to attach to again; said once, and /healthz
	 * and bloomtap_attached say it from then on */
	if (f->detached)
		return;
	if (!bt_instance_exists(f->name)) {
		f->detached = true;
		bt_log(BT_LOG_ERR, "%s: detached under the agent (its pins are gone): nothing is "
		       "counted there any more; /healthz fails; restart the agent to attach again",
		       f->name);
		return;
	}
	ifindex = if_nametoindex(f->name);
	link = bt_instance_link_ifindex(f->name);

	if (!ifindex) {
		if (!f->gone) {
			bt_log(BT_LOG_WARNING, "%s: the interface is gone; attaching again when "
			       "one of that name comes back (counters and windows kept)", f->name);
			end_interval(f, bt_mono_s(), false);
		}
		f->gone = true;
		return;
	}
	if (link == ifindex)
		return;
	if (!f->gone)
		end_interval(f, bt_mono_s(), false);
	f->gone = true;	/* until attached: one interval ended, not one a try */
	if (reattach(f->name)) {
		bt_log(BT_LOG_ERR, "%s: could not attach to the interface made again; trying "
		       "again in a second", f->name);
		return;
	}
	f->gone = false;
	f->reattached++;
	/* the new interface's index (IPFIX's ingressInterface), as attach wrote it */
	bt_instance_reread_meta(&f->inst);
	bt_log(BT_LOG_INFO, "%s: attached again, to the interface made again (index %d); "
	       "the instance's counters and windows kept", f->name, ifindex);
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

/* The directory a file goes in, made as mkdir_p makes it. */
static int mkdir_parent(const char *path)
{
	char dir[512];
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return mkdir_p(dir);
}

static double window_s(const struct agent_iface *f)
{
	return ag.cfg.spie.window_s > 0 ? ag.cfg.spie.window_s : f->inst.meta.window_ms / 1000.0;
}

/* The window the log names: the configured one, or else the first
 * interface's instance's (each keeps its own when none is set). */
static double window_in_force(void)
{
	return ag.n ? window_s(&ag.ifs[0]) : ag.cfg.spie.window_s;
}

/* The settings a keeper takes from the configuration (at start, and at
 * every reload). */
static void keeper_settings(struct agent_iface *f)
{
	int err;

	f->keeper.archive = ag.cfg.archive;
	/* where trace looks when not told (its windows leave the ring) */
	if (ag.cfg.archive && (err = bt_instance_set_archive(&f->inst, ag.cfg.archive)))
		bt_warn("%s: could not record the archive %s in the instance (%s): trace "
			"will need --archive", f->name, ag.cfg.archive, strerror(-err));
	/* drop-suppress, when the file sets it: on an adopted instance too
	 * (every restart and upgrade), and again at each reload */
	if (ag.cfg.drop_suppress && f->inst.drop_suppress_fd >= 0) {
		__u64 bits[BT_DROP_REASONS / 64];

		if ((err = bt_drops_parse_suppress(ag.cfg.drop_suppress, bits)) ||
		    (err = bt_drops_set_suppress(&f->inst, bits)))
			bt_warn("%s: drop-suppress %s not applied (%s)", f->name,
				ag.cfg.drop_suppress, strerror(-err));
	}
	f->keeper.max_bytes = ag.cfg.archive_max_bytes;
	f->keeper.max_age_s = ag.cfg.archive_max_age;
	f->keeper.window_s = window_s(f);
	f->keeper.flush_s = ag.cfg.archive_flush_s;
}

/* The archive directory's files and bytes, for /metrics: counted here,
 * not at every scrape; read in the directory's order, unsorted. */
static void count_archive(const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	uint64_t bytes = 0, files = 0;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char inst[BT_ARCHIVE_NAME_MAX + 1];
		struct stat st;
		__u64 start;
		__u32 seq;

		if (!bt_archive_name_parse(de->d_name, inst, sizeof(inst), &start, &seq) &&
		    !fstatat(dirfd(d), de->d_name, &st, 0)) {
			bytes += st.st_size;
			files++;
		}
	}
	closedir(d);
	__atomic_store_n(&ag.archive_bytes, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&ag.archive_files, files, __ATOMIC_RELAXED);
}

/* The counter's thread: every second, outside the agent's lock and off
 * the loop's thread (listed, sorted and stat'ed there under the lock,
 * 60,000 files took 0.7-1.4 s a second, which the rings' 10 ms turns
 * and every scrape waited for). The path is copied under the lock: a
 * reload frees the configuration it replaces. */
static pthread_t counter;
static volatile bool counter_stop;

static void *counter_main(void *arg)
{
	while (!counter_stop) {
		char *dir;

		pthread_mutex_lock(&ag.lock);
		dir = ag.cfg.archive ? strdup(ag.cfg.archive) : NULL;
		pthread_mutex_unlock(&ag.lock);
		count_archive(dir);
		free(dir);
		for (int i = 0; i < 10 && !counter_stop; i++)
			usleep(100000);
	}
	return NULL;
}

/* The collectors of c into x[*n]: those of keep[nkeep] that go to the same
 * place the same way taken over (NULL left in keep: a reload keeps their
 * sessions and counters), the others opened. 0, or -1 after a message
 * (nothing opened kept, keep untouched). */
static int open_ipfix(const struct agent_cfg *c, struct bt_ipfix **keep, int nkeep,
		      struct bt_ipfix **x, int *n)
{
	struct bt_ipfix_dest d[BT_IPFIX_MAX_DEST];
	int from[BT_IPFIX_MAX_DEST];	/* x[i]'s index in keep, or -1 */
	char err[512];
	int nd = 0;

	*n = 0;
	if (!c->ipfix)
		return 0;
	if (bt_ipfix_parse_list(c->ipfix, d, &nd, err, sizeof(err))) {
		bt_log(BT_LOG_ERR, "--ipfix: %s", err);
		return -1;
	}
	for (int i = 0; i < nd; i++) {
		from[i] = -1;
		for (int j = 0; j < nkeep && from[i] < 0; j++)
			if (keep[j] && bt_ipfix_same(keep[j], &d[i], &c->ipfix_cfg))
				from[i] = j;
		for (int k = 0; k < i && from[i] >= 0; k++)
			if (from[k] == from[i])	/* named twice: one of them kept */
				from[i] = -1;
		x[i] = from[i] >= 0 ? keep[from[i]] : bt_ipfix_open(&d[i], &c->ipfix_cfg, err,
								       sizeof(err));
		if (!x[i]) {
			bt_log(BT_LOG_ERR, "--ipfix: %s", err);
			while (i--)
				if (from[i] < 0)
					bt_ipfix_close(x[i]);
			return -1;
		}
	}
	for (int i = 0; i < nd; i++)
		if (from[i] >= 0)
			keep[from[i]] = NULL;
	*n = nd;
	return 0;
}

/* Collectors closed (at exit, or replaced at a reload): each TCP backlog
 * sent within IPFIX_FINISH_S in all, the rest counted as not sent; each
 * collector's account logged. */
#define IPFIX_FINISH_S 2.0

static void finish_ipfix(struct bt_ipfix **x, int n)
{
	double end = bt_mono_s() + IPFIX_FINISH_S;

	for (int i = 0; i < n; i++) {
		struct bt_ipfix_stats st;
		uint64_t unsent = 0;
		double left = end - bt_mono_s();

		if (!x[i])	/* kept by a reload */
			continue;

		bt_ipfix_finish(x[i], left > 0 ? left : 0, &unsent);
		bt_ipfix_stats(x[i], &st);
		bt_log(unsent ? BT_LOG_WARNING : BT_LOG_INFO, "IPFIX to %s: %llu messages (%llu "
		       "records) sent, %llu not sent%s", bt_ipfix_name(x[i]),
		       (unsigned long long)st.messages, (unsigned long long)st.records,
		       (unsigned long long)st.errors, unsent ? ", of them the TCP backlog left at "
		       "the close" : "");
		bt_ipfix_close(x[i]);
	}
}

static void close_ipfix(void)
{
	finish_ipfix(ag.ipfix, ag.nipfix);
	ag.nipfix = 0;
}

/* The HTTP side, for the web config's reloads (SIGHUP, the loop). */
static struct bt_http *http_door;

/* The web config read again: said when it changed, or when it does not
 * load (once for each reason, not every look). */
#define WEB_CHECK_S 5.0

static void reload_web(bool hup)
{
	static char last_err[700];
	char msg[700];
	int rc = bt_http_reload_web(http_door, msg, sizeof(msg));

	if (rc > 0) {
		bt_log(BT_LOG_INFO, "%s%s", msg, hup ? "" : " (the files changed)");
		last_err[0] = 0;
	} else if (rc < 0 && (hup || strcmp(msg, last_err))) {
		bt_log(BT_LOG_ERR, "%s", msg);
		snprintf(last_err, sizeof(last_err), "%s", msg);
	}
}

static bool ipfix_changed(const struct agent_cfg *a, const struct agent_cfg *b)
{
	return (!a->ipfix != !b->ipfix) || (a->ipfix && strcmp(a->ipfix, b->ipfix)) ||
	       memcmp(&a->ipfix_cfg, &b->ipfix_cfg, sizeof(a->ipfix_cfg));
}

/* Another stage's heavy flows of the interval (what: "sent"...), after
 * the received ones; err[i] keeps exporter i's first error */
static void export_more(const struct agent_iface *f, const struct bt_heavy_maps *m, __u32 iv,
			const char *what, int *err)
{
	int more[BT_IPFIX_MAX_DEST], rc;

	if ((rc = bt_ipfix_export_interval(ag.ipfix, ag.nipfix, m, iv, NULL, more))) {
		bt_log(BT_LOG_WARNING, "%s: IPFIX: the interval's heavy %s flows: %s", f->name,
		       what, strerror(-rc));
		return;
	}
	for (int i = 0; i < ag.nipfix; i++)
		if (!err[i])
			err[i] = more[i];
}

/* An interval of f just ended: out to every collector. A collector that
 * fails is counted (bloomtap_ipfix_errors_total) and logged, at most once
 * a minute while it keeps failing; the loop never waits on it. */
static void export_interval(struct agent_iface *f, __u32 iv)
{
	int err[BT_IPFIX_MAX_DEST], rc;

	if (!ag.nipfix)
		return;
	if ((rc = bt_ipfix_export_interval(ag.ipfix, ag.nipfix, &f->hm, iv, NULL, err))) {
		bt_log(BT_LOG_WARNING, "%s: IPFIX: the interval's heavy flows: %s", f->name,
		       strerror(-rc));
		return;
	}
	/* the sent ones (flowDirection 1, egressInterface) */
	if (f->hm.egress)
		export_more(f, f->hm.egress, iv, "sent", err);
	/* the dropped ones after them, when asked: a collector that sums
	 * every record would count a packet received and then dropped twice */
	if (ag.cfg.ipfix_cfg.dropped && f->hm.drops)
		export_more(f, f->hm.drops, iv, "dropped", err);
	for (int i = 0; i < ag.nipfix; i++) {
		double *at = &ag.ipfix_logged_at[i];
		struct bt_ipfix_stats st;

		if (!err[i] || (*at && bt_mono_s() - *at < 60))
			continue;
		bt_ipfix_stats(ag.ipfix[i], &st);
		bt_log(BT_LOG_WARNING, "%s: IPFIX to %s: %s (%llu errors so far)", f->name,
		       bt_ipfix_name(ag.ipfix[i]), err[i] == -EINPROGRESS ? "its name is still "
		       "being resolved (a slow resolver: the message waits for no answer)" :
		       strerror(-err[i]), (unsigned long long)st.errors);
		*at = bt_mono_s();
	}
}

/* f's interval ends now: the next begins, the ended one is exported.
 * held_for_tests: the flip may be held there by BLOOMTAP_TEST_PAUSE
 * (agent-flip), with the agent's lock. */
static void end_interval(struct agent_iface *f, double now, bool held_for_tests)
{
	__u32 done = f->hm.ctl->interval & 1;

	bt_heavy_flip(&f->hm);
	if (held_for_tests)
		bt_test_pause("agent-flip");
	f->next_flip = now + ag.cfg.interval_s;
	export_interval(f, done);
}

/* SIGHUP, on the reload thread (user/agent/watchload.c): the file read again
 * into a new configuration, the command line on top, checked; swapped in
 * under the lock, or nothing changes; then its watch list loaded. What only
 * a start can change (the address, the interfaces) is logged. */
static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A reload refused: which part, and the settings that stay in force. */
static void kept_settings(const char *what, const char *part)
{
	bt_log(BT_LOG_ERR, "%s: %s: %s was refused (said above); in force: interval %g s, "
	       "window %g s, archive %s, and the watch list in use", ag.cfg.config, what, part,
	       ag.cfg.interval_s, window_in_force(), ag.cfg.archive ? ag.cfg.archive : "none");
}

static void reconfigure(void)
{
	char names[BT_AGENT_MAX_IFACES][IFNAMSIZ];
	struct agent_cfg next;
	int n;

	reload_web(true);	/* its own file, with or without --config */
	if (!ag.cfg.config) {
		bt_log(BT_LOG_WARNING, "SIGHUP: no --config to re-read");
		return;
	}
	if (bt_agent_config_load(ag.argc, ag.argv, &next, names, &n)) {
		kept_settings("not applied, the previous settings stay",
			      bt_agent_config_refused());
		bt_agent_config_discard();
		return;
	}
	if (strcmp(next.listen, ag.cfg.listen) || !same_str(next.web_config, ag.cfg.web_config) ||
	    !same_str(next.api_socket, ag.cfg.api_socket) ||
	    next.listen_metrics_only != ag.cfg.listen_metrics_only || next.tap != ag.cfg.tap)
		bt_log(BT_LOG_WARNING, "%s: listen, listen-metrics-only, web-config, api-socket "
		       "and tap take effect at the next start", ag.cfg.config);
	if (n != ag.n)
		bt_log(BT_LOG_WARNING, "%s: interfaces are read at start: restart the agent to "
		       "add or remove one", ag.cfg.config);
	if (next.archive && mkdir_p(next.archive)) {
		bt_log(BT_LOG_ERR, "%s: --archive %s: %s", ag.cfg.config, next.archive,
		       strerror(errno));
		kept_settings("not applied, the previous settings stay", "the archive");
		bt_watch_list_drop(next.watch_list);
		bt_agent_config_discard();
		return;
	}
	bool had_watch = ag.cfg.watch;
	struct bt_ipfix *ipfix[BT_IPFIX_MAX_DEST];
	int nipfix = 0;
	bool new_ipfix = ipfix_changed(&ag.cfg, &next);

	/* ag.ipfix is the loop's: read here, changed below under the lock */
	struct bt_ipfix *old_ipfix[BT_IPFIX_MAX_DEST];
	int nold = ag.nipfix;

	memcpy(old_ipfix, ag.ipfix, sizeof(old_ipfix));
	if (new_ipfix && open_ipfix(&next, old_ipfix, nold, ipfix, &nipfix)) {
		kept_settings("not applied, the previous settings stay", "the IPFIX collectors");
		bt_watch_list_drop(next.watch_list);
		bt_agent_config_discard();
		return;
	}
	pthread_mutex_lock(&ag.lock);
	next.listen = ag.cfg.listen;
	next.web_config = ag.cfg.web_config;
	next.api_socket = ag.cfg.api_socket;
	next.listen_metrics_only = ag.cfg.listen_metrics_only;	/* the door's, as started */
	next.tap = ag.cfg.tap;		/* the interfaces' mode, as started */
	ag.cfg = next;
	if (new_ipfix) {
		memcpy(ag.ipfix, ipfix, sizeof(ipfix));
		ag.nipfix = nipfix;
		memset(ag.ipfix_logged_at, 0, sizeof(ag.ipfix_logged_at));
	}
	for (int i = 0; i < ag.n; i++)
		keeper_settings(&ag.ifs[i]);
	pthread_mutex_unlock(&ag.lock);
	/* nothing points into the configurations before the one replaced now
	 * (the watch list asked for last, and a trace that began before the
	 * lock, may still use that one) */
	bt_agent_config_applied();
	/* the collectors dropped: their backlogs sent, outside the lock (the
	 * loop turns meanwhile); those kept are NULL there */
	if (new_ipfix)
		finish_ipfix(old_ipfix, nold);
	/* built on the loader's thread: the loop goes on turning meanwhile */
	bt_watch_loader_request(ag.cfg.watch_list, ag.cfg.watch, had_watch);
	ag.cfg.watch_list = NULL;
	bt_log(BT_LOG_INFO, "re-read %s (interval %g s, window %g s)", ag.cfg.config,
	       ag.cfg.interval_s, window_in_force());
}

/* Whether another process holds instance name's lock: said, with its PID. */
static bool held_elsewhere(const char *name)
{
	int pid = bt_instance_lock_holder(name);
	char who[32], when[32];
	__u32 abi;

	if (!pid)
		return false;
	if (incompatible(name, &abi, when, sizeof(when))) {
		refuse_held(name, abi, when, pid);
		return true;
	}
	bt_err("run: %s: the instance is held by another bloomtap process (%s: an agent, "
	       "or windows --every); one at a time", name, bt_holder_str(pid, who, sizeof(who)));
	return true;
}

/* Phase 2: attach or adopt every interface, take its lock, map it. */
static int start_ifaces(struct bt_keeper **keepers)
{
	for (int i = 0; i < ag.n; i++) {
		struct agent_iface *f = &ag.ifs[i];

		f->lock_fd = -1;
		/* an instance of another layout first (its meta is not this
		 * one's to read): refused, or made anew; then an instance
		 * another process keeps: said once, nothing touched */
		if (drop_incompatible(f) ||
		    (bt_instance_exists(f->name) && held_elsewhere(f->name))) {
			ag.n = i;
			return -1;
		}
		if (!adopt_or_attach(f) && bt_instance_lock(f->name, &f->lock_fd))
			held_elsewhere(f->name);	/* taken between the two: rare */
		if (f->lock_fd < 0 || bt_heavy_map(&f->inst, &f->hm) ||
		    bt_spie_map(&f->inst, &f->sm)) {
			bt_err("run: %s: could not attach or adopt", f->name);
			ag.n = i + (f->inst.meta_fd > 0);
			return -1;
		}
		f->next_flip = bt_mono_s() + ag.cfg.interval_s;
		f->keeper = (struct bt_keeper){ .sm = &f->sm, .name = f->name };
		keeper_settings(f);
		keepers[i] = &f->keeper;
	}
	return 0;
}

/* Phase 3: every 10 ms (the datapath may fill a window in that time), the
 * intervals and the rings; every second, the interfaces (the workloads'
 * devices are the workload table's thread's: user/agent/wlsync.c). */
static void loop(struct bt_keeper **keepers)
{
	double next_check = 0, next_web = bt_mono_s() + WEB_CHECK_S;
	/* the node's other namespaces, for the drops in them (user/instance/drops.c) */

	while (!stop) {
		double now;

		usleep(10000);
		if (reload) {
			reload = 0;
			bt_watch_loader_reload();	/* on the reload thread */
		}
		now = bt_mono_s();
		/* a renewed certificate or a revoked user, written to the
		 * files (a Secret's update, certbot): no SIGHUP needed */
		if (now >= next_web) {
			reload_web(false);
			next_web = now + WEB_CHECK_S;
		}
		pthread_mutex_lock(&ag.lock);	/* the settings a reload swaps */
		if (now >= next_check) {
			for (int i = 0; i < ag.n; i++) {
				__u32 pid;

				check_iface(&ag.ifs[i]);
				/* a killed follower's flag: the drop program
				 * stops copying into its ring buffer */
				if (ag.ifs[i].inst.meta.drop_ring && !ag.ifs[i].detached)
					bt_recorder_follower(&ag.ifs[i].inst, &pid);
			}
			/* a VLAN, bridge or bond made on an interface since */
			bt_drops_refresh_uppers();
			next_check = now + 1;
		}
		for (int i = 0; i < ag.n; i++) {
			struct agent_iface *f = &ag.ifs[i];

			/* tests: a flip held, its lock with it */
			if (now >= f->next_flip)
				end_interval(f, now, true);
		}
		bt_keeper_turn_all(keepers, ag.n, false, false);
		pthread_mutex_unlock(&ag.lock);
	}
	bt_keeper_turn_all(keepers, ag.n, false, true);
}

/* Phase 4: what the agent holds, released; detached if asked. */
static void stop_ifaces(bool detach)
{
	for (int i = 0; i < ag.n; i++) {
		struct agent_iface *f = &ag.ifs[i];

		if (f->hm.ctl)
			bt_heavy_unmap(&f->hm);
		if (f->sm.ctl)
			bt_spie_unmap(&f->sm);
		if (f->lock_fd > 0)
			close(f->lock_fd);
		bt_instance_close(&f->inst);
		/* an instance detached under the agent is gone: nothing to do,
		 * and no "no bloomtap instance" error at a clean stop */
		if (detach && !bt_instance_exists(f->name))
			bt_log(BT_LOG_INFO, "%s: detached already (under the agent)", f->name);
		else if (detach)
			bt_detach(f->name, false);
	}
}

/* The HTTP side as the configuration gives it; web: loaded, or empty. */
static struct bt_http_cfg http_cfg(struct bt_web_cfg *web)
{
	return (struct bt_http_cfg){ .listen = ag.cfg.listen, .socket = ag.cfg.api_socket,
				     .web = ag.cfg.web_config ? web : NULL,
				     .metrics_only = ag.cfg.listen_metrics_only };
}

/* What a stop leaves: attached programs and pins, unless detached. */
static void say_stopping(void)
{
	int detached = 0;

	for (int i = 0; i < ag.n; i++)
		detached += ag.ifs[i].detached;
	bt_log(BT_LOG_INFO, "stopping; %s%s", ag.cfg.detach_on_exit ?
	       "detaching (--detach-on-exit)" : detached < ag.n ?
	       "the programs stay attached, the maps pinned" : "nothing is attached",
	       detached && detached < ag.n ? " (where not detached meanwhile)" : "");
}

/* run --check: the file, and what would stop the start (an instance
 * kept, the port taken, the socket answered); nothing is attached. */
static int check_only(char names[][IFNAMSIZ], int n)
{
	char err[512], line[512];
	struct bt_web_cfg web = { 0 };
	struct bt_http_cfg hc;
	char budget[32] = "no budget", who[32] = "";
	bool busy = false;
	int holder = 0;

	/* Beside a running agent (it holds the instances) the file is what
	 * is checked: the port and the socket are that agent's, and a
	 * SIGHUP or a restart with this file takes them over. */
	for (int i = 0; i < n && !holder; i++)
		if (bt_instance_exists(names[i]))
			holder = bt_instance_lock_holder(names[i]);
	for (int i = 0; i < n; i++) {
		struct bt_instance inst;

		if (bt_instance_link_ifindex(names[i]) > 0 && !bt_instance_open(names[i], &inst)) {
			direction_differs(names[i], &inst.meta, false);
			bt_instance_close(&inst);
		}
	}
	if (holder) {
		bt_holder_str(holder, who, sizeof(who));
	} else {
		if (bt_listen_free(ag.cfg.listen) == -EADDRINUSE) {
			bt_err("run: %s is taken by another process here", ag.cfg.listen);
			busy = true;
		}
		if (ag.cfg.api_socket &&
		    bt_api_socket_check(ag.cfg.api_socket, err, sizeof(err))) {
			bt_err("run: %s", err);
			busy = true;
		}
	}
	if (busy)
		return BT_EXIT_FAIL;

	if (ag.cfg.archive_max_bytes)
		snprintf(budget, sizeof(budget), "at most %.1f MiB",
			 ag.cfg.archive_max_bytes / 1048576.0);
	/* bt_agent_config_check read the web config already */
	if (ag.cfg.web_config && bt_web_config_load(ag.cfg.web_config, &web, err, sizeof(err)))
		return BT_EXIT_USAGE;
	hc = http_cfg(&web);
	if (bt_http_exposure(&hc, line, sizeof(line)))
		bt_log(BT_LOG_WARNING, "the API is open to the network: %s", line);
	bt_web_config_free(&web);
	if (bt_g.json) {
		struct json_object *o = json_object_new_object(), *ifs = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(ifs, json_object_new_string(names[i]));
		json_object_object_add(o, "configuration", json_object_new_string("ok"));
		json_object_object_add(o, "interfaces", ifs);
		json_object_object_add(o, "archive", json_object_new_string(ag.cfg.archive));
		json_object_object_add(o, "archive_max_bytes",
				       json_object_new_uint64(ag.cfg.archive_max_bytes));
		json_object_object_add(o, "http", json_object_new_string(line));
		json_object_object_add(o, "held_by", holder > 0 ? json_object_new_int(holder)
						      : holder ? json_object_new_string("unknown") : NULL);
		bt_json_print(o);
		return 0;
	}
	printf("configuration OK: %d interface%s, archive %s (%s)\n%s\n", n,
	       n > 1 ? "s" : "", ag.cfg.archive, budget, line);
	if (holder)
		printf("held now by another bloomtap process (%s: an agent, or windows "
		       "--every): the instance, and so the port and the socket were not "
		       "checked\n", who);
	return 0;
}

/* Phase 1: the configuration, every value checked before anything is
 * attached. Returns -1 to go on, else the exit status (--help, --check, a
 * value refused, a second agent). */
static int configure(int argc, char **argv, char names[][IFNAMSIZ], int *np)
{
	int n, rc;

	rc = bt_agent_config_load(argc, argv, &ag.cfg, names, &n);
	if (rc == BT_PARSE_HELP)
		return 0;
	if (rc)
		return BT_EXIT_USAGE;
	if (!n) {
		bt_err("run: name at least one interface (see bloomtap run --help)");
		return BT_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (!if_nametoindex(names[i])) {
			bt_err_no_iface("run", names[i]);
			return BT_EXIT_FAIL;	/* a runtime error, as attach's */
		}
	/* the instances it would adopt (and --check's holders) are pins */
	if (bt_pins_visible())
		return BT_EXIT_FAIL;
	/* an interface's instance of another network namespace is not this
	 * one's to adopt, attach again or check, nor its lock this one's */
	for (int i = 0; i < n; i++)
		if (bt_instance_here_or_explain(names[i], "run ...", NULL))
			return BT_EXIT_FAIL;
	if (!ag.cfg.check) {
		/* a second agent is refused before it makes anything */
		for (int i = 0; i < n; i++)
			if (bt_instance_exists(names[i]) && held_elsewhere(names[i]))
				return ag.incompatible ? BT_EXIT_INCOMPATIBLE : BT_EXIT_FAIL;
		if (ag.cfg.archive && mkdir_p(ag.cfg.archive)) {
			bt_err("run: --archive %s: %s", ag.cfg.archive, strerror(errno));
			return BT_EXIT_USAGE;
		}
	}
	if (ag.cfg.check)
		return check_only(names, n);
	*np = n;
	return -1;
}

/* The HTTP door opened, and what it serves said once: the web config
 * passes to bt_http_start (it keeps it, for its reloads). NULL after a
 * message. */
static struct bt_http *open_door(struct bt_web_cfg *web, bool loopback)
{
	struct bt_http_cfg hc = http_cfg(web);
	char err[512], line[512];
	bool open_api = bt_http_exposure(&hc, line, sizeof(line));
	bool in_clear = !loopback && !web->cert_pem && (web->nusers || !ag.cfg.listen_metrics_only);
	struct bt_http *http = bt_http_start(&ag, &hc, err, sizeof(err));

	if (!http) {
		bt_err("run: %s", err);
		return NULL;
	}
	if (open_api)
		bt_log(BT_LOG_WARNING, "%s: anyone who reaches it reads the heavy flows (addresses "
		       "and ports), the dropped flows, the watch lists' class names, the IPFIX "
		       "collectors, and asks /api/v1/trace whether a packet passed here (give "
		       "--web-config with users, or --listen-metrics-only)", line);
	else
		bt_log(BT_LOG_INFO, "%s", line);
	if (in_clear)
		bt_log(BT_LOG_WARNING, "listening on %s, beyond loopback, without TLS: passwords "
		       "and answers cross the network in clear", ag.cfg.listen);
	return http;
}

static int run(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop }, sh = { .sa_handler = on_hup };
	char names[BT_AGENT_MAX_IFACES][IFNAMSIZ], err[512];
	struct bt_keeper *keepers[BT_AGENT_MAX_IFACES];
	struct bt_http *http = NULL;
	struct bt_web_cfg web = { 0 };
	int n, ret = configure(argc, argv, names, &n);
	bool loopback;

	if (ret >= 0)
		return ret;
	ret = BT_EXIT_FAIL;
	ag.argc = argc;
	ag.argv = argv;
	ag.n = n;
	for (int i = 0; i < n; i++) {
		/* as long as names[i]: both IFNAMSIZ (GCC cannot see it) */
		memcpy(ag.ifs[i].name, names[i], IFNAMSIZ);
		ag.ifs[i].name[IFNAMSIZ - 1] = 0;
	}
	bt_listen_check(ag.cfg.listen, &loopback);
	/* what a crash left in the archive: temporary files */
	if (ag.cfg.archive)
		bt_archive_prune(ag.cfg.archive, NULL, 0, 0, NULL);

	if (ag.cfg.web_config && bt_web_config_load(ag.cfg.web_config, &web, err, sizeof(err))) {
		bt_err("run: %s", err);
		ret = BT_EXIT_USAGE;
		goto out;
	}
	/* what would stop the HTTP side, before anything is attached */
	if (ag.cfg.api_socket && bt_api_socket_check(ag.cfg.api_socket, err, sizeof(err))) {
		bt_err("run: %s", err);
		goto out;
	}
	if (ag.cfg.api_socket && mkdir_parent(ag.cfg.api_socket)) {
		bt_err("run: --api-socket %s: its directory: %s", ag.cfg.api_socket, strerror(errno));
		ret = BT_EXIT_USAGE;
		goto out;
	}
	if (open_ipfix(&ag.cfg, NULL, 0, ag.ipfix, &ag.nipfix)) {
		bt_err("run: --ipfix: the collectors could not be set up");
		goto out;
	}
	/* a kernel bloomtap cannot run on, by name; what this one goes without */
	if (bt_kernel_require())
		goto out;
	bt_kernel_note_optional();
	if (start_ifaces(keepers) || bt_watch_loader_start(&ag, reconfigure)) {
		if (ag.incompatible)
			ret = BT_EXIT_INCOMPATIBLE;
		goto out;
	}
	bt_watch_loader_request(ag.cfg.watch_list, ag.cfg.watch, false);
	ag.cfg.watch_list = NULL;
	if (ag.cfg.workloads == 0 && bt_workload_sync_start(&ag))
		bt_log(BT_LOG_ERR, "workloads: the table's thread could not start: no workload "
		       "is named");
	else if (ag.cfg.workloads != 0)
		bt_workload_sync_off(&ag);
	if (!(http = open_door(&web, loopback)))
		goto out;
	http_door = http;
	bt_log(BT_LOG_INFO, "running on %d interface%s, HTTP on %s, archive %s", ag.n,
	       ag.n > 1 ? "s" : "", ag.cfg.listen, ag.cfg.archive);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sh, NULL);
	signal(SIGPIPE, SIG_IGN);
	ag.started = bt_mono_s();
	count_archive(ag.cfg.archive);
	bool counting = !pthread_create(&counter, NULL, counter_main, NULL);

	loop(keepers);
	if (counting) {
		counter_stop = true;
		pthread_join(counter, NULL);
	}
	say_stopping();
	ret = 0;
out:
	bt_workload_sync_stop();
	bt_watch_loader_stop();
	http_door = NULL;
	bt_http_stop(http);
	stop_ifaces(ag.cfg.detach_on_exit && !ret);
	close_ipfix();
	bt_web_config_free(&web);
	return ret;
}

int bt_agent_main(int argc, char **argv)
{
	int ret = run(argc, argv);

	bt_watch_list_drop(ag.cfg.watch_list);	/* --check, or a start that failed */
	ag.cfg.watch_list = NULL;
	bt_agent_config_free();
	return ret;
}

int bt_run_parse_only(int argc, char **argv)
{
	int ret;

	ag.n = 0;
	ag.cfg = (struct agent_cfg)AGENT_DEFAULTS;
	ret = bt_agent_main(argc, argv);
	ag.cfg.check = false;
	return ret;
}
