// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* flowgen: a burst of UDP flows on an interface, fast (AF_PACKET,
 * sendmmsg), for the tests and make soak: LIGHT flows of one packet each
 * and HEAVY flows of HEAVY_PACKETS packets, the heavy packets spread evenly
 * among the light ones. Sources are 198.19.A.B (RFC 2544 space), light flow
 * i from 198.19.x.y:(1024 + i % 50000), heavy flow j from 198.18.255.j:7000;
 * all to DST_IP:9. Prints what it sent, one flow a line with -v.
 *
 *   flowgen IFACE DST_MAC DST_IP LIGHT HEAVY HEAVY_PACKETS [FRAME_BYTES] [-v]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "frames.h"

#define BATCH 256

static int parse_mac(const char *s, uint8_t mac[6])
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) == 6 ? 0 : -1;
}

/* One UDP frame of len bytes from src:sport to dst:9. */
static void udp_frame(struct frame *f, const uint8_t dmac[6], uint32_t src, uint32_t dst,
		      uint16_t sport, size_t len)
{
	size_t ip;

	f->len = 0;
	fr_put(f, dmac, 6);
	fr_put(f, "\x02\x00\x00\x00\x00\x01", 6);
	fr_u16(f, 0x0800);
	ip = fr_ipv4(f, 17, 5, 0);
	memcpy(f->b + ip + 12, &src, 4);
	memcpy(f->b + ip + 16, &dst, 4);
	fr_ports(f, sport, 9, 8);
	if (f->len < len)
		fr_put(f, NULL, len - f->len);
	fr_ipv4_done(f, ip);
}

int main(int argc, char **argv)
{
	uint8_t dmac[6];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_halen = 6 };
	static struct frame frames[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	unsigned long light, heavy, hp, total, sent = 0, every;
	size_t len = 64;
	uint32_t dst;
	bool verbose = argc > 8 && !strcmp(argv[8], "-v");
	int fd, n = 0;

	if (argc < 7 || parse_mac(argv[2], dmac) || inet_pton(AF_INET, argv[3], &dst) != 1) {
		fprintf(stderr, "usage: flowgen IFACE DST_MAC DST_IP LIGHT HEAVY HEAVY_PACKETS "
			"[FRAME_BYTES] [-v]\n");
		return 2;
	}
	light = strtoul(argv[4], NULL, 10);
	heavy = strtoul(argv[5], NULL, 10);
	hp = strtoul(argv[6], NULL, 10);
	if (argc > 7)
		len = strtoul(argv[7], NULL, 10);
	if (heavy > 255 || len < 64 || len > 1514) {
		fprintf(stderr, "flowgen: at most 255 heavy flows, frames of 64 to 1514 bytes\n");
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	sll.sll_ifindex = if_nametoindex(argv[1]);
	memcpy(sll.sll_addr, dmac, 6);
	if (fd < 0 || !sll.sll_ifindex) {
		fprintf(stderr, "flowgen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	total = light + heavy * hp;
	every = heavy && hp ? total / (heavy * hp) : 0;	/* a heavy packet every this many */
	for (unsigned long k = 0, li = 0, hi = 0; k < total; k++) {
		bool is_heavy = hi < heavy * hp && (li >= light || (every && k % every == 0));
		uint32_t src;
		uint16_t sport;

		if (is_heavy) {
			src = htonl(0xc612ff00 + hi % heavy);	/* 198.18.255.j */
			sport = 7000;
			hi++;
		} else {
			src = htonl(0xc6130000 + (li / 50000) * 256 + li % 251);	/* 198.19.x.y */
			sport = 1024 + li % 50000;
			li++;
		}
		udp_frame(&frames[n], dmac, src, dst, sport, len);
		iov[n] = (struct iovec){ frames[n].b, frames[n].len };
		msgs[n] = (struct mmsghdr){ .msg_hdr = { .msg_name = &sll,
			.msg_namelen = sizeof(sll), .msg_iov = &iov[n], .msg_iovlen = 1 } };
		if (++n == BATCH || k + 1 == total) {
			for (int off = 0; off < n;) {
				int r = sendmmsg(fd, msgs + off, n - off, 0);

				if (r < 0) {
					if (errno == ENOBUFS || errno == EAGAIN) {
						usleep(100);
						continue;
					}
					fprintf(stderr, "flowgen: sendmmsg: %s\n", strerror(errno));
					return 1;
				}
				off += r;
				sent += r;
			}
			n = 0;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lu packets: %lu light flows of 1, %lu heavy flows of %lu, %zu-byte frames, "
	       "sent in %ld ms\n", sent, light, heavy, hp, len,
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	for (unsigned long j = 0; verbose && j < heavy; j++)
		printf("heavy 198.18.255.%lu:7000\n", j);
	close(fd);
	return 0;
}
