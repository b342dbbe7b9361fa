// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* trace: did these packets pass here, and when? Every live or archived
 * SPIE window whose filter holds a packet's digest, with its time range and
 * its false-positive rate from its fill. Exit status 0 when every packet
 * was seen, 1 when some were not, 2 on error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "archive.h"
#include "capture.h"
#include "common.h"
#include "commands.h"
#include "digest.h"
#include "options.h"
#include "spie.h"
#include "util.h"

#define MAX_PACKETS 100000
#define MAX_HITS 64

struct hit {
	__u64 start_ns, end_ns;
	double fpr;
	uint32_t seq;
	bool archived;
};

/* A packet to trace. Most are seen in a window or two, so the hits grow
 * on demand: a capture of many packets costs ~100 bytes each. */
struct tpkt {
	struct bt_spie_input in;
	bool ip;
	__u64 digest;		/* under the instance's key, for output */
	struct hit *hits;
	int nhits, cap;
};

struct trace_ctx {
	struct tpkt *p;
	size_t n;
	int err;		/* -ENOMEM: a hit could not be kept */
	const char *instance;	/* live instance name, NULL if none */
	const struct bt_spie_maps *live;
};

static void tpkts_free(struct tpkt *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		free(p[i].hits);
	free(p);
}

/* Epoch seconds, an ISO 8601 UTC time, or -N[smhd] before now. */
int bt_parse_time(const char *s, __u64 *ns)
{
	struct tm tm = { 0 };
	char *end;
	double v;

	if (s[0] == '-') {
		v = strtod(s + 1, &end);
		double mult = *end == 's' || !*end ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 :
			      *end == 'd' ? 86400 : -1;

		if (end == s + 1 || mult < 0 || (*end && end[1]) || v < 0)
			return -EINVAL;
		*ns = (__u64)((time(NULL) - v * mult) * 1e9);
		return 0;
	}
	v = strtod(s, &end);
	if (end != s && !*end && v >= 0) {
		*ns = (__u64)(v * 1e9);
		return 0;
	}
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, "Z")))
		return -EINVAL;
	*ns = (__u64)timegm(&tm) * 1000000000ULL;
	return 0;
}

static void add_hit(struct trace_ctx *t, struct tpkt *p, __u64 start, __u64 end, double fpr,
		    uint32_t seq, bool archived)
{
	for (int i = 0; i < p->nhits; i++)
		if (p->hits[i].start_ns == start && p->hits[i].seq == seq)
			return;	/* a sealed window both in the ring and archived */
	if (p->nhits == MAX_HITS)
		return;
	if (p->nhits == p->cap) {
		int cap = p->cap ? 2 * p->cap : 2;
		struct hit *h = realloc(p->hits, cap * sizeof(*h));

		if (!h) {
			t->err = -ENOMEM;	/* never a silent "not seen" */
			return;
		}
		p->hits = h;
		p->cap = cap;
	}
	p->hits[p->nhits++] = (struct hit){ start, end, fpr, seq, archived };
}

static void query_archived(const struct bt_archived *a, void *arg)
{
	struct trace_ctx *t = arg;
	__u64 set;
	double fpr = -1;

	/* a window of this instance still in the ring was found live already;
	 * archived windows of other instances (another host's, a former one)
	 * are queried with their own key */
	for (size_t i = 0; i < t->n; i++) {
		struct tpkt *p = &t->p[i];

		if (!p->ip || !bt_bloom_has(a->filter, a->bpw, a->key.k, bt_spie_digest(&a->key, &p->in)))
			continue;
		if (fpr < 0)
			bt_bloom_fill(a->filter, a->bpw, a->key.k, &set, &fpr);
		add_hit(t, p, a->hdr->start_ns, a->hdr->end_ns, fpr, a->hdr->seq, true);
	}
}

