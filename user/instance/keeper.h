/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Keeping an instance's SPIE ring turning behind the datapath: close the
 * current window on time, seal the closed ones, archive sealed windows a
 * file of several at a time, and keep clean windows ready ahead. The agent
 * runs a turn every 10 ms for each interface; windows --every does the
 * same for one instance. */
#ifndef BLOOMTAP_KEEPER_H
#define BLOOMTAP_KEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include "spie.h"

/* An archive file holds up to this many windows, or what waited
 * flush_s (default BT_KEEPER_FLUSH_S): fewer files than one a window, and
 * windows on disk within seconds. */
#define BT_KEEPER_FILE_WINDOWS 64
#define BT_KEEPER_FLUSH_S 10.0
/* After a failed archive write (a full disk), the next waits this long:
 * each try compresses up to BT_KEEPER_FILE_WINDOWS windows again, and the
 * turns come every 10 ms. A flush (a rotation, stopping) tries at once. */
#define BT_KEEPER_RETRY_S 1.0

struct bt_keeper {
	struct bt_spie_maps *sm;
	const char *name;	/* the instance */
	const char *archive;	/* NULL: no archive */
	uint64_t max_bytes, max_age_s;	/* archive budget (0: none) */
	double window_s;	/* close the current window after this long (0: never) */
	double flush_s;		/* archive what waited this long (0: BT_KEEPER_FLUSH_S) */
	/* what it did */
	uint64_t sealed, archived, files, archive_errors, dropped, overloaded;
	uint64_t archive_bytes;	/* after the last prune */
	int last_err;		/* of the last archive write */
	double retry_at;	/* CLOCK_MONOTONIC s: no write before, after a failed one */
	__s64 clock_lo, clock_hi;	/* bt_clock_note's copy */
};

/* One turn. close_now: close the current window whatever its age (a
 * manual rotation); flush: archive every sealed window now (a manual
 * rotation, or stopping). Returns the number of windows sealed. */
int bt_keeper_turn(struct bt_keeper *k, bool close_now, bool flush);
/* The same for n rings at once (the agent's interfaces): one grace period
 * serves them all. */
int bt_keeper_turn_all(struct bt_keeper **k, int n, bool close_now, bool flush);

#endif /* BLOOMTAP_KEEPER_H */
