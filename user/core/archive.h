/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Sealed SPIE windows as files. A file (format 3) holds one or more
 * consecutive windows of one instance: a header; a zstd dictionary trained
 * on those windows; a record per window; then per window a table of chunk
 * offsets and its filter compressed in independent chunks of
 * BT_ARCHIVE_CHUNK bytes, each a zstd frame with its content checksum
 * (XXH64, checked as it decodes). A query reads and decodes
 * only the chunk that holds its block (about a microsecond,
 * where a window in one zstd frame took 170 here): the dictionary carries
 * the entropy tables that each small frame would otherwise have to
 * describe, so the chunks compress as well as one frame. The header and
 * the records (with the dictionary) carry CRC-32s; a damaged chunk offset
 * points at bytes that do not decode to their checksum, and is caught so.
 * Files are written to a temporary name, fsynced and renamed: a crash
 * never leaves a half-written file that looks valid. The instance's key is
 * kept beside them in <instance>-<key id>.key, mode 0600, so that archived
 * windows stay queryable after the instance is gone. Formats 1 and 2 (one
 * window a file, one zstd frame, SipHash of the 48-byte input) are still read. */
#ifndef BLOOMTAP_ARCHIVE_H
#define BLOOMTAP_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"
#include "digest.h"
#include "gapcode.h"
#include "reasons.h"

#define BT_ARCHIVE_MAGIC "BTSPIEW1"
/* Format 4 is format 3 where a window whose filter is all zeros (an idle
 * link's: nothing was recorded) has no chunk table and no chunks (its
 * record's table_off and data_off are 0): 64 bytes on disk, not 12.6 KiB.
 * Formats 3 and 4 are read alike. */
/* Format 5 adds the reasons of the windows' drop digests: after the
 * records, drop_entries (the header's reserved[0]) struct
 * bt_archive_drop, by window; a window whose drops did not all find a
 * slot has BT_ARCHIVE_DROPS_OTHER in its flags. A window without drops
 * costs nothing more. Formats 3, 4 and 5 are read alike. */
/* Format 6 is format 5 whose windows hold two digests a drop, the first
 * without its reason (BT_DROP_ANY): a query probes it first. */
/* Format 7 is format 6 whose UDP digests leave the checksum out and take
 * 8 payload bytes (include/hash.h "The SPIE digest"); a window
 * may hold sent packets' digests (BT_WIN_SENT in its flags). */
/* Format 8 is format 7 with the reasons' names as the kernel that wrote
 * it named them (the enum is no stable ABI: a code means another reason
 * after an upgrade): after the drop records, names (the header's
 * reserved[1]) struct bt_archive_reason sorted by code, under the records'
 * CRC: every code of the drop records and, when a window has
 * BT_ARCHIVE_DROPS_OTHER, every reason that kernel had (what a query then
 * tries). Files before it are named by the kernel that reads them. */
/* Format 9 is format 8 whose IPv6 digests take their 8 bytes after the
 * extension headers (include/hash.h "The SPIE digest"); format 8 and
 * older files are queried with the digest that takes them at byte 40
 * (bt_spie_digest_v7). Nothing else in the file changed. */
/* A format 9 header's reserved[2], when not 0: the writer's
 * CLOCK_REALTIME - CLOCK_BOOTTIME, the offset its windows' times were
 * turned to real time with, so that a reader joins them with what it
 * keeps in boot time (the workload table's history) whatever the clock
 * did since. Writers before it left it 0 (not known); readers of format
 * 9 that do not know it ignore it. */
#define BT_ARCHIVE_V6_EXT 9
/* Format 10 is format 9 whose windows are one-line blocks of k positions
 * (include/hash.h, block_bits 512) and whose chunks are no zstd frames:
 * each is the CRC-32 of its code, then the gaps between its set bits,
 * Golomb-coded at the parameter the window's set_bits gives
 * (user/core/gapcode.h), within 2.3 % of the filter's entropy. No
 * dictionary. Formats 3 to 9 keep their 128-bit blocks and zstd. */
#define BT_ARCHIVE_GAPS 10
#define BT_ARCHIVE_VERSION 10
#define BT_ARCHIVE_DROPS_OTHER (1u << 16)
#define BT_ARCHIVE_SUFFIX ".btw"
/* Raw filter bytes a chunk holds: 32 blocks, about 140 packets. Its CRC
 * and offset cost 2 % of its code, and a query decodes half a chunk on
 * average (make bench: 5 to 10 us a window with its reads; chunks of
 * 4096 bytes cost 1 % and about 4 us more). Formats 3 to 9 wrote 512. */
