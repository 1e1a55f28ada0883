/*
 * bnn_gen/loop.h: the loops every kernel is written with.
 *
 * BNN_GEN_LOOP and BNN_GEN_EACH run an element-wise statement in chunks
 * that gcc -O2 vectorises, bnn_gen_sum sums in a fixed order, bnn_gen_copy
 * copies a short row without a call of memmove and bnn_gen_pick selects
 * without a branch.
 */
#ifndef BNN_GEN_LOOP_H
#define BNN_GEN_LOOP_H

#include <string.h>

#include "real.h"

/* dst[i] = expr, or dst[i] += expr when acc, for i in [0, n).  The test of
 * acc sits outside the loops, and the loops run in chunks of a constant 16
 * iterations (one AVX-512 vector, four SSE ones) plus a remainder: gcc
 * vectorises such loops at -O2, where its cheap cost model refuses loops
 * of unknown length, provided the chunk's own loop counts from 0 to the
 * constant (a loop from c·16 to c·16 + 16 is not recognised, and was
 * compiled to scalar, branchy code).  expr uses i. */
#define BNN_GEN_CHUNK 16
#define BNN_GEN_LOOP(n, stmt)                                    \
	do {                                                     \
		long c_, k_, chunks_ = (n) / BNN_GEN_CHUNK, i;   \
		for (c_ = 0; c_ < chunks_; c_++)                 \
			for (k_ = 0; k_ < BNN_GEN_CHUNK; k_++) { \
				i = c_ * BNN_GEN_CHUNK + k_;     \
				stmt;                            \
			}                                        \
		for (i = chunks_ * BNN_GEN_CHUNK; i < (n); i++)  \
			stmt;                                    \
	} while (0)
#define BNN_GEN_EACH(n, acc, dst, expr)                      \
	do {                                                 \
		if (acc)                                     \
			BNN_GEN_LOOP(n, (dst)[i] += (expr)); \
		else                                         \
			BNN_GEN_LOOP(n, (dst)[i] = (expr));  \
	} while (0)

/* Σ x[i] for i in [0, n), in BNN_GEN_CHUNK interleaved partial sums
 * added pairwise at the end: a loop gcc vectorises, where one running sum
 * is a serial chain of additions (a fixed order: the same n and x give the
 * same bits). */
static inline bnn_real bnn_gen_sum(long n, const bnn_real *restrict x)
{
	bnn_real part[BNN_GEN_CHUNK] = { 0 };
	long c, chunks = n / BNN_GEN_CHUNK, q;
	int k, half;

	for (c = 0; c < chunks; c++)
		for (k = 0; k < BNN_GEN_CHUNK; k++)
			part[k] += x[c * BNN_GEN_CHUNK + k];
	for (q = chunks * BNN_GEN_CHUNK; q < n; q++)
		part[q - chunks * BNN_GEN_CHUNK] += x[q];
	for (half = BNN_GEN_CHUNK / 2; half > 0; half /= 2)
		for (k = 0; k < half; k++)
			part[k] += part[k + half];
	return part[0];
}

/* dst[0..n) = src[0..n) for a short n known where the kernel is inlined:
 * in copies of one BNN_GEN_CHUNK each, which compilers expand into a few
 * vector moves (a copy loop, or one memcpy of n floats, becomes a call of
 * memmove once n passes a few dozen floats: thousands of calls a layer). */
static inline void bnn_gen_copy(long n, bnn_real *restrict dst, const bnn_real *restrict src)
{
	long c, chunks = n / BNN_GEN_CHUNK, q;

	for (c = 0; c < chunks; c++)
		memcpy(dst + c * BNN_GEN_CHUNK, src + c * BNN_GEN_CHUNK,
		       BNN_GEN_CHUNK * sizeof *dst);
	for (q = chunks * BNN_GEN_CHUNK; q < n; q++)
		dst[q] = src[q];
}

/* c ? a : b with both operands evaluated first, so that a loop of it is a
 * vector select rather than a branch (gcc does not if-convert a load that
 * only one branch makes). */
static inline bnn_real bnn_gen_pick(int c, bnn_real a, bnn_real b)
{
	return c ? a : b;
}

#endif /* BNN_GEN_LOOP_H */
