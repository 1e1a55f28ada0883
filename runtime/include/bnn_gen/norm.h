/*
 * bnn_gen/norm.h: the kernels of layernorm and groupnorm layers
 * (gen/layer_norm.c): normalisation of each example by its own statistics.
 *
 * One kernel pair serves both ops.  An example is C channels of hw values
 * each (hw = 1 for a vector of C features), split into G groups of C/G
 * consecutive channels: n = (C/G)·hw values per group, contiguous in the
 * row-major [C, H, W] layout.  Per example and group (Wu & He 2018,
 * eqs. 1-3; with G = 1 the layer normalisation of Ba et al. 2016, eqs. 3-4,
 * over every value of the example):
 *     μ = (1/n)·Σ x,  v = (1/n)·Σ (x − μ)²,  r = 1/√(v + ε),
 *     x̂ = (x − μ)·r,  y = γ·x̂ + β.
 * γ and β hold one value per parameter "cell" of len consecutive values:
 * layernorm gives every value its own (len = 1, C·hw cells, PyTorch's
 * elementwise_affine over the whole normalised shape), groupnorm one per
 * channel (len = hw, C cells).  A cell never straddles two groups.  The
 * cells repeat after `cells` of them: value q of an example has the cell
 * (q / len) mod cells.  Without a repeat cells = C·hw/len; a per-step
 * layernorm of a [T, F] sequence is T groups (the steps) of F values and
 * F cells shared by the steps (PyTorch's LayerNorm(F) on [T, F]).  A
 * group never wraps around the cells, and the gradient of a repeated cell
 * sums its repeats within the example before any squaring.
 *
 * Unlike batchnorm (bnn_gen/batchnorm.h), nothing mixes examples: there
 * are no running statistics, prediction computes what training does, and
 * the squared per-example gradients of γ and β are exact.  The forward
 * kernel leaves each example's μ and r per group in a per-example block of
 * 2G floats (mr: the G means, then the G values of r), from which backward
 * recomputes x̂ rather than storing it.
 *
 * Threads (BNN_GEN_PARALLEL_FOR): the forward pass and the input's delta
 * are shared by example; the parameter gradients by tiles of cells, each
 * cell summed by one thread over the batch in example order.  Sums are
 * accumulated in double.
 */
#ifndef BNN_GEN_NORM_H
#define BNN_GEN_NORM_H

#include "loop.h"
#include "real.h"

/* Cells of γ and β whose gradients one thread sums at a time. */
#define BNN_GEN_NORM_TILE 64

/* The mean and r = 1/√(v + ε) of the n values at x, v the biased
 * variance: the mean first, then the squared deviations from it (more
 * accurate than Σx² − nμ² when |μ| is large against the spread). */
BNN_GEN_INLINE void bnn_gen_norm_moments(long n, const bnn_real *restrict x, double eps,
                                         bnn_real *mean, bnn_real *r)
{
	double sum, ss, mu;

	BNN_GEN_DSUM(n, sum, x[i]);
	mu = sum / (double)n;
	BNN_GEN_DSUM(n, ss, ((double)x[i] - mu) * ((double)x[i] - mu));
	*mean = (bnn_real)mu;
	*r = (bnn_real)(1.0 / sqrt(ss / (double)n + eps));
}

/*
 * The forward pass of B examples of C·hw values in G groups, with γ and β
 * of C·hw/len cells; mr receives B blocks of 2G floats (μ, then r).
 */
