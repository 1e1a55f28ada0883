/*
 * bnn_gen/gru.h: the kernels of gru layers (gen/layer_gru.c): a gated
 * recurrent unit run over the T steps of each example's [T, F] sequence,
 * forward and back through time, with exact per-example squared gradients
 * of its shared weights.
 *
 * Equations (Cho et al. 2014, eqs. 5-8, with the reset gate applied after
 * the hidden product as in PyTorch's nn.GRU and cuDNN), gate order r, z, n
 * (PyTorch's), h_0 = 0, for t = 1..T:
 *     r_t = σ(W_r x_t + b_ir + U_r h_{t−1} + b_hr)
 *     z_t = σ(W_z x_t + b_iz + U_z h_{t−1} + b_hz)
 *     n_t = tanh(W_n x_t + b_in + r_t ∘ (U_n h_{t−1} + b_hn))
 *     h_t = (1 − z_t) ∘ n_t + z_t ∘ h_{t−1}
 * The layer's parameters are one block of 3U(F + U + 2) values, in the
 * order of the layer's tensors: W_ih [3U, F] (rows W_r, W_z, W_n), W_hh
 * [3U, U] (U_r, U_z, U_n), b_ih [3U], b_hh [3U].  The output is h_T ([B, U])
 * or every h_t ([B, T, U]).
 *
 * Forward: the input projections of every step in one GEMM
 * (BT × F by F × 3U), then per step one GEMM of B × U by U × 3U and the
 * gates.  Workspace per layer (gen/layer_gru.c reserves it per example):
 *   q   [B, T, 3U]  the input projections, then r, z, n of every step,
 *                   then (backward) the deltas of the input pre-activations
 *   hn  [T, B, U]   U_n h_{t−1} + b_hn of every step (the reset gate's factor)
 *   hs  [T+1, B, U] h_0 = 0, h_1, ..., h_T, time-major so that the states
 *                   entering the steps are one contiguous (TB) × U matrix
 *   gh  [T, B, 3U]  backward: the deltas of the hidden pre-activations
 *   hh  [B, 3U]     one step's hidden projection U h + b_hh
 *   dh  [B, U]      backward: the delta of the state
 * and, independent of the batch, tmp [3U·max(F, U) + 3U]: one example's
 * gradient of one weight matrix and bias.
 *
 * Backward through time: per step, from δh_t, δn = δh∘(1 − z),
 * δz = δh∘(h_{t−1} − n), δa_n = δn∘(1 − n²), δa_z = δz∘z(1 − z),
 * δa_r = δa_n∘(U_n h_{t−1} + b_hn)∘r(1 − r); the input-side deltas are
 * (δa_r, δa_z, δa_n), the hidden-side (δa_r, δa_z, δa_n∘r), and
 * δh_{t−1} = δh∘z + (hidden-side deltas)·W_hh (plus the output's delta at
 * t − 1 for output = sequence).  The weight gradients are then one GEMM
 * each over all BT rows, and the input's delta one GEMM.
 *
 * Squared gradients: VOGN's ĥ needs the square of each example's total
 * gradient of the shared weights, g_i = Σ_t (its per-step outer products),
 * not the sum of per-step squares.  So per example, one GEMM over its T
 * steps gives g_i of W_ih (3U × F) and one of W_hh (3U × U) in tmp, whose
 * squares are accumulated: the same multiply-adds again as the weight
 * gradients (a per-example pass), with 3U(max(F, U) + 1) floats of scratch,
 * not B copies of the gradients.  As for dense layers the deltas are those
 * of the batch's mean loss, so the mean of the squared per-example
 * gradients is B·Σ_i (g_i)².
 *
 * Variational dropout (Gal and Ghahramani 2016, "A Theoretically Grounded
 * Application of Dropout in Recurrent Neural Networks", sec. 3 and
 * eq. 6): one mask per example on the inputs and one on the hidden state,
 * the same at every step.  The input's is applied by the caller
 * (bnn_gen_gru_mask_steps, before forward and on the input's delta after
 * backward); the hidden one, mh [B, U], enters the products U h: the
 * forward pass keeps the masked states h̃_t = h_t∘mh in hm [T, B, U]
 * (h̃_0 = 0) and multiplies those, the backward pass multiplies the
 * hidden-side deltas' product by mh (through dm [B, U]) and forms the
 * gradients of W_hh from hm.  The state itself, carried by z, is not
 * masked.  mh NULL: no hidden mask (hm and dm unused).
 *
 * Sums are in a fixed order: results do not depend on the team size
 * (these kernels run on the calling thread, besides the GEMM).
 */
