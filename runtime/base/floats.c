/*
 * floats.c: the float arrays the trainer streams through (parameters,
 * optimizer state, gradients, weight samples, the pass's workspace),
 * allocated on 64-byte boundaries.  malloc() puts large blocks 16 bytes
 * past a page boundary, so every 64-byte vector load or store of such an
 * array straddles two cache lines; aligned, the optimizers' fused loops
 * measured faster (Adam's and IVON's: docs/benchmarks.md, "Measurements
 * behind the kernels"), and the matrix products' operands start on a
 * cache line.  The arrays are released with free().
 */
#include <stdlib.h>
#include <string.h>

#include "floats.h"

/* The alignment: one cache line, one AVX-512 vector. */
#define FLOATS_ALIGN 64

float *bnn_floats_alloc(long n)
{
	size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);

	/* C11's aligned_alloc wants a multiple of the alignment */
	bytes = (bytes + FLOATS_ALIGN - 1) / FLOATS_ALIGN * FLOATS_ALIGN;
	return aligned_alloc(FLOATS_ALIGN, bytes);
}

float *bnn_floats_zeroed(long n)
{
	float *p = bnn_floats_alloc(n);

	if (p)
		memset(p, 0, (size_t)(n > 0 ? n : 1) * sizeof(float));
	return p;
}