static inline BNN_GEN_CLONES void bnn_gen_norm_forward(long batch, long c, long hw, long groups,
                                                       long len, long cells,
                                                       const bnn_real *restrict x,
                                                       const bnn_real *restrict gamma,
                                                       const bnn_real *restrict beta, double eps,
                                                       bnn_real *restrict mr, bnn_real *restrict y)
{
	const long chw = c * hw, n = chw / groups;
	long e;

	BNN_GEN_PARALLEL_FOR(3 * batch * chw)
	for (e = 0; e < batch; e++) {
		bnn_real *restrict me = mr + e * 2 * groups;
		long g;

		for (g = 0; g < groups; g++) {
			const long at = g * n, cell = at / len % cells;
			const bnn_real *restrict xg = x + e * chw + at;
			bnn_real *restrict yg = y + e * chw + at;
			bnn_real mu, r;

			bnn_gen_norm_moments(n, xg, eps, &mu, &r);
			me[g] = mu;
			me[groups + g] = r;
			if (len == 1) {
				const bnn_real *restrict gg = gamma + cell, *restrict bg =
				                                                    beta + cell;
				BNN_GEN_EACH(n, 0, yg, gg[i] * ((xg[i] - mu) * r) + bg[i]);
			} else {
				long k;
				for (k = 0; k < n / len; k++) {
					const bnn_real gk = gamma[cell + k], bk = beta[cell + k];
					const bnn_real *restrict xk = xg + k * len;
					bnn_real *restrict yk = yg + k * len;
					BNN_GEN_EACH(len, 0, yk, gk * ((xk[i] - mu) * r) + bk);
				}
			}
		}
	}
}

/*
 * The gradients of γ and β from dy (deltas of the mean loss): over the
 * batch, dγ = Σ dy·x̂ and dβ = Σ dy over each cell's values (all its
 * repeats).  sg and sb, when not NULL, receive the mean of the squared
 * per-example gradients: example i's own gradient of its loss ℓ_i is
 * B·Σ_cell dy·x̂ (dy is 1/B of ℓ_i's delta), summed over the cell's values
 * and repeats before squaring, so (1/B)·Σ_i of its square is
 * B·Σ_i (Σ_cell dy·x̂)², and likewise for β.
 */
static inline BNN_GEN_CLONES void bnn_gen_norm_param_grads(
        long batch, long c, long hw, long groups, long len, long cells, const bnn_real *restrict x,
        const bnn_real *restrict dy, const bnn_real *restrict mr, bnn_real *restrict dgamma,
        bnn_real *restrict dbeta, bnn_real *restrict sg, bnn_real *restrict sb)
{
	const long chw = c * hw, n = chw / groups, reps = chw / len / cells;
	const long tiles = (cells + BNN_GEN_NORM_TILE - 1) / BNN_GEN_NORM_TILE;
	long t;

	BNN_GEN_PARALLEL_FOR(3 * batch * chw)
	for (t = 0; t < tiles; t++) {
		const long lo = t * BNN_GEN_NORM_TILE;
		const long m = cells - lo < BNN_GEN_NORM_TILE ? cells - lo : BNN_GEN_NORM_TILE;
		double dg[BNN_GEN_NORM_TILE] = { 0 }, db[BNN_GEN_NORM_TILE] = { 0 };
		double qg[BNN_GEN_NORM_TILE] = { 0 }, qb[BNN_GEN_NORM_TILE] = { 0 };
		long e, k;

		for (e = 0; e < batch; e++) {
			const bnn_real *restrict me = mr + e * 2 * groups;
			/* the example's gradient of each cell, over its repeats */
			double es[BNN_GEN_NORM_TILE] = { 0 }, ed[BNN_GEN_NORM_TILE] = { 0 };
			long rep;
			for (rep = 0; rep < reps; rep++) {
				const long base = lo + rep * cells;
				if (len == 1 && base / n == (base + m - 1) / n) {
					/* a cell per value, the tile in one group: a
					 * loop over the tile's cells, which vectorises */
					const bnn_real *restrict xk = x + e * chw + base;
					const bnn_real *restrict dk = dy + e * chw + base;
					const bnn_real mu = me[base / n], r = me[groups + base / n];
					BNN_GEN_LOOP(m, es[i] +=
					                (double)dk[i] * (double)((xk[i] - mu) * r));
					BNN_GEN_LOOP(m, ed[i] += (double)dk[i]);
					continue;
				}
				for (k = 0; k < m; k++) {
					const long at = (base + k) * len, g = at / n;
					const bnn_real *restrict xk = x + e * chw + at;
					const bnn_real *restrict dk = dy + e * chw + at;
					const bnn_real mu = me[g], r = me[groups + g];
					long q;
					for (q = 0; q < len; q++) {
						es[k] += (double)dk[q] * (double)((xk[q] - mu) * r);
						ed[k] += dk[q];
					}
				}
			}
			BNN_GEN_LOOP(m, dg[i] += es[i]);
			BNN_GEN_LOOP(m, db[i] += ed[i]);
			BNN_GEN_LOOP(m, qg[i] += es[i] * es[i]);
			BNN_GEN_LOOP(m, qb[i] += ed[i] * ed[i]);
		}
		for (k = 0; k < m; k++) {
			dgamma[lo + k] = (bnn_real)dg[k];
			dbeta[lo + k] = (bnn_real)db[k];
			if (sg)
				sg[lo + k] = (bnn_real)((double)batch * qg[k]);
			if (sb)
				sb[lo + k] = (bnn_real)((double)batch * qb[k]);
		}
	}
}

