/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Capture files through libpcap (pcap and pcapng), every packet handed out
 * as an Ethernet frame: the XDP program parses Ethernet only, so Linux
 * cooked (SLL, SLL2), raw IP and BSD loopback captures get a synthetic
 * 14-byte Ethernet header in place of their own link header. */
#ifndef BLOOMTAP_CAPTURE_H
#define BLOOMTAP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

struct bt_capture;

struct bt_packet {
	const uint8_t *data;	/* Ethernet frame */
	uint32_t len;		/* bytes at data (captured, converted) */
	uint32_t wire_len;	/* length on the wire, as the capture says */
	struct timeval ts;
	const char *skip;	/* non-NULL: not convertible, why */
};

/* Returns 0, or a negative errno with a message in err. */
int bt_capture_open(const char *path, struct bt_capture **out, char *err, size_t errlen);
/* The same over a capture held in memory (an HTTP request body). */
int bt_capture_open_mem(const void *buf, size_t len, struct bt_capture **out, char *err,
			size_t errlen);
/* Does buf start like a pcap or pcapng file? */
bool bt_is_capture(const void *buf, size_t len);
/* 1: a packet in *p (check p->skip); 0: end of file; <0: the file is
 * broken from here on, bt_capture_error() says how. */
int bt_capture_next(struct bt_capture *c, struct bt_packet *p);
const char *bt_capture_error(struct bt_capture *c);
/* libpcap's name for the link type, e.g. "EN10MB". */
const char *bt_capture_linktype_name(struct bt_capture *c);
/* Bytes the conversion adds to each frame (negative: removes). */
int bt_capture_len_delta(struct bt_capture *c);
void bt_capture_close(struct bt_capture *c);
/* The capture at path rewritten as a pcap of Ethernet frames cut to their
 * first snap bytes (what a trace needs: the headers and a few payload
 * bytes), in *buf (malloc'd, *len bytes); a packet that cannot be
 * converted becomes a frame no trace matches, so the packets keep their
 * numbers. *ip (malloc'd, *nip of them): the numbers, from 1, of the
 * frames whose heads are IP packets, in order: those an agent answers
 * for. 0, or a negative errno with a message in err. */
int bt_capture_heads(const char *path, uint32_t snap, char **buf, size_t *len,
		     uint32_t **ip, size_t *nip, char *err, size_t errlen);

/* Hex text ("45 00 00 1c ...", "4500001c...", with optional 0x and ':')
 * into bytes. Returns the byte count or -EINVAL. */
int bt_parse_hex(const char *s, uint8_t *out, size_t outlen);

#endif /* BLOOMTAP_CAPTURE_H */
