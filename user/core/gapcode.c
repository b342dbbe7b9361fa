// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Golomb-coded gaps of a sparse bit array. See gapcode.h. */
#include <string.h>
#include "gapcode.h"

uint32_t bt_gap_param(uint64_t set, uint64_t n)
{
	/* ln 2 / p, p = set / n: 22713 / 32768 is ln 2 to 5 digits */
	uint64_t m = set ? (n * 22713 >> 15) / set : 1;

	return m < 1 ? 1 : m > 1u << 20 ? 1u << 20 : (uint32_t)m;
}

/* Bits of the truncated binary remainder: b = ceil(log2 m); the first
 * (2^b - m) remainders take b - 1 bits, the others b. */
static int rem_bits(uint32_t m)
{
	int b = 0;

	while ((1u << b) < m)
		b++;
	return b;
}

size_t bt_gap_bound(size_t nbytes)
{
	/* every bit set at the largest m: 1 + 21 bits a position, and the
	 * padding */
	return nbytes * 8 * 22 / 8 + 8;
}

size_t bt_gap_bound_set(uint64_t nbits, uint64_t set, uint32_t m)
{
	return (nbits / (m ? m : 1) + set * (1 + rem_bits(m)) + 7) / 8 + 1;
}

struct bit_writer {
	uint8_t *out;
	size_t len;
	uint64_t acc;	/* pending bits, the first at the top */
	int n;
};

static void put(struct bit_writer *w, uint64_t v, int bits)
{
	while (bits > 0) {
		int take = bits > 32 ? 32 : bits;

		bits -= take;
		w->acc = w->acc << take | ((v >> bits) & ((1ULL << take) - 1));
		w->n += take;
		while (w->n >= 8) {
			w->out[w->len++] = (uint8_t)(w->acc >> (w->n - 8));
			w->n -= 8;
		}
	}
}

static void put_ones(struct bit_writer *w, uint64_t count)
{
	for (; count >= 32; count -= 32)
		put(w, 0xffffffffu, 32);
	put(w, (1ULL << count) - 1, (int)count);
}

size_t bt_gap_encode(const uint64_t *bits, size_t nbytes, uint32_t m, uint8_t *out)
{
	struct bit_writer w = { .out = out };
	int b = rem_bits(m);
	uint64_t cut = (1ULL << b) - m, prev = (uint64_t)-1;

	for (size_t j = 0; j < nbytes / 8; j++)
		for (uint64_t x = bits[j]; x; x &= x - 1) {
			uint64_t pos = j * 64 + __builtin_ctzll(x), gap = pos - prev - 1;
			uint64_t q = gap / m, r = gap % m;

			prev = pos;
			put_ones(&w, q);
			put(&w, 0, 1);
			if (r < cut)
				put(&w, r, b - 1);
			else
				put(&w, r + cut, b);
		}
	/* padded with ones: no code ends in them */
	if (w.n)
		put_ones(&w, 8 - w.n);
	return w.len;
}

/* At least 56 bits in acc, or all that is left: eight bytes at a time
 * while eight are left (the bits below n are the next byte's, loaded
 * again by the next refill) */
static inline void refill(struct bt_gap_decoder *r)
{
	if (r->at + 8 <= r->len) {
		uint64_t w;

		memcpy(&w, r->in + r->at, 8);
		r->acc |= __builtin_bswap64(w) >> r->n;
		r->at += (63 - r->n) >> 3;
		r->n |= 56;
		return;
	}
	while (r->n <= 56 && r->at < r->len) {
		r->acc |= (uint64_t)r->in[r->at++] << (56 - r->n);
		r->n += 8;
	}
}

static inline void drop(struct bt_gap_decoder *r, int bits)
{
	r->acc = bits < 64 ? r->acc << bits : 0;
	r->n -= bits;
}

void bt_gap_begin(struct bt_gap_decoder *d, const uint8_t *in, size_t len, uint32_t m,
		  uint64_t *bits, size_t nbytes)
{
	*d = (struct bt_gap_decoder){ .in = in, .len = len, .m = m ? m : 1, .b = rem_bits(m),
				      .pos = (uint64_t)-1, .bits = bits,
				      .nbits = (uint64_t)nbytes * 8, .state = m ? 0 : -1 };
	d->cut = (1ULL << d->b) - d->m;
	memset(bits, 0, nbytes);
}

int bt_gap_until(struct bt_gap_decoder *d, uint64_t upto)
{
	const int b = d->b;

	while (!d->state && (d->pos == (uint64_t)-1 || d->pos < upto)) {
		uint64_t q = 0, v, rem;
		int ones;

		/* the unary quotient: ones up to a zero */
		for (;;) {
			refill(d);
			ones = ~d->acc ? __builtin_clzll(~d->acc) : 64;
			if (ones < d->n)
				break;
			if (d->at == d->len) {	/* ones to the end: the padding */
				d->state = !q && d->n < 8 ? 1 : -1;
				return d->state < 0 ? -1 : 0;
			}
			q += d->n;
			drop(d, d->n);
		}
		q += ones;
		drop(d, ones + 1);
		/* the truncated binary remainder: b - 1 bits, or b when the
		 * first b - 1 reach the cut (branch-free: half of them do) */
		if (d->n < b)
			refill(d);
		if (b && d->n >= b) {
			int small;

			v = d->acc >> (64 - b);
			small = (v >> 1) < d->cut;
			rem = small ? v >> 1 : v - d->cut;
			drop(d, b - small);
		} else if (b) {	/* the input's last bits: b - 1 of them, small */
			if (b - 1 > d->n || (v = b > 1 ? d->acc >> (64 - (b - 1)) : 0) >= d->cut) {
				d->state = -1;
				return -1;
			}
			rem = v;
			drop(d, b - 1);
		} else {
			rem = 0;
		}
		d->pos += q * d->m + rem + 1;
		if (d->pos >= d->nbits) {
			d->state = -1;
			return -1;
		}
		d->bits[d->pos / 64] |= 1ULL << (d->pos % 64);
	}
	return d->state < 0 ? -1 : 0;
}

int bt_gap_decode(const uint8_t *in, size_t len, uint32_t m, uint64_t *bits, size_t nbytes)
{
	struct bt_gap_decoder d;

	bt_gap_begin(&d, in, len, m, bits, nbytes);
	return bt_gap_until(&d, d.nbits);
}
