/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reproducible synthetic traffic for the tests and the benchmark: a fixed
 * seed PRNG and a Zipf(s) sampler over n flows (flow 0 the most popular). */
#ifndef BLOOMTAP_ZIPF_H
#define BLOOMTAP_ZIPF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* xorshift64* (Vigna): fast, and the same sequence on every run. */
static inline uint64_t bt_rng(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

struct zipf {
	double *cdf;
	uint32_t n;
};

static inline int zipf_init(struct zipf *z, uint32_t n, double s)
{
	double sum = 0;

	z->n = n;
	z->cdf = malloc(n * sizeof(double));
	if (!z->cdf)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		z->cdf[i] = (sum += pow(i + 1, -s));
	for (uint32_t i = 0; i < n; i++)
		z->cdf[i] /= sum;
	return 0;
}

/* Inverse transform: the first flow whose CDF reaches u. */
static inline uint32_t zipf_draw(const struct zipf *z, uint64_t *state)
{
	double u = (bt_rng(state) >> 11) * (1.0 / 9007199254740992.0);
	uint32_t lo = 0, hi = z->n - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void zipf_free(struct zipf *z)
{
	free(z->cdf);
	z->cdf = NULL;
}

#endif /* BLOOMTAP_ZIPF_H */
