/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's state (bloomtap run): the interfaces it watches, what keeps
 * their intervals and windows turning, and what its HTTP side reads. A
 * header of types the agent's files share (agent.c, agent_config.c,
 * watchload.c, http.c, metrics.c): none of them includes agent.c's. */
#ifndef BLOOMTAP_AGENT_STATE_H
#define BLOOMTAP_AGENT_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "base/options.h"
#include "instance/instance.h"
#include "report/ipfix.h"
#include "instance/keeper.h"
#include "instance/sketch.h"
#include "instance/spie.h"

struct bt_watch_list;

#define BT_AGENT_MAX_IFACES 32

struct agent_iface {
	char name[IFNAMSIZ];
	struct bt_instance inst;
	struct bt_heavy_maps hm;
	struct bt_spie_maps sm;
	struct bt_keeper keeper;	/* the SPIE ring's housekeeping */
	int lock_fd;			/* bt_instance_lock(), held while running */
	double next_flip;		/* CLOCK_MONOTONIC seconds */
	bool gone;			/* its interface went away: waiting for it */
	bool detached;			/* its pins removed under it (detach --force):
					 * nothing counts; /healthz says so */
	uint64_t reattached;		/* to an interface of its name made again */
	bool recreated;			/* another ABI's instance removed for a new one */
};

struct agent_cfg {
	const char *config, *listen, *archive, *watch, *ipfix, *drop_suppress;
	const char *web_config, *api_socket;
	double interval_s, archive_flush_s;
	double trace_skew_s;		/* /api/v1/trace without skew=: this */
	uint32_t top;
	uint32_t metrics_workloads;	/* workloads with series of their own, per
					 * interface and direction, in /metrics */
	uint64_t archive_max_bytes, archive_max_age;
	bool detach_on_exit, force, check;
	bool recreate_incompatible;	/* another ABI's instance: made anew */
	bool tap;			/* attach --tap: a mirror port's mode */
	bool listen_metrics_only;	/* --listen: /metrics and /healthz alone */
	int mode;
	int dir;			/* enum bt_attach_dir: for new attachments */
	int workloads;			/* bt_agent_workloads_names: auto, off; read
					 * at start */
	struct bt_ipfix_cfg ipfix_cfg;
	struct bt_sketch_cfg sketch;
	struct bt_spie_cfg spie;
	/* watch read and checked once (bt_agent_config_load), handed to the
	 * loader (user/agent/watchload.c), which frees it; NULL without watch */
	struct bt_watch_list *watch_list;
};

/* The archive's budget unless told: an idle link seals a window a second,
 * and windows a day on disk would fill it. */
#define BT_AGENT_ARCHIVE_MAX_BYTES (1ULL << 30)
#define AGENT_DEFAULTS { .listen = "127.0.0.1:9477", .archive = "/var/lib/bloomtap/archive", \
			.archive_max_bytes = BT_AGENT_ARCHIVE_MAX_BYTES, .interval_s = 10, \
			.top = 10, .metrics_workloads = 100, .ipfix_cfg = BT_IPFIX_CFG_DEFAULTS }

extern const char *const bt_agent_workloads_names[];	/* "auto", "off" */

/* run's options (user/agent/agent_config.c). */
extern const struct bt_cmd_spec bt_run_spec;
/* The configuration: defaults, the --config file, the command line on top,
 * every value checked; the interfaces of the file and the command line into
 * names[*n]. 0, BT_PARSE_HELP, or -EINVAL after a message. */
int bt_agent_config_load(int argc, char **argv, struct agent_cfg *out,
			 char names[][IFNAMSIZ], int *n);
int bt_agent_config_check(const struct agent_cfg *c);
/* What the last bt_agent_config_load that failed refused: "the file" (its
 * FILE:LINE said), "the command line", "a setting" (bt_agent_config_check)
 * or "the watch list". */
const char *bt_agent_config_refused(void);
/* Frees what configurations read (at exit: the config points into it). */
void bt_agent_config_free(void);
/* After a reload: the configuration just loaded is in force; what the loads
 * before the one it replaced made is freed. */
void bt_agent_config_applied(void);
/* After a reload that failed or was not applied: what it made is freed. */
void bt_agent_config_discard(void);

struct agent {
	struct agent_cfg cfg;
	struct agent_iface ifs[BT_AGENT_MAX_IFACES];
	int n;
	bool incompatible;		/* a start refused another ABI's instance */
	pthread_mutex_t lock;		/* loop's turns vs HTTP readers of heavy flows */
	double started;
	uint64_t requests, rejected;
	/* the archive directory, counted every second by a thread of its
	 * own (a scrape reads these, never the directory) */
	uint64_t archive_bytes, archive_files;
	/* IPFIX collectors (--ipfix): each ended interval goes to each */
	struct bt_ipfix *ipfix[BT_IPFIX_MAX_DEST];
	int nipfix;
	double ipfix_logged_at[BT_IPFIX_MAX_DEST];	/* last error logged; 0: never */
	/* the command line, for reloads: it stays on top of the file */
	int argc;
	char **argv;
};

/* The reload thread (user/agent/watchload.c): start it with the function that
 * re-reads the configuration; ask it to load list l (owned from then on;
 * NULL with clear: empty the tables) into every interface, or to reload
 * (SIGHUP); stop it (after what is under way). */
int bt_watch_loader_start(struct agent *ag, void (*reconfigure)(void));
void bt_watch_loader_request(struct bt_watch_list *l, const char *path, bool clear);
void bt_watch_loader_reload(void);
void bt_watch_loader_stop(void);
/* The workload table's thread (user/agent/wlsync.c; workloads = auto): every
 * interface's table kept to the node's workloads, a scan a second. */
int bt_workload_sync_start(struct agent *ag);
void bt_workload_sync_stop(void);
/* workloads = off: the tables and history a killed agent left, ended */
void bt_workload_sync_off(struct agent *ag);
/* How a workload's name was made (docs/workloads.md "Attribution"). */
enum bt_wl_form {
	BT_WLF_UNKNOWN,		/* not this agent's generation */
	BT_WLF_NS_POD_CTR,	/* namespace/pod/container */
	BT_WLF_NS_POD,		/* namespace/pod */
	BT_WLF_POD_CTR,		/* pod/container (podman kube play) */
	BT_WLF_POD,		/* pod */
	BT_WLF_CTR,		/* a container's name or id */
	BT_WLF_NETNS,		/* a network namespace's name, netns:INODE */
};
/* Whether generation gen (its wl_names gen) holds id in the table now, and
 * then its name's form (*form: BT_WLF_UNKNOWN when not). Under the
 * agent's lock; false for all without workloads = auto. */
bool bt_workload_live(__u32 id, __u64 gen, int *form);
/* Frees a list read for the loader that never reached it (NULL: nothing). */
void bt_watch_list_drop(struct bt_watch_list *l);


#endif /* BLOOMTAP_AGENT_STATE_H */
