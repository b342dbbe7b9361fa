// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: an archive file (header, zstd frame) as trace reads it, beside
 * a valid key file so that the decompression is reached too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "archive.h"
#include "common.h"

static char dir[] = "/tmp/bt-fuzz-archive-XXXXXX";

static void each(const struct bt_archived *a, void *ctx)
{
	(*(uint64_t *)ctx) += a->bpw;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return mkdtemp(dir) ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[256];
	uint64_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/f-00000000000000000001-00000001.btw", dir);
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	bt_archive_each(dir, 0, 0, each, &n);
	unlink(path);
	return 0;
}
