// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* See watch.h. Writers (load, set) take an flock on the pin root, so that
 * two of them never write one slot; readers take nothing: the datapath and
 * they read the slot bt_ctl.watch names (its low bit; the word counts the
 * loads), which a load changes with one store after everything behind it
 * is written, then waits an RCU grace period before it frees the slot it
 * left. A user-space reader can be slower than that: it reads the word
 * before and after it took the header and mapped the cells, and takes
 * them again if a load came between (a seqlock's read side). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/common.h"
#include "core/digest.h"
#include "base/util.h"
#include "watch.h"
#include "core/addr.h"

static int watch_lock(void)
{
	int fd = open(BT_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct bt_ctl *map_ctl(const struct bt_instance *inst, size_t *len)
{
	return bt_mmap_array(inst->ctl_fd, sizeof(struct bt_ctl), len);
}

/* Where a chunk of a slot's table is pinned: readers open it by its pin,
 * which CAP_BPF allows, and not by its id, which takes CAP_SYS_ADMIN (the
 * agent runs without it). */
static int chunk_pin(const struct bt_instance *inst, __u32 slot, __u32 chunk, char *buf,
		     size_t len)
{
	char obj[32];

	snprintf(obj, sizeof(obj), "watch_cells_%u_%u", slot, chunk);
	return bt_instance_path(inst->name, obj, buf, len);
}

/* Chunk c of slot's table, as a new fd; -errno when the slot has none. */
static int chunk_fd(const struct bt_instance *inst, __u32 slot, __u32 c)
{
	__u32 x = BT_WATCH_CHUNK_KEY(slot, c), id;
	char path[512];
	int fd;

	if (bpf_map_lookup_elem(inst->watch_cells_fd, &x, &id))
		return -errno;
	if (!chunk_pin(inst, slot, c, path, sizeof(path)) && (fd = bpf_obj_get(path)) >= 0) {
		struct bpf_map_info info = { 0 };
		__u32 ilen = sizeof(info);

		if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) && info.id == id)
			return fd;
		close(fd);	/* a pin being replaced: the id decides */
	}
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

/* The chunks a table's array takes. */
static __u32 table_chunks(const struct bt_watch_hdr *h)
{
	size_t groups = bt_watch_cells_bytes(h) / sizeof(struct bt_watch_group);

	return groups ? (groups + BT_WATCH_CHUNK - 1) / BT_WATCH_CHUNK : 1;
}

#define CHUNK_BYTES ((size_t)BT_WATCH_CHUNK * sizeof(struct bt_watch_group))

/* The header and array of the slot that generation gen names, its chunks
 * mapped side by side (read-only unless the table is opened to write:
 * watch set). */
static int take_slot(const struct bt_instance *inst, __u32 gen, bool writable,
		     struct bt_watch_table *t)
{
	int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ, err = 0;
	__u32 n;
	void *p;

	t->slot = gen & 1;
	bt_test_pause("watch-read");
	if (bpf_map_lookup_elem(inst->watch_hdr_fd, &t->slot, &t->hdr))
		return -errno;
	if (!t->hdr.entries)
		return 0;
	n = table_chunks(&t->hdr);
	if (n > BT_WATCH_CHUNKS)
		return -E2BIG;
	/* one range of addresses, each chunk mapped over its part */
	p = mmap(NULL, n * CHUNK_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	t->cells = p;
	t->len = n * CHUNK_BYTES;
	for (__u32 c = 0; c < n && !err; c++) {
		int fd = chunk_fd(inst, t->slot, c);

		if (fd < 0)
			return fd;
		if (mmap((uint8_t *)p + c * CHUNK_BYTES, CHUNK_BYTES, prot, MAP_SHARED | MAP_FIXED,
			 fd, 0) == MAP_FAILED)
			err = -errno;
		close(fd);
	}
	return err;
}

static void unmap_slot(struct bt_watch_table *t)
{
	if (t->cells)
		munmap(t->cells, t->len);
	t->cells = NULL;
}

int bt_watch_table_open(const struct bt_instance *inst, bool writable, struct bt_watch_table *t)
{
	struct bt_ctl *ctl;
	size_t len;
	int err = -EAGAIN;

	memset(t, 0, sizeof(*t));
	t->lock_fd = -1;
	if (writable && (t->lock_fd = watch_lock()) < 0)
		return -errno;
	if (!(ctl = map_ctl(inst, &len))) {
		err = -errno;
		goto fail;
	}
	bt_hash_keys_derive(&inst->meta.hash_key, &t->keys);
	/* a load takes a tenth of a second a million keys: a reader meets a
	 * few at most, each a retry */
	for (int tries = 0; tries < 1000 && err == -EAGAIN; tries++) {
		__u32 gen = __atomic_load_n(&ctl->watch, __ATOMIC_ACQUIRE);

		err = take_slot(inst, gen, writable, t);
		if (__atomic_load_n(&ctl->watch, __ATOMIC_ACQUIRE) != gen) {
			unmap_slot(t);
			err = -EAGAIN;	/* a load came between: its slot may be gone */
		}
	}
	munmap(ctl, len);
	if (!err)
		return 0;
fail:
	bt_watch_table_close(t);
	return err;
}

void bt_watch_table_close(struct bt_watch_table *t)
{
	unmap_slot(t);
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	t->lock_fd = -1;
}

__u32 bt_watch_table_classify(const struct bt_watch_table *t, const uint8_t addr[16], bool v4,
			      struct bt_watch_how *how)
{
	struct bt_watch_view v = bt_watch_table_view(t);

	if (how)
		memset(how, 0, sizeof(*how));
	if (!t->hdr.entries || !t->cells)
		return 0;
	return bt_watch_classify(&t->keys, &v, addr, v4, how);
}

int bt_watch_classes(const struct bt_instance *inst,
		     struct bt_watch_class names[BT_WATCH_CLASSES])
{
	for (__u32 id = 0; id < BT_WATCH_CLASSES; id++)
		if (bpf_map_lookup_elem(inst->watch_classes_fd, &id, &names[id]))
			return -errno;
	return 0;
}

int bt_percpu_counts(int fd, __u32 first, __u32 n, struct bt_watch_count *counts)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bt_watch_count *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));

	if (!v || ncpu <= 0) {
		free(v);
		return -ENOMEM;
	}
	memset(counts, 0, n * sizeof(*counts));
	for (__u32 id = 0; id < n; id++) {
		__u32 key = first + id;

		if (bpf_map_lookup_elem(fd, &key, v)) {
			free(v);
			return -errno;
		}
		for (int c = 0; c < ncpu; c++)
			for (int d = 0; d < 2; d++) {
				counts[id].packets[d] += v[c].packets[d];
				counts[id].bytes[d] += v[c].bytes[d];
			}
	}
	free(v);
	return 0;
}

