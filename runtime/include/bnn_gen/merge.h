/*
 * bnn_gen/merge.h: the kernels of the layers that merge their inputs,
 * add and concat (gen/layer_merge.c).
 */
#ifndef BNN_GEN_MERGE_H
#define BNN_GEN_MERGE_H

#include <string.h>

#include "elementwise.h"
#include "real.h"

/* ---- add and concat ------------------------------------------------------- */

/* y (+)= x over n values: add's forward past its first two inputs (the
 * third and later added) and backward (every input that does not share
 * the add's delta receives dy). */
static inline void bnn_gen_add_into(long n, const bnn_real *restrict x, bnn_real *restrict y,
                                    int acc)
{
	bnn_gen_copy_backward(n, x, y, acc);
}

/* y = a + b over n values: add's forward on its first two inputs, in one
 * pass (the rest, if any, bnn_gen_add_into with acc). */
static inline BNN_GEN_CLONES void bnn_gen_add_pair(long n, const bnn_real *restrict a,
                                                   const bnn_real *restrict b, bnn_real *restrict y)
{
	BNN_GEN_PEACH(n, 1, 0, y, a[i] + b[i]);
}

/* concat of feature vectors: row i of x (width k) goes to columns
 * [col, col + k) of y (width n). */
static inline void bnn_gen_concat_forward(long batch, long k, long n, long col,
                                          const bnn_real *restrict x, bnn_real *restrict y)
{
	long i;
	for (i = 0; i < batch; i++)
		memcpy(y + i * n + col, x + i * k, (size_t)k * sizeof *y);
}
static inline void bnn_gen_concat_backward(long batch, long k, long n, long col,
                                           const bnn_real *restrict dy, bnn_real *restrict dx,
                                           int acc)
{
	long i;
	for (i = 0; i < batch; i++)
		bnn_gen_copy_backward(k, dy + i * n + col, dx + i * k, acc);
}

#endif /* BNN_GEN_MERGE_H */
