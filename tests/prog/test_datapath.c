// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The real XDP program under BPF_PROG_TEST_RUN: a table of one-frame cases
 * (one per header kind and per failure, each with the counters it moves and
 * the key it gets), then the tests that need several frames. */
#include "testlib.h"
#include "frames.h"
#include "core/capture.h"
#include "zipf.h"
#include "report/counters.h"
#include "report/trace_query.h"

enum { P_ICMP = 1, P_TCP = 6, P_UDP = 17, P_ROUTING = 43, P_FRAG = 44,
       P_AH = 51, P_ICMPV6 = 58, P_NONE = 59, P_DSTOPTS = 60, P_SCTP = 132,
       P_HOPOPTS = 0 };

static const uint8_t v4_src[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
static const uint8_t v4_dst[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };
static const uint8_t v6_src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t v6_dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

/* One frame into a fresh program; its counters and (at most) one flow. */
static void run_one(struct dp *dp, struct frame *f, __u64 c[BT_CTR_MAX])
{
	dp_run(dp, f->b, f->len);
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_PACKETS], 1);
	assert_int_equal(c[BT_CTR_BYTES], f->len);
}

static void assert_key(struct dp *dp, const uint8_t *src, const uint8_t *dst,
		       uint16_t sport, uint16_t dport, uint8_t proto, uint64_t bytes)
{
	struct bt_flow_key k;
	struct bt_flow_val v;

	dp_only_flow(dp, &k, &v);
	assert_memory_equal(k.src, src, 16);
	assert_memory_equal(k.dst, dst, 16);
	assert_int_equal(ntohs(k.sport), sport);
	assert_int_equal(ntohs(k.dport), dport);
	assert_int_equal(k.proto, proto);
	assert_int_equal(k.pad[0] | k.pad[1] | k.pad[2], 0);
	assert_int_equal(v.packets, 1);
	assert_int_equal(v.bytes, bytes);
}

/* ---- one frame each: a fixture table ----
 * Each row builds one frame, names the parse counters it must move (every
 * other parse counter must stay 0) and the flow key it must get, if any. */

static void ipv4_udp(struct frame *f, uint8_t proto, uint8_t ihl, uint16_t frag,
		     uint16_t sport, uint16_t dport, size_t l4len, size_t payload)
{
	size_t ip;

	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, proto, ihl, frag);
	fr_ports(f, sport, dport, l4len);
	fr_put(f, NULL, payload);
	fr_ipv4_done(f, ip);
}

static void ipv6_simple(struct frame *f, uint8_t proto, uint16_t sport,
			uint16_t dport, size_t l4len)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, proto);
	fr_ports(f, sport, dport, l4len);
	fr_ipv6_done(f, ip);
}

static void build_ipv4_ihl_below_5(struct frame *f)
{
	ipv4_udp(f, P_UDP, 4, 0, 1, 2, 8, 0);
}

static void build_ipv4_total_length_below_header(struct frame *f)
{
	ipv4_udp(f, P_UDP, 5, 0, 1, 2, 8, 0);
	f->b[14 + 3] = 19;	/* total length 19 < 20-byte header */
}

static void build_ipv4_version_disagrees(struct frame *f)
{
	ipv4_udp(f, P_UDP, 5, 0, 1, 2, 8, 0);
	f->b[14] = 0x65;
}

/* Ethernet pads short frames to 60 bytes: bytes past the IP total length
 * are not an L4 header. */
static void build_ipv4_padding_is_not_l4(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, P_TCP, 5, 0);
	fr_u16(f, 4000);	/* 2 bytes of TCP inside the IP packet */
	fr_ipv4_done(f, ip);
	fr_u16(f, 5000);	/* padding that looks like a port */
	fr_put(f, NULL, 60 - f->len);
}

static void build_vlan_three_tags(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x88a8);
	fr_vlan(f, 10, 0x8100);
	fr_vlan(f, 20, 0x8100);
	fr_vlan(f, 30, 0x0800);
	ip = fr_ipv4(f, P_UDP, 5, 0);
	fr_ports(f, 53, 53, 8);
	fr_ipv4_done(f, ip);
}

static void build_ipv6_ext_chain_too_long(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, P_DSTOPTS);
	for (int i = 0; i < 9; i++)	/* one more than BT_MAX_IPV6_EXT */
		fr_ext6(f, i == 8 ? P_UDP : P_DSTOPTS, 1);
	fr_ports(f, 7, 9, 8);
	fr_ipv6_done(f, ip);
}