int bt_watch_counts(const struct bt_instance *inst, int dir,
		    struct bt_watch_count counts[BT_WATCH_CLASSES])
{
	return bt_percpu_counts(inst->watch_counts_fd, dir * BT_WATCH_CLASSES, BT_WATCH_CLASSES,
				counts);
}

/* Gives a free id (nobody's name, so no table in use yields it) to name,
 * its counts cleared first; 0 when all are taken. */
static __u32 new_id(const struct bt_instance *inst, struct bt_watch_class names[],
		    const char *name)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bt_watch_count *zero = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zero));

	for (__u32 id = 1; zero && id < BT_WATCH_CLASSES; id++) {
		__u32 sent = BT_DIR_EGRESS * BT_WATCH_CLASSES + id;

		if (names[id].name[0])
			continue;
		if (bpf_map_update_elem(inst->watch_counts_fd, &id, zero, 0) ||
		    bpf_map_update_elem(inst->watch_counts_fd, &sent, zero, 0))
			break;
		memset(&names[id], 0, sizeof(names[id]));
		snprintf(names[id].name, sizeof(names[id].name), "%s", name);
		free(zero);
		return id;
	}
	free(zero);
	return 0;
}

static __u32 find_id(const struct bt_watch_class names[], const char *name)
{
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++)
		if (!strcmp(names[id].name, name))
			return id;
	return 0;
}

