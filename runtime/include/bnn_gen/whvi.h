/*
 * bnn_gen/whvi.h: the kernels of whvi layers, Walsh-Hadamard variational
 * inference (gen/layer_whvi.c; docs/whvi.md).
 *
 * On the calling thread's OpenMP team (bnn_gen/loop.h): the per-example
 * products are shared by example; the sums over the batch of the
 * gradients and squared gradients (S1, S2, μ, ρ, the bias) by column, in
 * chunks of BNN_GEN_WHVI_COLS values, each summed by one thread over the
 * examples in order.  The transforms are bnn_fwht_batch's; the flows stay
 * on the calling thread.
 */
#ifndef BNN_GEN_WHVI_H
#define BNN_GEN_WHVI_H

#include <string.h>

#include "bnn.h"
#include "elementwise.h"
#include "loop.h"
#include "real.h"

/* ---- whvi: Walsh-Hadamard variational inference (dense layers) ------------
 * Rossi et al., "Walsh-Hadamard Variational Inference for Bayesian Deep
 * Learning" (NeurIPS 2020).  A layer of din inputs and dout outputs is
 * `stack` square blocks of side d = 2^⌈log2 din⌉ (Algorithm 1: the input
 * padded with zeros to d, ⌈dout/d⌉ blocks stacked for the outputs), block
 * j computing, for one example x,
 *     y_j = S1_j·H·diag(g_j)·H·S2_j·x                         (eq. 2)
 * with H the orthonormal Walsh-Hadamard matrix and g_j ~ q(g) =
 * N(μ_j, diag(σ_j²)), σ = softplus(ρ).  With rng, g = μ + σ∘ε is drawn per
 * example (ε in the noise loop): the product W·x then has exactly the
 * distribution of section 2.3, eq. 6, so this is the local
 * reparameterisation; without rng, g = μ.  Optional planar flows
 * (appendix C, eq. 20) transform each example's g first.  The tensors of a
 * layer are [stack, d] (S1, S2, μ, ρ) laid out block after block, so that
 * one example's padded outputs are the stack·d values o = j·d + k, of
 * which the first dout are the layer's.  Every product with H is a fast
 * Walsh-Hadamard transform, two per example and block forward, two
 * backward: O(d log d) instead of O(d²). */

/* Zeroes n values of a gradient g and, when q is not NULL, of its
 * squared per-example gradients. */
static inline void bnn_gen_whvi_zero(long n, bnn_real *restrict g, bnn_real *restrict q)
{
	memset(g, 0, (size_t)n * sizeof *g);
	if (q)
		memset(q, 0, (size_t)n * sizeof *q);
}

/* x ← H·x for `count` vectors of length d (a power of two) stored one after
 * another, H orthonormal.  Float: the runtime's bnn_fwht_batch; double
 * (tests): its double reference, bnn_fwht_ref, vector by vector
 * (runtime/kernels/fwht.c). */
static inline void bnn_gen_whvi_fwht(long count, long d, bnn_real *restrict x)
{
#ifdef BNN_GEN_DOUBLE
	long v;

	for (v = 0; v < count; v++)
		(void)bnn_fwht_ref(x + v * d, d, BNN_FWHT_ORTHO, NULL); /* d is valid */
#else
	(void)bnn_fwht_batch(x, count, d, BNN_FWHT_ORTHO, NULL); /* d is valid */
#endif
}

/* σ = softplus(ρ) and its derivative sigmoid(ρ), over n values (once per
 * pass, for the noise and for the chain rule to ρ). */
static inline void bnn_gen_whvi_scales(long n, const bnn_real *restrict rho, bnn_real *restrict sd,
                                       bnn_real *restrict sg)
{
	BNN_GEN_EACH(n, 0, sd, bnn_gen_softplus1(rho[i]));
	BNN_GEN_EACH(n, 0, sg, bnn_gen_sigmoid1(rho[i]));
}

