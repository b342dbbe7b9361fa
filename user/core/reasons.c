// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Drop reasons' names from the kernel's BTF, and a window's reasons. See
 * reasons.h. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "base/common.h"
#include "reasons.h"

#define SUBSYS_SHIFT 16

/* ---- reason names ---- */

static struct {
	struct btf *btf;		/* vmlinux, or the file BT_DROP_BTF_ENV names */
	char path[256];			/* its path */
	bool own_kernel;		/* the running kernel's: its modules' BTF applies */
	struct bt_drop_reason *r;
	int n;
	char subsys[16][40];		/* enum skb_drop_reason_subsys, by value */
	struct bt_drop_reason *all;	/* r, then the subsystems' (all_once) */
	int nall;
} kr;

static int cmp_reason(const void *a, const void *b)
{
	const struct bt_drop_reason *x = a, *y = b;

	return x->code < y->code ? -1 : x->code > y->code;
}

static void strip_into(char *dst, size_t len, const char *name)
{
	static const char *const prefixes[] = { "SKB_DROP_REASON_SUBSYS_", "SKB_DROP_REASON_",
						"SKB_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
			name += strlen(prefixes[i]);
			break;
		}
	snprintf(dst, len, "%s", name);
}

static void load_reasons_from(const char *path)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id;

	snprintf(kr.path, sizeof(kr.path), "%s", path);
	kr.own_kernel = !strcmp(path, BT_VMLINUX_BTF);
	kr.btf = btf__parse(path, NULL);
	if (!kr.btf)
		return;
	id = btf__find_by_name_kind(kr.btf, "skb_drop_reason_subsys", BTF_KIND_ENUM);
	if (id > 0) {
		t = btf__type_by_id(kr.btf, id);
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++)
			if (e[i].val >= 0 && e[i].val < 16)
				strip_into(kr.subsys[e[i].val], sizeof(kr.subsys[0]),
					   btf__name_by_offset(kr.btf, e[i].name_off));
	}
	id = btf__find_by_name_kind(kr.btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id <= 0)
		return;
	t = btf__type_by_id(kr.btf, id);
	e = btf_enum(t);
	kr.r = calloc(btf_vlen(t), sizeof(*kr.r));
	if (!kr.r)
		return;
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(kr.btf, e[i].name_off);
		__u32 v = (__u32)e[i].val;

		/* the enum's bounds and masks are not reasons */
		if (!name || strstr(name, "_MAX") || strstr(name, "SUBSYS_MASK") ||
		    v >> SUBSYS_SHIFT)
			continue;
		kr.r[kr.n].code = v;
		strip_into(kr.r[kr.n].name, sizeof(kr.r[0].name), name);
		kr.n++;
	}
	qsort(kr.r, kr.n, sizeof(*kr.r), cmp_reason);
}

static void sub_names_forget(void);

static void load_reasons_once(void)
{
	const char *path = getenv(BT_DROP_BTF_ENV);

	load_reasons_from(path && *path ? path : BT_VMLINUX_BTF);
}

/* Once, for the agent's HTTP threads too. */
static pthread_once_t reasons_once = PTHREAD_ONCE_INIT;

static void load_reasons(void)
{
	pthread_once(&reasons_once, load_reasons_once);
}

void bt_drop_reasons_from(const char *path)
{
	load_reasons();
	btf__free(kr.btf);
	free(kr.r);
	if (kr.all != kr.r)
		free(kr.all);
	memset(&kr, 0, sizeof(kr));
	sub_names_forget();
	load_reasons_from(path ? path : BT_VMLINUX_BTF);
}

const char *bt_drop_reasons_btf(void)
{
	load_reasons();
	return kr.path;
}

const struct bt_drop_reason *bt_drop_reasons(int *n)
{
	load_reasons();
	*n = kr.n;
	return kr.n ? kr.r : NULL;
}

/* Is t subsystem sub's enum of reasons: named so (openvswitch's
 * ovs_drop_reason, mac80211's mac80211_drop_reason) and holding its base
 * value, sub << 16 (__OVS_DROP_REASON, ___RX_DROP_UNUSABLE)? Flag enums
 * hold such values too (65,536 is a common flag). */