static int write_classes(const struct bt_instance *inst, const struct bt_watch_class names[])
{
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++)
		if (bpf_map_update_elem(inst->watch_classes_fd, &id, &names[id], 0))
			return -errno;
	return 0;
}

/* Chunk c of the built table (b->cells), a new map filled through mmap;
 * its fd. */
static int make_chunk(const struct bt_bloomier *b, __u32 c)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	size_t bytes = bt_watch_cells_bytes(&b->hdr), from = c * CHUNK_BYTES, len;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "watch_table", sizeof(__u32),
				sizeof(struct bt_watch_group), BT_WATCH_CHUNK, &o);
	uint8_t *p;

	if (fd < 0)
		return -errno;
	if (!(p = bt_mmap_array(fd, CHUNK_BYTES, &len))) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (from < bytes)
		memcpy(p, b->cells + from, bytes - from < CHUNK_BYTES ? bytes - from : CHUNK_BYTES);
	munmap(p, len);
	return fd;
}

/* Chunks put into the datapath's map at once: one grace period for them
 * all, where an update of an array of maps waits for one each (8 ms here:
 * 0.6 s for the 18 MiB country-shaped list's 72). Their fds stay open
 * until then. */
#define CHUNK_BATCH 64

/* Chunks c0..c0+n-1 of the built table b into slot: made, pinned in order,
 * then put into the map in one batch (or one at a time, in order, on a
 * kernel whose array of maps has no batch update). */
static int add_chunks(const struct bt_instance *inst, const struct bt_bloomier *b, __u32 slot,
		      __u32 c0, __u32 n)
{
	__u32 keys[CHUNK_BATCH], done = 0, count = n;
	int fds[CHUNK_BATCH], err = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	for (; done < n && !err; done++) {
		char pin[512];

		keys[done] = BT_WATCH_CHUNK_KEY(slot, c0 + done);
		if ((fds[done] = make_chunk(b, c0 + done)) < 0) {
			err = fds[done];
			break;
		}
		if (chunk_pin(inst, slot, c0 + done, pin, sizeof(pin)))
			err = -ENAMETOOLONG;
		else if (bpf_obj_pin(fds[done], pin))
			err = -errno;
	}
	if (!err && bpf_map_update_batch(inst->watch_cells_fd, keys, fds, &count, &o)) {
		/* 524: the kernel's ENOTSUPP, an op the map type lacks */
		err = errno == EINVAL || errno == 524 || errno == EOPNOTSUPP ? 0 : -errno;
		for (__u32 i = 0; !err && i < n; i++)
			if (bpf_map_update_elem(inst->watch_cells_fd, &keys[i], &fds[i], 0))
				err = -errno;
	}
	for (__u32 i = 0; i < done; i++)
		close(fds[i]);
	return err;
}

/* Is chunk c of slot there: in the datapath's map, or pinned? */
static bool chunk_there(const struct bt_instance *inst, __u32 slot, __u32 c)
{
	__u32 x = BT_WATCH_CHUNK_KEY(slot, c), id;
	char pin[512];

	return !bpf_map_lookup_elem(inst->watch_cells_fd, &x, &id) ||
	       (!chunk_pin(inst, slot, c, pin, sizeof(pin)) && !access(pin, F_OK));
}

/* Slot's chunks out of the datapath's map and their pins removed. Chunks
 * go in from the first and out from the last, so that a load that died
 * leaves a run from chunk 0: the scan stops at the first one missing.
 * Each delete from an array of maps waits for an RCU grace period. */
static void drop_chunks(const struct bt_instance *inst, __u32 slot)
{
	__u32 n = 0;
	char pin[512];

	while (n < BT_WATCH_CHUNKS && chunk_there(inst, slot, n))
		n++;
	while (n--) {
		__u32 x = BT_WATCH_CHUNK_KEY(slot, n);

		bpf_map_delete_elem(inst->watch_cells_fd, &x);
		if (!chunk_pin(inst, slot, n, pin, sizeof(pin)))
			unlink(pin);
	}
}

/* An address's most reads, each family: IPv4's index entries and line (or, with
 * BT_WATCH_F_FLAT, as IPv6), IPv6's probes: the search's, and the final
 * probe of a best match that a marker names, if the family has one. */