/* The shape of a whvi layer (generated code declares one as a static
 * const, so every field is a constant where the kernels are inlined). */
typedef struct bnn_gen_whvi {
	long din, dout; /* the layer's inputs and outputs */
	long d, stack;  /* block side 2^⌈log2 din⌉, ⌈dout/d⌉ blocks */
	long flows;     /* planar flows on g (0: q(g) Gaussian) */
} bnn_gen_whvi;

/* Example e's g, value o (of stack·d): from the per-example gex (flows),
 * or μ + σ·ε (eps not NULL), or μ. */
static inline bnn_real bnn_gen_whvi_g(const bnn_real *restrict gmu, const bnn_real *restrict gsd,
                                      const bnn_real *restrict eps, long o)
{
	return eps ? gmu[o] + gsd[o] * eps[o] : gmu[o];
}

/*
 * Forward, for the batch (x is B×din, y B×dout):
 *     t = H·(S2∘x̄)   (x̄: x padded with zeros to d, the same for every block)
 *     v = H·(g∘t)
 *     y = S1∘v + b   (+ σ_b∘ε_b with bias noise: the bias is meanfield, by
 *                     the local reparameterisation of Kingma et al.)
 * t and v (B × stack·d) are kept for the backward pass.  g is example e's
 * row of gex (B × stack·d, after the flows) when gex is not NULL, else
 * μ + σ∘ε_e (eps B × stack·d) when eps is not NULL, else μ.  bmu NULL: no
 * bias; beps NULL: the bias's mean.
 */
static inline void bnn_gen_whvi_forward(const bnn_gen_whvi *s, long batch,
                                        const bnn_real *restrict x, const bnn_real *restrict s1,
                                        const bnn_real *restrict s2, const bnn_real *restrict gmu,
                                        const bnn_real *restrict gsd, const bnn_real *restrict eps,
                                        const bnn_real *restrict gex, const bnn_real *restrict bmu,
                                        const bnn_real *restrict bsd, const bnn_real *restrict beps,
                                        bnn_real *restrict t, bnn_real *restrict v,
                                        bnn_real *restrict y)
{
	const long d = s->d, sd = s->stack * s->d, din = s->din, dout = s->dout;
	long e;

	BNN_GEN_PARALLEL_FOR(batch * sd)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict xe = x + e * din;
		long j;
		for (j = 0; j < s->stack; j++) {
			bnn_real *restrict tj = t + e * sd + j * d;
			const bnn_real *restrict s2j = s2 + j * d;
			BNN_GEN_EACH(din, 0, tj, s2j[i] * xe[i]);
			if (d > din)
				memset(tj + din, 0, (size_t)(d - din) * sizeof *tj);
		}
	}
	bnn_gen_whvi_fwht(batch * s->stack, d, t);
	BNN_GEN_PARALLEL_FOR(batch * sd)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict te = t + e * sd;
		bnn_real *restrict ve = v + e * sd;
		if (gex) {
			const bnn_real *restrict ge = gex + e * sd;
			BNN_GEN_EACH(sd, 0, ve, ge[i] * te[i]);
		} else if (eps) {
			const bnn_real *restrict ee = eps + e * sd;
			BNN_GEN_EACH(sd, 0, ve, (gmu[i] + gsd[i] * ee[i]) * te[i]);
		} else {
			BNN_GEN_EACH(sd, 0, ve, gmu[i] * te[i]);
		}
	}
	bnn_gen_whvi_fwht(batch * s->stack, d, v);
	BNN_GEN_PARALLEL_FOR(batch * dout)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict ve = v + e * sd;
		bnn_real *restrict ye = y + e * dout;
		if (!bmu) {
			BNN_GEN_EACH(dout, 0, ye, s1[i] * ve[i]);
		} else if (beps) {
			const bnn_real *restrict be = beps + e * dout;
			BNN_GEN_EACH(dout, 0, ye, s1[i] * ve[i] + bmu[i] + bsd[i] * be[i]);
		} else {
			BNN_GEN_EACH(dout, 0, ye, s1[i] * ve[i] + bmu[i]);
		}
	}
}

