// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* User-space pieces without the kernel: option parsing, capture reading
 * and conversion, flow key formatting, hex input. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <cmocka.h>
#include <pcap/pcap.h>
#include "core/capture.h"
#include "core/digest.h"
#include "core/links.h"
#include "core/segments.h"
#include "core/pcapng.h"
#include "base/common.h"
#include "report/flow.h"
#include "core/archive.h"
#include "core/gapcode.h"
#include "instance/drops.h"
#include "instance/sketch.h"
#include <bpf/btf.h>
#include "report/ipfix.h"
#include "base/options.h"
#include "report/trace_query.h"
#include "agent/webconfig.h"
#include "core/workloads.h"
#include "instance/wltable.h"
#include "agent/agent_state.h"
#include "agent/metrics.h"
#include "report/pathtrace.h"
#include "base/timeparse.h"
#include "base/util.h"
#include <time.h>

/* ---- options ---- */

static void test_parse_u64_rejects(void **state)
{
	uint64_t v;

	assert_int_equal(bt_parse_u64("", 0, 10, &v), -EINVAL);
	assert_int_equal(bt_parse_u64("-1", 0, 10, &v), -EINVAL);
	assert_int_equal(bt_parse_u64("12abc", 0, 100, &v), -EINVAL);
	assert_int_equal(bt_parse_u64("1Kb", 0, 1 << 20, &v), -EINVAL);
	assert_int_equal(bt_parse_u64("11", 0, 10, &v), -ERANGE);
	assert_int_equal(bt_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(bt_parse_u64("17179869184G", 0, UINT64_MAX, &v), -ERANGE);
}

static void test_parse_u64_accepts(void **state)
{
	uint64_t v;

	assert_int_equal(bt_parse_u64("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(bt_parse_u64("0x20", 0, 100, &v), 0);
	assert_int_equal(v, 32);
	assert_int_equal(bt_parse_u64("64M", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(bt_parse_u64("2k", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 2048);
}

/* attach's sentence on the sketch, with every field at its widest (egress
 * maps too), ends whole in a buffer of BT_DESCRIBE_MAX */
static void read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = 0;
	if (f)
		fclose(f);
}

/* bt_sh, the labs' shell lines (make bench's, the demo's): the line made
 * as printf makes it, 0 only for an exit status of 0, and what the line
 * prints thrown away (its own redirections come first, so a last
 * command's > only truncates its file) */
static void test_sh(void **state)
{
	char path[] = "/tmp/bt-sh-XXXXXX", buf[32];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_sh("test %d -eq %s", 7, "7"), 0);
	assert_int_equal(bt_sh("exit %d", 3), -1);
	assert_int_equal(bt_sh("no-such-command-%d", 60), -1);
	assert_int_equal(bt_sh("(printf %s >%s)", "formatted", path), 0);
	read_small(path, buf, sizeof(buf));
	assert_string_equal(buf, "formatted");
	assert_int_equal(bt_sh("printf %s >%s", "lost", path), 0);
	read_small(path, buf, sizeof(buf));
	assert_string_equal(buf, "");
	unlink(path);
}

static void test_sketch_describe_whole(void **state)
{
	struct bt_meta m = {
		.flags = BT_META_EGRESS_MAPS, .ncpu = 4294967295u, .key_mode = 0,
		.depth = 4294967295u, .width = 3, .fm_slots = 4294967295u,
	};
	char buf[BT_DESCRIBE_MAX];
	const char *p;

	(void)state;
	bt_sketch_describe(&m, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf) - 1);
	p = strstr(buf, "of the interval's bytes with probability ");
	assert_non_null(p);
	assert_string_equal(p + strlen("of the interval's bytes with probability "),
			    "0.6321, and by t times that with probability at least 1 - 1/(e t) (one "
			    "counter's bound: a line's counters are not independent)");
}

static void test_parse_double_and_enum(void **state)
{
	static const char *const modes[] = { "auto", "native", "skb", NULL };
	double d;
	int e;

	assert_int_equal(bt_parse_double("1e-4", 1e-9, 0.5, &d), 0);
	assert_true(d == 1e-4);
	assert_int_equal(bt_parse_double("0.9", 1e-9, 0.5, &d), -ERANGE);
	assert_int_equal(bt_parse_double("nan", 0, 1, &d), -EINVAL);
	assert_int_equal(bt_parse_double("1x", 0, 1, &d), -EINVAL);
	assert_int_equal(bt_parse_enum("skb", modes, &e), 0);
	assert_int_equal(e, 2);
	assert_int_equal(bt_parse_enum("SKB", modes, &e), -EINVAL);
}

static struct {
	bool flag;
	uint32_t n;
	const char *s;
	int mode;
} cfg;
static const char *const mode_names[] = { "a", "bb", NULL };
static const struct bt_opt opts[] = {
	{ "flag", 'f', BT_OPT_FLAG, &cfg.flag, NULL, "a flag" },
	{ "number", 'n', BT_OPT_U32, &cfg.n, "N", "a number", .min = 1, .max = 100 },
	{ "string", 's', BT_OPT_STRING, &cfg.s, "S", "a string" },
	{ "mode", 0, BT_OPT_ENUM, &cfg.mode, "M", "a mode", .choices = mode_names },
	{ 0 }
};
static const struct bt_cmd_spec spec = { "t", "ARG", "test", opts, 1, 2 };

/* The parser prints what was wrong; keep expected errors out of the log. */
static int saved_stderr = -1;

static void quiet(bool on)
{
	if (on) {
		int fd = open("/dev/null", O_WRONLY);

		fflush(stderr);
		saved_stderr = dup(2);
		dup2(fd, 2);
		close(fd);
	} else {
		fflush(stderr);
		dup2(saved_stderr, 2);
		close(saved_stderr);
	}
}

static int parse(int argc, ...)
{
	static char *argv[16];
	va_list ap;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	va_start(ap, argc);
	argv[0] = "t";
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	quiet(true);
	ret = bt_parse_args(&spec, argc, argv);
	quiet(false);
	return ret;
}

static void test_parse_args_errors(void **state)
{
	assert_int_equal(parse(2, "--nope"), -EINVAL);		/* unknown */
	assert_int_equal(parse(3, "x", "--number"), -EINVAL);	/* missing value */
	assert_int_equal(parse(4, "x", "--number", "0"), -EINVAL);	/* range */
	assert_int_equal(parse(4, "x", "--number", "101"), -EINVAL);
	assert_int_equal(parse(3, "x", "--flag=1"), -EINVAL);	/* flag with value */
	assert_int_equal(parse(3, "x", "--mode=c"), -EINVAL);	/* bad enum */
	assert_int_equal(parse(1), -EINVAL);			/* too few positionals */
	assert_int_equal(parse(4, "x", "y", "z"), -EINVAL);	/* too many */
}

static void test_parse_args_values(void **state)
{
	char out[] = "x";

	assert_int_equal(parse(8, "--flag", "-n", "42", out, "--string=hello", "--mode", "bb"), 1);
	assert_true(cfg.flag);
	assert_int_equal(cfg.n, 42);
	assert_string_equal(cfg.s, "hello");
	assert_int_equal(cfg.mode, 1);
	/* unique prefixes, and -- ends the options */
	assert_int_equal(parse(5, "--num", "7", "--", "-x"), 1);
	assert_int_equal(cfg.n, 7);
}

/* ---- capture reading ---- */

static char tmpdir[] = "/tmp/bt-unit-XXXXXX";

static void write_capture(const char *path, int dlt, const uint8_t *pkt, uint32_t len,
			  int count)
{
	pcap_t *p = pcap_open_dead(dlt, 65535);
	pcap_dumper_t *d = pcap_dump_open(p, path);
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	assert_non_null(d);
	for (int i = 0; i < count; i++) {
		h.ts.tv_sec = 1700000000 + i;
		pcap_dump((u_char *)d, &h, pkt);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

static const uint8_t ipv4_udp[28] = {
	0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
	0x30, 0x39, 0, 53, 0, 8, 0, 0,
};

static void read_one(const char *path, struct bt_packet *p, struct bt_capture **c)
{
	char err[256];

	assert_int_equal(bt_capture_open(path, c, err, sizeof(err)), 0);
	assert_int_equal(bt_capture_next(*c, p), 1);
}

static void test_capture_missing_and_garbage(void **state)
{
	struct bt_capture *c;
	char err[512], path[256];
	FILE *f;

	assert_int_equal(bt_capture_open("/nonexistent/x.pcap", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/nonexistent/x.pcap"));
	snprintf(path, sizeof(path), "%s/garbage", tmpdir);
	f = fopen(path, "w");
	fputs("this is not a capture file, not at all\n", f);
	fclose(f);
	assert_int_equal(bt_capture_open(path, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot read as a capture"));
}

static void test_capture_truncated_file(void **state)
{
	struct bt_capture *c;
	struct bt_packet p;
	char path[256];
	uint8_t eth[42] = { [12] = 0x08, [13] = 0x00 };
	int rc, n = 0;

	memcpy(eth + 14, ipv4_udp, sizeof(ipv4_udp));
	snprintf(path, sizeof(path), "%s/trunc.pcap", tmpdir);
	write_capture(path, DLT_EN10MB, eth, sizeof(eth), 3);
	/* cut the last record in half */
	assert_int_equal(truncate(path, 24 + 2 * (16 + 42) + 16 + 10), 0);
	read_one(path, &p, &c);
	n = 1;
	while ((rc = bt_capture_next(c, &p)) == 1)
		n++;
	assert_int_equal(n, 2);
	assert_true(rc < 0);
	assert_true(strlen(bt_capture_error(c)) > 0);
	bt_capture_close(c);
}

static void test_capture_ethernet_untouched(void **state)
{
	uint8_t eth[42] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00 };
	struct bt_capture *c;
	struct bt_packet p;
	char path[256];

	memcpy(eth + 14, ipv4_udp, sizeof(ipv4_udp));
	snprintf(path, sizeof(path), "%s/eth.pcap", tmpdir);
	write_capture(path, DLT_EN10MB, eth, sizeof(eth), 1);
	read_one(path, &p, &c);
	assert_null(p.skip);
	assert_int_equal(p.len, sizeof(eth));
	assert_memory_equal(p.data, eth, sizeof(eth));
	assert_int_equal(p.ts.tv_sec, 1700000000);
	assert_int_equal(bt_capture_len_delta(c), 0);
	assert_int_equal(bt_capture_next(c, &p), 0);	/* end of file */
	bt_capture_close(c);
}

static void test_capture_raw_ip_gets_ethernet(void **state)
{
	struct bt_capture *c;
	struct bt_packet p;
	char path[256];

	snprintf(path, sizeof(path), "%s/raw.pcap", tmpdir);
	write_capture(path, DLT_RAW, ipv4_udp, sizeof(ipv4_udp), 1);
	read_one(path, &p, &c);
	assert_null(p.skip);
	assert_int_equal(p.len, 14 + sizeof(ipv4_udp));
	assert_int_equal(p.data[12], 0x08);
	assert_int_equal(p.data[13], 0x00);
	assert_memory_equal(p.data + 14, ipv4_udp, sizeof(ipv4_udp));
	assert_int_equal(bt_capture_len_delta(c), 14);
	bt_capture_close(c);
}

static void test_capture_linux_cooked(void **state)
{
	uint8_t sll[16 + 28] = { 0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 9, 0, 0, 0x08, 0x00 };
	struct bt_capture *c;
	struct bt_packet p;
	char path[256];

	memcpy(sll + 16, ipv4_udp, sizeof(ipv4_udp));
	snprintf(path, sizeof(path), "%s/sll.pcap", tmpdir);
	write_capture(path, DLT_LINUX_SLL, sll, sizeof(sll), 1);
	read_one(path, &p, &c);
	assert_null(p.skip);
	assert_int_equal(p.len, 14 + sizeof(ipv4_udp));
	assert_int_equal(p.data[12] << 8 | p.data[13], 0x0800);
	assert_memory_equal(p.data + 14, ipv4_udp, sizeof(ipv4_udp));
	assert_int_equal(bt_capture_len_delta(c), -2);
	bt_capture_close(c);
}

static void test_capture_unsupported_linktype_skipped(void **state)
{
	struct bt_capture *c;
	struct bt_packet p;
	char path[256];

	snprintf(path, sizeof(path), "%s/ieee80211.pcap", tmpdir);
	write_capture(path, DLT_IEEE802_11, ipv4_udp, sizeof(ipv4_udp), 1);
	read_one(path, &p, &c);
	assert_non_null(p.skip);
	assert_non_null(strstr(p.skip, "link type"));
	bt_capture_close(c);
}

static void test_capture_pcapng_from_shared(void **state)
{
	const char *path = BT_PCAPS "/libpcap__rarp_req_reply.pcapng";
	struct bt_capture *c;
	struct bt_packet p;
	int n = 0;

	if (access(path, R_OK)) {
		print_message("SKIP: %s not found (run from the checkout)\n", path);
		skip();
	}
	read_one(path, &p, &c);
	n = 1;	/* read_one() read the first */
	while (bt_capture_next(c, &p) == 1)
		n++;
	assert_int_equal(n, 2);	/* MANIFEST.tsv: 2 packets (a RARP request and its reply) */
	assert_string_equal(bt_capture_linktype_name(c), "EN10MB");
	bt_capture_close(c);
}

/* ---- merged buffers cut into segments (core/segments.c) ---- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* tcpdump's of10_s4810.pcap, frame 19: 4,104 bytes of TCP in one IPv4
 * packet (DF, ID 0xcf6d) from 10.0.0.20:6633, whose peer's SYN (frame 1)
 * announced an MSS of 1,380 and whose own (frame 2) 1,460; timestamps
 * (a 32-byte TCP header). The sender cut at 1,380 - 12 = 1,368: three
 * segments, which the capture itself confirms: the flow's next packet
 * (frame 20) has ID 0xcf70, three on, and the sequence number right
 * after the 4,104 bytes. */
static void test_seg_split_shared_capture(void **state)
{
	const char *path = BT_PCAPS "/tcpdump__of10_s4810.pcap";
	static uint8_t f19[4200], f20[300];
	struct bt_seg_flows *fl = bt_seg_flows_new();
	struct bt_seg_split *s = malloc(sizeof(*s));
	struct bt_spie_packet sp, whole;
	struct bt_capture *c;
	struct bt_packet p;
	uint32_t n19 = 0, n20 = 0, seq0;
	int num = 0;
	char err[256];

	if (access(path, R_OK)) {
		print_message("SKIP: %s not found (run from the checkout)\n", path);
		skip();
	}
	assert_non_null(fl);
	assert_non_null(s);
	assert_int_equal(bt_capture_open(path, &c, err, sizeof(err)), 0);
	while (bt_capture_next(c, &p) == 1) {
		int off = bt_frame_ip_offset(p.data, p.len);

		num++;
		assert_true(off >= 0);
		bt_seg_learn(fl, p.data + off, p.len - off);
		if (num == 19 && p.len - off <= sizeof(f19))
			memcpy(f19, p.data + off, n19 = p.len - off);
		if (num == 20 && p.len - off <= sizeof(f20))
			memcpy(f20, p.data + off, n20 = p.len - off);
	}
	bt_capture_close(c);
	assert_int_equal(n19, 4156);	/* tshark: ip.len 4156, tcp.len 4104 */
	assert_true(n20 > 40);
	assert_int_equal(bt_seg_split(fl, f19, n19, 0, s), 3);
	assert_int_equal(s->from, BT_SEG_FROM_SYN);
	assert_int_equal(s->size, 1368);
	assert_int_equal(s->variants, 1);	/* the flow's IDs go up: incremented */
	seq0 = get32(f19 + 24);
	for (uint32_t i = 0; i < 3; i++) {
		const uint8_t *h = s->head[i];

		assert_int_equal(s->head_len[i], 52);
		assert_int_equal(h[2] << 8 | h[3], 20 + 32 + 1368);
		assert_int_equal(h[4] << 8 | h[5], 0xcf6d + i);
		assert_int_equal(get32(h + 24), seq0 + 1368 * i);
		assert_int_equal(s->seq[i], seq0 + 1368 * i);
		assert_memory_equal(h + 12, f19 + 12, 8);	/* the addresses */
		assert_memory_equal(h + 20, f19 + 20, 4);	/* the ports */
		assert_int_equal(bt_spie_packet_ip(h, s->head_len[i], &sp), 0);
	}
	/* what the sender did next: the ID and the sequence after the three */
	assert_int_equal(f20[4] << 8 | f20[5], (s->head[2][4] << 8 | s->head[2][5]) + 1);
	assert_int_equal(get32(f20 + 24), s->seq[2] + 1368);
	/* the whole packet's digest is none of its segments' */
	assert_int_equal(bt_spie_packet_ip(f19, n19, &whole), 0);
	assert_memory_not_equal(whole.w, sp.w, sizeof(sp.w));
	/* --mss overrides what the capture says */
	assert_int_equal(bt_seg_split(fl, f19, n19, 1000, s), 5);
	assert_int_equal(s->from, BT_SEG_FROM_GIVEN);
	/* an unmerged packet of the flow (frame 20, 128 bytes) is left whole */
	assert_int_equal(bt_seg_split(fl, f20, n20, 0, s), 0);
	assert_null(s->why);
	bt_seg_flows_free(fl);
	free(s);
}

/* A flow's segments as Linux's TSO sends them: IPv4 (DF, IDs from id0,
 * or all id0) or IPv6, TCP with timestamps or UDP, payloads of size bytes
 * but the last (last bytes), each with its own payload. */
static uint32_t make_seg(uint8_t *b, bool v6, bool tcp, uint32_t i, uint32_t pay, uint32_t size,
			 bool fixed_id, uint8_t flags)
{
	uint32_t hl = v6 ? 40 : 20, l4h = tcp ? 32 : 8, seq = 1000000 + i * size, id = 0x1234;

	memset(b, 0, hl + l4h + pay);
	if (v6) {
		b[0] = 0x60;
		b[4] = (l4h + pay) >> 8;
		b[5] = l4h + pay;
		b[6] = tcp ? 6 : 17;
		b[7] = 64;
		b[8] = 0x20; b[9] = 0x01; b[10] = 0x0d; b[11] = 0xb8; b[23] = 1;
		b[24] = 0x20; b[25] = 0x01; b[26] = 0x0d; b[27] = 0xb8; b[39] = 2;
	} else {
		b[0] = 0x45;
		b[2] = (hl + l4h + pay) >> 8;
		b[3] = hl + l4h + pay;
		id = fixed_id ? id : id + i;
		b[4] = id >> 8;
		b[5] = id;
		b[6] = 0x40;	/* DF */
		b[8] = 64;
		b[9] = tcp ? 6 : 17;
		b[12] = 198; b[13] = 18; b[14] = 41; b[15] = 1;
		b[16] = 198; b[17] = 18; b[18] = 41; b[19] = 2;
	}
	b[hl] = 0x9c; b[hl + 1] = 0x40;		/* port 40000 */
	b[hl + 2] = 0x9c; b[hl + 3] = 0x4a;	/* port 40010 */
	if (tcp) {
		b[hl + 4] = seq >> 24; b[hl + 5] = seq >> 16; b[hl + 6] = seq >> 8; b[hl + 7] = seq;
		b[hl + 12] = 0x80;	/* 32 bytes: NOP, NOP, timestamps */
		b[hl + 13] = flags;
		b[hl + 20] = b[hl + 21] = 1;
		b[hl + 22] = 8;
		b[hl + 23] = 10;
	} else {
		b[hl + 4] = (8 + pay) >> 8;
		b[hl + 5] = 8 + pay;
	}
	for (uint32_t j = 0; j < pay; j++)
		b[hl + l4h + j] = (i * size + j) * 7 + 3;
	return hl + l4h + pay;
}

/* The segments of a flow merged as GRO merges them (the first's headers,
 * the length fields of the whole, the last's PSH), cut again: each
 * segment's digest words are the original's. */
static void roundtrip(bool v6, bool tcp, bool fixed_id, uint32_t mss, bool learn_id)
{
	enum { SEGS = 5, LAST = 700 };
	/* a full segment fits 1,500 bytes: IPv6 TCP's MSS is 1,428 */
	const uint32_t SIZE = v6 && tcp ? 1428 : 1448;
	static uint8_t seg[SEGS][1600], merged[SEGS * 1600], one[1600];
	struct bt_seg_flows *fl = bt_seg_flows_new();
	struct bt_seg_split *s = malloc(sizeof(*s));
	uint32_t len[SEGS], hdrs = (v6 ? 40 : 20) + (tcp ? 32 : 8), mlen, pay = 0;

	assert_non_null(fl);
	assert_non_null(s);
	for (uint32_t i = 0; i < SEGS; i++)
		len[i] = make_seg(seg[i], v6, tcp, i, i + 1 < SEGS ? SIZE : LAST, SIZE, fixed_id,
				  0x10 | (i + 1 == SEGS ? 0x08 : 0));
	/* the flow's size, from one unmerged segment of it */
	bt_seg_learn(fl, seg[0], len[0]);
	if (learn_id)	/* two in a row show the sender's IDs */
		bt_seg_learn(fl, seg[1], len[1]);
	memcpy(merged, seg[0], hdrs);
	mlen = hdrs;
	for (uint32_t i = 0; i < SEGS; i++) {
		memcpy(merged + mlen, seg[i] + hdrs, len[i] - hdrs);
		mlen += len[i] - hdrs;
		pay += len[i] - hdrs;
	}
	if (v6) {
		merged[4] = (mlen - 40) >> 8;
		merged[5] = mlen - 40;
	} else {
		merged[2] = mlen >> 8;
		merged[3] = mlen;
	}
	if (tcp)
		merged[hdrs - 32 + 13] |= 0x08;	/* PSH, from the last */
	else {
		merged[hdrs - 4] = (8 + pay) >> 8;
		merged[hdrs - 3] = 8 + pay;
	}
	assert_int_equal(bt_seg_split(fl, merged, mlen, mss, s), SEGS);
	assert_int_equal(s->size, SIZE);
	assert_int_equal(s->from, mss ? BT_SEG_FROM_GIVEN : BT_SEG_FROM_LARGEST);
	/* IPv6 has no ID; IPv4 with DF: the flow's packets in a row tell, or
	 * both are tried, incremented first */
	assert_int_equal(s->variants, v6 || learn_id ? 1 : 2);
	for (uint32_t i = 0; i < SEGS; i++) {
		uint32_t k = (s->variants == 2 && fixed_id ? SEGS : 0) + i;
		struct bt_spie_packet a, b;

		assert_int_equal(bt_spie_packet_ip(seg[i], len[i], &a), 0);
		assert_int_equal(bt_spie_packet_ip(s->head[k], s->head_len[k], &b), 0);
		assert_memory_equal(a.w, b.w, sizeof(a.w));
		if (tcp)	/* PSH on the last alone, as TSO leaves it */
			assert_int_equal(s->head[k][hdrs - 32 + 13], seg[i][hdrs - 32 + 13]);
	}
	/* a segment alone is not merged */
	memcpy(one, seg[1], len[1]);
	assert_int_equal(bt_seg_split(fl, one, len[1], mss, s), 0);
	assert_null(s->why);
	bt_seg_flows_free(fl);
	free(s);
}

static void test_seg_split_roundtrip(void **state)
{
	roundtrip(false, true, false, 0, true);		/* IPv4 TCP, IDs incremented */
	roundtrip(false, true, true, 0, true);		/* fixed IDs, learned */
	roundtrip(false, true, false, 0, false);	/* unknown: both tried */
	roundtrip(false, true, true, 0, false);
	roundtrip(true, true, false, 0, false);		/* IPv6 TCP */
	roundtrip(false, false, false, 0, true);	/* UDP GRO */
	roundtrip(true, false, false, 1448, false);	/* IPv6 UDP, --mss */
}

/* Merged buffers that cannot be cut say why; packets GRO never merges
 * are left whole. */
static void test_seg_split_refusals(void **state)
{
	static uint8_t b[9000];
	struct bt_seg_split *s = malloc(sizeof(*s));
	struct bt_seg_flows *fl = bt_seg_flows_new();
	uint32_t n;

	assert_non_null(s);
	/* no size known: the merged buffer is named, with what to do */
	n = make_seg(b, false, true, 0, 4000, 4000, false, 0x10);
	assert_int_equal(bt_seg_split(fl, b, n, 0, s), 0);
	assert_non_null(s->why);
	assert_non_null(strstr(s->why, "capture with GRO off, or give --mss"));
	assert_int_equal(bt_seg_split(NULL, b, n, 0, s), 0);
	assert_non_null(s->why);
	/* a packet no larger than an Ethernet MTU: traced as it is */
	n = make_seg(b, false, true, 0, 1400, 1400, false, 0x10);
	assert_int_equal(bt_seg_split(fl, b, n, 0, s), 0);
	assert_null(s->why);
	/* a SYN (with data) or an IPv4 fragment: never merged */
	n = make_seg(b, false, true, 0, 4000, 4000, false, 0x02);
	assert_int_equal(bt_seg_split(fl, b, n, 1000, s), 0);
	n = make_seg(b, false, true, 0, 4000, 4000, false, 0x10);
	b[6] |= 0x20;	/* more fragments */
	assert_int_equal(bt_seg_split(fl, b, n, 1000, s), 0);
	/* UDP whose later datagrams the capture cut off (snap length) */
	n = make_seg(b, false, false, 0, 4000, 4000, false, 0);
	assert_int_equal(bt_seg_split(fl, b, 200, 1000, s), 0);
	assert_non_null(strstr(s->why, "snap length"));
	assert_int_equal(bt_seg_split(fl, b, n, 1000, s), 4);
	/* TCP's digest needs its headers alone: cut from a capture of 100 bytes */
	n = make_seg(b, false, true, 0, 4000, 4000, false, 0x10);
	assert_int_equal(bt_seg_split(fl, b, 100, 1000, s), 4);
	/* a size below TCP's smallest MSS, given: left whole, with the reason
	 * (BT_SEGS_MAX is then out of a 16-bit length's reach) */
	n = make_seg(b, false, true, 0, 8000, 8000, false, 0x10);
	assert_int_equal(bt_seg_split(fl, b, n, 7, s), 0);
	assert_non_null(strstr(s->why, "below TCP's smallest MSS"));
	assert_int_equal(bt_seg_split(fl, b, n, BT_SEG_MIN - 1, s), 0);
	assert_int_equal(bt_seg_split(fl, b, n, BT_SEG_MIN, s), (8000 + 87) / 88);
	bt_seg_flows_free(fl);
	free(s);
}

/* A SYN's MSS option below TCP's smallest MSS (1, without options, would
 * make each byte of a packet a segment to search): not taken, the packet
 * left whole with the reason; at the floor, taken. The segments have 12
 * bytes of TCP options (timestamps): an MSS of 99 is 87 bytes a segment,
 * of 100 88. */
static void test_seg_split_syn_mss_floor(void **state)
{
	static uint8_t b[9000];
	struct bt_seg_split *s = malloc(sizeof(*s));
	uint32_t n, mss[] = { 1, 99, 100 };

	assert_non_null(s);
	for (int k = 0; k < 3; k++) {
		struct bt_seg_flows *fl = bt_seg_flows_new();

		assert_non_null(fl);
		n = make_seg(b, false, true, 0, 0, 0, false, 0x02);	/* the SYN */
		b[40] = 2;		/* kind MSS, length 4 (in place of a NOP, NOP, TS) */
		b[41] = 4;
		b[42] = mss[k] >> 8;
		b[43] = mss[k];
		memset(b + 44, 1, 8);	/* NOPs */
		bt_seg_learn(fl, b, n);
		n = make_seg(b, false, true, 1, 4000, 4000, false, 0x10);
		if (mss[k] < 100) {
			assert_int_equal(bt_seg_split(fl, b, n, 0, s), 0);
			assert_non_null(s->why);
			/* 1 is not even the options: no size at all */
			assert_non_null(strstr(s->why, mss[k] == 1 ? "give --mss" :
					       "below TCP's smallest MSS"));
		} else {
			assert_int_equal(bt_seg_split(fl, b, n, 0, s), (4000 + 87) / 88);
			assert_int_equal(s->size, 88);
			assert_int_equal(s->from, BT_SEG_FROM_SYN);
		}
		bt_seg_flows_free(fl);
	}
	free(s);
}

/* ---- formatting ---- */

static void test_addr_and_flow_format(void **state)
{
	struct bt_flow_key k = { .sport = htons(443), .dport = htons(51000), .proto = 6 };
	char buf[160];

	k.src[10] = k.src[11] = 0xff;
	k.src[12] = 198; k.src[13] = 18; k.src[14] = 0; k.src[15] = 1;
	k.dst[0] = 0x20; k.dst[1] = 0x01; k.dst[2] = 0x0d; k.dst[3] = 0xb8; k.dst[15] = 2;
	assert_string_equal(bt_addr_str(k.src, buf, sizeof(buf)), "198.18.0.1");
	assert_string_equal(bt_addr_str(k.dst, buf, sizeof(buf)), "2001:db8::2");
	assert_string_equal(bt_flow_str(&k, buf, sizeof(buf)),
			    "198.18.0.1:443 -> 2001:db8::2:51000 tcp");
	memcpy(k.dst, k.src, 16);
	assert_string_equal(bt_flow_str(&k, buf, sizeof(buf)),
			    "198.18.0.1:443 -> 198.18.0.1:51000 tcp");
	assert_string_equal(bt_proto_name(47, buf, sizeof(buf)), "47");
	assert_string_equal(bt_proto_name(58, buf, sizeof(buf)), "icmpv6");
}

static void test_flow_json(void **state)
{
	struct bt_flow_key k = { .sport = htons(53), .dport = htons(1234), .proto = 17 };
	struct json_object *o = json_object_new_object();

	k.src[10] = k.src[11] = 0xff;
	k.src[12] = 10;
	k.dst[0] = 0xfe; k.dst[1] = 0x80; k.dst[15] = 1;
	bt_flow_key_json(o, &k);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"src\":\"10.0.0.0\",\"dst\":\"fe80::1\",\"sport\":53,"
			    "\"dport\":1234,\"proto\":17}");
	json_object_put(o);
}

static void test_hex_input(void **state)
{
	uint8_t b[8];

	assert_int_equal(bt_parse_hex("45 00 0x1c:ff", b, sizeof(b)), 4);
	assert_int_equal(b[0], 0x45);
	assert_int_equal(b[2], 0x1c);
	assert_int_equal(b[3], 0xff);
	assert_int_equal(bt_parse_hex("4", b, sizeof(b)), -EINVAL);	/* odd */
	assert_int_equal(bt_parse_hex("zz", b, sizeof(b)), -EINVAL);
	assert_int_equal(bt_parse_hex("", b, sizeof(b)), -EINVAL);
	assert_int_equal(bt_parse_hex("000102030405060708", b, sizeof(b)), -EINVAL);
}

static int group_setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* --ipfix destinations: transports, IPv6 in brackets, the default port,
 * and what is refused. */
static void test_ipfix_dest(void **state)
{
	struct bt_ipfix_dest d[BT_IPFIX_MAX_DEST];
	char err[256];
	int n;

	assert_int_equal(bt_ipfix_parse_dest("tcp:[2001:db8::1]:4740", d, err, sizeof(err)), 0);
	assert_int_equal(d[0].transport, BT_IPFIX_TCP);
	assert_string_equal(d[0].host, "2001:db8::1");
	assert_string_equal(d[0].port, "4740");
	assert_int_equal(bt_ipfix_parse_dest("collector.example", d, err, sizeof(err)), 0);
	assert_int_equal(d[0].transport, BT_IPFIX_UDP);
	assert_string_equal(d[0].host, "collector.example");
	assert_string_equal(d[0].port, BT_IPFIX_DEFAULT_PORT);
	assert_int_equal(bt_ipfix_parse_dest("udp:198.18.0.1:2055", d, err, sizeof(err)), 0);
	assert_string_equal(d[0].host, "198.18.0.1");
	assert_string_equal(d[0].port, "2055");
	assert_int_equal(bt_ipfix_parse_list("198.18.0.1:1,tcp:[::1]:2", d, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(d[1].transport, BT_IPFIX_TCP);
	assert_string_equal(d[1].host, "::1");
	static const char *const bad[] = { "2001:db8::1:4739", "[::1", "[::1]x", ":4739",
					   "h:0", "h:65536", "h:", "h:12a", "tcp:" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bt_ipfix_parse_dest(bad[i], d, err, sizeof(err)), -EINVAL);
	assert_int_equal(bt_ipfix_parse_list("a:1,b:2,c:3,d:4,e:5", d, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(bt_ipfix_parse_list(",", d, &n, err, sizeof(err)), -EINVAL);
}

/* Drop reasons as the running kernel names them (its BTF): a name's code
 * and back, a subsystem's reason without its module, the suppression
 * lists, the dropped flow's reason in its key, IPFIX's status codes. */
static void test_drop_reasons(void **state)
{
	__u64 bits[BT_DROP_REASONS / 64];
	struct bt_flow_key k = { 0 };
	__u32 nf, code;
	char buf[96];
	int n;

	if (!bt_drop_reasons(&n)) {
		print_message("no kernel BTF: skipped\n");
		skip();
	}
	assert_true(n > 50);
	assert_int_equal(bt_drop_reason_code("NETFILTER_DROP", &nf), 0);
	assert_int_equal(bt_drop_reason_code("SKB_DROP_REASON_NETFILTER_DROP", &code), 0);
	assert_int_equal(code, nf);
	assert_string_equal(bt_drop_reason_name(nf, buf, sizeof(buf)), "NETFILTER_DROP");
	assert_int_equal(bt_drop_reason_code("NO_SUCH_REASON", &code), -ENOENT);
	/* no module BTF for a subsystem: its number, the core's name for it */
	bt_drop_reason_name(2u << 16 | 3, buf, sizeof(buf));
	assert_non_null(strstr(buf, "subsystem 2"));
	assert_non_null(strstr(buf, "reason 3"));
	bt_drop_reason_name(200u << 16 | 9, buf, sizeof(buf));
	assert_string_equal(buf, "subsystem 200, reason 9");
	/* each subsystem code's name looked for in the modules' BTF once: a
	 * scrape named each reason twice, a full parse each time */
	{
		unsigned long scans = bt_drop_reason_scans();

		for (int i = 0; i < 3; i++) {
			bt_drop_reason_name(200u << 16 | 9, buf, sizeof(buf));
			assert_string_equal(buf, "subsystem 200, reason 9");
			bt_drop_reason_name(2u << 16 | 3, buf, sizeof(buf));
			assert_non_null(strstr(buf, "subsystem 2"));
		}
		assert_int_equal(bt_drop_reason_scans(), scans);
		bt_drop_reason_name(200u << 16 | 10, buf, sizeof(buf));
		assert_int_equal(bt_drop_reason_scans(), scans + 1);
	}
	/* suppression: the default, one taken out, an unknown name refused */
	assert_int_equal(bt_drops_parse_suppress("default", bits), 0);
	assert_int_equal(bt_drop_reason_code("OTHERHOST", &code), 0);
	assert_true(bits[code / 64] >> (code % 64) & 1);
	assert_false(bits[nf / 64] >> (nf % 64) & 1);
	assert_int_equal(bt_drops_parse_suppress("default,-OTHERHOST,NETFILTER_DROP", bits), 0);
	assert_false(bits[code / 64] >> (code % 64) & 1);
	assert_true(bits[nf / 64] >> (nf % 64) & 1);
	assert_int_equal(bt_drops_parse_suppress("none", bits), 0);
	for (int i = 0; i < BT_DROP_REASONS / 64; i++)
		assert_true(bits[i] == 0);
	assert_int_equal(bt_drops_parse_suppress("NETFILTER_DROPX", bits), -EINVAL);
	/* a dropped flow's key and its IPFIX status */
	k.pad[0] = nf;
	assert_int_equal(bt_flow_key_reason(&k), nf);
	assert_non_null(strstr(bt_flow_str(&k, buf, sizeof(buf)), " NETFILTER_DROP"));
	assert_int_equal(bt_forwarding_status(nf), 129);
	assert_int_equal(bt_drop_reason_code("IP_INNOROUTES", &code), 0);
	assert_int_equal(bt_forwarding_status(code), 131);
	assert_int_equal(bt_forwarding_status(200u << 16 | 9), 128);

	/* a window's reasons: two CPUs' slots merged; a reason that found no
	 * slot on a CPU makes a query try every reason of the kernel */
	struct bt_window_drops cpu0 = { .reason = { 12, 3 }, .count = { 5, 1 } };
	struct bt_window_drops cpu1 = { .reason = { 3, 16 }, .count = { 2, 4 } };
	struct bt_win_reasons wr = { 0 };
	__u32 tries[BT_DROP_REASONS];

	bt_win_reasons_add(&wr, &cpu0);
	bt_win_reasons_add(&wr, &cpu1);
	assert_int_equal(wr.n, 3);
	assert_false(wr.other);
	assert_int_equal(wr.count[0] + wr.count[1] + wr.count[2], 12);
	assert_int_equal(bt_win_reasons_try(&wr, NULL, 0, tries, BT_DROP_REASONS), 3);
	cpu1.other = 9;
	bt_win_reasons_add(&wr, &cpu1);
	assert_true(wr.other);
	/* its own three first, then every other reason once */
	assert_int_equal(bt_win_reasons_try(&wr, NULL, 0, tries, BT_DROP_REASONS), n);
	assert_int_equal(tries[0], 12);
}

/* A stacked device is an instance's outright only when all it receives
 * came through lowers tagged as it is (user/instance/drops.c refresh_uppers tags
 * the instance's interface and its outright uppers alike). */
static void test_links_only_from(void **state)
{
	enum { T = 8 };
	const struct bt_link l[] = {
		{ .ifindex = 2, .master = 10, .name = "inst" },		/* the instance's */
		{ .ifindex = 3, .master = 10, .name = "other" },	/* no instance */
		{ .ifindex = 10, .name = "br", .kind = "bridge" },
		{ .ifindex = 4, .master = 20, .name = "slave" },	/* the instance's */
		{ .ifindex = 20, .name = "bond", .kind = "bond" },
		{ .ifindex = 30, .lower = 20, .name = "bond.5", .kind = "vlan" },
		{ .ifindex = 40, .lower = 4, .name = "mv0", .kind = "macvlan" },
		{ .ifindex = 41, .lower = 4, .name = "mv1", .kind = "macvlan" },
		{ .ifindex = 50, .lower = 2, .name = "inst.5", .kind = "vlan" },
		{ .ifindex = 51, .lower = 2, .name = "inst.6", .kind = "vlan" },
	};
	size_t n = sizeof(l) / sizeof(l[0]);
	__u32 tag[] = { T, 0, T, T, T, T, T, T, T, T };

	(void)state;
	assert_false(bt_links_only_from(l, n, 2, tag));	/* the other port is not */
	tag[1] = T;
	assert_true(bt_links_only_from(l, n, 2, tag));
	assert_true(bt_links_only_from(l, n, 4, tag));	/* a bond of one slave */
	assert_true(bt_links_only_from(l, n, 5, tag));	/* a VLAN on it */
	tag[4] = T | 1;					/* the bond, not outright */
	assert_false(bt_links_only_from(l, n, 5, tag));
	/* macvlan siblings pass packets to each other; VLANs do not */
	assert_false(bt_links_only_from(l, n, 6, tag));
	assert_true(bt_links_only_from(l, n, 8, tag));
}

/* A macvlan or ipvlan takes its siblings' packets without the lower's
 * receive by its mode, whether or not a sibling is in the namespace
 * dumped (one moved to another namespace is not). */
static void test_links_only_from_mode(void **state)
{
	enum { T = 8 };
	struct bt_link l[] = {
		{ .ifindex = 2, .name = "inst" },	/* the instance's */
		{ .ifindex = 40, .lower = 2, .name = "mv0", .kind = "macvlan" },
	};
	const __u32 tag[] = { T, T };
	static const struct {
		const char *kind;
		__u32 mode;
		__u16 flags;
		bool outright;
	} c[] = {
		{ "macvlan", MACVLAN_MODE_BRIDGE, 0, false },	/* no sibling here */
		{ "macvlan", 0, 0, false },			/* mode not reported */
		{ "macvtap", MACVLAN_MODE_BRIDGE, 0, false },
		{ "macvlan", MACVLAN_MODE_PRIVATE, 0, true },
		{ "macvlan", MACVLAN_MODE_VEPA, 0, true },	/* back by the lower */
		{ "macvlan", MACVLAN_MODE_PASSTHRU, 0, true },
		{ "macvlan", MACVLAN_MODE_SOURCE, 0, true },
		{ "macvtap", MACVLAN_MODE_VEPA, 0, true },
		{ "ipvlan", IPVLAN_MODE_L3, 0, false },		/* bridge: the default */
		{ "ipvlan", IPVLAN_MODE_L3S, 0, false },
		{ "ipvtap", IPVLAN_MODE_L3, 0, false },
		{ "ipvlan", IPVLAN_MODE_L3, IPVLAN_F_PRIVATE, true },
		{ "ipvlan", IPVLAN_MODE_L3S, IPVLAN_F_VEPA, true },
		{ "ipvlan", IPVLAN_MODE_L2, 0, false },
		{ "ipvlan", IPVLAN_MODE_L2, IPVLAN_F_PRIVATE, false },	/* multicast */
		{ "ipvlan", IPVLAN_MODE_L2, IPVLAN_F_VEPA, false },
		{ "vlan", MACVLAN_MODE_BRIDGE, 0, true },	/* a mode means nothing */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(l[1].kind, sizeof(l[1].kind), "%s", c[i].kind);
		l[1].mode = c[i].mode;
		l[1].flags = c[i].flags;
		if (bt_links_only_from(l, 2, 1, tag) != c[i].outright)
			fail_msg("%s mode %u flags %u: outright %d, want %d", c[i].kind, c[i].mode,
				 c[i].flags, !c[i].outright, c[i].outright);
	}
	/* a macvlan in vepa mode beside a sibling in bridge mode: the
	 * sibling's frames to it go out and come back through the lower */
	{
		const struct bt_link s[] = {
			{ .ifindex = 2, .name = "inst" },
			{ .ifindex = 40, .lower = 2, .kind = "macvlan", .mode = MACVLAN_MODE_VEPA },
			{ .ifindex = 41, .lower = 2, .kind = "macvlan", .mode = MACVLAN_MODE_BRIDGE },
		};
		const __u32 st[] = { T, T, T };

		assert_true(bt_links_only_from(s, 3, 1, st));
		assert_false(bt_links_only_from(s, 3, 2, st));
	}
}

/* ---- trace's time bounds ---- */

static void test_parse_time(void **state)
{
	__u64 ns = 7, s = 0, u = 0;
	char err[300];

	assert_int_equal(bt_parse_time("0", &ns), 0);
	assert_true(ns == 0);
	assert_int_equal(bt_parse_time("18446744073", &ns), 0);
	assert_true(ns > 18446744072999990000ULL);	/* a double's rounding */
	assert_int_equal(bt_parse_time("2554-07-21T23:34:33Z", &ns), 0);
	assert_int_equal(bt_parse_time("-1h", &ns), 0);
	/* outside what __u64 nanoseconds hold: refused, never converted */
	assert_int_equal(bt_parse_time("-99999d", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("-1e300s", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("18446744074", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("1e30", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("inf", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("-infs", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("2554-07-21T23:34:34Z", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("1969-12-31T23:59:59Z", &ns), -ERANGE);
	assert_int_equal(bt_parse_time("nan", &ns), -EINVAL);
	assert_int_equal(bt_parse_time("-nan", &ns), -EINVAL);
	assert_int_equal(bt_parse_time("-5x", &ns), -EINVAL);
	/* the range: its message names the bound and the clock's range */
	assert_int_equal(bt_parse_time_range("-99999d", NULL, "--", &s, &u, err, sizeof(err)),
			 -ERANGE);
	assert_non_null(strstr(err, "--since '-99999d' is outside the clock's range: from 0 "
				    "(1970-01-01T00:00:00Z) to 18446744073 (2554-07-21T23:34:33Z)"));
	assert_int_equal(bt_parse_time_range(NULL, "x", "", &s, &u, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "until 'x': give epoch seconds"));
	/* an empty range refused; one instant, or one bound alone, taken */
	assert_int_equal(bt_parse_time_range("-1s", "-2s", "--", &s, &u, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--since '-1s' is after --until '-2s': the range is empty"));
	assert_int_equal(bt_parse_time_range("100", "100", "", &s, &u, err, sizeof(err)), 0);
	assert_int_equal(bt_parse_time_range("-2s", "-1s", "", &s, &u, err, sizeof(err)), 0);
	assert_true(s < u);
	s = u = 0;
	assert_int_equal(bt_parse_time_range("200", NULL, "", &s, &u, err, sizeof(err)), 0);
	assert_true(s == 200000000000ULL && u == 0);
}

/* The hashes bt_web_auth ran a bcrypt against, in order */
static const char *web_checked[4];
static int web_nchecked;

static void web_record(const char *hash)
{
	if (web_nchecked < 4)
		web_checked[web_nchecked] = hash;
	web_nchecked++;
}

/* Every failed check costs a bcrypt at the highest cost among the users,
 * wherever the dearest user stands in the file: an unknown name is
 * checked against the dearest hash, a cheap user's wrong password
 * against its own and the dearest. Seen through the hook, not timed (the
 * first user's cost, 4 beside 12, answered an unknown name in 2.0 ms
 * against 318 ms; a cheap user's wrong password in 2 ms against an
 * unknown name's 318). */
/* htpasswd's whole USER:HASH line pasted as the hash: said so, with the
 * part to keep */
static void test_web_htpasswd_line(void **state)
{
	char path[] = "/tmp/bt-webcfg-XXXXXX", err[600];
	struct bt_web_cfg w;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fprintf(f, "basic_auth_users:\n  prometheus: "
		"'prometheus:$2y$04$tf7F3xYlAw5Uqa6WE.ZD7O8Mx1KOocr8ryKdVlFozjRm564ORcicS'\n");
	fclose(f);
	assert_int_equal(bt_web_config_load(path, &w, err, sizeof(err)), -EINVAL);
	unlink(path);
	assert_non_null(strstr(err, "prometheus: the value is htpasswd's whole line, USER:HASH: "
				    "paste only the part after 'prometheus:'"));
}

static void test_web_dummy_hash(void **state)
{
	/* bcrypt of "x", costs 4 and 12 (python3 crypt, METHOD_BLOWFISH) */
	static const char cheap[] = "$2b$04$tf7F3xYlAw5Uqa6WE.ZD7O8Mx1KOocr8ryKdVlFozjRm564ORcicS";
	static const char dear[] = "$2b$12$l7v00i.Fnqz7pThhGB78Ou1HEUKADldBQIxxgLkPAReHc/tH5S50i";
	char path[] = "/tmp/bt-webcfg-XXXXXX", err[600];
	struct bt_web_cfg w;
	const char *d;
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fprintf(f, "basic_auth_users:\n  cheap: '%s'\n  dear: '%s'\n  cheap2: '%s'\n", cheap,
		dear, cheap);
	fclose(f);
	assert_int_equal(bt_web_config_load(path, &w, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(w.nusers, 3);
	assert_string_equal(d = bt_web_dummy_hash(&w), dear);
	bt_web_bcrypt_hook = web_record;
	assert_int_equal(bt_web_auth(&w, "nobody", "x", false), -EAGAIN);
	assert_int_equal(web_nchecked, 0);
	/* an unknown name: the dearest hash, once */
	assert_int_equal(bt_web_auth(&w, "nobody", "x", true), 0);
	assert_int_equal(web_nchecked, 1);
	assert_string_equal(web_checked[0], dear);
	/* the cheap user's wrong password: its own hash, then the dearest */
	web_nchecked = 0;
	assert_int_equal(bt_web_auth(&w, "cheap", "y", true), 0);
	assert_int_equal(web_nchecked, 2);
	assert_string_equal(web_checked[0], cheap);
	assert_string_equal(web_checked[1], dear);
	/* the dear user's wrong password: its own, which is the dearest */
	web_nchecked = 0;
	assert_int_equal(bt_web_auth(&w, "dear", "y", true), 0);
	assert_int_equal(web_nchecked, 1);
	assert_string_equal(web_checked[0], dear);
	/* the cheap user's password: its own hash alone; then cached */
	web_nchecked = 0;
	assert_int_equal(bt_web_auth(&w, "cheap", "x", true), 1);
	assert_int_equal(web_nchecked, 1);
	assert_string_equal(web_checked[0], cheap);
	assert_int_equal(bt_web_auth(&w, "cheap", "x", false), 1);
	assert_int_equal(web_nchecked, 1);
	bt_web_bcrypt_hook = NULL;
	bt_web_config_free(&w);
	memset(&w, 0, sizeof(w));
	assert_null(bt_web_dummy_hash(&w));
}

/* A kernel's BTF with only what reasons are named from: its enum
 * skb_drop_reason (code, name pairs until NULL), the subsystems' enum,
 * and openvswitch's reasons when ovs (a subsystem built in). */
static void write_btf(const char *path, const char *const *core, bool ovs)
{
	struct btf *b = btf__new_empty();
	const void *raw;
	__u32 len;
	FILE *f;

	assert_non_null(b);
	assert_true(btf__add_enum(b, "skb_drop_reason", 4) > 0);
	for (int i = 0; core[i]; i += 2)
		assert_int_equal(btf__add_enum_value(b, core[i + 1], atoi(core[i])), 0);
	assert_true(btf__add_enum(b, "skb_drop_reason_subsys", 4) > 0);
	assert_int_equal(btf__add_enum_value(b, "SKB_DROP_REASON_SUBSYS_CORE", 0), 0);
	assert_int_equal(btf__add_enum_value(b, "SKB_DROP_REASON_SUBSYS_OPENVSWITCH", 2), 0);
	if (ovs) {
		assert_true(btf__add_enum(b, "ovs_drop_reason", 4) > 0);
		assert_int_equal(btf__add_enum_value(b, "__OVS_DROP_REASON", 2 << 16), 0);
		assert_int_equal(btf__add_enum_value(b, "OVS_DROP_LAST_ACTION", (2 << 16) + 1), 0);
		assert_int_equal(btf__add_enum_value(b, "OVS_DROP_ACTION_ERROR", (2 << 16) + 2), 0);
	}
	raw = btf__raw_data(b, &len);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(raw, 1, len, f), len);
	fclose(f);
	btf__free(b);
}

static bool tried(const __u32 *codes, int n, __u32 code)
{
	for (int i = 0; i < n; i++)
		if (codes[i] == code)
			return true;
	return false;
}

/* The enum is no stable ABI: NETFILTER_DROP is 7 on Debian's 6.1 and 12
 * on 6.18, where 7 is UNIX_DISCONNECT. An archive written on one kernel
 * (BTF "old") names its reasons as that kernel did when another ("new")
 * reads it: each record's code, and for a window whose drops overflowed
 * its slots, every reason of the writer's, which a query then tries. A
 * window that overflowed tries the subsystems' reasons too (an OVS drop
 * after 7 others). */
static void test_drop_reasons_archived(void **state)
{
	static const char *const old_k[] = { "0", "SKB_NOT_DROPPED_YET", "2", "SKB_DROP_REASON_NO_SOCKET",
		"7", "SKB_DROP_REASON_NETFILTER_DROP", "9", "SKB_DROP_REASON_IP_CSUM", NULL };
	static const char *const new_k[] = { "0", "SKB_NOT_DROPPED_YET", "2", "SKB_DROP_REASON_NO_SOCKET",
		"7", "SKB_DROP_REASON_UNIX_DISCONNECT", "12", "SKB_DROP_REASON_NETFILTER_DROP",
		"13", "SKB_DROP_REASON_IP_CSUM", NULL };
	char dir[] = "/tmp/bt-test-reasons-XXXXXX", oldp[300], newp[300], path[512], buf[96];
	struct bt_meta m = { .window_bits = 32768, .k = 4, .hash_key = { 3, 5 } };
	static struct bt_bloom_block filter[2][64];
	const struct bt_window w[2] = { { .seq = 1, .start_ns = 1, .end_ns = 2, .set_bits = 8 },
					{ .seq = 2, .start_ns = 2, .end_ns = 3, .set_bits = 8 } };
	const struct bt_window *wins[2] = { &w[0], &w[1] };
	const struct bt_bloom_block *filters[2] = { filter[0], filter[1] };
	const struct bt_win_reasons r[2] = { { .n = 1, .code = { 7 }, .count = { 5 } },
					     { .n = 1, .code = { 2 }, .count = { 1 }, .other = true } };
	const struct bt_win_reasons *rp[2] = { &r[0], &r[1] }, *none[2] = { NULL, NULL };
	struct bt_archive_file *f;
	struct bt_win_reasons back;
	__u32 codes[BT_DROP_REASONS];
	const char *why;
	int n;

	filter[0][0].w[0] = filter[1][0].w[0] = 0xff;
	assert_non_null(mkdtemp(dir));
	snprintf(oldp, sizeof(oldp), "%s/old.btf", dir);
	snprintf(newp, sizeof(newp), "%s/new.btf", dir);
	write_btf(oldp, old_k, false);
	write_btf(newp, new_k, true);

	bt_drop_reasons_from(oldp);
	assert_int_equal(bt_archive_write(dir, "reasons", &m,
					  &(struct bt_archive_batch){ wins, filters, rp, 2, 64 },
					  path, sizeof(path)), 0);
	bt_drop_reasons_from(newp);
	assert_string_equal(bt_drop_reason_name(7, buf, sizeof(buf)), "UNIX_DISCONNECT");
	assert_non_null(f = bt_archive_open(dir, strrchr(path, '/') + 1, &why));
	assert_int_equal(f->version, BT_ARCHIVE_VERSION);
	/* the offset its windows' times were turned with, recorded */
	assert_true(f->real_minus_boot != 0);
	assert_int_equal(f->win[0].start_ns - wins[0]->start_ns, f->real_minus_boot);
	bt_archive_reasons(f, 0, &back);
	assert_int_equal(back.n, 1);
	assert_int_equal(back.code[0], 7);
	assert_string_equal(bt_archive_reason_name(f, 7, buf, sizeof(buf)), "NETFILTER_DROP");
	/* the window that overflowed: the writer's reasons, 9 among them */
	bt_archive_reasons(f, 1, &back);
	assert_true(back.other);
	n = bt_win_reasons_try(&back, f->names, f->nnames, codes, BT_DROP_REASONS);
	assert_int_equal(n, 4);
	assert_int_equal(codes[0], 2);
	assert_true(tried(codes, n, 9));
	assert_false(tried(codes, n, 12));
	assert_string_equal(bt_archive_reason_name(f, 9, buf, sizeof(buf)), "IP_CSUM");
	bt_archive_close(f);

	/* a file without drops has no names: nothing more on disk */
	assert_int_equal(bt_archive_write(dir, "nodrops", &m,
					  &(struct bt_archive_batch){ wins, filters, none, 2, 64 },
					  path, sizeof(path)), 0);
	assert_non_null(f = bt_archive_open(dir, strrchr(path, '/') + 1, &why));
	assert_int_equal(f->nnames, 0);
	bt_archive_close(f);

	/* the live ring on the new kernel: a window that overflowed tries
	 * the subsystem's reasons as well, never its base marker */
	n = bt_win_reasons_try(&(struct bt_win_reasons){ .other = true }, NULL, 0, codes,
			       BT_DROP_REASONS);
	assert_true(tried(codes, n, 12));
	assert_true(tried(codes, n, (2 << 16) + 1));
	assert_true(tried(codes, n, (2 << 16) + 2));
	assert_false(tried(codes, n, 2 << 16));
	assert_string_equal(bt_drop_reason_name((2 << 16) + 2, buf, sizeof(buf)),
			    "OVS_DROP_ACTION_ERROR");

	bt_drop_reasons_from(NULL);
	assert_int_equal(bt_archive_prune(dir, NULL, 1, 0, NULL) >= 0, 1);
	unlink(oldp);
	unlink(newp);
	for (const char *k = "reasons"; k; k = strcmp(k, "reasons") ? NULL : "nodrops") {
		char key[512];

		snprintf(key, sizeof(key), "%s/%s-%016llx.key", dir, k,
			 (unsigned long long)bt_key_id(&m.hash_key));
		unlink(key);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* /proc/PID/cgroup as each runtime and driver writes it: the container id,
 * its runtime, podman's pod and the kubelet's pod UID (systemd's driver
 * writes the UID's dashes as underscores) */
static void test_workload_cgroups(void **state)
{
	const char *id = "4b6658445f2b5345b850bcd9750f5782716f01841e15c9d8f4a290b1a359a2d3";
	const char *pod = "4c674ee04cf1850af35abf9670ff8b5e737f6e69906e3a65c6b6356032a2ee09";
	const char *uid = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
	struct bt_wl_container c;
	char text[1024], buf[64];

	/* v2, systemd driver, containerd under the kubelet */
	snprintf(text, sizeof(text), "0::/kubepods.slice/kubepods-besteffort.slice/"
		 "kubepods-besteffort-pod0a1b2c3d_4e5f_6071_8293_a4b5c6d7e8f9.slice/"
		 "cri-containerd-%s.scope\n", id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, id);
	assert_string_equal(c.runtime, "containerd");
	assert_string_equal(c.pod_uid, uid);
	/* v1, cgroupfs driver, CRI-O: the unified line at "/", the others not */
	snprintf(text, sizeof(text), "12:memory:/kubepods/burstable/pod%s/crio-%s\n0::/\n", uid, id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.runtime, "cri-o");
	assert_string_equal(c.pod_uid, uid);
	/* cgroupfs under the kubelet, the id bare: the runtime says later */
	snprintf(text, sizeof(text), "9:name=systemd:/kubepods/besteffort/pod%s/%s\n", uid, id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, id);
	assert_string_equal(c.runtime, "");
	assert_string_equal(c.pod_uid, uid);
	/* the pod's own cgroup (no container): the UID alone */
	snprintf(text, sizeof(text), "0::/kubepods/besteffort/pod%s\n", uid);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, "");
	assert_string_equal(c.pod_uid, uid);
	/* a delegated cgroup names another container and pod below its own:
	 * the outermost scope and pod UID win */
	snprintf(text, sizeof(text), "0::/kubepods/besteffort/pod%s/%s/init.scope/kubepods/"
		 "podffffffff-ffff-ffff-ffff-ffffffffffff/libpod-%s.scope\n", uid, id, pod);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, id);
	assert_string_equal(c.pod_uid, uid);
	snprintf(text, sizeof(text), "0::/machine.slice/libpod-%s.scope/container/libpod-%s.scope\n",
		 id, pod);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, id);
	/* podman: cgroupfs with a pod, systemd with a pod, and alone */
	snprintf(text, sizeof(text), "4:memory:/libpod_parent/%s/libpod-%s\n", pod, id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.id, id);
	assert_string_equal(c.pod_id, pod);
	assert_string_equal(c.runtime, "podman");
	snprintf(text, sizeof(text), "0::/machine.slice/machine-libpod_pod_%s.slice/libpod-%s.scope\n",
		 pod, id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.pod_id, pod);
	assert_string_equal(c.id, id);
	snprintf(text, sizeof(text), "0::/machine.slice/libpod-%s.scope/container\n", id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.pod_id, "");
	assert_string_equal(c.runtime, "podman");
	/* conmon's scope is not the container's */
	snprintf(text, sizeof(text), "0::/machine.slice/libpod-conmon-%s.scope\n", id);
	assert_false(bt_wl_parse_cgroup(text, &c));
	/* docker, both drivers */
	snprintf(text, sizeof(text), "0::/system.slice/docker-%s.scope\n", id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.runtime, "docker");
	snprintf(text, sizeof(text), "3:cpu:/docker/%s\n", id);
	assert_true(bt_wl_parse_cgroup(text, &c));
	assert_string_equal(c.runtime, "docker");
	assert_string_equal(c.id, id);
	/* the host's own, a user's session, garbage */
	assert_false(bt_wl_parse_cgroup("0::/\n", &c));
	assert_false(bt_wl_parse_cgroup("0::/user.slice/user-0.slice/session-3.scope\n", &c));
	assert_false(bt_wl_parse_cgroup("no colons\n::\n", &c));
	assert_false(bt_wl_parse_cgroup("0::/kubepods/podnot-a-uid\n", &c));
	/* a UID that fails at its last digit leaves nothing behind: the next
	 * part of the path gives the pod's */
	memset(&c, 0, sizeof(c));
	assert_true(bt_wl_parse_cgroup("0::/kubepods/pod3f8e2c1a-1111-2222-3333-44444444444x/"
				       "pod3f8e2c1a-1111-2222-3333-555555555555/\n", &c));
	assert_string_equal(c.pod_uid, "3f8e2c1a-1111-2222-3333-555555555555");
	/* names escaped for text, never cut inside an escape */
	assert_string_equal(bt_wl_escape("a b\t\\c\xff", buf, sizeof(buf)), "a\\x20b\\x09\\x5cc\\xff");
	assert_string_equal(bt_wl_escape("\t\t\t", buf, 9), "\\x09");
}

/* The history trace reads: an address held by one generation, then
 * (after a gap) by the next; a time range names the one that held it
 * then, both when it spans the change (the one at the capture time when
 * that is one), none before or between; an id given again since (its
 * name's gen moved on) names nothing. */
static void test_workload_history(void **state)
{
	struct bt_wl_hist v[3] = {
		{ .addr = { 1, 2 }, .gen = 5, .first_ns = 100, .last_ns = 200, .id = 7 },
		{ .addr = { 1, 2 }, .gen = 6, .first_ns = 300, .last_ns = 0, .id = 8 },
		{ .addr = { 1, 3 }, .gen = 4, .first_ns = 50, .last_ns = 0, .id = 9 },
	};
	struct bt_wl_name names[BT_WL_IDS] = { 0 };
	struct bt_wl_hist_view h = { .v = v, .n = 3, .names = { names } };
	const __u64 a[2] = { 1, 2 };
	const char *out[4];

	(void)state;
	names[7] = (struct bt_wl_name){ .gen = 5, .name = "old" };
	names[8] = (struct bt_wl_name){ .gen = 6, .name = "new" };
	names[9] = (struct bt_wl_name){ .gen = 40, .name = "reused" };
	assert_int_equal(bt_wl_hist_find(&h, a, 150, 160, 155, out, 4), 1);
	assert_string_equal(out[0], "old");
	assert_int_equal(bt_wl_hist_find(&h, a, 400, 500, 0, out, 4), 1);
	assert_string_equal(out[0], "new");
	assert_int_equal(bt_wl_hist_find(&h, a, 10, 90, 0, out, 4), 0);
	assert_int_equal(bt_wl_hist_find(&h, a, 210, 290, 250, out, 4), 0);
	assert_int_equal(bt_wl_hist_find(&h, a, 150, 400, 0, out, 4), 2);
	assert_int_equal(bt_wl_hist_find(&h, a, 150, 400, 350, out, 4), 1);
	assert_string_equal(out[0], "new");
	assert_int_equal(bt_wl_hist_find(&h, a, 150, 400, 190, out, 4), 1);
	assert_string_equal(out[0], "old");
	assert_int_equal(bt_wl_hist_find(&h, (const __u64[2]){ 1, 3 }, 60, 70, 0, out, 4), 0);
}

/* /metrics' labels of a workload: its parts where the name's form has
 * them (two slashes alone say namespace/pod/container of a name whose form
 * is not known; a part count that does not match the form, a cut name:
 * workload alone), each value escaped as heavy's text prints it, then as
 * the text format wants (a backslash doubled, a quote escaped). */
static void test_metrics_workload_labels(void **state)
{
	static const struct {
		const char *name;
		int form;
		const char *want;
	} t[] = {
		{ "ns/pod/ctr", BT_WLF_NS_POD_CTR,
		  ",workload=\"ns/pod/ctr\",namespace=\"ns\",pod=\"pod\",container=\"ctr\"" },
		{ "ns/pod/ctr", BT_WLF_UNKNOWN,
		  ",workload=\"ns/pod/ctr\",namespace=\"ns\",pod=\"pod\",container=\"ctr\"" },
		{ "ns/pod", BT_WLF_NS_POD, ",workload=\"ns/pod\",namespace=\"ns\",pod=\"pod\"" },
		{ "pod/ctr", BT_WLF_POD_CTR, ",workload=\"pod/ctr\",pod=\"pod\",container=\"ctr\"" },
		{ "pod/ctr", BT_WLF_UNKNOWN, ",workload=\"pod/ctr\"" },
		{ "pod", BT_WLF_POD, ",workload=\"pod\",pod=\"pod\"" },
		{ "web", BT_WLF_CTR, ",workload=\"web\",container=\"web\"" },
		{ "netns:4026532", BT_WLF_NETNS, ",workload=\"netns:4026532\"" },
		{ "ns/pod", BT_WLF_NS_POD_CTR, ",workload=\"ns/pod\"" },	/* cut */
		{ "a/b/c/d", BT_WLF_UNKNOWN, ",workload=\"a/b/c/d\"" },
		{ "q\"t\tb\\", BT_WLF_NETNS, ",workload=\"q\\\"t\\\\x09b\\\\x5c\"" },
		{ "n\"s/p/c", BT_WLF_NS_POD_CTR,
		  ",workload=\"n\\\"s/p/c\",namespace=\"n\\\"s\",pod=\"p\",container=\"c\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *s = bt_metrics_workload_labels(t[i].name, t[i].form);

		assert_non_null(s);
		assert_string_equal(s, t[i].want);
		free(s);
	}
}

/* A heavy-flow key's workload ids: 12 bits each in its 3 spare bytes,
 * every id of both sides back as it went in, neither touching the other. */
static void test_workload_ids_in_key(void **state)
{
	(void)state;
	for (__u32 s = 0; s < BT_WL_IDS; s += 7)
		for (__u32 d = 0; d < BT_WL_IDS; d += 13) {
			struct bt_flow_key k = { .proto = 17 };

			bt_wl_pack(k.pad, s, d);
			assert_int_equal(bt_wl_unpack(k.pad, 0), s);
			assert_int_equal(bt_wl_unpack(k.pad, 1), d);
			assert_int_equal(k.proto, 17);
		}
	struct bt_flow_key k = { 0 };

	bt_wl_pack(k.pad, BT_WL_IDS - 1, 0);
	assert_int_equal(bt_wl_unpack(k.pad, 1), 0);
	bt_wl_pack(k.pad, 0, BT_WL_IDS - 1);
	assert_int_equal(bt_wl_unpack(k.pad, 0), 0);
	/* the hash's first slot is within a table */
	assert_true(bt_wl_hash(~0ULL, ~0ULL) < BT_WL_SLOTS);
}

/* bt_trace_answers' stdout, into buf */
static int answers_out(char *const *names, char *const *ans, int n, FILE *topo, const char *from,
		       char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(1), ret;
	size_t got;

	assert_non_null(tmp);
	fflush(stdout);
	dup2(fileno(tmp), 1);
	ret = bt_trace_answers(names, ans, n, topo, from);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	got = fread(buf, 1, len - 1, tmp);
	buf[got] = 0;
	fclose(tmp);
	return ret;
}

/* 1,000 agents in a chain, each saw all 64 packets: one path through
 * all of them, from the victim's end (no cap, no square array); the
 * walk's cost is printed, not asserted */
static void test_pathtrace_thousand(void **state)
{
	enum { N = 1000, NP = 64 };
	char **names = calloc(N, sizeof(char *)), **ans = calloc(N, sizeof(char *));
	char *topo = NULL, *out = malloc(1 << 20), *answer = malloc(NP * 64);
	size_t tlen = 0, o = 0;
	FILE *t = open_memstream(&topo, &tlen);
	struct timespec a, b;
	int ret, arrows = 0;

	assert_non_null(names);
	assert_non_null(answer);
	o += sprintf(answer, "[");
	for (int p = 0; p < NP; p++)
		o += sprintf(answer + o, "%s{\"packet\":%d,\"seen\":true,\"windows\":[]}", p ? "," : "",
			     p + 1);
	sprintf(answer + o, "]");
	for (int i = 0; i < N; i++) {
		assert_true(asprintf(&names[i], "a%04d", i) > 0);
		ans[i] = answer;
		if (i)
			fprintf(t, "a%04d: a%04d\n", i - 1, i);
	}
	fclose(t);
	t = fmemopen(topo, tlen, "r");
	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = answers_out(names, ans, N, t, "a0999", out, 1 << 20);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fclose(t);
	assert_int_equal(ret, 0);
	for (char *s = strstr(out, "64 packets: path"); s && (s = strstr(s, " -> ")); s += 4)
		arrows++;
	assert_int_equal(arrows, N - 1);
	assert_non_null(strstr(out, "path (source side first): a0000 -> a0001 -> "));
	printf("# the walk of 1,000 simulated answers, 64 packets: %.1f ms\n",
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(names);
	free(ans);
	free(topo);
	free(out);
	free(answer);
}

/* No topology: the agent a packet left first, then by the windows'
 * times only where they are more than the skew (2 s) apart; windows
 * that overlap give a step of unknown order; an agent that did not
 * answer is named, not placed */
static void test_pathtrace_inferred(void **state)
{
	char *names[] = { "a", "b", "c", "d" }, out[4096];
#define W(S, E, D) "{\"start\":\"2026-12-01T10:00:" S "Z\",\"end\":\"2026-12-01T10:00:" E \
		   "Z\",\"direction\":\"" D "\"}"
	char *ans[] = {
		"[{\"packet\":1,\"seen\":true,\"windows\":[" W("05.000", "06.000", "ingress") "]},"
		"{\"packet\":2,\"seen\":true,\"windows\":[" W("09.000", "10.000", "ingress") "]}]",
		"[{\"packet\":1,\"seen\":true,\"windows\":[" W("05.500", "06.500", "ingress") "]},"
		"{\"packet\":2,\"seen\":true,\"windows\":[" W("09.900", "10.900", "egress") "]}]",
		"[{\"packet\":1,\"seen\":true,\"windows\":[" W("01.000", "02.000", "ingress") "]},"
		"{\"packet\":2,\"seen\":true,\"windows\":[" W("01.000", "02.000", "ingress") "]}]",
		NULL,
	};
#undef W

	assert_int_equal(answers_out(names, ans, 4, NULL, NULL, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "1 packet: path (source side first): c -> {a, b}\n"));
	assert_non_null(strstr(out, "1 packet: path (source side first): b (left) -> c -> a\n"));
	assert_non_null(strstr(out, "order inferred"));
	assert_non_null(strstr(out, "partial answer: 1 of 4 agents did not answer: d\n"));
}

/* The pcapng writer: a packet on each of 70 devices, past any fixed table
 * of interfaces: each packet names the interface block of its own
 * device; a writer on fd -1 counts the bytes a real one writes */
static void test_pcapng_many_interfaces(void **state)
{
	char path[] = "/tmp/bt-unit-pcapng-XXXXXX", name[32];
	struct bt_pcapng w, dry;
	int fd = mkstemp(path), nidb = 0, nepb = 0;
	uint8_t frame[60] = { 0 }, *b;
	char names[80][32];
	long len;
	FILE *f;

	assert_true(fd >= 0);
	assert_int_equal(bt_pcapng_start(&w, fd), 0);
	assert_int_equal(bt_pcapng_start(&dry, -1), 0);
	for (int i = 0; i < 70; i++) {
		int id, did;

		snprintf(name, sizeof(name), "dev%d", i);
		frame[0] = i;
		id = bt_pcapng_iface(&w, 1000 + i, BT_PCAPNG_LINKTYPE_ETHERNET, name, 256);
		did = bt_pcapng_iface(&dry, 1000 + i, BT_PCAPNG_LINKTYPE_ETHERNET, name, 256);
		assert_int_equal(id, i);
		assert_int_equal(did, i);
		assert_int_equal(bt_pcapng_packet(&w, id, i, frame, sizeof(frame), 100, 1, "c", "x"), 0);
		assert_int_equal(bt_pcapng_packet(&dry, did, i, frame, sizeof(frame), 100, 1, "c", "x"), 0);
	}
	/* an interface seen before: its block is not written again */
	assert_int_equal(bt_pcapng_iface(&w, 1000 + 3, BT_PCAPNG_LINKTYPE_ETHERNET, "dev3", 256), 3);
	assert_int_equal(w.nif, 70);
	close(fd);
	assert_non_null(f = fopen(path, "rb"));
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	assert_int_equal((size_t)len, w.bytes);
	assert_int_equal(dry.bytes, w.bytes);
	assert_non_null(b = malloc(len));
	assert_int_equal(fread(b, 1, len, f), (size_t)len);
	fclose(f);
	unlink(path);
	for (long o = 0; o + 12 <= len;) {
		uint32_t type, blen;

		memcpy(&type, b + o, 4);
		memcpy(&blen, b + o + 4, 4);
		assert_true(blen >= 12 && o + blen <= len);
		if (type == 1) {	/* IDB: its name, the first option (if_name) */
			uint16_t code, olen;

			memcpy(&code, b + o + 16, 2);
			memcpy(&olen, b + o + 18, 2);
			assert_int_equal(code, 2);
			assert_true(nidb < 80 && olen < 32);
			memcpy(names[nidb], b + o + 20, olen);
			names[nidb++][olen] = 0;
		} else if (type == 6) {	/* EPB: its interface is its device */
			uint32_t ifid;

			memcpy(&ifid, b + o + 8, 4);
			assert_true(ifid < (uint32_t)nidb);
			snprintf(name, sizeof(name), "dev%d", b[o + 28]);
			assert_string_equal(names[ifid], name);
			nepb++;
		}
		o += blen;
	}
	assert_int_equal(nidb, 70);
	assert_int_equal(nepb, 70);
	free(b);
	bt_pcapng_free(&w);
	bt_pcapng_free(&dry);
}

/* The record number a recorder slot holds (include/bloomtap.h) */
static void test_rec_seq_at(void **state)
{
	assert_int_equal(BT_REC_SEQ_AT(0, 4, 0), 0);
	assert_int_equal(BT_REC_SEQ_AT(1, 4, 0), 1);
	assert_int_equal(BT_REC_SEQ_AT(1, 4, 1), 0);
	assert_int_equal(BT_REC_SEQ_AT(10, 4, 1), 10);
	assert_int_equal(BT_REC_SEQ_AT(10, 4, 2), 7);
	assert_int_equal(BT_REC_SEQ_AT(10, 4, 0), 9);
	assert_int_equal(BT_REC_SEQ_AT(10, 4, 3), 8);
	for (__u64 w = 1; w < 40; w++)
		for (__u32 i = 0; i < 7; i++) {
			__u64 s = BT_REC_SEQ_AT(w, 7, i);

			assert_true(s <= w && (!s || ((s - 1) % 7 == i && s + 7 > w)));
		}
}

/* The gap coder round-trips every fill, at every parameter near the one
 * it would choose and at the edges (m = 1, powers of two, the last bit
 * set, every bit set, none), and a query's partial decode sees the same
 * bits as the whole; a code cut short or with a byte more does not decode. */
static void test_gap_code_round_trips(void **state)
{
	static uint64_t bits[64], back[64];
	static uint8_t code[4096 * 22 / 8 + 16];
	const double fills[] = { 0, 0.0005, 0.03, 0.2, 0.5, 0.97, 1 };
	uint64_t seed = 12345;

	for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++)
		for (int extra = 0; extra < 3; extra++) {
			uint64_t set = 0;

			memset(bits, 0, sizeof(bits));
			for (int i = 0; i < 4096; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				if ((double)(seed >> 11) / (1ULL << 53) < fills[f] ||
				    (extra == 1 && i == 4095) || (extra == 2 && i == 0))
					bits[i / 64] |= 1ULL << (i % 64);
			}
			for (int i = 0; i < 64; i++)
				set += __builtin_popcountll(bits[i]);
			uint32_t best = bt_gap_param(set, 4096);
			const uint32_t ms[] = { 1, 2, 3, 16, 17, best, best + 1, best > 1 ? best - 1 : 5 };

			for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
				size_t len = bt_gap_encode(bits, sizeof(bits), ms[j], code);
				struct bt_gap_decoder d;

				assert_true(len <= bt_gap_bound(sizeof(bits)));
				assert_int_equal(bt_gap_decode(code, len, ms[j], back, sizeof(back)), 0);
				assert_memory_equal(bits, back, sizeof(bits));
				/* a query's partial decode: every bit below its end */
				bt_gap_begin(&d, code, len, ms[j], back, sizeof(back));
				assert_int_equal(bt_gap_until(&d, 1000), 0);
				for (int i = 0; i < 1000; i++)
					assert_int_equal(!!(back[i / 64] & (1ULL << (i % 64))),
							 !!(bits[i / 64] & (1ULL << (i % 64))));
				assert_int_equal(bt_gap_until(&d, 4096), 0);
				assert_memory_equal(bits, back, sizeof(bits));
				/* a set bit's code cut off, or a byte of zeros after */
				if (len && set)
					assert_int_equal(bt_gap_decode(code, len - 1, ms[j], back,
								       sizeof(back)) == 0 &&
							 !memcmp(bits, back, sizeof(bits)), 0);
				code[len] = 0;
				assert_int_equal(bt_gap_decode(code, len + 1, ms[j], back, sizeof(back)) == 0 &&
						 !memcmp(bits, back, sizeof(bits)), 0);
			}
		}
	/* the parameter: ln 2 / p, within its bounds */
	assert_int_equal(bt_gap_param(1000, 32768), 22);
	assert_int_equal(bt_gap_param(0, 32768), 1);
	assert_int_equal(bt_gap_param(32768, 32768), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64_rejects),
		cmocka_unit_test(test_workload_history),
		cmocka_unit_test(test_pathtrace_thousand),
		cmocka_unit_test(test_pathtrace_inferred),
		cmocka_unit_test(test_web_htpasswd_line),
		cmocka_unit_test(test_parse_u64_accepts),
		cmocka_unit_test(test_sh),
		cmocka_unit_test(test_parse_double_and_enum),
		cmocka_unit_test(test_sketch_describe_whole),
		cmocka_unit_test(test_parse_args_errors),
		cmocka_unit_test(test_parse_args_values),
		cmocka_unit_test(test_capture_missing_and_garbage),
		cmocka_unit_test(test_capture_truncated_file),
		cmocka_unit_test(test_capture_ethernet_untouched),
		cmocka_unit_test(test_capture_raw_ip_gets_ethernet),
		cmocka_unit_test(test_capture_linux_cooked),
		cmocka_unit_test(test_capture_unsupported_linktype_skipped),
		cmocka_unit_test(test_capture_pcapng_from_shared),
		cmocka_unit_test(test_seg_split_shared_capture),
		cmocka_unit_test(test_seg_split_roundtrip),
		cmocka_unit_test(test_seg_split_refusals),
		cmocka_unit_test(test_seg_split_syn_mss_floor),
		cmocka_unit_test(test_addr_and_flow_format),
		cmocka_unit_test(test_flow_json),
		cmocka_unit_test(test_hex_input),
		cmocka_unit_test(test_ipfix_dest),
		cmocka_unit_test(test_drop_reasons),
		cmocka_unit_test(test_links_only_from),
		cmocka_unit_test(test_links_only_from_mode),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_web_dummy_hash),
		cmocka_unit_test(test_drop_reasons_archived),
		cmocka_unit_test(test_workload_cgroups),
		cmocka_unit_test(test_workload_ids_in_key),
		cmocka_unit_test(test_metrics_workload_labels),
		cmocka_unit_test(test_pcapng_many_interfaces),
		cmocka_unit_test(test_rec_seq_at),
		cmocka_unit_test(test_gap_code_round_trips),
	};

	return cmocka_run_group_tests_name("user space units", tests, group_setup, group_teardown);
}
