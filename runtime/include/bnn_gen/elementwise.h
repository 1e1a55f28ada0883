/*
 * bnn_gen/elementwise.h: the kernels of element-wise activations
 * (gen/layer_elementwise.c: relu, leaky_relu, tanh, sigmoid, gelu,
 * softplus, cos, and the identity's copy).  The likelihoods and whvi use
 * its scalar sigmoid and softplus too.
 *
 * Every kernel is element-wise, on the calling thread's OpenMP team in
 * fixed chunks (BNN_GEN_PEACH) once B·width is large enough; the cost
 * figure passed for a loop that calls exp, erf, cos or the tanh polynomial
 * is 8 (a plain copy's 1), so that those go parallel sooner.
 */
#ifndef BNN_GEN_ELEMENTWISE_H
#define BNN_GEN_ELEMENTWISE_H

#include <stdint.h>

#include "bnn_bits.h"
#include "loop.h"
#include "real.h"

/* ---- elementwise activations ----------------------------------------------
 * Forward: y = f(x) over n values.  Backward: dx (+)= dy·f'(x), where the
 * derivative is written with whichever of x and y is cheaper. */


static inline BNN_GEN_CLONES void bnn_gen_relu_forward(long n, const bnn_real *restrict x,
                                                       bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 1, 0, y, x[i] > 0 ? x[i] : 0);
}
/* x = relu(x) in place: the relu of a dense layer fused into its product
 * (gen/codegen.c) on the sampled pass that is not one product
 * (meanfield's local reparameterisation). */
static inline BNN_GEN_CLONES void bnn_gen_relu_in_place(long n, bnn_real *x)
{
	BNN_GEN_PEACH(n, 1, 0, x, x[i] > 0 ? x[i] : 0);
}
static inline BNN_GEN_CLONES void bnn_gen_relu_backward(long n, const bnn_real *restrict x,
                                                        const bnn_real *restrict y,
                                                        const bnn_real *restrict dy,
                                                        bnn_real *restrict dx, int acc)
{
	(void)y;
	BNN_GEN_PEACH(n, 1, acc, dx, bnn_gen_pick(x[i] > 0, dy[i], 0));
}

static inline BNN_GEN_CLONES void bnn_gen_leaky_relu_forward(long n, const bnn_real *restrict x,
                                                             bnn_real *restrict y, bnn_real slope)
{
	BNN_GEN_PEACH(n, 1, 0, y, x[i] > 0 ? x[i] : slope * x[i]);
}
static inline BNN_GEN_CLONES void bnn_gen_leaky_relu_backward(long n, const bnn_real *restrict x,
                                                              const bnn_real *restrict y,
                                                              const bnn_real *restrict dy,
                                                              bnn_real *restrict dx, int acc,
                                                              bnn_real slope)
{
	(void)y;
	BNN_GEN_PEACH(n, 1, acc, dx, bnn_gen_pick(x[i] > 0, dy[i], slope * dy[i]));
}

#ifndef BNN_GEN_DOUBLE
/*
 * e^y of a float y <= 0 in straight-line arithmetic, so that a loop of it
 * vectorises (glibc's expf is a scalar call): Cody and Waite's reduction
 * to r = y − n·ln 2 with |r| <= ln 2 / 2, a degree-6 Taylor polynomial of
 * e^r (its next term is below 1.2e-7 relatively) and 2^n from the exponent
 * bits.  y is clamped to −80 first, so 2^n stays a normal float (e^−80 is
 * 1.8e-35: the softmax's weights below it are that instead of 0, 35 orders
 * of magnitude under the row's largest, 1); NaN stays NaN.  As in tanh
 * below, the clamp is an integer min and a mask on the bits (a float ?:
 * became a branch that kept the loop scalar), and a positive y is taken as
 * −y: callers pass y <= 0.
 */
static inline float bnn_gen_expf_neg(float y)
{
	int32_t yi, ai, ci, nan, zi, ei;
	float z, nf, r, er;

	yi = (int32_t)bnn_float_bits(y);
	ai = yi & 0x7FFFFFFF;                        /* |y| */
	ci = ai < 0x42A00000 ? ai : 0x42A00000;      /* min(|y|, 80) */
	nan = (0x7F800000 - ai) >> 31;               /* all ones if y is NaN */
	yi = (yi & nan) | ((ci | INT32_MIN) & ~nan); /* −min(|y|, 80), or NaN */
	y = bnn_bits_float((uint32_t)yi);
	z = y * 1.44269504088896341f + 12582912.0f; /* n + 1.5·2²³, n = round(y/ln 2) */
	nf = z - 12582912.0f;
	r = (y - nf * 0.693145751953125f) - nf * 1.42860682030941723e-06f;
	er = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666666666666667e-1f +
	                                         r * (4.16666666666666667e-2f +
	                                              r * (8.33333333333333333e-3f +
	                                                   r * 1.38888888888888889e-3f)))));
	zi = (int32_t)bnn_float_bits(z);
	ei = (zi - 0x4B400000 + 127) * (1 << 23); /* the bits of 2^n, n in [-116, 0] */
	return er * bnn_bits_float((uint32_t)ei);
}
#define BNN_GEN_EXP_NEG(y) bnn_gen_expf_neg(y)
#else
#define BNN_GEN_EXP_NEG(y) exp(y)
#endif

