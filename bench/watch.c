// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's watch-list sections: watch, lists of one length and of
 * real shapes against the kernel's hash map and LPM trie; watch-list, an
 * operator's own list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "hash.h"
#include "base/util.h"
#include "core/digest.h"
#include "core/watchlist.h"
#include "instance/watch.h"
#include "../tests/lib/bgp_shape.h"
#include "../tests/lib/zipf.h"

static double watch_one_length_ns;		/* the first table's lookups */

/* The kernel's bytes for the watch table in use: its chunks' maps; -1
 * when it has none. */
static long long table_memlock(const struct bt_instance *inst)
{
	struct bt_watch_table t;
	long long mem = -1;
	__u32 slot = 0, id, x;
	int fd;

	if (!bt_watch_table_open(inst, false, &t)) {
		slot = t.slot;
		bt_watch_table_close(&t);
	}
	for (__u32 c = 0; c < BT_WATCH_CHUNKS; c++) {
		x = BT_WATCH_CHUNK_KEY(slot, c);
		if (bpf_map_lookup_elem(inst->watch_cells_fd, &x, &id) ||
		    (fd = bpf_map_get_fd_by_id(id)) < 0)
			break;
		mem = (mem < 0 ? 0 : mem) + map_memlock(fd);
		close(fd);
	}
	return mem;
}

static void watch_addr(struct watch_ref *r, uint32_t a4, const uint8_t *a6)
{
	memset(r->addr, 0, 16);
	r->len = 128;
	if (a6) {
		memcpy(r->addr, a6, 16);
	} else {
		r->addr[10] = r->addr[11] = 0xff;
		a4 = htonl(a4);
		memcpy(r->addr + 12, &a4, 4);
	}
}

/* A table of n random IPv6 /128s under 2001:db8::/32; its build time. */
static double watch_build_s(size_t n, uint64_t *rng, double *bits)
{
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	struct bt_hash_key_raw raw = { bt_rng(rng), bt_rng(rng) };
	struct bt_hash_keys hk;
	struct bt_watch_built b;
	double t0, t = -1;

	if (!k)
		return -1;
	bt_hash_keys_derive(&raw, &hk);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct bt_watch_key){ 0x20010db800000000ULL | (bt_rng(rng) >> 32), bt_rng(rng),
					      128, 1 + i % WATCH_CLASS_COUNT };
	t0 = bt_mono_s();
	if (!bt_watch_build(&hk, k, n, BT_WATCH_CHECK_BITS, bt_rng(rng), 0, &b)) {
		t = bt_mono_s() - t0;
		*bits = bt_watch_bits_per_entry(&b.b.hdr);
		bt_watch_built_free(&b);
	}
	free(k);
	return t;
}

/* The cost of prefix lengths (no target): a million IPv4 entries at eight
 * lengths, /32 to /16 in other parts of the space and 198.16.0.0/12 over
 * the traffic, so that both addresses of every packet take all eight
 * probes (the worst case) before their hit; the LPM trie holds the same
 * prefixes. */
static void watch_lengths_run(FILE *f, const uint32_t *seq, struct target *w,
			      struct bt_watch_list *l)
{
	static const struct { uint32_t len, count, base; } part[] = {
		{ 32, 400000, 0x01000000 }, { 28, 200000, 0x02000000 },
		{ 24, 200000, 0x03000000 }, { 22, 100000, 0x14000000 },
		{ 20, 50000, 0x28000000 },  { 18, 30000, 0x3c000000 },
		{ 16, 19999, 0x64000000 },  { 12, 1, 0xc6100000 },
	};
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_LPM;
	struct bt_watch_loaded info;
	double med[P_MAX];
	struct frame fr;
	uint32_t n = 0;

