/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Making an instance: the program loaded with its maps sized, its keys
 * drawn, everything pinned, its heavy flows and SPIE ring started. Above
 * instance.c (pins), sketch.c and spie.c, which it uses. */
#ifndef BLOOMTAP_CREATE_H
#define BLOOMTAP_CREATE_H

#include <linux/types.h>
#include "instance.h"
#include "sketch.h"
#include "spie.h"

struct bt_instance_cfg {
	const char *ifname;	/* NULL for a replay instance */
	__u32 ifindex;
	__u32 flow_table_size;	/* 0: no exact flow table */
	__u32 flags;		/* enum bt_meta_flags */
	struct bt_sketch_cfg sketch;	/* resolved by bt_instance_create() */
	struct bt_spie_cfg spie;
	__u32 drop_ring;	/* the drop recorder's slots per CPU, 0: off */
	__u32 drop_head;	/* bytes of each dropped frame kept, 0: the default */
	__u32 cut;		/* make bench only: enum bt_cut */
	bool test_hold;		/* tests only: enum bt_test_gate */
};

/* Loads a fresh program with its maps and pins it all. Fails with -EEXIST
 * when the instance exists. */
int bt_instance_create(const char *name, struct bt_instance_cfg *cfg,
		       struct bt_instance *inst);
/* The instance of that name opened, or made with cfg when there is none
 * (*created says which; created may be NULL); an error is said. attach and
 * replay share it: 'detach --keep-maps' keeps an instance to come back to. */
int bt_instance_open_or_create(const char *name, struct bt_instance_cfg *cfg,
			       struct bt_instance *inst, bool *created);

/* Whether an option of sketch or spie that was given (nonzero) asks
 * other than what the instance was made with (m): its maps have those
 * sizes. buf gets ", NAME V (kept: K)" for each. attach and replay refuse
 * such an instance rather than ignore the option. */
bool bt_kept_sizes_differ(const struct bt_meta *m, const struct bt_sketch_cfg *sketch,
			  const struct bt_spie_cfg *spie, char *buf, size_t len);

/* Has every pinned map of the instance the key and value sizes this
 * bloomtap's object gives it at the instance's shape (meta)? Every map of
 * BT_INSTANCE_MAPS: an instance of another version differs there. */
bool bt_instance_layout_matches(const struct bt_instance *inst);

/* Loads the instance's programs as create would at defaults, pins
 * nothing, and adds the verifier's figures of each to arr
 * (bt_verifier_logs_read); for 'bloomtap kernel --verifier'. */
struct json_object;
int bt_instance_verify(struct json_object *arr);

#endif /* BLOOMTAP_CREATE_H */
