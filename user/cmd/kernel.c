// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* kernel: what the running kernel offers bloomtap (the probe's answer,
 * user/instance/kernel.c), and with --verifier the verifier's figures for every
 * program. A leaf: the probe knows nothing of it. */
#include <stdbool.h>
#include <stdio.h>
#include "commands.h"
#include "base/common.h"
#include "instance/create.h"
#include "instance/drops.h"
#include "instance/kernel.h"
#include "base/options.h"

static struct {
	bool verifier;
} kernel_cfg;

static const struct bt_opt kernel_opts[] = {
	{ "verifier", 0, BT_OPT_FLAG, &kernel_cfg.verifier, NULL,
	  "also load every program (nothing attached or pinned) and print the verifier's "
	  "instructions processed against its limit" },
	{ 0 }
};

static const struct bt_cmd_spec kernel_spec = {
	"kernel", "",
	"What the running kernel offers bloomtap: each feature it probes (by asking the\n"
	"kernel, not by its version), whether bloomtap needs it, and the first Linux\n"
	"that has it. Exits 1 when a required feature is missing.",
	kernel_opts, 0, 0,
};

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

int cmd_kernel(int argc, char **argv)
{
	struct json_object *o, *fs, *progs = NULL;
	int n = bt_parse_args(&kernel_spec, argc, argv), err = 0, missing = 0;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	o = bt_kernel_json();
	fs = json_object_object_get(o, "features");
	for (size_t i = 0; i < json_object_array_length(fs); i++) {
		struct json_object *f = json_object_array_get_idx(fs, i),
				   *present = json_object_object_get(f, "present");

		/* unknown (no privilege to ask) is not missing */
		missing += json_object_get_boolean(json_object_object_get(f, "required")) &&
			   present && !json_object_get_boolean(present);
	}
	if (kernel_cfg.verifier && !missing) {
		progs = json_object_new_array();
		if (!(err = bt_instance_verify(progs)) && bt_kernel_has(BT_KF_DROP_REASONS) > 0)
			err = bt_drops_host_verify(progs);
		json_object_object_add(o, "programs", progs);
	}
	if (bt_g.json) {
		bt_json_print(o);
		return missing || err ? BT_EXIT_FAIL : 0;
	}
	printf("kernel %s\n", str(o, "release"));
	for (size_t i = 0; i < json_object_array_length(fs); i++) {
		struct json_object *f = json_object_array_get_idx(fs, i),
				   *present = json_object_object_get(f, "present");
		bool required = json_object_get_boolean(json_object_object_get(f, "required"));
		bool off = !required && present && !json_object_get_boolean(present);

		printf("  %-20s %-8s %s, Linux %s%s%s\n", str(f, "name"),
		       !present ? "unknown" : json_object_get_boolean(present) ? "yes" : "no",
		       required ? "required" : "optional", str(f, "since"),
		       off ? ": " : "", off ? str(f, "without") : "");
	}
	if (bt_kernel_has(BT_KF_BPF) < 0)
		printf("  (unknown: only root, or CAP_BPF, may ask bpf(2)%s)\n", bt_seccomp_hint());
	for (size_t i = 0; progs && i < json_object_array_length(progs); i++) {
		struct json_object *e = json_object_array_get_idx(progs, i), *v;
		long processed = json_object_object_get_ex(e, "processed", &v) ?
				 json_object_get_int64(v) : 0;
		long limit = json_object_object_get_ex(e, "limit", &v) ? json_object_get_int64(v) : 0;

		printf("  verifier: %-16s %ld instructions processed of %ld (%.1f %%)\n",
		       str(e, "program"), processed, limit, limit ? 100.0 * processed / limit : 0);
	}
	json_object_put(o);
	if (missing)
		bt_kernel_require();
	return missing || err ? BT_EXIT_FAIL : 0;
}
