// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The real XDP program under BPF_PROG_TEST_RUN: one frame template per
 * header kind, each test asserting the counters and the parsed key. Failure
 * cases first (after the kernel's BPF selftests), then the good packets. */
#include "testlib.h"
#include "frames.h"
#include "capture.h"
#include "zipf.h"

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

/* ---- failure cases ---- */

static void test_runt_refused_by_kernel(void **state)
{
	struct dp *dp = *state;
	uint8_t b[13] = { 0 };
	uint32_t act;

	skip_unless_root();
	/* Why replay skips runts: the kernel refuses test frames < ETH_HLEN. */
	assert_int_equal(bt_run_frame(dp->inst.prog_fd, b, sizeof(b), &act), -EINVAL);
}

static void test_ipv4_ihl_below_5(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 4, 0);
	fr_ports(&f, 1, 2, 8);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_MALFORMED], 1);
	assert_int_equal(c[BT_CTR_L3_IPV4], 1);
	assert_int_equal(c[BT_CTR_L4_OTHER], 1);
	assert_int_equal(c[BT_CTR_L4_UDP], 0);
	assert_int_equal(dp_nflows(dp), 0);
}

static void test_ipv4_total_length_below_header(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];

	skip_unless_root();
	fr_eth(&f, 0x0800);
	fr_ipv4(&f, P_UDP, 5, 0);
	fr_ports(&f, 1, 2, 8);
	f.b[14 + 3] = 19;	/* total length 19 < 20-byte header */
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_MALFORMED], 1);
	assert_int_equal(dp_nflows(dp), 0);
}

static void test_ipv4_version_disagrees_with_ethertype(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 5, 0);
	fr_ports(&f, 1, 2, 8);
	fr_ipv4_done(&f, ip);
	f.b[14] = 0x65;
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_MALFORMED], 1);
	assert_int_equal(dp_nflows(dp), 0);
}

/* Ethernet pads short frames to 60 bytes: bytes past the IP total length
 * are not an L4 header. */
static void test_ipv4_padding_is_not_l4(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_TCP, 5, 0);
	fr_u16(&f, 4000);	/* 2 bytes of TCP inside the IP packet */
	fr_ipv4_done(&f, ip);
	fr_u16(&f, 5000);	/* padding that looks like a port */
	fr_put(&f, NULL, 60 - f.len);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_TRUNCATED], 1);
	assert_int_equal(c[BT_CTR_L4_TCP], 1);
	assert_key(dp, v4_src, v4_dst, 0, 0, P_TCP, f.len);
}

static void test_vlan_three_tags_too_deep(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x88a8);
	fr_vlan(&f, 10, 0x8100);
	fr_vlan(&f, 20, 0x8100);
	fr_vlan(&f, 30, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 5, 0);
	fr_ports(&f, 53, 53, 8);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_TOO_DEEP], 1);
	assert_int_equal(c[BT_CTR_VLAN], 1);
	assert_int_equal(c[BT_CTR_L3_OTHER], 1);
	assert_int_equal(dp_nflows(dp), 0);
}

static void test_ipv6_ext_chain_too_long(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_DSTOPTS);
	for (int i = 0; i < 9; i++)	/* one more than BT_MAX_IPV6_EXT */
		fr_ext6(&f, i == 8 ? P_UDP : P_DSTOPTS, 1);
	fr_ports(&f, 7, 9, 8);
	fr_ipv6_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_TOO_DEEP], 1);
	assert_int_equal(c[BT_CTR_L3_IPV6], 1);
	assert_int_equal(c[BT_CTR_L4_OTHER], 1);
	/* keyed by the header the walk stopped at */
	assert_key(dp, v6_src, v6_dst, 0, 0, P_DSTOPTS, f.len);
}

static void test_ipv6_ext_longer_than_payload(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_HOPOPTS);
	fr_ext6(&f, P_UDP, 2);
	fr_ports(&f, 7, 9, 8);
	fr_ipv6_done(&f, ip);
	f.b[14 + 41] = 200;	/* hop-by-hop claims 1608 bytes */
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_TRUNCATED], 1);
	assert_key(dp, v6_src, v6_dst, 0, 0, P_HOPOPTS, f.len);
}

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

