// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "archive.h"
#include "bloom.h"
#include "gapcode.h"
#include "base/common.h"
#include "hash.h"
#include "clock.h"
#include "base/util.h"

#define KEY_MAGIC "BTSPIEK1"

struct key_file {
	char magic[8];
	__u64 key_id;
	__u64 k0, k1;
};

/* Formats 1 and 2: one window, one zstd frame after this header, 512-bit
 * blocks whose k positions were the top 9 bits of successive LCG steps of
 * the digest, SipHash-1-3 of the former 48-byte input. */
struct hdr_v2 {
	char magic[8];
	__u32 version;
	__u32 hdr_len;
	char instance[32];
	__u64 key_id;
	__u64 window_bits;
	__u32 k;
	__u32 block_bits;
	__u64 start_ns, end_ns;
	__u64 packets;
	__u64 set_bits;
	__u64 compressed_len;
	__u32 seq;
	__u32 hdr_crc;
	__u64 reserved[4];
};
_Static_assert(sizeof(struct hdr_v2) == 152, "format 2 header is 152 bytes");
#define V2_BLOCK_BYTES 64

__u64 bt_key_id(const struct bt_hash_key_raw *key)
{
	struct bt_hash_key k = { key->k0, key->k1 };
	const __u64 word = 0x6b65792d6964ULL;	/* "key-id" */

	return bt_siphash13(&k, &word, 1);
}

static __u32 crc(const void *p, size_t len)
{
	return crc32(0, (const Bytef *)p, len);
}

/* tmp file, fsync, rename, fsync the directory: all or nothing */
static int write_atomic(const char *dir, const char *name, mode_t mode,
			struct iovec *iov, int iovcnt)
{
	char tmp[512], path[512];
	int fd, dfd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (iovcnt && !err) {
		ssize_t n = writev(fd, iov, iovcnt);

		if (n < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		while (iovcnt && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= n;
		}
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (strstr(name, BT_ARCHIVE_SUFFIX))
		bt_test_kill_point("write");	/* a window file's, not the key's */
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
	struct key_file kf = { .key_id = bt_key_id(&meta->hash_key), .k0 = meta->hash_key.k0,
			       .k1 = meta->hash_key.k1 };
	char name[128], path[512];
	struct iovec iov = { &kf, sizeof(kf) };
	struct stat st;

	snprintf(name, sizeof(name), "%s-%016llx.key", instance, (unsigned long long)kf.key_id);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!stat(path, &st))
		return 0;
	memcpy(kf.magic, KEY_MAGIC, 8);
	return write_atomic(dir, name, 0600, &iov, 1);
}

static __u32 hdr3_crc(const struct bt_archive_hdr3 *h)
{
	struct bt_archive_hdr3 c = *h;

	c.hdr_crc = 0;
	return crc(&c, sizeof(c));
}

static __u32 hdr2_crc(const struct hdr_v2 *h)
{
	struct hdr_v2 c = *h;

	c.hdr_crc = 0;
	return crc(&c, sizeof(c));
}

/* A keeper killed after writing a file and before marking its windows
 * archived writes them again: under the name of that file (its first
 * window: same key, number and start, the start converted to real time
 * again to within a millisecond), so the new file replaces it instead of
 * holding the same windows twice. */
static void same_first_window(const char *dir, const char *instance, __u64 key_id,
			      __u64 start_ns, __u32 seq, char *name, size_t len)
{
	char **names, inst[BT_ARCHIVE_NAME_MAX + 1], path[512];
	struct bt_archive_hdr3 h;
	int n, fd;

	if (bt_archive_list(dir, instance, &names, &n))
		return;
	for (int i = n - 1; i >= 0; i--) {
		__u64 start;
		__u32 s;

		bt_archive_name_parse(names[i], inst, sizeof(inst), &start, &s);
		if (s != seq || (start > start_ns ? start - start_ns : start_ns - start) > 1000000)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && pread(fd, &h, sizeof(h), 0) == sizeof(h) && h.key_id == key_id)
			snprintf(name, len, "%s", names[i]);
		if (fd >= 0)
			close(fd);
		break;
	}
	bt_strv_free(names, n);
}

/* The batch's drop reasons as the file's records: each window's, in
 * order; *out NULL when there are none. 0 or -ENOMEM. */
static int collect_drops(const struct bt_archive_batch *b, struct bt_archive_drop **out,
			 __u32 *n)
{
	const struct bt_win_reasons *const *r = b->reasons;

	*out = NULL;
	*n = 0;
	for (int i = 0; r && i < b->n; i++)
		*n += r[i] ? r[i]->n : 0;
	if (*n && !(*out = calloc(*n, sizeof(**out))))
		return -ENOMEM;
	*n = 0;
	for (int i = 0; r && i < b->n; i++)
		for (int j = 0; r[i] && j < r[i]->n; j++)
			(*out)[(*n)++] = (struct bt_archive_drop){ i, r[i]->code[j], r[i]->count[j] };
	return 0;
}