static bool subsys_enum(const struct btf *b, const struct btf_type *t, __u32 sub)
{
	const struct btf_enum *e = btf_enum(t);
	const char *name = btf__name_by_offset(b, t->name_off);

	if (!sub || !name || !strstr(name, "drop_reason") || !strncmp(name, "skb_drop_reason", 15))
		return false;
	for (int i = 0; i < btf_vlen(t); i++)
		if ((__u32)e[i].val == sub << SUBSYS_SHIFT)
			return true;
	return false;
}

/* Each BTF whose types may hold a subsystem's enum: the one reasons are
 * named from (a subsystem built in), and the running kernel's modules'
 * (split on vmlinux: none when the names come from another kernel's
 * file). fn returns true to stop; so does for_each_btf. */
static bool for_each_btf(bool (*fn)(const struct btf *b, __u32 first, void *arg), void *arg)
{
	DIR *d;
	struct dirent *de;
	bool stop;

	if (!kr.btf)
		return false;
	if ((stop = fn(kr.btf, 1, arg)) || !kr.own_kernel || !(d = opendir("/sys/kernel/btf")))
		return stop;
	while (!stop && (de = readdir(d))) {
		char path[300];
		struct btf *m;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", de->d_name);
		m = btf__parse_split(path, kr.btf);
		if (!m)
			continue;
		stop = fn(m, btf__type_cnt(kr.btf), arg);
		btf__free(m);
	}
	closedir(d);
	return stop;
}

struct name_query {
	__u32 code;
	char *buf;
	size_t len;
};

static bool name_in(const struct btf *b, __u32 first, void *arg)
{
	struct name_query *q = arg;

	for (__u32 id = first; id < btf__type_cnt(b); id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t) || !subsys_enum(b, t, q->code >> SUBSYS_SHIFT))
			continue;
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++)
			if ((__u32)e[i].val == q->code) {
				snprintf(q->buf, q->len, "%s", btf__name_by_offset(b, e[i].name_off));
				return true;
			}
	}
	return false;
}

/* A subsystem's reason: from the enum that holds both the subsystem's
 * base and the code. */
static bool module_reason(__u32 code, char *buf, size_t len)
{
	struct name_query q = { code, buf, len };

	return for_each_btf(name_in, &q);
}

/* Every subsystem's reasons the BTF names, after the core's in kr.all:
 * the values of each subsystem's enum in its subsystem, but for the
 * markers (names that start with "__"). */
static bool subsys_reasons_in(const struct btf *b, __u32 first, void *arg)
{
	int *cap = arg;

	for (__u32 id = first; id < btf__type_cnt(b); id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++) {
			__u32 v = e[i].val;
			const char *name = btf__name_by_offset(b, e[i].name_off);
			struct bt_drop_reason *r;

			if (!(v >> SUBSYS_SHIFT) || !name || !strncmp(name, "__", 2) ||
			    !subsys_enum(b, t, v >> SUBSYS_SHIFT))
				continue;
			if (kr.nall == *cap) {
				*cap *= 2;
				if (!(r = realloc(kr.all, *cap * sizeof(*r))))
					return true;
				kr.all = r;
			}
			kr.all[kr.nall].code = v;
			snprintf(kr.all[kr.nall++].name, sizeof(kr.all[0].name), "%s", name);
		}
	}
	return false;
}

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;

static void all_reasons_load(void)
{
	int cap = kr.n + 16;

	if (!kr.n || !(kr.all = malloc(cap * sizeof(*kr.all)))) {
		kr.all = kr.r;
		kr.nall = kr.n;
		return;
	}
	memcpy(kr.all, kr.r, kr.n * sizeof(*kr.r));
	kr.nall = kr.n;
	for_each_btf(subsys_reasons_in, &cap);
	qsort(kr.all, kr.nall, sizeof(*kr.all), cmp_reason);
}

const struct bt_drop_reason *bt_drop_reasons_all(int *n)
{
	load_reasons();
	pthread_mutex_lock(&all_lock);
	if (!kr.all)
		all_reasons_load();
	*n = kr.nall;
	pthread_mutex_unlock(&all_lock);
	return *n ? kr.all : NULL;
}

