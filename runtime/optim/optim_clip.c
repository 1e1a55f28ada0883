/*
 * optim_clip.c: gradient clipping by global Euclidean norm
 * (bnn_optim.h): g ← g · max_norm / ‖g‖ when ‖g‖ > max_norm, the rule of
 * PyTorch's clip_grad_norm_ without its 1e-6 in the denominator, so the
 * clipped norm is max_norm itself.  The sum of squares is accumulated in
 * double in OPT_CHUNK interleaved partial sums, added up in a fixed order
 * at the end: gcc can vectorise that (a single running sum would be a
 * serial chain it may not reorder) and the result does not depend on the
 * machine.
 */
#include <math.h>

#include "bnn.h"

/* Elements per vectorised chunk, and partial sums. */
#define OPT_CHUNK 8

double bnn_clip_grad_norm(long n, float *g, double max_norm)
{
	double part[OPT_CHUNK] = { 0 };
	double sum = 0, norm;
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			part[k] += (double)g[i + k] * g[i + k];
	for (; i < n; i++)
		sum += (double)g[i] * g[i];
	for (k = 0; k < OPT_CHUNK; k++)
		sum += part[k];
	norm = sqrt(sum);

	/* An infinite or NaN norm is returned without touching g: scaling
	 * would turn every entry into 0 or NaN and hide which one diverged. */
	if (max_norm > 0 && norm > max_norm && isfinite(norm)) {
		float scale = (float)(max_norm / norm);

		for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
			for (k = 0; k < OPT_CHUNK; k++)
				g[i + k] *= scale;
		for (; i < n; i++)
			g[i] *= scale;
	}
	return norm;
}