/*
 * The input's delta, (+)= into dx: per example and group, with
 * ĝ = γ·dy the delta of x̂ and the statistics depending on every value of
 * the group,
 *     dx = r·(ĝ − (1/n)·Σ ĝ − x̂·(1/n)·Σ ĝ·x̂).
 */
static inline BNN_GEN_CLONES void bnn_gen_norm_input_delta(
        long batch, long c, long hw, long groups, long len, long cells, const bnn_real *restrict x,
        const bnn_real *restrict dy, const bnn_real *restrict gamma, const bnn_real *restrict mr,
        bnn_real *restrict dx, int accumulate)
{
	const long chw = c * hw, n = chw / groups;
	long e;

	BNN_GEN_PARALLEL_FOR(4 * batch * chw)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict me = mr + e * 2 * groups;
		long g;

		for (g = 0; g < groups; g++) {
			const long at = g * n;
			const bnn_real *restrict xg = x + e * chw + at;
			const bnn_real *restrict dg = dy + e * chw + at;
			const bnn_real *restrict gg = gamma + at / len % cells;
			bnn_real *restrict dxg = dx + e * chw + at;
			const bnn_real mu = me[g], r = me[groups + g];
			double sh, shx;
			bnn_real a, b;

			if (len == 1) {
				BNN_GEN_DSUM(n, sh, (double)gg[i] * (double)dg[i]);
				BNN_GEN_DSUM(n, shx,
				             (double)gg[i] * (double)dg[i] *
				                     (double)((xg[i] - mu) * r));
			} else {
				BNN_GEN_DSUM(n, sh, (double)gg[i / len] * (double)dg[i]);
				BNN_GEN_DSUM(n, shx,
				             (double)gg[i / len] * (double)dg[i] *
				                     (double)((xg[i] - mu) * r));
			}
			a = (bnn_real)(sh / (double)n);
			b = (bnn_real)(shx / (double)n);
			if (len == 1)
				BNN_GEN_EACH(n, accumulate, dxg,
				             r * (gg[i] * dg[i] - a - (xg[i] - mu) * r * b));
			else
				BNN_GEN_EACH(n, accumulate, dxg,
				             r * (gg[i / len] * dg[i] - a - (xg[i] - mu) * r * b));
		}
	}
}

/* The backward pass: the parameter gradients (and squared per-example
 * gradients when sg and sb are not NULL), then the input's delta when dx
 * is not NULL. */
static inline void bnn_gen_norm_backward(
        long batch, long c, long hw, long groups, long len, long cells, const bnn_real *restrict x,
        const bnn_real *restrict dy, const bnn_real *restrict gamma, const bnn_real *restrict mr,
        bnn_real *restrict dgamma, bnn_real *restrict dbeta, bnn_real *restrict sg,
        bnn_real *restrict sb, bnn_real *restrict dx, int accumulate)
{
	bnn_gen_norm_param_grads(batch, c, hw, groups, len, cells, x, dy, mr, dgamma, dbeta, sg,
	                         sb);
	if (dx)
		bnn_gen_norm_input_delta(batch, c, hw, groups, len, cells, x, dy, gamma, mr, dx,
		                         accumulate);
}

#endif /* BNN_GEN_NORM_H */
