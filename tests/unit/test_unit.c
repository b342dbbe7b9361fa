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
#include <cmocka.h>
#include <pcap/pcap.h>
#include "core/capture.h"
#include "base/common.h"
#include "report/flow.h"
#include "instance/drops.h"
#include "report/ipfix.h"
#include "base/options.h"
#include "core/workloads.h"

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
	assert_int_equal(bt_win_reasons_try(&wr, tries, BT_DROP_REASONS), 3);
	cpu1.other = 9;
	bt_win_reasons_add(&wr, &cpu1);
	assert_true(wr.other);
	/* its own three first, then every other reason once */
	assert_int_equal(bt_win_reasons_try(&wr, tries, BT_DROP_REASONS), n);
	assert_int_equal(tries[0], 12);
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
	/* names escaped for text, never cut inside an escape */
	assert_string_equal(bt_wl_escape("a b\t\\c\xff", buf, sizeof(buf)), "a\\x20b\\x09\\x5cc\\xff");
	assert_string_equal(bt_wl_escape("\t\t\t", buf, 9), "\\x09");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64_rejects),
		cmocka_unit_test(test_parse_u64_accepts),
		cmocka_unit_test(test_parse_double_and_enum),
		cmocka_unit_test(test_parse_args_errors),
		cmocka_unit_test(test_parse_args_values),
		cmocka_unit_test(test_capture_missing_and_garbage),
		cmocka_unit_test(test_capture_truncated_file),
		cmocka_unit_test(test_capture_ethernet_untouched),
		cmocka_unit_test(test_capture_raw_ip_gets_ethernet),
		cmocka_unit_test(test_capture_linux_cooked),
		cmocka_unit_test(test_capture_unsupported_linktype_skipped),
		cmocka_unit_test(test_capture_pcapng_from_shared),
		cmocka_unit_test(test_addr_and_flow_format),
		cmocka_unit_test(test_flow_json),
		cmocka_unit_test(test_hex_input),
		cmocka_unit_test(test_ipfix_dest),
		cmocka_unit_test(test_drop_reasons),
		cmocka_unit_test(test_workload_cgroups),
	};

	return cmocka_run_group_tests_name("user space units", tests, group_setup, group_teardown);
}
