// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* /metrics in the Prometheus text exposition format: one HELP and TYPE
 * line per family, counters end in _total, byte counts in _bytes, one label
 * set per interface. Heavy flows are the top K of the last complete
 * interval, so that label cardinality stays bounded. */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "agent.h"
#include "archive.h"
#include "common.h"
#include "flow.h"

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
	{ "bloomtap_packets_total", "Packets the XDP program saw.", BT_CTR_PACKETS },
	{ "bloomtap_received_bytes_total", "Bytes of the frames the XDP program saw.", BT_CTR_BYTES },
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
	{ "bloomtap_spie_digests_present_total", "Digests already in their window (duplicates, loops, false positives).", BT_CTR_SPIE_PRESENT },
	{ "bloomtap_spie_no_ready_window_total", "Batches of digests that found no clean SPIE window ready after a full one: the agent is behind, the current window goes past its load.", BT_CTR_SPIE_NO_READY },
};

char *bt_metrics_text(struct agent *a)
{
	struct buf b = { malloc(8192), 0, 8192 };
	__u64 c[BT_AGENT_MAX_IFACES][BT_CTR_MAX];
	uint64_t files, bytes;

	memset(c, 0, sizeof(c));
	for (int i = 0; i < a->n; i++)
		bt_instance_counters(&a->ifs[i].inst, c[i]);

	family(&b, "bloomtap_build_info", "gauge", "bloomtap's version; always 1.");
	bprintf(&b, "bloomtap_build_info{version=\"%s\"} 1\n", BT_VERSION);
	family(&b, "bloomtap_config_interval_seconds", "gauge",
	       "The heavy-flow interval the agent runs with.");
	bprintf(&b, "bloomtap_config_interval_seconds %g\n", a->cfg.interval_s);

	for (size_t m = 0; m < sizeof(counters) / sizeof(counters[0]); m++) {
		const struct ctr_metric *cm = &counters[m];
		const char *name = cm->name;

		for (size_t k = m; !name; k--)
			name = counters[k - 1].name;
		if (cm->name)
			family(&b, cm->name, "counter", cm->help);
		for (int i = 0; i < a->n; i++)
			bprintf(&b, "%s{interface=\"%s\"%s%s} %llu\n", name, a->ifs[i].name,
				cm->label ? "," : "", cm->label ? cm->label : "",
				(unsigned long long)c[i][cm->ctr]);
	}

	/* heavy flows of the last complete interval, top K */
	family(&b, "bloomtap_heavy_flow_bytes", "gauge",
	       "Estimated bytes of the top heavy flows of the last complete interval.");
	struct buf pk = { malloc(4096), 0, 4096 };

	family(&pk, "bloomtap_heavy_flow_packets", "gauge",
	       "Estimated packets of the top heavy flows of the last complete interval.");
	family(&b, "bloomtap_interval_bytes", "gauge", "Bytes of the heavy-flow intervals.");
	for (int i = 0; i < a->n; i++) {
		struct agent_iface *f = &a->ifs[i];
		struct bt_heavy_report r;
		__u32 last = !(f->hm.ctl->interval & 1);

		if (bt_heavy_collect(&f->hm, last, NULL, false, &r))
			continue;
		for (size_t j = 0; j < r.n && j < a->cfg.top; j++) {
			char s[BT_ADDR_STRLEN], d[BT_ADDR_STRLEN], lab[256];
			const struct bt_heavy_flow *h = &r.flows[j];

			snprintf(lab, sizeof(lab), "interface=\"%s\",rank=\"%zu\",src=\"%s\",dst=\"%s\","
				 "sport=\"%u\",dport=\"%u\",proto=\"%u\"", f->name, j + 1,
				 bt_addr_str(h->key.src, s, sizeof(s)), bt_addr_str(h->key.dst, d, sizeof(d)),
				 ntohs(h->key.sport), ntohs(h->key.dport), h->key.proto);
			bprintf(&b, "bloomtap_heavy_flow_bytes{%s} %llu\n", lab, (unsigned long long)h->bytes);
			bprintf(&pk, "bloomtap_heavy_flow_packets{%s} %llu\n", lab, (unsigned long long)h->packets);
		}
		bprintf(&b, "bloomtap_interval_bytes{interface=\"%s\",interval=\"last\"} %llu\n", f->name,
			(unsigned long long)r.total_bytes);
		bprintf(&b, "bloomtap_interval_bytes{interface=\"%s\",interval=\"current\"} %llu\n", f->name,
			(unsigned long long)bt_heavy_interval_bytes(&f->hm, !last));
		bt_heavy_report_free(&r);
	}
	bprintf(&b, "%.*s", (int)pk.len, pk.p);
	free(pk.p);

	/* SPIE windows */
	family(&b, "bloomtap_spie_window_fill_ratio", "gauge",
	       "Share of the current SPIE window's bits that are set.");
	struct buf fp = { malloc(2048), 0, 2048 }, sl = { malloc(2048), 0, 2048 };

	family(&fp, "bloomtap_spie_window_false_positive_ratio", "gauge",
	       "Expected false-positive rate of the current SPIE window, from its fill.");
	family(&sl, "bloomtap_spie_windows_sealed_total", "counter",
	       "SPIE windows sealed by this agent.");
	struct buf ae = { malloc(1024), 0, 1024 };

	family(&ae, "bloomtap_archive_errors_total", "counter",
	       "Sealed windows that could not be written to the archive (disk full...).");
	for (int i = 0; i < a->n; i++) {
		struct agent_iface *f = &a->ifs[i];
		uint32_t w = bt_spie_current(&f->sm);
		__u64 set;
		double fpr;

		bt_bloom_fill(bt_window_filter(&f->sm, w), f->sm.bpw, f->sm.meta->k, &set, &fpr);
		bprintf(&b, "bloomtap_spie_window_fill_ratio{interface=\"%s\"} %g\n", f->name,
			(double)set / f->sm.meta->window_bits);
		bprintf(&fp, "bloomtap_spie_window_false_positive_ratio{interface=\"%s\"} %g\n", f->name, fpr);
		bprintf(&sl, "bloomtap_spie_windows_sealed_total{interface=\"%s\"} %llu\n", f->name,
			(unsigned long long)f->keeper.sealed);
		bprintf(&ae, "bloomtap_archive_errors_total{interface=\"%s\"} %llu\n", f->name,
			(unsigned long long)f->keeper.archive_errors);
	}
	bprintf(&b, "%.*s%.*s%.*s", (int)fp.len, fp.p, (int)sl.len, sl.p, (int)ae.len, ae.p);
	free(fp.p);
	free(sl.p);
	free(ae.p);

	/* counted by the agent's loop every second: a scrape reads no directory */
	bytes = __atomic_load_n(&a->archive_bytes, __ATOMIC_RELAXED);
	files = __atomic_load_n(&a->archive_files, __ATOMIC_RELAXED);
	family(&b, "bloomtap_archive_bytes", "gauge", "Bytes of sealed windows in the archive.");
	bprintf(&b, "bloomtap_archive_bytes %llu\n", (unsigned long long)bytes);
	family(&b, "bloomtap_archive_files", "gauge", "Sealed windows in the archive.");
	bprintf(&b, "bloomtap_archive_files %llu\n", (unsigned long long)files);
	family(&b, "bloomtap_http_requests_total", "counter", "HTTP requests served.");
	bprintf(&b, "bloomtap_http_requests_total %llu\n", (unsigned long long)a->requests);
	family(&b, "bloomtap_http_rejected_total", "counter",
	       "HTTP requests refused (bad, too large, too many).");
	bprintf(&b, "bloomtap_http_rejected_total %llu\n", (unsigned long long)a->rejected);
	return b.p;
}
