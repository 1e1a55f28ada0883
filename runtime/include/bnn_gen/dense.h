/*
 * bnn_gen/dense.h: the kernels of dense layers (gen/layer_dense.c).
 *
 * The point layer's forward, backward and mean of squared per-example
 * gradients, and the two sampled posteriors of a dense layer: dropout(p)'s
 * backward to the input (its masks: bnn_gen/noise.h) and meanfield by the
 * local reparameterisation trick.
 *
 * The products are bnn_gen_gemm's (threaded inside bnn_sgemm); the
 * element-wise loops over a batch run on the calling thread's OpenMP team
 * (BNN_GEN_PEACH), and the bias's sums over the batch are shared by
 * column (bnn_gen_col_sums), each column summed by one thread in row order.
 */
#ifndef BNN_GEN_DENSE_H
#define BNN_GEN_DENSE_H

#include <string.h>

#include "gemm.h"
#include "loop.h"
#include "real.h"

/* ---- dense ---------------------------------------------------------------- */

/* Y = X·Wᵀ + b: X is B×K, W is N×K, b has N entries (NULL: no bias). */
static inline void bnn_gen_dense_forward(long batch, long k, long n, const bnn_real *restrict x,
                                         const bnn_real *restrict w, const bnn_real *restrict b,
                                         bnn_real *restrict y)
{
	if (b)
		bnn_gen_gemm_bias(0, 1, batch, n, k, 1.0, x, k, w, k, b, y, n);
	else
		bnn_gen_gemm(0, 1, batch, n, k, 1.0, x, k, w, k, 0.0, y, n);
}

/* Y = relu(X·Wᵀ + b), a dense layer and the relu that alone reads it, in
 * one product (bnn_gen_gemm_bias_relu): the same values as
 * bnn_gen_dense_forward then bnn_gen_relu_forward, without the pass over
 * Y.  The relu's backward takes its mask from Y (y > 0 where x > 0). */
static inline void bnn_gen_dense_relu_forward(long batch, long k, long n,
                                              const bnn_real *restrict x,
                                              const bnn_real *restrict w,
                                              const bnn_real *restrict b, bnn_real *restrict y)
{
	bnn_gen_gemm_bias_relu(0, 1, batch, n, k, 1.0, x, k, w, k, b, y, n);
}

/* dW = Gᵀ·X (N×K) and db = Σ_i G_i, overwriting dw and db (db may be NULL). */
static inline void bnn_gen_dense_backward_params(long batch, long k, long n,
                                                 const bnn_real *restrict x,
                                                 const bnn_real *restrict g, bnn_real *restrict dw,
                                                 bnn_real *restrict db)
{
	bnn_gen_gemm(1, 0, n, k, batch, 1.0, g, n, x, k, 0.0, dw, k);
	if (!db)
		return;
	bnn_gen_col_sums(batch, n, g, db);
}

/* dX (+)= G·W: G is B×N, W is N×K. */
static inline void bnn_gen_dense_backward_input(long batch, long k, long n,
                                                const bnn_real *restrict g,
                                                const bnn_real *restrict w, bnn_real *restrict dx,
                                                int accumulate)
{
	bnn_gen_gemm(0, 0, batch, k, n, 1.0, g, n, w, k, accumulate ? 1.0 : 0.0, dx, k);
}

/* dX = G·W where y > 0, else 0: the input's delta of a dense layer whose
 * input is a relu's output y, taken on through the relu's backward in
 * the same product (bnn_gen_gemm_relu_mask): dx is the delta of the
 * relu's input, written, not accumulated. */
static inline void bnn_gen_dense_backward_input_relu(long batch, long k, long n,
                                                     const bnn_real *restrict g,
                                                     const bnn_real *restrict w,
                                                     const bnn_real *restrict y,
                                                     bnn_real *restrict dx)
{
	bnn_gen_gemm_relu_mask(0, 0, batch, k, n, 1.0, g, n, w, k, y, k, dx, k);
}

/*
 * The mean of squared per-example gradients of a dense layer,
 * (1/B)·Σ_i g_i∘g_i, without forming any g_i.  Example i's weight gradient
 * is the outer product (B·G_i)ᵀ·X_i (G holds deltas of the mean loss, so
 * B·G_i is example i's own delta), hence
 *     (1/B)·Σ_i (B·G_i)²ᵀ·X_i² = B·(G∘G)ᵀ·(X∘X),
 * one GEMM on squared operands; for the bias, B·Σ_i G_i∘G_i.  x2 (B×K) and
 * g2 (B×N) are scratch.  In float, on CPUs with AVX512-BF16, the product
 * runs on bfloat16 squares with float sums (sqgrad_bf16.c; within 0.8%,
 * at twice the speed, packing the squares into x2 and g2); the bias's
 * squares are summed here, in float, either way.
 */