/* ---- good packets, one per header kind ---- */

static void test_ipv4_udp(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 5, 0x4000 /* DF */);
	fr_ports(&f, 12345, 53, 8);
	fr_put(&f, "payload", 7);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L3_IPV4], 1);
	assert_int_equal(c[BT_CTR_L4_UDP], 1);
	assert_int_equal(c[BT_CTR_FRAGMENTS] + c[BT_CTR_TRUNCATED] + c[BT_CTR_MALFORMED], 0);
	assert_key(dp, v4_src, v4_dst, 12345, 53, P_UDP, f.len);
}

static void test_ipv4_tcp_with_options(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_TCP, 15, 0);	/* 40 bytes of options */
	fr_ports(&f, 80, 40000, 20);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L4_TCP], 1);
	assert_key(dp, v4_src, v4_dst, 80, 40000, P_TCP, f.len);
}

static void test_ipv4_sctp_and_icmp(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 }, g = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_SCTP, 5, 0);
	fr_ports(&f, 2905, 2906, 12);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L4_SCTP], 1);
	assert_key(dp, v4_src, v4_dst, 2905, 2906, P_SCTP, f.len);

	fr_eth(&g, 0x0800);
	ip = fr_ipv4(&g, P_ICMP, 5, 0);
	fr_icmp(&g, 3, 13);	/* unreachable, administratively prohibited */
	fr_ipv4_done(&g, ip);
	dp_run(dp, g.b, g.len);
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_L4_ICMP], 1);
	assert_int_equal(dp_nflows(dp), 2);
	struct bt_flow_key k = { .proto = P_ICMP, .sport = htons(3), .dport = htons(13) };
	struct bt_flow_val v;

	memcpy(k.src, v4_src, 16);
	memcpy(k.dst, v4_dst, 16);
	assert_int_equal(bpf_map_lookup_elem(dp->inst.flows_fd, &k, &v), 0);
	assert_int_equal(v.bytes, g.len);
}

static void test_ipv4_fragments(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 }, g = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 5, 0x2000 /* MF, offset 0 */);
	fr_ports(&f, 1000, 2000, 8);
	fr_put(&f, NULL, 16);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 1);
	assert_key(dp, v4_src, v4_dst, 1000, 2000, P_UDP, f.len);

	fr_eth(&g, 0x0800);
	ip = fr_ipv4(&g, P_UDP, 5, 3 /* offset 24 bytes, last */);
	fr_ports(&g, 9999, 9999, 8);	/* payload bytes, not a header */
	fr_ipv4_done(&g, ip);
	dp_run(dp, g.b, g.len);
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 2);
	assert_int_equal(c[BT_CTR_L4_UDP], 2);
	struct bt_flow_key k = { .proto = P_UDP };
	struct bt_flow_val v;

	memcpy(k.src, v4_src, 16);
	memcpy(k.dst, v4_dst, 16);
	assert_int_equal(bpf_map_lookup_elem(dp->inst.flows_fd, &k, &v), 0);
	assert_int_equal(v.packets, 1);
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

static void test_ipv6_udp_and_icmpv6(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 }, g = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_UDP);
	fr_ports(&f, 546, 547, 8);
	fr_ipv6_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L3_IPV6], 1);
	assert_int_equal(c[BT_CTR_L4_UDP], 1);
	assert_key(dp, v6_src, v6_dst, 546, 547, P_UDP, f.len);

	fr_eth(&g, 0x86dd);
	ip = fr_ipv6(&g, P_ICMPV6);
	fr_icmp(&g, 135, 0);	/* neighbour solicitation */
	fr_ipv6_done(&g, ip);
	dp_run(dp, g.b, g.len);
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_L4_ICMPV6], 1);
	struct bt_flow_key k = { .proto = P_ICMPV6, .sport = htons(135) };
	struct bt_flow_val v;

	memcpy(k.src, v6_src, 16);
	memcpy(k.dst, v6_dst, 16);
	assert_int_equal(bpf_map_lookup_elem(dp->inst.flows_fd, &k, &v), 0);
}

