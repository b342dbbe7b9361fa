/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The XDP link of an instance: attach, detach, tap mode (link.c). */
#ifndef BLOOMTAP_LINK_H
#define BLOOMTAP_LINK_H

#include <stdbool.h>
#include "instance.h"
#include "sketch.h"
#include "spie.h"

enum bt_xdp_mode { BT_MODE_AUTO, BT_MODE_NATIVE, BT_MODE_SKB };
extern const char *const bt_mode_names[];
/* What attach records: received frames (XDP), sent packets (tc egress) */
enum bt_attach_dir { BT_ATTACH_INGRESS, BT_ATTACH_EGRESS, BT_ATTACH_BOTH };
extern const char *const bt_attach_dir_names[];
/* attach's and the agent's --direction (an enum bt_attach_dir) */
#define BT_ATTACH_DIR_OPT(var)							\
	{ "direction", 'd', BT_OPT_ENUM, &(var), "DIR",				\
	  "what to record: ingress (what the interface receives, XDP), egress "	\
	  "(what it sends, tc egress: a trace says 'left here'), or both",	\
	  .choices = bt_attach_dir_names }

/* attach's settings; a zeroed struct is attach IFACE with no option. */
struct bt_attach_opts {
	enum bt_xdp_mode mode;
	bool force;	/* replace a foreign XDP program; tap mode on an
			 * interface with addresses */
	bool tap;	/* record every frame, then drop it (a mirror port) */
	enum bt_attach_dir dir;
	const struct bt_sketch_cfg *sketch;	/* NULL: the defaults */
	const struct bt_spie_cfg *spie;
	const char *drop_suppress;		/* NULL: the default list */
	bool drop_ring_set;	/* false: the recorder's default ring */
	__u32 drop_ring;	/* the drop recorder's slots per CPU, 0: off */
	__u32 drop_head;	/* bytes of each dropped frame kept, 0: the default */
};
/* attach IFACE: create (or reuse a kept) instance named after it, attach. */
int bt_attach(const char *ifname, const struct bt_attach_opts *o);
/* Tap mode of an attached instance (bt_ctl.tap): on, off, or -errno. */
int bt_tap_get(const struct bt_instance *inst);
/* Tap mode on or off; on is refused for an interface with an address the
 * host uses, unless force. 0, or -errno after a message. */
int bt_tap_set(const struct bt_instance *inst, const char *ifname, bool tap, bool force);
/* The egress hook of an attached instance in words: "tcx", "tc" (a clsact
 * filter) or "-" (egress not recorded). */
const char *bt_egress_hook(const struct bt_meta *meta);
/* What an attached instance records, as attach's --direction names it */
const char *bt_attach_dir_of(const struct bt_meta *meta);
/* The interface an instance is attached to (its XDP link, else its egress
 * program's tcx link or clsact filter): > 0 the ifindex, 0 when the
 * attachment lives on but its interface is gone (or the filter is), -ENOENT
 * when the instance has none (not attached, or a replay instance). */
int bt_instance_link_ifindex(const char *name);
/* detach: drop the XDP link and the egress program; unless keep_maps,
 * remove every pin. */
int bt_detach(const char *name, bool keep_maps);

#endif /* BLOOMTAP_LINK_H */