#define BT_ARCHIVE_CHUNK 2048
#define BT_ARCHIVE_NAME_MAX 64
/* A window's compressed size must fit the 32-bit chunk offsets. */
#define BT_ARCHIVE_WINDOW_BITS_MAX (1ULL << 34)

/* Format 3 header; then dict_len bytes of zstd dictionary (none when it
 * could not be trained: sparse windows), a struct bt_archive_win per window
 * (records_crc covers the dictionary and the records), then each window's
 * chunk table (chunks + 1 __u32 offsets from its data_off; the last one is
 * the end) and its chunks' frames. A query reads two offsets of a table
 * and one chunk: two reads a window, no more. */
struct bt_archive_hdr3 {
	char magic[8];		/* BT_ARCHIVE_MAGIC */
	__u32 version;		/* 3 */
	__u32 hdr_len;		/* sizeof(struct bt_archive_hdr3) */
	char instance[BT_ARCHIVE_NAME_MAX];	/* NUL-terminated */
	__u64 key_id;		/* fingerprint of the instance's key, not the key */
	__u64 window_bits;	/* m */
	__u32 k;
	__u32 block_bits;	/* 128; 512 from format 10 */
	__u32 windows;		/* in this file */
	__u32 chunk_bytes;	/* raw bytes a chunk holds */
	__u32 chunks;		/* a window */
	__u32 dict_len;
	__u32 records_crc;	/* zlib crc32 of the dictionary and the records */
	__u32 pad;
	__u64 reserved[3];
	__u32 pad2;
	__u32 hdr_crc;		/* zlib crc32 of the header with this field 0 */
};
_Static_assert(sizeof(struct bt_archive_hdr3) == 160, "bt_archive_hdr3 must be 160 bytes");

struct bt_archive_win {
	__u64 start_ns, end_ns;	/* CLOCK_REALTIME */
	__u64 packets;
	__u64 set_bits;
	__u64 fpr_e15;		/* false-positive rate from the fill, in 1e-15 */
	__u32 seq;
	__u32 flags;		/* enum bt_window_flags */
	__u64 table_off;	/* its chunk table, in the file */
	__u64 data_off;		/* its first chunk, in the file */
};
_Static_assert(sizeof(struct bt_archive_win) == 64, "bt_archive_win must be 64 bytes");

/* One reason of one window's drop digests (format 5). */
struct bt_archive_drop {
	__u32 window;		/* index in the file */
	__u32 reason;		/* the kernel's code when it was written */
	__u64 count;		/* drop digests with it */
};
_Static_assert(sizeof(struct bt_archive_drop) == 16, "bt_archive_drop must be 16 bytes");

/* A reason's name, as the writing kernel named it (format 8). */
struct bt_archive_reason {
	__u32 code;
	char name[60];		/* NUL-terminated, as bt_drop_reason_name() gave it */
};
_Static_assert(sizeof(struct bt_archive_reason) == 64, "bt_archive_reason must be 64 bytes");
#define BT_ARCHIVE_REASONS_MAX 65536	/* in a file, at most */

/* The key's fingerprint: SipHash of a fixed word under the key. */
__u64 bt_key_id(const struct bt_hash_key_raw *key);

/* n consecutive sealed windows of one instance: win[i], its filter
 * filters[i] of bpw blocks, its drop reasons reasons[i] (reasons or an
 * element NULL: none). */
struct bt_archive_batch {
	const struct bt_window *const *win;
	const struct bt_bloom_block *const *filters;
	const struct bt_win_reasons *const *reasons;
	int n;
	uint64_t bpw;
};
/* Writes a batch into one file of dir; path_out gets its name. Window
 * times are converted to CLOCK_REALTIME. Returns 0 or -errno, with a
 * message printed. */
int bt_archive_write(const char *dir, const char *instance, const struct bt_meta *meta,
		     const struct bt_archive_batch *b, char *path_out, size_t len);