static void build_ipv6_ext_longer_than_payload(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, P_HOPOPTS);
	fr_ext6(f, P_UDP, 2);
	fr_ports(f, 7, 9, 8);
	fr_ipv6_done(f, ip);
	f->b[14 + 41] = 200;	/* hop-by-hop claims 1608 bytes */
}

static void build_ipv4_udp_df(struct frame *f)
{
	ipv4_udp(f, P_UDP, 5, 0x4000 /* DF */, 12345, 53, 8, 7);
}

static void build_ipv4_tcp_with_options(struct frame *f)
{
	ipv4_udp(f, P_TCP, 15, 0, 80, 40000, 20, 0);	/* 40 bytes of options */
}

static void build_ipv4_sctp(struct frame *f)
{
	ipv4_udp(f, P_SCTP, 5, 0, 2905, 2906, 12, 0);
}

static void build_ipv4_icmp(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x0800);
	ip = fr_ipv4(f, P_ICMP, 5, 0);
	fr_icmp(f, 3, 13);	/* unreachable, administratively prohibited */
	fr_ipv4_done(f, ip);
}

static void build_ipv4_first_fragment(struct frame *f)
{
	ipv4_udp(f, P_UDP, 5, 0x2000 /* MF, offset 0 */, 1000, 2000, 8, 16);
}

static void build_ipv6_udp(struct frame *f)
{
	ipv6_simple(f, P_UDP, 546, 547, 8);
}

static void build_ipv6_icmpv6(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, P_ICMPV6);
	fr_icmp(f, 135, 0);	/* neighbour solicitation */
	fr_ipv6_done(f, ip);
}

static void build_ipv6_extension_headers(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, P_HOPOPTS);
	fr_ext6(f, P_ROUTING, 1);
	fr_ext6(f, P_DSTOPTS, 3);
	fr_ext6(f, P_AH, 2);
	fr_ah(f, P_TCP);
	fr_ports(f, 22, 60000, 20);
	fr_ipv6_done(f, ip);
}

static void build_ipv6_first_fragment(struct frame *f)
{
	size_t ip;

	fr_eth(f, 0x86dd);
	ip = fr_ipv6(f, P_FRAG);
	fr_frag6(f, P_SCTP, 0, 1);
	fr_ports(f, 36412, 36412, 12);
	fr_ipv6_done(f, ip);
}

static void build_arp(struct frame *f)
{
	fr_eth(f, 0x0806);
	fr_put(f, NULL, 28);
}

/* A 9000-byte frame does not fit a page: the kernel hands the program a
 * multi-buffer xdp_buff (dp_run picks bloomtap_xdp_mb), and bytes count the
 * whole frame. */
static void build_jumbo_multibuffer(struct frame *f)
{
	ipv4_udp(f, P_UDP, 5, 0, 7000, 7001, 8, 9000 - 14 - 20 - 8);
}

#define C(x) (1u << BT_CTR_##x)

struct frame_case {
	const char *name;
	void (*build)(struct frame *f);
	uint32_t counted;	/* the parse counters that move, by one */
	bool keyed;		/* else no flow at all */
	bool v6;
	uint8_t proto;
	uint16_t sport, dport;
};