	memset(l->entries, 0, sizeof(l->entries));
	for (size_t p = 0; p < sizeof(part) / sizeof(part[0]); p++)
		for (uint32_t j = 0; j < part[p].count; j++, n++) {
			struct watch_ref *r = &watch_refs[n];
			uint32_t a = part[p].base + (j << (32 - part[p].len));

			watch_addr(r, a, NULL);
			r->len = 96 + part[p].len;
			r->cls = 1 + n % WATCH_CLASS_COUNT;
			bt_watch_words(r->addr, &l->e[n].key.hi, &l->e[n].key.lo);
			l->e[n].key.len = r->len;
			l->e[n].key.class_id = r->cls;
			l->entries[r->cls]++;
		}
	l->n = n;
	if (bt_watch_load(&w->inst, l, BT_WATCH_CHECK_BITS, &info))
		return;
	nwatch_refs = n;
	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, seq, which, med)) {
		nwatch_refs = 0;
		return;
	}
	nwatch_refs = 0;
	print_table(f, "watch lists, the cost of prefix lengths (no target): 1,000,000 IPv4 "
		    "entries at 8 lengths, both addresses matching only the shortest", which, med);
	out(stdout, f, "  at most %u reads an address (the range table's bound): +%.1f ns on top of "
	    "parsing (LPM trie +%.1f); one length above: +%.1f\n", info.probes[0],
	    med[P_WATCH] - med[P_PARSE],
	    med[P_REF_LPM] - med[P_PARSE], watch_one_length_ns);
}

/* ---- Watch lists of real shapes: generated BGP-shaped lists
 * and BENCH_WATCH_LIST=FILE, each against the LPM trie holding the same
 * list, with traffic over the list's networks ---- */

/* What one list costs, for the rows and the one-line summary. */
struct watch_cost {
	double ns, lpm_ns;		/* both addresses, on top of parsing */
	long long mem, lpm_mem;		/* bytes_memlock */
	double probes_mean;
	uint32_t probes_max, bound;	/* seen; the table's bound */
	double build_s;
	size_t keys, markers;
	size_t ranges, lines;		/* IPv4's range table */
	bool v6;			/* the traffic's family */
	bool tree;			/* IPv6 in the range tree */
	size_t v6_ranges;
	/* IPv6: the floor, P_CHASE1..P_CHASE4W on top of parsing */
	double floor[P_MAX - P_CHASE1];
};

/* Probes of the traffic's lookups in user space (the datapath's search):
 * mean and most; and, for the ablation, the probes of the plain search
 * (every length of the family, longest first, to the first hit). */
static void watch_probes(const struct bt_instance *inst, bool v6, struct watch_cost *c,
			 double *linear_mean)
{
	struct bt_watch_table t;
	uint64_t sum = 0, lin = 0, n = 0;

	c->probes_max = 0;
	if (bt_watch_table_open(inst, false, &t))
		return;
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		for (int d = 0; d < 2; d++) {
			struct bt_watch_how how;
			const uint8_t *a = watch_traffic[i] + 16 * d;
			uint32_t nl = t.hdr.nlen[v6], r = nl;

			bt_watch_table_classify(&t, a, !v6, &how);
			sum += how.probes;
			c->probes_max = how.probes > c->probes_max ? how.probes : c->probes_max;
			for (uint32_t j = 0; how.len && j < nl; j++)
				if (t.hdr.len[v6][nl - 1 - j] == how.len)
					r = j + 1;
			lin += r;
			n++;
		}
	bt_watch_table_close(&t);
	c->probes_mean = (double)sum / n;
	if (linear_mean)
		*linear_mean = (double)lin / n;
}

/* Loads list l into bloomtap (flags: BT_WATCH_F_*) and the LPM trie,
 * draws traffic of one family over it (9 packets in 10 from an address
 * under a random entry, 1 from anywhere in the family's unicast space),
 * measures both. 0, or -1. */
