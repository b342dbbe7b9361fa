// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The drop recorder's reader. See recorder.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/pcapng.h"
#include "drops.h"
#include "instance.h"
#include "recorder.h"
#include "wltable.h"
#include "core/workloads.h"
#include "base/timeparse.h"

uint64_t bt_recorder_bytes_per_cpu(const struct bt_meta *meta)
{
	return (uint64_t)meta->drop_ring * BT_DROP_REC_SIZE(meta->drop_head);
}

static int read_pos(const struct bt_instance *inst, __u32 key, struct bt_drop_rec_pos **out,
		    int *ncpu)
{
	*ncpu = libbpf_num_possible_cpus();
	if (*ncpu <= 0 || !(*out = calloc(*ncpu, sizeof(**out))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(inst->drop_rec_pos_fd, &key, *out)) {
		int err = -errno;

		free(*out);
		*out = NULL;
		return err;
	}
	return 0;
}

int bt_recorder_counts(const struct bt_instance *inst, struct bt_drop_rec_pos *sum)
{
	struct bt_drop_rec_pos *v;
	int ncpu, err;

	memset(sum, 0, sizeof(*sum));
	if ((err = read_pos(inst, BT_REC_POS_KERNEL, &v, &ncpu)))
		return err;
	for (int c = 0; c < ncpu; c++) {
		sum->written += v[c].written;
		sum->overwritten += v[c].overwritten;
		sum->follow_sent += v[c].follow_sent;
		sum->follow_lost += v[c].follow_lost;
	}
	free(v);
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct bt_drop_rec *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* What the walk knows of CPU c's record in slot i (walk.st) */
enum { ST_UNREAD, ST_BAD, ST_UNWANTED, ST_WANTED, ST_OLD };

struct walk {
	const struct bt_instance *inst;
	const struct bt_rec_filter *f;
	int64_t offset;
	struct bt_rec_set *s;
	struct bt_drop_rec_pos *pos;
	uint8_t *st;		/* slots x ncpu: ST_ */
	uint8_t *v[3];		/* before, the copy, after: a slot of every CPU */
};

static int add_rec(struct bt_rec_set *s, const void *r)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		uint8_t *p = realloc(s->recs, (size_t)cap * s->rec_size);

		if (!p)
			return -ENOMEM;
		s->recs = p;
		s->cap = cap;
	}
	memcpy(BT_REC(s, s->n++), r, s->rec_size);
	return 0;
}

static __u64 seq_of(const struct walk *w, int k, int c)
{
	return ((const struct bt_drop_rec *)(w->v[k] + (size_t)c * w->s->rec_size))->seq;
}

/* Slot i of every CPU, looked up three times: a CPU's record is taken
 * from the second copy only if its seq is the number its position holds
 * in all three (a seqlock's check before and after the copy: the drop
 * program zeroes seq before it writes a record and sets it after). A
 * slot rewritten in between is left out (skipped). */
static int read_slot(struct walk *w, __u32 i)
{
	const struct bt_meta *m = &w->inst->meta;
	struct bt_rec_set *s = w->s;

	for (int k = 0; k < 3; k++)
		if (bpf_map_lookup_elem(w->inst->drop_rec_fd, &i, w->v[k]))
			return -errno;
	s->slots_read++;
	for (int c = 0; c < s->ncpu; c++) {
		const struct bt_drop_rec *r = (void *)(w->v[1] + (size_t)c * s->rec_size);
		__u64 want = BT_REC_SEQ_AT(w->pos[c].written, m->drop_ring, i);
		uint8_t *st = &w->st[(size_t)i * s->ncpu + c];
		int err;

		if (!want || seq_of(w, 0, c) != want || r->seq != want || seq_of(w, 2, c) != want ||
		    r->cap_len > m->drop_head) {
			*st = ST_BAD;
			s->skipped += want != 0;
			continue;
		}
		if (w->f->since_ns && (int64_t)r->ts_ns + w->offset < (int64_t)w->f->since_ns)
			*st = ST_OLD;
		else
			*st = bt_rec_wanted(w->f, r, w->offset) ? ST_WANTED : ST_UNWANTED;
		if ((err = add_rec(s, r)))
			return err;
	}
	return 0;
}

/* Each CPU's records newest first, until it has given f->n that f wants
 * (a CPU's are in time order, so one before f->since_ns ends it too): the
 * newest f->n of all are among those. A slot is looked up once for every
 * CPU, so the slots read are at most f->n x CPUs when f keeps every
 * reason, the ring's when it keeps one that is rare. */
