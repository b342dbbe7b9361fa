// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: the command line (NUL-separated arguments) through the option
 * parser with every kind of option and the sizing that follows, and the
 * same bytes as a configuration file of bloomtap run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"
#include "agent/agent.h"
#include "instance/link.h"
#include "base/common.h"
#include "base/options.h"
#include "instance/sketch.h"
#include "instance/spie.h"

static struct {
	struct bt_sketch_cfg sketch;
	struct bt_spie_cfg spie;
	const char *s;
	bool flag;
	int mode;
} cfg;

static const struct bt_opt opts[] = {
	BT_SKETCH_OPTS(cfg.sketch),
	BT_SPIE_OPTS(cfg.spie),
	BT_INSTANCE_OPT(cfg.s),
	{ "flag", 'f', BT_OPT_FLAG, &cfg.flag, NULL, "a flag" },
	{ "mode", 'm', BT_OPT_ENUM, &cfg.mode, "M", "a mode", .choices = bt_mode_names },
	{ 0 }
};
static const struct bt_cmd_spec spec = { "fuzz", "[A] [B]", "fuzz", opts, 0, 2 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[64], path[] = "/tmp/bt-fuzz-conf-XXXXXX";
	int argc = 1, fd;

	memcpy(buf, data, size);
	buf[size] = 0;
	argv[0] = "fuzz";
	for (size_t i = 0; i < size && argc < 63; i += strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	argv[argc] = NULL;
	memset(&cfg, 0, sizeof(cfg));
	if (bt_parse_args(&spec, argc, argv) >= 0) {
		struct bt_meta m = { 0 };

		if (!bt_sketch_resolve(&cfg.sketch, &m))
			bt_spie_resolve(&cfg.spie, &m);
	}
	/* the same bytes as a configuration file */
	fd = mkstemp(path);
	if (fd >= 0) {
		char *cargv[] = { "run", "--check", "--config", path, NULL };

		if (write(fd, data, size) == (ssize_t)size)
			bt_run_parse_only(4, cargv);
		close(fd);
		unlink(path);
	}
	free(buf);
	return 0;
}