static void query_live(struct trace_ctx *t, const struct bt_spie_maps *s, __u64 since, __u64 until)
{
	for (uint32_t w = 0; w < s->meta->windows; w++) {
		const struct bt_window *win = &s->win[w];
		const struct bt_bloom_block *f = &s->blocks[(uint64_t)w * s->bpw];
		double fpr = -1;
		__u64 set;

		if (win->state != BT_WIN_CURRENT && win->state != BT_WIN_SEALED)
			continue;
		if ((since && win->end_ns && win->end_ns < since) || (until && win->start_ns > until))
			continue;
		for (size_t i = 0; i < t->n; i++) {
			struct tpkt *p = &t->p[i];

			if (!p->ip || !bt_bloom_has(f, s->bpw, s->meta->k, p->digest))
				continue;
			if (fpr < 0)
				bt_bloom_fill(f, s->bpw, s->meta->k, &set, &fpr);
			add_hit(t, p, win->start_ns, win->end_ns, fpr, win->seq, false);
		}
	}
}


static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int load_hex(const char *hex, struct tpkt **out, size_t *n, char *err, size_t errlen)
{
	static uint8_t buf[65536];
	struct tpkt *p;
	int len = bt_parse_hex(hex, buf, sizeof(buf));

	if (len < 0) {
		snprintf(err, errlen, "not hex bytes (like '45 00 00 54 ...')");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* An Ethernet frame first: a MAC address may well start with a 4 or a
	 * 6, while a bare IP packet would need its source address to read as
	 * an ethertype followed by a valid IP header to pass for a frame. */
	p->ip = !bt_spie_input_frame(buf, len, &p->in) || !bt_spie_input_ip(buf, len, &p->in);
	*out = p;
	*n = 1;
	return 0;
}

static int load_capture(struct bt_capture *cap, const char *what, struct tpkt **out,
			size_t *n, char *err, size_t errlen)
{
	struct tpkt *p = NULL;
	struct bt_packet pk;
	size_t cnt = 0, room = 0;
	int rc;

	while (cnt < MAX_PACKETS && (rc = bt_capture_next(cap, &pk)) == 1) {
		if (cnt == room) {
			size_t more = room ? 2 * room : 64;
			struct tpkt *q = realloc(p, more * sizeof(*p));

			if (!q) {
				snprintf(err, errlen, "%s: out of memory after %zu packets", what, cnt);
				free(p);
				return -ENOMEM;
			}
			p = q;
			memset(p + room, 0, (more - room) * sizeof(*p));
			room = more;
		}
		p[cnt].ip = !pk.skip && !bt_spie_input_frame(pk.data, pk.len, &p[cnt].in);
		cnt++;
	}
	if (cnt < MAX_PACKETS && rc < 0) {
		snprintf(err, errlen, "%s: capture breaks off after %zu packets (%s)", what, cnt,
			 bt_capture_error(cap));
		free(p);
		return -EINVAL;
	}
	if (cnt == MAX_PACKETS)
		bt_warn("%s: only the first %d packets are traced", what, MAX_PACKETS);
	*out = p;
	*n = cnt;
	return 0;
}

static int load_packets(const char *file, const char *hex, struct tpkt **out, size_t *n)
{
	struct bt_capture *cap;
	char msg[600];
	int err;

	if (hex)
		err = load_hex(hex, out, n, msg, sizeof(msg));
	else if (!(err = bt_capture_open(file, &cap, msg, sizeof(msg)))) {
		err = load_capture(cap, file, out, n, msg, sizeof(msg));
		bt_capture_close(cap);
	}
	if (err)
		bt_err("trace: %s", msg);
	return err;
}

/* One packet's result, as trace -j prints it. */
static struct json_object *packet_json(size_t i, struct tpkt *p, bool have_inst)
{
	struct json_object *o = json_object_new_object(), *ws = json_object_new_array();
	char dg[24], a[40], b[40];

	snprintf(dg, sizeof(dg), "%016" PRIx64, (uint64_t)p->digest);
	json_object_object_add(o, "packet", json_object_new_int64(i + 1));
	json_object_object_add(o, "digest", have_inst ? json_object_new_string(dg) : NULL);
	json_object_object_add(o, "seen", json_object_new_boolean(p->nhits > 0));
	for (int h = 0; h < p->nhits; h++) {
		struct json_object *w = json_object_new_object();

		bt_fmt_ns(p->hits[h].start_ns, a, sizeof(a), "now");
		bt_fmt_ns(p->hits[h].end_ns, b, sizeof(b), "now");
		json_object_object_add(w, "start", json_object_new_string(a));
		json_object_object_add(w, "end", p->hits[h].end_ns ? json_object_new_string(b) : NULL);
		json_object_object_add(w, "fpr", json_object_new_double(p->hits[h].fpr));
		json_object_object_add(w, "window", json_object_new_int64(p->hits[h].seq));
		json_object_object_add(w, "source", json_object_new_string(
				       p->hits[h].archived ? "archive" : "live"));
		json_object_array_add(ws, w);
	}
	json_object_object_add(o, "windows", ws);
	return o;
}

/* Queries the live windows of inst (NULL: none) and the archive (NULL:
 * none) for every packet of t. */
static int trace_query(struct trace_ctx *t, const struct bt_instance *inst,
		       const char *archive, __u64 since, __u64 until)
{
	struct bt_spie_maps sm;

	if (inst) {
		if (bt_spie_map(inst, &sm))
			return -ENOMEM;
		for (size_t i = 0; i < t->n; i++)
			if (t->p[i].ip)
				t->p[i].digest = bt_spie_digest(&inst->meta, &t->p[i].in);
		query_live(t, &sm, since, until);
		bt_spie_unmap(&sm);
	}
	if (archive && bt_archive_each(archive, since, until, query_archived, t) < 0)
		return -EIO;
	if (t->err)
		return t->err;
	for (size_t i = 0; i < t->n; i++)
		if (t->p[i].nhits > 1)	/* hits is NULL until the first */
			qsort(t->p[i].hits, t->p[i].nhits, sizeof(t->p[i].hits[0]), cmp_hit);
	return 0;
}

struct json_object *bt_trace_buffer(const struct bt_instance *inst, const char *archive,
				    const void *buf, size_t len, char *err, size_t errlen)
{
	struct trace_ctx t = { 0 };
	struct json_object *arr;
	int rc;

	if (bt_is_capture(buf, len)) {
		struct bt_capture *cap;

		if ((rc = bt_capture_open_mem(buf, len, &cap, err, errlen)))
			return NULL;
		rc = load_capture(cap, "request body", &t.p, &t.n, err, errlen);
		bt_capture_close(cap);
	} else {
		char *hex = strndup(buf, len);

		rc = hex ? load_hex(hex, &t.p, &t.n, err, errlen) : -ENOMEM;
		free(hex);
	}
	if (rc)
		return NULL;
	if (trace_query(&t, inst, archive, 0, 0)) {
		snprintf(err, errlen, "querying the windows failed");
		tpkts_free(t.p, t.n);
		return NULL;
	}
	arr = json_object_new_array();
	for (size_t i = 0; i < t.n; i++)
		if (t.p[i].ip)
			json_object_array_add(arr, packet_json(i, &t.p[i], inst != NULL));
	tpkts_free(t.p, t.n);
	return arr;
}

static struct trace_cfg {
	const char *instance, *hex, *since, *until, *archive, *agents, *topology, *from;
} tcfg;

static const struct bt_opt trace_opts[] = {
	BT_INSTANCE_OPT(tcfg.instance),
	{ "hex", 'x', BT_OPT_STRING, &tcfg.hex, "BYTES",
	  "one packet in hex: an IP packet, or an Ethernet frame" },
	{ "since", 0, BT_OPT_STRING, &tcfg.since, "T",
	  "windows that end after T (epoch seconds, 2026-11-25T10:00:00Z, -10m)" },
	{ "until", 0, BT_OPT_STRING, &tcfg.until, "T", "windows that start before T" },
	{ "archive", 'a', BT_OPT_STRING, &tcfg.archive, "DIR",
	  "also query the sealed windows archived in DIR" },
	{ "agents", 0, BT_OPT_STRING, &tcfg.agents, "NAME=ADDR:PORT,...",
	  "ask these agents (bloomtap run) instead, and walk the path back" },
	{ "topology", 0, BT_OPT_STRING, &tcfg.topology, "FILE",
	  "with --agents: who is whose neighbour ('NAME: NEIGHBOUR ...' lines)" },
	{ "from", 0, BT_OPT_STRING, &tcfg.from, "NAME",
	  "with --agents: the agent nearest the victim (default: the first)" },
	{ 0 }
};

static const struct bt_cmd_spec trace_spec = {
	"trace", "[IFACE] (FILE | --hex BYTES)",
	"For each packet of a capture (or one in hex), every SPIE window, live or\n"
	"archived, whose Bloom filter holds its digest: the window's time range and\n"
	"its false-positive rate from its fill; or 'not seen'. Exit status: 0 when\n"
	"every IP packet was seen, 1 when some were not, 2 on error.",
	trace_opts, 0, 2,
};

int cmd_trace(int argc, char **argv)
{
	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE;
	const char *iface = NULL, *file = NULL;
	struct trace_ctx t = { 0 };
	struct bt_instance inst;
	bool have_inst = false;
	__u64 since = 0, until = 0;
	size_t unseen = 0, ip = 0;

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
	if ((tcfg.since && bt_parse_time(tcfg.since, &since)) ||
	    (tcfg.until && bt_parse_time(tcfg.until, &until))) {
		bt_err("trace: --since/--until take epoch seconds, YYYY-MM-DDTHH:MM:SS[Z] "
		       "or -N[smhd]");
		return BT_EXIT_USAGE;
	}
	if (tcfg.agents) {
		/* the packets go to the agents as they are: a capture, or hex */
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		if (!tcfg.topology) {
			bt_err("trace: --agents needs --topology FILE");
			return BT_EXIT_USAGE;
		}
		if (tcfg.hex) {
			buf = strdup(tcfg.hex);
			len = strlen(buf);
		} else if ((f = fopen(file, "rb"))) {
			buf = malloc(1 << 20);
			len = buf ? fread(buf, 1, 1 << 20, f) : 0;
			fclose(f);
		}
		if (!buf || !len) {
			bt_err("trace: %s: cannot read it", file ? file : "--hex");
			free(buf);
			return BT_EXIT_USAGE;
		}
		ret = bt_trace_agents(tcfg.agents, tcfg.topology, tcfg.from, buf, len);
		free(buf);
		return ret;
	}
	if (load_packets(file, tcfg.hex, &t.p, &t.n))
		return BT_EXIT_USAGE;

	/* the live windows: the named instance, or the only one there is;
	 * with an archive and no instance at all, the archive alone */
	if (iface || tcfg.instance || !tcfg.archive) {
		if (bt_instance_open_arg(iface, tcfg.instance, &inst))
			goto out;
		have_inst = true;
	}
	if (trace_query(&t, have_inst ? &inst : NULL, tcfg.archive, since, until)) {
		bt_err("trace: querying the windows failed");
		goto out;
	}

	struct json_object *arr = bt_g.json ? json_object_new_array() : NULL;

	for (size_t i = 0; i < t.n; i++) {
		struct tpkt *p = &t.p[i];
		char a[40], b[40];

		if (!p->ip) {
			if (!arr)
				printf("packet %zu: not an IP packet bloomtap records; skipped\n", i + 1);
			continue;
		}
		ip++;
		unseen += !p->nhits;
		if (arr) {
			json_object_array_add(arr, packet_json(i, p, have_inst));
			continue;
		}
		if (!p->nhits) {
			printf("packet %zu%s%016" PRIx64 ": not seen\n", i + 1,
			       have_inst ? " digest " : "", (uint64_t)p->digest);
			continue;
		}
		printf("packet %zu%s%016" PRIx64 ": seen in %d window%s\n", i + 1,
		       have_inst ? " digest " : "", (uint64_t)p->digest, p->nhits,
		       p->nhits > 1 ? "s" : "");
		for (int h = 0; h < p->nhits; h++) {
			bt_fmt_ns(p->hits[h].start_ns, a, sizeof(a), "now");
			bt_fmt_ns(p->hits[h].end_ns, b, sizeof(b), "now");
			printf("  window %u  %s .. %s  false-positive rate %.2g  (%s)\n",
			       p->hits[h].seq, a, b, p->hits[h].fpr,
			       p->hits[h].archived ? "archive" : "live");
		}
	}
	if (arr)
		bt_json_print(arr);
	else
		printf("%zu IP packets: %zu seen, %zu not seen\n", ip, ip - unseen, unseen);
	ret = unseen ? BT_EXIT_FAIL : BT_EXIT_OK;
	if (!ip) {
		bt_err("trace: no IP packet that bloomtap records in the input");
		ret = BT_EXIT_USAGE;
	}
out:
	if (have_inst)
		bt_instance_close(&inst);
	tpkts_free(t.p, t.n);
	return ret;
}
