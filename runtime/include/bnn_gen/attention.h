/*
 * bnn_gen/attention.h: the kernels of attention layers
 * (gen/layer_attention.c): multi-head self-attention over each example's
 * [T, F] sequence, forward and back, with exact per-example squared
 * gradients of its shared projections.
 *
 * Equations (Vaswani et al. 2017, sec. 3.2.1 eq. 1 and sec. 3.2.2), D the
 * layer's dim, H heads of d = D/H values, per example X [T, F]:
 *     [Q K V] = X W_inᵀ + b_in                      (W_in [3D, F], rows Q, K, V)
 *     S_h = Q_h K_hᵀ / √d  (+ −∞ above the diagonal when causal)
 *     A_h = softmax(S_h) row by row (the row's maximum subtracted first)
 *     O = [A_1 V_1 ... A_H V_H]                    ([T, D], head h at columns hd..)
 *     Y = O W_outᵀ + b_out                          (W_out [D, D])
 * Q_h, K_h, V_h are columns hd..hd + d − 1 of Q, K, V.  The layer's
 * parameters are one block of 3D(F + 1) + D(D + 1) values, in the order of
 * its tensors: W_in, b_in, W_out, b_out (PyTorch's nn.MultiheadAttention
 * in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias).
 *
 * Forward: the projections of all BT rows in one GEMM (BT × F by F × 3D),
 * per example and head two GEMMs (T × d by d × T, T × T by T × d) and the
 * softmax, then the output projection in one GEMM (BT × D by D × D).
 * Workspace per example (gen/layer_attention.c reserves it):
 *   qkv  [T, 3D]     Q, K, V
 *   a    [H, T, T]   the attention weights A_h, kept for backward
 *   o    [T, D]      the heads' outputs
 *   dqkv [T, 3D]     backward: the deltas of Q, K, V
 *   do   [T, D]      backward: the delta of O
 * that is 8TD + HT² floats per example (for T = 64, D = 128, H = 4: 82k
 * floats, 328 KB); and, independent of the batch, ds [T, T] (one head's
 * delta of A, then of S) and tmp [max(3DF, D²) + 3D]: one example's
 * gradient of one projection.
 *
 * Backward, per example and head, from δO_h: δA = δO_h V_hᵀ,
 * δV_h = A_hᵀ δO_h, δS = A ∘ (δA − rowsum(A ∘ δA)) (the softmax's
 * Jacobian; masked entries have A = 0 and get no delta), δQ_h = δS K_h/√d,
 * δK_h = δSᵀ Q_h/√d.  The weight gradients are one GEMM each over all BT
 * rows, and the input's delta one GEMM.
 *
 * The gradient of b_K is zero: b_K adds q·b_K to every score of a row,
 * which the softmax ignores (and Σ_s δS_rs = 0).  Summed from δK it would
 * be rounding noise, which the optimizers would follow; it is written as
 * an exact 0, and so is its squared gradient.
 *
 * Squared gradients: VOGN's ĥ needs the square of each example's total
 * gradient of the shared projections, summed over its T positions before
 * squaring; per example, one GEMM over its T rows gives it for W_in
 * (3D × F) and one for W_out (D × D) in tmp, whose squares are
 * accumulated: the projections' weight-gradient multiply-adds again, with
 * scratch independent of the batch.  As for dense layers the deltas are
 * those of the batch's mean loss, so the mean of the squared per-example
 * gradients is B·Σ_i (g_i)².
 *
 * Sums are in a fixed order: results do not depend on the team size
 * (these kernels run on the calling thread, besides the GEMM).
 */
#ifndef BNN_GEN_ATTENTION_H
#define BNN_GEN_ATTENTION_H

#include <string.h>

#include "dense.h"
#include "elementwise.h"
#include "gemm.h"
#include "gru.h"
#include "loop.h"
#include "real.h"

/* The shape of an attention layer: T positions of F features, dim D in
 * H heads, and whether it is causal. */
struct bnn_gen_attn {
	long t, f, d, h;
	int causal;
};

/* One row of scores s [n] (the first n of the row, the rest masked) to its
 * softmax, the row's maximum subtracted first; masked entries [n, t) to 0.
 * The maximum, the exponentials (bnn_gen_expf_neg), the sum and the
 * normalisation are loops that vectorise; the sum is bnn_gen_sum's fixed
 * order, and the row is multiplied by 1/sum (a vector division per 16
 * values took a fifth of the attention's own time). */
BNN_GEN_INLINE void bnn_gen_attn_softmax_row(long n, long t, bnn_real *restrict s)
{
	const bnn_real m = bnn_gen_max(n, s);
	bnn_real rz;
	long j;
	BNN_GEN_EACH(n, 0, s, BNN_GEN_EXP_NEG(s[i] - m));
	rz = 1 / bnn_gen_sum(n, s);
	BNN_GEN_EACH(n, 0, s, s[i] * rz);
	for (j = n; j < t; j++)
		s[j] = 0;
}

