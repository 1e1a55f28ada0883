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

/* y (+)= x over n values: add's forward (first input copied, the rest
 * added) and backward (every input receives dy). */
static inline void bnn_gen_add_into(long n, const bnn_real *restrict x, bnn_real *restrict y,
                                    int acc)
{
	bnn_gen_copy_backward(n, x, y, acc);
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