int bnn_sqgrad_bf16(long batch, long k, long n, const float *x, const float *g, float *sw,
                    float *x2, float *g2);

static inline BNN_GEN_CLONES void bnn_gen_dense_sqgrad(long batch, long k, long n,
                                                       const bnn_real *restrict x,
                                                       const bnn_real *restrict g,
                                                       bnn_real *restrict sw, bnn_real *restrict sb,
                                                       bnn_real *restrict x2, bnn_real *restrict g2)
{
	BNN_GEN_PEACH(batch * n, 1, 0, g2, g[i] * g[i]);
	if (sb) {
		bnn_gen_col_sums(batch, n, g2, sb);
		BNN_GEN_EACH(n, 0, sb, sb[i] * (bnn_real)batch);
	}
#ifndef BNN_GEN_DOUBLE
	if (bnn_sqgrad_bf16(batch, k, n, x, g, sw, x2, g2))
		return;
#endif
	BNN_GEN_PEACH(batch * k, 1, 0, x2, x[i] * x[i]);
	bnn_gen_gemm(1, 0, n, k, batch, (double)batch, g2, n, x2, k, 0.0, sw, k);
}

/*
 * The mean of squared per-example gradients of a per_step dense layer, the
 * same weights on each of an example's T rows (X is B·T×K, G B·T×N).
 * Example i's gradient is the sum over its steps, B·G_iᵀ·X_i, and it is
 * that sum which is squared (VOGN's ĥ is the square of each example's
 * total gradient), so the product of squares above does not apply:
 *     sw = B·Σ_i (G_iᵀ·X_i)∘(G_iᵀ·X_i),   sb = B·Σ_i (Σ_t G_it)∘(Σ_t G_it),
 * forming one example's G_iᵀ·X_i at a time in tmp (N·K + N floats,
 * independent of the batch).  Cost: B products of T rows, B·T·N·K
 * multiply-adds (as many as the weight gradient itself), and B·N·(K + 1)
 * squares.  With T = 1 it is bnn_gen_dense_sqgrad's value.
 */
static inline BNN_GEN_CLONES void bnn_gen_dense_steps_sqgrad(
        long batch, long t, long k, long n, const bnn_real *restrict x, const bnn_real *restrict g,
        bnn_real *restrict sw, bnn_real *restrict sb, bnn_real *restrict tmp)
{
	bnn_real *const tb = tmp + n * k;
	const bnn_real b = (bnn_real)batch;
	long e;

	for (e = 0; e < batch; e++) {
		bnn_gen_gemm(1, 0, n, k, t, 1.0, g + e * t * n, n, x + e * t * k, k, 0.0, tmp, k);
		BNN_GEN_EACH(n * k, e > 0, sw, b * tmp[i] * tmp[i]);
		if (!sb)
			continue;
		bnn_gen_col_sums(t, n, g + e * t * n, tb);
		BNN_GEN_EACH(n, e > 0, sb, b * tb[i] * tb[i]);
	}
}

/* ---- dense posteriors: dropout(p) and meanfield -------------------------- */

/* Dropout backward to the input: dX (+)= (G·W)∘M; G is B×N, W N×K, M B×K.
 * scratch (B×K) is used only when accumulating. */
static inline void bnn_gen_dropout_backward_input(long batch, long k, long n,
                                                  const bnn_real *restrict g,
                                                  const bnn_real *restrict w,
                                                  const bnn_real *restrict mask,
                                                  bnn_real *restrict dx, bnn_real *restrict scratch,
                                                  int accumulate)
{
	if (!accumulate) {
		bnn_gen_dense_backward_input(batch, k, n, g, w, dx, 0);
		BNN_GEN_PEACH(batch * k, 1, 0, dx, dx[i] * mask[i]);
		return;
	}
	bnn_gen_dense_backward_input(batch, k, n, g, w, scratch, 0);
	BNN_GEN_PEACH(batch * k, 1, 1, dx, scratch[i] * mask[i]);
}

/*
 * Meanfield dense forward by the local reparameterisation trick (Kingma,
 * Salimans and Welling 2015, eq. 6-7; Bayes-by-Backprop's estimator with
 * the noise moved from the weights to the pre-activations):
 *     γ = X·Wᵀ + b,   ν = (X∘X)·(σ_W∘σ_W)ᵀ + σ_b∘σ_b,   Y = γ + √ν∘ε.
 * X is B×K; W and its σ_W are N×K; b and σ_b have N entries (both NULL:
 * no bias); eps (B×N) holds ε.  Writes x2 = X∘X (B×K scratch), var =
 * σ_W² (N·K) followed by σ_b² (N, with a bias), sd = √ν (B×N, for the
 * backward pass) and y.
 */
