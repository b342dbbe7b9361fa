// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "create.h"
#include "core/digest.h"	/* struct bt_hash_keys, in the skeleton's .bss */
#include "drops.h"
#include "kernel.h"
#include "bloomtap.skel.h"

static bool listed(const struct bpf_map *m, const struct bpf_map *const *list, size_t n)
{
	while (n--)
		if (list[n] == m)
			return true;
	return false;
}

/* The maps to pin besides the program, by skeleton map. */
static int pin_maps(struct bloomtap_bpf *skel, const char *name, char *path, size_t len)
{
#define BT_MAP_OF(m) skel->maps.m,
	struct bpf_map *maps[] = { BT_INSTANCE_MAPS(BT_MAP_OF) };
	const struct bpf_map *scratch[] = { BT_INSTANCE_SCRATCH_MAPS(BT_MAP_OF) };
#undef BT_MAP_OF
	const size_t n = sizeof(maps) / sizeof(maps[0]);
	struct bpf_map *m;
	int err;

	/* every map of the object is in the list, or one would go unpinned */
	bpf_object__for_each_map(m, skel->obj) {
		if (!bpf_map__is_internal(m) && !listed(m, (const struct bpf_map **)maps, n) &&
		    !listed(m, scratch, sizeof(scratch) / sizeof(scratch[0]))) {
			bt_err("map '%s' of the BPF object is in neither BT_INSTANCE_MAPS nor "
			       "BT_INSTANCE_SCRATCH_MAPS (user/instance.h)", bpf_map__name(m));
			snprintf(path, len, "map %s", bpf_map__name(m));
			return -EINVAL;
		}
	}
	bt_instance_path(name, "prog", path, len);
	if ((err = bpf_program__pin(skel->progs.bloomtap_xdp, path)))
		return err;
	bt_instance_path(name, "prog_mb", path, len);
	if (bpf_program__autoload(skel->progs.bloomtap_xdp_mb) &&
	    (err = bpf_program__pin(skel->progs.bloomtap_xdp_mb, path)))
		return err;
	bt_instance_path(name, "prog_drop", path, len);
	if (bpf_program__autoload(skel->progs.bloomtap_drop) &&
	    (err = bpf_program__pin(skel->progs.bloomtap_drop, path)))
		return err;
	bt_instance_path(name, "prog_egress", path, len);
	if (bpf_program__autoload(skel->progs.bloomtap_egress) &&
	    (err = bpf_program__pin(skel->progs.bloomtap_egress, path)))
		return err;
	for (size_t i = 0; i < n; i++) {
		bt_instance_path(name, bpf_map__name(maps[i]), path, len);
		if ((err = bpf_map__pin(maps[i], path)))
			return err;
	}
	return 0;
}

static void set_shape(struct bpf_map *map, struct bt_map_shape s)
{
	bpf_map__set_max_entries(map, s.entries);
	bpf_map__set_value_size(map, s.value);
}

/* The heavy-flow stages' maps at meta's sizes: the XDP program's, the
 * dropped flows' (the same stage, the same shapes) and, in an instance made
 * to record egress, the sent flows'. */
static void size_heavy(struct bloomtap_bpf *skel, const struct bt_meta *meta)
{
	struct bt_heavy_shape shape;

	bt_heavy_shape(meta, &shape);
	if (meta->flags & BT_META_EGRESS_MAPS) {
		set_shape(skel->maps.ecms, shape.cms);
		set_shape(skel->maps.efm, shape.fm);
		set_shape(skel->maps.efmc, shape.fmc);
		set_shape(skel->maps.efc, shape.fc);
		set_shape(skel->maps.efmo, shape.fmo);
	}
	set_shape(skel->maps.cms, shape.cms);
	set_shape(skel->maps.fm, shape.fm);
	set_shape(skel->maps.fmc, shape.fmc);
	set_shape(skel->maps.fc, shape.fc);
	set_shape(skel->maps.fmo, shape.fmo);
	set_shape(skel->maps.dcms, shape.cms);
	set_shape(skel->maps.dfm, shape.fm);
	set_shape(skel->maps.dfmc, shape.fmc);
	set_shape(skel->maps.dfc, shape.fc);
	set_shape(skel->maps.dfmo, shape.fmo);
}