static int watch_list_cost(const uint32_t *seq, struct target *w, const struct bt_watch_list *l,
			   bool v6, unsigned flags, struct watch_cost *c, double *linear_mean)
{
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_LPM;
	const unsigned chase = 1u << P_CHASE1 | 1u << P_CHASE2 | 1u << P_CHASE4 | 1u << P_CHASE4W |
			       1u << P_CHASE4W_INNER;
	struct bt_watch_loaded info;
	uint32_t *fam = malloc(l->n * sizeof(*fam)), nfam = 0;
	uint64_t rng = 0x18b6;
	double med[P_MAX];
	struct frame fr;
	int err = -1;

	memset(c, 0, sizeof(*c));
	c->v6 = v6;
	watch_refs = calloc(l->n, sizeof(*watch_refs));
	watch_traffic = malloc((size_t)BENCH_SEQ_LEN * sizeof(*watch_traffic));
	if (!fam || !watch_refs || !watch_traffic)
		goto out;
	for (size_t i = 0; i < l->n; i++) {
		const struct bt_watch_key *k = &l->e[i].key;
		__u64 hi = htobe64(k->hi), lo = htobe64(k->lo);

		memcpy(watch_refs[i].addr, &hi, 8);
		memcpy(watch_refs[i].addr + 8, &lo, 8);
		watch_refs[i].len = k->len;
		watch_refs[i].cls = k->class_id;
		if (bt_watch_key_is_v4(k) != v6)
			fam[nfam++] = i;
	}
	if (!nfam)
		goto out;
	for (uint32_t i = 0; i < BENCH_SEQ_LEN; i++)
		for (int d = 0; d < 2; d++) {
			struct bt_watch_key any = { 0, 0xffff00000000ULL, v6 ? 3 : BT_WATCH_V4, 0 };

			if (v6)
				any.hi = 0x2000000000000000ULL;
			bgp_addr_under(bt_rng(&rng) % 10 ? &l->e[fam[bt_rng(&rng) % nfam]].key : &any,
					 watch_traffic[i] + 16 * d, &rng);
		}
	if (bt_watch_load_flags(&w->inst, l, BT_WATCH_CHECK_BITS, flags, &info))
		goto out;
	c->keys = info.keys;
	c->markers = info.markers;
	c->ranges = info.ranges;
	c->lines = info.lines;
	c->build_s = info.build_s;
	c->bound = info.probes[v6];
	c->tree = info.v6_tree;
	c->v6_ranges = info.v6_ranges;
	c->mem = table_memlock(&w->inst);
	watch_probes(&w->inst, v6, c, linear_mean);
	nwatch_refs = l->n;
	if (v6)
		bench_frame_v6_tcp(&fr);
	else
		bench_frame_v4_udp(&fr);
	/* IPv6's floor, in an array of the table's bytes */
	bench_chase_lines = v6 && c->mem > 64 ? c->mem / 64 : 1;
	if (run_case(&fr, v6, seq, which | (v6 ? chase : 0), med))
		goto out;
	c->ns = med[P_WATCH] - med[P_PARSE];
	c->lpm_ns = med[P_REF_LPM] - med[P_PARSE];
	c->lpm_mem = memlock_lpm;
	for (int p = P_CHASE1; v6 && p < P_MAX; p++)
		c->floor[p - P_CHASE1] = med[p] - med[P_PARSE];
	err = 0;
out:
	bench_chase_lines = 1;
	nwatch_refs = 0;
	free(watch_refs);
	watch_refs = NULL;
	free(watch_traffic);
	watch_traffic = NULL;
	free(fam);
	return err;
}

/* The one line an operator reads before loading a list (docs/watch-lists.md,
 * "What a list costs"). */
static void watch_cost_line(FILE *f, const char *what, const struct watch_cost *c)
{
	out(stdout, f, "  cost of %s: +%.0f ns a packet (both addresses; the LPM trie +%.0f), "
	    "%.1f MiB (%.1f bytes an entry), %.2f %s an address (at most %u), built in "
	    "%.2f s\n", what, c->ns, c->lpm_ns, c->mem / 1048576.0,
	    (double)c->mem / c->keys, c->probes_mean,
	    c->v6 && !c->tree ? "probes" : "lines", c->bound, c->build_s);
}

