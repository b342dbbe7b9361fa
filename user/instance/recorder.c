// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The drop recorder's reader. See recorder.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/pcapng.h"
#include "drops.h"
#include "instance.h"
#include "recorder.h"
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

int bt_recorder_read(const struct bt_instance *inst, struct bt_rec_set *s)
{
	const struct bt_meta *m = &inst->meta;
	struct bt_drop_rec_pos *pos;
	uint8_t *v = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	if (!m->drop_ring)
		return -ENODATA;
	s->rec_size = BT_DROP_REC_SIZE(m->drop_head);
	/* the kernel's positions first: what is marked read is at most what
	 * had been written before the slots were read */
	if ((err = read_pos(inst, BT_REC_POS_KERNEL, &pos, &s->ncpu)))
		return err;
	s->written = calloc(s->ncpu, sizeof(*s->written));
	s->recs = calloc((size_t)m->drop_ring * s->ncpu, s->rec_size);
	v = calloc(s->ncpu, s->rec_size);
	if (!s->written || !s->recs || !v) {
		err = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < s->ncpu; c++)
		s->written[c] = pos[c].written;
	for (__u32 i = 0; i < m->drop_ring; i++) {
		if (bpf_map_lookup_elem(inst->drop_rec_fd, &i, v)) {
			err = -errno;
			goto out;
		}
		for (int c = 0; c < s->ncpu; c++) {
			const struct bt_drop_rec *r = (void *)(v + (size_t)c * s->rec_size);

			if (r->seq && r->cap_len <= m->drop_head)
				memcpy(BT_REC(s, s->n++), r, s->rec_size);
		}
	}
	if (s->n > 1)	/* qsort's base may not be NULL, even for none */
		qsort(s->recs, s->n, s->rec_size, cmp_rec);
out:
	free(pos);
	free(v);
	if (err)
		bt_recorder_free(s);
	return err;
}

int bt_recorder_mark_read(const struct bt_instance *inst, const struct bt_rec_set *s)
{
	struct bt_drop_rec_pos *v = calloc(s->ncpu, sizeof(*v));
	__u32 key = BT_REC_POS_READ;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (int c = 0; c < s->ncpu; c++)
		v[c].written = s->written[c];
	if (bpf_map_update_elem(inst->drop_rec_pos_fd, &key, v, 0))
		err = -errno;
	free(v);
	return err;
}

void bt_recorder_free(struct bt_rec_set *s)
{
	free(s->recs);
	free(s->written);
	memset(s, 0, sizeof(*s));
}

int64_t bt_recorder_clock_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

int bt_recorder_pcap(const struct bt_instance *inst, struct bt_pcapng *w,
		     const struct bt_drop_rec *r, int64_t offset)
{
	char name[64], buf[96], comment[320], custom[256];
	const char *reason;
	const char *dir = r->dir == BT_DROP_DIR_IN ? "in" : "out";
	int id;

	if (r->ifindex && r->ifindex == inst->meta.ifindex && inst->meta.ifname[0])
		snprintf(name, sizeof(name), "%s", inst->meta.ifname);
	else
		snprintf(name, sizeof(name), "ifindex %u", r->ifindex);
	id = bt_pcapng_iface(w, r->ifindex,
			     r->l2 ? BT_PCAPNG_LINKTYPE_ETHERNET : BT_PCAPNG_LINKTYPE_RAW, name,
			     inst->meta.drop_head);
	if (id < 0)
		return id;
	reason = bt_drop_reason_name(r->reason, buf, sizeof(buf));
	snprintf(comment, sizeof(comment),
		 "dropped: %s, instance %s, on %s (%s), came in by ifindex %u, %u of %u bytes kept%s",
		 reason, inst->name, name, dir, r->iif, r->cap_len, r->frame_len,
		 r->segs > 1 ? ", a GRO'd skb" : "");
	snprintf(custom, sizeof(custom), "bloomtap.reason=%s;instance=%s;code=%u;segs=%u", reason,
		 inst->name, r->reason, r->segs);
	return bt_pcapng_packet(w, id, r->ts_ns + offset, r->data, r->cap_len,
				r->frame_len > r->cap_len ? r->frame_len : r->cap_len,
				r->dir == BT_DROP_DIR_IN ? 1 : 2, comment, custom);
}

int bt_recorder_follow_set(const struct bt_instance *inst, bool on)
{
	__u32 zero = 0, v = on;

	return bpf_map_update_elem(inst->drop_follow_fd, &zero, &v, 0) ? -errno : 0;
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
		     const struct bt_rec_filter *f)
{
	int64_t offset = bt_recorder_clock_offset();
	struct bt_rec_set s;
	int err, first = 0, written = 0;

	if ((err = bt_recorder_read(inst, &s)))
		return err;
	/* -n: from the newest N-th of those that pass on */
	if (f->n) {
		__u32 pass = 0;

		for (int i = s.n - 1; i >= 0; i--)
			if (bt_rec_wanted(f, BT_REC(&s, i), offset) && ++pass == f->n) {
				first = i;
				break;
			}
	}
	for (int i = first; i < s.n && !err; i++)
		if (bt_rec_wanted(f, BT_REC(&s, i), offset) &&
		    !(err = bt_recorder_pcap(inst, w, BT_REC(&s, i), offset)))
			written++;
	if (!err)
		err = bt_recorder_mark_read(inst, &s);
	bt_recorder_free(&s);
	return err ? err : written;
}
