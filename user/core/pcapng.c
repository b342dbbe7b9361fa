// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* pcapng blocks, built in memory and written whole. See pcapng.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pcapng.h"

#define SHB 0x0A0D0D0Au
#define IDB 1u
#define EPB 6u
#define OPT_END 0
#define OPT_COMMENT 1
#define OPT_CUSTOM_UTF8 2988
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_TSRESOL 9
#define EPB_FLAGS 2

struct blk {
	uint8_t *b;
	size_t len, cap;
};

static int put(struct blk *k, const void *p, size_t n)
{
	size_t pad = (4 - n % 4) % 4;

	if (k->len + n + pad > k->cap) {
		size_t cap = (k->len + n + pad) * 2 + 64;
		uint8_t *b = realloc(k->b, cap);

		if (!b)
			return -ENOMEM;
		k->b = b;
		k->cap = cap;
	}
	memcpy(k->b + k->len, p, n);
	memset(k->b + k->len + n, 0, pad);
	k->len += n + pad;
	return 0;
}

static int put32(struct blk *k, uint32_t v)
{
	return put(k, &v, 4);
}

/* An option: code, length, value padded to 32 bits */
static int opt(struct blk *k, uint16_t code, const void *v, uint16_t len)
{
	uint16_t h[2] = { code, len };

	return put(k, h, 4) || (len && put(k, v, len)) ? -ENOMEM : 0;
}

static int begin(struct blk *k, uint32_t type)
{
	k->len = 0;
	return put32(k, type) || put32(k, 0) ? -ENOMEM : 0;
}

/* The total length at both ends, and one write */
static int finish(struct blk *k, int fd, size_t *bytes)
{
	uint32_t total;
	size_t off = 0;
	int err = 0;

	if (opt(k, OPT_END, NULL, 0) || put32(k, 0)) {
		err = -ENOMEM;
		goto out;
	}
	total = k->len;
	memcpy(k->b + 4, &total, 4);
	memcpy(k->b + k->len - 4, &total, 4);
	while (fd >= 0 && off < k->len) {
		ssize_t n = write(fd, k->b + off, k->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		off += n;
	}
	if (!err)
		*bytes += k->len;
out:
	free(k->b);
	k->b = NULL;
	k->cap = 0;
	return err;
}

int bt_pcapng_start(struct bt_pcapng *w, int fd)
{
	static const char app[] = "bloomtap drop recorder";
	struct blk k = { 0 };
	uint32_t magic = 0x1A2B3C4D;
	uint16_t ver[2] = { 1, 0 };
	int64_t section = -1;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	if (begin(&k, SHB) || put32(&k, magic) || put(&k, ver, 4) || put(&k, &section, 8) ||
	    opt(&k, SHB_USERAPPL, app, sizeof(app) - 1)) {
		free(k.b);
		return -ENOMEM;
	}
	return finish(&k, fd, &w->bytes);
}

void bt_pcapng_free(struct bt_pcapng *w)
{
	free(w->ifs);
	w->ifs = NULL;
	w->nif = w->nif_cap = 0;
}

int bt_pcapng_iface(struct bt_pcapng *w, uint64_t key, uint16_t linktype, const char *name,
		    uint32_t snaplen)
{
	uint16_t lt[2] = { linktype, 0 };
	uint8_t tsresol = 9;
	struct blk k = { 0 };
	int err;

	for (int i = 0; i < w->nif; i++)
		if (w->ifs[i].key == key && w->ifs[i].linktype == linktype)
			return i;
	if (w->nif == w->nif_cap) {
		int cap = w->nif_cap ? w->nif_cap * 2 : 16;
		struct bt_pcapng_if *p = realloc(w->ifs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->ifs = p;
		w->nif_cap = cap;
	}
	if (begin(&k, IDB) || put(&k, lt, 4) || put32(&k, snaplen) ||
	    opt(&k, IF_NAME, name, strlen(name)) || opt(&k, IF_TSRESOL, &tsresol, 1)) {
		free(k.b);
		return -ENOMEM;
	}
	if ((err = finish(&k, w->fd, &w->bytes)))
		return err;
	w->ifs[w->nif].key = key;
	w->ifs[w->nif].linktype = linktype;
	return w->nif++;
}

int bt_pcapng_packet(struct bt_pcapng *w, int ifid, uint64_t ts_ns, const void *data,
		     uint32_t caplen, uint32_t origlen, uint32_t flags, const char *comment,
		     const char *custom)
{
	struct blk k = { 0 };
	uint32_t pen = BT_PCAPNG_PEN;
	int bad;

	bad = begin(&k, EPB) || put32(&k, ifid) || put32(&k, ts_ns >> 32) ||
	      put32(&k, (uint32_t)ts_ns) || put32(&k, caplen) || put32(&k, origlen) ||
	      put(&k, data, caplen) || opt(&k, EPB_FLAGS, &flags, 4) ||
	      (comment && opt(&k, OPT_COMMENT, comment, strlen(comment)));
	if (!bad && custom) {
		/* the PEN and the string are one value, padded once: the PEN's
		 * 4 bytes need none */
		size_t n = strlen(custom);
		uint16_t h[2] = { OPT_CUSTOM_UTF8, 4 + n };

		bad = put(&k, h, 4) || put(&k, &pen, 4) || (n && put(&k, custom, n));
	}
	if (bad) {
		free(k.b);
		return -ENOMEM;
	}
	return finish(&k, w->fd, &w->bytes);
}
