/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Every map of the XDP program, one comment each: key, value, who writes it.
 * All are pinned by user space under /sys/fs/bpf/bloomtap/<instance>/<name>;
 * the names below are the pin names (user/instance/instance.c lists them too).
 */
#ifndef BLOOMTAP_MAPS_BPF_H
#define BLOOMTAP_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "bloomtap.h"

/* counters: key enum bt_direction, value struct bt_counters per CPU.
 * Written by the datapath only; user space sums over the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_DIRS);
	__type(key, __u32);
	__type(value, struct bt_counters);
} counters SEC(".maps");

/* flows: key struct bt_flow_key, value struct bt_flow_val (exact counts).
 * Written by the datapath when cfg_flow_table is set (replay --flows); sized
 * by user space before load, 1 entry otherwise. Shared, updated atomically. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* replay sizes it large */
	__uint(max_entries, 1);
	__type(key, struct bt_flow_key);
	__type(value, struct bt_flow_val);
} flows SEC(".maps");

/* meta: key 0, value struct bt_meta. Written once by user space when the
 * instance is created; never read by the datapath. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_meta);
} meta SEC(".maps");

/* ctl: key 0, value struct bt_ctl. Written by user space (interval flips,
 * nomination thresholds); read by the datapath on every packet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_ctl);
} ctl SEC(".maps");

/* A heavy-flow stage's five maps, named prefix + cms, fm, fmc, fc, fmo: the XDP
 * program's (no prefix), the sent packets' (e: tc egress's, sized only in
 * an instance made to record egress, else left at one entry) and the
 * dropped packets' (d, below). Sized before
 * load from the instance's meta; value sizes here are placeholders.
 *   cms: the count-min sketches, index cpu * 2 + iv, value
 *        bt_cm_value_lines() struct bt_cm_line (through mmap: line
 *        (cpu * 2 + iv) * value lines + line). Written by the datapath (each CPU its own, plain
 *        stores); read and cleared through mmap by user space.
 *   fm:  flow memory, index iv, value fm_slots struct bt_fm_slot. Slots
 *        claimed by the datapath (compare-and-swap: shared by all CPUs;
 *        the counts are in fmc); read and cleared through mmap by user
 *        space.
 *   fmc: exact counts of the flow memory's flows, per CPU, index cpu * 2 +
 *        iv, value fm_slots struct bt_cm_cell, one per slot. Written by
 *        the datapath (each CPU its own, plain adds); summed and cleared
 *        by user space through mmap.
 *   fmo: the flow memory's occupancy, index iv, value bt_fmo_words()
 *        __u64 (include/bloomtap.h).
 *   fc:  the flow cache, index cpu, value BT_FC_ENTRIES struct
 *        bt_fc_entry. Read and written by the datapath only, each CPU its
 *        own entries. */
#define BT_HEAVY_STAGE_MAPS(prefix)						\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_MMAPABLE);				\
		__uint(max_entries, 1);						\
		__uint(key_size, sizeof(__u32));				\
		__uint(value_size, sizeof(struct bt_cm_line));			\
	} prefix##cms SEC(".maps");						\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_MMAPABLE);				\
		__uint(max_entries, 1);						\
		__uint(key_size, sizeof(__u32));				\
		__uint(value_size, sizeof(struct bt_fm_slot));			\
	} prefix##fm SEC(".maps");						\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_MMAPABLE);				\
		__uint(max_entries, 1);						\
		__uint(key_size, sizeof(__u32));				\
		__uint(value_size, sizeof(struct bt_cm_cell));			\
	} prefix##fmc SEC(".maps");						\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(max_entries, 1);						\
		__uint(key_size, sizeof(__u32));				\
		__uint(value_size, BT_FC_ENTRIES * sizeof(struct bt_fc_entry));	\
	} prefix##fc SEC(".maps");						\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY);				\
		__uint(map_flags, BPF_F_MMAPABLE);				\
		__uint(max_entries, 1);						\
		__uint(key_size, sizeof(__u32));				\
		__uint(value_size, sizeof(__u64));				\
	} prefix##fmo SEC(".maps")