/* dst (+)= c, and, when sq is not NULL, sq (+)= batch·c², over n values
 * (first: overwrite).  Example by example, one example's gradient c is
 * 1/B of its own (deltas are those of the mean loss), so the mean of the
 * squared per-example gradients is (1/B)·Σ_e (B·c_e)² = B·Σ_e c_e². */
#define BNN_GEN_WHVI_ACC_RANGE(lo, hi, first, dst, sq, batch, expr)                                \
	do {                                                                                       \
		if (first)                                                                         \
			BNN_GEN_LOOP_RANGE(lo, hi, (dst)[i] = (expr));                             \
		else                                                                               \
			BNN_GEN_LOOP_RANGE(lo, hi, (dst)[i] += (expr));                            \
		if ((sq) && (first))                                                               \
			BNN_GEN_LOOP_RANGE(lo, hi, (sq)[i] = (bnn_real)(batch) * (expr) * (expr)); \
		else if (sq)                                                                       \
			BNN_GEN_LOOP_RANGE(lo, hi,                                                 \
			                   (sq)[i] += (bnn_real)(batch) * (expr) * (expr));        \
	} while (0)
/* Values per column chunk of the sums over the batch. */
#define BNN_GEN_WHVI_COLS 64
#define BNN_GEN_WHVI_ACC(n, first, dst, sq, batch, expr)                                 \
	do {                                                                             \
		if (first)                                                               \
			BNN_GEN_LOOP(n, (dst)[i] = (expr));                              \
		else                                                                     \
			BNN_GEN_LOOP(n, (dst)[i] += (expr));                             \
		if ((sq) && (first))                                                     \
			BNN_GEN_LOOP(n, (sq)[i] = (bnn_real)(batch) * (expr) * (expr));  \
		else if (sq)                                                             \
			BNN_GEN_LOOP(n, (sq)[i] += (bnn_real)(batch) * (expr) * (expr)); \
	} while (0)

/*
 * Backward, from dy = ∂L/∂y (B×dout, deltas of the mean loss), example by
 * example:
 *     dS1 = dy∘v                         (o < dout; 0 for padded outputs)
 *     du  = H·(S1∘dy)                    (into v, which is no longer needed)
 *     dg  = du∘t                          → dμ = dg, dρ = dg∘ε∘sigmoid(ρ)
 *     da  = H·(du∘g)                     (into v)
 *     dS2 = Σ_j-block da∘x̄,  dx (+)= Σ_j S2_j∘da_j (first din values)
 *     dμ_b = dy,  dρ_b = dy∘ε_b∘sigmoid(ρ_b)
 * Gradients (ds1 ... dbrho, each [stack·d] or [dout]) are overwritten with
 * their sums over the batch and, when sqgrad's q* are not NULL, the means
 * of the squared per-example gradients, accumulated example by example
 * (memory does not grow with the batch).  Without eps (no noise) dρ and
 * dρ_b are 0.  dgex not NULL (flows): example e's dg goes to row e of dgex
 * instead, and dμ, dρ are left to bnn_gen_whvi_flows_backward.  dx NULL:
 * no input delta.
 */