/* The drop recorder's ring (include/bloomtap.h): one slot and the
 * smallest ring buffer when it is off. */
static void size_recorder(struct bloomtap_bpf *skel, const struct bt_meta *meta)
{
	bpf_map__set_max_entries(skel->maps.drop_rec, meta->drop_ring ? meta->drop_ring : 1);
	bpf_map__set_value_size(skel->maps.drop_rec, BT_DROP_REC_SIZE(meta->drop_head));
	bpf_map__set_max_entries(skel->maps.drop_events,
				 meta->drop_ring ? BT_DROP_EVENTS_BYTES : 4096);
}

/* Phase 1: the settings resolved into meta, the instance's random key. */
static int settle(struct bt_instance_cfg *cfg, struct bt_meta *meta, __u64 *fc_mult)
{
	int err, ncpu;

	if ((err = bt_sketch_resolve(&cfg->sketch, meta)) ||
	    (err = bt_spie_resolve(&cfg->spie, meta)))
		return err;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	meta->ncpu = ncpu;
	meta->flags = cfg->flags | (cfg->flow_table_size ? BT_META_FLOW_TABLE : 0);
	meta->drop_ring = cfg->drop_ring;
	meta->drop_head = cfg->drop_head ? cfg->drop_head : BT_DROP_HEAD_DEFAULT;
	/* The hash key: random per instance, so that nobody can aim flows
	 * at the same sketch cells, flow memory slots or Bloom blocks. */
	if (getrandom(&meta->hash_key, sizeof(meta->hash_key), 0) != sizeof(meta->hash_key) ||
	    getrandom(fc_mult, sizeof(*fc_mult), 0) != sizeof(*fc_mult)) {
		err = -errno;
		bt_err("getrandom: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Phase 2: the program's constants (.rodata, the keys in .bss) and the
 * maps' sizes, before load. */
static void configure(struct bloomtap_bpf *skel, const struct bt_instance_cfg *cfg,
		      const struct bt_meta *meta, __u64 fc_mult)
{
	struct bt_hash_keys keys;
	__u64 batch;

	skel->rodata->cfg_flow_table = cfg->flow_table_size > 0;
	skel->rodata->cfg_heavy = !(cfg->flags & BT_META_NO_HEAVY);
	if (cfg->flow_table_size) {
		bpf_map__set_max_entries(skel->maps.flows, cfg->flow_table_size);
		bpf_map__set_max_entries(skel->maps.digest_log, BT_DIGEST_LOG);
	}
	bt_hash_keys_derive(&meta->hash_key, &keys);
	memcpy(&skel->bss->cfg_keys, &keys, sizeof(keys));
	memset(&keys, 0, sizeof(keys));
	/* heavy flows: the program looks each value up once and indexes in */
	skel->rodata->cfg_key_mode = meta->key_mode;
	skel->rodata->cfg_depth = meta->depth;
	skel->rodata->cfg_cm_npat = bt_cm_patterns(meta->depth,
						   (__u32 *)skel->rodata->cfg_cm_pat);
	skel->rodata->cfg_cm_lmask = bt_cm_lines(meta) - 1;
	skel->rodata->cfg_fm_mask = meta->fm_slots - 1;
	skel->rodata->cfg_fc_mult = fc_mult | 1;
	skel->rodata->cfg_frac_div = bt_heavy_frac_div(meta);
	skel->rodata->cfg_cut = cfg->cut;
	skel->rodata->cfg_egress_heavy = !!(meta->flags & BT_META_EGRESS_MAPS);
	size_heavy(skel, meta);
	/* SPIE */
	skel->rodata->cfg_spie = !(cfg->flags & BT_META_NO_SPIE);
	skel->rodata->cfg_share_hash = !(cfg->flags & BT_META_SEPARATE_HASH);
	skel->rodata->cfg_k = meta->k;
	skel->rodata->cfg_block_mask = meta->window_bits / BT_BLOCK_BITS - 1;
	skel->rodata->cfg_windows = meta->windows;
	skel->rodata->cfg_test_hold = cfg->test_hold;
	skel->rodata->cfg_design_load = meta->design_load;
	/* a CPU adds its digests to the shared fill a batch at a time: at
	 * most 64, and small against the load for tiny windows */
	for (batch = BT_SPIE_BATCH; batch > 1 && batch * 16 > meta->design_load; batch /= 2)
		;
	skel->rodata->cfg_batch_mask = batch - 1;
	bpf_map__set_max_entries(skel->maps.spie, meta->window_bits / BT_BLOCK_BITS * meta->windows);
	bpf_map__set_max_entries(skel->maps.windows, meta->windows);
	bpf_map__set_max_entries(skel->maps.wcount, BT_WCOUNT_SLOTS * meta->windows);
	bpf_map__set_max_entries(skel->maps.wdrops, meta->windows);
	skel->rodata->cfg_rec_slots = meta->drop_ring;
	skel->rodata->cfg_rec_head = meta->drop_head;
	size_recorder(skel, meta);
	/* drops: the program needs the kernel's BTF (tp_btf) and kfree_skb's
	 * reason; without them the instance has none, and says so at attach */
	if (!bt_drops_supported())
		bpf_program__set_autoload(skel->progs.bloomtap_drop, false);
	/* the egress program digests a TSO skb's segments with bpf_loop */
	if (bt_kernel_has(BT_KF_LOOP) == 0)
		bpf_program__set_autoload(skel->progs.bloomtap_egress, false);
	/* xdp.frags programs load from Linux 5.18; before, frames are linear */
	if (bt_kernel_has(BT_KF_XDP_FRAGS) == 0)
		bpf_program__set_autoload(skel->progs.bloomtap_xdp_mb, false);
}

/* Phase 4: the meta and the control block written, everything pinned. */
static int publish(struct bloomtap_bpf *skel, const char *name, const struct bt_instance_cfg *cfg,
		   struct bt_meta *meta)
{
	struct bt_ctl ctl = { 0 };
	struct timespec now;
	char path[256];
	__u32 zero = 0;
	int err;

	if ((err = bt_instance_mkdir(name)))
		return err;
	meta->magic = BT_META_MAGIC;
	meta->abi_version = BT_ABI_VERSION;
	meta->ifindex = cfg->ifindex;
	meta->flow_table_size = cfg->flow_table_size;
	clock_gettime(CLOCK_REALTIME, &now);
	meta->created_ns = (__u64)now.tv_sec * 1000000000ULL + now.tv_nsec;
	if (cfg->ifname)
		snprintf(meta->ifname, sizeof(meta->ifname), "%s", cfg->ifname);
	ctl.interval_start_ns[0] = meta->created_ns;
	ctl.nominate_bytes = ctl.nominate_packets = ~0ULL;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.meta), &zero, meta, 0);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.ctl), &zero, &ctl, 0);
	if (err) {
		bt_err_errno(err, "writing instance metadata");
		return err;
	}
	if ((err = pin_maps(skel, name, path, sizeof(path))))
		bt_err("pinning %s: %s", path, strerror(-err));
	return err;
}

