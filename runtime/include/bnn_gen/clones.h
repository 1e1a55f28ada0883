/*
 * bnn_gen/clones.h: BNN_GEN_CLONES, the attribute that builds a kernel
 * twice, for AVX2 and for the baseline x86-64, and lets the dynamic loader
 * pick the version the CPU runs (GCC's target_clones: an ifunc, resolved
 * once when the program starts).
 *
 * Why.  Generated code is compiled with the user's flags, usually plain
 * -O2, which on x86-64 targets SSE2: the kernels' element-wise loops ran
 * four floats at a time where the CPU has eight (AVX2) or sixteen.  On a
 * transformer block's training step (bench/transformer_128.bnn) the loops
 * outside the matrix products took 6.6 ms of 26 ms with SSE2 and 5.0-5.4
 * with -mavx2 (docs/benchmarks.md, "transformer").  The products do not
 * change: they are the library's (bnn_sgemm), which dispatches itself.
 *
 * Same bits.  The AVX2 version runs the same IEEE single and double
 * operations in the same order as the baseline: every loop is
 * element-wise or a fixed-order sum (bnn_gen/loop.h), and AVX2 has no
 * fused multiply-add (GCC's "avx2" target does not imply FMA), so the
 * compiler cannot contract a·b + c into one rounding, whatever
 * -ffp-contract says.  AVX-512 implies FMA: its version is added only in
 * ISO C mode (-std=c11 and the like: __STRICT_ANSI__, the mode the
 * library and the tests build in), where GCC's default is
 * -ffp-contract=off, as for the library's own clones (simd_clones.h).
 *
 * Only where it works and helps: GCC (clang's target_clones differs) on
 * x86-64 Linux with glibc (ifuncs), and not when the code is already
 * compiled for AVX2 or better (-mavx2, -march=native: the baseline is
 * then at least as good).  Define BNN_GEN_NO_CLONES to build one version.
 *
 * A cloned function is never inlined into its caller; the helpers it
 * calls for every value or row are, into each version (BNN_GEN_INLINE
 * where GCC would otherwise keep a call, which would run the baseline's
 * code).  So the attribute goes on the kernels that loop over a batch,
 * not on helpers, nor on kernels whose loops rely on a shape the call
 * site makes a constant (bnn_gen/conv.h, bnn_gen/pool.h).
 */
#ifndef BNN_GEN_CLONES_H
#define BNN_GEN_CLONES_H

#include <string.h> /* defines __GLIBC__ */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
        defined(__GLIBC__) && !defined(__AVX2__) && !defined(BNN_GEN_NO_CLONES) &&           \
        !defined(BNN_NO_SIMD_CLONES)
#if defined(__STRICT_ANSI__)
#define BNN_GEN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BNN_GEN_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define BNN_GEN_CLONES
#endif

#if defined(__GNUC__)
#define BNN_GEN_INLINE static inline __attribute__((always_inline))
#else
#define BNN_GEN_INLINE static inline
#endif

#endif /* BNN_GEN_CLONES_H */