static void test_ipv6_extension_headers(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_HOPOPTS);
	fr_ext6(&f, P_ROUTING, 1);
	fr_ext6(&f, P_DSTOPTS, 3);
	fr_ext6(&f, P_AH, 2);
	fr_ah(&f, P_TCP);
	fr_ports(&f, 22, 60000, 20);
	fr_ipv6_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L4_TCP], 1);
	assert_int_equal(c[BT_CTR_TRUNCATED] + c[BT_CTR_TOO_DEEP], 0);
	assert_key(dp, v6_src, v6_dst, 22, 60000, P_TCP, f.len);
}

static void test_ipv6_fragments(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 }, g = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x86dd);
	ip = fr_ipv6(&f, P_FRAG);
	fr_frag6(&f, P_SCTP, 0, 1);
	fr_ports(&f, 36412, 36412, 12);
	fr_ipv6_done(&f, ip);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 1);
	assert_key(dp, v6_src, v6_dst, 36412, 36412, P_SCTP, f.len);

	fr_eth(&g, 0x86dd);
	ip = fr_ipv6(&g, P_FRAG);
	fr_frag6(&g, P_SCTP, 100, 0);
	fr_ports(&g, 1, 1, 12);
	fr_ipv6_done(&g, ip);
	dp_run(dp, g.b, g.len);
	dp_counters(dp, c);
	assert_int_equal(c[BT_CTR_FRAGMENTS], 2);
	assert_int_equal(c[BT_CTR_L4_SCTP], 2);
	assert_int_equal(dp_nflows(dp), 2);
}

static void test_arp_is_l3_other(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];

	skip_unless_root();
	fr_eth(&f, 0x0806);
	fr_put(&f, NULL, 28);
	run_one(dp, &f, c);
	assert_int_equal(c[BT_CTR_L3_OTHER], 1);
	assert_int_equal(c[BT_CTR_L4_OTHER] + c[BT_CTR_TRUNCATED] + c[BT_CTR_MALFORMED], 0);
	assert_int_equal(dp_nflows(dp), 0);
}

/* A 9000-byte frame does not fit a page: the kernel hands the program a
 * multi-buffer xdp_buff, and bytes count the whole frame. */
static void test_jumbo_multibuffer(void **state)
{
	struct dp *dp = *state;
	struct frame f = { 0 };
	__u64 c[BT_CTR_MAX];
	size_t ip;

	skip_unless_root();
	fr_eth(&f, 0x0800);
	ip = fr_ipv4(&f, P_UDP, 5, 0);
	fr_ports(&f, 7000, 7001, 8);
	fr_put(&f, NULL, 9000 - f.len);
	fr_ipv4_done(&f, ip);
	run_one(dp, &f, c);	/* through bloomtap_xdp_mb (dp_run) */
	assert_key(dp, v4_src, v4_dst, 7000, 7001, P_UDP, 9000);
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
	const struct CMUnitTest tests[] = {
		DP_TEST(test_runt_refused_by_kernel),
		DP_TEST(test_ipv4_ihl_below_5),
		DP_TEST(test_ipv4_total_length_below_header),
		DP_TEST(test_ipv4_version_disagrees_with_ethertype),
		DP_TEST(test_ipv4_padding_is_not_l4),
		DP_TEST(test_vlan_three_tags_too_deep),
		DP_TEST(test_ipv6_ext_chain_too_long),
		DP_TEST(test_ipv6_ext_longer_than_payload),
		DP_TEST(test_truncated_at_every_offset_v4),
		DP_TEST(test_truncated_at_every_offset_v6),
		DP_TEST(test_ipv4_udp),
		DP_TEST(test_ipv4_tcp_with_options),
		DP_TEST(test_ipv4_sctp_and_icmp),
		DP_TEST(test_ipv4_fragments),
		DP_TEST(test_vlan_one_and_two_tags),
		DP_TEST(test_ipv6_udp_and_icmpv6),
		DP_TEST(test_ipv6_extension_headers),
		DP_TEST(test_ipv6_fragments),
		DP_TEST(test_arp_is_l3_other),
		DP_TEST(test_jumbo_multibuffer),
		DP_TEST(test_fuzzed_frames),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests_name("datapath (BPF_PROG_TEST_RUN)", tests, NULL, NULL);
}
