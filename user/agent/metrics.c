// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* /metrics in the Prometheus text exposition format: one HELP and TYPE
 * line per family, counters end in _total, byte counts in _bytes, one label
 * set per interface, and a direction (ingress: received, egress: sent) on
 * the families the egress program counts too, egress only where the
 * instance records it. Heavy flows are the top K of the last complete
 * interval, so that label cardinality stays bounded. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "instance/recorder.h"
#include "agent_state.h"
#include "instance/watch.h"
#include "metrics.h"
#include "core/archive.h"
#include "base/common.h"
#include "instance/drops.h"
#include "instance/wltable.h"
#include "core/workloads.h"
#include "report/flow.h"
#include <bpf/bpf.h>

struct buf {
	char *p;
	size_t len, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		b->cap = b->cap * 2 + n + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct ctr_metric {
	const char *name, *help;
	int ctr;
	const char *label;	/* extra label=value, or NULL */
};

static const struct ctr_metric counters[] = {
	{ "bloomtap_packets_total", "Packets received (the XDP program) or sent (tc egress; a GSO skb counts its segments).", BT_CTR_PACKETS },
	{ "bloomtap_bytes_total", "Bytes of those packets' frames.", BT_CTR_BYTES },
	{ "bloomtap_l3_packets_total", "Packets by network protocol.", BT_CTR_L3_IPV4, "proto=\"ipv4\"" },
	{ NULL, NULL, BT_CTR_L3_IPV6, "proto=\"ipv6\"" },
	{ NULL, NULL, BT_CTR_L3_OTHER, "proto=\"other\"" },
	{ "bloomtap_l4_packets_total", "IP packets by transport protocol.", BT_CTR_L4_TCP, "proto=\"tcp\"" },
	{ NULL, NULL, BT_CTR_L4_UDP, "proto=\"udp\"" },
	{ NULL, NULL, BT_CTR_L4_SCTP, "proto=\"sctp\"" },
	{ NULL, NULL, BT_CTR_L4_ICMP, "proto=\"icmp\"" },
	{ NULL, NULL, BT_CTR_L4_ICMPV6, "proto=\"icmpv6\"" },
	{ NULL, NULL, BT_CTR_L4_OTHER, "proto=\"other\"" },
	{ "bloomtap_fragments_total", "IPv4 and IPv6 fragments.", BT_CTR_FRAGMENTS },
	{ "bloomtap_vlan_packets_total", "Frames with at least one VLAN tag.", BT_CTR_VLAN },
	{ "bloomtap_truncated_packets_total", "Packets cut short inside a header.", BT_CTR_TRUNCATED },
	{ "bloomtap_malformed_packets_total", "Packets with an impossible header field.", BT_CTR_MALFORMED },
	{ "bloomtap_too_deep_packets_total", "Packets with more VLAN tags or IPv6 extension headers than parsed.", BT_CTR_TOO_DEEP },
	{ "bloomtap_heavy_nominations_total", "Flows entered into the flow memory.", BT_CTR_NOMINATED },
	{ "bloomtap_flow_memory_full_total", "Nominations lost to a full flow memory.", BT_CTR_FM_FULL },
	{ "bloomtap_spie_digests_total", "SPIE digests recorded.", BT_CTR_SPIE_INSERTED },
	{ "bloomtap_spie_digests_present_total", "Digests already in their window (duplicates, loops, false positives), one digest in 64 checked and a hit counted 64 times.", BT_CTR_SPIE_PRESENT },
	{ "bloomtap_spie_no_ready_window_total", "Batches of digests that found no clean SPIE window ready after a full one: the agent is behind, the current window goes past its load.", BT_CTR_SPIE_NO_READY },
};

static void section_info(struct buf *b, const struct agent *a)
{
	family(b, "bloomtap_build_info", "gauge", "bloomtap's version; always 1.");
	bprintf(b, "bloomtap_build_info{version=\"%s\"} 1\n", BT_VERSION);
	family(b, "bloomtap_config_interval_seconds", "gauge",
	       "The heavy-flow interval the agent runs with.");
	bprintf(b, "bloomtap_config_interval_seconds %g\n", a->cfg.interval_s);
}

/* The directions interface i records: received, and sent if made to */
static int dirs(const struct agent *a, int i)
{
	return a->ifs[i].inst.meta.flags & BT_META_EGRESS_MAPS ? BT_DIRS : 1;
}

/* The datapath's counters, summed over CPUs, a family at a time. */
static void section_counters(struct buf *b, const struct agent *a)
{
	__u64 c[BT_AGENT_MAX_IFACES][BT_DIRS][BT_CTR_MAX];

	memset(c, 0, sizeof(c));
	for (int i = 0; i < a->n; i++)
		for (int d = 0; d < dirs(a, i); d++)
			bt_instance_counters_dir(&a->ifs[i].inst, d, c[i][d]);
	for (size_t m = 0; m < sizeof(counters) / sizeof(counters[0]); m++) {
		const struct ctr_metric *cm = &counters[m];
		const char *name = cm->name;

		for (size_t k = m; !name; k--)
			name = counters[k - 1].name;
		if (cm->name)
			family(b, cm->name, "counter", cm->help);
		for (int i = 0; i < a->n; i++)
			for (int d = 0; d < dirs(a, i); d++)
				bprintf(b, "%s{interface=\"%s\",direction=\"%s\"%s%s} %llu\n", name,
					a->ifs[i].name, bt_direction_names[d], cm->label ? "," : "",
					cm->label ? cm->label : "", (unsigned long long)c[i][d][cm->ctr]);
		/* a window the drop program's digests filled: "dropped" */
		for (int i = 0; cm->ctr == BT_CTR_SPIE_NO_READY && i < a->n; i++) {
			__u64 dc[BT_CTR_MAX];

			if (!bt_instance_counters_dir(&a->ifs[i].inst, BT_DIRS, dc))
				bprintf(b, "%s{interface=\"%s\",direction=\"dropped\"} %llu\n", name,
					a->ifs[i].name, (unsigned long long)dc[cm->ctr]);
		}
	}
}

/* Interface i's heavy-flow stage of direction d */
static const struct bt_heavy_maps *stage(const struct agent *a, int i, int d)
{
	return d == BT_DIR_EGRESS ? a->ifs[i].hm.egress : &a->ifs[i].hm;
}

/* Heavy flows of the last complete interval, top K a direction, and the
 * intervals' volumes. */
static void section_heavy(struct buf *b, const struct agent *a)
{
	static const char *const what[2] = { "bytes", "packets" };
	struct bt_heavy_report r[BT_AGENT_MAX_IFACES][BT_DIRS];
	bool ok[BT_AGENT_MAX_IFACES][BT_DIRS] = { 0 };

	for (int i = 0; i < a->n; i++)
		for (int d = 0; d < dirs(a, i); d++)
			ok[i][d] = stage(a, i, d) &&
				   !bt_heavy_collect(stage(a, i, d), !(a->ifs[i].hm.ctl->interval & 1),
						     NULL, false, &r[i][d]);
	for (int k = 0; k < 2; k++) {
		bprintf(b, "# HELP bloomtap_heavy_flow_%s Estimated %s of the top heavy flows of "
			"the last complete interval.\n# TYPE bloomtap_heavy_flow_%s gauge\n", what[k],
			what[k], what[k]);
		for (int i = 0; i < a->n; i++)
			for (int d = 0; d < BT_DIRS; d++)
				for (size_t j = 0; ok[i][d] && j < r[i][d].n && j < a->cfg.top; j++) {
					const struct bt_heavy_flow *h = &r[i][d].flows[j];
					char s[BT_ADDR_STRLEN], t[BT_ADDR_STRLEN];

					bprintf(b, "bloomtap_heavy_flow_%s{interface=\"%s\",direction=\"%s\","
						"rank=\"%zu\",src=\"%s\",dst=\"%s\",sport=\"%u\",dport=\"%u\","
						"proto=\"%u\"} %llu\n", what[k], a->ifs[i].name,
						bt_direction_names[d], j + 1,
						bt_addr_str(h->key.src, s, sizeof(s)),
						bt_addr_str(h->key.dst, t, sizeof(t)), ntohs(h->key.sport),
						ntohs(h->key.dport), h->key.proto,
						(unsigned long long)(k ? h->packets : h->bytes));
				}
	}
	family(b, "bloomtap_interval_bytes", "gauge", "Bytes of the heavy-flow intervals.");
	for (int i = 0; i < a->n; i++)
		for (int d = 0; d < BT_DIRS; d++) {
			const struct bt_heavy_maps *m = stage(a, i, d);

			if (!ok[i][d])
				continue;
			bprintf(b, "bloomtap_interval_bytes{interface=\"%s\",direction=\"%s\","
				"interval=\"last\"} %llu\n", a->ifs[i].name, bt_direction_names[d],
				(unsigned long long)r[i][d].total_bytes);
			bprintf(b, "bloomtap_interval_bytes{interface=\"%s\",direction=\"%s\","
				"interval=\"current\"} %llu\n", a->ifs[i].name, bt_direction_names[d],
				(unsigned long long)bt_heavy_interval_bytes(m, m->ctl->interval & 1));
			bt_heavy_report_free(&r[i][d]);
		}
}

/* One family with a value for each interface. */
static void per_iface(struct buf *b, const struct agent *a, const char *name, const char *type,
		      const char *help, double (*value)(const struct agent_iface *f))
{
	family(b, name, type, help);
	for (int i = 0; i < a->n; i++)
		bprintf(b, "%s{interface=\"%s\"} %.17g\n", name, a->ifs[i].name, value(&a->ifs[i]));
}

static double current_fill(const struct agent_iface *f)
{
	__u64 set;
	double fpr;

	bt_bloom_fill(bt_window_filter(&f->sm, bt_spie_current(&f->sm)), f->sm.bpw,
		      f->sm.meta->k, &set, &fpr);
	return (double)set / f->sm.meta->window_bits;
}

static double current_fpr(const struct agent_iface *f)
{
	return bt_window_fpr(&f->sm, bt_spie_current(&f->sm));
}

static double sealed(const struct agent_iface *f) { return f->keeper.sealed; }
static double overloaded(const struct agent_iface *f) { return f->keeper.overloaded; }
static double archived(const struct agent_iface *f) { return f->keeper.archived; }
static double archive_errors(const struct agent_iface *f) { return f->keeper.archive_errors; }
static double given_up(const struct agent_iface *f) { return f->keeper.dropped; }
static double reattached(const struct agent_iface *f) { return f->reattached; }
static double attached(const struct agent_iface *f) { return !f->detached; }

/* The SPIE ring: its current window, and what the keeper did. */
static void section_spie(struct buf *b, const struct agent *a)
{
	per_iface(b, a, "bloomtap_spie_window_fill_ratio", "gauge",
		  "Share of the current SPIE window's bits that are set.", current_fill);
	per_iface(b, a, "bloomtap_spie_window_false_positive_ratio", "gauge",
		  "False-positive rate of the current SPIE window, from its fill.", current_fpr);
	per_iface(b, a, "bloomtap_spie_windows_sealed_total", "counter",
		  "SPIE windows sealed by this agent.", sealed);
	per_iface(b, a, "bloomtap_spie_windows_overloaded_total", "counter",
		  "Sealed SPIE windows that went past their design load (no clean window was "
		  "ready: the agent was behind); their false-positive rate says what it cost.",
		  overloaded);
	per_iface(b, a, "bloomtap_spie_windows_archived_total", "counter",
		  "Sealed SPIE windows written to the archive.", archived);
	per_iface(b, a, "bloomtap_archive_errors_total", "counter",
		  "Failed writes of sealed windows to the archive (disk full...).", archive_errors);
	per_iface(b, a, "bloomtap_spie_windows_unarchived_total", "counter",
		  "Sealed windows cleared before they could be archived (the archive kept "
		  "failing and the ring had no clean window left).", given_up);
	per_iface(b, a, "bloomtap_reattached_total", "counter",
		  "Times the interface was deleted and made again, and attached again.", reattached);
	per_iface(b, a, "bloomtap_attached", "gauge",
		  "1 while the agent's instance is attached; 0 once it was detached under the "
		  "agent (detach --force).", attached);
}

static void section_archive_http(struct buf *b, const struct agent *a)
{
	/* counted by the agent's loop every second: a scrape reads no directory */
	family(b, "bloomtap_archive_bytes", "gauge", "Bytes of sealed windows in the archive.");
	bprintf(b, "bloomtap_archive_bytes %llu\n",
		(unsigned long long)__atomic_load_n(&a->archive_bytes, __ATOMIC_RELAXED));
	family(b, "bloomtap_archive_files", "gauge", "Files of sealed windows in the archive.");
	bprintf(b, "bloomtap_archive_files %llu\n",
		(unsigned long long)__atomic_load_n(&a->archive_files, __ATOMIC_RELAXED));
	family(b, "bloomtap_http_requests_total", "counter", "HTTP requests served.");
	bprintf(b, "bloomtap_http_requests_total %llu\n", (unsigned long long)a->requests);
	family(b, "bloomtap_http_rejected_total", "counter",
	       "HTTP requests refused (bad, too large, too many).");
	bprintf(b, "bloomtap_http_rejected_total %llu\n", (unsigned long long)a->rejected);
}

/* Watch lists: per interface, class, side (the class's address as source
 * or destination) and direction; as many series as classes have names (255
 * at most), none without a list. */
static void section_watch(struct buf *b, const struct agent *a)
{
	static const char *const side[2] = { "src", "dst" };
	struct bt_watch_class (*names)[BT_WATCH_CLASSES] = calloc(a->n + 1, sizeof(*names));
	struct bt_watch_count (*n)[BT_DIRS][BT_WATCH_CLASSES] = calloc(a->n + 1, sizeof(*n));
	bool ok[BT_AGENT_MAX_IFACES];

	for (int i = 0; i < a->n && names && n; i++) {
		ok[i] = !bt_watch_classes(&a->ifs[i].inst, names[i]);
		for (int d = 0; d < dirs(a, i); d++)
			ok[i] = ok[i] && !bt_watch_counts(&a->ifs[i].inst, d, n[i][d]);
	}
	for (int k = 0; k < 2; k++) {
		family(b, k ? "bloomtap_class_bytes_total" : "bloomtap_class_packets_total",
		       "counter", k ? "Bytes of the frames from (side src) or to (side dst) a "
				      "watch-list class, received or sent."
				    : "Packets from (side src) or to (side dst) a watch-list class, "
				      "received or sent.");
		for (int i = 0; i < a->n && names && n; i++)
			for (__u32 id = 1; ok[i] && id < BT_WATCH_CLASSES; id++)
				for (int d = 0; names[i][id].name[0] && d < dirs(a, i); d++)
					for (int e = 0; e < 2; e++)
						bprintf(b, "bloomtap_class_%s_total{interface=\"%s\","
							"class=\"%s\",side=\"%s\",direction=\"%s\"} %llu\n",
							k ? "bytes" : "packets", a->ifs[i].name,
							names[i][id].name, side[e], bt_direction_names[d],
							(unsigned long long)(k ? n[i][d][id].bytes[e]
									       : n[i][d][id].packets[e]));
	}
	free(names);
	free(n);
}

/* Workloads (docs/operating.md "Metrics"): per interface, stage (a
 * direction's traffic, or the instance's drops), workload generation and
 * side, the packets and bytes wl_counts holds, for the generations live in
 * the agent's table. At most metrics_workloads of them a series of their
 * own, per interface and stage: a generation
 * takes a place when first seen with traffic and one is free, and keeps it
 * while it lives (the places' holders change only as generations retire,
 * so that a series is one generation's counter from its first packet);
 * the others, and those past a lowered cap, are counted under one
 * overflow="true" series, as the sum of what they counted since, so that it
 * only grows. The state of a scrape, kept for the next one (scrapes hold
 * the agent's lock; 48 bytes an id and stage, an interface's made at
 * its first scrape): */
enum { WLS_NONE, WLS_OWN, WLS_OVERFLOW };
struct wl_seen {
	__u64 gen;
	struct bt_watch_count last;	/* counted when last scraped */
	__u8 state;
};
static struct wl_series {
	char name[IFNAMSIZ];		/* whose: interface i's */
	struct wl_seen (*id)[BT_WL_IDS];	/* per stage: directions, drops */
	struct bt_watch_count overflow[BT_WL_STAGES];
	__u64 left_out[BT_WL_STAGES];	/* generations counted under overflow */
} wls[BT_AGENT_MAX_IFACES];

/* s escaped as a label value: the name as heavy's text prints it (bytes
 * outside printable ASCII, spaces and backslashes as \xHH), then the text
 * format's escapes (a backslash doubled, a quote as \"). */
static const char *label_value(const char *s, size_t n, char *buf, size_t len)
{
	char part[BT_WL_NAME_LEN + 1], e[4 * BT_WL_NAME_LEN + 1];
	size_t o = 0;

	snprintf(part, sizeof(part), "%.*s", (int)n, s);
	bt_wl_escape(part, e, sizeof(e));
	for (const char *p = e; *p && o + 3 < len; p++) {
		if (*p == '\\' || *p == '"')
			buf[o++] = '\\';
		buf[o++] = *p;
	}
	buf[o] = 0;
	return buf;
}

/* The labels of a workload: workload (the whole name), and namespace, pod
 * and container where its form has them (a name cut short, or of a form
 * not known, has its workload label alone, unless two slashes say
 * namespace/pod/container: no part of a name holds one). */
static void wl_labels(struct buf *b, const char *name, int form)
{
	static const char *const parts[][3] = {
		[BT_WLF_NS_POD_CTR] = { "namespace", "pod", "container" },
		[BT_WLF_NS_POD] = { "namespace", "pod" },
		[BT_WLF_POD_CTR] = { "pod", "container" },
		[BT_WLF_POD] = { "pod" },
		[BT_WLF_CTR] = { "container" },
	};
	const char *cut[4] = { name };
	char v[8 * BT_WL_NAME_LEN + 1];
	int n = 1, want = 0;

	for (const char *p = strchr(name, '/'); p && n < 3; p = strchr(p + 1, '/'))
		cut[n++] = p + 1;
	if (n == 3 && strchr(cut[2], '/'))
		n = 4;
	cut[n < 4 ? n : 3] = name + strlen(name) + 1;
	if (form == BT_WLF_UNKNOWN && n == 3)
		form = BT_WLF_NS_POD_CTR;
	while (form < (int)(sizeof(parts) / sizeof(parts[0])) && want < 3 && parts[form][want])
		want++;
	bprintf(b, ",workload=\"%s\"", label_value(name, strlen(name), v, sizeof(v)));
	for (int k = 0; want == n && k < n; k++)
		bprintf(b, ",%s=\"%s\"", parts[form][k],
			label_value(cut[k], cut[k + 1] - 1 - cut[k], v, sizeof(v)));
}

char *bt_metrics_workload_labels(const char *name, int form)
{
	struct buf b = { malloc(256), 0, 256 };

	if (b.p)
		wl_labels(&b, name, form);
	return b.p;
}

/* Interface i's workload state, made on its first scrape (NULL: none) */
static struct wl_series *wl_series_of(const struct agent *a, int i)
{
	struct wl_series *w = &wls[i];