#ifndef BNN_GEN_DOUBLE
/*
 * tanh of a float in straight-line arithmetic, so that a loop of it
 * vectorises (glibc's tanhf is a scalar call, which made up a large part of
 * a LeNet training step: docs/benchmarks.md).  For |x| < 0.3, its Taylor
 * series to x¹¹ (the next term is below 6e-10 there); else (1 − e)/(1 + e)
 * with e = exp(−2|x|) by bnn_gen_expf_neg; |x| is clamped to 9 (tanh(9)
 * rounds to 1).  Both
 * branches are computed, and every choice is an integer min or a mask on
 * the bits (a float ?: with arithmetic in an arm, or a comparison's value,
 * becomes a branch that keeps gcc -O2 from vectorising the loop); NaN stays
 * NaN.  Within 3e-7 of tanh, relatively, over all floats (checked outside
 * the test suite against tanh in double, every 7th float).
 */
static inline float bnn_gen_tanhf(float x)
{
	int32_t xi, ai, ci, ri, mi, nan;
	float c, c2, small, e, big, m, res;

	xi = (int32_t)bnn_float_bits(x);
	ai = xi & 0x7FFFFFFF;                   /* |x| */
	ci = ai < 0x41100000 ? ai : 0x41100000; /* min(|x|, 9) */
	c = bnn_bits_float((uint32_t)ci);
	e = bnn_gen_expf_neg(-2.0f * c); /* −18 <= −2c <= 0: never clamped */
	big = (1.0f - e) / (1.0f + e);
	c2 = c * c;
	small = c * (1.0f + c2 * (-3.33333333333333333e-1f +
	                          c2 * (1.33333333333333333e-1f +
	                                c2 * (-5.39682539682539683e-2f +
	                                      c2 * (2.18694885361552028e-2f +
	                                            c2 * -8.86323552990219657e-3f)))));
	mi = ((ci - 0x3E99999A) >> 31) & 0x3F800000; /* 1.0f if |x| < 0.3, else 0 */
	m = bnn_bits_float((uint32_t)mi);
	res = big + m * (small - big);
	ri = (int32_t)bnn_float_bits(res);
	nan = (0x7F800000 - ai) >> 31;                      /* all ones if x is NaN */
	ri = (xi & nan) | ((ri | (xi & INT32_MIN)) & ~nan); /* the sign */
	res = bnn_bits_float((uint32_t)ri);
	return res;
}
#endif

/* tanh over n values on the calling thread.  Its versions for AVX-512 and
 * AVX2 (BNN_GEN_CLONES) measured several times faster than SSE2's, and
 * all far faster than glibc's tanhf (docs/benchmarks.md, "Measurements
 * behind the kernels"). */
static inline BNN_GEN_CLONES void bnn_gen_tanh_run(long n, const bnn_real *restrict x,
                                                   bnn_real *restrict y)
{
#ifdef BNN_GEN_DOUBLE
	BNN_GEN_EACH(n, 0, y, BNN_GEN_TANH(x[i]));
#else
	BNN_GEN_EACH(n, 0, y, bnn_gen_tanhf(x[i]));
#endif
}
/* The team's threads each call the cloned loop on their chunks: a loop
 * written inside the parallel region would be outlined by the compiler
 * into a function of its own, compiled for the baseline ISA only. */
static inline void bnn_gen_tanh_forward(long n, const bnn_real *restrict x, bnn_real *restrict y)
{
	const long chunks = (n + BNN_GEN_PAR_CHUNK - 1) / BNN_GEN_PAR_CHUNK;
	long c;

	if (8 * n <= BNN_GEN_PAR_MIN) {
		bnn_gen_tanh_run(n, x, y);
		return;
	}
	BNN_GEN_PARALLEL_FOR(8 * n)
	for (c = 0; c < chunks; c++) {
		const long lo = c * BNN_GEN_PAR_CHUNK;
		const long m = n - lo < BNN_GEN_PAR_CHUNK ? n - lo : BNN_GEN_PAR_CHUNK;

		bnn_gen_tanh_run(m, x + lo, y + lo);
	}
}
static inline BNN_GEN_CLONES void bnn_gen_tanh_backward(long n, const bnn_real *restrict x,
                                                        const bnn_real *restrict y,
                                                        const bnn_real *restrict dy,
                                                        bnn_real *restrict dx, int acc)
{
	(void)x;
	BNN_GEN_PEACH(n, 1, acc, dx, dy[i] * (1 - y[i] * y[i]));
}

