// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>
#include "archive.h"
#include "common.h"
#include "hash.h"
#include "util.h"

#define KEY_MAGIC "BTSPIEK1"

struct key_file {
	char magic[8];
	__u64 key_id;
	__u64 k0, k1;
};

__u64 bt_key_id(const struct bt_meta *meta)
{
	struct bt_hash_key k = { meta->spie_key.k0, meta->spie_key.k1 };
	const __u64 word = 0x6b65792d6964ULL;	/* "key-id" */

	return bt_siphash13(&k, &word, 1);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* tmp file, fsync, rename, fsync the directory: all or nothing */
static int write_atomic(const char *dir, const char *name, mode_t mode,
			const void *a, size_t alen, const void *b, size_t blen)
{
	char tmp[512], path[512];
	int fd, dfd, err;

	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	err = write_all(fd, a, alen);
	if (!err && blen)
		err = write_all(fd, b, blen);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int ensure_key(const char *dir, const char *instance, const struct bt_meta *meta)
{
	struct key_file kf = { .key_id = bt_key_id(meta), .k0 = meta->spie_key.k0,
			       .k1 = meta->spie_key.k1 };
	char name[128], path[512];
	struct stat st;

	snprintf(name, sizeof(name), "%s-%016llx.key", instance, (unsigned long long)kf.key_id);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!stat(path, &st))
		return 0;
	memcpy(kf.magic, KEY_MAGIC, 8);
	return write_atomic(dir, name, 0600, &kf, sizeof(kf), NULL, 0);
}

__u32 bt_archive_hdr_crc(const struct bt_archive_hdr *h)
{
	struct bt_archive_hdr c = *h;

	c.hdr_crc = 0;
	return crc32(0, (const Bytef *)&c, sizeof(c));
}

int bt_archive_write(const char *dir, const char *instance, const struct bt_meta *meta,
		     const struct bt_window *w, const struct bt_bloom_block *filter,
		     uint64_t bpw, char *path_out, size_t len)
{
	size_t raw = bpw * sizeof(*filter), cap = ZSTD_compressBound(raw), clen;
	struct bt_archive_hdr h = { 0 };
	ZSTD_CCtx *cctx;
	char name[160];
	void *buf;
	int err;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		bt_err("archive directory %s: %s", dir, strerror(-err));
		return err;
	}
	if ((err = ensure_key(dir, instance, meta))) {
		bt_err("archive %s: writing the key file: %s", dir, strerror(-err));
		return err;
	}
	buf = malloc(cap);
	cctx = ZSTD_createCCtx();
	if (!buf || !cctx) {
		free(buf);
		ZSTD_freeCCtx(cctx);
		return -ENOMEM;
	}
	/* with a checksum of the content: a flipped bit that still decodes
	 * would otherwise pass for a filter, and answer queries wrongly */
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	clen = ZSTD_compress2(cctx, buf, cap, filter, raw);
	ZSTD_freeCCtx(cctx);
	if (ZSTD_isError(clen)) {
		bt_err("compressing window %u: %s", w->seq, ZSTD_getErrorName(clen));
		free(buf);
		return -EIO;
	}
	memcpy(h.magic, BT_ARCHIVE_MAGIC, 8);
	h.version = BT_ARCHIVE_VERSION;
	h.hdr_len = sizeof(h);
	snprintf(h.instance, sizeof(h.instance), "%s", instance);
	h.key_id = bt_key_id(meta);
	h.window_bits = meta->window_bits;
	h.k = meta->k;
	h.block_bits = BT_BLOCK_BITS;
	h.start_ns = w->start_ns;
	h.end_ns = w->end_ns;
	h.packets = w->end_inserted - w->base_inserted;
	h.set_bits = w->set_bits;
	h.compressed_len = clen;
	h.seq = w->seq;
	h.hdr_crc = bt_archive_hdr_crc(&h);
	/* names sort by time: start in ns, then the sequence number */
	snprintf(name, sizeof(name), "%s-%020llu-%08u%s", instance,
		 (unsigned long long)w->start_ns, w->seq, BT_ARCHIVE_SUFFIX);
	err = write_atomic(dir, name, 0600, &h, sizeof(h), buf, clen);
	free(buf);
	if (err) {
		bt_err("archive %s/%s: %s%s", dir, name, strerror(-err),
		       err == -ENOSPC ? " (the window stays in the ring until it is "
					"overwritten)" : "");
		return err;
	}
	if (path_out)
		snprintf(path_out, len, "%s/%s", dir, name);
	return 0;
}

static int load_key(const char *dir, const char *instance, __u64 key_id, struct bt_meta *m)
{
	char path[512];
	struct key_file kf;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s-%016llx.key", dir, instance,
		 (unsigned long long)key_id);
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	ok = fread(&kf, sizeof(kf), 1, f) == 1 && !memcmp(kf.magic, KEY_MAGIC, 8) &&
	     kf.key_id == key_id;
	fclose(f);
	if (!ok)
		return -EINVAL;
	m->spie_key.k0 = kf.k0;
	m->spie_key.k1 = kf.k1;
	return bt_key_id(m) == key_id ? 0 : -EINVAL;
}