/* Subsystem reasons' names by code, found once: module_reason() parses
 * every module's BTF (a kernel with 150 modules: tens of ms), and a scrape
 * names each reason twice, an IPFIX record once, under the agent's lock.
 * A name not found is kept too (a module loaded later is not looked at:
 * restart the agent). */
#define SUB_NAMES 64
static struct { __u32 code; char name[64]; } sub_names[SUB_NAMES];
static int nsub_names;
static unsigned long module_scans;
static pthread_mutex_t sub_names_lock = PTHREAD_MUTEX_INITIALIZER;

static void sub_names_forget(void)
{
	pthread_mutex_lock(&sub_names_lock);
	nsub_names = 0;
	pthread_mutex_unlock(&sub_names_lock);
}

unsigned long bt_drop_reason_scans(void)
{
	return __atomic_load_n(&module_scans, __ATOMIC_RELAXED);
}

static void subsystem_reason(__u32 code, char *buf, size_t len)
{
	__u32 sub = code >> SUBSYS_SHIFT;
	bool found = false;

	pthread_mutex_lock(&sub_names_lock);
	for (int i = 0; i < nsub_names && !found; i++)
		if ((found = sub_names[i].code == code))
			snprintf(buf, len, "%s", sub_names[i].name);
	pthread_mutex_unlock(&sub_names_lock);
	if (found)
		return;
	__atomic_add_fetch(&module_scans, 1, __ATOMIC_RELAXED);
	if (!module_reason(code, buf, len)) {
		if (sub < 16 && kr.subsys[sub][0])
			snprintf(buf, len, "subsystem %u (%s), reason %u", sub, kr.subsys[sub],
				 code & 0xffff);
		else
			snprintf(buf, len, "subsystem %u, reason %u", sub, code & 0xffff);
	}
	pthread_mutex_lock(&sub_names_lock);
	if (nsub_names < SUB_NAMES) {	/* two threads may both have looked: one is kept */
		sub_names[nsub_names].code = code;
		snprintf(sub_names[nsub_names].name, sizeof(sub_names[0].name), "%s", buf);
		nsub_names++;
	}
	pthread_mutex_unlock(&sub_names_lock);
}

const char *bt_drop_reason_name(__u32 code, char *buf, size_t len)
{
	load_reasons();
	if (!(code >> SUBSYS_SHIFT)) {
		struct bt_drop_reason key = { .code = code }, *r;

		r = kr.n ? bsearch(&key, kr.r, kr.n, sizeof(*r), cmp_reason) : NULL;
		if (r)
			return r->name;
		snprintf(buf, len, "reason %u", code);
		return buf;
	}
	subsystem_reason(code, buf, len);
	return buf;
}

int bt_drop_reason_code(const char *name, __u32 *code)
{
	load_reasons();
	if (!strncmp(name, "SKB_DROP_REASON_", 16))
		name += 16;
	for (int i = 0; i < kr.n; i++)
		if (!strcasecmp(kr.r[i].name, name)) {
			*code = kr.r[i].code;
			return 0;
		}
	return -ENOENT;
}

/* ---- window reasons ---- */

void bt_win_reasons_add(struct bt_win_reasons *out, const struct bt_window_drops *d)
{
	if (d->other)
		out->other = true;
	for (int i = 0; i < BT_WIN_DROP_SLOTS && d->count[i]; i++) {
		int j;

		for (j = 0; j < out->n && out->code[j] != d->reason[i]; j++)
			;
		if (j == out->n) {
			if (out->n == BT_WIN_REASONS_MAX) {
				out->other = true;
				continue;
			}
			out->code[out->n] = d->reason[i];
			out->count[out->n++] = 0;
		}
		out->count[j] += d->count[i];
	}
}

int bt_win_reasons_try(const struct bt_win_reasons *r, const struct bt_drop_reason *all,
		       int nall, __u32 *codes, int max)
{
	int n = 0;

	for (int i = 0; i < r->n && n < max; i++)
		codes[n++] = r->code[i];
	if (!r->other || (!all && !(all = bt_drop_reasons_all(&nall))))
		return n;
	for (int i = 0; i < nall && n < max; i++) {
		int j;

		for (j = 0; j < r->n && r->code[j] != all[i].code; j++)
			;
		if (j == r->n)
			codes[n++] = all[i].code;
	}
	return n;
}
