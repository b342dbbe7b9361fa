// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include "common.h"
#include "util.h"

void *bt_mmap_array(int fd, size_t bytes, size_t *mapped_len)
{
	return bt_mmap_array_prot(fd, bytes, mapped_len, true);
}

void *bt_mmap_array_prot(int fd, size_t bytes, size_t *mapped_len, bool writable)
{
	size_t pg = sysconf(_SC_PAGESIZE), len = (bytes + pg - 1) / pg * pg;
	void *p = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
		       0);

	if (p == MAP_FAILED)
		return NULL;
	*mapped_len = len;
	return p;
}

const char *bt_fmt_ns(__u64 ns, char *buf, size_t len, const char *none_text)
{
	time_t t = ns / 1000000000ULL;
	struct tm tm;
	size_t n;

	if (!ns) {
		snprintf(buf, len, "%s", none_text);
		return buf;
	}
	gmtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03lluZ", (unsigned long long)(ns / 1000000ULL % 1000));
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bt_list_dir(const char *dir, bool (*keep)(const char *name), char ***out, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	int cnt = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char **nv;

		if (de->d_name[0] == '.' || !keep(de->d_name))
			continue;
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || !(nv[cnt] = strdup(de->d_name))) {
			closedir(d);
			bt_strv_free(nv ? nv : v, cnt);
			return -ENOMEM;	/* never a silently shorter list */
		}
		v = nv;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*out = v;
	*n = cnt;
	return 0;
}

void bt_strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int bt_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	bt_debug("+ %s", cmd);
	if (!bt_g.verbose)
		strncat(cmd, " >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return system(cmd) == 0 ? 0 : -1;
}

int bt_enter_netns(const char *name)
{
	char path[128];
	int fd, err;

	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return err;
}

double bt_mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* XDP programs run inside RCU read-side sections, and
 * MEMBARRIER_CMD_GLOBAL waits for an RCU grace period (synchronize_rcu). */
void bt_grace_period(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50000);	/* nohz_full kernels refuse it: wait instead */
}

/* "STEP:N" of an environment variable: the step, and N (1 when left out). */
static void test_spec(const char *var, char name[32], long *n)
{
	const char *spec = getenv(var);

	name[0] = 0;
	*n = 0;
	if (spec && sscanf(spec, "%31[^:]:%ld", name, n) < 2)
		*n = 1;
}

void bt_test_kill_point(const char *step)
{
	static char name[32];	/* the step, "" when the variable is unset */
	static long left = -1;	/* times to pass it still */

	if (left < 0)
		test_spec("BLOOMTAP_TEST_KILL", name, &left);
	if (name[0] && !strcmp(name, step) && --left <= 0)
		raise(SIGKILL);
}

void bt_test_pause(const char *step)
{
	static char name[32], file[256];
	static int read = 0;
	const char *spec;

	if (!read) {
		read = 1;
		spec = getenv("BLOOMTAP_TEST_PAUSE");
		if (spec && sscanf(spec, "%31[^:]:%255s", name, file) < 2)
			name[0] = 0;
	}
	if (!name[0] || strcmp(name, step))
		return;
	fprintf(stderr, "bloomtap: test: paused at %s\n", step);
	for (int i = 0; i < 6000 && access(file, F_OK); i++)
		usleep(10000);	/* a minute at most */
	name[0] = 0;	/* once */
}