static void watch_cost_rows(FILE *f, const char *title, const struct watch_cost *c)
{
	long long ours = c->mem;

	out(stdout, f, "\n%s\n", title);
	out(stdout, f, "  %-34s %12s %14s %12s %14s\n", "", "ns/pkt (+)", "bytes_memlock",
	    "bytes/entry", "probes/lookup");
	out(stdout, f, "  %-34s %12.1f %11.1f MiB %12.1f %8.2f (max %u, bound %u)\n",
	    "bloomtap", c->ns, ours / 1048576.0, (double)ours / c->keys, c->probes_mean,
	    c->probes_max, c->bound);
	out(stdout, f, "  %-34s %12.1f %11.1f MiB %12.1f\n", "kernel LPM trie", c->lpm_ns,
	    c->lpm_mem / 1048576.0, (double)c->lpm_mem / c->keys);
	out(stdout, f, "  entries %zu, markers %zu (%.2f a key); build %.2f s (%.2f s a million "
	    "entries)\n", c->keys, c->markers, (double)c->markers / c->keys, c->build_s,
	    c->build_s / (c->keys / 1e6));
	if (c->lines && !c->v6)
		out(stdout, f, "  IPv4: probes are lines read (index and ranges); %zu ranges (%.2f an "
		    "entry) in %zu lines of 64 bytes with their index (%.1f bytes a range)\n",
		    c->ranges, (double)c->ranges / c->keys, c->lines, 64.0 * c->lines / c->ranges);
	if (c->tree && c->v6)
		out(stdout, f, "  IPv6: in the range tree, probes are lines read (a node a level and "
		    "the leaf); %zu ranges (%.2f an entry)\n", c->v6_ranges,
		    (double)c->v6_ranges / c->keys);
}

/* IPv6's floor: what reading lines alone costs, in an array of
 * the table's size, lines chosen by the line before as a search's are;
 * how many such lines an address the time target leaves. */
static void watch_floor(FILE *f, const struct watch_cost *c, double ns_max)
{
	const double *x = c->floor;	/* P_CHASE1.. on top of parsing */
	double step = (x[P_CHASE4 - P_CHASE1] - x[0]) / 3;	/* a dependent line, 2 addresses */
	double call = (x[P_CHASE4W_INNER - P_CHASE1] - x[P_CHASE4W - P_CHASE1]) / 32;
	double calls = 2 * BT_WATCH_WAYS * c->probes_mean;	/* an inner map: a call a cell */
	int k = 0;

	while (k < 16 && x[0] + k * step <= ns_max)
		k++;
	out(stdout, f, "  the floor (reads of random 64-byte lines in an array of the table's "
	    "size, each waiting for the one before; both addresses, on top of parsing):\n"
	    "    1 line an address +%.0f ns, 2 lines +%.0f, 4 lines +%.0f; 4 reads of 4 lines "
	    "each (4 probes' cells) +%.0f\n"
	    "    the same, each line a call (an inner map of its own size) +%.0f: "
	    "%.1f ns a call\n"
	    "    a dependent line costs +%.0f ns a packet (the two addresses' reads overlap); "
	    "+%.0f ns leaves %d such lines an address\n",
	    x[0], x[P_CHASE2 - P_CHASE1], x[P_CHASE4 - P_CHASE1], x[P_CHASE4W - P_CHASE1],
	    x[P_CHASE4W_INNER - P_CHASE1], call, step, ns_max, k);
	if (c->tree)
		out(stdout, f, "    this tree: %.2f lines an address, one a level (the upper levels "
		    "in cache), the two addresses side by side\n", c->probes_mean);
	else
		out(stdout, f, "    this search: %.2f probes an address, 4 cells each, read inline "
		    "(ABI 16 called for each: %.0f calls a packet, %.0f ns at that cost)\n",
		    c->probes_mean, calls, calls * call);
}

/* The targets (docs/benchmark.md), against the LPM trie of the same run: IPv4 at most
 * +150 ns a packet and 0.08 of the trie, IPv6 +300 and 0.1; memory at
 * most mem_bytes an entry (0: not checked). */
static void watch_targets(FILE *f, const struct watch_cost *c, bool v6, double mem_bytes)
{
	double ns_max = v6 ? 300 : 150, ratio_max = v6 ? 0.10 : 0.08;
	double per_entry = (double)c->mem / c->keys;

	out(stdout, f, "  targets:\n");
	out(stdout, f, "  - at most +%.0f ns a packet: +%.0f: %s\n", ns_max, c->ns,
	    c->ns <= ns_max ? "met" : "MISSED");
	out(stdout, f, "  - at most %.2f of the LPM trie's: %.3f: %s\n", ratio_max,
	    c->ns / c->lpm_ns, c->ns <= ratio_max * c->lpm_ns ? "met" : "MISSED");
	if (mem_bytes)
		out(stdout, f, "  - memory at most %.1f bytes an entry: %.1f: %s\n", mem_bytes,
		    per_entry, per_entry <= mem_bytes ? "met" : "MISSED");
	if (v6)
		watch_floor(f, c, ns_max);
}