static void probes_of(const struct bt_watch_built *w, uint32_t probes[2])
{
	/* IPv6's tree: a node a level and the leaf */
	probes[1] = w->b.hdr.flags & BT_WATCH_F_V6_TREE ? w->b.hdr.v6_levels + 1u :
							  (uint32_t)(w->b.hdr.depth[1] + (w->markers[1] > 0));
	probes[0] = w->b.hdr.flags & BT_WATCH_F_FLAT ?
			    (uint32_t)(w->b.hdr.depth[0] + (w->markers[0] > 0)) : w->levels;
}

/* The list's classes as ids: a name the table in use has keeps its id;
 * a new one takes a free id. */
static int map_classes(const struct bt_instance *inst, const struct bt_watch_list *l,
		       struct bt_watch_class names[], __u32 ids[])
{
	for (__u32 c = 1; c <= l->nclasses; c++) {
		ids[c] = find_id(names, l->names[c]);
		if (!ids[c] && !(ids[c] = new_id(inst, names, l->names[c]))) {
			bt_err("no class id left for '%s': the table in use and the new one "
			       "have more than %d classes between them (load a list without "
			       "some, or 'watch clear' first)", l->names[c], BT_WATCH_CLASSES - 1);
			return -ENOSPC;
		}
	}
	return 0;
}

int bt_watch_load(const struct bt_instance *inst, const struct bt_watch_list *l,
		  unsigned check_bits, struct bt_watch_loaded *info)
{
	return bt_watch_load_flags(inst, l, check_bits, 0, info);
}

/* The slot not in use made the built table's: its array (in chunks, maps
 * of their own, pinned), its header, and the classes' names. 0, or
 * -errno after saying why. Nothing reads it until the switch. */
static int fill_slot(const struct bt_instance *inst, __u32 slot, const struct bt_watch_built *b,
		     const struct bt_watch_class *names)
{
	__u32 n = table_chunks(&b->b.hdr);
	int err = 0;

	drop_chunks(inst, slot);	/* a load that died before it freed its slot */
	if (n > BT_WATCH_CHUNKS) {
		bt_err("the watch table takes %u chunks of %zu KiB, more than the %u a slot has: "
		       "load a shorter list", n, CHUNK_BYTES / 1024, BT_WATCH_CHUNKS);
		return -E2BIG;
	}
	for (__u32 c0 = 0; c0 < n && !err; c0 += CHUNK_BATCH)
		err = add_chunks(inst, &b->b, slot, c0, n - c0 < CHUNK_BATCH ? n - c0 : CHUNK_BATCH);
	if (err) {
		bt_err("making the watch table's maps (%u cells, %u chunks): %s", b->b.hdr.cells, n,
		       strerror(-err));
		drop_chunks(inst, slot);
		return err;
	}
	if (bpf_map_update_elem(inst->watch_hdr_fd, &slot, &b->b.hdr, 0) ||
	    (err = write_classes(inst, names))) {
		err = err ? err : -errno;
		bt_err_errno(err, "writing the watch table");
		return err;
	}
	return 0;
}

/* A slot nobody reads any more (after the switch and a grace period)
 * emptied: its header, its cells' map and pin. */
static void free_slot(const struct bt_instance *inst, __u32 slot)
{
	struct bt_watch_hdr empty = { 0 };

	bpf_map_update_elem(inst->watch_hdr_fd, &slot, &empty, 0);
	drop_chunks(inst, slot);
}