/* Phase 5: heavy flows' thresholds set, the SPIE ring started. */
static int start(struct bt_instance *inst)
{
	struct bt_heavy_maps hm;
	struct bt_spie_maps sm;
	char desc[BT_DESCRIBE_MAX];
	int err;

	if ((err = bt_heavy_map(inst, &hm))) {
		bt_err_errno(err, "mapping the sketch");
		return err;
	}
	/* byte and packet thresholds nominate at T/ncpu from the first packet */
	bt_heavy_set_nomination(&hm);
	bt_heavy_unmap(&hm);
	if ((err = bt_spie_map(inst, &sm))) {
		bt_err_errno(err, "mapping the SPIE windows");
		return err;
	}
	bt_spie_start(&sm);
	bt_spie_unmap(&sm);
	bt_sketch_describe(&inst->meta, desc, sizeof(desc));
	bt_debug("%s", desc);
	bt_spie_describe(&inst->meta, desc, sizeof(desc));
	bt_debug("%s", desc);
	return 0;
}

int bt_instance_create(const char *name, struct bt_instance_cfg *cfg,
		       struct bt_instance *inst)
{
	struct bloomtap_bpf *skel;
	struct bt_meta meta = { 0 };
	__u64 fc_mult;
	int err;

	if (bt_instance_name_check(name)) {
		bt_err("'%s' is not a usable instance name (letters, digits, '-', '_', "
		       "'.', '@'; at most %d)", name, BT_NAME_MAX);
		return -EINVAL;
	}
	if ((err = bt_kernel_require()) || (err = bt_ensure_bpffs()))
		return err;
	bt_kernel_note_optional();
	if (bt_instance_exists(name))
		return -EEXIST;
	bt_instance_remove(name);	/* leftovers of a create that died midway */
	if ((err = settle(cfg, &meta, &fc_mult)))
		return err;
	if (!(skel = bloomtap_bpf__open())) {
		err = -errno;
		bt_err_errno(err, "opening the BPF object");
		return err;
	}
	configure(skel, cfg, &meta, fc_mult);
	/* Phase 3: the verifier and the maps' memory */
	err = bloomtap_bpf__load(skel);
	if (err == -ENOMEM || err == -E2BIG)
		bt_err("cannot allocate the maps (%.1f MiB of SPIE windows, %.1f MiB of "
		       "heavy-flow sketches, received, %sdropped): %s; lower --windows, "
		       "--window-bits or --width", meta.window_bits / 8.0 * meta.windows / 1048576.0,
		       bt_heavy_stages(&meta) * bt_sketch_bytes(&meta) / 1048576.0,
		       meta.flags & BT_META_EGRESS_MAPS ? "sent and " : "", strerror(-err));
	else if (err)
		bt_err_errno(err, "loading the XDP program (verifier or map creation)");
	if (!err && (err = publish(skel, name, cfg, &meta)))
		bt_instance_remove(name);
	bloomtap_bpf__destroy(skel);
	if (err)
		return err;
	if ((err = bt_instance_open(name, inst)))
		goto out_remove;
	if ((err = start(inst))) {
		bt_instance_close(inst);
		goto out_remove;
	}
	return 0;
out_remove:
	bt_instance_remove(name);
	return err;
}

