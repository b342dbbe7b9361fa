// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An instance's watch list as the CLI prints it: what is loaded, and the
 * traffic of each class. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/common.h"
#include "classes.h"
#include "base/options.h"
#include "flow.h"
#include "instance/watch.h"

void bt_print_watch_loaded(const char *name, const struct bt_watch_loaded *w)
{
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "instance", json_object_new_string(name));
		json_object_object_add(o, "keys", json_object_new_uint64(w->keys));
		json_object_object_add(o, "markers", json_object_new_uint64(w->markers));
		json_object_object_add(o, "classes", json_object_new_int(w->classes));
		json_object_object_add(o, "bits_per_key", json_object_new_double(w->bits_per_key));
		json_object_object_add(o, "build_seconds", json_object_new_double(w->build_s));
		json_object_object_add(o, "retries", json_object_new_int(w->retries));
		json_object_object_add(o, "duplicates", json_object_new_int(w->duplicates));
		json_object_object_add(o, "masked", json_object_new_int(w->masked));
		json_object_object_add(o, "probes_ipv4", json_object_new_int(w->probes[0]));
		json_object_object_add(o, "probes_ipv6", json_object_new_int(w->probes[1]));
		json_object_object_add(o, "ranges_ipv4", json_object_new_uint64(w->ranges));
		json_object_object_add(o, "lines_ipv4", json_object_new_uint64(w->lines));
		json_object_object_add(o, "lookup_ipv6",
				       json_object_new_string(w->v6_tree ? "tree" : "search"));
		json_object_object_add(o, "ranges_ipv6", json_object_new_uint64(w->v6_ranges));
		bt_json_print(o);
		return;
	}
	printf("watch list of %s: %zu keys in %u classes and %zu markers, %.1f bits a key, built "
	       "in %.3f s (%u retries); an address reads at most %u lines of ranges and index "
	       "(IPv4: %zu ranges in %zu lines), ",
	       name, w->keys, w->classes, w->markers, w->bits_per_key, w->build_s, w->retries,
	       w->probes[0], w->ranges, w->lines);
	if (w->v6_tree)
		printf("%u lines of a tree (IPv6: %zu ranges)", w->probes[1], w->v6_ranges);
	else
		printf("takes at most %u probes (IPv6)", w->probes[1]);
	if (w->duplicates || w->masked)
		printf("; %u duplicates dropped, %u prefixes masked", w->duplicates, w->masked);
	/* three spare segments and whole groups of cells: a fixed size */
	if (w->keys && w->keys < 1000)
		printf(" (a small list: the table's fixed size, not its keys, makes the bits a "
		       "key)");
	printf("\n");
}

int bt_print_watch(const struct bt_instance *inst, int dir)
{
	struct bt_watch_class names[BT_WATCH_CLASSES];
	struct bt_watch_count n[BT_WATCH_CLASSES];
	struct json_object *arr = bt_g.json ? json_object_new_array() : NULL;
	int err;

	if ((err = bt_watch_classes(inst, names)) || (err = bt_watch_counts(inst, dir, n))) {
		bt_err_errno(err, "reading the watch list");
		json_object_put(arr);
		return err;
	}
	if (!arr)
		printf("%-32s %10s %14s %16s %14s %16s\n", "class", "entries", "src_packets",
		       "src_bytes", "dst_packets", "dst_bytes");
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++) {
		if (!names[id].name[0])
			continue;
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "class", json_object_new_string(names[id].name));
			json_object_object_add(o, "entries", json_object_new_uint64(names[id].entries));
			json_object_object_add(o, "direction",
					       json_object_new_string(bt_direction_names[dir]));
			json_object_object_add(o, "src_packets", json_object_new_uint64(n[id].packets[0]));
			json_object_object_add(o, "src_bytes", json_object_new_uint64(n[id].bytes[0]));
			json_object_object_add(o, "dst_packets", json_object_new_uint64(n[id].packets[1]));
			json_object_object_add(o, "dst_bytes", json_object_new_uint64(n[id].bytes[1]));
			json_object_array_add(arr, o);
			continue;
		}
		printf("%-32s %10" PRIu64 " %14" PRIu64 " %16" PRIu64 " %14" PRIu64 " %16" PRIu64 "\n",
		       names[id].name, (uint64_t)names[id].entries, (uint64_t)n[id].packets[0],
		       (uint64_t)n[id].bytes[0], (uint64_t)n[id].packets[1], (uint64_t)n[id].bytes[1]);
	}
	if (arr)
		bt_json_print(arr);
	return 0;
}

/* Addresses, then perhaps an interface: an argument that parses as an
 * address is one. */