int bt_watch_load_flags(const struct bt_instance *inst, const struct bt_watch_list *l,
			unsigned check_bits, unsigned flags, struct bt_watch_loaded *info)
{
	struct bt_watch_class names[BT_WATCH_CLASSES], before[BT_WATCH_CLASSES];
	struct bt_watch_key *keys = NULL;
	struct bt_hash_keys hk;
	struct bt_watch_built b = { 0 };
	struct bt_ctl *ctl = NULL;
	__u32 ids[BT_WATCH_CLASSES] = { 0 }, gen, cur, next;
	bool kept[BT_WATCH_CLASSES] = { 0 };
	size_t ctl_len;
	double t0;
	int lock = watch_lock(), err;

	memset(info, 0, sizeof(*info));
	if (lock < 0 || !(ctl = map_ctl(inst, &ctl_len)) || (err = bt_watch_classes(inst, names))) {
		err = -errno;
		bt_err_errno(err, "opening the instance's watch list");
		goto out;
	}
	memcpy(before, names, sizeof(names));
	gen = __atomic_load_n(&ctl->watch, __ATOMIC_ACQUIRE);
	cur = gen & 1;
	next = !cur;
	if ((err = map_classes(inst, l, names, ids)))
		goto out;
	keys = malloc((l->n ? l->n : 1) * sizeof(*keys));
	if (!keys) {
		err = -ENOMEM;
		bt_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < l->n; i++) {
		keys[i] = l->e[i].key;
		keys[i].class_id = ids[l->e[i].key.class_id];
	}
	bt_hash_keys_derive(&inst->meta.hash_key, &hk);
	t0 = bt_mono_s();
	err = bt_watch_build(&hk, keys, l->n, check_bits, (uint64_t)time(NULL), flags, &b);
	info->build_s = bt_mono_s() - t0;
	if (err) {
		bt_err_errno(err, "building the watch table");
		goto out;
	}
	for (__u32 c = 1; c <= l->nclasses; c++) {
		names[ids[c]].entries = l->entries[c];
		kept[ids[c]] = true;
	}
	if ((err = fill_slot(inst, next, &b, names)))
		goto out;
	__atomic_store_n(&ctl->watch, gen + 1, __ATOMIC_RELEASE);	/* slot next */
	bt_grace_period();
	/* nobody reads the slot left behind: free it; classes the new list
	 * does not name lose their id */
	free_slot(inst, cur);
	for (__u32 id = 1; id < BT_WATCH_CLASSES; id++)
		if (before[id].name[0] && !kept[id])
			memset(&names[id], 0, sizeof(names[id]));
	write_classes(inst, names);
	info->keys = l->n;
	info->classes = l->nclasses;
	info->markers = b.b.hdr.markers;
	info->retries = b.b.retries;
	info->duplicates = l->duplicates;
	info->masked = l->masked;
	info->bits_per_key = bt_watch_bits_per_entry(&b.b.hdr);
	probes_of(&b, info->probes);
	info->ranges = b.ranges;
	info->lines = b.lines + b.index;
	info->v6_tree = b.b.hdr.flags & BT_WATCH_F_V6_TREE;
	info->v6_ranges = b.b.hdr.v6_ranges;
out:
	bt_watch_built_free(&b);
	free(keys);
	if (ctl)
		munmap(ctl, ctl_len);
	if (lock >= 0)
		close(lock);
	return err;
}

int bt_watch_list_read_or_explain(const char *path, struct bt_watch_list *l)
{
	char err[BT_WATCH_ERR_LEN];
	int rc = bt_watch_list_read(path, l, err, sizeof(err));

	if (rc)
		bt_err("%s", err);
	return rc;
}

int bt_watch_load_file(const struct bt_instance *inst, const char *path, unsigned check_bits,
		       unsigned flags, struct bt_watch_loaded *info)
{
	struct bt_watch_list l;
	int rc = bt_watch_list_read_or_explain(path, &l);

	if (rc)
		return rc;
	rc = bt_watch_load_flags(inst, &l, check_bits, flags, info);
	bt_watch_list_free(&l);
	return rc;
}

void bt_watch_names_open(const struct bt_instance *inst, struct bt_watch_names *w)
{
	memset(w, 0, sizeof(*w));
	w->on = !bt_watch_table_open(inst, false, &w->t) && w->t.hdr.entries &&
		!bt_watch_classes(inst, w->names);
}

void bt_watch_names_close(struct bt_watch_names *w)
{
	bt_watch_table_close(&w->t);
	w->on = false;
}

const char *bt_watch_name_of(const struct bt_watch_names *w, const uint8_t addr[16])
{
	static const uint8_t zero[16];
	__u32 id;

	if (!w->on || !memcmp(addr, zero, 16))
		return NULL;
	id = bt_watch_table_classify(&w->t, addr, bt_addr_is_v4(addr), NULL);
	return id && w->names[id].name[0] ? w->names[id].name : NULL;
}