static int cmp_name_code(const void *a, const void *b)
{
	const struct bt_archive_reason *x = a, *y = b;

	return x->code < y->code ? -1 : x->code > y->code;
}

/* The names of the drops' reasons as this kernel names them (format 8):
 * each record's, and every reason this kernel has when a window's drops
 * did not all find a slot (a query tries them all); sorted by code, each
 * once. *out NULL when there are no drops. 0 or -ENOMEM. */
static int collect_names(const struct bt_archive_batch *b, const struct bt_archive_drop *drops,
			 __u32 ndrops, struct bt_archive_reason **out, __u32 *n)
{
	const struct bt_drop_reason *all = NULL;
	int nall = 0;
	__u32 m = 0;
	char buf[96];

	*out = NULL;
	*n = 0;
	for (int i = 0; b->reasons && i < b->n && !all; i++)
		if (b->reasons[i] && b->reasons[i]->other && !(all = bt_drop_reasons_all(&nall)))
			break;
	if (!ndrops && !nall)
		return 0;
	if (!(*out = calloc(ndrops + nall, sizeof(**out))))
		return -ENOMEM;
	for (int i = 0; i < nall; i++) {
		(*out)[m].code = all[i].code;
		snprintf((*out)[m++].name, sizeof((*out)[0].name), "%s", all[i].name);
	}
	for (__u32 i = 0; i < ndrops; i++) {
		(*out)[m].code = drops[i].reason;
		snprintf((*out)[m++].name, sizeof((*out)[0].name), "%s",
			 bt_drop_reason_name(drops[i].reason, buf, sizeof(buf)));
	}
	qsort(*out, m, sizeof(**out), cmp_name_code);
	for (__u32 i = 0; i < m; i++)
		if (!*n || (*out)[*n - 1].code != (*out)[i].code)
			(*out)[(*n)++] = (*out)[i];
	return 0;
}

/* Where the windows' coded chunks go, as write_atomic takes them. */
struct chunked {
	struct bt_archive_win *recs;	/* a record a window */
	uint8_t *tables, *data;		/* each window's offsets, then chunks */
	size_t data_len, data_cap;
	size_t *woff;			/* each window's chunks, in data */
	struct iovec *iov;		/* 5 + 2 a window: header, dictionary
					 * (none since format 10), records,
					 * drops, names, then the windows' */
	size_t table_len;
	__u32 cbytes, chunks;
	__u64 window_bits;
	__s64 real_minus_boot;		/* the windows' times turned with it, once */
};

/* Room for need bytes more in c->data: 0 or -ENOMEM */
static int data_room(struct chunked *c, size_t need)
{
	size_t cap = c->data_cap ? c->data_cap : 1 << 16;
	uint8_t *d;

	while (cap < c->data_len + need)
		cap *= 2;
	if (cap == c->data_cap)
		return 0;
	if (!(d = realloc(c->data, cap)))
		return -ENOMEM;
	c->data = d;
	c->data_cap = cap;
	return 0;
}

/* Each window's record, and its filter in chunks of cbytes, each its
 * Golomb-coded gaps after their CRC-32 (format 10), from file offset off
 * on; the iovecs once all are coded (data moves as it grows). 0, -ENOMEM,
 * or -EFBIG when a window's code passes its 32-bit offsets. */
static int code_windows(const struct bt_archive_batch *b, struct chunked *c, __u64 off)
{
	for (int i = 0; i < b->n; i++) {
		const struct bt_window *w = b->win[i];
		uint8_t *t = c->tables + i * c->table_len;
		__u32 *offs = (__u32 *)t, m = bt_gap_param(w->set_bits, c->window_bits);
		__u64 at = 0;

		c->woff[i] = c->data_len;
		c->recs[i] = (struct bt_archive_win){
			.start_ns = w->start_ns ? w->start_ns + c->real_minus_boot : 0,
			.end_ns = w->end_ns ? w->end_ns + c->real_minus_boot : 0,
			.packets = w->packets, .set_bits = w->set_bits,
			.fpr_e15 = w->fpr_e15, .seq = w->seq,
			.flags = w->flags | BT_WIN_ARCHIVED, .table_off = off,
			.data_off = off + c->table_len,
		};
		if (b->reasons && b->reasons[i] && b->reasons[i]->other)
			c->recs[i].flags |= BT_ARCHIVE_DROPS_OTHER;
		/* nothing recorded: the record alone (format 4) */
		if (!w->set_bits) {
			c->recs[i].table_off = c->recs[i].data_off = 0;
			continue;
		}
		for (__u32 k = 0; k < c->chunks; k++) {
			const uint64_t *raw = (const uint64_t *)b->filters[i] +
					      (size_t)k * c->cbytes / 8;
			uint64_t set = 0;
			size_t clen;
			__u32 sum;

			for (__u32 j = 0; j < c->cbytes / 8; j++)
				set += __builtin_popcountll(raw[j]);
			if (data_room(c, 4 + bt_gap_bound_set((__u64)c->cbytes * 8, set, m)))
				return -ENOMEM;
			clen = bt_gap_encode(raw, c->cbytes, m, c->data + c->data_len + 4);
			sum = crc(c->data + c->data_len + 4, clen);
			memcpy(c->data + c->data_len, &sum, 4);
			offs[k] = (__u32)at;
			at += 4 + clen;
			c->data_len += 4 + clen;
			if (at > UINT32_MAX) {
				bt_err("archive: window %u's code passes 4 GiB", w->seq);
				return -EFBIG;
			}
		}
		offs[c->chunks] = (__u32)at;
		off += c->table_len + at;
	}
	for (int i = 0; i < b->n; i++) {
		bool empty = !b->win[i]->set_bits;
		size_t end = i + 1 < b->n ? c->woff[i + 1] : c->data_len;

		c->iov[5 + 2 * i] = (struct iovec){ c->tables + i * c->table_len,
						    empty ? 0 : c->table_len };
		c->iov[6 + 2 * i] = (struct iovec){ c->data + c->woff[i], end - c->woff[i] };
	}
	return 0;
}