static inline void bnn_gen_whvi_backward(
        const bnn_gen_whvi *s, long batch, const bnn_real *restrict x, const bnn_real *restrict s1,
        const bnn_real *restrict s2, const bnn_real *restrict gmu, const bnn_real *restrict gsd,
        const bnn_real *restrict gsg, const bnn_real *restrict eps, const bnn_real *restrict gex,
        const bnn_real *restrict bsg, const bnn_real *restrict beps, const bnn_real *restrict dy,
        const bnn_real *restrict t, bnn_real *restrict v, bnn_real *restrict ds1,
        bnn_real *restrict ds2, bnn_real *restrict dgmu, bnn_real *restrict dgrho,
        bnn_real *restrict dbmu, bnn_real *restrict dbrho, bnn_real *restrict qs1,
        bnn_real *restrict qs2, bnn_real *restrict qgmu, bnn_real *restrict qgrho,
        bnn_real *restrict qbmu, bnn_real *restrict qbrho, bnn_real *restrict dgex,
        bnn_real *restrict dx, int accumulate)
{
	const long d = s->d, sd = s->stack * s->d, din = s->din, dout = s->dout;
	const long cw = BNN_GEN_WHVI_COLS;
	long e, j, c;

	/* S1 and the bias, from v before it is overwritten; by column */
	if (dout < sd)
		bnn_gen_whvi_zero(sd - dout, ds1 + dout, qs1 ? qs1 + dout : NULL);
	BNN_GEN_PARALLEL_FOR(batch * dout)
	for (c = 0; c < (dout + cw - 1) / cw; c++) {
		const long lo = c * cw, hi = dout - lo < cw ? dout : lo + cw;
		long ec;
		for (ec = 0; ec < batch; ec++) {
			const bnn_real *restrict ve = v + ec * sd, *restrict de = dy + ec * dout;
			BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, ds1, qs1, batch, de[i] * ve[i]);
			if (dbmu)
				BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, dbmu, qbmu, batch, de[i]);
			if (dbrho && beps) {
				const bnn_real *restrict be = beps + ec * dout;
				BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, dbrho, qbrho, batch,
				                       de[i] * be[i] * bsg[i]);
			}
		}
	}
	if (dbrho && !beps)
		bnn_gen_whvi_zero(dout, dbrho, qbrho);
	/* du = H·(S1∘dy) */
	BNN_GEN_PARALLEL_FOR(batch * sd)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict de = dy + e * dout;
		bnn_real *restrict ve = v + e * sd;
		BNN_GEN_EACH(dout, 0, ve, s1[i] * de[i]);
		if (sd > dout)
			memset(ve + dout, 0, (size_t)(sd - dout) * sizeof *ve);
	}
	bnn_gen_whvi_fwht(batch * s->stack, d, v);
	/* dg = du∘t, then du∘g into v */
	if (!dgex && !eps)
		bnn_gen_whvi_zero(sd, dgrho, qgrho);
	/* the sums of dμ and dρ by column (every example's du∘t before any
	 * row of v becomes du∘g), then du∘g by example */
	if (!dgex) {
		BNN_GEN_PARALLEL_FOR(batch * sd)
		for (c = 0; c < (sd + cw - 1) / cw; c++) {
			const long lo = c * cw, hi = sd - lo < cw ? sd : lo + cw;
			long ec;
			for (ec = 0; ec < batch; ec++) {
				const bnn_real *restrict te = t + ec * sd, *restrict ve =
				                                                   v + ec * sd;
				BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, dgmu, qgmu, batch,
				                       ve[i] * te[i]);
				if (eps) {
					const bnn_real *restrict ee = eps + ec * sd;
					BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, dgrho, qgrho, batch,
					                       ve[i] * te[i] * ee[i] * gsg[i]);
				}
			}
		}
	}
	BNN_GEN_PARALLEL_FOR(batch * sd)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict te = t + e * sd;
		bnn_real *restrict ve = v + e * sd;
		if (dgex) {
			bnn_real *restrict ge = dgex + e * sd;
			const bnn_real *restrict gx = gex + e * sd;
			BNN_GEN_EACH(sd, 0, ge, ve[i] * te[i]);
			BNN_GEN_EACH(sd, 0, ve, ve[i] * gx[i]);
			continue;
		}
		if (eps) {
			const bnn_real *restrict ee = eps + e * sd;
			BNN_GEN_EACH(sd, 0, ve, ve[i] * (gmu[i] + gsd[i] * ee[i]));
		} else {
			BNN_GEN_EACH(sd, 0, ve, ve[i] * gmu[i]);
		}
	}
	bnn_gen_whvi_fwht(batch * s->stack, d, v);
	/* S2 and the input */
	if (d > din)
		for (j = 0; j < s->stack; j++)
			bnn_gen_whvi_zero(d - din, ds2 + j * d + din,
			                  qs2 ? qs2 + j * d + din : NULL);
	/* S2 by column of each block: chunk c is block c / nb's columns */
	{
		const long nb = (din + cw - 1) / cw;
		BNN_GEN_PARALLEL_FOR(batch * s->stack * din)
		for (c = 0; c < s->stack * nb; c++) {
			const long jc = c / nb, lo = (c % nb) * cw,
			           hi = din - lo < cw ? din : lo + cw;
			bnn_real *restrict dj = ds2 + jc * d;
			bnn_real *restrict qj = qs2 ? qs2 + jc * d : NULL;
			long ec;
			for (ec = 0; ec < batch; ec++) {
				const bnn_real *restrict xe = x + ec * din;
				const bnn_real *restrict aj = v + ec * sd + jc * d;
				BNN_GEN_WHVI_ACC_RANGE(lo, hi, ec == 0, dj, qj, batch,
				                       aj[i] * xe[i]);
			}
		}
	}
	if (dx) {
		BNN_GEN_PARALLEL_FOR(batch * s->stack * din)
		for (e = 0; e < batch; e++) {
			bnn_real *restrict dxe = dx + e * din;
			long jx;
			for (jx = 0; jx < s->stack; jx++) {
				const bnn_real *restrict aj = v + e * sd + jx * d;
				const bnn_real *restrict s2j = s2 + jx * d;
				BNN_GEN_EACH(din, accumulate || jx > 0, dxe, aj[i] * s2j[i]);
			}
		}
	}
}