BT_HEAVY_STAGE_MAPS();
BT_HEAVY_STAGE_MAPS(e);

/* spie: the ring of windows' Bloom filters, index
 * win * blocks_per_window + block, value struct bt_bloom_block (64 bytes:
 * one cache line, the mmap'd array being page-aligned). Bits set by the datapath
 * (atomic OR); read, counted, archived and cleared by user space through
 * mmap, a window at a time, never the current one. Sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_bloom_block);
} spie SEC(".maps");

/* windows: W entries of struct bt_window, shared. The datapath adds to the
 * current one's fill and moves the ring on (state, times, flags); user
 * space readies, seals and counts (see include/bloomtap.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_window);
} windows SEC(".maps");

/* wcount: per CPU, BT_WCOUNT_SLOTS * W entries of __u64: the digests this
 * CPU recorded in each window, exact (plain adds), the XDP program's at
 * [0, W), the drop program's at [W, 2W), tc egress's at [2W, 3W). Apart
 * because the drop program may run in process context (a socket's
 * backlog) and be interrupted on its CPU by XDP's softirq: a shared slot
 * would lose increments. Summed by user space when it seals a window,
 * zeroed when it readies one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} wcount SEC(".maps");

/* watch_hdr: index slot (0 or 1), value struct bt_watch_hdr: the watch-list
 * table of each slot (bt_ctl.watch names the one in use). Written by user
 * space into the slot not in use, before it switches. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bt_watch_hdr);
} watch_hdr SEC(".maps");

/* watch_cells: index BT_WATCH_CHUNK_KEY(slot, chunk), value a chunk of the
 * table's array (include/bloomtap.h "Watch lists"), made by user space for
 * each table (filled through mmap; `watch set` rewrites class bytes in
 * place). No BPF_F_INNER_MAP: chunks of one size, so the verifier inlines
 * their lookups. */
struct watch_cells_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BT_WATCH_CHUNK);
	__type(key, __u32);
	/* the group as bytes: struct bt_watch_group would reach BTF only as a
	 * forward declaration, whose size libbpf cannot tell */
	__type(value, __u8[sizeof(struct bt_watch_group)]);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2 * BT_WATCH_CHUNKS);
	__type(key, __u32);
	__array(values, struct watch_cells_inner);
} watch_cells SEC(".maps");

