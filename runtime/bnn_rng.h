/*
 * bnn_rng.h: random numbers for libbnn (included by bnn.h).
 *
 * One generator, xoshiro256** (Blackman and Vigna), with its state held
 * explicitly by the caller: no hidden global state, so two threads with two
 * bnn_rng values never interfere, and a run is reproduced exactly by its
 * seed.  Seeding expands a 64-bit seed through splitmix64; bnn_rng_jump()
 * advances by 2^128 steps to split off independent streams.
 *
 * The Gaussian sampler fills float arrays with standard normal variates by
 * the Box-Muller transform on pairs of 24-bit uniforms, in blocks, written
 * so the compiler vectorises the logarithm-free parts; it is the sampler
 * used for weight noise (millions of values per training step).
 *
 * None of these functions can fail; none allocate.
 */
#ifndef BNN_RNG_H
#define BNN_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The generator's state; copy it to fork a stream (then jump one copy). */
typedef struct bnn_rng {
	uint64_t s[4];
} bnn_rng;

/** Seed the generator; any 64-bit seed (including 0) gives a valid state. */
void bnn_rng_seed(bnn_rng *rng, uint64_t seed);

/** The next 64 random bits. */
uint64_t bnn_rng_next(bnn_rng *rng);

/** Advance by 2^128 steps: gives a stream independent of the original. */
void bnn_rng_jump(bnn_rng *rng);

/** A uniform double in [0, 1) with 53 random bits. */
double bnn_rng_uniform(bnn_rng *rng);

/** A uniform integer in [0, n) without modulo bias; 0 when n is 0. */
uint64_t bnn_rng_below(bnn_rng *rng, uint64_t n);

/** Fill out[0..n) with independent standard normal variates (float). */
void bnn_rng_normal(bnn_rng *rng, float *out, size_t n);

/** Fill out[0..n) with uniform floats in [0, 1). */
void bnn_rng_uniform_fill(bnn_rng *rng, float *out, size_t n);

/** Permute idx[0..n) uniformly at random (Fisher-Yates). */
void bnn_rng_shuffle(bnn_rng *rng, long *idx, long n);

#ifdef __cplusplus
}
#endif

#endif /* BNN_RNG_H */
