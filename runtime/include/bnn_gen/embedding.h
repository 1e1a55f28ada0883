/*
 * bnn_gen/embedding.h: the kernels of embedding layers (gen/layer_embedding.c):
 * a sequence of T integer ids to the rows of a vocab × dim table, a
 * [T, dim] sequence ([time, features]).
 *
 * The ids arrive in the batch as bnn_real values holding exact integers
 * (the data readers check at load time that they lie in [0, vocab)); an
 * id outside that range, or not a number, which only a caller bypassing
 * those checks can pass, gives a row of zeros and no gradient, so the
 * pass never reads or writes outside the table.
 *
 * Forward: y[t] = W[id_t].  Backward: dW[v] = Σ_e Σ_{t: id_t = v} dy[e, t]
 * over only the rows used, and the squared per-example gradients as
 * sparse rows: example e's own gradient of row v is B·Σ_{t: id_t = v}
 * dy[e, t] (dy is 1/B of ℓ_e's delta), the positions of a repeated id
 * summed before squaring, so the mean over the batch of its square is
 * B·Σ_e (Σ_{t: id_t = v} dy[e, t])².  The per-example work is O(T·dim):
 * the positions that share an id are found through `mark`, a vocab-long
 * array of first positions that is cleared once per pass (O(vocab)) and
 * then only at the rows an example touched.  The gradients and squared
 * gradients are dense vocab × dim arrays (the optimizers' layout), zeroed
 * once per pass.  The kernels run on the calling thread: they are
 * gathers and scatters of a few rows per position.
 */
#ifndef BNN_GEN_EMBEDDING_H
#define BNN_GEN_EMBEDDING_H

#include <string.h>

#include "real.h"

/* Floats of the fixed workspace an embedding's backward pass needs: the
 * marks (vocab) and one example's row sums (T·dim). */
static inline long bnn_gen_embedding_floats(long t, long vocab, long dim)
{
	return vocab + t * dim;
}

/* The row of id value V, or −1 when V is not an id in [0, vocab). */
static inline long bnn_gen_embedding_row(bnn_real v, long vocab)
{
	return v >= 0 && v < (bnn_real)vocab ? (long)v : -1;
}

/* y[e, t, :] = w[id(e, t), :] for the batch's T ids per example. */
static inline void bnn_gen_embedding_forward(long batch, long t, long vocab, long dim,
                                             const bnn_real *restrict ids,
                                             const bnn_real *restrict w, bnn_real *restrict y)
{
	long p;

	for (p = 0; p < batch * t; p++) {
		const long row = bnn_gen_embedding_row(ids[p], vocab);
		if (row >= 0)
			memcpy(y + p * dim, w + row * dim, (size_t)dim * sizeof *y);
		else
			memset(y + p * dim, 0, (size_t)dim * sizeof *y);
	}
}

/* Example e's sums of dy by distinct id: acc[p] (p the first position of
 * its id, whose mark is p + 1) holds Σ dy[e, q] over the positions q with
 * that id. */
static inline void bnn_gen_embedding_example_sums(long t, long vocab, long dim,
                                                  const bnn_real *restrict ids,
                                                  const bnn_real *restrict dy,
                                                  bnn_real *restrict mark, bnn_real *restrict acc)
{
	long p, j;

	for (p = 0; p < t; p++) {
		const long row = bnn_gen_embedding_row(ids[p], vocab);
		bnn_real *restrict to;
		if (row < 0)
			continue;
		if (mark[row] == 0) {
			mark[row] = (bnn_real)(p + 1);
			memcpy(acc + p * dim, dy + p * dim, (size_t)dim * sizeof *acc);
			continue;
		}
		to = acc + ((long)mark[row] - 1) * dim;
		for (j = 0; j < dim; j++)
			to[j] += dy[p * dim + j];
	}
}

/*
 * The gradient of the table into dw (vocab × dim, overwritten) and, when
 * sq is not NULL, the mean of the squared per-example gradients into sq
 * (overwritten).  ws holds bnn_gen_embedding_floats(t, vocab, dim) floats.
 * An embedding reads ids, which have no delta.
 */
static inline void bnn_gen_embedding_backward(long batch, long t, long vocab, long dim,
                                              const bnn_real *restrict ids,
                                              const bnn_real *restrict dy, bnn_real *restrict dw,
                                              bnn_real *restrict sq, bnn_real *restrict ws)
{
	bnn_real *restrict mark = ws, *restrict acc = ws + vocab;
	const bnn_real scale = (bnn_real)batch;
	long e, p, j;

	memset(dw, 0, (size_t)(vocab * dim) * sizeof *dw);
	if (sq)
		memset(sq, 0, (size_t)(vocab * dim) * sizeof *sq);
	memset(mark, 0, (size_t)vocab * sizeof *mark);
	for (e = 0; e < batch; e++) {
		const bnn_real *restrict ie = ids + e * t;
		bnn_gen_embedding_example_sums(t, vocab, dim, ie, dy + e * t * dim, mark, acc);
		for (p = 0; p < t; p++) {
			const long row = bnn_gen_embedding_row(ie[p], vocab);
			const bnn_real *restrict a = acc + p * dim;
			bnn_real *restrict g, *restrict q;
			if (row < 0 || mark[row] != (bnn_real)(p + 1))
				continue; /* not the first position of its id */
			mark[row] = 0;
			g = dw + row * dim;
			for (j = 0; j < dim; j++)
				g[j] += a[j];
			if (!sq)
				continue;
			q = sq + row * dim;
			for (j = 0; j < dim; j++)
				q[j] += scale * a[j] * a[j];
		}
	}
}

/* embedding ~ dropout(p): row r of y (ROWS rows of DIM values, B·T for a
 * batch) times mask[r], 0 or 1/(1 − p), in place.  The forward pass drops
 * the rows of its output, the backward pass the same rows of the delta
 * before its sums, so a dropped position adds nothing to its id's row. */
static inline void bnn_gen_embedding_drop_rows(long rows, long dim, const bnn_real *restrict mask,
                                               bnn_real *restrict y)
{
	long r, j;
	for (r = 0; r < rows; r++)
		for (j = 0; j < dim; j++)
			y[r * dim + j] *= mask[r];
}

#endif