/* Room for n windows of raw bytes each, in chunks of at most one
 * BT_ARCHIVE_CHUNK: 0, or -ENOMEM (chunked_free frees what was had) */
static int chunked_alloc(struct chunked *c, size_t raw, int n)
{
	c->window_bits = (__u64)raw * 8;
	c->cbytes = raw < BT_ARCHIVE_CHUNK ? raw : BT_ARCHIVE_CHUNK;
	c->chunks = raw / c->cbytes;
	c->table_len = (c->chunks + 1) * sizeof(__u32);
	c->recs = calloc(n, sizeof(*c->recs));
	c->tables = malloc(n * c->table_len);
	c->woff = calloc(n, sizeof(*c->woff));
	c->iov = calloc(5 + 2 * n, sizeof(*c->iov));
	return c->recs && c->tables && c->woff && c->iov ? 0 : -ENOMEM;
}

static void chunked_free(struct chunked *c)
{
	free(c->recs);
	free(c->tables);
	free(c->data);
	free(c->woff);
	free(c->iov);
}

/* The archive's directory and its key file, made when missing */
static int archive_dir_ready(const char *dir, const char *instance, const struct bt_meta *meta)
{
	int err;

	if (meta->window_bits > BT_ARCHIVE_WINDOW_BITS_MAX) {
		bt_err("archive: windows of more than 2^34 bits are not archived");
		return -EFBIG;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		bt_err("archive directory %s: %s", dir, strerror(-err));
		return err;
	}
	if ((err = ensure_key(dir, instance, meta)))
		bt_err("archive %s: writing the key file: %s", dir, strerror(-err));
	return err;
}

/* The header of format 3, its checksums over the dictionary, the records,
 * the drops and their names included */
static void hdr3_fill(struct bt_archive_hdr3 *h, const char *instance, const struct bt_meta *meta,
		      const struct chunked *c, int n, const struct bt_archive_drop *drops, __u32 ndrops,
		      const struct bt_archive_reason *names, __u32 nnames)
{
	memcpy(h->magic, BT_ARCHIVE_MAGIC, 8);
	h->version = BT_ARCHIVE_VERSION;
	h->hdr_len = sizeof(*h);
	snprintf(h->instance, sizeof(h->instance), "%s", instance);
	h->key_id = bt_key_id(&meta->hash_key);
	h->window_bits = meta->window_bits;
	h->k = meta->k;
	h->block_bits = BT_BLOCK_BITS;
	h->windows = n;
	h->chunk_bytes = c->cbytes;
	h->chunks = c->chunks;
	h->dict_len = 0;
	h->reserved[0] = ndrops;
	h->records_crc = crc(c->recs, n * sizeof(*c->recs));
	h->reserved[1] = nnames;
	h->reserved[2] = (__u64)c->real_minus_boot;
	if (ndrops)	/* zlib's crc32() of NULL is its initial value, not a no-op */
		h->records_crc = crc32(h->records_crc, (const Bytef *)drops,
				       ndrops * sizeof(*drops));
	if (nnames)
		h->records_crc = crc32(h->records_crc, (const Bytef *)names,
				       nnames * sizeof(*names));
	h->hdr_crc = hdr3_crc(h);
}