/* A generated list of n BGP-shaped prefixes of one family, 200 classes. */
static int bgp_list(struct bt_watch_list *l, size_t n, bool v6)
{
	struct bt_watch_key *k = malloc(n * sizeof(*k));
	uint64_t rng = v6 ? 0xb6b6 : 0xb4b4;

	memset(l, 0, sizeof(*l));
	l->e = calloc(n, sizeof(*l->e));
	if (!k || !l->e) {
		free(k);
		free(l->e);
		return -1;
	}
	bgp_shape_make(k, n, !v6, v6 ? 57 : 50, WATCH_CLASS_COUNT, &rng);
	for (size_t i = 0; i < n; i++) {
		l->e[i].key = k[i];
		l->entries[k[i].class_id]++;
	}
	l->n = n;
	l->nclasses = WATCH_CLASS_COUNT;
	for (uint32_t c = 1; c <= WATCH_CLASS_COUNT; c++)
		snprintf(l->names[c], sizeof(l->names[c]), "c%u", c);
	free(k);
	return 0;
}

static void watch_shapes_run(FILE *f, const uint32_t *seq, struct target *w)
{
	for (int v6 = 0; v6 <= 1; v6++) {
		struct bt_watch_list l;
		struct watch_cost c, flat;
		double linear = 0;
		char title[200];

		if (bgp_list(&l, WATCH_KEYS, v6))
			continue;
		if (watch_list_cost(seq, w, &l, v6, 0, &c, v6 ? &linear : NULL)) {
			out(stdout, f, "\nwatch lists, generated %s: failed\n", v6 ? "IPv6" : "IPv4");
			bt_watch_list_free(&l);
			continue;
		}
		snprintf(title, sizeof(title), "watch lists, a generated %s list of 1,000,000 "
			 "prefixes of a BGP table's lengths (tests/lib/bgp_shape.h), 200 classes; "
			 "traffic 90 %% under its prefixes", v6 ? "IPv6" : "IPv4");
		watch_cost_rows(f, title, &c);
		/* bytes an entry: the design's bound */
		watch_targets(f, &c, v6, v6 ? 10.4 : 8.6);
		out(stdout, f, "  - build at most 1 s a million entries, markers included: %.2f s: "
		    "%s\n", c.build_s / (c.keys / 1e6),
		    c.build_s <= c.keys / 1e6 ? "met" : "MISSED");
		/* the ablation: the plain search's probes, binary search on
		 * lengths (IPv4 in the Bloomier table too), the range table
		 * (IPv4) */
		if (!v6 && !watch_list_cost(seq, w, &l, v6, BT_WATCH_F_FLAT, &flat, &linear))
			out(stdout, f, "  ablation (ns on top of parsing):\n"
			    "    every length, longest first (ABI 8): %.2f probes\n"
			    "    binary search on all the family's lengths: %.2f probes (max %u), "
			    "+%.1f ns, %.1f bytes an entry, %zu markers\n", linear, flat.probes_mean,
			    flat.probes_max, flat.ns, (double)flat.mem / flat.keys,
			    flat.markers);
		if (v6)
			out(stdout, f, "  ablation (ns on top of parsing):\n"
			    "    every length, longest first (ABI 8): %.2f probes\n"
			    "    binary search on the family's lengths: %.2f probes (max %u), +%.1f "
			    "ns, %zu markers%s\n", linear, c.probes_mean, c.probes_max, c.ns,
			    c.markers, c.tree ? " (the tree's: the choice below)" : "");
		/* the range tree, which the load does not choose when it takes
		 * more memory than the search's table */
		if (v6 && !watch_list_cost(seq, w, &l, v6, BT_WATCH_B_V6_TREE, &flat, NULL))
			out(stdout, f, "    the range tree (ABI 18%s): %.2f lines (max %u), +%.1f ns, "
			    "%.1f bytes an entry, %zu ranges\n", c.tree ? "" : ", not chosen: more memory",
			    flat.probes_mean, flat.probes_max, flat.ns, (double)flat.mem / flat.keys,
			    flat.v6_ranges);
		else if (v6)
			out(stdout, f, "    the range tree: failed\n");
		else
			out(stdout, f, "    the range table (ABI 16): %.2f lines (max %u), +%.1f ns, "
			    "%.1f bytes an entry\n", c.probes_mean, c.probes_max, c.ns,
			    (double)c.mem / c.keys);
		watch_cost_line(f, v6 ? "this IPv6 list" : "this IPv4 list", &c);
		bt_watch_list_free(&l);
	}
}

