/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One entry point per command (after bpftool's do_<object>()), and the
 * internal operations the demo and the agent reuse. */
#ifndef BLOOMTAP_COMMANDS_H
#define BLOOMTAP_COMMANDS_H

#include <stdbool.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "instance.h"
#include "sketch.h"
#include "spie.h"

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* run's option and configuration parsing and checks from a clean state
 * (argv must hold --check): for tests and fuzzing. */
int bt_run_parse_only(int argc, char **argv);
int cmd_heavy(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_windows(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_drops(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
/* drops -j of one instance: per reason, digested, causes, suppressed. */
struct json_object *bt_drops_json(const struct bt_instance *inst, size_t n);
/* drops of one instance, plain or JSON as asked, with its top n heavy
 * dropped flows of both intervals. */
int bt_print_drops(const struct bt_instance *inst, size_t n);
/* The heavy dropped flows (bt_heavy_json's form, each key with its
 * reason); NULL when the maps cannot be mapped. */
struct json_object *bt_heavy_dropped_json(const struct bt_instance *inst, size_t n);
int bt_print_heavy_dropped(const struct bt_instance *inst, size_t n);
/* Per class of the watch list: entries, packets and bytes (watch show). */
struct bt_instance;
int bt_print_watch(const struct bt_instance *inst);
/* The hits (windows and drops) one answer of bt_trace_buffer holds at
 * most; a packet's "seen" counts them all. */
#define BT_TRACE_API_HITS (1 << 17)
/* What a trace of a buffer searches; a zeroed field is open. */
struct bt_trace_query {
	const struct bt_instance *inst;	/* its live windows; NULL: none */
	const char *archive;		/* its files there; NULL: none */
	__u64 since, until;		/* windows overlapping [since, until], ns */
	uint64_t max_packets;		/* refused past it; 0: any number */
};
/* The trace of the packets in buf (a pcap or pcapng capture, or hex text)
 * as trace -j prints it; NULL with err set on bad input or past
 * max_packets. Takes no lock: the ring is read as it turns. */
struct json_object *bt_trace_buffer(const struct bt_trace_query *q, const void *buf, size_t len,
				    char *err, size_t errlen);
/* The same answer as JSON text (the API's), serialized a packet at a
 * time; NULL with err set as above. */
char *bt_trace_text(const struct bt_trace_query *q, const void *buf, size_t len, char *err,
		    size_t errlen);
/* trace --agents: ask each agent, walk the path back (user/pathtrace.c);
 * since and until as the command line gave them (NULL: open). */
int bt_trace_agents(const char *agents, const char *topology, const char *from,
		    const char *since, const char *until, const void *body, size_t len);
/* Epoch seconds, YYYY-MM-DDTHH:MM:SS[Z] (UTC), or -N[smhd] ago, into ns. */
int bt_parse_time(const char *s, __u64 *ns);

enum bt_xdp_mode { BT_MODE_AUTO, BT_MODE_NATIVE, BT_MODE_SKB };
extern const char *const bt_mode_names[];

/* attach's settings; a zeroed struct is attach IFACE with no option. */
struct bt_attach_opts {
	enum bt_xdp_mode mode;
	bool force;	/* replace a foreign XDP program; tap mode on an
			 * interface with addresses */
	bool tap;	/* record every frame, then drop it (a mirror port) */
	const struct bt_sketch_cfg *sketch;	/* NULL: the defaults */
	const struct bt_spie_cfg *spie;
	const char *drop_suppress;		/* NULL: the default list */
};
/* attach IFACE: create (or reuse a kept) instance named after it, attach. */
int bt_attach(const char *ifname, const struct bt_attach_opts *o);
/* Tap mode of an attached instance (bt_ctl.tap): on, off, or -errno. */
int bt_tap_get(const struct bt_instance *inst);
/* Tap mode on or off; on is refused for an interface with an address the
 * host uses, unless force. 0, or -errno after a message. */
int bt_tap_set(const struct bt_instance *inst, const char *ifname, bool tap, bool force);
/* detach: drop the XDP link; unless keep_maps, remove every pin. */
int bt_detach(const char *name, bool keep_maps);

/* Counter names, in enum bt_counter order: plain output and JSON keys. */
extern const char *const bt_counter_names[BT_CTR_MAX];
int bt_print_stats(const struct bt_instance *inst);
/* Heavy flows of both intervals (last complete, current), top n. */
int bt_print_heavy(const struct bt_instance *inst, size_t n, bool by_packets,
		   const struct bt_threshold *thr);
/* The same, as the JSON array heavy -j prints (last interval first). */
struct json_object *bt_heavy_json(const struct bt_heavy_maps *m, size_t n, bool by_packets,
				  const struct bt_threshold *thr);

#endif /* BLOOMTAP_COMMANDS_H */
