/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Typed, range-checked command-line options (after xdp-tools' params.c):
 * each command declares a table; the parser fills a config struct and prints
 * a usage text built from the same table. */
#ifndef BLOOMTAP_OPTIONS_H
#define BLOOMTAP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum bt_opt_type {
	BT_OPT_FLAG,	/* bool */
	BT_OPT_U32,	/* uint32_t within [min, max] */
	BT_OPT_U64,	/* uint64_t within [min, max], k/M/G suffixes (1024) */
	BT_OPT_DOUBLE,	/* double within [dmin, dmax] */
	BT_OPT_STRING,	/* const char * */
	BT_OPT_ENUM,	/* int: index into choices */
};

struct bt_opt {
	const char *name;
	char short_name;
	enum bt_opt_type type;
	void *dst;
	const char *metavar;
	const char *help;
	uint64_t min, max;
	double dmin, dmax;
	const char *const *choices;	/* NULL-terminated, for BT_OPT_ENUM */
};

struct bt_cmd_spec {
	const char *name;
	const char *args;		/* positional part of the usage line */
	const char *summary;
	const struct bt_opt *opts;	/* terminated by an entry with no name */
	int min_pos, max_pos;
	const char *command;		/* whose --help to point to when name is
					 * not a command (a file's); NULL: name */
};

/* --instance NAME, as every command that reads an instance takes it. */
#define BT_INSTANCE_OPT(dst)							\
	{ "instance", 'i', BT_OPT_STRING, &(dst), "NAME",			\
	  "an instance not named after an interface (e.g. replay)" }

/* Parses argv (argv[0] is the command name). Returns the number of
 * positional arguments, moved to the front of argv + 1; BT_PARSE_HELP when
 * --help was printed; -EINVAL after printing what was wrong. */
#define BT_PARSE_HELP 1000
int bt_parse_args(const struct bt_cmd_spec *spec, int argc, char **argv);
void bt_print_usage(const struct bt_cmd_spec *spec, FILE *f);

/* Value parsers, exposed for the configuration file and the tests.
 * Return 0 or -EINVAL / -ERANGE; never print. */
int bt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int bt_parse_double(const char *s, double min, double max, double *out);
int bt_parse_enum(const char *s, const char *const *choices, int *out);

#endif /* BLOOMTAP_OPTIONS_H */
