/*
 * gemm_internal.h: the parts of gemm.c that the library's own code and
 * its tests use, not installed.  bnn_sgemm and bnn_dgemm themselves are
 * declared in bnn_gen/gemm.h.
 */
#ifndef BNN_GEMM_INTERNAL_H
#define BNN_GEMM_INTERNAL_H

/* The two ways of computing a product. */
enum {
	BNN_GEMM_PATH_AVX512 = 1,  /* gemm.c's AVX-512 kernel */
	BNN_GEMM_PATH_OPENBLAS = 2 /* cblas_sgemm */
};

/* 1 if this build has the AVX-512 kernel and the CPU (and the OS) can run
 * it, else 0. */
int bnn_gemm_avx512_available(void);

/* The path bnn_sgemm takes on one thread: BNN_GEMM_PATH_OPENBLAS if the
 * environment variable BNN_GEMM is "openblas" or the kernel cannot run
 * here, else BNN_GEMM_PATH_AVX512.  Read once, on the first call. */
int bnn_gemm_default_path(void);

/* bnn_sgemm by the given path, whatever the thread count and BNN_GEMM say
 * (for the tests and the benchmark).  BNN_GEMM_PATH_AVX512 requires
 * bnn_gemm_avx512_available(); in a build without the kernel it calls
 * OpenBLAS. */
void bnn_sgemm_path(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                    const float *a, long lda, const float *b, long ldb, float beta, float *c,
                    long ldc);

#endif