/* An archive file opened for queries: its records in memory. */
struct bt_archive_file {
	char path[512];
	char instance[BT_ARCHIVE_NAME_MAX + 1];
	int version;			/* 1 to BT_ARCHIVE_VERSION */
	__u64 key_id;			/* the instance's key fingerprint */
	__u64 window_bits;
	__u32 k, nwin;
	__u32 block_bits;		/* BT_BLOCK_BITS (format 10), 128 before */
	struct bt_archive_win *win;	/* nwin */
	struct bt_archive_drop *drops;	/* ndrops, by window (format 5) */
	__u32 ndrops;
	struct bt_drop_reason *names;	/* nnames, by code (format 8) */
	__u32 nnames;
	__s64 real_minus_boot;		/* the writer's, as its windows' times were
					 * turned (reserved[2]); 0: not known */
	/* private */
	int fd;
	__u64 size;
	struct bt_hash_key_raw key;
	struct bt_hash_keys keys;
	__u32 chunks_per_win, chunk_bytes;
	struct ZSTD_DDict_s *ddict;	/* the file's dictionary, digested */
	struct ZSTD_DCtx_s *dctx;	/* its own, or one lent by bt_archive_lend_dctx() */
	bool dctx_lent;
	uint8_t *chunk_buf;		/* a chunk as read */
	uint8_t *raw_buf;		/* the last chunk decoded (formats 1, 2: the window) */
	struct bt_gap_decoder gap;	/* format 10: raw_buf's decoding, so far */
	int64_t cached;			/* its index, -1 for none */
	__u64 legacy_len;		/* formats 1 and 2: the one frame */
};
/* Opens dir/name: NULL with *why set when it cannot be read (corrupt,
 * truncated, foreign, its key file missing...). */
struct bt_archive_file *bt_archive_open(const char *dir, const char *name, const char **why);
void bt_archive_close(struct bt_archive_file *f);
/* Decodes with dctx, which the caller keeps and frees: a context costs
 * more to make than a chunk to decode, and a trace opens many files. */
void bt_archive_lend_dctx(struct bt_archive_file *f, struct ZSTD_DCtx_s *dctx);
/* The packet's digest as this file's windows recorded it. */
__u64 bt_archive_digest(const struct bt_archive_file *f, const struct bt_spie_packet *p);
/* Is digest h in window w of f? 1 or 0; -1 when the chunk or its table is
 * damaged (*why says how). Decodes one chunk (formats 1 and 2: the whole
 * window, once). */
int bt_archive_has(struct bt_archive_file *f, __u32 w, __u64 h, const char **why);
/* The digest's block in f's windows (the order its chunks are read in). */
__u64 bt_archive_block(const struct bt_archive_file *f, __u64 h);
/* The reasons of window w's drop digests. */
void bt_archive_reasons(const struct bt_archive_file *f, __u32 w, struct bt_win_reasons *out);
/* A reason's name as the kernel that wrote f named it; before format 8,
 * as this kernel names it (bt_drop_reason_name). */
const char *bt_archive_reason_name(const struct bt_archive_file *f, __u32 code, char *buf,
				   size_t len);
/* Every chunk of window w decompressed, as a query without chunks would
 * (make bench's comparison); 0 or -1. */
int bt_archive_read_window(struct bt_archive_file *f, __u32 w, struct bt_bloom_block *out);

/* Archive file names of dir, sorted by their first window's start time;
 * only instance's (exact name) when instance is not NULL. */
int bt_archive_list(const char *dir, const char *instance, char ***names, int *n);
/* Splits an archive file name into instance, first window start and
 * sequence number; -1 when it is not one. */
int bt_archive_name_parse(const char *name, char *instance, size_t len, __u64 *start_ns,
			  __u32 *seq);

/* The names of dir's files (instance's alone when not NULL) whose windows
 * overlap [lo, hi] (CLOCK_REALTIME ns), and those whose times are not
 * their packets' or that cannot be read, sorted as bt_archive_list's:
 * O(log n) by the directory's index (archive_index.c), rebuilt when stale. */
int bt_archive_find(const char *dir, const char *instance, __u64 lo, __u64 hi, char ***names,
		    int *n);

/* Removes the oldest archive files of the directory, every instance's
 * (instance NULL) or one instance's, until they total at most max_bytes
 * (0: no limit) and none is older than max_age_s (0: no limit); and
 * temporary files a crash left behind. *total_out (when not NULL) gets the
 * bytes that stay. Returns the number of files removed, or -errno. */
int bt_archive_prune(const char *dir, const char *instance, uint64_t max_bytes,
		     uint64_t max_age_s, uint64_t *total_out);

#endif /* BLOOMTAP_ARCHIVE_H */
