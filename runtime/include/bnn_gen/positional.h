/*
 * bnn_gen/positional.h: the kernels of positional layers
 * (gen/layer_positional.c): the fixed sinusoidal encoding of Vaswani et
 * al. 2017 (sec. 3.5) added to a [T, D] sequence ([time, features]),
 *     PE[t, 2i] = sin(t / 10000^(2i/D)),  PE[t, 2i + 1] = cos(t / 10000^(2i/D)),
 * with t counted from 0 (an odd D ends on a sine).  The encoding has no
 * parameters and does not depend on the input, so the input's delta is
 * the output's.  The forward pass computes the T·D table once (in double)
 * into the layer's fixed workspace, then adds it to each example.
 */
#ifndef BNN_GEN_POSITIONAL_H
#define BNN_GEN_POSITIONAL_H

#include <math.h>

#include "loop.h"
#include "real.h"

/* The encoding's T·D values into pe. */
static inline void bnn_gen_positional_table(long t, long d, bnn_real *restrict pe)
{
	long p, j;

	for (p = 0; p < t; p++)
		for (j = 0; j < d; j++) {
			/* the pair (2i, 2i + 1) shares the frequency 10000^(−2i/D) */
			const double angle =
			        (double)p * pow(10000.0, -(double)(j - j % 2) / (double)d);
			pe[p * d + j] = (bnn_real)(j % 2 == 0 ? sin(angle) : cos(angle));
		}
}

/* y = x + PE for every example; pe: T·D floats of workspace. */
static inline BNN_GEN_CLONES void bnn_gen_positional_forward(long batch, long t, long d,
                                                             const bnn_real *restrict x,
                                                             bnn_real *restrict y,
                                                             bnn_real *restrict pe)
{
	const long n = t * d;
	long e;

	bnn_gen_positional_table(t, d, pe);
	BNN_GEN_PARALLEL_FOR(2 * batch * n)
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict xe = x + e * n;
		bnn_real *restrict ye = y + e * n;
		BNN_GEN_LOOP(n, ye[i] = xe[i] + pe[i]);
	}
}

#endif