static const struct frame_case frame_cases[] = {
	/* failure cases first, after the kernel's BPF selftests */
	{ "ipv4 IHL below 5", build_ipv4_ihl_below_5,
	  C(L3_IPV4) | C(L4_OTHER) | C(MALFORMED) },
	{ "ipv4 total length below its header", build_ipv4_total_length_below_header,
	  C(L3_IPV4) | C(L4_OTHER) | C(MALFORMED) },
	{ "ipv4 version disagrees with the ethertype", build_ipv4_version_disagrees,
	  C(L3_IPV4) | C(L4_OTHER) | C(MALFORMED) },
	{ "ipv4 padding is not L4", build_ipv4_padding_is_not_l4,
	  C(L3_IPV4) | C(L4_TCP) | C(TRUNCATED), true, false, P_TCP, 0, 0 },
	{ "three VLAN tags: too deep", build_vlan_three_tags,
	  C(L3_OTHER) | C(VLAN) | C(TOO_DEEP) },
	/* keyed by the header the walk stopped at */
	{ "ipv6 extension chain too long", build_ipv6_ext_chain_too_long,
	  C(L3_IPV6) | C(L4_OTHER) | C(TOO_DEEP), true, true, P_DSTOPTS, 0, 0 },
	{ "ipv6 extension longer than the payload", build_ipv6_ext_longer_than_payload,
	  C(L3_IPV6) | C(L4_OTHER) | C(TRUNCATED), true, true, P_HOPOPTS, 0, 0 },
	/* good packets, one per header kind */
	{ "ipv4 udp", build_ipv4_udp_df,
	  C(L3_IPV4) | C(L4_UDP), true, false, P_UDP, 12345, 53 },
	{ "ipv4 tcp with options", build_ipv4_tcp_with_options,
	  C(L3_IPV4) | C(L4_TCP), true, false, P_TCP, 80, 40000 },
	{ "ipv4 sctp", build_ipv4_sctp,
	  C(L3_IPV4) | C(L4_SCTP), true, false, P_SCTP, 2905, 2906 },
	/* ICMP type and code take the ports' places */
	{ "ipv4 icmp", build_ipv4_icmp,
	  C(L3_IPV4) | C(L4_ICMP), true, false, P_ICMP, 3, 13 },
	{ "ipv4 first fragment", build_ipv4_first_fragment,
	  C(L3_IPV4) | C(L4_UDP) | C(FRAGMENTS), true, false, P_UDP, 1000, 2000 },
	{ "ipv6 udp", build_ipv6_udp,
	  C(L3_IPV6) | C(L4_UDP), true, true, P_UDP, 546, 547 },
	{ "ipv6 icmpv6", build_ipv6_icmpv6,
	  C(L3_IPV6) | C(L4_ICMPV6), true, true, P_ICMPV6, 135, 0 },
	{ "ipv6 extension headers", build_ipv6_extension_headers,
	  C(L3_IPV6) | C(L4_TCP), true, true, P_TCP, 22, 60000 },
	{ "ipv6 first fragment", build_ipv6_first_fragment,
	  C(L3_IPV6) | C(L4_SCTP) | C(FRAGMENTS), true, true, P_SCTP, 36412, 36412 },
	{ "arp is L3 other", build_arp, C(L3_OTHER) },
	{ "jumbo frame, multi-buffer", build_jumbo_multibuffer,
	  C(L3_IPV4) | C(L4_UDP), true, false, P_UDP, 7000, 7001 },
};

static void test_one_frame(void **state)
{
	struct dp *dp = *state;
	const struct frame_case *fc;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];

	skip_unless_root();
	fc = dp->arg;
	fc->build(&f);
	run_one(dp, &f, c);
	for (int i = BT_CTR_L3_IPV4; i <= BT_CTR_TOO_DEEP; i++)
		if (c[i] != !!(fc->counted & 1u << i))
			fail_msg("%s: %s is %llu", fc->name, bt_counter_names[i],
				 (unsigned long long)c[i]);
	if (!fc->keyed) {
		assert_int_equal(dp_nflows(dp), 0);
		return;
	}
	assert_key(dp, fc->v6 ? v6_src : v4_src, fc->v6 ? v6_dst : v4_dst,
		   fc->sport, fc->dport, fc->proto, f.len);
}

/* The row rides in through cmocka's initial state; dp_setup replaces it. */
static int frame_case_setup(void **state)
{
	const void *fc = *state;

	if (dp_setup(state))
		return -1;	/* *state still holds the row, not an instance */
	if (*state)
		((struct dp *)*state)->arg = fc;
	return 0;
}

static void test_runt_refused_by_kernel(void **state)
{
	struct dp *dp = *state;
	uint8_t b[13] = { 0 };
	uint32_t act;

	skip_unless_root();
	/* Why replay skips runts: the kernel refuses test frames < ETH_HLEN. */
	assert_int_equal(bt_run_frame(dp->inst.prog_fd, b, sizeof(b), &act), -EINVAL);
}

/* ---- several frames each ---- */

/* Every prefix of a VLAN/IPv4-with-options/TCP frame: always XDP_PASS and
 * counted; truncated unless whole; keyed once the IP header is in, ports
 * once their 4 bytes are. */
