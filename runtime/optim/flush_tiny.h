/*
 * flush_tiny.h: the optimizers' updates write 0 for a parameter or a
 * moment below 1e-30 in magnitude.  A weight whose gradient is only its
 * prior's pull (a first-layer weight of a pixel that is 0 in every image,
 * under weight decay or a Gaussian prior) shrinks geometrically, and after
 * a few thousand steps it and its moments become subnormal floats (below
 * FLT_MIN, 1.2e-38), as do its products with activations and deltas.  On
 * Intel cores every operation with a subnormal operand or result takes a
 * microcode assist, so the matrix products and the update slow down
 * tenfold and more.  Measured with BADAM on the Fashion-MNIST MLP
 * (docs/training.md, "Tiny values"): epochs of 1.7 s at first, 36 s by the
 * 18th; 2.5 s by the 8th when only subnormal values are flushed (the
 * products of weights just above FLT_MIN still are subnormal); 1.7 s, and
 * 2.0 s by the 18th, with this threshold; 1.5 s throughout with the
 * processor's flush-to-zero mode.  A weight of 1e-30 moves no sum of
 * normal-sized terms (float's relative precision is 6e-8), and a second
 * moment of 1e-30 (|g| ~ 1e-15) is far below Adam's ε, so the flush does
 * not change training otherwise.
 * Internal to the library (not installed).
 */
#ifndef BNN_OPTIM_FLUSH_TINY_H
#define BNN_OPTIM_FLUSH_TINY_H

#include <math.h>

/* Magnitudes below this are written as 0. */
#define BNN_FLUSH_BELOW 1e-30f

/* x, or 0 when |x| < BNN_FLUSH_BELOW: a compare and a blend, vectorised. */
static inline float bnn_flush_tiny(float x)
{
	return fabsf(x) < BNN_FLUSH_BELOW ? 0.0f : x;
}

#endif