#ifndef BNN_GEN_GRU_H
#define BNN_GEN_GRU_H

#include <string.h>

#include "elementwise.h"
#include "gemm.h"
#include "loop.h"
#include "noise.h"
#include "real.h"

/* tanh and σ of the gates.  In float, σ(x) = (1 + tanh(x/2))/2 through the
 * straight-line tanh of elementwise.h, so that the gate loop vectorises
 * (within 2e-7 absolutely of σ); in double (the gradient tests), the exact
 * functions. */
static inline bnn_real bnn_gen_gru_tanh1(bnn_real x)
{
#ifdef BNN_GEN_DOUBLE
	return BNN_GEN_TANH(x);
#else
	return bnn_gen_tanhf(x);
#endif
}
static inline bnn_real bnn_gen_gru_sigmoid1(bnn_real x)
{
#ifdef BNN_GEN_DOUBLE
	return bnn_gen_sigmoid1(x);
#else
	return 0.5f + 0.5f * bnn_gen_tanhf(0.5f * x);
#endif
}

/* The gates of one step for one example: q (its input projections, row
 * (b, t)) receives r, z, n; hn the hidden factor of n; hnew h_t. */
static inline void bnn_gen_gru_gates(long u, bnn_real *restrict q, const bnn_real *restrict hh,
                                     const bnn_real *restrict hprev, bnn_real *restrict hn,
                                     bnn_real *restrict hnew)
{
	long j;
	for (j = 0; j < u; j++) {
		const bnn_real r = bnn_gen_gru_sigmoid1(q[j] + hh[j]);
		const bnn_real z = bnn_gen_gru_sigmoid1(q[u + j] + hh[u + j]);
		const bnn_real n = bnn_gen_gru_tanh1(q[2 * u + j] + r * hh[2 * u + j]);
		q[j] = r;
		q[u + j] = z;
		q[2 * u + j] = n;
		hn[j] = hh[2 * u + j];
		hnew[j] = (1 - z) * n + z * hprev[j];
	}
}

/* The forward pass of B sequences of T steps of F features through U units;
 * w is the layer's parameter block; y is [B, U] (the last state) or
 * [B, T, U] (every state, when SEQUENCE). */
static inline void bnn_gen_gru_forward(long batch, long t, long f, long u, int sequence,
                                       const bnn_real *restrict x, const bnn_real *restrict w,
                                       bnn_real *restrict q, bnn_real *restrict hn,
                                       bnn_real *restrict hs, bnn_real *restrict hh,
                                       const bnn_real *restrict mh, bnn_real *restrict hm,
                                       bnn_real *restrict y)
{
	const long g = 3 * u, bu = batch * u;
	const bnn_real *wi = w, *wh = w + g * f, *bi = wh + g * u, *bh = bi + g;
	long s, b;

	bnn_gen_gemm_bias(0, 1, batch * t, g, f, 1.0, x, f, wi, f, bi, q, g);
	memset(hs, 0, (size_t)bu * sizeof *hs);
	if (mh)
		memset(hm, 0, (size_t)bu * sizeof *hm);
	for (s = 0; s < t; s++) {
		/* h_0 = 0 adds nothing: an inner dimension of 0 gives the bias */
		bnn_gen_gemm_bias(0, 1, batch, g, s > 0 ? u : 0, 1.0, (mh ? hm : hs) + s * bu, u,
		                  wh, u, bh, hh, g);
		for (b = 0; b < batch; b++)
			bnn_gen_gru_gates(u, q + (b * t + s) * g, hh + b * g, hs + s * bu + b * u,
			                  hn + s * bu + b * u, hs + (s + 1) * bu + b * u);
		if (mh && s + 1 < t)
			bnn_gen_dropout_apply(bu, hs + (s + 1) * bu, mh, hm + (s + 1) * bu);
	}
	for (b = 0; b < batch; b++) {
		if (!sequence) {
			memcpy(y + b * u, hs + t * bu + b * u, (size_t)u * sizeof *y);
			continue;
		}
		for (s = 0; s < t; s++)
			memcpy(y + (b * t + s) * u, hs + (s + 1) * bu + b * u,
			       (size_t)u * sizeof *y);
	}
}