/*
 * Planar flows on g (appendix C, eq. 20), example by example and block by
 * block: z_0 = μ + σ∘ε (eps not NULL) or μ, then for k = 1 .. F
 *     z_k = z_{k−1} + u_k·tanh(w_kᵀz_{k−1} + b_k)
 * on each block's d values, with u_k, w_k (d each) and b_k of that block
 * (fu, fw [stack, F, d], fb [stack, F]).  zk (B × F·stack·d) keeps
 * z_0 .. z_{F−1} for the backward pass (row e: F rows of stack·d); gx
 * (B × stack·d) receives z_F, the g of bnn_gen_whvi_forward.
 */
static inline void bnn_gen_whvi_flows_forward(
        const bnn_gen_whvi *s, long batch, const bnn_real *restrict gmu,
        const bnn_real *restrict gsd, const bnn_real *restrict eps, const bnn_real *restrict fu,
        const bnn_real *restrict fw, const bnn_real *restrict fb, bnn_real *restrict zk,
        bnn_real *restrict gx)
{
	const long d = s->d, sd = s->stack * s->d, nf = s->flows;
	long e, j, k, q;

	for (e = 0; e < batch; e++) {
		bnn_real *restrict z = gx + e * sd;
		if (eps) {
			const bnn_real *restrict ee = eps + e * sd;
			BNN_GEN_EACH(sd, 0, z, gmu[i] + gsd[i] * ee[i]);
		} else {
			memcpy(z, gmu, (size_t)sd * sizeof *z);
		}
		for (k = 0; k < nf; k++) {
			memcpy(zk + (e * nf + k) * sd, z, (size_t)sd * sizeof *z);
			for (j = 0; j < s->stack; j++) {
				const bnn_real *restrict u = fu + (j * nf + k) * d;
				const bnn_real *restrict w = fw + (j * nf + k) * d;
				bnn_real *restrict zj = z + j * d;
				bnn_real a = fb[j * nf + k], h;
				for (q = 0; q < d; q++)
					a += w[q] * zj[q];
				h = BNN_GEN_TANH(a);
				BNN_GEN_EACH(d, 1, zj, u[i] * h);
			}
		}
	}
}

