// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* watch: load, show, test, set and clear an instance's watch list. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "base/common.h"
#include "commands.h"
#include "report/classes.h"
#include "base/options.h"
#include "report/flow.h"
#include "instance/watch.h"

static struct watch_cfg {
	const char *instance;
	uint32_t check_bits;
	int dir;	/* show's enum bt_direction */
	int ipv6;	/* load's ipv6_lookups */
} wcfg = { .check_bits = BT_WATCH_CHECK_BITS };
_Static_assert(BT_WATCH_CHECK_BITS == 44, "the --check-bits help names the default");

static const struct bt_opt instance_opts[] = {
	BT_INSTANCE_OPT(wcfg.instance),
	{ 0 }
};

static const char *const ipv6_lookups[] = { "auto", "tree", "search", NULL };
static const unsigned ipv6_flags[] = { 0, BT_WATCH_B_V6_TREE, BT_WATCH_B_V6_SEARCH };

static const struct bt_opt load_opts[] = {
	BT_INSTANCE_OPT(wcfg.instance),
	{ "check-bits", 0, BT_OPT_U32, &wcfg.check_bits, "R",
	  "check bits a key: an address off the list answers a class with probability "
	  "at most 2^-R a probe (default 44, the most)", .min = 1, .max = BT_WATCH_CHECK_BITS },
	{ "ipv6", 0, BT_OPT_ENUM, &wcfg.ipv6, "LOOKUP",
	  "IPv6's lookup: auto (the range tree when every IPv6 prefix is /64 or shorter and "
	  "it takes no more memory), tree (whenever the prefixes allow), search (the "
	  "Bloomier table's)", .choices = ipv6_lookups },
	{ 0 }
};

static const struct bt_cmd_spec load_spec = {
	"watch load", "FILE [IFACE]",
	"Build FILE's table (one 'ADDRESS[/LEN] CLASS' a line) and switch the datapath\n"
	"to it with one write. A class that keeps its name keeps its counts.",
	load_opts, 1, 2,
};
static const struct bt_opt show_opts[] = {
	BT_INSTANCE_OPT(wcfg.instance),
	BT_DIRECTION_OPT(wcfg.dir),
	{ 0 }
};

static const struct bt_cmd_spec show_spec = {
	"watch show", "[IFACE]",
	"Per class: its entries, and the packets and bytes seen from and to it.",
	show_opts, 0, 1,
};
static const struct bt_cmd_spec test_spec = {
	"watch test", "ADDRESS... [IFACE]",
	"The class of each address (its longest prefix in the list), or none.",
	instance_opts, 1, 10000,
};
static const struct bt_cmd_spec set_spec = {
	"watch set", "ADDRESS[/LEN] CLASS [IFACE]",
	"Give a listed key another class, in place (no rebuild). A key not in the\n"
	"list is refused: load a new list for that.",
	instance_opts, 2, 3,
};
static const struct bt_cmd_spec clear_spec = {
	"watch clear", "[IFACE]",
	"Switch to an empty table: nothing is classified.",
	instance_opts, 0, 1,
};

static int test(const struct bt_instance *inst, char **addrs, int n)
{
	struct bt_watch_class names[BT_WATCH_CLASSES];
	struct json_object *arr = bt_g.json ? json_object_new_array() : NULL;
	struct bt_watch_table t;
	int err;

	if ((err = bt_watch_table_open(inst, false, &t)) || (err = bt_watch_classes(inst, names))) {
		bt_err_errno(err, "reading the watch list");
		bt_watch_table_close(&t);
		json_object_put(arr);
		return err;
	}
	for (int i = 0; i < n; i++) {
		uint8_t a[16];
		bool v4;
		__u32 len = 0, cls;
		char s[64] = "", msg[160];
		struct bt_watch_key k = { 0 };
		struct bt_watch_how how;

		if (bt_watch_parse_prefix(addrs[i], a, &len, &v4, &(bool){ 0 }, msg, sizeof(msg))) {
			bt_err("%s", msg);
			err = -EINVAL;
			break;
		}
		/* the family of the address's form, as the datapath takes it */
		cls = bt_watch_table_classify(&t, a, bt_addr_is_v4(a), &how);
		k.len = how.len;
		if (cls) {
			bt_watch_words(a, &k.hi, &k.lo);
			bt_watch_mask(&k.hi, &k.lo, k.len);
			bt_watch_key_str(&k, s, sizeof(s));
		}
		if (arr) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "address", json_object_new_string(addrs[i]));
			json_object_object_add(o, "class", cls ? json_object_new_string(names[cls].name)
							       : NULL);
			json_object_object_add(o, "prefix", cls ? json_object_new_string(s) : NULL);
			json_object_object_add(o, "probes", json_object_new_int(how.probes));
			json_object_array_add(arr, o);
		} else if (cls) {
			printf("%s: %s (%s)\n", addrs[i], names[cls].name, s);
		} else {
			printf("%s: none\n", addrs[i]);
		}
	}
	bt_watch_table_close(&t);
	if (arr && !err)
		bt_json_print(arr);
	else
		json_object_put(arr);
	return err;
}

