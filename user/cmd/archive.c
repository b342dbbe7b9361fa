// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* archive: what an archive directory holds. Every file, its instance and
 * format, and each sealed window in it: number, time range, packets, fill's
 * false-positive rate, whether it went past its load. A damaged file is
 * named and counted; the exit status is 1 when there was one. */
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include "core/archive.h"
#include "base/common.h"
#include "commands.h"
#include "base/options.h"
#include "base/util.h"

static struct archived_cfg {
	const char *instance;
} acfg;

static const struct bt_opt archived_opts[] = {
	{ "instance", 'i', BT_OPT_STRING, &acfg.instance, "NAME", "only this instance's files" },
	{ 0 }
};

static const struct bt_cmd_spec archived_spec = {
	"archive", "DIR",
	"The sealed SPIE windows archived in DIR: every file, and each window in it\n"
	"(number, time range, packets, false-positive rate). Exit status 1 when a\n"
	"file is damaged (it is named), or when --instance names none of the\n"
	"instances whose files DIR holds (they are named).",
	archived_opts, 1, 1,
};

static struct json_object *window_json(const struct bt_archive_win *w)
{
	struct json_object *o = json_object_new_object();
	char a[40], b[40];

	bt_fmt_ns(w->start_ns, a, sizeof(a), "-");
	bt_fmt_ns(w->end_ns, b, sizeof(b), "-");
	json_object_object_add(o, "window", json_object_new_int64(w->seq));
	json_object_object_add(o, "start", w->start_ns ? json_object_new_string(a) : NULL);
	json_object_object_add(o, "end", w->end_ns ? json_object_new_string(b) : NULL);
	json_object_object_add(o, "packets", json_object_new_uint64(w->packets));
	json_object_object_add(o, "fpr", json_object_new_double(w->fpr_e15 / 1e15));
	json_object_object_add(o, "overloaded",
			       json_object_new_boolean(w->flags & BT_WIN_OVERLOADED));
	return o;
}

/* An instance asked for that has no file here, in a directory that holds
 * others': a typo, not an empty archive. Names (some of) the instances
 * there. */
static int no_such_instance(const char *dir, const char *instance)
{
	char **names = NULL, seen[8][BT_ARCHIVE_NAME_MAX + 1], list[8 * (BT_ARCHIVE_NAME_MAX + 2)];
	int n = 0, nseen = 0;
	size_t len = 0;

	if (bt_archive_list(dir, NULL, &names, &n))
		return 0;
	for (int i = 0; i < n && nseen < 8; i++) {
		const char *why;
		struct bt_archive_file *f = bt_archive_open(dir, names[i], &why);
		int j;

		for (j = 0; f && j < nseen && strcmp(seen[j], f->instance); j++)
			;
		if (f && j == nseen)
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", f->instance);
		bt_archive_close(f);
	}
	bt_strv_free(names, n);
	if (!nseen)
		return 0;
	for (int j = 0; j < nseen; j++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", j ? ", " : "", seen[j]);
	bt_err("archive %s: no file of instance %s (instances here: %s%s)", dir, instance, list,
	       nseen == 8 ? ", ..." : "");
	return 1;
}

int cmd_archive(int argc, char **argv)
{
	int n = bt_parse_args(&archived_spec, argc, argv), nfiles, damaged = 0, err;
	struct json_object *arr = NULL;
	uint64_t windows = 0, bytes = 0;
	const char *dir;
	char **names;

	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	dir = argv[1];
	if ((err = bt_archive_list(dir, acfg.instance, &names, &nfiles))) {
		bt_err("archive %s: %s", dir, strerror(-err));
		return BT_EXIT_USAGE;
	}
	if (!nfiles && acfg.instance && no_such_instance(dir, acfg.instance)) {
		bt_strv_free(names, nfiles);
		return BT_EXIT_FAIL;
	}
	if (bt_g.json)
		arr = json_object_new_array();
	for (int i = 0; i < nfiles; i++) {
		const char *why;
		struct bt_archive_file *f = bt_archive_open(dir, names[i], &why);
		struct stat st;

		if (!f) {
			bt_warn("archive file %s/%s: %s", dir, names[i], why);
			damaged++;
			continue;
		}
		if (!stat(f->path, &st))
			bytes += st.st_size;
		windows += f->nwin;
		if (arr) {
			struct json_object *o = json_object_new_object(), *ws = json_object_new_array();

			json_object_object_add(o, "file", json_object_new_string(names[i]));
			json_object_object_add(o, "instance", json_object_new_string(f->instance));
			json_object_object_add(o, "format", json_object_new_int(f->version));
			json_object_object_add(o, "bytes", json_object_new_uint64(st.st_size));
			for (__u32 w = 0; w < f->nwin; w++)
				json_object_array_add(ws, window_json(&f->win[w]));
			json_object_object_add(o, "windows", ws);
			json_object_array_add(arr, o);
		} else {
			uint64_t packets = 0;
			char a[40], b[40];

			for (__u32 w = 0; w < f->nwin; w++)
				packets += f->win[w].packets;
			bt_fmt_ns(f->win[0].start_ns, a, sizeof(a), "-");
			bt_fmt_ns(f->win[f->nwin - 1].end_ns, b, sizeof(b), "-");
			printf("%s  %s  windows %u..%u  %s .. %s  %" PRIu64 " packets  %.1f KiB\n",
			       names[i], f->instance, f->win[0].seq, f->win[f->nwin - 1].seq, a, b,
			       packets, st.st_size / 1024.0);
		}
		bt_archive_close(f);
	}
	if (arr)
		bt_json_print(arr);
	else
		printf("%d files, %" PRIu64 " windows, %.1f MiB%s\n", nfiles - damaged, windows,
		       bytes / 1048576.0, damaged ? "; some damaged (named above)" : "");
	bt_strv_free(names, nfiles);
	return damaged ? BT_EXIT_FAIL : BT_EXIT_OK;
}