int bt_archive_write(const char *dir, const char *instance, const struct bt_meta *meta,
		     const struct bt_archive_batch *b, char *path_out, size_t len)
{
	int n = b->n;
	struct chunked c = { 0 };
	struct bt_archive_hdr3 h = { 0 };
	struct bt_archive_drop *drops = NULL;
	struct bt_archive_reason *names = NULL;
	__u32 ndrops = 0, nnames = 0;
	char name[160];
	int err = -ENOMEM;

	if (!n || chunked_alloc(&c, b->bpw * sizeof(struct bt_bloom_block), n) ||
	    collect_drops(b, &drops, &ndrops) || collect_names(b, drops, ndrops, &names, &nnames))
		goto out;
	if ((err = archive_dir_ready(dir, instance, meta)))
		goto out;
	c.real_minus_boot = bt_real_minus_boot();
	if ((err = code_windows(b, &c, sizeof(h) + (__u64)n * sizeof(*c.recs) +
				ndrops * sizeof(*drops) + nnames * sizeof(*names))))
		goto out;
	hdr3_fill(&h, instance, meta, &c, n, drops, ndrops, names, nnames);
	c.iov[0] = (struct iovec){ &h, sizeof(h) };
	c.iov[1] = (struct iovec){ NULL, 0 };
	c.iov[2] = (struct iovec){ c.recs, n * sizeof(*c.recs) };
	c.iov[3] = (struct iovec){ drops, ndrops * sizeof(*drops) };
	c.iov[4] = (struct iovec){ names, nnames * sizeof(*names) };
	/* names sort by time: the first window's start in ns, then its number */
	snprintf(name, sizeof(name), "%s-%020llu-%08u%s", instance,
		 (unsigned long long)c.recs[0].start_ns, c.recs[0].seq, BT_ARCHIVE_SUFFIX);
	same_first_window(dir, instance, h.key_id, c.recs[0].start_ns, c.recs[0].seq, name,
			  sizeof(name));
	err = write_atomic(dir, name, 0600, c.iov, 5 + 2 * n);
	if (err) {
		bt_err("archive %s/%s: %s%s", dir, name, strerror(-err),
		       err == -ENOSPC ? " (the windows stay in the ring until they are "
					"needed again)" : "");
		goto out;
	}
	if (path_out)
		snprintf(path_out, len, "%s/%s", dir, name);
out:
	chunked_free(&c);
	free(drops);
	free(names);
	return err;
}

static int load_key(const char *dir, const char *instance, __u64 key_id,
		    struct bt_hash_key_raw *key)
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
	key->k0 = kf.k0;
	key->k1 = kf.k1;
	return bt_key_id(key) == key_id ? 0 : -EINVAL;
}

