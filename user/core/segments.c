// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "hash.h"
#include "segments.h"

#define KEY_LEN 40		/* version, protocol, 2 spare, addresses, ports */
#define MAX_SLOTS (1u << 21)	/* flows remembered: 96 MiB at most */
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_URG 0x20
#define TCP_CWR 0x80
#define TCP_FIN 0x01

/* One direction of a flow, as the capture shows it */
struct seg_flow {
	uint8_t key[KEY_LEN];
	uint16_t syn_mss;	/* its SYN's MSS option: what its sender takes */
	uint16_t largest;	/* payload of its largest unmerged packet */
	uint16_t last_id;	/* IPv4 ID of its last packet with a payload */
	uint8_t used, have_id;
	uint8_t id_same;	/* two packets in a row with one ID (DF set) */
	uint8_t id_differs;	/* two packets in a row with different IDs */
};

struct bt_seg_flows {
	struct seg_flow *slot;
	size_t nslots, used;
};

/* A TCP or UDP packet's headers, as a split needs them */
struct l4pkt {
	bool v4, tcp, df;
	uint32_t hl, l4h;	/* IP header, TCP/UDP header bytes */
	uint32_t ip_len;	/* the IP packet's length, from its length field */
	uint32_t payload;
	uint16_t id;
	uint8_t flags;		/* TCP's */
	uint8_t key[KEY_LEN];
};

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* 0 when ip is an unfragmented TCP or UDP packet with its headers
 * captured and a length field that is not 0; IPv6 with the transport
 * header first (no extension headers). */
static int parse(const uint8_t *ip, uint32_t len, struct l4pkt *x)
{
	const uint8_t *l4;
	uint8_t proto;

	memset(x, 0, sizeof(*x));
	if (len >= 20 && ip[0] >> 4 == 4) {
		x->v4 = true;
		x->hl = (ip[0] & 0xf) * 4;
		x->ip_len = be16(ip + 2);
		x->id = be16(ip + 4);
		x->df = ip[6] & 0x40;
		proto = ip[9];
		if (x->hl < 20 || (be16(ip + 6) & 0x3fff))	/* a fragment */
			return -1;
		x->key[0] = 4;
		memcpy(x->key + 4, ip + 12, 4);
		memcpy(x->key + 20, ip + 16, 4);
	} else if (len >= 40 && ip[0] >> 4 == 6) {
		x->hl = 40;
		x->ip_len = be16(ip + 4) ? 40 + be16(ip + 4) : 0;	/* 0: a jumbogram */
		proto = ip[6];
		x->key[0] = 6;
		memcpy(x->key + 4, ip + 8, 32);
	} else {
		return -1;
	}
	x->tcp = proto == 6;
	x->key[1] = proto;
	if ((proto != 6 && proto != 17) || len < x->hl + (x->tcp ? 20 : 8) || !x->ip_len)
		return -1;
	l4 = ip + x->hl;
	memcpy(x->key + 36, l4, 4);	/* the ports */
	x->l4h = x->tcp ? (uint32_t)(l4[12] >> 4) * 4 : 8;
	if (x->l4h < (x->tcp ? 20u : 8u) || len < x->hl + x->l4h || x->ip_len < x->hl + x->l4h)
		return -1;
	x->flags = x->tcp ? l4[13] : 0;
	x->payload = x->ip_len - x->hl - x->l4h;
	return 0;
}