	if (strcmp(w->name, a->ifs[i].name)) {
		free(w->id);
		memset(w, 0, sizeof(*w));
		snprintf(w->name, sizeof(w->name), "%s", a->ifs[i].name);
	}
	if (!w->id)
		w->id = calloc(BT_WL_STAGES, sizeof(*w->id));
	return w->id ? w : NULL;
}

static void counted_since(struct bt_watch_count *sum, const struct bt_watch_count *now,
			  const struct bt_watch_count *last)
{
	for (int e = 0; e < 2; e++) {
		/* less than before: cleared (the instance made anew) */
		sum->packets[e] += now->packets[e] - (now->packets[e] >= last->packets[e]
						      ? last->packets[e] : 0);
		sum->bytes[e] += now->bytes[e] - (now->bytes[e] >= last->bytes[e] ? last->bytes[e] : 0);
	}
}

/* Interface i's series of stage d (a direction's traffic, or
 * BT_WL_DROPPED: its drops, direction-less), into out[packets, bytes],
 * and its left-out count into left; n and names: scratch of BT_WL_IDS */
static void workload_stage(struct buf out[2], struct buf *left, const struct agent *a, int i,
			   int d, struct bt_watch_count *n, struct bt_wl_name *names)
{
	static const char *const side[2] = { "src", "dst" };
	const struct bt_instance *inst = &a->ifs[i].inst;
	const char *family = d == BT_WL_DROPPED ? "dropped_" : "";
	char where[IFNAMSIZ + 64];
	struct wl_series *w;
	struct wl_seen *seen;
	__u32 own = 0;

	if (inst->wl_counts_fd <= 0 || bt_wl_counts(inst, d, n) || !(w = wl_series_of(a, i)))
		return;
	if (d == BT_WL_DROPPED)
		snprintf(where, sizeof(where), "interface=\"%s\"", a->ifs[i].name);
	else
		snprintf(where, sizeof(where), "interface=\"%s\",direction=\"%s\"", a->ifs[i].name,
			 bt_direction_names[d]);
	seen = w->id[d];
	/* who holds a place: the live generations that held one */
	for (__u32 id = 1; id < BT_WL_IDS; id++) {
		struct wl_seen *s = &seen[id];
		int form;

		names[id].gen = 0;
		if (!n[id].packets[0] && !n[id].packets[1]) {
			s->state = WLS_NONE;
			continue;
		}
		if (bpf_map_lookup_elem(inst->wl_names_fd, &id, &names[id]) ||
		    !bt_workload_live(id, names[id].gen, &form)) {
			/* retired: its series gone; an overflow one's packets
			 * since the last scrape still the overflow's (its
			 * counts stay until the id is given again) */
			if (s->state == WLS_OVERFLOW && s->gen == names[id].gen)
				counted_since(&w->overflow[d], &n[id], &s->last);
			names[id].gen = 0;
			s->state = WLS_NONE;
			continue;
		}
		if (s->state != WLS_NONE && s->gen != names[id].gen)
			s->state = WLS_NONE;	/* the id's next generation */
		if (s->state == WLS_OWN && own >= a->cfg.metrics_workloads) {
			s->state = WLS_OVERFLOW;	/* the cap lowered */
			s->last = n[id];
			w->left_out[d]++;
		}
		own += s->state == WLS_OWN;
	}
	for (__u32 id = 1; id < BT_WL_IDS; id++) {
		struct wl_seen *s = &seen[id];
		int form;

		if (!names[id].gen)
			continue;
		if (s->state == WLS_NONE) {
			s->gen = names[id].gen;
			memset(&s->last, 0, sizeof(s->last));
			s->state = own < a->cfg.metrics_workloads ? WLS_OWN : WLS_OVERFLOW;
			own += s->state == WLS_OWN;
			w->left_out[d] += s->state == WLS_OVERFLOW;
		}
		if (s->state == WLS_OVERFLOW) {
			counted_since(&w->overflow[d], &n[id], &s->last);
			s->last = n[id];
			continue;
		}
		names[id].name[BT_WL_NAME_LEN] = 0;
		bt_workload_live(id, names[id].gen, &form);
		for (int k = 0; k < 2; k++)
			for (int e = 0; e < 2; e++) {
				bprintf(&out[k], "bloomtap_workload_%s%s_total{%s,side=\"%s\"", family,
					k ? "bytes" : "packets", where, side[e]);
				wl_labels(&out[k], names[id].name, form);
				bprintf(&out[k], "} %llu\n", (unsigned long long)
					(k ? n[id].bytes[e] : n[id].packets[e]));
			}
	}
	for (int k = 0; k < 2; k++)
		for (int e = 0; e < 2; e++)
			bprintf(&out[k], "bloomtap_workload_%s%s_total{%s,side=\"%s\",overflow=\"true\"} "
				"%llu\n", family, k ? "bytes" : "packets", where, side[e],
				(unsigned long long)(k ? w->overflow[d].bytes[e]
						       : w->overflow[d].packets[e]));
	bprintf(left, "bloomtap_workload_%sleft_out_total{%s} %llu\n", family, where,
		(unsigned long long)w->left_out[d]);
}

/* Each family's help, then its series: [traffic, drops][packets, bytes] */
static const char *const wl_families[2][2][2] = {
	{ { "bloomtap_workload_packets_total",
	    "Packets from (side src) or to (side dst) a workload, by the workload its address "
	    "had as they passed." },
	  { "bloomtap_workload_bytes_total",
	    "Bytes of the frames from (side src) or to (side dst) a workload, by the workload "
	    "its address had as they passed." } },
	{ { "bloomtap_workload_dropped_packets_total",
	    "Packets this instance received that the node dropped, from (side src) or to (side "
	    "dst) a workload, by the workload its address had then." },
	  { "bloomtap_workload_dropped_bytes_total",
	    "Bytes of the packets this instance received that the node dropped, from (side "
	    "src) or to (side dst) a workload." } },
};

static void section_workloads(struct buf *b, const struct agent *a)
{
	struct bt_watch_count *n = calloc(BT_WL_IDS, sizeof(*n));
	struct bt_wl_name *names = calloc(BT_WL_IDS, sizeof(*names));
	struct buf out[2][2], left[2];
	bool ok = n && names;

	for (int t = 0; t < 2; t++) {
		left[t] = (struct buf){ malloc(4096), 0, 4096 };
		ok = ok && left[t].p;
		for (int k = 0; k < 2; k++) {
			out[t][k] = (struct buf){ malloc(4096), 0, 4096 };
			ok = ok && out[t][k].p;
		}
	}
	for (int i = 0; i < a->n && ok; i++) {
		for (int d = 0; d < dirs(a, i); d++)
			workload_stage(out[0], &left[0], a, i, d, n, names);
		workload_stage(out[1], &left[1], a, i, BT_WL_DROPPED, n, names);
	}
	for (int t = 0; t < 2; t++) {
		family(b, t ? "bloomtap_workload_dropped_left_out_total"
			    : "bloomtap_workload_left_out_total", "counter",
		       t ? "Workload generations whose drops are counted under the "
			   "overflow=\"true\" series, the cap (metrics-workloads) past."
			 : "Workload generations counted under the overflow=\"true\" series, the "
			   "cap (metrics-workloads) past.");
		if (ok)
			bprintf(b, "%.*s", (int)left[t].len, left[t].p);
		for (int k = 0; k < 2; k++) {
			family(b, wl_families[t][k][0], "counter", wl_families[t][k][1]);
			if (ok)
				bprintf(b, "%.*s", (int)out[t][k].len, out[t][k].p);
			free(out[t][k].p);
		}
		free(left[t].p);
	}
	free(names);
	free(n);
}

/* Drops: per interface and reason (the running kernel's names: bounded by
 * the reasons it has), what got no digest by cause, and the host's drops
 * on interfaces without an instance. */
static void section_drops(struct buf *b, const struct agent *a)
{
	struct bt_drop_total *t[BT_AGENT_MAX_IFACES + 1] = { 0 };
	int n[BT_AGENT_MAX_IFACES + 1] = { 0 };
	char rb[96];

	for (int i = 0; i <= a->n; i++)
		n[i] = bt_drops_totals(i < a->n ? &a->ifs[i].inst : NULL, &t[i]);
	for (int k = 0; k < 2; k++) {
		family(b, k ? "bloomtap_dropped_bytes_total" : "bloomtap_drops_total", "counter",
		       k ? "Bytes of the packets the kernel dropped after the XDP program saw them, "
			   "by drop reason."
			 : "Packets the kernel dropped after the XDP program saw them, by drop "
			   "reason (a GRO'd skb counts its segments).");
		for (int i = 0; i < a->n; i++)
			for (int j = 0; j < n[i]; j++)
				bprintf(b, "%s{interface=\"%s\",reason=\"%s\"} %llu\n",
					k ? "bloomtap_dropped_bytes_total" : "bloomtap_drops_total",
					a->ifs[i].name, bt_drop_reason_name(t[i][j].code, rb, sizeof(rb)),
					(unsigned long long)(k ? t[i][j].bytes : t[i][j].packets));
	}
	family(b, "bloomtap_drops_not_digested_total", "counter",
	       "Dropped packets without a digest, by cause (suppressed reason, no network "
	       "header, not IP, headers outside the linear part, GRO segments past the cap or "
	       "not TCP).");
	for (int i = 0; i < a->n; i++) {
		__u64 c[BT_DROP_CTR_MAX];

		if (bt_drops_counters(&a->ifs[i].inst, c))
			continue;
		for (int j = BT_DROP_DIGESTED + 1; j < BT_DROP_GRO_SKBS; j++)
			bprintf(b, "bloomtap_drops_not_digested_total{interface=\"%s\",cause=\"%s\"} "
				"%llu\n", a->ifs[i].name, bt_drop_counter_names[j],
				(unsigned long long)c[j]);
	}
	family(b, "bloomtap_drops_not_drops_total", "counter",
	       "Frees the drop tracepoint reported that are not the instance's drops, by kind: "
	       "delivered_then_freed (an echo reply freed as NO_SOCKET after a raw socket took "
	       "its copy), shared_not_seen (on a device stacked on this and other interfaces, "
	       "a packet this instance never saw), workload_not_seen (the same on a workload's "
	       "device in another namespace, a container's veth end).");
	for (int i = 0; i < a->n; i++) {
		__u64 c[BT_DROP_CTR_MAX];

		if (bt_drops_counters(&a->ifs[i].inst, c))
			continue;
		for (int j = BT_DROP_GRO_SKBS + 1; j < BT_DROP_CTR_MAX; j++)
			bprintf(b, "bloomtap_drops_not_drops_total{interface=\"%s\",kind=\"%s\"} "
				"%llu\n", a->ifs[i].name, bt_drop_counter_names[j],
				(unsigned long long)c[j]);
	}
	family(b, "bloomtap_drop_recorder_total", "counter",
	       "The drop recorder (attach --drop-ring): records made, records overwritten "
	       "before a follower (drops --pcap --follow) read them, records a follower lost "
	       "when its ring buffer was full.");
	for (int i = 0; i < a->n; i++) {
		struct bt_drop_rec_pos rc;

		if (!a->ifs[i].inst.meta.drop_ring || bt_recorder_counts(&a->ifs[i].inst, &rc))
			continue;
		bprintf(b, "bloomtap_drop_recorder_total{interface=\"%s\",kind=\"records\"} %llu\n"
			"bloomtap_drop_recorder_total{interface=\"%s\",kind=\"overwritten\"} %llu\n"
			"bloomtap_drop_recorder_total{interface=\"%s\",kind=\"follow_lost\"} %llu\n",
			a->ifs[i].name, (unsigned long long)rc.written, a->ifs[i].name,
			(unsigned long long)rc.overwritten, a->ifs[i].name,
			(unsigned long long)rc.follow_lost);
	}
	family(b, "bloomtap_drops_unattributed_total", "counter",
	       "Drops on this host's interfaces without a bloomtap instance, by reason (skbs).");
	for (int j = 0; j < n[a->n]; j++)
		bprintf(b, "bloomtap_drops_unattributed_total{reason=\"%s\"} %llu\n",
			bt_drop_reason_name(t[a->n][j].code, rb, sizeof(rb)),
			(unsigned long long)t[a->n][j].packets);
	for (int i = 0; i <= a->n; i++)
		free(t[i]);
}

/* IPFIX export, per collector. */
static void section_ipfix(struct buf *b, const struct agent *a)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "bloomtap_ipfix_messages_total", "IPFIX messages sent to the collector: every "
		  "byte in the socket (TCP: once the backlog's last byte of it is)." },
		{ "bloomtap_ipfix_records_total", "Heavy-flow records in those messages." },
		{ "bloomtap_ipfix_errors_total", "IPFIX messages not sent, each counted once: "
		  "collector unreachable, connection down, backlog full, or left in the TCP "
		  "backlog when the connection broke or closed (reload, exit)." },
	};

	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		family(b, fam[k].name, "counter", fam[k].help);
		for (int i = 0; i < a->nipfix; i++) {
			struct bt_ipfix_stats st;

			bt_ipfix_stats(a->ipfix[i], &st);
			bprintf(b, "%s{collector=\"%s\"} %llu\n", fam[k].name,
				bt_ipfix_name(a->ipfix[i]),
				(unsigned long long)(k == 0 ? st.messages : k == 1 ? st.records
										   : st.errors));
		}
	}
}

char *bt_metrics_text(struct agent *a)
{
	struct buf b = { malloc(8192), 0, 8192 };

	if (!b.p)
		return NULL;
	section_info(&b, a);
	section_counters(&b, a);
	section_heavy(&b, a);
	section_spie(&b, a);
	section_watch(&b, a);
	section_workloads(&b, a);
	section_drops(&b, a);
	section_ipfix(&b, a);
	section_archive_http(&b, a);
	return b.p;
}