static void test_truncated_at_every_offset_v4(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX], prev[BT_CTR_MAX] = { 0 };
	size_t ip, ip_end, len;

	skip_unless_root();
	fr_eth(&f, 0x8100);
	fr_vlan(&f, 7, 0x0800);
	ip = fr_ipv4(&f, P_TCP, 6, 0);
	ip_end = f.len;
	fr_ports(&f, 443, 55555, 20);
	fr_ipv4_done(&f, ip);
	for (len = 14; len <= f.len; len++) {
		dp_run(dp, f.b, len);
		dp_counters(dp, c);
		assert_int_equal(c[BT_CTR_PACKETS] - prev[BT_CTR_PACKETS], 1);
		assert_int_equal(c[BT_CTR_BYTES] - prev[BT_CTR_BYTES], len);
		assert_int_equal(c[BT_CTR_TRUNCATED] - prev[BT_CTR_TRUNCATED], len < f.len);
		assert_int_equal(c[BT_CTR_L3_IPV4] - prev[BT_CTR_L3_IPV4], len >= 18);
		memcpy(prev, c, sizeof(c));
	}
	/* flows: unported ones while the ports were cut, then the full key */
	struct bt_flow_ent *e;
	size_t n, keyed = 0;

	assert_int_equal(bt_flow_table_dump(dp->inst.flows_fd, &e, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		keyed += e[i].val.packets;
		if (e[i].key.sport) {
			assert_int_equal(ntohs(e[i].key.sport), 443);
			assert_int_equal(ntohs(e[i].key.dport), 55555);
			assert_int_equal(e[i].val.packets, f.len - (ip_end + 4) + 1);
		}
	}
	assert_int_equal(keyed, f.len - ip_end + 1);
	free(e);
}

static void test_truncated_at_every_offset_v6(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX], prev[BT_CTR_MAX] = { 0 };
	size_t ip, len;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_HOPOPTS);
	fr_ext6(&f, P_FRAG, 1);
	fr_frag6(&f, P_UDP, 0, 1);
	fr_ports(&f, 5353, 5353, 8);
	fr_ipv6_done(&f, ip);
	for (len = 14; len <= f.len; len++) {
		dp_run(dp, f.b, len);
		dp_counters(dp, c);
		assert_int_equal(c[BT_CTR_TRUNCATED] - prev[BT_CTR_TRUNCATED], len < f.len);
		assert_int_equal(c[BT_CTR_L3_IPV6] - prev[BT_CTR_L3_IPV6], 1);
		memcpy(prev, c, sizeof(c));
	}
	/* complete frames only are fragments with ports */
	assert_int_equal(c[BT_CTR_FRAGMENTS], f.len - (14 + 40 + 8 + 8) + 1);
}

/* A later fragment's ports are payload bytes, not a header: it joins the
 * unported flow of its addresses. */
static void test_ipv4_later_fragment(void **state)
{
	struct dp *dp = *state;
	struct frame g = { 0 };
	__u64 c[BT_CTR_MAX];

	skip_unless_root();
	ipv4_udp(&g, P_UDP, 5, 3 /* offset 24 bytes, last */, 9999, 9999, 8, 0);
	run_one(dp, &g, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 1);
	assert_int_equal(c[BT_CTR_L4_UDP], 1);
	assert_key(dp, v4_src, v4_dst, 0, 0, P_UDP, g.len);
}

/* One tag, two (802.1ad outside), and two with the pre-802.1ad QinQ
 * outer tag 0x9100: all keyed under their tags. */
static void test_vlan_one_and_two_tags(void **state)
{
	struct dp *dp = *state;
	__u64 c[BT_CTR_MAX];
	const uint16_t outer[3] = { 0x8100, 0x88a8, 0x9100 };

	skip_unless_root();
	for (int t = 0; t < 3; t++) {
		struct frame f = { 0 };
		size_t ip;

		fr_eth(&f, outer[t]);
		if (t)
			fr_vlan(&f, 100, 0x8100);
		fr_vlan(&f, 200, 0x0800);
		ip = fr_ipv4(&f, P_UDP, 5, 0);
		fr_ports(&f, 4789, 4789, 8);
		fr_ipv4_done(&f, ip);
		dp_run(dp, f.b, f.len);
	}
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_VLAN], 3);
	assert_int_equal(c[BT_CTR_L4_UDP], 3);
	assert_int_equal(c[BT_CTR_TOO_DEEP], 0);
	assert_int_equal(dp_nflows(dp), 1);
}

