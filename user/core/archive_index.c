// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The archive's files found by time: an index of every file's time span,
 * sorted by start, in DIR/.index/spans (a directory of its own, so that
 * writing it leaves DIR's mtime, by which it is known to be stale, as it
 * was). A range's files are found by a binary search and a walk back
 * bounded by each entry's running maximum of ends: O(log n) plus the
 * files found, where listing the directory was O(n). The index is
 * rebuilt when it is missing, damaged or older than the directory: from
 * the names, reusing the spans it knew and opening only the files it did
 * not. Files whose times say nothing of their packets' (a replay's
 * windows, BT_WIN_REPLAY_TIME) or that cannot be read (the query names
 * them) are in every answer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "archive.h"
#include "base/util.h"

#define IDX_DIR ".index"
#define IDX_FILE "spans"
#define IDX_MAGIC "BTSPIEX1"
#define IDX_VERSION 1
/* A directory changed within this long of being read may change again
 * within the same tick of its coarse mtime clock: such an index is
 * rebuilt next time. */
#define IDX_SETTLE_NS 50000000LL

struct idx_hdr {
	char magic[8];
	__u32 version;
	__u32 n;		/* entries */
	__u32 nalways;		/* the first nalways: in every answer */
	__u32 settled;		/* 0: rebuild next time (see IDX_SETTLE_NS) */
	__s64 dir_mtime_ns;	/* DIR's when it was read */
	__u64 pad;
};
_Static_assert(sizeof(struct idx_hdr) == 40, "idx_hdr must be 40 bytes");

struct idx_ent {
	__u64 start_ns, end_ns;	/* its windows' span; end UINT64_MAX: open */
	__u64 max_end_ns;	/* the most of end_ns up to it (sorted part) */
	char name[104];		/* NUL-terminated */
};
_Static_assert(sizeof(struct idx_ent) == 128, "idx_ent must be 128 bytes");

struct idx {
	struct idx_hdr *hdr;
	struct idx_ent *e;
	size_t bytes;
	bool mapped;		/* else malloc'd */
};

