// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "archive.h"
#include "common.h"
#include "keeper.h"

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

static uint32_t ready_count(const struct bt_spie_maps *s)
{
	uint32_t W = s->meta->windows, cur = bt_spie_current(s), n = 0;

	while (n + 1 < W && s->win[(cur + n + 1) % W].state == BT_WIN_READY)
		n++;
	return n;
}

static void archive(struct bt_keeper *k, bool flush)
{
	struct bt_spie_maps *s = k->sm;
	uint32_t run[BT_KEEPER_FILE_WINDOWS];
	const struct bt_window *wins[BT_KEEPER_FILE_WINDOWS];
	const struct bt_bloom_block *filters[BT_KEEPER_FILE_WINDOWS];
	int n;

	while ((n = unarchived_run(s, run, BT_KEEPER_FILE_WINDOWS)) > 0) {
		const struct bt_window *oldest = &s->win[run[0]];
		bool waited = oldest->end_ns &&
			      bt_boot_ns() - oldest->end_ns >= BT_KEEPER_FILE_WAIT_S * 1e9;
		/* the ring wants it back soon: the datapath would stall */
		bool needed = ready_count(s) < bt_spie_ahead(s->meta);
		char path[512];
		int err;

		if (!flush && !waited && !needed && n < BT_KEEPER_FILE_WINDOWS)
			return;
		for (int i = 0; i < n; i++) {
			wins[i] = &s->win[run[i]];
			filters[i] = bt_window_filter(s, run[i]);
		}
		err = bt_archive_write(k->archive, k->name, s->meta, wins, filters, n, s->bpw,
				       path, sizeof(path));
		k->last_err = err;
		if (err) {
			k->archive_errors++;
			return;	/* tried again next turn; the windows stay in the ring */
		}
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

int bt_keeper_turn(struct bt_keeper *k, bool close_now, bool flush)
{
	struct bt_spie_maps *s = k->sm;
	uint32_t sealed[256];
	int n, total = 0;

	if (close_now || bt_spie_due(s, k->window_s))
		bt_spie_close_current(s);	/* -EAGAIN: no window ready; next turn */
	while ((n = bt_spie_seal_closed(s, sealed, 256)) > 0) {
		for (int i = 0; i < n; i++)
			if (s->win[sealed[i]].flags & BT_WIN_OVERLOADED)
				k->overloaded++;
		total += n;
		if (n < 256)
			break;
	}
	k->sealed += total;
	if (k->archive)
		archive(k, flush);
	uint64_t dropped = k->dropped;

	bt_spie_ready_ahead(s, k->archive != NULL, &k->dropped);
	if (k->dropped > dropped)
		bt_warn("%s: %llu sealed window%s cleared before it could be archived (%s): the "
			"ring cannot wait", k->name, (unsigned long long)(k->dropped - dropped),
			k->dropped - dropped > 1 ? "s" : "", strerror(-k->last_err));
	return total;
}