/* watch_counts: per CPU, index direction * BT_WATCH_CLASSES + class id
 * (enum bt_direction: received, sent), value struct bt_watch_count. Plain
 * adds by the datapath; summed by user space, cleared when an id is given
 * to a new class. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_DIRS * BT_WATCH_CLASSES);
	__type(key, __u32);
	__type(value, struct bt_watch_count);
} watch_counts SEC(".maps");

/* watch_classes: index class id, value struct bt_watch_class. User space
 * only (the names of the ids), pinned so that every command reads them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BT_WATCH_CLASSES);
	__type(key, __u32);
	__type(value, struct bt_watch_class);
} watch_classes SEC(".maps");

/* The node's workloads (include/bloomtap.h "Workloads"), kept by the
 * agent: wl_addr, its two tables of addresses (bt_wl_slot); wl_counts, per CPU, index
 * stage * BT_WL_IDS + id (a direction, or BT_WL_DROPPED), the id's packets and bytes as source and
 * destination (cleared by the agent before it gives the id out again);
 * wl_names, user space's, each id's name. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2 * BT_WL_SLOTS);
	__type(key, __u32);
	__type(value, struct bt_wl_slot);
} wl_addr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_WL_STAGES * BT_WL_IDS);
	__type(key, __u32);
	__type(value, struct bt_watch_count);
} wl_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BT_WL_IDS);
	__type(key, __u32);
	__type(value, struct bt_wl_name);
} wl_names SEC(".maps");

/* digest_log: the n-th digest recorded, at index n (this CPU's count of
 * inserts), value u64. Kept only with the flow table (replay instances), so
 * that a test can compare the kernel's digests with user space's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} digest_log SEC(".maps");

/* drop_counts: per CPU, index a core drop reason, value struct
 * bt_drop_count: every drop the host's program attributed to this
 * instance (bpf/drop.bpf.h). An array, not a hash: a suppressed drop costs
 * this count and nothing else. A subsystem's reasons (upper 16 bits set)
 * go to drop_counts_subsys. Summed by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_DROP_REASONS);
	__type(key, __u32);
	__type(value, struct bt_drop_count);
} drop_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct bt_drop_count);
} drop_counts_subsys SEC(".maps");

/* The heavy dropped flows: the heavy-flow stage's maps again, for the
 * packets the kernel dropped (bpf/drop.bpf.h), keyed by the flow and the
 * reason (include/bloomtap.h "Drops"); the same shapes, sizes and
 * intervals (bt_ctl.interval) as cms, fm, fmc and fc above, and their
 * interval volumes in dcounters (struct bt_counters' parts; c[] holds the
 * stage's nominated and flow-memory-full counts). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_counters);
} dcounters SEC(".maps");

BT_HEAVY_STAGE_MAPS(d);

/* drop_counters: per CPU, key 0, value struct bt_drop_counters: digested
 * drops and, by cause, the drops that got no digest. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_drop_counters);
} drop_counters SEC(".maps");

/* drop_suppress: key 0, value BT_DROP_REASONS bits: core reasons that
 * are counted but get no digest (noise: ordinary TCP close...). Written
 * by user space when the instance is attached and by `drops --suppress`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[BT_DROP_REASONS / 64]);
} drop_suppress SEC(".maps");

/* drop_shared: key a device (struct bt_drop_owner: its namespace's inode
 * and its ifindex), value BT_SHARED_UPPER for the devices stacked on its
 * interface and on others (a bridge's other ports, a bond's other slaves,
 * a macvlan's siblings), BT_SHARED_WORKLOAD for the workloads' devices in
 * other namespaces (a container's veth end; drop_owners' value has
 * BT_DROP_DIGEST for both): those whose
 * drops are the instance's only when its windows hold the packet's
 * digest. Written by user space (user/instance/drops.c refresh_uppers,
 * bt_drops_refresh_workloads) before the owner entry that sends their
 * drops here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BT_DROP_SHARED_MAX);
	__type(key, struct bt_drop_owner);
	__type(value, __u32);
} drop_shared SEC(".maps");

/* wdrops: per CPU, W entries of struct bt_window_drops: the reasons of
 * each window's drop digests. Written by the drop program (this CPU's
 * slots, plain stores); summed when a window is sealed, zeroed when it is
 * readied, by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_window_drops);
} wdrops SEC(".maps");

/* The drop recorder (include/bloomtap.h "The drop recorder"):
 *   drop_rec:     per CPU, index slot, value struct bt_drop_rec and the
 *                 frame's head (BT_DROP_REC_SIZE(meta drop_head)); sized
 *                 before load (one entry when off). Written by the drop
 *                 program, each CPU its own ring; read by user space.
 *   drop_rec_pos: per CPU, key BT_REC_POS_KERNEL: the drop program's
 *                 counts, which only it writes.
 *   drop_follow:  key 0, the follower's PID (its PID namespace's) while
 *                 one reads drop_events, else 0.
 *                 Written by user space.
 *   drop_events:  the follower's ring buffer of the same records. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BT_DROP_REC_SIZE(BT_DROP_HEAD_DEFAULT));
} drop_rec SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_REC_POS_KEYS);
	__type(key, __u32);
	__type(value, struct bt_drop_rec_pos);
} drop_rec_pos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} drop_follow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* BT_DROP_EVENTS_BYTES when recording */
} drop_events SEC(".maps");

#endif /* BLOOMTAP_MAPS_BPF_H */