/* Reads and checks one file; returns a reason on failure. */
static const char *read_window(const char *path, const char *dir, struct bt_archive_hdr *h,
			       struct bt_meta *key, void **filter, uint64_t *bpw,
			       __u64 since, __u64 until, int *skip_range)
{
	struct stat st;
	void *cbuf = NULL, *raw = NULL;
	size_t rawlen, got;
	const char *why = NULL;
	FILE *f = fopen(path, "rb");

	*skip_range = 0;
	if (!f)
		return strerror(errno);
	if (fstat(fileno(f), &st) || fread(h, sizeof(*h), 1, f) != 1) {
		why = "shorter than an archive header";
		goto out;
	}
	if (memcmp(h->magic, BT_ARCHIVE_MAGIC, 8)) {
		why = "not a bloomtap archive file";
		goto out;
	}
	if ((h->version != BT_ARCHIVE_VERSION && h->version != 1) || h->hdr_len != sizeof(*h)) {
		why = "archive format version not supported";
		goto out;
	}
	if (h->version >= 2 && h->hdr_crc != bt_archive_hdr_crc(h)) {
		why = "header is corrupt (checksum)";
		goto out;
	}
	if (h->block_bits != BT_BLOCK_BITS || !h->window_bits || h->window_bits % BT_BLOCK_BITS ||
	    h->window_bits > (1ULL << 36) || !h->k || h->k > BT_MAX_K ||
	    memchr(h->instance, 0, sizeof(h->instance)) == NULL) {
		why = "header fields out of range";
		goto out;
	}
	if ((__u64)st.st_size != sizeof(*h) + h->compressed_len) {
		why = "truncated, or longer than its header says";
		goto out;
	}
	if ((since && h->end_ns && h->end_ns < since) || (until && h->start_ns > until)) {
		*skip_range = 1;
		goto out;
	}
	if (load_key(dir, h->instance, h->key_id, key)) {
		why = "its key file is missing or does not match";
		goto out;
	}
	key->k = h->k;
	key->window_bits = h->window_bits;
	rawlen = h->window_bits / 8;
	cbuf = malloc(h->compressed_len ? h->compressed_len : 1);
	raw = malloc(rawlen);
	if (!cbuf || !raw) {
		why = "out of memory";
		goto out;
	}
	if (fread(cbuf, 1, h->compressed_len, f) != h->compressed_len) {
		why = "truncated";
		goto out;
	}
	got = ZSTD_decompress(raw, rawlen, cbuf, h->compressed_len);
	if (ZSTD_isError(got) || got != rawlen) {
		why = "compressed filter is corrupt";
		goto out;
	}
	*bpw = h->window_bits / BT_BLOCK_BITS;
	*filter = raw;
	raw = NULL;
out:
	free(cbuf);
	free(raw);
	fclose(f);
	return why;
}

static bool is_archive_file(const char *name)
{
	size_t l = strlen(name), sl = strlen(BT_ARCHIVE_SUFFIX);

	return l > sl && !strcmp(name + l - sl, BT_ARCHIVE_SUFFIX);
}

/* Archive file names of dir, sorted (= by instance, then time). */
static int list_files(const char *dir, char ***out, int *n)
{
	return bt_list_dir(dir, is_archive_file, out, n);
}

int bt_archive_each(const char *dir, __u64 since, __u64 until, bt_archive_fn fn, void *ctx)
{
	char **names, path[512];
	int n, err, skipped = 0;

	if ((err = list_files(dir, &names, &n))) {
		bt_err("archive %s: %s", dir, strerror(-err));
		return err;
	}
	for (int i = 0; i < n; i++) {
		struct bt_archive_hdr h;
		struct bt_meta key = { 0 };
		void *filter = NULL;
		uint64_t bpw = 0;
		int out_of_range;
		const char *why;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		why = read_window(path, dir, &h, &key, &filter, &bpw, since, until, &out_of_range);
		if (why) {
			bt_warn("archive file %s: %s; skipped", path, why);
			skipped++;
			continue;
		}
		if (out_of_range)
			continue;
		struct bt_archived a = { path, &h, key, filter, bpw };

		fn(&a, ctx);
		free(filter);
	}
	bt_strv_free(names, n);
	return skipped;
}

int bt_archive_prune(const char *dir, const char *instance, uint64_t max_bytes,
		     uint64_t max_age_s)
{
	char **names, path[512];
	uint64_t total = 0, *sizes;
	time_t now = time(NULL);
	size_t plen = strlen(instance);
	int n, err;

	if ((err = list_files(dir, &names, &n)))
		return err;
	sizes = calloc(n ? n : 1, sizeof(*sizes));
	for (int i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (strncmp(names[i], instance, plen) || names[i][plen] != '-' || stat(path, &st)) {
			names[i][0] = 0;	/* not ours */
			continue;
		}
		sizes[i] = st.st_size;
		total += st.st_size;
		if (max_age_s && (uint64_t)(now - st.st_mtime) > max_age_s) {
			unlink(path);
			total -= st.st_size;
			names[i][0] = 0;
		}
	}
	/* oldest first: names sort by start time */
	for (int i = 0; i < n && max_bytes && total > max_bytes; i++) {
		if (!names[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!unlink(path))
			total -= sizes[i];
	}
	free(sizes);
	bt_strv_free(names, n);
	return 0;
}
