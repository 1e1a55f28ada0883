/*
 * bnn_fwht.h: the fast Walsh-Hadamard transform (included by bnn.h).
 *
 * WHVI (Rossi et al., "Walsh-Hadamard Variational Inference for Bayesian
 * Deep Learning", NeurIPS 2020) builds a D x D weight as
 * W = S1·H·diag(g)·H·S2, so every product with W is two Walsh-Hadamard
 * transforms of length D = 2^d, O(D log D) instead of O(D²).  These
 * functions compute y = c·H_n·x in place, for one vector or for a batch of
 * contiguous vectors, with H_n the Walsh-Hadamard matrix in Sylvester's
 * (natural) order:
 *
 *     H_1 = [1],   H_2n = [ H_n   H_n ]
 *                         [ H_n  -H_n ],
 *
 * so (H_n)_ij = (-1)^popcount(i & j), symmetric, and H_n·H_n = n·I.
 *
 * Normalisation.  `norm` chooses c:
 *   BNN_FWHT_RAW    c = 1: H_n itself, entries ±1 (the paper's section 2.1
 *                   definition, before scaling);
 *   BNN_FWHT_ORTHO  c = 1/√n: the orthonormal matrix, entries ±1/√n, the H
 *                   that WHVI's algebra assumes (its appendix uses HᵀH = I
 *                   and diag(h_i)² = I/D for the columns h_i of H).  It is
 *                   its own inverse: applying it twice gives x back, up to
 *                   rounding.
 * The WHVI layer uses BNN_FWHT_ORTHO, which keeps W's scale independent of
 * D.  In float, c·H·x is computed as H·x followed by one multiplication by
 * c rounded to float (exact when log2 n is even).
 *
 * Arithmetic.  The float transforms do the same additions and
 * subtractions in the same order as the textbook radix-2 algorithm (stage
 * by stage, strides 1, 2, 4, ..., n/2): the result is the same bit for bit
 * whichever path (vector width, batch or single, cache blocking) computes
 * it, on every machine with IEEE single precision.  With integer inputs
 * whose transform stays below 2^24 in magnitude (|x_i| <= 2^24 / n), the
 * raw float transform is exact.  The rounding error of each output is at
 * most about log2(n)·2^-24·Σ|x_i|.
 *
 * Errors.  n must be a power of two from 1 to 2^BNN_FWHT_MAX_LOG2; batch
 * must be >= 0 (0 does nothing); x must not be NULL unless batch is 0.  On
 * any other argument the functions return BNN_EINVAL, leave x untouched
 * and write a message naming the function and the value into err (which
 * may be NULL).  They never allocate, print or exit, and are thread-safe
 * (no state).
 */
#ifndef BNN_FWHT_H
#define BNN_FWHT_H

#include "bnn_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest log2 of a length: 2^30 floats are 4 GiB. */
#define BNN_FWHT_MAX_LOG2 30

/* The scale c of y = c·H·x (see above).  The values are part of the API. */
enum bnn_fwht_norm {
	BNN_FWHT_RAW = 0,  /* c = 1: entries ±1 */
	BNN_FWHT_ORTHO = 1 /* c = 1/√n: orthonormal, its own inverse */
};

/**
 * Transform one vector in place: x <- c·H_n·x.
 * @param x     n floats.
 * @param n     the length, a power of two, 1 <= n <= 2^BNN_FWHT_MAX_LOG2.
 * @param norm  BNN_FWHT_RAW or BNN_FWHT_ORTHO.
 * @param err   receives the message on failure; may be NULL.
 * @return BNN_OK, or BNN_EINVAL with x untouched.
 */
int bnn_fwht_vector(float *x, long n, int norm, bnn_err *err);

/**
 * Transform `batch` vectors of length n stored one after another
 * (row-major batch × n), each in place.  Bit for bit the same as calling
 * bnn_fwht_vector() on each row.
 * @param x      batch·n floats.
 * @param batch  the number of vectors, >= 0.
 * @return BNN_OK, or BNN_EINVAL with x untouched.
 */
int bnn_fwht_batch(float *x, long batch, long n, int norm, bnn_err *err);

/**
 * The reference: the textbook radix-2 transform, scalar, in double, then
 * the multiplication by c = 1/sqrt(n) for BNN_FWHT_ORTHO.  Exact for
 * integer inputs while the results stay below 2^53.  For the tests; slow.
 * @return BNN_OK, or BNN_EINVAL with x untouched.
 */
int bnn_fwht_ref(double *x, long n, int norm, bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_FWHT_H */