static __s64 ts_ns(const struct timespec *t)
{
	return (__s64)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static void idx_free(struct idx *x)
{
	if (x->hdr && x->mapped)
		munmap(x->hdr, x->bytes);
	else
		free(x->hdr);
	x->hdr = NULL;
}

/* The index file mapped, when it holds what its header says */
static int idx_map(const char *dir, struct idx *x)
{
	char path[600];
	struct stat st;
	void *m;
	int fd;

	snprintf(path, sizeof(path), "%s/" IDX_DIR "/" IDX_FILE, dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct idx_hdr)) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	*x = (struct idx){ m, (struct idx_ent *)((struct idx_hdr *)m + 1), st.st_size, true };
	if (memcmp(x->hdr->magic, IDX_MAGIC, 8) || x->hdr->version != IDX_VERSION ||
	    x->hdr->nalways > x->hdr->n ||
	    (size_t)st.st_size != sizeof(struct idx_hdr) + x->hdr->n * sizeof(struct idx_ent)) {
		idx_free(x);
		return -EINVAL;
	}
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct idx_ent *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The span old knew for name (its start from the name), or NULL */
static const struct idx_ent *idx_known(const struct idx *old, const char *name, __u64 start)
{
	size_t lo, hi;

	if (!old->hdr)
		return NULL;
	lo = old->hdr->nalways;
	hi = old->hdr->n;
	while (lo < hi) {	/* the first entry starting at or after start */
		size_t mid = lo + (hi - lo) / 2;

		if (old->e[mid].start_ns < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < old->hdr->n && old->e[lo].start_ns == start; lo++)
		if (!strcmp(old->e[lo].name, name))
			return &old->e[lo];
	return NULL;
}

/* A file's span from its records; *always when its times are not its
 * packets', or it cannot be read */
static void file_span(const char *dir, const char *name, struct idx_ent *e, bool *always)
{
	struct bt_archive_file *f = bt_archive_open(dir, name, &(const char *){ NULL });

	*always = !f;
	e->end_ns = f ? 0 : UINT64_MAX;
	for (__u32 w = 0; f && w < f->nwin; w++) {
		const struct bt_archive_win *aw = &f->win[w];

		e->start_ns = aw->start_ns < e->start_ns ? aw->start_ns : e->start_ns;
		e->end_ns = !aw->end_ns ? UINT64_MAX : aw->end_ns > e->end_ns ? aw->end_ns : e->end_ns;
		*always |= !!(aw->flags & BT_WIN_REPLAY_TIME);
	}
	bt_archive_close(f);
}

/* Writes x as DIR/.index/spans (temporary name, rename); an archive that
 * cannot take it (read-only) is indexed again next time. */
static void idx_store(const char *dir, const struct idx *x)
{
	char sub[600], tmp[700], path[700];
	int fd;

	snprintf(sub, sizeof(sub), "%s/" IDX_DIR, dir);
	if (mkdir(sub, 0700) && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%d-%lx", sub, getpid(), (unsigned long)pthread_self());
	snprintf(path, sizeof(path), "%s/" IDX_FILE, sub);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, x->hdr, x->bytes) != (ssize_t)x->bytes || close(fd) || rename(tmp, path))
		unlink(tmp);
}

/* The index built again from DIR's names; old's spans reused */
static int idx_build(const char *dir, const struct idx *old, __s64 mtime, struct idx *x)
{
	struct timespec now;
	char **names, inst[BT_ARCHIVE_NAME_MAX + 1];
	size_t na = 0, ns = 0;
	int n, err;

	clock_gettime(CLOCK_REALTIME_COARSE, &now);
	if ((err = bt_archive_list(dir, NULL, &names, &n)))
		return err;
	x->bytes = sizeof(struct idx_hdr) + n * sizeof(struct idx_ent);
	x->hdr = calloc(1, x->bytes);
	x->mapped = false;
	if (!x->hdr) {
		bt_strv_free(names, n);
		return -ENOMEM;
	}
	x->e = (struct idx_ent *)(x->hdr + 1);
	/* the sorted part after the always part: built at the end, moved */
	struct idx_ent *sorted = calloc(n ? n : 1, sizeof(*sorted));

	if (!sorted) {
		bt_strv_free(names, n);
		idx_free(x);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct idx_ent e = { 0 };
		const struct idx_ent *k;
		__u32 seq;
		bool always = false;

		if (strlen(names[i]) >= sizeof(e.name) ||
		    bt_archive_name_parse(names[i], inst, sizeof(inst), &e.start_ns, &seq))
			continue;
		strcpy(e.name, names[i]);
		if ((k = idx_known(old, names[i], e.start_ns))) {
			e = *k;
		} else {
			e.start_ns = UINT64_MAX;
			file_span(dir, names[i], &e, &always);
			if (always)	/* its name's start, for the answer's order */
				bt_archive_name_parse(names[i], inst, sizeof(inst), &e.start_ns, &seq);
		}
		if (always)
			x->e[na++] = e;
		else
			sorted[ns++] = e;
	}
	bt_strv_free(names, n);
	if (ns > 1)	/* qsort's base may not be NULL, even for none */
		qsort(sorted, ns, sizeof(*sorted), cmp_ent);
	for (size_t i = 0; i < ns; i++) {
		sorted[i].max_end_ns = i && sorted[i - 1].max_end_ns > sorted[i].end_ns ?
				       sorted[i - 1].max_end_ns : sorted[i].end_ns;
		x->e[na + i] = sorted[i];
	}
	free(sorted);
	x->bytes = sizeof(struct idx_hdr) + (na + ns) * sizeof(struct idx_ent);
	memcpy(x->hdr->magic, IDX_MAGIC, 8);
	x->hdr->version = IDX_VERSION;
	x->hdr->n = na + ns;
	x->hdr->nalways = na;
	x->hdr->dir_mtime_ns = mtime;
	x->hdr->settled = ts_ns(&now) > mtime + IDX_SETTLE_NS;
	return 0;
}

/* The directory's index, up to date */
static int idx_get(const char *dir, struct idx *x)
{
	struct idx old = { 0 };
	struct stat st;
	int err;

	if (stat(dir, &st))
		return -errno;
	if (!idx_map(dir, &old) && old.hdr->settled && old.hdr->dir_mtime_ns == ts_ns(&st.st_mtim)) {
		*x = old;
		return 0;
	}
	err = idx_build(dir, &old, ts_ns(&st.st_mtim), x);
	idx_free(&old);
	if (!err)
		idx_store(dir, x);
	return err;
}

struct found {
	__u64 start;
	const char *name;
};

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool of_instance(const char *name, const char *instance)
{
	char inst[BT_ARCHIVE_NAME_MAX + 1];
	__u64 start;
	__u32 seq;

	return !instance || (!bt_archive_name_parse(name, inst, sizeof(inst), &start, &seq) &&
			     !strcmp(inst, instance));
}

int bt_archive_find(const char *dir, const char *instance, __u64 lo, __u64 hi, char ***out,
		    int *n)
{
	struct found *f = NULL;
	size_t nf = 0, cap = 0, a, b;
	struct idx x = { 0 };
	int err;

	*out = NULL;
	*n = 0;
	if ((err = idx_get(dir, &x)))
		return err;
	/* the sorted part: the last entry starting at or before hi, then
	 * back while an entry at or before it may end at or after lo */
	a = x.hdr->nalways;
	b = x.hdr->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (x.e[mid].start_ns <= hi)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i-- > x.hdr->nalways + 0 && x.e[i].max_end_ns >= lo;) {
		if (x.e[i].end_ns < lo || !of_instance(x.e[i].name, instance))
			continue;
		if (nf == cap) {
			struct found *v = realloc(f, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				goto oom;
			f = v;
		}
		f[nf++] = (struct found){ x.e[i].start_ns, x.e[i].name };
	}
	for (size_t i = 0; i < x.hdr->nalways; i++) {
		if (!of_instance(x.e[i].name, instance))
			continue;
		if (nf == cap) {
			struct found *v = realloc(f, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				goto oom;
			f = v;
		}
		f[nf++] = (struct found){ x.e[i].start_ns, x.e[i].name };
	}
	if (nf > 1)	/* qsort's base may not be NULL, even for none */
		qsort(f, nf, sizeof(*f), cmp_found);
	*out = calloc(nf ? nf : 1, sizeof(**out));
	if (!*out)
		goto oom;
	for (size_t i = 0; i < nf; i++)
		if (!((*out)[i] = strdup(f[i].name))) {
			bt_strv_free(*out, i);
			*out = NULL;
			goto oom;
		}
	*n = nf;
	free(f);
	idx_free(&x);
	return 0;
oom:
	free(f);
	idx_free(&x);
	return -ENOMEM;
}