/* y[b, s] (+)= x[b, s]∘m[b] for B examples of T steps of N values: one
 * mask per example, the same at every step (variational dropout's input
 * mask, on the input and on its delta). */
static inline void bnn_gen_gru_mask_steps(long batch, long t, long n, const bnn_real *restrict x,
                                          const bnn_real *restrict m, bnn_real *restrict y, int acc)
{
	long b, s;
	for (b = 0; b < batch; b++)
		for (s = 0; s < t; s++) {
			const bnn_real *restrict xs = x + (b * t + s) * n;
			const bnn_real *restrict mb = m + b * n;
			bnn_real *restrict ys = y + (b * t + s) * n;
			BNN_GEN_EACH(n, acc, ys, xs[i] * mb[i]);
		}
}

/* One step back for one example: from dh (δh_t, replaced by its direct
 * part δh∘z) and the step's r, z, n in q (replaced by the input-side
 * deltas), the hidden-side deltas into gh. */
static inline void bnn_gen_gru_step_back(long u, bnn_real *restrict q, const bnn_real *restrict hn,
                                         const bnn_real *restrict hprev, bnn_real *restrict dh,
                                         bnn_real *restrict gh)
{
	long j;
	for (j = 0; j < u; j++) {
		const bnn_real r = q[j], z = q[u + j], n = q[2 * u + j], d = dh[j];
		const bnn_real an = d * (1 - z) * (1 - n * n);
		const bnn_real az = d * (hprev[j] - n) * z * (1 - z);
		const bnn_real ar = an * hn[j] * r * (1 - r);
		q[j] = gh[j] = ar;
		q[u + j] = gh[u + j] = az;
		q[2 * u + j] = an;
		gh[2 * u + j] = an * r;
		dh[j] = d * z;
	}
}

/* sq[k] += B·v[k]² for k in [0, n). */
static inline BNN_GEN_CLONES void bnn_gen_gru_add_squares(long batch, long n,
                                                          const bnn_real *restrict v,
                                                          bnn_real *restrict sq)
{
	BNN_GEN_EACH(n, 1, sq, (bnn_real)batch * v[i] * v[i]);
}

/* s[k] = Σ_r x[r·ld + k] over r in [0, rows), k in [0, n). */
static inline BNN_GEN_CLONES void bnn_gen_gru_strided_sums(long rows, long n, long ld,
                                                           const bnn_real *restrict x,
                                                           bnn_real *restrict s)
{
	long r;
	memset(s, 0, (size_t)n * sizeof *s);
	for (r = 0; r < rows; r++) {
		const bnn_real *restrict xr = x + r * ld;
		BNN_GEN_EACH(n, 1, s, xr[i]);
	}
}

/* The mean of the squared per-example gradients into sq (the layer's block,
 * overwritten): per example, its gradient summed over its T steps, then
 * squared (see the top of this file). */
