// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See watchlist.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "watchlist.h"

bool bt_watch_class_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > BT_WATCH_CLASS_LEN)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return false;
	return true;
}

int bt_watch_parse_prefix(const char *s, uint8_t addr[16], __u32 *len, bool *v4,
			  bool *host_bits, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long l;
	__u64 hi, lo, mh, ml;
	char *end;

	if (alen >= sizeof(a)) {
		snprintf(err, errlen, "'%s' is not an address", s);
		return -EINVAL;
	}
	memcpy(a, s, alen);
	a[alen] = 0;
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, a, addr + 12) == 1) {
		addr[10] = addr[11] = 0xff;
		*v4 = true;
	} else if (inet_pton(AF_INET6, a, addr) == 1) {
		*v4 = false;
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", a);
		return -EINVAL;
	}
	l = *v4 ? 32 : 128;
	if (slash) {
		errno = 0;
		l = strtoul(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || errno || l > (*v4 ? 32u : 128u)) {
			snprintf(err, errlen, "'%s': a prefix length is 0..%d", s, *v4 ? 32 : 128);
			return -EINVAL;
		}
	}
	*len = *v4 ? 96 + l : l;
	bt_watch_words(addr, &hi, &lo);
	mh = hi;
	ml = lo;
	bt_watch_mask(&mh, &ml, *len);
	*host_bits = mh != hi || ml != lo;
	mh = htobe64(mh);
	ml = htobe64(ml);
	memcpy(addr, &mh, 8);
	memcpy(addr + 8, &ml, 8);
	return 0;
}

const char *bt_watch_key_str(const struct bt_watch_key *k, char *buf, size_t len)
{
	uint8_t a[16];
	__u64 hi = htobe64(k->hi), lo = htobe64(k->lo);
	char s[INET6_ADDRSTRLEN];
	bool v4 = k->len >= 96 && k->hi == 0 && (k->lo >> 32) == 0xffff;

	memcpy(a, &hi, 8);
	memcpy(a + 8, &lo, 8);
	if (v4)
		inet_ntop(AF_INET, a + 12, s, sizeof(s));
	else
		inet_ntop(AF_INET6, a, s, sizeof(s));
	snprintf(buf, len, "%s/%u", s, v4 ? k->len - 96 : k->len);
	return buf;
}

static int class_id(struct bt_watch_list *l, const char *name)
{
	for (uint32_t i = 1; i <= l->nclasses; i++)
		if (!strcmp(l->names[i], name))
			return i;
	if (l->nclasses == BT_WATCH_CLASSES - 1)
		return -1;
	strcpy(l->names[++l->nclasses], name);
	return l->nclasses;
}

static int add_entry(struct bt_watch_list *l, const struct bt_watch_entry *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		struct bt_watch_entry *p = realloc(l->e, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->e = p;
		l->cap = cap;
	}
	l->e[l->n++] = *e;
	return 0;
}

/* One line's entry; 1 when the line holds none. */
static int parse_line(struct bt_watch_list *l, char *line, const char *path, uint32_t no,
		      char *err, size_t errlen)
{
	char *tok[3] = { 0 }, *save = NULL, msg[160];
	struct bt_watch_entry e = { .line = no };
	uint8_t addr[16];
	bool v4, host;
	int n = 0, id;

	line[strcspn(line, "#\r\n")] = 0;
	for (char *t = strtok_r(line, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save))
		if (n < 3)
			tok[n++] = t;
		else
			n++;
	if (!n)
		return 1;
	if (n != 2) {
		snprintf(err, errlen, "%s:%u: expected ADDRESS[/LEN] CLASS", path, no);
		return -EINVAL;
	}
	if (bt_watch_parse_prefix(tok[0], addr, &e.key.len, &v4, &host, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s:%u: %s", path, no, msg);
		return -EINVAL;
	}
	if (!bt_watch_class_name_ok(tok[1])) {
		snprintf(err, errlen, "%s:%u: class '%.40s': 1 to %d characters of "
			 "A-Z a-z 0-9 _ . -", path, no, tok[1], BT_WATCH_CLASS_LEN);
		return -EINVAL;
	}
	if ((id = class_id(l, tok[1])) < 0) {
		snprintf(err, errlen, "%s:%u: class '%s': more than %d classes", path, no, tok[1],
			 BT_WATCH_CLASSES - 1);
		return -EINVAL;
	}
	bt_watch_words(addr, &e.key.hi, &e.key.lo);
	e.key.class_id = id;
	if (host) {
		char s[64];

		l->masked++;
		bt_warn("%s:%u: %s has host bits set under its prefix: %s used", path, no,
			tok[0], bt_watch_key_str(&e.key, s, sizeof(s)));
	}
	return add_entry(l, &e) ? -ENOMEM : 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct bt_watch_entry *x = a, *y = b;

	if (x->key.len != y->key.len)
		return x->key.len < y->key.len ? -1 : 1;
	if (x->key.hi != y->key.hi)
		return x->key.hi < y->key.hi ? -1 : 1;
	if (x->key.lo != y->key.lo)
		return x->key.lo < y->key.lo ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorted by key; a key twice: dropped if the same class, an error if not. */
static int dedup(struct bt_watch_list *l, const char *path, char *err, size_t errlen)
{
	size_t out = 0;

	if (l->n)	/* an empty list has no array: qsort wants one */
		qsort(l->e, l->n, sizeof(*l->e), cmp_key);
	for (size_t i = 0; i < l->n; i++) {
		struct bt_watch_entry *p = out ? &l->e[out - 1] : NULL;

		if (p && p->key.len == l->e[i].key.len && p->key.hi == l->e[i].key.hi &&
		    p->key.lo == l->e[i].key.lo) {
			char s[64];

			if (p->key.class_id != l->e[i].key.class_id) {
				snprintf(err, errlen, "%s:%u: %s is class '%s' here and '%s' on "
					 "line %u", path, l->e[i].line,
					 bt_watch_key_str(&p->key, s, sizeof(s)),
					 l->names[l->e[i].key.class_id], l->names[p->key.class_id],
					 p->line);
				return -EINVAL;
			}
			l->duplicates++;
			continue;
		}
		l->e[out++] = l->e[i];
	}
	l->n = out;
	for (size_t i = 0; i < l->n; i++)
		l->entries[l->e[i].key.class_id]++;
	return 0;
}

int bt_watch_list_parse(FILE *f, const char *path, struct bt_watch_list *l, char *err,
			size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	uint32_t no = 0;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	while (getline(&line, &cap, f) >= 0) {
		rc = parse_line(l, line, path, ++no, err, errlen);
		if (rc == -ENOMEM)
			snprintf(err, errlen, "%s:%u: out of memory", path, no);
		if (rc < 0)
			break;
		rc = 0;
	}
	free(line);
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		rc = -EIO;
	}
	if (!rc)
		rc = dedup(l, path, err, errlen);
	if (rc)
		bt_watch_list_free(l);
	return rc;
}

int bt_watch_list_read(const char *path, struct bt_watch_list *l, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		memset(l, 0, sizeof(*l));
		return rc;
	}
	rc = bt_watch_list_parse(f, path, l, err, errlen);
	fclose(f);
	return rc;
}

void bt_watch_list_free(struct bt_watch_list *l)
{
	free(l->e);
	l->e = NULL;
	l->n = l->cap = 0;
}
