/*
 * fixtures.c: the generated-code tests' random numbers, buffers and
 * comparisons (fixtures.h).
 */
#include <math.h>
#include <stdlib.h>

#include "fixtures.h"
#include "tap.h"

uint64_t splitmix_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

double splitmix_uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(splitmix_next(state) >> 11) * 0x1p-53;
}

double *splitmix_doubles(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof *p);

	if (!p)
		tap_bail_out("out of memory (%zu doubles)", n);
	return p;
}

double fixture_max_rel(long n, const double *a, const double *b)
{
	double worst = 0;
	long i;

	for (i = 0; i < n; i++) {
		double d = fabs(a[i] - b[i]) / fmax(1e-3, fmax(fabs(a[i]), fabs(b[i])));
		if (isnan(d) || d > worst)
			worst = isnan(d) ? INFINITY : d;
	}
	return worst;
}

void fixture_sylvester(long n, long stride, double *h)
{
	long k, i, j;

	h[0] = 1;
	/* From H_k in the top-left block, fill the other three of H_2k. */
	for (k = 1; k < n; k *= 2)
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++) {
				double v = h[i * stride + j];

				h[i * stride + j + k] = v;
				h[(i + k) * stride + j] = v;
				h[(i + k) * stride + j + k] = -v;
			}
}
