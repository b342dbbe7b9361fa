// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* trace: did these packets pass here, and when? The command over the
 * query (trace_query.c): its options, the instance and archive it names,
 * or the agents it asks. Exit status 0 when every IP packet was seen, 1
 * when some were not or the trace failed, 2 on a usage error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <net/if.h>
#include "core/archive.h"
#include "core/capture.h"
#include "base/common.h"
#include "commands.h"
#include "report/trace_query.h"
#include "report/pathtrace.h"
#include "core/digest.h"
#include "core/segments.h"
#include "instance/drops.h"
#include "instance/instance.h"
#include "base/options.h"
#include "instance/spie.h"
#include "base/util.h"
#include "base/timeparse.h"

static struct trace_cfg {
	const char *instance, *hex, *since, *until, *archive, *agents, *topology, *from, *at;
	const char *agents_file, *prometheus, *dns, *cacert, *cert, *key, *user, *netrc;
	const char *tls_server_name;
	uint64_t budget, mss, timeout_ms, agent_timeout_ms, parallel;
	double skew;
	bool any_time;
} tcfg;	/* skew 0: the default here, the agent's own trace-skew there */

static const struct bt_opt trace_opts[] = {
	BT_INSTANCE_OPT(tcfg.instance),
	{ "hex", 'x', BT_OPT_STRING, &tcfg.hex, "BYTES",
	  "one packet in hex: an IP packet, or an Ethernet frame" },
	{ "since", 0, BT_OPT_STRING, &tcfg.since, "T",
	  "windows that end after T (epoch seconds, 2026-11-25T10:00:00Z, -10m)" },
	{ "until", 0, BT_OPT_STRING, &tcfg.until, "T",
	  "windows that start before T (T from 1970 to 2554; not before --since)" },
	{ "skew", 0, BT_OPT_DOUBLE, &tcfg.skew, "SECONDS",
	  "search each packet in the windows of its capture time +- SECONDS: the "
	  "capture's clock against this host's, and the capture's own delay (default "
	  "2; with --agents, each agent's trace-skew); with --agents and no --topology, also "
	  "how far apart two agents' windows must be to order them",
	  .dmin = 0.000001, .dmax = 1e9 },
	{ "any-time", 0, BT_OPT_FLAG, &tcfg.any_time, NULL,
	  "search every window for every packet, whatever its time" },
	{ "at", 0, BT_OPT_STRING, &tcfg.at, "T",
	  "with --hex: the packet's time, searched +- the skew (without it, every window)" },
	{ "archive", 'a', BT_OPT_STRING, &tcfg.archive, "DIR",
	  "also query the sealed windows archived in DIR" },
	{ "budget", 0, BT_OPT_U64, &tcfg.budget, "N",
	  "at most N window x packet probes in all, live and archived: the archive "
	  "newest window first, saying where it stopped; the trace ends where the live "
	  "ring's would take more (default: no bound; the API's is at most 67,108,864, "
	  "less by the client's CPU share)", .max = UINT64_MAX },
	{ "mss", 0, BT_OPT_U64, &tcfg.mss, "N",
	  "cut merged TCP and UDP packets (a receiver's capture under GRO) into segments "
	  "of N payload bytes (default: the flow's, from its SYN's MSS or its largest "
	  "unmerged segment; at least 88, TCP's smallest MSS)", .min = BT_SEG_MIN, .max = 65535 },
	{ "agents", 0, BT_OPT_STRING, &tcfg.agents, "[NAME=]ADDR:PORT|URL|/SOCKET,...",
	  "ask these agents (bloomtap run) instead, in parallel, and walk the path back "
	  "(an agent not named here names itself: its /api/v1/status's host)" },
	{ "agents-file", 0, BT_OPT_STRING, &tcfg.agents_file, "FILE",
	  "the agents to ask, one a line as --agents takes them ('#' comments)" },
	{ "agents-from-prometheus", 0, BT_OPT_STRING, &tcfg.prometheus, "URL[?job=NAME]",
	  "the agents to ask: Prometheus's active targets of job NAME (with --user, a must)" },
	{ "agents-from-dns", 0, BT_OPT_STRING, &tcfg.dns, "NAME:PORT",
	  "the agents to ask: every address (A, AAAA) of NAME, e.g. a headless Service" },
	{ "topology", 0, BT_OPT_STRING, &tcfg.topology, "FILE",
	  "with agents: who is whose neighbour ('NAME: NEIGHBOUR ...' lines, NAME ending "
	  "at ': '; without it, the order is inferred: the sender first, the one that "
	  "dropped it last, the others by their windows' times where these prove it, "
	  "{a, b} (by name) where not)" },
	{ "from", 0, BT_OPT_STRING, &tcfg.from, "NAME",
	  "with --topology: the agent nearest the victim (default: where the packet left, "
	  "else the first)" },
	{ "cacert", 0, BT_OPT_STRING, &tcfg.cacert, "FILE",
	  "the CA the agents' (and Prometheus's) certificates are verified with; a bare "
	  "ADDR:PORT is then asked over HTTPS" },
	{ "tls-server-name", 0, BT_OPT_STRING, &tcfg.tls_server_name, "NAME",
	  "check the agents' certificates for NAME, not their addresses (a DaemonSet's "
	  "pods: one certificate, one name)" },
	{ "cert", 0, BT_OPT_STRING, &tcfg.cert, "FILE",
	  "a client certificate for the agents (mTLS; PEM)" },
	{ "key", 0, BT_OPT_STRING, &tcfg.key, "FILE", "its key (PEM)" },
	{ "user", 0, BT_OPT_STRING, &tcfg.user, "NAME",
	  "basic auth as NAME; the password from BLOOMTAP_PASSWORD or --netrc, never argv; "
	  "sent over HTTPS or a unix socket only (a plain http agent is not asked)" },
	{ "netrc", 0, BT_OPT_STRING, &tcfg.netrc, "FILE",
	  "credentials in netrc form ('machine HOST login NAME password PW', or 'default'); "
	  "yours, mode 600; Prometheus's by its host's machine line, over https" },
	{ "timeout", 0, BT_OPT_U64, &tcfg.timeout_ms, "MS",
	  "the whole fan-out's deadline (default 10000)", .min = 1, .max = 3600000 },
	{ "agent-timeout", 0, BT_OPT_U64, &tcfg.agent_timeout_ms, "MS",
	  "each agent's deadline (default 5000); the request carries it as deadline_ms, "
	  "less a quarter (at most 1000) for the way back", .min = 1,
	  .max = 3600000 },
	{ "parallel", 0, BT_OPT_U64, &tcfg.parallel, "N",
	  "agents asked at once (default 64)", .min = 1, .max = 4096 },
	{ 0 }
};