static bool pread_all(int fd, void *buf, size_t len, __u64 off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

/* The names of format 8, from the records as read (p: unaligned) */
static const char *read_names(struct bt_archive_file *f, const uint8_t *p)
{
	for (__u32 i = 0; i < f->nnames; i++) {
		struct bt_archive_reason r;

		memcpy(&r, p + i * sizeof(r), sizeof(r));
		if (!memchr(r.name, 0, sizeof(r.name)))
			return "a reason's name is not terminated";
		if (i && r.code <= f->names[i - 1].code)
			return "the reasons' names are out of order";
		f->names[i].code = r.code;
		memcpy(f->names[i].name, r.name, sizeof(r.name));
	}
	return NULL;
}

/* A coded chunk's bytes, at most: a zstd frame before format 10, then the
 * gaps after their CRC-32 */
static size_t chunk_bound(int version, __u32 chunk_bytes)
{
	return version >= BT_ARCHIVE_GAPS ? 4 + bt_gap_bound(chunk_bytes)
					  : ZSTD_compressBound(chunk_bytes);
}

static const char *open_v3(struct bt_archive_file *f, const char *dir, __u64 size)
{
	struct bt_archive_hdr3 h;
	__u64 wbytes, recs_end, table_len;
	uint8_t *head;
	const char *why = NULL;

	if (!pread_all(f->fd, &h, sizeof(h), 0))
		return "shorter than an archive header";
	if (h.hdr_len != sizeof(h))
		return "archive format version not supported";
	if (h.hdr_crc != hdr3_crc(&h))
		return "header is corrupt (checksum)";
	wbytes = h.window_bits / 8;
	/* format 10's one-line blocks of k positions; before it, 128-bit
	 * blocks of k/2 bits a word */
	if ((h.version >= BT_ARCHIVE_GAPS ?
	     h.block_bits != BT_BLOCK_BITS || h.k > BT_BLOCK_MAX_K || h.dict_len :
	     h.block_bits != BT_LEGACY_BLOCK_BITS || h.k > BT_LEGACY_MAX_K || h.k % 2) ||
	    h.window_bits < 4096 ||
	    h.window_bits > BT_ARCHIVE_WINDOW_BITS_MAX || (h.window_bits & (h.window_bits - 1)) ||
	    !h.k || !h.windows || h.windows > 65536 ||
	    !h.chunk_bytes || h.chunk_bytes % (h.block_bits / 8) ||
	    h.chunk_bytes > (h.version >= BT_ARCHIVE_GAPS ? 1u << 16 : 1u << 20) ||
	    wbytes % h.chunk_bytes ||
	    h.chunks != wbytes / h.chunk_bytes || h.dict_len > (1u << 16) ||
	    !memchr(h.instance, 0, sizeof(h.instance)))
		return "header fields out of range";
	if (h.version >= 5 && h.reserved[0] > (__u64)h.windows * BT_WIN_REASONS_MAX)
		return "header fields out of range";
	if (h.version >= 8 && h.reserved[1] > BT_ARCHIVE_REASONS_MAX)
		return "header fields out of range";
	f->ndrops = h.version >= 5 ? h.reserved[0] : 0;
	f->nnames = h.version >= 8 ? h.reserved[1] : 0;
	f->real_minus_boot = h.version >= BT_ARCHIVE_V6_EXT ? (__s64)h.reserved[2] : 0;
	recs_end = sizeof(h) + h.dict_len + (__u64)h.windows * sizeof(struct bt_archive_win) +
		   f->ndrops * sizeof(struct bt_archive_drop) +
		   f->nnames * sizeof(struct bt_archive_reason);
	if (size < recs_end)
		return "truncated";
	/* the dictionary and the records, read once; then a query reads only
	 * two offsets and a chunk a window (pread: mapping the file cost a
	 * page fault a window, and faults cost 1 to 7 us here) */
	head = malloc(recs_end - sizeof(h));
	f->win = malloc(h.windows * sizeof(*f->win));
	f->drops = malloc((f->ndrops ? f->ndrops : 1) * sizeof(*f->drops));
	f->names = malloc((f->nnames ? f->nnames : 1) * sizeof(*f->names));
	f->raw_buf = malloc(h.chunk_bytes);
	f->chunk_buf = malloc(chunk_bound(h.version, h.chunk_bytes));
	if (!head || !f->win || !f->drops || !f->names || !f->raw_buf || !f->chunk_buf)
		why = "out of memory";
	else if (!pread_all(f->fd, head, recs_end - sizeof(h), sizeof(h)))
		why = "truncated";
	else if (crc(head, recs_end - sizeof(h)) != h.records_crc)
		why = "window records are corrupt (checksum)";
	else if (h.dict_len && !(f->ddict = ZSTD_createDDict(head, h.dict_len)))
		why = "its dictionary does not load";
	if (!why) {
		memcpy(f->win, head + h.dict_len, h.windows * sizeof(*f->win));
		memcpy(f->drops, head + h.dict_len + h.windows * sizeof(*f->win),
		       f->ndrops * sizeof(*f->drops));
		why = read_names(f, head + h.dict_len + h.windows * sizeof(*f->win) +
				 f->ndrops * sizeof(*f->drops));
	}
	for (__u32 i = 0; !why && i < f->ndrops; i++)
		if (f->drops[i].window >= h.windows)
			why = "a drop record names a window the file does not have";
	free(head);
	if (why)
		return why;
	table_len = (h.chunks + 1) * sizeof(__u32);
	for (__u32 w = 0; w < h.windows; w++) {
		/* format 4: an all-zero filter has neither table nor chunks */
		if (h.version >= 4 && !f->win[w].table_off && !f->win[w].data_off &&
		    !f->win[w].set_bits)
			continue;
		if (f->win[w].table_off < recs_end || f->win[w].table_off > size ||
		    table_len > size - f->win[w].table_off || f->win[w].data_off > size)
			return "truncated, or a chunk table lies outside the file";
	}
	snprintf(f->instance, sizeof(f->instance), "%s", h.instance);
	f->window_bits = h.window_bits;
	f->k = h.k;
	f->block_bits = h.block_bits;
	f->nwin = h.windows;
	f->chunks_per_win = h.chunks;
	f->chunk_bytes = h.chunk_bytes;
	f->key_id = h.key_id;
	if (load_key(dir, h.instance, h.key_id, &f->key))
		return "its key file is missing or does not match";
	bt_hash_keys_derive(&f->key, &f->keys);
	return NULL;
}

static const char *open_v2(struct bt_archive_file *f, const char *dir, __u64 size)
{
	struct hdr_v2 h;

	if (!pread_all(f->fd, &h, sizeof(h), 0))
		return "shorter than an archive header";
	if (h.hdr_len != sizeof(h))
		return "archive format version not supported";
	if (h.version >= 2 && h.hdr_crc != hdr2_crc(&h))
		return "header is corrupt (checksum)";
	if (h.block_bits != V2_BLOCK_BYTES * 8 || !h.window_bits ||
	    h.window_bits % (V2_BLOCK_BYTES * 8) || h.window_bits > (1ULL << 36) || !h.k ||
	    h.k > 16 || (h.window_bits / 512 & (h.window_bits / 512 - 1)) ||
	    !memchr(h.instance, 0, sizeof(h.instance)))
		return "header fields out of range";
	if (size != sizeof(h) + h.compressed_len)
		return "truncated, or longer than its header says";
	f->win = calloc(1, sizeof(*f->win));
	f->raw_buf = malloc(h.window_bits / 8);
	if (!f->win || !f->raw_buf)
		return "out of memory";
	/* no fill per block was kept: the unblocked estimate from the set bits */
	*f->win = (struct bt_archive_win){ .start_ns = h.start_ns, .end_ns = h.end_ns,
		.packets = h.packets, .set_bits = h.set_bits, .seq = h.seq,
		.fpr_e15 = (__u64)llround(pow((double)h.set_bits / h.window_bits, h.k) * 1e15),
		.flags = BT_WIN_ARCHIVED };
	snprintf(f->instance, sizeof(f->instance), "%s", h.instance);
	f->window_bits = h.window_bits;
	f->k = h.k;
	f->nwin = 1;
	f->legacy_len = h.compressed_len;
	f->key_id = h.key_id;
	if (load_key(dir, h.instance, h.key_id, &f->key))
		return "its key file is missing or does not match";
	return NULL;
}

struct bt_archive_file *bt_archive_open(const char *dir, const char *name, const char **why)
{
	struct bt_archive_file *f = calloc(1, sizeof(*f));
	struct { char magic[8]; __u32 version; } start;
	struct stat st;

	*why = "out of memory";
	if (!f)
		return NULL;
	f->cached = -1;
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		*why = strerror(errno);
		free(f);
		return NULL;
	}
	if (fstat(f->fd, &st) || !pread_all(f->fd, &start, sizeof(start), 0)) {
		*why = "shorter than an archive header";
		goto out;
	}
	f->size = st.st_size;
	if (memcmp(start.magic, BT_ARCHIVE_MAGIC, 8))
		*why = "not a bloomtap archive file";
	else if (start.version >= 3 && start.version <= BT_ARCHIVE_VERSION)
		f->version = start.version, *why = open_v3(f, dir, f->size);
	else if (start.version == 1 || start.version == 2)
		f->version = start.version, *why = open_v2(f, dir, st.st_size);
	else
		*why = "archive format version not supported";
out:
	if (*why) {
		bt_archive_close(f);
		return NULL;
	}
	return f;
}

