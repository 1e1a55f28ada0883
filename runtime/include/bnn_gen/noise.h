/*
 * bnn_gen/noise.h: the noise a generated pass draws itself, and dropout's
 * masks applied.
 *
 * bnn_gen_dropout_mask and bnn_gen_normal define exactly which values a
 * given bnn_rng state gives the posterior families a pass samples
 * (dropout masks, meanfield's local reparameterisation, whvi's g); dense
 * (gen/layer_dense.c), conv2d (gen/layer_conv.c) and whvi
 * (gen/layer_whvi.c) layers use them.
 *
 * The draws stay on the calling thread, in the order the pass makes them
 * (one stream: a variate's value depends on every draw before it); the
 * masks' products run on the thread's OpenMP team (BNN_GEN_PEACH).
 */
#ifndef BNN_GEN_NOISE_H
#define BNN_GEN_NOISE_H

#include <math.h>
#include <stdint.h>

#include "bnn.h"
#include "loop.h"
#include "real.h"

/* ---- posterior noise: dropout(p) and meanfield ---------------------------
 * The generated pass draws all its noise first, example by example (each
 * example's layers in forward order), into per-example rows of the
 * workspace; the kernels below then use it.  Example i's noise therefore
 * does not depend on the batch it is in. */

/*
 * Dropout masks of one example's n input units.  Unit j is kept, with the
 * value 1/(1 − p), when u_j ≥ p, and dropped (0) otherwise, where
 * u_0, u_1, ... are the uniforms bnn_rng_uniform_fill(rng, u, n) gives:
 * the top 24 bits of each 32-bit half of a draw, as multiples of 2^-24,
 * (n + 1)/2 draws in all.  So a unit is kept with probability
 * 1 − ⌈p·2^24⌉/2^24, which is 1 − p to within 2^-24.
 */
static inline void bnn_gen_dropout_mask(bnn_rng *rng, long n, double p, bnn_real *restrict mask)
{
	const uint64_t t = (uint64_t)ceil(p * 0x1p24); /* u ≥ p  ⟺  u·2^24 ≥ t */
	const bnn_real keep = (bnn_real)(1 / (1 - p));
	long i;

	for (i = 0; i + 1 < n; i += 2) {
		uint64_t r = bnn_rng_next(rng);

		mask[i] = (r >> 40) >= t ? keep : 0;
		mask[i + 1] = (((uint32_t)r) >> 8) >= t ? keep : 0;
	}
	if (i < n)
		mask[i] = (bnn_rng_next(rng) >> 40) >= t ? keep : 0;
}

/*
 * n standard normal variates, those of bnn_rng_normal(rng, out, n).  The
 * double build draws them 256 at a time through a float buffer and
 * converts them: the same values, and the same advance of rng, as the float
 * build when n < 512 (from 512 on, bnn_rng_normal changes method).
 */
static inline void bnn_gen_normal(bnn_rng *rng, long n, bnn_real *restrict out)
{
#ifdef BNN_GEN_DOUBLE
	float buf[256];
	long i, j;

	for (i = 0; i < n; i += 256) {
		long m = n - i < 256 ? n - i : 256;

		bnn_rng_normal(rng, buf, (size_t)m);
		for (j = 0; j < m; j++)
			out[i + j] = buf[j];
	}
#else
	bnn_rng_normal(rng, out, (size_t)n);
#endif
}

/* Dropout forward: xt = x∘mask over n values. */
static inline BNN_GEN_CLONES void bnn_gen_dropout_apply(long n, const bnn_real *restrict x,
                                                        const bnn_real *restrict mask,
                                                        bnn_real *restrict xt)
{
	BNN_GEN_PEACH(n, 1, 0, xt, x[i] * mask[i]);
}

/* dx (+)= d∘mask over n values: a dropout layer's input delta from the
 * delta d of its masked input (conv2d). */
static inline BNN_GEN_CLONES void bnn_gen_dropout_mask_into(long n, const bnn_real *restrict d,
                                                            const bnn_real *restrict mask,
                                                            bnn_real *restrict dx, int accumulate)
{
	BNN_GEN_PEACH(n, 1, accumulate, dx, d[i] * mask[i]);
}

#endif /* BNN_GEN_NOISE_H */