int bt_instance_verify(struct json_object *arr)
{
	/* every stage on: what the verifier walks at most */
	struct bt_instance_cfg cfg = { .flags = BT_META_EGRESS_MAPS,
				       .drop_ring = BT_DROP_RING_DEFAULT };
	struct bt_verifier_logs *logs;
	struct bloomtap_bpf *skel;
	struct bt_meta meta = { 0 };
	__u64 fc_mult;
	int err;

	if ((err = settle(&cfg, &meta, &fc_mult)))
		return err;
	if (!(skel = bloomtap_bpf__open())) {
		err = -errno;
		bt_err_errno(err, "opening the BPF object");
		return err;
	}
	configure(skel, &cfg, &meta, fc_mult);
	logs = bt_verifier_logs_attach(skel->obj);
	if ((err = bloomtap_bpf__load(skel)))
		bt_err_errno(err, "loading the XDP program (verifier or map creation)");
	bt_verifier_logs_read(logs, arr);
	bloomtap_bpf__destroy(skel);
	return err;
}

int bt_instance_open_or_create(const char *name, struct bt_instance_cfg *cfg,
			       struct bt_instance *inst, bool *created)
{
	int err = bt_instance_open(name, inst);

	if (created)
		*created = false;
	if (err == -ENOENT) {
		err = bt_instance_create(name, cfg, inst);
		if (created)
			*created = !err;
		return err;
	}
	return err ? bt_instance_open_or_explain(name, inst) : 0;
}

/* Appends ", NAME V (kept: K)" to buf for an option given other than kept */
static void differs(char *buf, size_t len, bool given, bool same, const char *name,
		    const char *want, const char *kept)
{
	size_t n = strlen(buf);

	if (given && !same && n < len)
		snprintf(buf + n, len - n, "%s%s%s%s (kept: %s)", n ? ", " : "", name,
			 name[0] ? " " : "", want, kept);
}

#define DIFFERS_U64(buf, len, given, name, want, kept)					\
	do {										\
		char w_[24], k_[24];							\
		snprintf(w_, sizeof(w_), "%llu", (unsigned long long)(want));		\
		snprintf(k_, sizeof(k_), "%llu", (unsigned long long)(kept));		\
		differs(buf, len, given, (want) == (kept), name, w_, k_);	\
	} while (0)