/* What set (a key and its class) or clear (neither) did. */
static void done_print(const char *name, const char *key, const char *cls)
{
	if (bt_g.json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "instance", json_object_new_string(name));
		if (key) {
			json_object_object_add(o, "key", json_object_new_string(key));
			json_object_object_add(o, "class", json_object_new_string(cls));
		} else {
			json_object_object_add(o, "cleared", json_object_new_boolean(true));
		}
		bt_json_print(o);
	} else if (key) {
		printf("%s: class %s\n", key, cls);
	} else {
		printf("watch list of %s cleared\n", name);
	}
}

static bool is_address(const char *s)
{
	uint8_t a[16];
	__u32 len;
	bool v4, host;
	char msg[160];

	return !bt_watch_parse_prefix(s, a, &len, &v4, &host, msg, sizeof(msg));
}

static void usage_all(FILE *f)
{
	fprintf(f, "Usage: bloomtap watch SUBCOMMAND [options]\n\n"
		   "Watch lists (a Bloomier filter in the datapath): traffic per class.\n\n"
		   "  load FILE [IFACE]                 build FILE's table and switch to it\n"
		   "  show [IFACE]                      per class: entries, packets, bytes\n"
		   "  test ADDRESS... [IFACE]           the class of each address\n"
		   "  set ADDRESS[/LEN] CLASS [IFACE]   a listed key's class, in place\n"
		   "  clear [IFACE]                     switch to an empty table\n\n"
		   "Each takes --instance NAME for an instance not named after an interface;\n"
		   "'bloomtap watch SUBCOMMAND --help' for its options.\n");
}

int cmd_watch(int argc, char **argv)
{
	static const struct { const char *name; const struct bt_cmd_spec *spec; } subs[] = {
		{ "load", &load_spec }, { "show", &show_spec }, { "test", &test_spec },
		{ "set", &set_spec }, { "clear", &clear_spec },
	};
	const struct bt_cmd_spec *spec = NULL;
	const char *sub = argc > 1 ? argv[1] : NULL, *iface = NULL;
	struct bt_instance inst;
	int n, err = 0;

	if (!sub || !strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage_all(sub ? stdout : stderr);
		if (!sub && bt_g.json)
			bt_err("watch: give a subcommand (load, show, test, set, clear)");
		return sub ? 0 : BT_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(sub, subs[i].name))
			spec = subs[i].spec;
	if (!spec) {
		bt_err("unknown watch subcommand '%s' (load, show, test, set, clear)", sub);
		return BT_EXIT_USAGE;
	}
	n = bt_parse_args(spec, argc - 1, argv + 1);
	if (n < 0)
		return BT_EXIT_USAGE;
	if (n == BT_PARSE_HELP)
		return 0;
	char **pos = argv + 2;

	/* the interface, when given, is the positional after the others */
	if (spec == &load_spec && n == 2)
		iface = pos[1];
	else if (spec == &set_spec && n == 3)
		iface = pos[2];
	else if ((spec == &show_spec || spec == &clear_spec) && n == 1)
		iface = pos[0];
	else if (spec == &test_spec && n > 1 && !is_address(pos[n - 1]))
		iface = pos[--n];
	int open_rc = bt_instance_open_arg(iface, wcfg.instance, &inst);

	if (open_rc)
		return open_rc;
	if (spec == &load_spec) {
		struct bt_watch_loaded w;

		if (!(err = bt_watch_load_file(&inst, pos[0], wcfg.check_bits, ipv6_flags[wcfg.ipv6],
					      &w)))
			bt_print_watch_loaded(inst.name, &w);
	} else if (spec == &show_spec) {
		if (!(err = bt_instance_records(&inst, wcfg.dir)))
			err = bt_print_watch(&inst, wcfg.dir);
	} else if (spec == &test_spec) {
		err = test(&inst, pos, n);
	} else if (spec == &set_spec) {
		if (!(err = bt_watch_set(&inst, pos[0], pos[1])))
			done_print(inst.name, pos[0], pos[1]);
	} else {
		struct bt_watch_list empty = { 0 };
		struct bt_watch_loaded w;

		if (!(err = bt_watch_load(&inst, &empty, BT_WATCH_CHECK_BITS, &w)))
			done_print(inst.name, NULL, NULL);
	}
	bt_instance_close(&inst);
	return err ? BT_EXIT_FAIL : 0;
}
