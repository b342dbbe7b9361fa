// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: an archive file as trace and archive read it, in a directory
 * that holds the key file of a fixed test key, so that checks past the
 * header are reached. A real file of three windows (two filled, the
 * middle one empty, which keeps its record only; the
 * first with two drop reasons, the last with one and more than its slots
 * held, so that the reasons' names are every reason of this kernel) is
 * the template. Each input is read four ways: as it is;
 * with its header's CRC made right (a mutated header would rarely get past
 * the checksum to the fields behind it); as everything behind the
 * template's header, the header's and the records' CRCs made right; and as
 * the last chunk's code of the template, its CRC and offset made right,
 * so that the gap decoder meets it. Every window is queried. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <zlib.h>
#include "fuzz.h"
#include "core/archive.h"
#include "base/common.h"

#define BLOCKS 128	/* a 65536-bit window: four chunks of 2048 bytes */
#define NAME "f-00000000000000000001-00000001.btw"

static char dir[] = "/tmp/bt-fuzz-archive-XXXXXX";
static uint8_t *tmpl;		/* the file bt_archive_write wrote */
static size_t tmpl_len, last_table, last_data, last_chunk;	/* the last window's */
static struct bt_archive_hdr3 th;

static int make_key_and_template(void)
{
	struct bt_meta m = { .window_bits = BLOCKS * BT_BLOCK_BITS, .k = 4,
			     .hash_key = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL } };
	/* set_bits as sealing counts them: 0 for the empty window only */
	struct bt_window w[3] = {
		{ .seq = 1, .start_ns = 1, .end_ns = 2, .packets = 3, .set_bits = 9000 },
		{ .seq = 2, .start_ns = 2, .end_ns = 3 },
		{ .seq = 3, .start_ns = 3, .end_ns = 4, .packets = 4, .set_bits = 9000 } };
	static struct bt_bloom_block filter[3][BLOCKS];
	const struct bt_window *wins[3] = { &w[0], &w[1], &w[2] };
	const struct bt_bloom_block *filters[3] = { filter[0], filter[1], filter[2] };
	struct bt_win_reasons r[3] = { { .n = 2, .code = { 12, 3 }, .count = { 5, 1 } },
				       { 0 },
				       { .n = 1, .other = true, .code = { 2 }, .count = { 7 } } };
	const struct bt_win_reasons *rp[3] = { &r[0], &r[1], &r[2] };
	char path[512];
	FILE *f;

	/* two filled windows, a quarter of their bits set */
	for (int i = 0; i < BLOCKS; i++)
		for (int j = 0; j < BT_BLOCK_WORDS; j++)
			filter[0][i].w[j] = filter[2][i].w[BT_BLOCK_WORDS - 1 - j] =
				(0x9e3779b97f4a7c15ULL * (2 * i + j + 1)) & (0x9e3779b97f4a7c15ULL * (i + 7));
	if (bt_archive_write(dir, "f", &m, &(struct bt_archive_batch){ wins, filters, rp, 3, BLOCKS },
			     path, sizeof(path)))
		return -1;
	f = fopen(path, "rb");
	tmpl = malloc(1 << 20);
	if (!f || !tmpl)
		return -1;
	tmpl_len = fread(tmpl, 1, 1 << 20, f);
	fclose(f);
	unlink(path);
	memcpy(&th, tmpl, sizeof(th));
	struct bt_archive_win last;
	__u32 off;

	memcpy(&last, tmpl + sizeof(th) + th.dict_len + sizeof(last) * (th.windows - 1), sizeof(last));
	last_table = last.table_off;
	memcpy(&off, tmpl + last_table + 4 * (th.chunks - 1), 4);
	last_data = last.data_off;
	last_chunk = last_data + off;
	return th.chunks > 1 && last_chunk < tmpl_len ? 0 : -1;
}

static void remove_dir(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	if (!mkdtemp(dir))
		return 1;
	atexit(remove_dir);
	return make_key_and_template() ? 1 : 0;
}

/* The header's CRC, and with records the dictionary's and records' CRC,
 * made right for what the file now holds. */
static void fix_crcs(uint8_t *file, size_t len, bool records)
{
	struct bt_archive_hdr3 h;
	size_t rl;

	if (len < sizeof(h))
		return;
	memcpy(&h, file, sizeof(h));
	rl = h.dict_len + (size_t)h.windows * sizeof(struct bt_archive_win) +
	     (h.reserved[0] < (1u << 20) ? h.reserved[0] * sizeof(struct bt_archive_drop) : 0) +
	     (h.reserved[1] < (1u << 20) ? h.reserved[1] * sizeof(struct bt_archive_reason) : 0);
	if (records && h.windows <= 65536 && rl <= len - sizeof(h))
		h.records_crc = crc32(0, file + sizeof(h), rl);
	h.hdr_crc = 0;
	h.hdr_crc = crc32(0, (const Bytef *)&h, sizeof(h));
	memcpy(file, &h, sizeof(h));
}

static void query_file(const uint8_t *file, size_t len)
{
	struct bt_archive_file *f;
	const char *why;
	char path[256];
	FILE *out;

	snprintf(path, sizeof(path), "%s/" NAME, dir);
	out = fopen(path, "wb");
	if (!out)
		return;
	fwrite(file, 1, len, out);
	fclose(out);
	f = bt_archive_open(dir, NAME, &why);
	for (__u32 w = 0; f && w < f->nwin; w++) {
		struct bt_win_reasons r;

		char buf[96];

		bt_archive_reasons(f, w, &r);
		for (int i = 0; i < r.n; i++)
			bt_archive_reason_name(f, r.code[i], buf, sizeof(buf));
		for (__u64 h = 0; h < 64; h++)	/* blocks all over the window */
			if (bt_archive_has(f, w, h * 0x9e3779b97f4a7c15ULL, &why) < 0)
				break;
	}
	bt_archive_close(f);
	unlink(path);
}

static void query(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, int fix)
{
	uint8_t *file = malloc(alen + blen + 1);

	if (!file)
		return;
	memcpy(file, a, alen);
	if (blen)
		memcpy(file + alen, b, blen);
	if (fix)
		fix_crcs(file, alen + blen, fix > 1);
	query_file(file, alen + blen);
	free(file);
}

/* The template with its last chunk's code replaced by data, under its CRC. */
static void query_as_chunk(const uint8_t *data, size_t size)
{
	size_t len = last_chunk + 4 + size;
	uint8_t *file = malloc(len);
	__u32 end, sum = crc32(0, data, size);

	if (!file || size > 1 << 16) {
		free(file);
		return;
	}
	memcpy(file, tmpl, last_chunk);
	memcpy(file + last_chunk, &sum, 4);
	memcpy(file + last_chunk + 4, data, size);
	end = last_chunk - last_data + 4 + size;
	memcpy(file + last_table + 4 * th.chunks, &end, 4);
	query_file(file, len);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	query(data, size, NULL, 0, 0);
	query(data, size, NULL, 0, 1);
	query(tmpl, sizeof(struct bt_archive_hdr3), data, size, 2);
	query_as_chunk(data, size);
	return 0;
}