static const struct bt_cmd_spec trace_spec = {
	"trace", "[IFACE] (FILE | --hex BYTES)",
	"For each packet of a capture (or one in hex), every SPIE window, live or\n"
	"archived, whose Bloom filter holds its digest: the window's time range and\n"
	"false-positive rate; or 'not seen'; and the chance that at least one of the\n"
	"windows searched answers falsely. A packet is searched in the windows of its\n"
	"capture time +- --skew (--hex: of --at), and the answer says which range; a\n"
	"window a replay wrote without --capture-time is searched for every packet.\n"
	"With an instance, only its own archive\n"
	"files are searched (without --archive, in the directory its agent archives\n"
	"into); with --archive alone, every instance's. A digest covers\n"
	"the packet's invariant bytes: identical packets (a retransmitted datagram\n"
	"with the same IP ID and payload) are one to SPIE, seen in each window any\n"
	"of them passed in. A merged packet of a receiver's capture (GRO) is traced\n"
	"as the segments the wire carried. Exit status: 0 when every IP packet was seen, 1 when\n"
	"some were not or the trace failed (an instance, a file or the windows that cannot\n"
	"be read, --budget run out), 2 on a usage error (the options, or an input that is\n"
	"not a capture or a packet: stderr says which).",
	trace_opts, 0, 2,
};