/*
 * The flows backward: dgx holds ∂L/∂z_F per example (from
 * bnn_gen_whvi_backward) and is overwritten on the way back to ∂L/∂z_0.
 * For flow k, with a = w_kᵀz_{k−1} + b_k, h = tanh(a):
 *     ∂u_k = dz_k·h,  ∂a = (1 − h²)·u_kᵀdz_k,  ∂w_k = ∂a·z_{k−1},
 *     ∂b_k = ∂a,      dz_{k−1} = dz_k + ∂a·w_k
 * then dμ = dz_0 and dρ = dz_0∘ε∘sigmoid(ρ) (without eps, 0).  The sums
 * over the batch are written into dgmu .. dfb (overwritten), and with
 * sqgrad the means of the squared per-example gradients into q* (NULL:
 * not asked), example by example.
 */
static inline void bnn_gen_whvi_flows_backward(
        const bnn_gen_whvi *s, long batch, const bnn_real *restrict gsg,
        const bnn_real *restrict eps, const bnn_real *restrict fu, const bnn_real *restrict fw,
        const bnn_real *restrict fb, const bnn_real *restrict zk, bnn_real *restrict dgx,
        bnn_real *restrict dgmu, bnn_real *restrict dgrho, bnn_real *restrict dfu,
        bnn_real *restrict dfw, bnn_real *restrict dfb, bnn_real *restrict qgmu,
        bnn_real *restrict qgrho, bnn_real *restrict qfu, bnn_real *restrict qfw,
        bnn_real *restrict qfb)
{
	const long d = s->d, sd = s->stack * s->d, nf = s->flows;
	long e, j, k, q;

	for (e = 0; e < batch; e++) {
		bnn_real *restrict dz = dgx + e * sd;
		for (k = nf - 1; k >= 0; k--) {
			const bnn_real *restrict z = zk + (e * nf + k) * sd;
			for (j = 0; j < s->stack; j++) {
				const long jk = j * nf + k;
				const bnn_real *restrict u = fu + jk * d, *restrict w = fw + jk * d;
				const bnn_real *restrict zj = z + j * d;
				bnn_real *restrict dzj = dz + j * d;
				bnn_real *restrict qu = qfu ? qfu + jk * d : NULL;
				bnn_real *restrict qw = qfw ? qfw + jk * d : NULL;
				bnn_real a = fb[jk], h, da = 0;
				for (q = 0; q < d; q++) {
					a += w[q] * zj[q];
					da += u[q] * dzj[q];
				}
				h = BNN_GEN_TANH(a);
				da *= 1 - h * h;
				BNN_GEN_WHVI_ACC(d, e == 0, dfu + jk * d, qu, batch, dzj[i] * h);
				BNN_GEN_WHVI_ACC(d, e == 0, dfw + jk * d, qw, batch, da * zj[i]);
				dfb[jk] = e == 0 ? da : dfb[jk] + da;
				if (qfb)
					qfb[jk] =
					        (e == 0 ? 0 : qfb[jk]) + (bnn_real)batch * da * da;
				BNN_GEN_EACH(d, 1, dzj, da * w[i]);
			}
		}
		BNN_GEN_WHVI_ACC(sd, e == 0, dgmu, qgmu, batch, dz[i]);
		if (eps) {
			const bnn_real *restrict ee = eps + e * sd;
			BNN_GEN_WHVI_ACC(sd, e == 0, dgrho, qgrho, batch, dz[i] * ee[i] * gsg[i]);
		}
	}
	if (!eps)
		bnn_gen_whvi_zero(sd, dgrho, qgrho);
}

#endif /* BNN_GEN_WHVI_H */