int bt_watch_load_named(const char *name, const struct bt_watch_list *l)
{
	struct bt_watch_loaded w;
	struct bt_instance inst;
	int err = bt_instance_open_or_explain(name, &inst);

	if (err)
		return err;
	err = bt_watch_load(&inst, l, BT_WATCH_CHECK_BITS, &w);
	if (!err)
		bt_info("%s: watch list of %zu keys in %u classes loaded", name, w.keys,
			w.classes);
	bt_instance_close(&inst);
	return err;
}

int bt_watch_set(const struct bt_instance *inst, const char *prefix, const char *name)
{
	struct bt_watch_class names[BT_WATCH_CLASSES];
	struct bt_watch_table t;
	struct bt_watch_key k;
	uint8_t addr[16];
	char msg[160];
	bool v4, host, ranges, tree;
	__u32 own, old, id;
	__u64 *dir;
	int err;

	if (bt_watch_parse_prefix(prefix, addr, &k.len, &v4, &host, msg, sizeof(msg))) {
		bt_err("%s", msg);
		return -EINVAL;
	}
	if (!bt_watch_class_name_ok(name)) {
		bt_err("class '%s': 1 to %d characters of A-Z a-z 0-9 _ . -", name,
		       BT_WATCH_CLASS_LEN);
		return -EINVAL;
	}
	bt_watch_words(addr, &k.hi, &k.lo);
	/* the family of its form: ::ffff:10.0.0.0/104 is 10.0.0.0/8, as in a list */
	v4 = bt_watch_key_is_v4(&k);
	if ((err = bt_watch_table_open(inst, true, &t)) || (err = bt_watch_classes(inst, names))) {
		bt_err_errno(err, "opening the instance's watch list");
		bt_watch_table_close(&t);
		return err;
	}
	/* membership decided on all the check bits (a table loaded with fewer
	 * let an unlisted key through and overwrite a listed key's cell) */
	ranges = v4 && !(t.hdr.flags & BT_WATCH_F_FLAT);
	tree = !v4 && (t.hdr.flags & BT_WATCH_F_V6_TREE);
	dir = bt_watch_dir_of(&t.hdr, t.cells);
	bt_watch_mask(&k.hi, &k.lo, k.len);
	old = 0;
	if (ranges && dir)
		bt_watch_v4_set(&t.hdr, dir, t.cells, (__u32)k.lo, k.len - BT_WATCH_V4, -1, &old);
	else if (tree)
		bt_watch_v6_set(&t.hdr, t.cells, k.hi, k.len, -1, &old);
	else if (t.hdr.keys > t.hdr.markers)
		old = bt_bloomier_member(&t.keys, &t.hdr, t.cells, k.hi, k.lo, k.len, &own);
	if (!old) {
		bt_err("%s is not a key of the watch list in use%s: 'watch set' changes the class "
		       "of a listed key in place; to add keys, 'watch load' a new list", prefix,
		       ranges || tree ? " (or longer keys cover all its addresses)" : "");
		err = -ENOENT;
	} else if (!(id = find_id(names, name)) && !(id = new_id(inst, names, name))) {
		bt_err("no class id left for '%s' (%d classes at most)", name,
		       BT_WATCH_CLASSES - 1);
		err = -ENOSPC;
	} else {
		if (names[old].entries)
			names[old].entries--;
		names[id].entries++;
		err = write_classes(inst, names);
		/* the ranges it answers; or the class byte (the first:
		 * little-endian) of the key's own cell, and nobody else's */
		if (!err && ranges)
			bt_watch_v4_set(&t.hdr, dir, t.cells, (__u32)k.lo, k.len - BT_WATCH_V4, id,
					&old);
		else if (!err && tree)
			bt_watch_v6_set(&t.hdr, t.cells, k.hi, k.len, id, &old);
		else if (!err)
			__atomic_store_n(&t.cells[bt_watch_cell_offset(own)], (uint8_t)id,
					 __ATOMIC_RELEASE);
		else
			bt_err_errno(err, "writing the classes");
	}
	bt_watch_table_close(&t);
	return err;
}
