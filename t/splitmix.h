/*
 * splitmix.h: the random numbers of the generated-code tests' weights and
 * data (t/gen_gradcheck.c, t/gen_batchnorm.c, t/gen_patch.c): splitmix64
 * (Steele, Lea and Flood 2014), written here rather than taken from libbnn
 * so that a change in the runtime's generator cannot move the tests'
 * fixtures.
 */
#ifndef T_SPLITMIX_H
#define T_SPLITMIX_H

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

#endif
