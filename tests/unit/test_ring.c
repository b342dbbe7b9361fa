// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The SPIE ring's rotation, every interleaving. A model of the steps that
 * the datapath's CPUs (bpf/spie.bpf.h, spie_fill_window and spie_finish_rotation) and a keeper
 * (user/instance/spie.c, user/instance/keeper.c: repair, close on time, seal after a grace
 * period, ready ahead) take on the shared words, one atomic load, store or
 * compare-and-swap a step, explored breadth-first over every order of
 * two CPUs and a keeper that may be killed at any step (a new one then
 * starts its turn). Checked in every reachable state:
 * - a digest goes only into a CURRENT or CLOSED window (a SEALED one is
 *   archived already, a READY or EMPTY one will be cleared);
 * - the ring never jams: from every state some order of steps moves it on
 *   (a window becomes CURRENT).
 * The swap-first ring (the index stored after a swap on the next window's
 * state, and a repair that took two CURRENT windows for a killed keeper)
 * is modelled too: the checker must find its jam. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib.h"

enum { W = 4, CPUS = 2, AHEAD = 2, MAXROT = 2 * W + 1 };
enum { EMPTY, READY, CURRENT, CLOSED, SEALED };	/* enum bt_window_state */
static const char *const state_name[] = { "empty", "ready", "current", "closed", "sealed" };

/* A CPU's steps. IDLE: between programs; INSERT: it read the index (win)
 * and now sets its digest's bits in that window. */
enum { C_IDLE, C_INSERT,
       /* this ring: claim by compare-and-swap of the ring word */
       R_RING, R_INDEX, R_NEXT, R_CLAIM, R_CURRENT, R_STORE, R_CLOSE,
       /* the swap-first ring: swap on the next window's state, then store the index */
       O_INDEX, O_NEXT, O_SWAP, O_STORE, O_CLOSE };

/* The keeper's steps, a turn from K_START to K_START again. */
enum { K_START,
       K_FIN_CURRENT, K_FIN_STORE, K_FIN_CLOSE, K_FIN_UNMARK,	/* repair, close */
       K_DUE, K_C_RING, K_C_INDEX, K_C_NEXT, K_C_CLAIM,		/* close on time */
       K_O_REPAIR_STORE, K_O_REPAIR_CLOSE, K_O_SWAP, K_O_STORE, K_O_CLOSE,	/* swap-first */
       K_SEAL, K_READY_CUR, K_READY, K_READY_SET };

struct cpu {
	uint8_t pc, win, ring;
};

struct state {
	uint8_t ring, marked;	/* bt_ctl.ring: rotations claimed, BT_RING_KEEPER */
	uint8_t window;		/* bt_ctl.window */
	uint8_t ws[W];
	uint8_t rot;		/* rotations done (a window became CURRENT) */
	struct cpu cpu[CPUS];
	uint8_t kpc, kring, kpos, kcur, kj, kclosing;
	uint8_t lost;		/* a digest went into a window not written */
};

static bool old_ring;	/* model the swap-first ring's steps */

struct explored {
	struct state *s;
	uint32_t *parent, n, cap;
	uint32_t *slot, nslots;		/* open addressing, index + 1 */
	uint32_t (*edge)[2];
	size_t nedges, edges_cap;
};