void bt_archive_reasons(const struct bt_archive_file *f, __u32 w, struct bt_win_reasons *out)
{
	memset(out, 0, sizeof(*out));
	if (w < f->nwin && (f->win[w].flags & BT_ARCHIVE_DROPS_OTHER))
		out->other = true;
	for (__u32 i = 0; i < f->ndrops; i++)
		if (f->drops[i].window == w && out->n < BT_WIN_REASONS_MAX) {
			out->code[out->n] = f->drops[i].reason;
			out->count[out->n++] = f->drops[i].count;
		}
}

static int cmp_code(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = ((const struct bt_drop_reason *)b)->code;

	return x < y ? -1 : x > y;
}

const char *bt_archive_reason_name(const struct bt_archive_file *f, __u32 code, char *buf,
				   size_t len)
{
	const struct bt_drop_reason *r = f->nnames ?
		bsearch(&code, f->names, f->nnames, sizeof(*f->names), cmp_code) : NULL;

	if (r)
		return r->name;
	if (f->nnames) {	/* a code the writer did not name: no guess from this kernel */
		snprintf(buf, len, "reason %u", code);
		return buf;
	}
	return bt_drop_reason_name(code, buf, len);
}

void bt_archive_close(struct bt_archive_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->win);
	free(f->drops);
	free(f->names);
	free(f->raw_buf);
	free(f->chunk_buf);
	ZSTD_freeDDict(f->ddict);
	if (!f->dctx_lent)
		ZSTD_freeDCtx(f->dctx);
	memset(&f->key, 0, sizeof(f->key));
	memset(&f->keys, 0, sizeof(f->keys));
	free(f);
}

void bt_archive_lend_dctx(struct bt_archive_file *f, ZSTD_DCtx *dctx)
{
	if (!f->dctx_lent)
		ZSTD_freeDCtx(f->dctx);
	f->dctx = dctx;
	f->dctx_lent = true;
}

__u64 bt_archive_digest(const struct bt_archive_file *f, const struct bt_spie_packet *p)
{
	if (f->version >= BT_ARCHIVE_V6_EXT)
		return bt_spie_digest(&f->keys, p);
	if (f->version >= 7)
		return bt_spie_digest_v7(&f->keys, p);
	return f->version >= 3 ? bt_spie_digest_abi13(&f->keys, p) : bt_spie_digest_legacy(&f->key, p);
}

/* Format 10: the cached chunk decoded at least up to byte upto of it. */
static const char *chunk_upto(struct bt_archive_file *f, __u64 upto)
{
	if (f->version >= BT_ARCHIVE_GAPS && f->win[f->cached / f->chunks_per_win].table_off &&
	    bt_gap_until(&f->gap, upto * 8)) {
		f->cached = -1;
		return "a compressed chunk or its offset is corrupt (does not decode)";
	}
	return NULL;
}

/* Decodes chunk c of window w of a format 3 file into raw_buf (format 10:
 * begins to, chunk_upto goes on). */
