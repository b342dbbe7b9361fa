// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include "capture.h"
#include "digest.h"

#define ETH_HLEN_ 14
#define SLL_HLEN 16
#define SLL2_HLEN 20
#define NULL_HLEN 4
#define FRAME_MAX (ETH_HLEN_ + 262144)

struct bt_capture {
	pcap_t *pcap;
	int dlt;
	char errbuf[PCAP_ERRBUF_SIZE + 64];
	uint8_t frame[FRAME_MAX];
};

/* path, or an in-memory capture when path is NULL */
static int capture_open(const char *path, const void *buf, size_t len,
			struct bt_capture **out, char *err, size_t errlen)
{
	char pcap_err[PCAP_ERRBUF_SIZE] = "";
	struct bt_capture *c;
	FILE *f;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (path) {
		c->pcap = pcap_open_offline(path, pcap_err);
	} else if ((f = fmemopen((void *)buf, len, "rb"))) {
		c->pcap = pcap_fopen_offline(f, pcap_err);	/* owns f from here */
		if (!c->pcap)
			fclose(f);
	}
	if (!c->pcap) {
		/* libpcap says "No such file..." or "unknown file format" */
		snprintf(err, errlen, "%s: cannot read as a capture file: %s",
			 path ? path : "request body", pcap_err);
		free(c);
		return -EINVAL;
	}
	c->dlt = pcap_datalink(c->pcap);
	*out = c;
	return 0;
}

int bt_capture_open(const char *path, struct bt_capture **out, char *err, size_t errlen)
{
	return capture_open(path, NULL, 0, out, err, errlen);
}

int bt_capture_open_mem(const void *buf, size_t len, struct bt_capture **out, char *err,
			size_t errlen)
{
	return capture_open(NULL, buf, len, out, err, errlen);
}

bool bt_is_capture(const void *buf, size_t len)
{
	static const uint32_t magics[] = { 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1,
					   0x0a0d0d0a };
	uint32_t m;

	if (len < 4)
		return false;
	memcpy(&m, buf, 4);
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (m == magics[i])
			return true;
	return false;
}

static void put_eth(uint8_t *f, uint16_t ethertype)
{
	memset(f, 0, 12);
	f[0] = 0x02;	/* locally administered destination, as on a veth */
	f[6] = 0x02;
	f[12] = ethertype >> 8;
	f[13] = ethertype & 0xff;
}

/* Converts the link header at data into an Ethernet header; returns the
 * frame length or -1 with p->skip set. */
static int to_ethernet(struct bt_capture *c, const uint8_t *data, uint32_t caplen,
		       struct bt_packet *p)
{
	uint32_t hlen;
	uint16_t et = 0;

	switch (c->dlt) {
	case DLT_EN10MB:
		p->data = data;
		return caplen;
	case DLT_LINUX_SLL:
		hlen = SLL_HLEN;
		if (caplen >= hlen)
			et = data[14] << 8 | data[15];
		break;
	case DLT_LINUX_SLL2:
		hlen = SLL2_HLEN;
		if (caplen >= hlen)
			et = data[0] << 8 | data[1];
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		hlen = 0;
		if (caplen >= 1)
			et = (data[0] >> 4) == 4 ? 0x0800 : (data[0] >> 4) == 6 ? 0x86DD : 0;
		break;
	case DLT_NULL:
	case DLT_LOOP:
		hlen = NULL_HLEN;
		if (caplen >= hlen) {
			uint32_t af;

			memcpy(&af, data, 4);
			/* DLT_NULL is in the writer's byte order, DLT_LOOP in network order */
			if (c->dlt == DLT_LOOP || af > 0xffff)
				af = ntohl(af);
			/* AF_INET is 2 everywhere; AF_INET6 is 10, 24, 28 or 30 */
			et = af == 2 ? 0x0800 : (af == 10 || af == 24 || af == 28 || af == 30) ? 0x86DD : 0;
		}
		break;
	default:
		p->skip = "link type not supported (Ethernet, Linux cooked, raw IP and BSD loopback are)";
		return -1;
	}
	if (caplen < hlen || (caplen == hlen && hlen)) {
		p->skip = "shorter than its link header";
		return -1;
	}
	/* Cooked captures carry non-Ethernet protocol numbers below 0x600
	 * (802.2, CAN...): they become unparsed, counted frames. */
	if (!et) {
		p->skip = "not IPv4 or IPv6 after a raw or loopback link header";
		return -1;
	}
	if (caplen - hlen > FRAME_MAX - ETH_HLEN_) {
		p->skip = "larger than 256 KiB";
		return -1;
	}
	put_eth(c->frame, et);
	memcpy(c->frame + ETH_HLEN_, data + hlen, caplen - hlen);
	p->data = c->frame;
	return caplen - hlen + ETH_HLEN_;
}

