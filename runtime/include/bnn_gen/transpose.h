/*
 * bnn_gen/transpose.h: the kernel of transpose layers (gen/layer_transpose.c):
 * each example's [A, B] block to [B, A], so that an embedded [T, F]
 * sequence becomes the [channels, length] signal conv1d convolves over
 * time, and back.  Its backward is the same kernel on the delta, with the
 * axes swapped.
 */
#ifndef BNN_GEN_TRANSPOSE_H
#define BNN_GEN_TRANSPOSE_H

#include "real.h"

/* y[e] (+)= x[e]ᵀ for each of BATCH examples: x[e] is A×B, y[e] B×A. */
static inline void bnn_gen_transpose(long batch, long a, long b, const bnn_real *restrict x,
                                     bnn_real *restrict y, int accumulate)
{
	long e, i, j;
	for (e = 0; e < batch; e++) {
		const bnn_real *xe = x + e * a * b;
		bnn_real *ye = y + e * a * b;
		for (i = 0; i < a; i++)
			for (j = 0; j < b; j++)
				ye[j * a + i] = (accumulate ? ye[j * a + i] : 0) + xe[i * b + j];
	}
}

#endif /* BNN_GEN_TRANSPOSE_H */
