/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Watch lists in an instance: loading a table into the slot not in use and
 * switching to it, changing a key's class in place, the classes and their
 * counts, and looking addresses up in the table in use. */
#ifndef BLOOMTAP_WATCH_H
#define BLOOMTAP_WATCH_H

#include <stdbool.h>
#include "core/watchlpm.h"
#include "instance.h"
#include "core/watchlist.h"

/* The table in use, mapped (read-only unless writable), consistent: its
 * header and array (cells, ranges, /16 words) are of one load, whatever
 * loads come meanwhile. */
struct bt_watch_table {
	struct bt_watch_hdr hdr;
	uint8_t *cells;
	size_t len;		/* of the mapping */
	struct bt_hash_keys keys;
	__u32 slot;
	int lock_fd;		/* held while writable */
};

int bt_watch_table_open(const struct bt_instance *inst, bool writable, struct bt_watch_table *t);
void bt_watch_table_close(struct bt_watch_table *t);
__u32 bt_watch_table_classify(const struct bt_watch_table *t, const uint8_t addr[16], bool v4,
			      struct bt_watch_how *how);

static inline struct bt_watch_view bt_watch_table_view(const struct bt_watch_table *t)
{
	return (struct bt_watch_view){ &t->hdr, t->cells, bt_watch_dir_of(&t->hdr, t->cells) };
}

struct bt_watch_loaded {
	size_t keys;
	size_t markers;		/* entries of the table besides the keys */
	uint32_t classes, retries, duplicates, masked;
	double build_s;		/* the table's construction */
	double bits_per_key;
	uint32_t probes[2];	/* an address's most probes: IPv4 (index
				 * entries and its line), IPv6 */
	size_t ranges, lines;	/* IPv4's range table: ranges, 64-byte lines
				 * (and index) */
	bool v6_tree;		/* IPv6 in the range tree, not searched */
	size_t v6_ranges;	/* its ranges */
};

/* Builds l's table and switches the datapath to it; classes that keep
 * their name keep their id and counts. 0, or an error already printed. */
int bt_watch_load(const struct bt_instance *inst, const struct bt_watch_list *l,
		  unsigned check_bits, struct bt_watch_loaded *info);
/* The same with BT_WATCH_F_FLAT and BT_WATCH_B_* flags (make bench's
 * ablation; watch load --ipv6). */
int bt_watch_load_flags(const struct bt_instance *inst, const struct bt_watch_list *l,
			unsigned check_bits, unsigned flags, struct bt_watch_loaded *info);
/* --watch FILE, as attach, replay and run take it. */
#define BT_WATCH_OPT(dst)							\
	{ "watch", 0, BT_OPT_STRING, &(dst), "FILE",				\
	  "load this watch list (one 'ADDRESS[/LEN] CLASS' a line)" }

/* Loads a list already read into instance name, and says so on stderr. */
int bt_watch_load_named(const char *name, const struct bt_watch_list *l);

/* Reads a list, printing what is wrong with it: 0 or -errno. */
int bt_watch_list_read_or_explain(const char *path, struct bt_watch_list *l);
int bt_watch_load_file(const struct bt_instance *inst, const char *path, unsigned check_bits,
		       unsigned flags, struct bt_watch_loaded *info);

/* Gives the key PREFIX (exactly as listed) the class NAME, in place. */
int bt_watch_set(const struct bt_instance *inst, const char *prefix, const char *name);

/* Entries first..first + n - 1 of a per-CPU array of struct
 * bt_watch_count (watch_counts, wl_counts), summed over CPUs, into
 * counts[0..n). */
int bt_percpu_counts(int fd, __u32 first, __u32 n, struct bt_watch_count *counts);

/* Each id's name ("" when free) and entries, and its counts summed over
 * CPUs. */
int bt_watch_classes(const struct bt_instance *inst,
		     struct bt_watch_class names[BT_WATCH_CLASSES]);
int bt_watch_counts(const struct bt_instance *inst, int dir,
		    struct bt_watch_count counts[BT_WATCH_CLASSES]);

/* Class names of addresses, for reports (heavy flows): the table in use
 * and the names of its ids; off when no table is loaded. */
struct bt_watch_names {
	struct bt_watch_table t;
	struct bt_watch_class names[BT_WATCH_CLASSES];
	bool on;
};
void bt_watch_names_open(const struct bt_instance *inst, struct bt_watch_names *w);
void bt_watch_names_close(struct bt_watch_names *w);
/* The class of a 16-byte address (v4-mapped for IPv4), NULL for none or
 * an address the key mode zeroed. */
const char *bt_watch_name_of(const struct bt_watch_names *w, const uint8_t addr[16]);

#endif
