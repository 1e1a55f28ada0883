/*
 * optim_clip.c: gradient clipping by global Euclidean norm
 * (bnn_optim.h): g ← g · max_norm / ‖g‖ when ‖g‖ > max_norm, the rule of
 * PyTorch's clip_grad_norm_ without its 1e-6 in the denominator, so the
 * clipped norm is max_norm itself.  The sum of squares is accumulated in
 * double in OPT_CHUNK interleaved partial sums, added up in a fixed order
 * at the end: gcc can vectorise that (a single running sum would be a
 * serial chain it may not reorder) and the result does not depend on the
 * machine.  Long vectors are summed in fixed pieces, in parallel, the
 * pieces' sums added in order (CLIP_PIECE), so neither does it depend on
 * the number of threads.
 */
#include <math.h>

#include "bnn.h"

/* Elements per vectorised chunk, and partial sums. */
#define OPT_CHUNK 8

/* Elements per piece of the sum: each piece's sum of squares is its own
 * (OPT_CHUNK partial sums, as one serial loop would have them), and the
 * pieces' sums are added in order; so the norm does not depend on the
 * number of threads, and is the serial loop's for n <= CLIP_PIECE.
 * Parallel from two pieces on: below, the work is some microseconds. */
#define CLIP_PIECE 16384

/* The pieces' sums wait in an array on the stack (8 KiB, 16 million
 * weights); longer vectors are summed by one thread, in the same pieces:
 * no allocation in the step. */
#define CLIP_MAX_PIECES 1024

/* Σ g[i]² over one piece, in OPT_CHUNK interleaved partial sums. */
static double clip_sumsq(long n, const float *g)
{
	double part[OPT_CHUNK] = { 0 };
	double sum = 0;
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			part[k] += (double)g[i + k] * g[i + k];
	for (; i < n; i++)
		sum += (double)g[i] * g[i];
	for (k = 0; k < OPT_CHUNK; k++)
		sum += part[k];
	return sum;
}

double bnn_clip_grad_norm(long n, float *g, double max_norm)
{
	double sum = 0, norm;
	long i, c, npieces = (n + CLIP_PIECE - 1) / CLIP_PIECE;

	if (npieces <= 1 || npieces > CLIP_MAX_PIECES) {
		/* one piece, or beyond the buffer: the same sums, one thread */
		for (c = 0; c < npieces; c++) {
			long a = c * CLIP_PIECE;
			sum += clip_sumsq(n - a < CLIP_PIECE ? n - a : CLIP_PIECE, g + a);
		}
	} else {
		double piece[CLIP_MAX_PIECES];

#pragma omp parallel for schedule(static)
		for (c = 0; c < npieces; c++) {
			long a = c * CLIP_PIECE;
			piece[c] = clip_sumsq(n - a < CLIP_PIECE ? n - a : CLIP_PIECE, g + a);
		}
		for (c = 0; c < npieces; c++)
			sum += piece[c];
	}
	norm = sqrt(sum);

	/* An infinite or NaN norm is returned without touching g: scaling
	 * would turn every entry into 0 or NaN and hide which one diverged. */
	if (max_norm > 0 && norm > max_norm && isfinite(norm)) {
		float scale = (float)(max_norm / norm);

#pragma omp parallel for schedule(static) if (n >= 2 * CLIP_PIECE)
		for (i = 0; i < n; i++)
			g[i] *= scale;
	}
	return norm;
}