/* BENCH_WATCH_LIST=FILE: the operator's own list, each family it holds. */
static int watch_user_list_run(FILE *f, const uint32_t *seq, struct target *w, const char *path)
{
	const char *how = getenv("BENCH_WATCH_IPV6");	/* IPv6's lookup: auto, tree, search */
	unsigned flags = how && !strcmp(how, "tree")	 ? BT_WATCH_B_V6_TREE :
			 how && !strcmp(how, "search") ? BT_WATCH_B_V6_SEARCH : 0;
	struct bt_watch_list l;
	char err[BT_WATCH_ERR_LEN];
	int rc = 0;

	if (bt_watch_list_read(path, &l, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	for (int v6 = 0; v6 <= 1; v6++) {
		struct watch_cost c;
		char title[600];
		size_t n = 0;

		for (size_t i = 0; i < l.n; i++)
			n += bt_watch_key_is_v4(&l.e[i].key) != v6;
		if (!n)
			continue;
		if (watch_list_cost(seq, w, &l, v6, flags, &c, NULL)) {
			out(stdout, f, "\n%s, %s traffic: failed\n", path, v6 ? "IPv6" : "IPv4");
			rc = 1;
			continue;
		}
		snprintf(title, sizeof(title), "BENCH_WATCH_LIST=%s: %zu entries in %u classes "
			 "(%zu of them %s); %s traffic, 90 %% under them", path, l.n, l.nclasses, n,
			 v6 ? "IPv6" : "IPv4", v6 ? "IPv6" : "IPv4");
		watch_cost_rows(f, title, &c);
		watch_targets(f, &c, v6, 0);
		watch_cost_line(f, v6 ? "this list, IPv6 traffic" : "this list, IPv4 traffic", &c);
	}
	bt_watch_list_free(&l);
	return rc;
}

/* Lookups of both addresses of every packet, a million entries of one
 * prefix length (the traffic's 131,072 sources among them, so every
 * lookup hits), against the kernel's hash map and LPM trie; memory from
 * the kernel's accounting; bits a key; build time. */
static void watch_run(FILE *f, const uint32_t *seq)
{
	static struct bt_watch_list l;
	struct target *w = &targets[P_WATCH];
	struct bt_watch_loaded info;
	const unsigned which = 1u << P_EMPTY | 1u << P_PARSE | 1u << P_WATCH | 1u << P_REF_HASH |
			       1u << P_REF_LPM;
	double med[P_MAX], build1, build10, bits1, bits10;
	uint64_t rng = 0x3a7c4;
	struct frame fr;
	long long mem_w = -1;

	watch_refs = calloc(WATCH_KEYS, sizeof(*watch_refs));
	l.e = calloc(WATCH_KEYS, sizeof(*l.e));
	if (!watch_refs || !l.e || make_bloomtap(w, "watch", false, false, 0, 0, 0))
		goto fail;
	for (uint32_t i = 0; i < WATCH_KEYS; i++) {
		struct watch_ref *r = &watch_refs[i];

		if (i < 0x20000) {			/* the traffic: 198.18.0.0/15 */
			watch_addr(r, 0xc6120000 + i, NULL);
		} else if (i < 0x20000 + 400000) {	/* 10.0.0.0 on */
			watch_addr(r, 0x0a000000 + i, NULL);
		} else {				/* 2001:db8::/32 */
			uint64_t a[2] = { htobe64(0x20010db800000000ULL | (bt_rng(&rng) >> 32)),
					  bt_rng(&rng) };

			watch_addr(r, 0, (const uint8_t *)a);
		}
		r->cls = 1 + i % WATCH_CLASS_COUNT;
		bt_watch_words(r->addr, &l.e[i].key.hi, &l.e[i].key.lo);
		l.e[i].key.len = 128;
		l.e[i].key.class_id = r->cls;
		l.entries[r->cls]++;
	}
	l.n = WATCH_KEYS;
	l.nclasses = WATCH_CLASS_COUNT;
	for (uint32_t c = 1; c <= WATCH_CLASS_COUNT; c++)
		snprintf(l.names[c], sizeof(l.names[c]), "c%u", c);
	if (bt_watch_load(&w->inst, &l, BT_WATCH_CHECK_BITS, &info))
		goto fail;
	mem_w = table_memlock(&w->inst);
	nwatch_refs = WATCH_KEYS;
	bench_frame_v4_udp(&fr);
	if (run_case(&fr, false, seq, which, med))
		goto fail;
	nwatch_refs = 0;
	print_table(f, "watch lists: 64-byte IPv4/UDP frames, both addresses looked up among "
		    "1,000,000 entries of one prefix length", which, med);
	double dw = med[P_WATCH] - med[P_PARSE], dh = med[P_REF_HASH] - med[P_PARSE];

	watch_one_length_ns = dw;

	build1 = watch_build_s(1000000, &rng, &bits1);
	build10 = watch_build_s(10000000, &rng, &bits10);
	out(stdout, f, "  memory (the kernel's bytes_memlock): bloomtap's table %.1f MiB (%.1f bytes "
	    "an entry), hash map %.1f MiB (%.1f), LPM trie %.1f MiB (%.1f)\n",
	    mem_w / 1048576.0, (double)mem_w / WATCH_KEYS, memlock_hash / 1048576.0,
	    (double)memlock_hash / WATCH_KEYS, memlock_lpm / 1048576.0,
	    (double)memlock_lpm / WATCH_KEYS);
	out(stdout, f, "  targets:\n");
	out(stdout, f, "  - lookups on top of parsing no more than the hash map's: +%.1f vs +%.1f ns "
	    "(LPM trie +%.1f): %s\n", dw, dh, med[P_REF_LPM] - med[P_PARSE],
	    dw <= dh ? "met" : "MISSED");
	out(stdout, f, "  - memory at least 10 x less than the hash map's: %.1f x: %s\n",
	    (double)memlock_hash / mem_w, memlock_hash >= 10 * mem_w ? "met" : "MISSED");
	const double need = 10 + BT_WATCH_CHECK_BITS;

	out(stdout, f, "  - bits a key at most 1.13 x the class, check, leaf and marker bits (%.0f "
	    "+ %d): %.2f bits, %.3f x: %s\n", 10.0, BT_WATCH_CHECK_BITS, info.bits_per_key,
	    info.bits_per_key / need, info.bits_per_key <= 1.13 * need ? "met" : "MISSED");
	out(stdout, f, "  - build at most 1 s per million keys: 1,000,000 in %.2f s, 10,000,000 in "
	    "%.2f s (%.2f bits a key): %s\n", build1, build10, bits10,
	    build1 >= 0 && build1 <= 1 && build10 >= 0 && build10 <= 10 ? "met" : "MISSED");
	out(stdout, f, "  (loading the million-key list into the instance: built in %.2f s, %u "
	    "retries)\n", info.build_s, info.retries);
	watch_lengths_run(f, seq, w, &l);
	free(watch_refs);	/* the shapes' rows make their own */
	watch_refs = NULL;
	watch_shapes_run(f, seq, w);
	goto out;
fail:
	nwatch_refs = 0;
	out(stdout, f, "\nwatch lists: failed\n");
out:
	free(watch_refs);
	watch_refs = NULL;
	free(l.e);
	l.e = NULL;
}

int bench_watch(struct bench_run *r)
{
	watch_run(r->f, r->seq);
	return 0;
}

/* BENCH_WATCH_LIST=FILE, or watch-list=FILE: only what that list costs */
int bench_watch_list(struct bench_run *r)
{
	return make_bloomtap(&targets[P_WATCH], "watch", false, false, 0, 0, 0) ||
	       watch_user_list_run(r->f, r->seq, &targets[P_WATCH], r->arg);
}