int bt_capture_len_delta(struct bt_capture *c)
{
	switch (c->dlt) {
	case DLT_LINUX_SLL: return ETH_HLEN_ - SLL_HLEN;
	case DLT_LINUX_SLL2: return ETH_HLEN_ - SLL2_HLEN;
	case DLT_RAW: case DLT_IPV4: case DLT_IPV6: return ETH_HLEN_;
	case DLT_NULL: case DLT_LOOP: return ETH_HLEN_ - NULL_HLEN;
	default: return 0;
	}
}

int bt_capture_next(struct bt_capture *c, struct bt_packet *p)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc, len;

	memset(p, 0, sizeof(*p));
	if (c->errbuf[0])	/* broken off: it stays so, past pcap's EOF */
		return -EINVAL;
	rc = pcap_next_ex(c->pcap, &h, &data);
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(c->errbuf, sizeof(c->errbuf), "%s",
			 *pcap_geterr(c->pcap) ? pcap_geterr(c->pcap) : "read error");
		return -EINVAL;
	}
	p->ts = h->ts;
	p->wire_len = h->len;
	len = to_ethernet(c, data, h->caplen, p);
	if (len >= 0)
		p->len = len;
	return 1;
}

const char *bt_capture_error(struct bt_capture *c)
{
	return c->errbuf;
}

const char *bt_capture_linktype_name(struct bt_capture *c)
{
	const char *n = pcap_datalink_val_to_name(c->dlt);

	return n ? n : "unknown";
}

/* Frame number n (from 1) onto *ip, which grows by doubling */
static int ip_push(uint32_t **ip, size_t *nip, uint32_t n)
{
	/* full at 0, 1, 2, 4, 8 ... */
	if (!(*nip & (*nip - 1))) {
		uint32_t *more = realloc(*ip, (*nip ? 2 * *nip : 1) * sizeof(**ip));

		if (!more)
			return -ENOMEM;
		*ip = more;
	}
	(*ip)[(*nip)++] = n;
	return 0;
}

int bt_capture_heads(const char *path, uint32_t snap, char **buf, size_t *len,
		     uint32_t **ip, size_t *nip, char *err, size_t errlen)
{
	struct bt_spie_packet sp;
	uint32_t frame = 0;
	static const uint8_t not_ip[14];	/* ethertype 0: a frame nobody can trace */
	struct bt_capture *c;
	struct bt_packet p;
	pcap_dumper_t *d = NULL;
	pcap_t *dead;
	FILE *f;
	int rc;

	*buf = NULL;
	*len = 0;
	*ip = NULL;
	*nip = 0;
	if ((rc = bt_capture_open(path, &c, err, errlen)))
		return rc;
	dead = pcap_open_dead(DLT_EN10MB, snap);
	f = open_memstream(buf, len);
	if (dead && f)
		d = pcap_dump_fopen(dead, f);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		if (f)
			fclose(f);
	}
	while (d && (rc = bt_capture_next(c, &p)) > 0) {
		/* a packet for each, so that the answer's numbers are the file's */
		struct pcap_pkthdr h = { .ts = p.ts };
		const uint8_t *data = p.skip ? not_ip : p.data;

		h.len = p.skip ? sizeof(not_ip) : p.wire_len > p.len ? p.wire_len : p.len;
		h.caplen = p.skip ? sizeof(not_ip) : p.len < snap ? p.len : snap;
		pcap_dump((u_char *)d, &h, data);
		/* the agent's test of an IP packet, on the head it is sent */
		frame++;
		if (!p.skip && !bt_spie_packet_frame(data, h.caplen, &sp) &&
		    ip_push(ip, nip, frame)) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
			break;
		}
	}
	if (rc < 0 && rc != -ENOMEM && d)
		snprintf(err, errlen, "%s", bt_capture_error(c));
	if (d)
		pcap_dump_close(d);	/* closes f: *buf and *len are final */
	if (dead)
		pcap_close(dead);
	bt_capture_close(c);
	if (rc < 0) {
		free(*buf);
		free(*ip);
		*buf = NULL;
		*len = 0;
		*ip = NULL;
		*nip = 0;
	}
	return rc < 0 ? rc : 0;
}

void bt_capture_close(struct bt_capture *c)
{
	if (!c)
		return;
	pcap_close(c->pcap);
	free(c);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

int bt_parse_hex(const char *s, uint8_t *out, size_t outlen)
{
	size_t n = 0;

	while (*s) {
		int hi, lo;

		if (isspace((unsigned char)*s) || *s == ':') {
			s++;
			continue;
		}
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			s += 2;
			continue;
		}
		hi = hexval((unsigned char)s[0]);
		lo = s[1] ? hexval((unsigned char)s[1]) : -1;
		if (hi < 0 || lo < 0 || n >= outlen)
			return -EINVAL;
		out[n++] = hi << 4 | lo;
		s += 2;
	}
	return n ? (int)n : -EINVAL;
}