static const char *load_chunk(struct bt_archive_file *f, __u32 w, __u32 c)
{
	int64_t idx = (int64_t)w * f->chunks_per_win + c;
	__u64 data_off = f->win[w].data_off;
	__u32 ab[2];
	size_t got;

	if (f->cached == idx)
		return NULL;
	f->cached = -1;
	if (!f->win[w].table_off) {	/* format 4's empty window (open_v3 checked) */
		memset(f->raw_buf, 0, f->chunk_bytes);
		f->cached = idx;
		return NULL;
	}
	/* the two offsets this chunk needs, and nothing past the file; the
	 * frame's checksum catches an offset that is wrong but in range */
	if (!pread_all(f->fd, ab, sizeof(ab), f->win[w].table_off + (__u64)c * 4))
		return "truncated";
	if (ab[1] > f->size - data_off || ab[0] > ab[1] ||
	    ab[1] - ab[0] > chunk_bound(f->version, f->chunk_bytes))
		return "a chunk offset is out of range";
	if (!pread_all(f->fd, f->chunk_buf, ab[1] - ab[0], data_off + ab[0]))
		return "truncated";
	if (f->version >= BT_ARCHIVE_GAPS) {
		__u32 sum, len = ab[1] - ab[0];

		if (len < 4)
			return "a compressed chunk or its offset is corrupt (does not decode)";
		memcpy(&sum, f->chunk_buf, 4);
		if (sum != crc(f->chunk_buf + 4, len - 4))
			return "a compressed chunk or its offset is corrupt (checksum)";
		/* decoded as far as each query needs (chunk_upto) */
		bt_gap_begin(&f->gap, f->chunk_buf + 4, len - 4,
			     bt_gap_param(f->win[w].set_bits, f->window_bits),
			     (uint64_t *)f->raw_buf, f->chunk_bytes);
		f->cached = idx;
		return NULL;
	}
	if (!f->dctx && !(f->dctx = ZSTD_createDCtx()))
		return "out of memory";
	got = f->ddict ? ZSTD_decompress_usingDDict(f->dctx, f->raw_buf, f->chunk_bytes,
						    f->chunk_buf, ab[1] - ab[0], f->ddict)
		       : ZSTD_decompressDCtx(f->dctx, f->raw_buf, f->chunk_bytes, f->chunk_buf,
					     ab[1] - ab[0]);
	if (ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong)
		return "a compressed chunk or its offset is corrupt (checksum)";
	if (ZSTD_isError(got) || got != f->chunk_bytes)
		return "a compressed chunk or its offset is corrupt (does not decode)";
	f->cached = idx;
	return NULL;
}

static const char *load_legacy(struct bt_archive_file *f)
{
	void *cbuf;
	size_t got;

	if (f->cached == 0)
		return NULL;
	cbuf = malloc(f->legacy_len ? f->legacy_len : 1);
	if (!cbuf)
		return "out of memory";
	if (!pread_all(f->fd, cbuf, f->legacy_len, sizeof(struct hdr_v2))) {
		free(cbuf);
		return "truncated";
	}
	got = ZSTD_decompress(f->raw_buf, f->window_bits / 8, cbuf, f->legacy_len);
	free(cbuf);
	if (ZSTD_isError(got) || got != f->window_bits / 8)
		return "compressed filter is corrupt";
	f->cached = 0;
	return NULL;
}

/* The former membership test: 512-bit block h mod blocks, positions from
 * an LCG of the digest (Knuth's MMIX constants). */
static bool legacy_has(const uint8_t *filter, __u64 window_bits, __u32 k, __u64 h)
{
	const __u64 *b = (const __u64 *)(filter + (h & (window_bits / 512 - 1)) * V2_BLOCK_BYTES);
	__u64 x = h;

	for (__u32 i = 0; i < k; i++) {
		__u32 pos;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		pos = x >> 55;
		if (!(b[pos >> 6] & (1ULL << (pos & 63))))
			return false;
	}
	return true;
}

int bt_archive_has(struct bt_archive_file *f, __u32 w, __u64 h, const char **why)
{
	__u64 off, lw[2];

	if (w >= f->nwin) {
		*why = "no such window";
		return -1;
	}
	if (f->version < 3) {
		if ((*why = load_legacy(f)))
			return -1;
		return legacy_has(f->raw_buf, f->window_bits, f->k, h);
	}
	off = bt_archive_block(f, h) * (f->block_bits / 8);
	if ((*why = load_chunk(f, w, off / f->chunk_bytes)) ||
	    (*why = chunk_upto(f, off % f->chunk_bytes + f->block_bits / 8)))
		return -1;
	if (f->block_bits == BT_BLOCK_BITS)
		return bt_bloom_block_has((const struct bt_bloom_block *)
					  (f->raw_buf + off % f->chunk_bytes), f->k, h);
	memcpy(lw, f->raw_buf + off % f->chunk_bytes, sizeof(lw));
	return (lw[0] & bt_bloom_legacy_mask(h, 0, f->k)) == bt_bloom_legacy_mask(h, 0, f->k) &&
	       (lw[1] & bt_bloom_legacy_mask(h, 1, f->k)) == bt_bloom_legacy_mask(h, 1, f->k);
}