static uint64_t state_hash(const struct state *s)
{
	const uint8_t *b = (const uint8_t *)s;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static uint32_t intern(struct explored *e, const struct state *s, uint32_t parent, bool *fresh)
{
	uint32_t i = state_hash(s) & (e->nslots - 1);

	for (;; i = (i + 1) & (e->nslots - 1)) {
		uint32_t at = e->slot[i];

		if (!at)
			break;
		if (!memcmp(&e->s[at - 1], s, sizeof(*s))) {
			*fresh = false;
			return at - 1;
		}
	}
	assert_true(e->n < e->cap);
	e->s[e->n] = *s;
	e->parent[e->n] = parent;
	e->slot[i] = ++e->n;
	*fresh = true;
	return e->n - 1;
}

static bool cas(uint8_t *word, uint8_t expect, uint8_t to)
{
	if (*word != expect)
		return false;
	*word = to;
	return true;
}

/* The window becomes CURRENT from READY: a rotation done. */
static void make_current(struct state *s, uint8_t i)
{
	if (cas(&s->ws[i], READY, CURRENT))
		s->rot++;
}

/* Takes CPU c's next step; false when it has none. */
static bool cpu_step(struct state *s, int c, bool rotate)
{
	struct cpu *p = &s->cpu[c];
	uint8_t next = (p->win + 1) % W;

	if (rotate && p->pc != C_INSERT)
		return false;	/* the one step with two outcomes */
	switch (p->pc) {
	case C_IDLE:
		p->win = s->window;
		p->pc = C_INSERT;
		return true;
	case C_INSERT:
		if (s->ws[p->win] != CURRENT && s->ws[p->win] != CLOSED)
			s->lost = 1;
		/* the window's fill reached its load, or not */
		p->pc = !rotate ? C_IDLE : old_ring ? O_INDEX : R_RING;
		return true;
	case R_RING:
		p->ring = s->ring | (s->marked << 7);
		p->pc = R_INDEX;
		return true;
	case R_INDEX:
		p->pc = (p->ring & 0x80) || p->ring % W != p->win || s->window != p->win ? C_IDLE
											 : R_NEXT;
		return true;
	case R_NEXT:
		p->pc = s->ws[next] == READY ? R_CLAIM : C_IDLE;
		return true;
	case R_CLAIM:
		p->pc = !s->marked && cas(&s->ring, p->ring, p->ring + 1) ? R_CURRENT : C_IDLE;
		return true;
	case R_CURRENT:
		make_current(s, next);
		p->pc = R_STORE;
		return true;
	case R_STORE:
		s->window = next;
		p->pc = R_CLOSE;
		return true;
	case R_CLOSE:
	case O_CLOSE:
		cas(&s->ws[p->win], CURRENT, CLOSED);
		p->pc = C_IDLE;
		return true;
	case O_INDEX:
		p->pc = s->window == p->win ? O_NEXT : C_IDLE;
		return true;
	case O_NEXT:
		p->pc = s->ws[next] == READY ? O_SWAP : C_IDLE;
		return true;
	case O_SWAP:
		if (s->ws[next] == READY) {
			make_current(s, next);
			p->pc = O_STORE;
		} else {
			p->pc = C_IDLE;
		}
		return true;
	case O_STORE:
		s->window = next;
		p->pc = O_CLOSE;
		return true;
	}
	return false;
}

/* What an actor between steps no longer holds is forgotten, so that
 * states that differ only there are one. */
static void forget(struct state *s)
{
	for (int c = 0; c < CPUS; c++)
		if (s->cpu[c].pc == C_IDLE)
			s->cpu[c] = (struct cpu){ 0 };
	if (s->kpc == K_START || s->kpc == K_DUE || s->kpc == K_SEAL)
		s->kring = s->kpos = s->kcur = s->kj = 0;
	if (s->kpc == K_START)
		s->kclosing = 0;
}

static bool cpus_idle(const struct state *s)
{
	for (int c = 0; c < CPUS; c++)
		if (s->cpu[c].pc != C_IDLE)
			return false;
	return true;
}

/* Takes the keeper's next step (choice: the one nondeterministic branch,
 * "is the window due"); false when it has none. */
static bool keeper_step(struct state *s, bool choice)
{
	uint8_t cur;

	if (choice && s->kpc != K_DUE)
		return false;
	switch (s->kpc) {
	case K_START:
		s->kclosing = 0;
		if (old_ring) {
			/* the swap-first ring's repair: two CURRENT windows taken for a
			 * killed keeper's half-done rotation */
			s->kcur = s->window;
			s->kpos = (s->kcur + 1) % W;
			s->kpc = s->ws[s->kpos] == CURRENT && s->ws[s->kcur] == CURRENT ?
					 K_O_REPAIR_STORE : K_DUE;
			return true;
		}
		s->kpos = s->ring;
		s->kpc = s->marked ? K_FIN_CURRENT : K_DUE;
		return true;
	case K_FIN_CURRENT:
		make_current(s, s->kpos % W);
		s->kpc = K_FIN_STORE;
		return true;
	case K_FIN_STORE:
		s->window = s->kpos % W;
		s->kpc = K_FIN_CLOSE;
		return true;
	case K_FIN_CLOSE:
		cas(&s->ws[(s->kpos + W - 1) % W], CURRENT, CLOSED);
		s->kpc = K_FIN_UNMARK;
		return true;
	case K_FIN_UNMARK:
		s->marked = 0;
		s->kpc = s->kclosing ? K_SEAL : K_DUE;
		return true;
	case K_DUE:
		s->kpc = !choice ? K_SEAL : old_ring ? K_O_SWAP : K_C_RING;
		return true;
	case K_C_RING:
		s->kring = s->ring | (s->marked << 7);
		s->kpc = s->kring & 0x80 ? K_SEAL : K_C_INDEX;
		return true;
	case K_C_INDEX:
		s->kpc = s->window == s->kring % W ? K_C_NEXT : K_SEAL;
		return true;
	case K_C_NEXT:
		s->kpc = s->ws[(s->kring + 1) % W] == READY ? K_C_CLAIM : K_SEAL;
		return true;
	case K_C_CLAIM:
		if (!s->marked && cas(&s->ring, s->kring, s->kring + 1)) {
			s->marked = 1;
			s->kpos = s->kring + 1;
			s->kclosing = 1;
			s->kpc = K_FIN_CURRENT;
		} else {
			s->kpc = K_SEAL;
		}
		return true;
	case K_O_REPAIR_STORE:
		s->window = s->kpos;
		s->kpc = K_O_REPAIR_CLOSE;
		return true;
	case K_O_REPAIR_CLOSE:
		cas(&s->ws[s->kcur], CURRENT, CLOSED);
		s->kpc = K_DUE;
		return true;
	case K_O_SWAP:
		s->kcur = s->window;
		s->kpos = (s->kcur + 1) % W;
		if (s->ws[s->kpos] == READY) {
			make_current(s, s->kpos);
			s->kpc = K_O_STORE;
		} else {
			s->kpc = K_SEAL;
		}
		return true;
	case K_O_STORE:
		s->window = s->kpos;
		s->kpc = K_O_CLOSE;
		return true;
	case K_O_CLOSE:
		cas(&s->ws[s->kcur], CURRENT, CLOSED);
		s->kpc = K_SEAL;
		return true;
	case K_SEAL:
		/* after a grace period: no program that read the index
		 * before it is still running */
		if (!cpus_idle(s))
			return false;
		for (int i = 0; i < W; i++)
			if (s->ws[i] == CLOSED)
				s->ws[i] = SEALED;
		s->kpc = K_READY_CUR;
		return true;
	case K_READY_CUR:
		s->kcur = s->window;
		s->kj = 1;
		s->kpc = K_READY;
		return true;
	case K_READY:
		cur = (s->kcur + s->kj) % W;
		if (s->kj > AHEAD) {
			s->kpc = K_START;
		} else if (s->ws[cur] == READY) {
			s->kj++;
		} else if (s->ws[cur] == SEALED || s->ws[cur] == EMPTY) {
			s->ws[cur] = EMPTY;	/* being cleared */
			s->kpc = K_READY_SET;
		} else {
			s->kpc = K_START;	/* closed, not sealed yet */
		}
		return true;
	case K_READY_SET:
		s->ws[(s->kcur + s->kj) % W] = READY;
		s->kj++;
		s->kpc = K_READY;
		return true;
	}
	return false;
}

/* The keeper killed: a new one starts its turn. */
static bool keeper_killed(struct state *s)
{
	if (s->kpc == K_START)
		return false;
	s->kpc = K_START;
	s->kring = s->kpos = s->kcur = s->kj = s->kclosing = 0;
	return true;
}

static void add_edge(struct explored *e, uint32_t from, uint32_t to)
{
	if (e->nedges == e->edges_cap) {
		e->edges_cap = e->edges_cap ? 2 * e->edges_cap : 1 << 20;
		e->edge = realloc(e->edge, e->edges_cap * sizeof(*e->edge));
		assert_non_null(e->edge);
	}
	e->edge[e->nedges][0] = from;
	e->edge[e->nedges][1] = to;
	e->nedges++;
}

static void print_state(const struct state *s)
{
	print_message("    ring %u%s, index %u, rotations %u:", s->ring, s->marked ? " (keeper)" : "",
		      s->window, s->rot);
	for (int i = 0; i < W; i++)
		print_message(" %u:%s", i, state_name[s->ws[i]]);
	print_message("; CPUs at steps");
	for (int c = 0; c < CPUS; c++)
		print_message(" %u (window %u)", s->cpu[c].pc, s->cpu[c].win);
	print_message(", keeper at step %u\n", s->kpc);
}

static void print_path(const struct explored *e, uint32_t at)
{
	uint32_t path[256], n = 0;

	for (; at != UINT32_MAX && n < 256; at = e->parent[at])
		path[n++] = at;
	print_message("  %u steps from the start to it; the last 6:\n", n - 1);
	for (uint32_t i = n > 6 ? 6 : n; i > 0; i--)
		print_state(&e->s[path[i - 1]]);
}

struct verdict {
	uint32_t states, lost_at, jammed_at;
	size_t edges;
};

/* Explores every interleaving; the first state (fewest steps) that lost
 * a digest, and the first from which no order of steps moves the ring. */
static struct verdict explore(bool old)
{
	struct explored e = { .cap = 1 << 23, .nslots = 1 << 24 };
	struct verdict v = { .lost_at = UINT32_MAX, .jammed_at = UINT32_MAX };
	struct state s0 = { 0 };
	uint32_t *first, *by_target, *queue, head = 0, tail = 0;
	bool fresh, *live;

	old_ring = old;
	e.s = calloc(e.cap, sizeof(*e.s));
	e.parent = calloc(e.cap, sizeof(*e.parent));
	e.slot = calloc(e.nslots, sizeof(*e.slot));
	assert_true(e.s && e.parent && e.slot);
	/* bt_spie_start: window 0 current, the next ones ready */
	s0.ws[0] = CURRENT;
	for (int j = 1; j <= AHEAD; j++)
		s0.ws[j] = READY;
	intern(&e, &s0, UINT32_MAX, &fresh);
	for (uint32_t at = 0; at < e.n; at++) {
		struct state s = e.s[at];

		if (s.lost && v.lost_at == UINT32_MAX)
			v.lost_at = at;
		if (s.rot >= MAXROT)
			continue;	/* far enough: the ring went round once more */
		for (int actor = 0; actor <= CPUS + 1; actor++) {
			for (int choice = 0; choice < 2; choice++) {
				struct state t = s;
				bool moved;

				if (actor < CPUS)
					moved = cpu_step(&t, actor, choice);
				else if (actor == CPUS)
					moved = keeper_step(&t, choice);
				else
					moved = !choice && keeper_killed(&t);
				if (!moved)
					continue;
				forget(&t);
				add_edge(&e, at, intern(&e, &t, at, &fresh));
			}
		}
	}
	/* Jams: live states are those with rotations to spare done, or one
	 * step from more rotations, or one step from a live state with as
	 * many; the rest are found backwards over the edges. */
	live = calloc(e.n, sizeof(*live));
	first = calloc(e.n + 1, sizeof(*first));
	by_target = calloc(e.nedges, sizeof(*by_target));
	queue = calloc(e.n, sizeof(*queue));
	assert_true(live && first && by_target && queue);
	for (size_t i = 0; i < e.nedges; i++)
		first[e.edge[i][1] + 1]++;
	for (uint32_t i = 0; i < e.n; i++)
		first[i + 1] += first[i];
	for (size_t i = 0; i < e.nedges; i++) {
		uint32_t to = e.edge[i][1];

		by_target[first[to]++] = e.edge[i][0];
	}
	for (uint32_t i = e.n; i > 0; i--)
		first[i] = first[i - 1];
	first[0] = 0;
	for (uint32_t i = 0; i < e.n; i++)
		if (e.s[i].rot >= MAXROT)
			live[i] = true, queue[tail++] = i;
	for (size_t i = 0; i < e.nedges; i++) {
		uint32_t a = e.edge[i][0], b = e.edge[i][1];

		if (e.s[b].rot > e.s[a].rot && !live[a])
			live[a] = true, queue[tail++] = a;
	}
	while (head < tail) {
		uint32_t b = queue[head++];

		for (uint32_t i = first[b]; i < first[b + 1]; i++) {
			uint32_t a = by_target[i];

			if (!live[a] && e.s[a].rot == e.s[b].rot)
				live[a] = true, queue[tail++] = a;
		}
	}
	for (uint32_t i = 0; i < e.n && v.jammed_at == UINT32_MAX; i++)
		if (!live[i])
			v.jammed_at = i;
	v.states = e.n;
	v.edges = e.nedges;
	print_message("%s: %u states, %zu steps between them, two CPUs and a keeper killed at "
		      "any step, %d windows, %d ready ahead, up to %d rotations\n",
		      old ? "the ring of ABI 11" : "the ring", e.n, e.nedges, W, AHEAD, MAXROT);
	if (v.lost_at != UINT32_MAX) {
		print_message("  a digest into a window not written any more:\n");
		print_path(&e, v.lost_at);
	}
	if (v.jammed_at != UINT32_MAX) {
		print_message("  jammed: no order of steps moves the ring on from\n");
		print_path(&e, v.jammed_at);
	}
	free(live), free(first), free(by_target), free(queue);
	free(e.s), free(e.parent), free(e.slot), free(e.edge);
	return v;
}

static void test_ring_never_jams_nor_loses(void **state)
{
	struct verdict v = explore(false);

	assert_true(v.states > 1000);
	assert_int_equal(v.lost_at, UINT32_MAX);
	assert_int_equal(v.jammed_at, UINT32_MAX);
}

/* The checker can fail: on the swap-first ring's steps it finds its jam
 * (a CPU late with the index after the keeper's repair moved it). */
static void test_checker_finds_the_old_jam(void **state)
{
	struct verdict v = explore(true);

	assert_true(v.jammed_at != UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_never_jams_nor_loses),
		cmocka_unit_test(test_checker_finds_the_old_jam),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