int bt_recorder_read(const struct bt_instance *inst, const struct bt_rec_filter *f,
		     int64_t offset, struct bt_rec_set *s)
{
	const struct bt_meta *m = &inst->meta;
	struct walk w = { .inst = inst, .f = f, .offset = offset, .s = s };
	__u32 *have = NULL;
	bool *done = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	if (!m->drop_ring)
		return -ENODATA;
	s->rec_size = BT_DROP_REC_SIZE(m->drop_head);
	if ((err = read_pos(inst, BT_REC_POS_KERNEL, &w.pos, &s->ncpu)))
		return err;
	w.st = calloc((size_t)m->drop_ring, s->ncpu);
	have = calloc(s->ncpu, sizeof(*have));
	done = calloc(s->ncpu, sizeof(*done));
	for (int k = 0; k < 3; k++)
		w.v[k] = calloc(s->ncpu, s->rec_size);
	if (!w.st || !have || !done || !w.v[0] || !w.v[1] || !w.v[2]) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 age = 0; age < m->drop_ring && !err; age++) {
		bool more = false;

		for (int c = 0; c < s->ncpu && !err; c++) {
			__u64 wr = w.pos[c].written;
			size_t at;

			if (done[c] || wr <= age) {
				done[c] = true;
				continue;
			}
			at = (size_t)((wr - 1 - age) % m->drop_ring) * s->ncpu + c;
			if (w.st[at] == ST_UNREAD &&
			    (err = read_slot(&w, (wr - 1 - age) % m->drop_ring)))
				break;
			if (w.st[at] == ST_OLD || (w.st[at] == ST_WANTED && f->n && ++have[c] >= f->n))
				done[c] = true;
			more |= !done[c];
		}
		if (!more)
			break;
	}
	if (!err && s->n > 1)	/* qsort's base may not be NULL, even for none */
		qsort(s->recs, s->n, s->rec_size, cmp_rec);
out:
	free(w.pos);
	free(w.st);
	free(have);
	free(done);
	for (int k = 0; k < 3; k++)
		free(w.v[k]);
	if (err)
		bt_recorder_free(s);
	return err;
}

void bt_recorder_free(struct bt_rec_set *s)
{
	free(s->recs);
	memset(s, 0, sizeof(*s));
}

int64_t bt_recorder_clock_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

/* This process's network namespace's inode (0: unknown), read once: a
 * record's device in it is the instance's own when the index is. */
static __u32 own_netns(void)
{
	static __u32 ino;

	if (!ino)
		ino = bt_netns_self();
	return ino;
}

/* A workload's name for a packet's comment and its custom option:
 * bt_wl_escape's, with ';' (the option's separator) written \x3b too. */
static const char *rec_wl_name(const char *name, char *buf, size_t len)
{
	char e[4 * BT_WL_NAME_LEN + 1];	/* 4 bytes a byte at most */
	size_t o = 0;

	bt_wl_escape(name, e, sizeof(e));
	for (const char *c = e; *c && o + 5 < len; c++) {
		if (*c == ';')
			o += snprintf(buf + o, len - o, "\\x3b");
		else
			buf[o++] = *c;
	}
	buf[o] = 0;
	return buf;
}

int bt_recorder_pcap(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_drop_rec *r, int64_t offset, const struct bt_wl_names *wl)
{
	char name[64], buf[96], comment[2048], custom[2048], wls[2][4 * BT_WL_NAME_LEN + 1];
	const char *reason, *wn[2];
	const char *dir = r->dir == BT_DROP_DIR_IN ? "in" : "out";
	int id;

	/* a device by its namespace and index: a workload's lies in another
	 * namespace, where the same index names another device */
	if (r->ifindex && r->ifindex == inst->meta.ifindex && inst->meta.ifname[0] &&
	    (!r->netns || r->netns == own_netns()))
		snprintf(name, sizeof(name), "%s", inst->meta.ifname);
	else if (r->netns && r->netns != own_netns())
		snprintf(name, sizeof(name), "ifindex %u in netns %u", r->ifindex, r->netns);
	else
		snprintf(name, sizeof(name), "ifindex %u", r->ifindex);
	id = bt_pcapng_iface(w, (uint64_t)r->netns << 32 | r->ifindex,
			     r->l2 ? BT_PCAPNG_LINKTYPE_ETHERNET : BT_PCAPNG_LINKTYPE_RAW, name,
			     inst->meta.drop_head);
	if (id < 0)
		return id;
	reason = bt_drop_reason_name(r->reason, buf, sizeof(buf));
	for (int side = 0; side < 2; side++) {
		wn[side] = wl ? bt_wl_name_of(wl, r->wl[side]) : NULL;
		if (wn[side])
			wn[side] = rec_wl_name(wn[side], wls[side], sizeof(wls[side]));
	}
	snprintf(comment, sizeof(comment),
		 "dropped: %s, instance %s, on %s (%s), came in by ifindex %u, %u of %u bytes "
		 "kept%s%s%s%s%s", reason, inst->name, name, dir, r->iif, r->cap_len, r->frame_len,
		 r->segs > 1 ? ", a GRO'd skb" : "", wn[0] || wn[1] ? ", workloads " : "",
		 wn[0] || wn[1] ? (wn[0] ? wn[0] : "-") : "", wn[0] || wn[1] ? " > " : "",
		 wn[0] || wn[1] ? (wn[1] ? wn[1] : "-") : "");
	snprintf(custom, sizeof(custom),
		 "bloomtap.reason=%s;instance=%s;code=%u;segs=%u%s%s%s%s", reason, inst->name,
		 r->reason, r->segs, wn[0] ? ";src_workload=" : "", wn[0] ? wn[0] : "",
		 wn[1] ? ";dst_workload=" : "", wn[1] ? wn[1] : "");
	return bt_pcapng_packet(w, id, r->ts_ns + offset, r->data, r->cap_len,
				r->frame_len > r->cap_len ? r->frame_len : r->cap_len,
				r->dir == BT_DROP_DIR_IN ? 1 : 2, comment, custom);
}