__u64 bt_archive_block(const struct bt_archive_file *f, __u64 h)
{
	__u32 mask;

	if (f->version < 3)
		return 0;
	mask = f->window_bits / f->block_bits - 1;
	return f->block_bits == BT_BLOCK_BITS ? bt_bloom_block(h, mask)
					       : bt_bloom_legacy_block(h, mask);
}

int bt_archive_read_window(struct bt_archive_file *f, __u32 w, struct bt_bloom_block *out)
{
	if (f->version < 3 || w >= f->nwin)
		return -1;
	for (__u32 c = 0; c < f->chunks_per_win; c++) {
		if (load_chunk(f, w, c) || chunk_upto(f, f->chunk_bytes))
			return -1;
		memcpy((uint8_t *)out + (size_t)c * f->chunk_bytes, f->raw_buf, f->chunk_bytes);
	}
	return 0;
}

int bt_archive_name_parse(const char *name, char *instance, size_t len, __u64 *start_ns,
			  __u32 *seq)
{
	size_t l = strlen(name), sl = strlen(BT_ARCHIVE_SUFFIX);
	/* INSTANCE-<20 digits>-<8 digits>.btw */
	const size_t tail = 1 + 20 + 1 + 8;

	if (l <= sl + tail || strcmp(name + l - sl, BT_ARCHIVE_SUFFIX))
		return -1;
	const char *t = name + l - sl - tail;

	if (t[0] != '-' || t[21] != '-')
		return -1;
	for (int i = 1; i < (int)tail; i++)
		if (i != 21 && (t[i] < '0' || t[i] > '9'))
			return -1;
	if ((size_t)(t - name) >= len)
		return -1;
	memcpy(instance, name, t - name);
	instance[t - name] = 0;
	*start_ns = strtoull(t + 1, NULL, 10);
	*seq = strtoul(t + 22, NULL, 10);
	return 0;
}

static bool is_archive_name(const char *name)
{
	char inst[BT_ARCHIVE_NAME_MAX + 1];
	__u64 start;
	__u32 seq;

	return !bt_archive_name_parse(name, inst, sizeof(inst), &start, &seq);
}

struct named {
	char *name;
	__u64 start;
	__u32 seq;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

int bt_archive_list(const char *dir, const char *instance, char ***out, int *n)
{
	char **names, inst[BT_ARCHIVE_NAME_MAX + 1];
	struct named *v;
	int cnt, err, k = 0;

	*out = NULL;
	*n = 0;
	if ((err = bt_list_dir(dir, is_archive_name, &names, &cnt)))
		return err;
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v) {
		bt_strv_free(names, cnt);
		return -ENOMEM;
	}
	for (int i = 0; i < cnt; i++) {
		bt_archive_name_parse(names[i], inst, sizeof(inst), &v[k].start, &v[k].seq);
		if (instance && strcmp(inst, instance)) {
			free(names[i]);
			continue;
		}
		v[k++].name = names[i];
	}
	qsort(v, k, sizeof(*v), cmp_named);
	for (int i = 0; i < k; i++)
		names[i] = v[i].name;
	free(v);
	*out = names;
	*n = k;
	return 0;
}

static bool is_tmp_name(const char *name)
{
	return !strncmp(name, ".tmp-", 5);
}

/* Temporary files older than a minute are what a crash left. */
static void prune_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];
	struct stat st;

	while (d && (de = readdir(d)))
		if (is_tmp_name(de->d_name)) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (!stat(path, &st) && time(NULL) - st.st_mtime > 60)
				unlink(path);
		}
	if (d)
		closedir(d);
}

int bt_archive_prune(const char *dir, const char *instance, uint64_t max_bytes,
		     uint64_t max_age_s, uint64_t *total_out)
{
	char **names, path[512], inst[BT_ARCHIVE_NAME_MAX + 1];
	uint64_t total = 0, *sizes;
	__u64 now = (__u64)time(NULL) * 1000000000ULL;
	int n, err, removed = 0;

	prune_tmp(dir);
	if ((err = bt_archive_list(dir, instance, &names, &n)))
		return err;
	sizes = calloc(n ? n : 1, sizeof(*sizes));
	if (!sizes) {
		bt_strv_free(names, n);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		__u64 start;
		__u32 seq;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st))
			continue;
		bt_archive_name_parse(names[i], inst, sizeof(inst), &start, &seq);
		if (max_age_s && start && now > start && (now - start) / 1000000000ULL > max_age_s) {
			removed += !unlink(path);
			continue;
		}
		sizes[i] = st.st_size;
		total += st.st_size;
	}
	/* oldest first: the list is sorted by start time */
	for (int i = 0; i < n && max_bytes && total > max_bytes; i++) {
		if (!sizes[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!unlink(path)) {
			total -= sizes[i];
			removed++;
		}
	}
	free(sizes);
	bt_strv_free(names, n);
	if (total_out)
		*total_out = total;
	return removed;
}
