// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "options.h"

int bt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s)
		return -EINVAL;
	/* binary suffixes, as in "--bits 64M" */
	if (*end) {
		int shift = 0;

		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
		if (end[1])
			return -EINVAL;
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int bt_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int bt_parse_enum(const char *s, const char *const *choices, int *out)
{
	for (int i = 0; choices[i]; i++) {
		if (!strcmp(s, choices[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void choices_str(const char *const *choices, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; choices[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? "|" : "", choices[i]);
}

/* as: the option as typed, "--top" or "-n" */
static int set_value(const struct bt_cmd_spec *spec, const struct bt_opt *o, const char *as,
		     const char *val)
{
	char buf[256];
	uint64_t u;
	int err = 0;

	switch (o->type) {
	case BT_OPT_FLAG:
		*(bool *)o->dst = true;
		return 0;
	case BT_OPT_STRING:
		*(const char **)o->dst = val;
		return 0;
	case BT_OPT_U32:
	case BT_OPT_U64:
		err = bt_parse_u64(val, o->min, o->max, &u);
		if (!err) {
			if (o->type == BT_OPT_U32)
				*(uint32_t *)o->dst = (uint32_t)u;
			else
				*(uint64_t *)o->dst = u;
			return 0;
		}
		if (err == -ERANGE)
			bt_err("%s: %s %s is out of range: give a number from %llu to %llu",
			       spec->name, as, val, (unsigned long long)o->min,
			       (unsigned long long)o->max);
		else
			bt_err("%s: %s needs %s, not '%s'", spec->name, as,
			       o->metavar && !strcmp(o->metavar, "SECONDS") ? "whole seconds" :
			       "a whole number", val);
		return -EINVAL;
	case BT_OPT_DOUBLE:
		err = bt_parse_double(val, o->dmin, o->dmax, (double *)o->dst);
		if (!err)
			return 0;
		if (err == -ERANGE)
			bt_err("%s: %s %s is out of range: give a number from %g to %g",
			       spec->name, as, val, o->dmin, o->dmax);
		else
			bt_err("%s: %s needs a number, not '%s'", spec->name, as, val);
		return -EINVAL;
	case BT_OPT_ENUM:
		if (!bt_parse_enum(val, o->choices, (int *)o->dst))
			return 0;
		choices_str(o->choices, buf, sizeof(buf));
		bt_err("%s: %s must be one of %s, not '%s'", spec->name, as, buf, val);
		return -EINVAL;
	}
	return -EINVAL;
}

/* Exact name first, then a unique prefix (as getopt_long does). */
static const struct bt_opt *find_long(const struct bt_cmd_spec *spec,
				      const char *name, size_t len)
{
	const struct bt_opt *hit = NULL;
	int n = 0;

	for (const struct bt_opt *o = spec->opts; o && o->name; o++) {
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
		if (!strncmp(o->name, name, len)) {
			hit = o;
			n++;
		}
	}
	return n == 1 ? hit : NULL;
}

static const struct bt_opt *find_short(const struct bt_cmd_spec *spec, char c)
{
	for (const struct bt_opt *o = spec->opts; o && o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* Global options are accepted after the command too, as bpftool does. */
static bool global_opt(const char *a)
{
	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		bt_g.json = true;
		return true;
	}
	if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
		bt_g.json = bt_g.pretty = true;
		return true;
	}
	if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
		bt_g.verbose++;
		return true;
	}
	return false;
}

int bt_parse_args(const struct bt_cmd_spec *spec, int argc, char **argv)
{
	int npos = 0, i;
	bool only_pos = false;

	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct bt_opt *o = NULL;
		const char *val = NULL;
		char as[64];

		if (only_pos || a[0] != '-' || !a[1]) {
			argv[1 + npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			bt_print_usage(spec, stdout);
			return BT_PARSE_HELP;
		}
		if (global_opt(a))
			continue;
		if (a[1] == '-') {
			char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			o = find_long(spec, a + 2, len);
			if (eq)
				val = eq + 1;
		} else if (!a[2]) {
			o = find_short(spec, a[1]);
		}
		if (!o) {
			bt_err("%s: unknown option '%s' (see bloomtap %s --help)",
			       spec->name, a, spec->command ? spec->command : spec->name);
			return -EINVAL;
		}
		if (o->type == BT_OPT_FLAG) {
			if (val) {
				bt_err("%s: --%s takes no value", spec->name, o->name);
				return -EINVAL;
			}
		} else if (!val) {
			if (i + 1 >= argc) {
				bt_err("%s: --%s needs a value (%s)", spec->name, o->name,
				       o->metavar ? o->metavar : "see --help");
				return -EINVAL;
			}
			val = argv[++i];
		}
		if (a[1] == '-')
			snprintf(as, sizeof(as), "--%s", o->name);
		else
			snprintf(as, sizeof(as), "%s", a);
		if (set_value(spec, o, as, val))
			return -EINVAL;
	}
	if (npos < spec->min_pos || npos > spec->max_pos) {
		if (!spec->max_pos)
			bt_err("%s takes no arguments (got '%s'; see bloomtap %s --help)",
			       spec->name, argv[1],
			       spec->command ? spec->command : spec->name);
		else
			bt_err("%s: expected %s%s (see bloomtap %s --help)", spec->name,
			       spec->args && *spec->args ? spec->args : "no arguments",
			       npos > spec->max_pos ? ", got too many arguments" : "",
			       spec->command ? spec->command : spec->name);
		return -EINVAL;
	}
	/* tests/ship/doc_commands.py: each command line the manual gives is
	 * checked for its syntax alone; nothing is run */
	if (getenv("BLOOMTAP_CHECK_ARGS")) {
		printf("bloomtap %s: arguments accepted\n", spec->command ? spec->command : spec->name);
		exit(0);
	}
	return npos;
}

void bt_print_usage(const struct bt_cmd_spec *spec, FILE *f)
{
	fprintf(f, "Usage: bloomtap %s [options] %s\n\n%s\n\nOptions:\n", spec->name,
		spec->args ? spec->args : "", spec->summary);
	for (const struct bt_opt *o = spec->opts; o && o->name; o++) {
		char left[64], buf[200];

		snprintf(left, sizeof(left), "%c%c%s--%s %s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ",
			 o->name, o->type == BT_OPT_FLAG ? "" : (o->metavar ? o->metavar : "VAL"));
		if (strlen(left) < 30)
			fprintf(f, "  %-30s %s", left, o->help);
		else	/* a long one: its text on the next line, in the column */
			fprintf(f, "  %s\n  %-30s %s", left, "", o->help);
		if (o->type == BT_OPT_ENUM) {
			choices_str(o->choices, buf, sizeof(buf));
			fprintf(f, " (%s)", buf);
		}
		fputc('\n', f);
	}
	fprintf(f, "  %-30s %s\n", "-j, --json", "JSON output");
	fprintf(f, "  %-30s %s\n", "-p, --pretty", "pretty-printed JSON output");
	fprintf(f, "  %-30s %s\n", "-v, --verbose", "show libbpf's log");
	fprintf(f, "  %-30s %s\n", "-h, --help", "this text");
}
