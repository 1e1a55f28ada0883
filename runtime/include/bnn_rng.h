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
 * the Box-Muller transform in float, 64 random bits per pair, written so
 * that the compiler vectorises it (its own polynomial logarithm, sine,
 * cosine and square root, each within 4e-7 relative error); it is the
 * sampler used for weight noise (millions of values per training step).
 * The variates are the same bit for bit on every machine and build of the
 * same source, as long as float arithmetic is IEEE single precision
 * (FLT_EVAL_METHOD 0, as on x86-64 and ARM64) and the compiler fuses no
 * multiply-adds of its own (gcc in ISO C mode, -std=c11, does not; the
 * sampler's own are fmaf() calls, exact everywhere).
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
	uint64_t s[4]; /* xoshiro256** state; never all zero */
} bnn_rng;

/** Seed the generator; any 64-bit seed (including 0) gives a valid state. */
void bnn_rng_seed(bnn_rng *rng, uint64_t seed);

/** A seed for substream i of seed: splitmix64's output number i + 1 from
 *  counter seed, mix(seed + (i + 1)·0x9e3779b97f4a7c15); distinct i give
 *  unrelated seeds (for a generator per Monte-Carlo sample, per batch). */
uint64_t bnn_rng_derive(uint64_t seed, uint64_t i);

/** The next 64 random bits. */
uint64_t bnn_rng_next(bnn_rng *rng);

/** Advance by 2^128 steps: gives a stream independent of the original. */
void bnn_rng_jump(bnn_rng *rng);

/** A uniform double in [0, 1) with 53 random bits. */
double bnn_rng_uniform(bnn_rng *rng);

/** A uniform integer in [0, n) without modulo bias (Lemire's
 *  multiply-shift with rejection); 0 when n is 0. */
uint64_t bnn_rng_below(bnn_rng *rng, uint64_t n);

/**
 * Fill out[0..n) with independent standard normal variates (float).
 * Every variate is finite, |z| <= 6.56 (the radius comes from a uniform
 * on a grid of 2^30 cell midpoints; P(|z| > 6.56) is 5e-11 for an exact
 * normal).  For n < 512, (n + 1) / 2 draws of rng give the pairs, serially,
 * and a call gives a prefix of what a larger n (below 512) would give.
 * From n = 512 on, rng advances by exactly one draw, key, and the output
 * is cut into chunks of BNN_RNG_NORMAL_CHUNK variates (the last one
 * shorter): chunk c comes from sixteen xoshiro256++ lanes of its own, lane
 * l seeded as by bnn_rng_seed() from splitmix64's output number
 * 16c + l + 1 from counter key, mix(key + (16c + l + 1)·0x9e3779b97f4a7c15),
 * in blocks of 512 (the last block of the call cut short).  So the
 * variates depend on the seed and on n's side of 512 only, never on the
 * number of threads (chunks are drawn in parallel from two chunks on), and
 * from 512 on a call gives a prefix of what a larger n would give.  The
 * variates do not depend on the CPU either: the environment variable
 * BNN_RNG=generic (read once) runs the compiled code instead of the
 * AVX-512 intrinsics, with the same results.
 */
void bnn_rng_normal(bnn_rng *rng, float *out, size_t n);

/* The wide sampler's shape: its number of streams, the variates of one
 * block of theirs (also the n from which it is used), and of one chunk
 * (the unit of its parallel split: 2^14, 64 KiB of floats). */
#define BNN_RNG_NORMAL_LANES 16
#define BNN_RNG_NORMAL_BLOCK 512
#define BNN_RNG_NORMAL_CHUNK 16384

/* One call of bnn_rng_normal() drawn in pieces (see
 * bnn_rng_normal_begin()); its fields are private.  It holds no pointer:
 * a copy is a second, independent reader of the same call. */
typedef struct bnn_rng_normal_stream {
	uint64_t key;                           /* the call's draw (n >= 512) */
	uint64_t lane[4][BNN_RNG_NORMAL_LANES]; /* the lanes of chunk `chunk`, */
	size_t chunk, at;                       /* ... at variate `at` */
	size_t n, next;                         /* the call's size; its next block */
	size_t buf_pos, buf_len;                /* buf[buf_pos..buf_len) not yet given */
	float buf[BNN_RNG_NORMAL_BLOCK];
} bnn_rng_normal_stream;

/**
 * Draw the n variates of bnn_rng_normal(rng, out, n) in pieces, for a
 * caller that uses each piece while it is in cache: after
 * bnn_rng_normal_begin(s, rng, n), which advances rng exactly as the call
 * does (nothing more is read from it), calls of bnn_rng_normal_next() on
 * consecutive pieces of any sizes give those n variates in order.  Pieces
 * of multiples of BNN_RNG_NORMAL_BLOCK are written in place; others pass
 * through s's buffer.  No allocation.
 */
void bnn_rng_normal_begin(bnn_rng_normal_stream *s, bnn_rng *rng, size_t n);

/** The next k variates of s into out[0..k); returns how many there were:
 *  k, or fewer once the n of bnn_rng_normal_begin() are all given. */
size_t bnn_rng_normal_next(bnn_rng_normal_stream *s, float *out, size_t k);

/**
 * Position s at variate offset (at most n) of its call: the next
 * bnn_rng_normal_next() gives variates offset, offset + 1, ...  For
 * parallel callers: each thread copies one begun stream and seeks to the
 * pieces it draws; seeking to a multiple of BNN_RNG_NORMAL_CHUNK costs a
 * seeding of sixteen lanes, elsewhere up to a chunk's steps of them.
 */
void bnn_rng_normal_seek(bnn_rng_normal_stream *s, size_t offset);

/** Fill out[0..n) with uniform floats in [0, 1): multiples of 2^-24, two
 *  per draw of rng (the top 24 bits of each half). */
void bnn_rng_uniform_fill(bnn_rng *rng, float *out, size_t n);

/** Permute idx[0..n) uniformly at random (Fisher-Yates from the end, with
 *  bnn_rng_below()); nothing happens for n <= 1. */
void bnn_rng_shuffle(bnn_rng *rng, long *idx, long n);

#ifdef __cplusplus
}
#endif

#endif /* BNN_RNG_H */