static inline void bnn_gen_lrt_forward(long batch, long k, long n, const bnn_real *restrict x,
                                       const bnn_real *restrict w, const bnn_real *restrict b,
                                       const bnn_real *restrict sw, const bnn_real *restrict sb,
                                       const bnn_real *restrict eps, bnn_real *restrict x2,
                                       bnn_real *restrict var, bnn_real *restrict sd,
                                       bnn_real *restrict y)
{
	bnn_real *vb = sb ? var + n * k : NULL;

	bnn_gen_dense_forward(batch, k, n, x, w, b, y);
	BNN_GEN_PEACH(batch * k, 1, 0, x2, x[i] * x[i]);
	BNN_GEN_PEACH(n * k, 1, 0, var, sw[i] * sw[i]);
	if (vb)
		BNN_GEN_EACH(n, 0, vb, sb[i] * sb[i]);
	/* ν is a sum of non-negative terms, so never negative */
	bnn_gen_dense_forward(batch, k, n, x2, var, vb, sd);
	BNN_GEN_PEACH(batch * n, 1, 0, sd, BNN_GEN_SQRT(sd[i]));
	BNN_GEN_PEACH(batch * n, 1, 1, y, sd[i] * eps[i]);
}

/* ∂L/∂ν of one output: g·ε/(2√ν), taken as 0 where √ν = 0 (σ = 0 there,
 * so ν does not move to first order). */
static inline bnn_real bnn_gen_lrt_gnu1(bnn_real g, bnn_real e, bnn_real s)
{
	return s > 0 ? g * e / (2 * s) : 0;
}

/*
 * Meanfield dense backward, the part of σ.  With G = ∂L/∂Y (B×N), ε and
 * s = √ν from the forward pass:
 *     Gν = G∘ε/(2s)                       into gnu (B×N, always)
 *     ∂L/∂σ_W = 2σ_W∘(Gνᵀ·(X∘X))          into gsw (N×K, overwritten)
 *     ∂L/∂σ_b = 2σ_b∘Σ_i Gν_i             into gsb (N, overwritten)
 * gsw NULL: only gnu is written (for bnn_gen_lrt_backward_input); gsb NULL
 * (with sb): no bias.  x2 (B×K) is scratch.  The mean's gradients are those
 * of a plain dense layer (bnn_gen_dense_backward_params).
 */
static inline void bnn_gen_lrt_backward_sigma(
        long batch, long k, long n, const bnn_real *restrict x, const bnn_real *restrict g,
        const bnn_real *restrict eps, const bnn_real *restrict sd, const bnn_real *restrict sw,
        const bnn_real *restrict sb, bnn_real *restrict gsw, bnn_real *restrict gsb,
        bnn_real *restrict gnu, bnn_real *restrict x2)
{
	BNN_GEN_PEACH(batch * n, 1, 0, gnu, bnn_gen_lrt_gnu1(g[i], eps[i], sd[i]));
	if (!gsw)
		return;
	BNN_GEN_PEACH(batch * k, 1, 0, x2, x[i] * x[i]);
	bnn_gen_gemm(1, 0, n, k, batch, 1.0, gnu, n, x2, k, 0.0, gsw, k);
	BNN_GEN_PEACH(n * k, 1, 0, gsw, 2 * sw[i] * gsw[i]);
	if (!gsb || !sb)
		return;
	bnn_gen_col_sums(batch, n, gnu, gsb);
	BNN_GEN_EACH(n, 0, gsb, 2 * sb[i] * gsb[i]);
}

/*
 * Meanfield dense backward to the input:
 *     dX (+)= G·W + 2X∘(Gν·σ_W²),
 * with gnu = Gν (B×N) from bnn_gen_lrt_backward_sigma and var = σ_W²
 * (N×K) from bnn_gen_lrt_forward; t (B×K) is scratch.
 */
static inline void bnn_gen_lrt_backward_input(
        long batch, long k, long n, const bnn_real *restrict g, const bnn_real *restrict w,
        const bnn_real *restrict gnu, const bnn_real *restrict var, const bnn_real *restrict x,
        bnn_real *restrict dx, bnn_real *restrict t, int accumulate)
{
	bnn_gen_dense_backward_input(batch, k, n, g, w, dx, accumulate);
	bnn_gen_gemm(0, 0, batch, k, n, 1.0, gnu, n, var, k, 0.0, t, k);
	BNN_GEN_PEACH(batch * k, 1, 1, dx, 2 * x[i] * t[i]);
}

#endif /* BNN_GEN_DENSE_H */
