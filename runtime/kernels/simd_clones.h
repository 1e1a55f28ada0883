/*
 * simd_clones.h: BNN_SIMD_CLONES, the attribute that builds a hot loop
 * three times (AVX-512, AVX2, baseline x86-64) and lets the dynamic loader
 * pick the best version the CPU has (GCC's target_clones, on x86-64
 * Linux with glibc).  Used by the Gaussian sampler (rng.c) and the
 * optimizers' fused loops (optim_*.c).  Only in ISO C mode (-std=c11),
 * where GCC does not contract a*b + c into an FMA: then every version
 * computes exactly the same floats (fmaf() is exact in every version: one
 * rounding).  -DBNN_NO_SIMD_CLONES turns it off.
 * Internal to the library (not installed).
 */
#ifndef BNN_SIMD_CLONES_H
#define BNN_SIMD_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
        defined(__GLIBC__) && defined(__STRICT_ANSI__) && !defined(BNN_NO_SIMD_CLONES) &&    \
        !defined(BNN_RNG_NO_CLONES)
#define BNN_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* For code that calls fmaf(): clones for the x86-64 levels 4 (AVX-512)
 * and 3 (AVX2 with FMA), where fmaf() is one instruction that vectorises,
 * and the baseline, where it is a call to the C library's (correctly
 * rounded, so the same value). */
#define BNN_SIMD_CLONES_FMA \
	__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BNN_SIMD_CLONES
#define BNN_SIMD_CLONES_FMA
#endif

#endif
