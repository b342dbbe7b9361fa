// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: an archive file (header, zstd frame) as trace reads it, in a
 * directory that holds the key file of a fixed test key, so that checks
 * past the header are reached. Each input is queried three ways: as it is;
 * with its header's CRC made right (or a mutated header would rarely get
 * past the checksum to the fields behind it); and as the compressed filter
 * behind a valid header of that key. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "archive.h"
#include "common.h"

#define BLOCKS 8	/* a 4096-bit window */

static char dir[] = "/tmp/bt-fuzz-archive-XXXXXX";
static struct bt_archive_hdr valid;	/* the header bt_archive_write wrote */

static void each(const struct bt_archived *a, void *ctx)
{
	(*(uint64_t *)ctx) += a->bpw;
}

/* Writes one real window of the test key: its key file stays in dir, its
 * header becomes the template. */
static int make_key_and_template(void)
{
	struct bt_meta m = { .window_bits = BLOCKS * BT_BLOCK_BITS, .k = 5 };
	struct bt_window w = { .seq = 1, .start_ns = 1, .end_ns = 2, .end_inserted = 3 };
	struct bt_bloom_block filter[BLOCKS] = { { { 0x5a } } };
	char path[512];
	FILE *f;
	int ok;

	m.spie_key.k0 = 0x0123456789abcdefULL;
	m.spie_key.k1 = 0xfedcba9876543210ULL;
	if (bt_archive_write(dir, "f", &m, &w, filter, BLOCKS, path, sizeof(path)))
		return -1;
	f = fopen(path, "rb");
	ok = f && fread(&valid, sizeof(valid), 1, f) == 1;
	if (f)
		fclose(f);
	unlink(path);
	return ok ? 0 : -1;
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

static void query(const void *hdr, size_t hlen, const uint8_t *data, size_t size)
{
	char path[256];
	uint64_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/f-00000000000000000001-00000001.btw", dir);
	f = fopen(path, "wb");
	if (!f)
		return;
	if (hlen)
		fwrite(hdr, 1, hlen, f);
	fwrite(data, 1, size, f);
	fclose(f);
	bt_archive_each(dir, 0, 0, each, &n);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bt_archive_hdr h;

	query(NULL, 0, data, size);
	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		h.hdr_crc = bt_archive_hdr_crc(&h);
		query(&h, sizeof(h), data + sizeof(h), size - sizeof(h));
	}
	h = valid;
	h.compressed_len = size;
	h.hdr_crc = bt_archive_hdr_crc(&h);
	query(&h, sizeof(h), data, size);
	return 0;
}
