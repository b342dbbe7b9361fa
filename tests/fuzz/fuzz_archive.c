// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: an archive file as trace and archive read it, in a directory
 * that holds the key file of a fixed test key, so that checks past the
 * header are reached. A real file of two windows (format 3) is the
 * template. Each input is read four ways: as it is; with its header's CRC
 * made right (a mutated header would rarely get past the checksum to the
 * fields behind it); as the index behind the template's header, both
 * CRCs made right; and as the chunk data behind the template's header and
 * index, so that decompression meets it. Every window is queried. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <zlib.h>
#include "fuzz.h"
#include "archive.h"
#include "common.h"

#define BLOCKS 256	/* a 32768-bit window: chunks of 4096 bytes */
#define NAME "f-00000000000000000001-00000001.btw"

static char dir[] = "/tmp/bt-fuzz-archive-XXXXXX";
static uint8_t *tmpl;		/* the file bt_archive_write wrote */
static size_t tmpl_len, index_end;

static int make_key_and_template(void)
{
	struct bt_meta m = { .window_bits = BLOCKS * BT_BLOCK_BITS, .k = 8,
			     .hash_key = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL } };
	struct bt_window w[2] = { { .seq = 1, .start_ns = 1, .end_ns = 2, .packets = 3 },
				  { .seq = 2, .start_ns = 2, .end_ns = 3, .packets = 4 } };
	static struct bt_bloom_block filter[2][BLOCKS];
	const struct bt_window *wins[2] = { &w[0], &w[1] };
	const struct bt_bloom_block *filters[2] = { filter[0], filter[1] };
	struct bt_archive_hdr3 h;
	char path[512];
	FILE *f;

	for (int i = 0; i < BLOCKS; i++)
		filter[0][i].w[0] = filter[1][i].w[1] = 0x5a5a0000ULL * i;
	if (bt_archive_write(dir, "f", &m, wins, filters, 2, BLOCKS, path, sizeof(path)))
		return -1;
	f = fopen(path, "rb");
	tmpl = malloc(1 << 20);
	if (!f || !tmpl)
		return -1;
	tmpl_len = fread(tmpl, 1, 1 << 20, f);
	fclose(f);
	unlink(path);
	memcpy(&h, tmpl, sizeof(h));
	index_end = sizeof(h) + h.index_len;
	return tmpl_len > index_end ? 0 : -1;
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

static void fix_crcs(uint8_t *file, size_t len, bool index)
{
	struct bt_archive_hdr3 h;

	if (len < sizeof(h))
		return;
	memcpy(&h, file, sizeof(h));
	if (index && h.index_len <= len - sizeof(h))
		h.index_crc = crc32(0, file + sizeof(h), h.index_len);
	h.hdr_crc = 0;
	h.hdr_crc = crc32(0, (const Bytef *)&h, sizeof(h));
	memcpy(file, &h, sizeof(h));
}

static void query(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, int fix)
{
	uint8_t *file = malloc(alen + blen + 1);
	struct bt_archive_file *f;
	const char *why;
	char path[256];
	FILE *out;

	if (!file)
		return;
	memcpy(file, a, alen);
	if (blen)
		memcpy(file + alen, b, blen);
	if (fix)
		fix_crcs(file, alen + blen, fix > 1);
	snprintf(path, sizeof(path), "%s/" NAME, dir);
	out = fopen(path, "wb");
	if (out) {
		fwrite(file, 1, alen + blen, out);
		fclose(out);
	}
	free(file);
	f = bt_archive_open(dir, NAME, &why);
	for (__u32 w = 0; f && w < f->nwin; w++)
		for (__u64 h = 0; h < 64; h++)	/* blocks all over the window */
			if (bt_archive_has(f, w, h * 0x9e3779b97f4a7c15ULL, &why) < 0)
				break;
	bt_archive_close(f);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	query(data, size, NULL, 0, 0);
	query(data, size, NULL, 0, 1);
	query(tmpl, sizeof(struct bt_archive_hdr3), data, size, 2);
	query(tmpl, index_end, data, size, 0);
	return 0;
}
