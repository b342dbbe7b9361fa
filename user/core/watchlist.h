/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Watch-list files: one entry a line, "ADDRESS[/LEN] CLASS" or
 * "FIRST-LAST CLASS" (the exact set of prefixes that covers the range, as
 * range-based databases export them), whitespace or commas between, IPv4
 * and IPv6, '#' starts a comment. */
#ifndef BLOOMTAP_WATCHLIST_H
#define BLOOMTAP_WATCHLIST_H

#include <stdbool.h>
#include <stdio.h>
#include "bloomier.h"

struct bt_watch_entry {
	struct bt_watch_key key;	/* class_id: 1 + its index in names */
	uint32_t line;
};

struct bt_watch_list {
	struct bt_watch_entry *e;
	size_t n, cap;
	char names[BT_WATCH_CLASSES][BT_WATCH_CLASS_LEN + 1];	/* [1..nclasses] */
	uint32_t nclasses;
	uint64_t entries[BT_WATCH_CLASSES];	/* a class's keys, after duplicates */
	uint32_t duplicates;	/* the same key and class again: dropped */
	uint32_t masked;	/* host bits under a prefix: warned, masked */
	uint64_t counted[2];	/* IPv4's, IPv6's keys read (ranges expanded,
				 * duplicates included) */
	bool counting;		/* count the keys, store none */
};

/* The least a table of n[0] IPv4 and n[1] IPv6 keys takes, in bytes: a
 * range of 4 bytes an IPv4 key and the /16 words; a 64-byte line for 9
 * IPv6 keys (the range tree's compact leaves; the searched table takes
 * 1.075 cells of 7 bytes a key, and its markers). A list whose keys are
 * disjoint takes about that; one whose shorter prefixes longer ones cover
 * whole, less. */
uint64_t bt_watch_least_bytes(const uint64_t n[2]);
/* What a slot holds: BT_WATCH_CHUNKS chunks of BT_WATCH_CHUNK lines. */
#define BT_WATCH_SLOT_BYTES ((uint64_t)BT_WATCH_CHUNKS * BT_WATCH_CHUNK * 64)

/* "ADDRESS[/LEN]" into a 16-byte address (v4-mapped for IPv4), its length
 * over 128 bits, and whether it had host bits (they are cleared). 0, or a
 * message in err. */
int bt_watch_parse_prefix(const char *s, uint8_t addr[16], __u32 *len, bool *v4,
			  bool *host_bits, char *err, size_t errlen);
bool bt_watch_class_name_ok(const char *s);

/* Reads a list from f (named path in messages): 0, or -EINVAL with
 * "PATH:LINE: problem" in err, a line for each bad line (the first
 * BT_WATCH_MAX_ERRORS; err of BT_WATCH_ERR_LEN holds them); host bits draw
 * a warning on stderr. -E2BIG when its keys need more than a slot holds
 * (bt_watch_least_bytes): a file that can be read twice is counted first,
 * and refused before a key is stored; any other, at the line where the
 * keys read so far are too many. */
#define BT_WATCH_MAX_ERRORS 20
#define BT_WATCH_ERR_LEN 8192
int bt_watch_list_parse(FILE *f, const char *path, struct bt_watch_list *l, char *err,
			size_t errlen);
int bt_watch_list_read(const char *path, struct bt_watch_list *l, char *err, size_t errlen);
void bt_watch_list_free(struct bt_watch_list *l);

/* "198.18.0.0/15" or "2001:db8::/32" of a key. */
const char *bt_watch_key_str(const struct bt_watch_key *k, char *buf, size_t len);

#endif
