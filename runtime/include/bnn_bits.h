/*
 * bnn_bits.h: the bits of a float or a double as an unsigned integer, and
 * back.
 *
 * The fast math of the kernels (the Gaussian sampler's logarithm,
 * Bayes-by-Backprop's exp, the KL's logarithm, the pruning's sort keys,
 * the generated code's tanh) works on a float's sign, exponent and
 * mantissa as integer bits.  memcpy is the one defined way to read an
 * object's bytes as another type in C; compilers turn these fixed-size
 * copies into a register move, so the helpers cost nothing in a hot loop.
 *
 * A header of its own, installed but not included by bnn.h: it is not
 * part of the library's interface, only a tool of the library's kernels
 * (runtime/kernels, runtime/optim) and of the generated code's
 * (bnn_gen/elementwise.h), which include it where they need it.
 */
#ifndef BNN_BITS_H
#define BNN_BITS_H

#include <stdint.h>
#include <string.h>

/* The 32 bits of a float. */
static inline uint32_t bnn_float_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

/* The float whose bits are u. */
static inline float bnn_bits_float(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/* The 64 bits of a double. */
static inline uint64_t bnn_double_bits(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

/* The double whose bits are u. */
static inline double bnn_bits_double(uint64_t u)
{
	double x;

	memcpy(&x, &u, sizeof x);
	return x;
}

#endif /* BNN_BITS_H */