int bt_rec_filter_parse(struct bt_rec_filter *f, const char *reason, const char *since, __u32 n,
			char *err, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	if (reason) {
		if (bt_drop_reason_code(reason, &f->code)) {
			snprintf(err, len, "this kernel has no drop reason %.64s (drops --reasons)",
				 reason);
			return -EINVAL;
		}
		f->by_reason = true;
	}
	if (since && bt_parse_time_range(since, NULL, "", &f->since_ns, NULL, err, len))
		return -EINVAL;
	return 0;
}

bool bt_rec_wanted(const struct bt_rec_filter *f, const struct bt_drop_rec *r, int64_t offset)
{
	return (!f->by_reason || r->reason == f->code) &&
	       (!f->since_ns || (int64_t)r->ts_ns + offset >= (int64_t)f->since_ns);
}

int bt_recorder_dump(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_rec_filter *f, struct bt_rec_dump *d)
{
	int64_t offset = bt_recorder_clock_offset();
	struct bt_rec_dump dd = { 0 };
	struct bt_pcapng dry;
	struct bt_wl_names wl;
	struct bt_rec_set s;
	int err, first;

	if ((err = bt_recorder_read(inst, f, offset, &s)))
		return err;
	dd.slots_read = s.slots_read;
	dd.skipped = s.skipped;
	/* the newest that pass, back to the N-th or to the byte cap: each
	 * given to a writer that counts its bytes and writes nothing, the
	 * interface blocks they need with them (the same blocks whatever
	 * their order) */
	bt_wl_names_open(inst, &wl);
	bt_pcapng_start(&dry, -1);
	dry.bytes = w->bytes;
	first = s.n;
	for (int i = s.n - 1, pass = 0; i >= 0 && (!f->n || pass < (int)f->n); i--) {
		if (!bt_rec_wanted(f, BT_REC(&s, i), offset))
			continue;
		if ((err = bt_recorder_pcap(inst, &dry, BT_REC(&s, i), offset, &wl)))
			break;
		if (f->max_bytes && dry.bytes > f->max_bytes) {
			dd.cut = true;
			break;
		}
		first = i;
		pass++;
	}
	bt_pcapng_free(&dry);
	for (int i = first; i < s.n && !err; i++)
		if (bt_rec_wanted(f, BT_REC(&s, i), offset) &&
		    !(err = bt_recorder_pcap(inst, w, BT_REC(&s, i), offset, &wl)))
			dd.written++;
	bt_wl_names_close(&wl);
	bt_recorder_free(&s);
	if (d)
		*d = dd;
	return err ? err : (int)dd.written;
}

/* ---- the follower's flag ---- */

int bt_recorder_follower(const struct bt_instance *inst, __u32 *pid)
{
	__u32 zero = 0, none = 0;

	*pid = 0;
	if (bpf_map_lookup_elem(inst->drop_follow_fd, &zero, pid))
		return -errno;
	/* its process is gone (SIGKILL): nobody reads the ring buffer, so
	 * the drop program stops copying into it */
	if (*pid && kill((pid_t)*pid, 0) && errno == ESRCH) {
		*pid = 0;
		if (bpf_map_update_elem(inst->drop_follow_fd, &zero, &none, 0))
			return -errno;
	}
	return 0;
}

int bt_recorder_follow_set(const struct bt_instance *inst, bool on)
{
	__u32 zero = 0, me = (__u32)getpid(), v = on ? me : 0, cur = 0;

	/* off: only its own flag, not that of a follower that took over */
	if (!on && (bpf_map_lookup_elem(inst->drop_follow_fd, &zero, &cur) || cur != me))
		return 0;
	return bpf_map_update_elem(inst->drop_follow_fd, &zero, &v, 0) ? -errno : 0;
}