/* The attention of one example: from its qkv [T, 3D], the weights a
 * [H, T, T] and the heads' outputs o [T, D]. */
static inline BNN_GEN_CLONES void bnn_gen_attn_example(const struct bnn_gen_attn *g,
                                                       const bnn_real *qkv, bnn_real *a,
                                                       bnn_real *o)
{
	const long t = g->t, dd = g->d, dh = g->d / g->h, ld = 3 * g->d;
	const bnn_real scale = (bnn_real)(1.0 / BNN_GEN_SQRT((bnn_real)dh));
	long h, r;
	for (h = 0; h < g->h; h++) {
		const bnn_real *q = qkv + h * dh, *k = q + dd, *v = k + dd;
		bnn_real *ah = a + h * t * t;
		bnn_gen_gemm(0, 1, t, t, dh, scale, q, ld, k, ld, 0.0, ah, t);
		for (r = 0; r < t; r++)
			bnn_gen_attn_softmax_row(g->causal ? r + 1 : t, t, ah + r * t);
		bnn_gen_gemm(0, 0, t, dh, t, 1.0, ah, t, v, ld, 0.0, o + h * dh, dd);
	}
}

/* The forward pass of B sequences; w is the layer's parameter block, y
 * [B, T, D]; qkv, a and o are kept for backward. */
static inline void bnn_gen_attn_forward(const struct bnn_gen_attn *g, long batch,
                                        const bnn_real *restrict x, const bnn_real *restrict w,
                                        bnn_real *restrict qkv, bnn_real *restrict a,
                                        bnn_real *restrict o, bnn_real *restrict y)
{
	const long t = g->t, f = g->f, d = g->d, rows = batch * g->t;
	const bnn_real *wi = w, *bi = wi + 3 * d * f, *wo = bi + 3 * d, *bo = wo + d * d;
	long b;
	bnn_gen_gemm_bias(0, 1, rows, 3 * d, f, 1.0, x, f, wi, f, bi, qkv, 3 * d);
	for (b = 0; b < batch; b++)
		bnn_gen_attn_example(g, qkv + b * t * 3 * d, a + b * g->h * t * t, o + b * t * d);
	bnn_gen_gemm_bias(0, 1, rows, d, d, 1.0, o, d, wo, d, bo, y, d);
}

/* ds [T, T] (δA of one head) to δS, through the softmax's Jacobian:
 * δS_ij = A_ij (δA_ij − Σ_k A_ik δA_ik), the sum in double, in
 * BNN_GEN_DSUM's fixed order (a loop that vectorises, where one running
 * sum is a serial chain of additions). */
BNN_GEN_INLINE void bnn_gen_attn_softmax_back(long t, const bnn_real *restrict a,
                                              bnn_real *restrict ds)
{
	long r;
	for (r = 0; r < t; r++) {
		const bnn_real *restrict ar = a + r * t;
		bnn_real *restrict dr = ds + r * t, dot;
		double sum;
		BNN_GEN_DSUM(t, sum, (double)ar[i] * (double)dr[i]);
		dot = (bnn_real)sum;
		BNN_GEN_EACH(t, 0, dr, ar[i] * (dr[i] - dot));
	}
}

/* One example back through its heads: from do [T, D] (δO), its qkv and a,
 * the deltas of Q, K, V into dqkv [T, 3D]; ds is [T, T] scratch. */
static inline BNN_GEN_CLONES void bnn_gen_attn_example_back(const struct bnn_gen_attn *g,
                                                            const bnn_real *qkv, const bnn_real *a,
                                                            const bnn_real *dout, bnn_real *dqkv,
                                                            bnn_real *ds)
{
	const long t = g->t, dd = g->d, dh = g->d / g->h, ld = 3 * g->d;
	const bnn_real scale = (bnn_real)(1.0 / BNN_GEN_SQRT((bnn_real)dh));
	long h;
	for (h = 0; h < g->h; h++) {
		const bnn_real *q = qkv + h * dh, *k = q + dd, *v = k + dd;
		const bnn_real *ah = a + h * t * t, *doh = dout + h * dh;
		bnn_real *dq = dqkv + h * dh, *dk = dq + dd, *dv = dk + dd;
		bnn_gen_gemm(0, 1, t, t, dh, 1.0, doh, dd, v, ld, 0.0, ds, t);
		bnn_gen_gemm(1, 0, t, dh, t, 1.0, ah, t, doh, dd, 0.0, dv, ld);
		bnn_gen_attn_softmax_back(t, ah, ds);
		bnn_gen_gemm(0, 0, t, dh, t, scale, ds, t, k, ld, 0.0, dq, ld);
		bnn_gen_gemm(1, 0, t, dh, t, scale, ds, t, q, ld, 0.0, dk, ld);
	}
}

