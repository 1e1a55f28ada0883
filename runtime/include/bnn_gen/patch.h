/*
 * bnn_gen/patch.h: the kernels of ensemble model patching, the emp(k) and
 * ecmp(k) posteriors (gen/layer_patch.c).
 *
 * The draws stay on the calling thread, in order (one rng stream); the
 * gathers, means and scatters are element-wise and run on the thread's
 * OpenMP team in fixed chunks (BNN_GEN_PEACH) once a tensor is large.
 */
#ifndef BNN_GEN_PATCH_H
#define BNN_GEN_PATCH_H

#include "bnn.h"
#include "loop.h"
#include "real.h"

/* ---- ensemble model patching: emp(k) and ecmp(k) ---------------------------
 * A patched layer's tensor holds k components of n values each, one after
 * the other (component c at w + c·n).  The pass draws which component each
 * value comes from (z, stored as bnn_real, exact for k ≤ 2^24), gathers the
 * layer's parameters for the pass, and scatters their gradients back. */

/* The mixing assignment of n values, uniform over k components (Chang et
 * al., eq. 5 and 6): one draw for all of them (EMP, per_element 0), or one
 * per value (ECMP), by bnn_rng_below. */
static inline void bnn_gen_patch_draw(bnn_rng *rng, long k, long n, int per_element,
                                      bnn_real *restrict z)
{
	long i;

	if (!per_element) {
		const bnn_real c = (bnn_real)bnn_rng_below(rng, (uint64_t)k);
		for (i = 0; i < n; i++)
			z[i] = c;
		return;
	}
	for (i = 0; i < n; i++)
		z[i] = (bnn_real)bnn_rng_below(rng, (uint64_t)k);
}

/* out[i] = value i of component z[i]. */
static inline void bnn_gen_patch_gather(long k, long n, const bnn_real *restrict w,
                                        const bnn_real *restrict z, bnn_real *restrict out)
{
	(void)k;
	BNN_GEN_PEACH(n, 1, 0, out, w[(long)z[i] * n + i]);
}

/* out = the mean of the k components: the mixture's mean (a pass without
 * rng). */
static inline void bnn_gen_patch_mean(long k, long n, const bnn_real *restrict w,
                                      bnn_real *restrict out)
{
	const bnn_real scale = (bnn_real)(1.0 / (double)k);
	long c;

	BNN_GEN_PEACH(n, 1, 0, out, w[i]);
	for (c = 1; c < k; c++) {
		const bnn_real *wc = w + c * n;
		BNN_GEN_PEACH(n, 1, 1, out, wc[i]);
	}
	BNN_GEN_PEACH(n, 1, 0, out, out[i] * scale);
}

/* The gradient g of the n values the pass used, handed to the components:
 * with z, component c gets g where z = c and 0 elsewhere; without z (the
 * mean), every component gets g/k^power (power 1 for a gradient, 2 for a
 * squared per-example gradient). */
static inline void bnn_gen_patch_scatter(long k, long n, const bnn_real *restrict z,
                                         const bnn_real *restrict g, bnn_real *restrict out,
                                         int power)
{
	const bnn_real scale =
	        (bnn_real)(power == 2 ? 1.0 / ((double)k * (double)k) : 1.0 / (double)k);
	long c;

	for (c = 0; c < k; c++) {
		bnn_real *oc = out + c * n;
		const bnn_real cc = (bnn_real)c;
		if (z)
			BNN_GEN_PEACH(n, 1, 0, oc, bnn_gen_pick(z[i] == cc, g[i], 0));
		else
			BNN_GEN_PEACH(n, 1, 0, oc, g[i] * scale);
	}
}

#endif /* BNN_GEN_PATCH_H */
