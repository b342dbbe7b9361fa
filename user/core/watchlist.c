// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See watchlist.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
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
			snprintf(err, errlen, "'%s': bad prefix length (a prefix length is 0..%d)",
				 s, *v4 ? 32 : 128);
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
	bool v4 = bt_watch_key_is_v4(k);

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

uint64_t bt_watch_least_bytes(const uint64_t n[2])
{
	return n[0] * 4 + (n[0] ? BT_WATCH_DIR * sizeof(__u64) : 0) + (n[1] * 64 + 8) / 9;
}

static int add_entry(struct bt_watch_list *l, const struct bt_watch_entry *e)
{
	/* the slot's bound checked before the key is stored: one FIRST-LAST
	 * line is up to 254 keys */
	l->counted[!bt_watch_key_is_v4(&e->key)]++;
	if (l->counting)
		return 0;
	if (bt_watch_least_bytes(l->counted) > BT_WATCH_SLOT_BYTES)
		return -E2BIG;
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

/* A key's words (bt_watch_words: host order) as one 128-bit number. */
static unsigned __int128 words_num(const uint8_t addr[16])
{
	__u64 hi, lo;

	bt_watch_words(addr, &hi, &lo);
	return (unsigned __int128)hi << 64 | lo;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* Trailing zero bits of x; 128 for 0. */
static int ctz128(unsigned __int128 x)
{
	__u64 l = (__u64)x, h = (__u64)(x >> 64);

	return l ? __builtin_ctzll(l) : h ? 64 + __builtin_ctzll(h) : 128;
}

/* floor(log2(span + 1)): the largest block of 2^k addresses that fits in
 * span + 1 of them (128 when span + 1 is 2^128). */
static int log2_span(unsigned __int128 span)
{
	unsigned __int128 n = span + 1;
	__u64 l = (__u64)n, h = (__u64)(n >> 64);

	return !n ? 128 : h ? 127 - __builtin_clzll(h) : 63 - __builtin_clzll(l);
}

/* "FIRST-LAST": the smallest set of prefixes that covers exactly the
 * addresses first..last (both of one family), each added with class id
 * and the line. 0, or a message in msg. */
static int add_range(struct bt_watch_list *l, const char *s, uint32_t id, uint32_t no,
		     char *msg, size_t msglen)
{
	const char *dash = strchr(s, '-');
	char a[2][INET6_ADDRSTRLEN + 1];
	uint8_t addr[2][16];
	bool v4[2], host;
	unsigned __int128 lo, hi;
	__u32 len;
	int err;

	for (int i = 0; i < 2; i++) {
		const char *from = i ? dash + 1 : s;
		size_t n = i ? strlen(from) : (size_t)(dash - s);

		if (!n || n >= sizeof(a[i]) || memchr(from, '/', n)) {
			snprintf(msg, msglen, "'%s': a range is FIRST-LAST, two addresses", s);
			return -EINVAL;
		}
		memcpy(a[i], from, n);
		a[i][n] = 0;
		if (bt_watch_parse_prefix(a[i], addr[i], &len, &v4[i], &host, msg, msglen))
			return -EINVAL;
	}
	if (v4[0] != v4[1]) {
		snprintf(msg, msglen, "'%s': the range's ends are of two families", s);
		return -EINVAL;
	}
	lo = words_num(addr[0]);
	hi = words_num(addr[1]);
	if (lo > hi) {
		snprintf(msg, msglen, "'%s': the range's first address is above its last", s);
		return -EINVAL;
	}
	/* from the low end: the largest aligned block that starts there and
	 * does not pass the high end, again and again (at most 2 x 128) */
	for (;;) {
		int bits = v4[0] ? 32 : 128;
		/* log2 of the block's addresses: lo's alignment, and what fits
		 * up to hi (hi - lo + 1 addresses; 2^128 for the whole space) */
		int size = min_int(min_int(ctz128(lo), bits), log2_span(hi - lo));
		struct bt_watch_entry e = { .line = no };

		e.key.hi = (__u64)(lo >> 64);
		e.key.lo = (__u64)lo;
		e.key.len = 128 - size;
		e.key.class_id = id;
		if ((err = add_entry(l, &e)))
			return err;
		if (size == 128 || hi - lo == ((unsigned __int128)1 << size) - 1)
			return 0;
		lo += (unsigned __int128)1 << size;
	}
}

/* One line's entries (a range may be several). 0, or -EINVAL with the
 * line's problem in msg, or -ENOMEM. */
static int parse_line(struct bt_watch_list *l, char *line, const char *path, uint32_t no,
		      char *msg, size_t msglen)
{
	char *tok[3] = { 0 }, *save = NULL, *slash;
	struct bt_watch_entry e = { .line = no };
	uint8_t addr[16];
	bool v4, host, range;
	int n = 0, id;

	line[strcspn(line, "#\r\n")] = 0;
	for (char *t = strtok_r(line, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save))
		if (n < 3)
			tok[n++] = t;
		else
			n++;
	if (!n)
		return 0;
	if (n == 1) {
		snprintf(msg, msglen, "expected ADDRESS[/LEN] CLASS: '%.60s' has no class", tok[0]);
		return -EINVAL;
	}
	if (n > 2) {
		snprintf(msg, msglen, "expected ADDRESS[/LEN] CLASS: %d fields ('%.40s %.40s%s'): "
			 "a class name is one word", n, tok[1], tok[2], n > 3 ? " ..." : "");
		return -EINVAL;
	}
	if (!bt_watch_class_name_ok(tok[1])) {
		snprintf(msg, msglen, "class '%.40s': 1 to %d characters of A-Z a-z 0-9 _ . -",
			 tok[1], BT_WATCH_CLASS_LEN);
		return -EINVAL;
	}
	/* no address has a dash: FIRST-LAST is a range; a dash right after
	 * the slash is a negative length (198.18.4.0/-1) */
	slash = strchr(tok[0], '/');
	range = strchr(tok[0], '-') && !(slash && slash[1] == '-');
	if (!range && bt_watch_parse_prefix(tok[0], addr, &e.key.len, &v4, &host, msg, msglen))
		return -EINVAL;
	if ((id = class_id(l, tok[1])) < 0) {
		snprintf(msg, msglen, "class '%s': more than %d classes", tok[1],
			 BT_WATCH_CLASSES - 1);
		return -EINVAL;
	}
	if (range)
		return add_range(l, tok[0], id, no, msg, msglen);
	bt_watch_words(addr, &e.key.hi, &e.key.lo);
	e.key.class_id = id;
	if (host && !l->counting) {
		char s[64];

		l->masked++;
		bt_warn("%s:%u: %s has host bits set under its prefix: %s used", path, no,
			tok[0], bt_watch_key_str(&e.key, s, sizeof(s)));
	}
	return add_entry(l, &e);
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

/* "PATH[:LINE]: N keys ...": a list too large for a slot, said with the
 * table it would take at least. */
static void too_big(const struct bt_watch_list *l, const char *path, uint32_t no, char *err,
		    size_t errlen)
{
	char at[32] = "";

	if (no)
		snprintf(at, sizeof(at), ":%u", no);
	snprintf(err, errlen, "%s%s: %" PRIu64 " keys%s once its ranges are expanded (IPv4 %"
		 PRIu64 ", IPv6 %" PRIu64 "): a table of at least %.1f MiB, more than the %" PRIu64
		 " MiB a slot holds; refused before it was built (load a shorter list)", path, at,
		 l->counted[0] + l->counted[1], no ? " by this line" : "", l->counted[0],
		 l->counted[1], bt_watch_least_bytes(l->counted) / 1048576.0,
		 BT_WATCH_SLOT_BYTES >> 20);
}

/* A file that can be read twice: its keys counted, none stored, so that a
 * list too large for a slot costs no memory. 0, or -E2BIG with err set. */
static int count_first(FILE *f, const char *path, struct bt_watch_list *l, char *err,
		       size_t errlen)
{
	long at = ftell(f);
	char *line = NULL, msg[256];
	size_t cap = 0;
	uint32_t no = 0;
	int rc = 0;

	if (at < 0 || fseek(f, at, SEEK_SET))
		return 0;	/* a pipe: counted as it is stored */
	l->counting = true;
	while (getline(&line, &cap, f) >= 0)
		parse_line(l, line, path, ++no, msg, sizeof(msg));	/* told by the next pass */
	free(line);
	if (bt_watch_least_bytes(l->counted) > BT_WATCH_SLOT_BYTES) {
		too_big(l, path, 0, err, errlen);
		rc = -E2BIG;
	}
	/* read again from the start, as if never counted */
	if (fseek(f, at, SEEK_SET) && !rc) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -EIO;
	}
	memset(l, 0, sizeof(*l));
	return rc;
}

int bt_watch_list_parse(FILE *f, const char *path, struct bt_watch_list *l, char *err,
			size_t errlen)
{
	char *line = NULL, msg[256];
	size_t cap = 0, used = 0;
	uint32_t no = 0, bad = 0;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	err[0] = 0;
	if ((rc = count_first(f, path, l, err, errlen)))
		return rc;
	/* every bad line, each with its problem, the first BT_WATCH_MAX_ERRORS
	 * told; the list is refused when there is one */
	while (getline(&line, &cap, f) >= 0) {
		rc = parse_line(l, line, path, ++no, msg, sizeof(msg));
		if (rc == -ENOMEM) {
			snprintf(err, errlen, "%s:%u: out of memory", path, no);
			break;
		}
		if (rc == -E2BIG) {
			too_big(l, path, no, err, errlen);
			break;
		}
		if (rc && ++bad <= BT_WATCH_MAX_ERRORS && used < errlen)
			used += snprintf(err + used, errlen - used, "%s%s:%u: %s", used ? "\n" : "",
					 path, no, msg);
		rc = 0;
	}
	free(line);
	if (rc == -ENOMEM || rc == -E2BIG) {
		bt_watch_list_free(l);
		return rc;
	}
	if (bad > BT_WATCH_MAX_ERRORS && used < errlen)
		snprintf(err + used, errlen - used, "\n%s: %u more bad lines not shown", path,
			 bad - BT_WATCH_MAX_ERRORS);
	if (bad)
		rc = -EINVAL;
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
