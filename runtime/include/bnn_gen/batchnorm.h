/*
 * bnn_gen/batchnorm.h: the kernels of batchnorm layers
 * (gen/layer_batchnorm.c).
 *
 * The channels are shared among the calling thread's OpenMP team
 * (BNN_GEN_PARALLEL_FOR): a channel's statistics, its parameters'
 * gradients and squared gradients are each summed by one thread over the
 * batch in the same order as on one thread; the normalisation is shared
 * by example.
 */
#ifndef BNN_GEN_BATCHNORM_H
#define BNN_GEN_BATCHNORM_H

#include "loop.h"
#include "real.h"

/* ---- batchnorm -------------------------------------------------------------
 * Batch normalisation (VOGN, appendix B, eq. 8) of B examples of C channels
 * with hw values each (hw = 1 for a vector of C features): per channel c,
 * ŝ = (s − μ_c)·r_c with r_c = 1/√(v_c + ε), and y = γ_c·ŝ + β_c.  With the
 * batch's statistics, μ_c and v_c are the mean and (biased) variance of
 * channel c over the M = B·hw values of the batch; else they are the
 * running statistics.  The forward kernel leaves μ_c and r_c in a block of
 * 2C floats (mr: μ then r), from which the backward kernel recomputes ŝ
 * from the input instead of storing it. */

/*
 * The forward pass.  batch_stats: normalise by the batch's statistics and,
 * when rmean and rvar are not NULL, fold them into the running ones:
 * running ← (1 − momentum)·running + momentum·batch, with the unbiased
 * variance M/(M − 1)·v (PyTorch's convention).  Otherwise normalise by
 * rmean and rvar (not NULL then), which stay as they are.  The channel
 * sums are accumulated in double.
 */
static inline BNN_GEN_CLONES void bnn_gen_batchnorm_forward(
        long batch, long c, long hw, const bnn_real *restrict x, const bnn_real *restrict gamma,
        const bnn_real *restrict beta, double eps, double momentum, int batch_stats,
        bnn_real *restrict rmean, bnn_real *restrict rvar, bnn_real *restrict mr,
        bnn_real *restrict y)
{
	const long chw = c * hw, m = batch * hw;
	long ch, e;

	BNN_GEN_PARALLEL_FOR(2 * batch * chw)
	for (ch = 0; ch < c; ch++) {
		double mean, var;
		long b;
		if (batch_stats) {
			double sum = 0, ss = 0;
			for (b = 0; b < batch; b++) {
				const bnn_real *xc = x + b * chw + ch * hw;
				long q;
				for (q = 0; q < hw; q++)
					sum += xc[q];
			}
			mean = sum / (double)m;
			for (b = 0; b < batch; b++) {
				const bnn_real *xc = x + b * chw + ch * hw;
				long q;
				for (q = 0; q < hw; q++)
					ss += ((double)xc[q] - mean) * ((double)xc[q] - mean);
			}
			var = ss / (double)m;
			if (rmean && rvar) {
				double unbiased = m > 1 ? var * (double)m / (double)(m - 1) : var;
				rmean[ch] =
				        (bnn_real)((1 - momentum) * rmean[ch] + momentum * mean);
				rvar[ch] =
				        (bnn_real)((1 - momentum) * rvar[ch] + momentum * unbiased);
			}
		} else {
			mean = rmean[ch];
			var = rvar[ch];
		}
		mr[ch] = (bnn_real)mean;
		mr[c + ch] = (bnn_real)(1.0 / sqrt(var + eps));
	}
	BNN_GEN_PARALLEL_FOR(batch * chw)
	for (e = 0; e < batch; e++) {
		long k;

		for (k = 0; k < c; k++) {
			const bnn_real *restrict xc = x + e * chw + k * hw;
			bnn_real *restrict yc = y + e * chw + k * hw;
			const bnn_real mu = mr[k], r = mr[c + k], g = gamma[k], s = beta[k];
			BNN_GEN_EACH(hw, 0, yc, g * ((xc[i] - mu) * r) + s);
		}
	}
}

/*
 * The backward pass from dy (deltas of the mean loss): dγ_c = Σ dy·ŝ and
 * dβ_c = Σ dy over the batch.  sg and sb, when not NULL, receive the mean
 * of the squared per-example gradients (VOGN, appendix B, eqs. 9 and 10):
 * example i's are B·Σ_q dy·ŝ and B·Σ_q dy over its hw values (dy is 1/B of
 * ℓ_i's own delta), so (1/B)·Σ_i of their squares is B·Σ_i (Σ_q ...)².
 * dx, when not NULL, (+)= the input's delta: with batch statistics, which
 * depend on every input,
 *     dx = γ·r·(dy − (Σ dy)/M − ŝ·(Σ dy·ŝ)/M),
 * and with fixed statistics dx = γ·r·dy.
 */
static inline BNN_GEN_CLONES void bnn_gen_batchnorm_backward(
        long batch, long c, long hw, int batch_stats, const bnn_real *restrict x,
        const bnn_real *restrict dy, const bnn_real *restrict gamma, const bnn_real *restrict mr,
        bnn_real *restrict dgamma, bnn_real *restrict dbeta, bnn_real *restrict sg,
        bnn_real *restrict sb, bnn_real *restrict dx, int accumulate)
{
	const long chw = c * hw, m = batch * hw;
	long ch;

	BNN_GEN_PARALLEL_FOR(3 * batch * chw)
	for (ch = 0; ch < c; ch++) {
		const bnn_real mu = mr[ch], r = mr[c + ch];
		double sdy = 0, sdyx = 0, qg = 0, qb = 0;
		long b;
		for (b = 0; b < batch; b++) {
			const bnn_real *xc = x + b * chw + ch * hw, *dc = dy + b * chw + ch * hw;
			double edy = 0, edyx = 0;
			long q;
			for (q = 0; q < hw; q++) {
				edy += dc[q];
				edyx += (double)dc[q] * (double)((xc[q] - mu) * r);
			}
			sdy += edy;
			sdyx += edyx;
			qg += edyx * edyx;
			qb += edy * edy;
		}
		dgamma[ch] = (bnn_real)sdyx;
		dbeta[ch] = (bnn_real)sdy;
		if (sg)
			sg[ch] = (bnn_real)((double)batch * qg);
		if (sb)
			sb[ch] = (bnn_real)((double)batch * qb);
		if (!dx)
			continue;
		for (b = 0; b < batch; b++) {
			const bnn_real *restrict xc = x + b * chw + ch * hw;
			const bnn_real *restrict dc = dy + b * chw + ch * hw;
			bnn_real *restrict dxc = dx + b * chw + ch * hw;
			const bnn_real gr = gamma[ch] * r;
			if (batch_stats) {
				const bnn_real a = (bnn_real)(sdy / (double)m),
				               s = (bnn_real)(sdyx / (double)m);
				BNN_GEN_EACH(hw, accumulate, dxc,
				             gr * (dc[i] - a - (xc[i] - mu) * r * s));
			} else {
				BNN_GEN_EACH(hw, accumulate, dxc, gr * dc[i]);
			}
		}
	}
}

#endif /* BNN_GEN_BATCHNORM_H */