/* What a packet sent to the agents keeps: the headers a digest covers
 * (Ethernet, VLAN tags, IPv6's extension headers) and the bytes after */
#define AGENT_SNAP 256
/* An agent takes a request body of up to 1 MiB (user/agent/http.c):
 * about 3,800 packets cut to AGENT_SNAP */
#define AGENT_BODY_MAX (1 << 20)

/* The times of a request to the agents: the capture's carries its own,
 * each packet's; these say how far around them (or --hex's time) */
static const char *time_args(char *buf, size_t len, __u64 at)
{
	int n = 0;

	buf[0] = 0;
	if (tcfg.any_time)
		return "any_time=1";
	if (tcfg.skew > 0)
		n = snprintf(buf, len, "skew=%.9g", tcfg.skew);
	if (at)
		snprintf(buf + n, len - n, "%sat=%" PRIu64 ".%09" PRIu64, n ? "&" : "",
			 (uint64_t)(at / 1000000000), (uint64_t)(at % 1000000000));
	return buf;
}

/* A capture that cannot be read: a file that is not there or not readable
 * is a failure, as for every command; one that is, a bad input */
static int capture_status(const char *file)
{
	return file && strcmp(file, "-") && access(file, R_OK) ? BT_EXIT_FAIL : BT_EXIT_USAGE;
}