/* σ(x) = 1/(1 + e^−x), written so that neither branch overflows. */
static inline bnn_real bnn_gen_sigmoid1(bnn_real x)
{
	if (x >= 0)
		return 1 / (1 + BNN_GEN_EXP(-x));
	bnn_real e = BNN_GEN_EXP(x);
	return e / (1 + e);
}
static inline BNN_GEN_CLONES void bnn_gen_sigmoid_forward(long n, const bnn_real *restrict x,
                                                          bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 8, 0, y, bnn_gen_sigmoid1(x[i]));
}
static inline BNN_GEN_CLONES void bnn_gen_sigmoid_backward(long n, const bnn_real *restrict x,
                                                           const bnn_real *restrict y,
                                                           const bnn_real *restrict dy,
                                                           bnn_real *restrict dx, int acc)
{
	(void)x;
	BNN_GEN_PEACH(n, 1, acc, dx, dy[i] * y[i] * (1 - y[i]));
}

/* GELU, exact: y = x·Φ(x) with Φ the standard normal CDF;
 * y' = Φ(x) + x·φ(x). */
static inline BNN_GEN_CLONES void bnn_gen_gelu_forward(long n, const bnn_real *restrict x,
                                                       bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 8, 0, y,
	              (bnn_real)0.5 * x[i] *
	                      (1 + BNN_GEN_ERF(x[i] * (bnn_real)0.70710678118654752440)));
}
/* Φ'(x)·x + Φ(x), the derivative of x·Φ(x). */
static inline bnn_real bnn_gen_gelu_slope1(bnn_real x)
{
	bnn_real cdf = (bnn_real)0.5 * (1 + BNN_GEN_ERF(x * (bnn_real)0.70710678118654752440));
	bnn_real pdf = (bnn_real)0.39894228040143267794 * BNN_GEN_EXP((bnn_real)-0.5 * x * x);
	return cdf + x * pdf;
}
static inline BNN_GEN_CLONES void bnn_gen_gelu_backward(long n, const bnn_real *restrict x,
                                                        const bnn_real *restrict y,
                                                        const bnn_real *restrict dy,
                                                        bnn_real *restrict dx, int acc)
{
	(void)y;
	BNN_GEN_PEACH(n, 8, acc, dx, dy[i] * bnn_gen_gelu_slope1(x[i]));
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^−|x|); its derivative
 * is σ(x). */
static inline bnn_real bnn_gen_softplus1(bnn_real x)
{
	return (x > 0 ? x : 0) + BNN_GEN_LOG1P(BNN_GEN_EXP(-BNN_GEN_FABS(x)));
}
static inline BNN_GEN_CLONES void bnn_gen_softplus_forward(long n, const bnn_real *restrict x,
                                                           bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 8, 0, y, bnn_gen_softplus1(x[i]));
}
static inline BNN_GEN_CLONES void bnn_gen_softplus_backward(long n, const bnn_real *restrict x,
                                                            const bnn_real *restrict y,
                                                            const bnn_real *restrict dy,
                                                            bnn_real *restrict dx, int acc)
{
	(void)y;
	BNN_GEN_PEACH(n, 8, acc, dx, dy[i] * bnn_gen_sigmoid1(x[i]));
}

static inline BNN_GEN_CLONES void bnn_gen_cos_forward(long n, const bnn_real *restrict x,
                                                      bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 8, 0, y, BNN_GEN_COS(x[i]));
}
static inline BNN_GEN_CLONES void bnn_gen_cos_backward(long n, const bnn_real *restrict x,
                                                       const bnn_real *restrict y,
                                                       const bnn_real *restrict dy,
                                                       bnn_real *restrict dx, int acc)
{
	(void)y;
	BNN_GEN_PEACH(n, 8, acc, dx, -dy[i] * BNN_GEN_SIN(x[i]));
}

/* identity and flatten: a copy (the layout of [C, H, W] is already flat). */
static inline BNN_GEN_CLONES void bnn_gen_copy_forward(long n, const bnn_real *restrict x,
                                                       bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 1, 0, y, x[i]);
}
static inline BNN_GEN_CLONES void bnn_gen_copy_backward(long n, const bnn_real *restrict dy,
                                                        bnn_real *restrict dx, int acc)
{
	BNN_GEN_PEACH(n, 1, acc, dx, dy[i]);
}

#endif /* BNN_GEN_ELEMENTWISE_H */
