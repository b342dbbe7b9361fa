// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "core/archive.h"
#include "drops.h"
#include "base/common.h"
#include "keeper.h"
#include "base/util.h"

/* Sealed windows not archived yet, in ring order from the oldest: the
 * longest run of consecutive numbers, into run[]. */
static int unarchived_run(const struct bt_spie_maps *s, uint32_t *run, int max)
{
	uint32_t W = s->meta->windows, cur = bt_spie_current(s);
	int n = 0;

	/* the oldest window is the one after the current, going round */
	for (uint32_t j = 1; j <= W && n < max; j++) {
		uint32_t i = (cur + j) % W;
		const struct bt_window *w = &s->win[i];

		if (w->state == BT_WIN_SEALED && !(w->flags & BT_WIN_ARCHIVED)) {
			if (n && w->seq != s->win[run[n - 1]].seq + 1)
				break;	/* a gap: the next file starts there */
			run[n++] = i;
		} else if (n) {
			break;
		}
	}
	return n;
}

/* Windows from the current one forward to window i: readying takes the
 * oldest sealed windows, the ones just after the ready ones. */
static uint32_t distance(const struct bt_spie_maps *s, uint32_t i)
{
	uint32_t W = s->meta->windows;

	return (i + W - bt_spie_current(s)) % W;
}

static void archive(struct bt_keeper *k, bool flush)
{
	struct bt_spie_maps *s = k->sm;
	uint32_t run[BT_KEEPER_FILE_WINDOWS];
	const struct bt_window *wins[BT_KEEPER_FILE_WINDOWS];
	const struct bt_bloom_block *filters[BT_KEEPER_FILE_WINDOWS];
	/* the drop reasons of sealed windows: their slots stay until the
	 * window is readied again, after it was archived */
	struct bt_win_reasons reasons[BT_KEEPER_FILE_WINDOWS];	/* 17 KiB */
	const struct bt_win_reasons *rp[BT_KEEPER_FILE_WINDOWS];
	int n;

	if (!flush && k->retry_at && bt_mono_s() < k->retry_at)
		return;	/* the windows stay in the ring meanwhile */
	while ((n = unarchived_run(s, run, BT_KEEPER_FILE_WINDOWS)) > 0) {
		const struct bt_window *oldest = &s->win[run[0]];
		double wait = k->flush_s > 0 ? k->flush_s : BT_KEEPER_FLUSH_S;
		bool waited = oldest->end_ns && bt_boot_ns() - oldest->end_ns >= wait * 1e9;
		/* readying will want it within the next turns: the datapath
		 * would stall (in steady state the oldest unarchived window is
		 * far behind, and files fill up to BT_KEEPER_FILE_WINDOWS) */
		bool needed = distance(s, run[0]) <= 2 * bt_spie_ahead(s->meta) + 1;
		char path[512];
		int err;

		if (!flush && !waited && !needed && n < BT_KEEPER_FILE_WINDOWS)
			return;
		for (int i = 0; i < n; i++) {
			wins[i] = &s->win[run[i]];
			filters[i] = bt_window_filter(s, run[i]);
			bt_window_reasons(s->inst, s->ncpu, run[i], &reasons[i]);
			rp[i] = &reasons[i];
		}
		err = bt_archive_write(k->archive, k->name, s->meta,
				       &(struct bt_archive_batch){ wins, filters, rp, n, s->bpw },
				       path, sizeof(path));
		k->last_err = err;
		if (err) {
			k->archive_errors++;
			k->retry_at = bt_mono_s() + BT_KEEPER_RETRY_S;
			return;	/* the windows stay in the ring */
		}
		k->retry_at = 0;
		bt_test_kill_point("archived");
		for (int i = 0; i < n; i++)
			__atomic_fetch_or(&s->win[run[i]].flags, BT_WIN_ARCHIVED, __ATOMIC_RELEASE);
		k->archived += n;
		k->files++;
		bt_debug("%s: windows %u..%u into %s", k->name, wins[0]->seq, wins[n - 1]->seq, path);
		if (k->max_bytes || k->max_age_s) {
			uint64_t total = 0;

			if (bt_archive_prune(k->archive, NULL, k->max_bytes, k->max_age_s, &total) >= 0)
				k->archive_bytes = total;
		}
	}
}

#define MAX_CLOSED 256

int bt_keeper_turn_all(struct bt_keeper **ks, int nk, bool close_now, bool flush)
{
	uint32_t closed[nk][MAX_CLOSED];
	int n[nk], total = 0;

	for (int i = 0; i < nk; i++) {
		struct bt_spie_maps *s = ks[i]->sm;

		/* whoever holds the lock mends what a killed holder left: a
		 * half-done rotation here; windows left CLOSED, half-readied
		 * (EMPTY) or sealed but not archived, by the steps below */
		bt_clock_note(s->inst, &ks[i]->clock_lo, &ks[i]->clock_hi);
		if (bt_spie_repair(s))
			bt_warn("%s: finished a window rotation that a stopped keeper left half "
				"done", ks[i]->name);
		if (close_now || bt_spie_due(s, ks[i]->window_s))
			bt_spie_close_current(s);	/* -EAGAIN: none ready; next turn */
		n[i] = bt_spie_closed(s, closed[i], MAX_CLOSED);
		total += n[i];
	}
	if (total)
		bt_grace_period();
	for (int i = 0; i < nk; i++) {
		struct bt_keeper *k = ks[i];
		uint64_t dropped = k->dropped;

		bt_spie_seal(k->sm, closed[i], n[i]);
		for (int j = 0; j < n[i]; j++)
			if (k->sm->win[closed[i][j]].flags & BT_WIN_OVERLOADED)
				k->overloaded++;
		k->sealed += n[i];
		if (k->archive)
			archive(k, flush);
		bt_spie_ready_ahead(k->sm, k->archive != NULL, &k->dropped);
		if (k->dropped > dropped)
			bt_warn("%s: %llu sealed window%s cleared before it could be archived (%s): "
				"the ring cannot wait", k->name,
				(unsigned long long)(k->dropped - dropped),
				k->dropped - dropped > 1 ? "s" : "", strerror(-k->last_err));
	}
	return total;
}

int bt_keeper_turn(struct bt_keeper *k, bool close_now, bool flush)
{
	return bt_keeper_turn_all(&k, 1, close_now, flush);
}