/* A heavy-flow threshold as the option that asks it */
static void threshold_str(int kind, __u64 v, char *buf, size_t len)
{
	if (kind == BT_THR_FRACTION)
		snprintf(buf, len, "--fraction %g", v / 1e9);
	else
		snprintf(buf, len, "--%s %llu", kind == BT_THR_BYTES ? "bytes" : "packets",
			 (unsigned long long)v);
}

bool bt_kept_sizes_differ(const struct bt_meta *m, const struct bt_sketch_cfg *sketch,
			  const struct bt_spie_cfg *spie, char *buf, size_t len)
{
	static const struct bt_sketch_cfg none_sk;
	static const struct bt_spie_cfg none_sp;
	const struct bt_sketch_cfg *c = sketch ? sketch : &none_sk;
	const struct bt_spie_cfg *p = spie ? spie : &none_sp;
	__u64 eps_width = 1, thr = m->threshold;
	int kind = m->threshold_kind;

	buf[0] = 0;

	if (c->epsilon > 0 || c->delta > 0)
		eps_width = bt_cm_width_for(c->epsilon, c->delta);
	if (c->fraction > 0 || c->bytes || c->packets) {
		kind = c->bytes ? BT_THR_BYTES : c->packets ? BT_THR_PACKETS : BT_THR_FRACTION;
		thr = c->bytes ? c->bytes : c->packets ? c->packets
			    : (__u64)llround(c->fraction * 1e9);
	}
	differs(buf, len, c->key_mode, c->key_mode == (int)m->key_mode, "--key",
		bt_key_mode_names[c->key_mode], bt_key_mode_names[m->key_mode]);
	DIFFERS_U64(buf, len, c->depth, "--depth", c->depth, m->depth);
	DIFFERS_U64(buf, len, c->width, "--width", c->width, m->width);
	DIFFERS_U64(buf, len, c->epsilon > 0 || c->delta > 0, "--epsilon/--delta: width", eps_width,
		    m->width);
	DIFFERS_U64(buf, len, c->fm_slots, "--flow-memory", c->fm_slots, m->fm_slots);
	if (kind != (int)m->threshold_kind || thr != m->threshold) {
		char w[48], k[48];

		threshold_str(kind, thr, w, sizeof(w));
		threshold_str(m->threshold_kind, m->threshold, k, sizeof(k));
		differs(buf, len, true, false, "", w, k);
	}
	DIFFERS_U64(buf, len, p->windows, "--windows", p->windows, m->windows);
	DIFFERS_U64(buf, len, p->window_bits, "--window-bits", p->window_bits, m->window_bits);
	DIFFERS_U64(buf, len, p->bits_per_packet > 0, "--bits-per-packet: design load",
		    (__u64)((p->window_bits ? p->window_bits : m->window_bits) /
			    (p->bits_per_packet > 0 ? p->bits_per_packet : 1)), m->design_load);
	DIFFERS_U64(buf, len, p->fpr > 0, "--fpr (ppb)", (__u64)llround(p->fpr * 1e9), m->fpr_target_ppb);
	DIFFERS_U64(buf, len, p->window_s > 0, "--window (ms)", (__u64)llround(p->window_s * 1000),
		    m->window_ms);
	return buf[0];
}

/* A pinned map with the key and value sizes of the object's map m. */
static bool same_sizes(int fd, const struct bpf_map *m)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       info.key_size == bpf_map__key_size(m) && info.value_size == bpf_map__value_size(m);
}

bool bt_instance_layout_matches(const struct bt_instance *inst)
{
	struct bloomtap_bpf *skel = bloomtap_bpf__open();
	bool ok = skel;

	if (skel) {
		size_heavy(skel, &inst->meta);
		size_recorder(skel, &inst->meta);
	}
#define SAME_SIZES(m) ok = ok && same_sizes(inst->m##_fd, skel->maps.m);
	BT_INSTANCE_MAPS(SAME_SIZES)
#undef SAME_SIZES
	bloomtap_bpf__destroy(skel);
	return ok;
}