/* The key part of a [3D] bias gradient (see the top of this file) to 0. */
static inline void bnn_gen_attn_zero_key(long d, bnn_real *restrict g3)
{
	memset(g3 + d, 0, (size_t)d * sizeof *g3);
}

/* The mean of the squared per-example gradients into sq (the layer's block,
 * overwritten): per example, the gradient of each projection summed over
 * its T positions, then squared (see the top of this file). */
static inline BNN_GEN_CLONES void bnn_gen_attn_sqgrad(const struct bnn_gen_attn *g, long batch,
                                                      const bnn_real *restrict x,
                                                      const bnn_real *restrict dqkv,
                                                      const bnn_real *restrict o,
                                                      const bnn_real *restrict dy,
                                                      bnn_real *restrict tmp, bnn_real *restrict sq)
{
	const long t = g->t, f = g->f, d = g->d, e = 3 * d;
	const long wmax = e * f > d * d ? e * f : d * d;
	bnn_real *sqi = sq, *sqbi = sqi + e * f, *sqo = sqbi + e, *sqbo = sqo + d * d;
	bnn_real *tb = tmp + wmax;
	long b;
	memset(sq, 0, (size_t)(e * (f + 1) + d * (d + 1)) * sizeof *sq);
	for (b = 0; b < batch; b++) {
		const bnn_real *xb = x + b * t * f, *qb = dqkv + b * t * e;
		const bnn_real *ob = o + b * t * d, *yb = dy + b * t * d;
		bnn_gen_gemm(1, 0, e, f, t, 1.0, qb, e, xb, f, 0.0, tmp, f);
		bnn_gen_gru_add_squares(batch, e * f, tmp, sqi);
		bnn_gen_gru_strided_sums(t, e, e, qb, tb);
		bnn_gen_gru_add_squares(batch, e, tb, sqbi);
		bnn_gen_gemm(1, 0, d, d, t, 1.0, yb, d, ob, d, 0.0, tmp, d);
		bnn_gen_gru_add_squares(batch, d * d, tmp, sqo);
		bnn_gen_gru_strided_sums(t, d, d, yb, tb);
		bnn_gen_gru_add_squares(batch, d, tb, sqbo);
	}
	bnn_gen_attn_zero_key(d, sqbi);
}

/* Backward from dy ([B, T, D], the output's delta): the gradient of the
 * layer's block into grad, the mean squared per-example gradients into sq
 * when it is not NULL, and the input's delta into dx (overwritten, or
 * accumulated when ACC) when it is not NULL.  qkv, a and o are the forward
 * pass's; dqkv and dout are workspace like them, ds and tmp the scratch
 * independent of the batch. */
static inline void bnn_gen_attn_backward(const struct bnn_gen_attn *g, long batch,
                                         const bnn_real *restrict x, const bnn_real *restrict w,
                                         const bnn_real *restrict dy, const bnn_real *qkv,
                                         const bnn_real *a, const bnn_real *o, bnn_real *dqkv,
                                         bnn_real *dout, bnn_real *ds, bnn_real *restrict grad,
                                         bnn_real *restrict sq, bnn_real *tmp,
                                         bnn_real *restrict dx, int acc)
{
	const long t = g->t, f = g->f, d = g->d, e = 3 * d, rows = batch * g->t;
	const bnn_real *wi = w, *wo = w + e * (f + 1);
	bnn_real *dwi = grad, *dbi = dwi + e * f, *dwo = dbi + e, *dbo = dwo + d * d;
	long b;
	bnn_gen_gemm(1, 0, d, d, rows, 1.0, dy, d, o, d, 0.0, dwo, d);
	bnn_gen_col_sums(rows, d, dy, dbo);
	bnn_gen_gemm(0, 0, rows, d, d, 1.0, dy, d, wo, d, 0.0, dout, d);
	for (b = 0; b < batch; b++)
		bnn_gen_attn_example_back(g, qkv + b * t * e, a + b * g->h * t * t,
		                          dout + b * t * d, dqkv + b * t * e, ds);
	bnn_gen_gemm(1, 0, e, f, rows, 1.0, dqkv, e, x, f, 0.0, dwi, f);
	bnn_gen_col_sums(rows, e, dqkv, dbi);
	bnn_gen_attn_zero_key(d, dbi);
	if (sq)
		bnn_gen_attn_sqgrad(g, batch, x, dqkv, o, dy, tmp, sq);
	if (dx)
		bnn_gen_gemm(0, 0, rows, f, e, 1.0, dqkv, e, wi, f, acc ? 1.0 : 0.0, dx, f);
}

#endif /* BNN_GEN_ATTENTION_H */