/* --agents: the packets go to the agents, cut to their heads, or as hex */
static int trace_agents(const char *file, __u64 at)
{
	char *buf = NULL, msg[512], targs[160];
	uint32_t one = 1, *ip = &one;
	size_t len = 0, nip = 1;
	int ret;

	if (tcfg.hex) {
		buf = strdup(tcfg.hex);
		len = buf ? strlen(buf) : 0;
	} else if (bt_capture_heads(file, AGENT_SNAP, &buf, &len, &ip, &nip, msg, sizeof(msg))) {
		bt_err("trace: %s", msg);
		return capture_status(file);
	}
	if (len > AGENT_BODY_MAX) {
		bt_err("trace: %s: more packets than an agent takes in one request (about %d); "
		       "split the capture (editcap -c 3000)", file, AGENT_BODY_MAX /
		       (AGENT_SNAP + 16));
		len = 0;
	}
	if (!buf || !len) {
		if (!buf || (tcfg.hex && !len))
			bt_err("trace: %s: cannot read it", file ? file : "--hex");
		ret = BT_EXIT_USAGE;
		goto out;
	}
	if (!nip) {
		bt_err("trace: %s: no IP packet that bloomtap records in it", file);
		ret = BT_EXIT_USAGE;
		goto out;
	}
	if (tcfg.from && !tcfg.topology) {
		bt_err("trace: --from is for a walk along --topology FILE");
		ret = BT_EXIT_USAGE;
		goto out;
	}
	ret = bt_trace_agents(&(struct bt_fleet_opts){
		.agents = tcfg.agents, .agents_file = tcfg.agents_file,
		.prometheus = tcfg.prometheus, .dns = tcfg.dns, .topology = tcfg.topology,
		.from = tcfg.from, .since = tcfg.since, .until = tcfg.until,
		.times = time_args(targs, sizeof(targs), at),
		.cacert = tcfg.cacert, .cert = tcfg.cert, .key = tcfg.key, .user = tcfg.user,
		.netrc = tcfg.netrc, .tls_server_name = tcfg.tls_server_name,
		.timeout_s = (tcfg.timeout_ms ? tcfg.timeout_ms : 10000) / 1e3,
		.agent_timeout_s = (tcfg.agent_timeout_ms ? tcfg.agent_timeout_ms : 5000) / 1e3,
		.parallel = tcfg.parallel ? (int)tcfg.parallel : 64, .skew_s = tcfg.skew,
		.sent = ip, .nsent = nip }, buf, len);
out:
	free(buf);
	if (ip != &one)
		free(ip);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE;
	const char *iface = NULL, *file = NULL, *archive;
	struct bt_capture *cap = NULL;
	struct bt_instance inst;
	bool have_inst = false;
	__u64 since = 0, until = 0, at = 0;
	char msg[600];

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	if (tcfg.hex ? n > 1 : n < 1) {
		bt_err("trace: give a capture FILE or --hex BYTES (see bloomtap trace --help)");
		return BT_EXIT_USAGE;
	}
	if (tcfg.hex)
		iface = n ? argv[1] : NULL;
	else {
		file = argv[n];
		iface = n == 2 ? argv[1] : NULL;
	}
	/* "trace IFACE" alone: the capture is what is missing */
	if (n == 1 && !tcfg.hex && access(file, F_OK) &&
	    (if_nametoindex(file) || bt_instance_exists(file))) {
		bt_err("trace: '%s' is an interface: give a capture FILE after it, or --hex BYTES "
		       "(see bloomtap trace --help)", file);
		return BT_EXIT_USAGE;
	}
	if (bt_parse_time_range(tcfg.since, tcfg.until, "--", &since, &until, msg, sizeof(msg))) {
		bt_err("trace: %s", msg);
		return BT_EXIT_USAGE;
	}
	if (tcfg.at && (!tcfg.hex || tcfg.any_time)) {
		bt_err(!tcfg.hex ? "trace: --at is for --hex (a capture's packets carry their "
		       "times)" : "trace: --at or --any-time, not both");
		return BT_EXIT_USAGE;
	}
	if (bt_parse_time_named("--at", tcfg.at, &at, msg, sizeof(msg))) {
		bt_err("trace: %s", msg);
		return BT_EXIT_USAGE;
	}
	bool fleet = tcfg.agents || tcfg.agents_file || tcfg.prometheus || tcfg.dns;

	/* every window is searched: no time for a skew to widen, unless it
	 * orders the agents (no --topology) */
	if (tcfg.any_time && tcfg.skew > 0 && (!fleet || tcfg.topology)) {
		bt_err("trace: --skew or --any-time, not both%s",
		       fleet ? " (with --topology, --skew orders no agents)" : "");
		return BT_EXIT_USAGE;
	}

	if (fleet && tcfg.mss) {
		/* the agents cut merged packets at the flows' own sizes */
		bt_err("trace: --mss is for a local trace, not with --agents");
		return BT_EXIT_USAGE;
	}
	if (fleet)
		return trace_agents(file, at);
	if (file && bt_capture_open(file, &cap, msg, sizeof(msg))) {
		bt_err("trace: %s", msg);
		return capture_status(file);
	}
	/* the live windows: the named instance, or the only one there is;
	 * with an archive and no instance at all, the archive alone */
	if (iface || tcfg.instance || !tcfg.archive) {
		if ((ret = bt_instance_open_arg(iface, tcfg.instance, &inst)))
			goto out;
		have_inst = true;
	}
	/* the archive its agent records, when none is given: the windows that
	 * left the live ring are there */
	archive = tcfg.archive;
	if (!archive && have_inst && inst.meta.archive[0]) {
		if (!access(inst.meta.archive, R_OK | X_OK))
			archive = inst.meta.archive;
		else
			bt_warn("trace: the agent's archive %s: %s; not searched (the live ring "
				"alone)", inst.meta.archive, strerror(errno));
	}
	ret = bt_trace_print(&(struct bt_trace_query){ .inst = have_inst ? &inst : NULL,
						       .archive = archive, .since = since,
						       .until = until, .budget = tcfg.budget,
						       .mss = (uint32_t)tcfg.mss,
						       .skew_ns = (__u64)llround(tcfg.skew * 1e9),
						       .at_ns = at, .any_time = tcfg.any_time },
			     cap, tcfg.hex, file);
out:
	bt_capture_close(cap);
	if (have_inst)
		bt_instance_close(&inst);
	return ret;
}