static void test_ipv6_later_fragment(void **state)
{
	struct dp *dp = *state;
	struct frame g = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&g, 0x86dd);
	ip = fr_ipv6(&g, P_FRAG);
	fr_frag6(&g, P_SCTP, 100, 0);
	fr_ports(&g, 1, 1, 12);
	fr_ipv6_done(&g, ip);
	run_one(dp, &g, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 1);
	assert_int_equal(c[BT_CTR_L4_SCTP], 1);
	assert_key(dp, v6_src, v6_dst, 0, 0, P_SCTP, g.len);
}

/* Hostile input: random bytes of every length up to 1,514, and every
 * packet of every capture with bits flipped and cut short. Every frame must
 * get XDP_PASS and the counters must stay consistent (dp_counters checks
 * that the classes add up). */
static void test_fuzzed_frames(void **state)
{
	struct dp *dp = *state;
	uint64_t rng = 0xf022;
	uint8_t buf[1514];
	__u64 c[BT_CTR_MAX];
	size_t frames = 0;
	FILE *manifest;
	char line[4096];

	skip_unless_root();
	for (uint32_t len = 0; len <= sizeof(buf); len++) {
		uint32_t act;

		for (uint32_t i = 0; i < len; i++)
			buf[i] = bt_rng(&rng);
		/* every length; a few ethertypes the parser goes deeper for */
		if (len >= 14 && len % 3 == 0)
			buf[12] = 0x08, buf[13] = len % 2 ? 0x00 : 0x06;
		if (len >= 14 && len % 5 == 0)
			buf[12] = 0x86, buf[13] = 0xdd, buf[14 % len] = 0x60;
		if (len < 14) {
			assert_int_equal(bt_run_frame(dp->inst.prog_mb_fd, buf, len, &act), -EINVAL);
			continue;
		}
		dp_run(dp, buf, len);
		frames++;
	}
	manifest = fopen(BT_PCAPS "/MANIFEST.tsv", "r");
	if (manifest) {
		assert_non_null(fgets(line, sizeof(line), manifest));
		while (fgets(line, sizeof(line), manifest)) {
			char path[4200], msg[512];
			struct bt_capture *cap;
			struct bt_packet p;

			*strchr(line, '\t') = 0;
			snprintf(path, sizeof(path), BT_PCAPS "/%s", line);
			if (bt_capture_open(path, &cap, msg, sizeof(msg)))
				continue;
			while (bt_capture_next(cap, &p) == 1) {
				uint8_t m[16384];
				uint32_t len = p.len < sizeof(m) ? p.len : sizeof(m);

				if (p.skip || len < 14)
					continue;
				for (int round = 0; round < 2; round++) {
					memcpy(m, p.data, len);
					for (int flips = 1 + bt_rng(&rng) % 3; flips; flips--) {
						uint64_t r = bt_rng(&rng);

						m[r % len] ^= 1 << (r >> 32) % 8;
					}
					/* and cut short, somewhere past the Ethernet header */
					uint32_t cut = round ? 14 + bt_rng(&rng) % (len - 13) : len;

					dp_run(dp, m, cut);
					frames++;
				}
			}
			bt_capture_close(cap);
		}
		fclose(manifest);
	}
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_PACKETS], frames);
	print_message("fuzzed frames: %zu, all XDP_PASS, counters consistent\n", frames);
}

#define DP_TEST(fn) cmocka_unit_test_setup_teardown(fn, dp_setup, dp_teardown)

int main(void)
{
	const struct CMUnitTest multi[] = {
		DP_TEST(test_runt_refused_by_kernel),
		DP_TEST(test_truncated_at_every_offset_v4),
		DP_TEST(test_truncated_at_every_offset_v6),
		DP_TEST(test_ipv4_later_fragment),
		DP_TEST(test_vlan_one_and_two_tags),
		DP_TEST(test_ipv6_later_fragment),
		DP_TEST(test_fuzzed_frames),
	};
	enum { NROWS = sizeof(frame_cases) / sizeof(frame_cases[0]),
	       NMULTI = sizeof(multi) / sizeof(multi[0]) };
	struct CMUnitTest tests[NROWS + NMULTI];

	for (int i = 0; i < NROWS; i++)
		tests[i] = (struct CMUnitTest){
			.name = frame_cases[i].name,
			.test_func = test_one_frame,
			.setup_func = frame_case_setup,
			.teardown_func = dp_teardown,
			.initial_state = (void *)&frame_cases[i],
		};
	memcpy(tests + NROWS, multi, sizeof(multi));
	libbpf_set_print(NULL);
	return cmocka_run_group_tests_name("datapath (BPF_PROG_TEST_RUN)", tests, NULL, NULL);
}
