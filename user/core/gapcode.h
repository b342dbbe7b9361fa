/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Sparse bit arrays coded as the gaps between their set bits, each gap a
 * Golomb code (Golomb 1966; optimal among prefix codes for geometric gaps,
 * Gallager & van Voorhis 1975). A filter whose bits are set independently
 * with probability p has geometric gaps, and at Golomb's parameter
 * m ~ ln 2 / p the code comes within about 1 % of the filter's entropy
 * (docs/traceback.md has the measured figures). Archive format 10 stores
 * its chunks so. */
#ifndef BLOOMTAP_GAPCODE_H
#define BLOOMTAP_GAPCODE_H

#include <stddef.h>
#include <stdint.h>

/* Golomb's parameter for a fill of set of n bits, in integers (the writer
 * and every reader derive the same one from the window's record). */
uint32_t bt_gap_param(uint64_t set, uint64_t n);
/* Bytes the code of nbytes of bits may take, at most, whatever they hold. */
size_t bt_gap_bound(size_t nbytes);
/* ... and of nbits holding set bits, at parameter m: each gap's quotient
 * and its end take gap / m + 1 bits, its remainder at most ceil(log2 m). */
size_t bt_gap_bound_set(uint64_t nbits, uint64_t set, uint32_t m);
/* Codes the n bytes of bits (little-endian 64-bit words, bit i of word j
 * is position 64 j + i) at parameter m into out; returns its length. */
size_t bt_gap_encode(const uint64_t *bits, size_t nbytes, uint32_t m, uint8_t *out);
/* Decodes in (len bytes) into bits (nbytes, cleared first): 0, or -1 when
 * it does not decode to positions within them. */
int bt_gap_decode(const uint8_t *in, size_t len, uint32_t m, uint64_t *bits, size_t nbytes);

/* The same, a part at a time: a query needs the bits of one block, and
 * decodes the chunk only that far (half of it, on average); the next
 * query of the chunk goes on from there. in and bits stay the caller's. */
struct bt_gap_decoder {
	const uint8_t *in;
	size_t len, at;		/* bytes; the next one to load */
	uint64_t acc;		/* bits not yet taken, at the top */
	int n;			/* how many */
	int b, state;		/* remainder bits; 0 going, 1 done, -1 damaged */
	uint32_t m;
	uint64_t cut, pos;	/* the last position decoded, -1 for none */
	uint64_t *bits, nbits;
};
void bt_gap_begin(struct bt_gap_decoder *d, const uint8_t *in, size_t len, uint32_t m,
		  uint64_t *bits, size_t nbytes);
/* Decodes until every set bit below position upto is in bits: 0, or -1. */
int bt_gap_until(struct bt_gap_decoder *d, uint64_t upto);

#endif /* BLOOMTAP_GAPCODE_H */
