// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* make bench's cpus section: every online CPU driving BPF_PROG_TEST_RUN
 * into the same instance at once, each CPU's rate against its rate alone,
 * stage by stage: what the lines the CPUs share (the SPIE window's blocks
 * and fill, bt_ctl, the flow memory) cost when they are shared. The
 * driver is bench_drive_cpus: a cursor a CPU, so that it shares nothing
 * itself. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bench.h"

#define CPU_ROUNDS 5
#define CPU_MAX 64

/* The threads start together: each waits for go, or leaves on abort */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go, abort;
};

struct cpu_run {
	int prog_fd, cpu;
	uint32_t repeat;
	const struct frame *f;
	struct gate *gate;	/* NULL: run now */
	double ns;
	int err;
};

static void *run_on_cpu(void *arg)
{
	struct cpu_run *c = arg;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->f->b, .data_size_in = c->f->len,
		    .repeat = c->repeat);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	c->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (c->gate) {
		pthread_mutex_lock(&c->gate->lock);
		while (!c->gate->go && !c->gate->abort)
			pthread_cond_wait(&c->gate->cond, &c->gate->lock);
		if (c->gate->abort && !c->err)
			c->err = ECANCELED;
		pthread_mutex_unlock(&c->gate->lock);
	}
	if (!c->err && bpf_prog_test_run_opts(c->prog_fd, &o))
		c->err = errno;
	if (!c->err && o.retval != XDP_PASS)
		c->err = EPROTO;	/* the driver or the target failed */
	c->ns = o.duration;
	return NULL;
}

/* Target t driven from the CPUs cpu[0..n-1] at once (together) or one
 * after the other (alone, each from a fresh interval and ring as the
 * first): each CPU's ns a packet in ns[]. 0 or -errno. */
static int drive(struct bench_bpf *skel, struct target *t, const struct frame *f,
		 const int *cpu, int n, bool together, double *ns)
{
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
	pthread_t th[CPU_MAX];
	struct cpu_run c[CPU_MAX];
	int started = 0, err = 0;

	for (int i = 0; i < n; i++)
		c[i] = (struct cpu_run){ bpf_program__fd(skel->progs.bench_drive_cpus), cpu[i],
					 REPEAT / n, f, together ? &gate : NULL };
	if (together) {
		if ((err = bench_prepare(skel, t)))
			return err;
		for (; started < n; started++)
			if ((err = -pthread_create(&th[started], NULL, run_on_cpu, &c[started])))
				break;
		pthread_mutex_lock(&gate.lock);
		gate.go = !err;
		gate.abort = !!err;
		pthread_cond_broadcast(&gate.cond);
		pthread_mutex_unlock(&gate.lock);
		for (int i = 0; i < started; i++)
			pthread_join(th[i], NULL);
	} else {
		for (int i = 0; i < n && !err; i++) {
			if (!(err = bench_prepare(skel, t)) &&
			    !(err = -pthread_create(&th[0], NULL, run_on_cpu, &c[i])))
				pthread_join(th[0], NULL);
		}
	}
	for (int i = 0; i < n && !err; i++) {
		err = -c[i].err;
		ns[i] = c[i].ns;
	}
	return err;
}

int bench_cpus(struct bench_run *r)
{
	static const int progs[] = { P_EMPTY, P_PARSE, P_HEAVY, P_SPIE, P_ALL };
	enum { NPROGS = sizeof(progs) / sizeof(progs[0]) };
	double alone[NPROGS][CPU_MAX][CPU_ROUNDS], both[NPROGS][CPU_MAX][CPU_ROUNDS];
	struct bench_bpf *skel;
	struct frame fr;
	cpu_set_t mine;
	int cpu[CPU_MAX], n = 0;

	/* the CPUs this process may use, in order */
	if (sched_getaffinity(0, sizeof(mine), &mine))
		return 1;
	for (int i = 0; i < CPU_SETSIZE && n < CPU_MAX; i++)
		if (CPU_ISSET(i, &mine))
			cpu[n++] = i;
	if (n < 2) {
		out(stdout, r->f, "\ncpus: one CPU to run on, nothing to share\n");
		return 0;
	}
	bench_frame_v4_udp(&fr);
	if (load_driver(&skel, false, r->seq))
		return 1;
	for (int k = 0; k < NPROGS; k++)
		if (targets[progs[k]].drv_prog)
			targets[progs[k]].fd = bpf_program__fd(
				bpf_object__find_program_by_name(skel->obj, targets[progs[k]].drv_prog));
	for (int round = 0; round < CPU_ROUNDS; round++)
		for (int k = 0; k < NPROGS; k++) {
			double a[CPU_MAX], b[CPU_MAX];
			struct target *t = &targets[progs[(k + round) % NPROGS]];
			int p = (k + round) % NPROGS, err;

			if ((err = drive(skel, t, &fr, cpu, n, false, a)) ||
			    (err = drive(skel, t, &fr, cpu, n, true, b))) {
				fprintf(stderr, "bench: cpus: %s\n", strerror(-err));
				bench_bpf__destroy(skel);
				return 1;
			}
			for (int i = 0; i < n; i++) {
				alone[p][i][round] = a[i];
				both[p][i][round] = b[i];
			}
		}
	bench_bpf__destroy(skel);

	out(stdout, r->f, "\n%d CPUs driving one instance at once (IPv4/UDP, Zipf, %u packets "
	    "a CPU): each CPU's ns a packet alone and together, and its rate together "
	    "against alone (medians of %d rounds; the first 4 CPUs printed)\n", n,
	    REPEAT / n, CPU_ROUNDS);
	double worst = 1;

	for (int k = 0; k < NPROGS; k++) {
		out(stdout, r->f, "  %-28s", targets[progs[k]].drv_prog ? "empty XDP program"
		    : progs[k] == P_PARSE ? "parsing and counters" : progs[k] == P_HEAVY
		    ? "parsing + heavy flows" : progs[k] == P_SPIE ? "parsing + SPIE" : "everything");
		for (int i = 0; i < n; i++) {
			double x = median(alone[k][i], CPU_ROUNDS), y = median(both[k][i], CPU_ROUNDS);

			if (i < 4)
				out(stdout, r->f, "  CPU %d %6.1f %6.1f %4.2f", cpu[i], x, y, x / y);
			if (progs[k] == P_ALL && x / y < worst)
				worst = x / y;
		}
		out(stdout, r->f, "\n");
	}
	out(stdout, r->f, "  target: everything, each CPU at least 0.95 of its rate alone: "
	    "%.2f: %s\n", worst, worst >= 0.95 ? "met" : "MISSED");
	return 0;
}
