/*
 * fixtures.h: what the generated-code tests (t/gen_gradcheck.c,
 * t/gen_batchnorm.c, t/gen_patch.c, t/gen_whvi.c) and the kernel tests
 * that need them (t/runtime_sqgrad.c, t/runtime_fwht.c) share: the random
 * numbers of their weights and data, splitmix64 (Steele, Lea and Flood
 * 2014), written here rather than taken from libbnn so that a change in
 * the runtime's generator cannot move them; buffers; the comparison of
 * two arrays; and the explicit Hadamard matrix the fast transform is
 * checked against.
 */
#ifndef T_FIXTURES_H
#define T_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

/* The next 64 bits: the state advances by the golden-ratio increment and
 * is mixed. */
uint64_t splitmix_next(uint64_t *state);

/* Uniform on [lo, hi) from the top 53 bits of splitmix_next. */
double splitmix_uniform(uint64_t *state, double lo, double hi);

/* n zeroed doubles (at least one); bails out of the TAP plan when memory
 * runs out. */
double *splitmix_doubles(size_t n);

/* The largest |a_i − b_i| / max(|a_i|, |b_i|, 1e-3) (infinite if either
 * is NaN): a relative difference that treats values below 1e-3 as
 * absolute. */
double fixture_max_rel(long n, const double *a, const double *b);

/* The Hadamard matrix H_n (entries ±1, n a power of 2) by Sylvester's
 * construction, row-major in h with rows stride apart (stride >= n). */
void fixture_sylvester(long n, long stride, double *h);

#endif