static inline void bnn_gen_gru_sqgrad(long batch, long t, long f, long u,
                                      const bnn_real *restrict x, const bnn_real *restrict q,
                                      const bnn_real *restrict gh, const bnn_real *restrict hs,
                                      bnn_real *restrict tmp, bnn_real *restrict sq)
{
	const long g = 3 * u, bu = batch * u, wmax = f > u ? f : u;
	bnn_real *sqi = sq, *sqh = sq + g * f, *sqbi = sqh + g * u, *sqbh = sqbi + g;
	bnn_real *tb = tmp + g * wmax;
	long b;

	memset(sq, 0, (size_t)(g * (f + u + 2)) * sizeof *sq);
	for (b = 0; b < batch; b++) {
		bnn_gen_gemm(1, 0, g, f, t, 1.0, q + b * t * g, g, x + b * t * f, f, 0.0, tmp, f);
		bnn_gen_gru_add_squares(batch, g * f, tmp, sqi);
		bnn_gen_gru_strided_sums(t, g, g, q + b * t * g, tb);
		bnn_gen_gru_add_squares(batch, g, tb, sqbi);
		/* example b's rows of gh and hs lie B rows apart (time-major) */
		bnn_gen_gemm(1, 0, g, u, t, 1.0, gh + b * g, batch * g, hs + b * u, bu, 0.0, tmp,
		             u);
		bnn_gen_gru_add_squares(batch, g * u, tmp, sqh);
		bnn_gen_gru_strided_sums(t, g, batch * g, gh + b * g, tb);
		bnn_gen_gru_add_squares(batch, g, tb, sqbh);
	}
}

/* Backward through time from dy (the output's delta, [B, U] or [B, T, U]):
 * the gradient of the layer's block into grad, the mean squared
 * per-example gradients into sq when it is not NULL, and the input's delta
 * into dx (overwritten, or accumulated when ACC) when it is not NULL.
 * q, hn and hs are the forward pass's; q is overwritten. */
static inline void bnn_gen_gru_backward(long batch, long t, long f, long u, int sequence,
                                        const bnn_real *restrict x, const bnn_real *restrict w,
                                        const bnn_real *restrict dy, bnn_real *restrict q,
                                        const bnn_real *restrict hn, const bnn_real *restrict hs,
                                        const bnn_real *restrict mh, const bnn_real *restrict hm,
                                        bnn_real *restrict dm, bnn_real *restrict gh,
                                        bnn_real *restrict dh, bnn_real *restrict grad,
                                        bnn_real *restrict sq, bnn_real *restrict tmp,
                                        bnn_real *restrict dx, int acc)
{
	const long g = 3 * u, bu = batch * u;
	const bnn_real *wi = w, *wh = w + g * f, *hp = mh ? hm : hs; /* what U multiplied */
	bnn_real *dwi = grad, *dwh = grad + g * f, *dbi = dwh + g * u, *dbh = dbi + g;
	long s, b;

	for (b = 0; b < batch; b++)
		memcpy(dh + b * u, sequence ? dy + (b * t + t - 1) * u : dy + b * u,
		       (size_t)u * sizeof *dh);
	for (s = t - 1; s >= 0; s--) {
		for (b = 0; b < batch; b++)
			bnn_gen_gru_step_back(u, q + (b * t + s) * g, hn + s * bu + b * u,
			                      hs + s * bu + b * u, dh + b * u,
			                      gh + (s * batch + b) * g);
		if (s == 0)
			break; /* h_0 is no parameter */
		if (mh) {
			bnn_gen_gemm(0, 0, batch, u, g, 1.0, gh + s * batch * g, g, wh, u, 0.0, dm,
			             u);
			bnn_gen_dropout_mask_into(bu, dm, mh, dh, 1);
		} else {
			bnn_gen_gemm(0, 0, batch, u, g, 1.0, gh + s * batch * g, g, wh, u, 1.0, dh,
			             u);
		}
		if (sequence)
			for (b = 0; b < batch; b++) {
				const bnn_real *restrict d = dy + (b * t + s - 1) * u;
				bnn_real *restrict hb = dh + b * u;
				BNN_GEN_EACH(u, 1, hb, d[i]);
			}
	}
	bnn_gen_gemm(1, 0, g, f, batch * t, 1.0, q, g, x, f, 0.0, dwi, f);
	bnn_gen_col_sums(batch * t, g, q, dbi);
	bnn_gen_gemm(1, 0, g, u, batch * t, 1.0, gh, g, hp, u, 0.0, dwh, u);
	bnn_gen_col_sums(batch * t, g, gh, dbh);
	if (sq)
		bnn_gen_gru_sqgrad(batch, t, f, u, x, q, gh, hp, tmp, sq);
	if (dx)
		bnn_gen_gemm(0, 0, batch * t, f, g, 1.0, q, g, wi, f, acc ? 1.0 : 0.0, dx, f);
}

#endif /* BNN_GEN_GRU_H */
