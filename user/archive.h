/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Sealed SPIE windows as files: a header and the filter compressed with
 * zstd, written to a temporary name, fsynced and renamed, so a crash never
 * leaves a half-written file that looks valid. The instance's SPIE key is
 * kept beside them in <instance>.key, mode 0600, so that archived windows
 * stay queryable after the instance is gone. */
#ifndef BLOOMTAP_ARCHIVE_H
#define BLOOMTAP_ARCHIVE_H

#include <stdint.h>
#include <linux/types.h>
#include "bloomtap.h"

#define BT_ARCHIVE_MAGIC "BTSPIEW1"
/* 2: a CRC-32 of the header, a content checksum in the zstd frame; 1 (read,
 * not written): neither. */
#define BT_ARCHIVE_VERSION 2
#define BT_ARCHIVE_SUFFIX ".btw"

struct bt_archive_hdr {
	char magic[8];		/* BT_ARCHIVE_MAGIC */
	__u32 version;
	__u32 hdr_len;		/* sizeof(struct bt_archive_hdr) */
	char instance[32];
	__u64 key_id;		/* fingerprint of the SPIE key, not the key */
	__u64 window_bits;	/* m */
	__u32 k;
	__u32 block_bits;	/* 512 */
	__u64 start_ns, end_ns;
	__u64 packets;		/* digests recorded */
	__u64 set_bits;
	__u64 compressed_len;	/* bytes of zstd frame after the header */
	__u32 seq;
	__u32 hdr_crc;		/* zlib crc32 of the header with this field 0 */
	__u64 reserved[4];
};
_Static_assert(sizeof(struct bt_archive_hdr) == 152, "bt_archive_hdr must be 152 bytes");

/* CRC-32 (zlib) of a header, its hdr_crc field taken as 0. */
__u32 bt_archive_hdr_crc(const struct bt_archive_hdr *h);

/* The key's fingerprint: SipHash of a fixed word under the key. */
__u64 bt_key_id(const struct bt_meta *meta);

/* Writes window w (its filter of bpw blocks) into dir; path_out gets the
 * file name. Returns 0 or -errno, with a message printed. */
int bt_archive_write(const char *dir, const char *instance, const struct bt_meta *meta,
		     const struct bt_window *w, const struct bt_bloom_block *filter,
		     uint64_t bpw, char *path_out, size_t len);

/* Calls fn for every readable archived window overlapping [since, until]
 * (ns, 0 = open). A corrupt, truncated or foreign file is reported by name
 * and skipped. Returns the number of files skipped, or -errno. */
struct bt_archived {
	const char *path;
	const struct bt_archive_hdr *hdr;
	struct bt_meta key;		/* spie_key, k, window_bits */
	const struct bt_bloom_block *filter;
	uint64_t bpw;
};
typedef void (*bt_archive_fn)(const struct bt_archived *a, void *ctx);
int bt_archive_each(const char *dir, __u64 since, __u64 until, bt_archive_fn fn, void *ctx);

/* Removes the oldest files of the instance until the archive holds at most
 * max_bytes (0: no limit) and nothing older than max_age_s (0: no limit). */
int bt_archive_prune(const char *dir, const char *instance, uint64_t max_bytes,
		     uint64_t max_age_s);

#endif /* BLOOMTAP_ARCHIVE_H */
