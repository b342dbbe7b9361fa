/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A pcapng writer (draft-ietf-opsawg-pcapng): a section header, an
 * interface description a device, an enhanced packet block a packet with
 * its direction (epb_flags), a comment and a custom option. Each block is
 * written whole by one write(2), so that a reader killed mid-file leaves
 * a valid file up to its last block. Timestamps are nanoseconds
 * (if_tsresol 9). */
#ifndef BLOOMTAP_PCAPNG_H
#define BLOOMTAP_PCAPNG_H

#include <stdint.h>

#define BT_PCAPNG_LINKTYPE_ETHERNET 1
#define BT_PCAPNG_LINKTYPE_RAW 101
/* The custom option's Private Enterprise Number: 32473, which RFC 5612
 * sets aside for documentation and examples (bloomtap has none of its own) */
#define BT_PCAPNG_PEN 32473

struct bt_pcapng {
	int fd;			/* -1: count the bytes, write nothing */
	int nif, nif_cap;	/* interfaces described; room for */
	struct bt_pcapng_if { uint64_t key; uint16_t linktype; } *ifs;
	size_t bytes;		/* written so far */
};

/* The section header on fd (-1: only counted): 0, or -errno. */
int bt_pcapng_start(struct bt_pcapng *w, int fd);
/* The writer's interface table freed (not fd): after the last block */
void bt_pcapng_free(struct bt_pcapng *w);
/* The interface id of (key, linktype), its description written first if it
 * is new (name, snaplen): >= 0, or -errno. */
int bt_pcapng_iface(struct bt_pcapng *w, uint64_t key, uint16_t linktype, const char *name,
		    uint32_t snaplen);
/* One packet: flags are epb_flags (1 inbound, 2 outbound); comment and
 * custom (a UTF-8 custom option, code 2988, with BT_PCAPNG_PEN) may be
 * NULL. 0, or -errno (-EPIPE: the reader went away). */
int bt_pcapng_packet(struct bt_pcapng *w, int ifid, uint64_t ts_ns, const void *data,
		     uint32_t caplen, uint32_t origlen, uint32_t flags, const char *comment,
		     const char *custom);

#endif /* BLOOMTAP_PCAPNG_H */