static uint64_t key_hash(const uint8_t *k)
{
	uint64_t h = 0, w;

	for (int i = 0; i < KEY_LEN; i += 8) {
		memcpy(&w, k + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	return h ^ h >> 31;
}

static struct seg_flow *find(const struct bt_seg_flows *f, const uint8_t *key)
{
	if (!f || !f->nslots)
		return NULL;
	for (size_t i = key_hash(key) & (f->nslots - 1);; i = (i + 1) & (f->nslots - 1)) {
		if (!f->slot[i].used)
			return NULL;
		if (!memcmp(f->slot[i].key, key, KEY_LEN))
			return &f->slot[i];
	}
}

/* The flow's entry, made when new; NULL past MAX_SLOTS / 2 flows or out
 * of memory (the flow is then not learned: its merged buffers say so) */
static struct seg_flow *find_add(struct bt_seg_flows *f, const uint8_t *key)
{
	struct seg_flow *e = find(f, key);
	size_t i;

	if (e)
		return e;
	if (2 * (f->used + 1) > f->nslots) {
		size_t n = f->nslots ? 2 * f->nslots : 1024;
		struct seg_flow *v;

		if (n > MAX_SLOTS || !(v = calloc(n, sizeof(*v))))
			return NULL;
		for (size_t j = 0; j < f->nslots; j++) {
			if (!f->slot[j].used)
				continue;
			for (i = key_hash(f->slot[j].key) & (n - 1); v[i].used; i = (i + 1) & (n - 1))
				;
			v[i] = f->slot[j];
		}
		free(f->slot);
		f->slot = v;
		f->nslots = n;
	}
	for (i = key_hash(key) & (f->nslots - 1); f->slot[i].used; i = (i + 1) & (f->nslots - 1))
		;
	e = &f->slot[i];
	memcpy(e->key, key, KEY_LEN);
	e->used = 1;
	f->used++;
	return e;
}

struct bt_seg_flows *bt_seg_flows_new(void)
{
	return calloc(1, sizeof(struct bt_seg_flows));
}

void bt_seg_flows_free(struct bt_seg_flows *f)
{
	if (!f)
		return;
	free(f->slot);
	free(f);
}

/* The MSS option of a TCP header (thl bytes), 0 for none */
static uint32_t mss_option(const uint8_t *th, uint32_t thl)
{
	for (uint32_t o = 20; o < thl;) {
		if (th[o] == 0)		/* end of options */
			break;
		if (th[o] == 1) {	/* no-op */
			o++;
			continue;
		}
		if (o + 1 >= thl || th[o + 1] < 2 || o + th[o + 1] > thl)
			break;
		if (th[o] == 2 && th[o + 1] == 4)
			return be16(th + o + 2);
		o += th[o + 1];
	}
	return 0;
}

void bt_seg_learn(struct bt_seg_flows *f, const uint8_t *ip, uint32_t len)
{
	struct seg_flow *e;
	struct l4pkt x;

	if (!f || parse(ip, len, &x) || !(e = find_add(f, x.key)))
		return;
	if (x.tcp && (x.flags & TCP_SYN)) {
		uint32_t m = mss_option(ip + x.hl, x.l4h);

		if (m)
			e->syn_mss = m;
		return;
	}
	if (!x.payload)
		return;
	if (x.ip_len <= BT_SEG_UNMERGED && x.payload > e->largest)
		e->largest = x.payload;
	if (x.v4 && x.df) {
		if (e->have_id) {
			e->id_same |= x.id == e->last_id;
			e->id_differs |= x.id != e->last_id;
		}
		e->last_id = x.id;
		e->have_id = 1;
	}
}

const char *bt_seg_from_name(enum bt_seg_from from)
{
	switch (from) {
	case BT_SEG_FROM_GIVEN: return "given (--mss)";
	case BT_SEG_FROM_SYN: return "the MSS of the flow's SYN";
	case BT_SEG_FROM_LARGEST: return "the flow's largest unmerged segment";
	default: return "unknown";
	}
}

/* The flow's segment size from what the capture showed: TCP's from the
 * MSS options of its two SYNs (the sender cuts at the smaller, less its
 * TCP and IPv4 options: tcp_mtu_to_mss()), else its largest unmerged
 * packet's payload; 0 when none. */
static uint32_t learned_size(const struct bt_seg_flows *f, const struct l4pkt *x,
			     enum bt_seg_from *from)
{
	const struct seg_flow *dir = find(f, x->key), *rev;
	uint8_t rkey[KEY_LEN];
	uint32_t syn = 0, opts;

	memcpy(rkey, x->key, 4);
	memcpy(rkey + 4, x->key + 20, 16);
	memcpy(rkey + 20, x->key + 4, 16);
	memcpy(rkey + 36, x->key + 38, 2);
	memcpy(rkey + 38, x->key + 36, 2);
	rev = find(f, rkey);
	if (x->tcp) {
		/* the receiver's SYN says what it takes, the sender's what its
		 * own link carries */
		if (rev && rev->syn_mss)
			syn = rev->syn_mss;
		if (dir && dir->syn_mss && (!syn || dir->syn_mss < syn))
			syn = dir->syn_mss;
		opts = x->l4h - 20 + (x->v4 ? x->hl - 20 : 0);
		if (syn > opts) {
			*from = BT_SEG_FROM_SYN;
			return syn - opts;
		}
	}
	if (dir && dir->largest) {
		*from = BT_SEG_FROM_LARGEST;
		return dir->largest;
	}
	return 0;
}

/* Both ID variants unless the packet or its flow tells: without DF, GRO
 * merges only incremented IDs; with it, the flow's packets in a row show
 * the sender's habit. */
static uint32_t id_variants(const struct bt_seg_flows *f, const struct l4pkt *x, bool *fixed)
{
	const struct seg_flow *e = find(f, x->key);

	*fixed = false;
	if (!x->v4 || !x->df)
		return 1;
	if (e && e->id_differs && !e->id_same)
		return 1;
	if (e && e->id_same && !e->id_differs) {
		*fixed = true;
		return 1;
	}
	return 2;
}

uint32_t bt_seg_split(const struct bt_seg_flows *f, const uint8_t *ip, uint32_t len,
		      uint32_t mss, struct bt_seg_split *s)
{
	uint32_t n, hdrs, last, seq0 = 0;
	bool fixed_only;
	struct l4pkt x;

	s->n = 0;
	s->variants = 1;
	s->why = NULL;
	s->from = BT_SEG_FROM_NONE;
	if (parse(ip, len, &x) || !x.payload || (x.tcp && (x.flags & (TCP_SYN | TCP_RST | TCP_URG))))
		return 0;
	s->tcp = x.tcp;
	s->v4 = x.v4;
	s->payload = x.payload;
	s->size = mss;
	if (mss)
		s->from = BT_SEG_FROM_GIVEN;
	else
		s->size = learned_size(f, &x, &s->from);
	if (!s->size) {
		if (x.ip_len > BT_SEG_UNMERGED)
			s->why = "a merged buffer (GRO): capture with GRO off, or give --mss";
		return 0;
	}
	if (x.payload <= s->size)
		return 0;
	if (s->size < BT_SEG_MIN) {
		s->why = "not cut: its flow's segment size (its SYN's MSS, or its largest "
			 "packet) is below TCP's smallest MSS, 88 bytes; give --mss";
		return 0;
	}
	n = (x.payload + s->size - 1) / s->size;
	if (n > BT_SEGS_MAX) {
		s->why = "a merged buffer of more segments than a trace cuts (1,024)";
		return 0;
	}
	hdrs = x.hl + x.l4h;
	/* UDP: each datagram's first payload bytes are in its digest */
	last = bt_seg_payload(n - 1, n, s->size, x.payload);
	if (!x.tcp && len < hdrs + (n - 1) * s->size + (last < 8 ? last : 8)) {
		s->why = "a merged buffer (GRO) cut short by the capture's snap length: each "
			 "datagram's first bytes are needed; capture whole packets";
		return 0;
	}
	s->variants = id_variants(f, &x, &fixed_only);
	if (x.tcp)
		seq0 = (uint32_t)be16(ip + x.hl + 4) << 16 | be16(ip + x.hl + 6);
	for (uint32_t v = 0; v < s->variants; v++) {
		bool fixed = fixed_only || v == 1;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t pay = bt_seg_payload(i, n, s->size, x.payload), k = v * n + i;
			uint8_t *h = s->head[k], *l4 = h + x.hl;

			memcpy(h, ip, hdrs);
			s->head_len[k] = hdrs;
			if (x.v4) {
				put16(h + 2, hdrs + pay);
				s->id[k] = bt_seg_id(x.id, i, fixed);
				put16(h + 4, s->id[k]);
			} else {
				put16(h + 4, x.l4h + pay);
				s->id[k] = 0;
			}
			if (x.tcp) {
				s->seq[i] = bt_seg_seq(seq0, i, s->size);
				put32(l4 + 4, s->seq[i]);
				/* tcp_gso_segment(): CWR on the first, PSH and FIN on the last */
				if (i)
					l4[13] &= ~TCP_CWR;
				if (i + 1 < n)
					l4[13] &= ~(TCP_PSH | TCP_FIN);
			} else {
				uint32_t off = hdrs + i * s->size, take = pay < 8 ? pay : 8;

				put16(l4 + 4, 8 + pay);
				put16(l4 + 6, 0);	/* the checksum: never in a digest */
				if (off + take > len)
					take = off < len ? len - off : 0;
				memcpy(h + hdrs, ip + off, take);
				s->head_len[k] += take;
			}
		}
	}
	s->n = n;
	return n;
}
