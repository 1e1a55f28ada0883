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

/* The number of threads bnn_sgemm runs an M x N x K product on: 1 inside
 * an active parallel region, when the team size (omp_get_max_threads) is
 * 1, or when the product is small (below BNN_GEMM_PAR_FLOPS flops in
 * gemm.c); else the team size, capped so that each thread gets at least
 * half the threshold's flops.  The product may use fewer (no more parts
 * than blocks of 12 rows or 32 columns). */
int bnn_gemm_threads_for(long m, long n, long k);

/* bnn_sgemm by the given path, whatever BNN_GEMM says (for the tests and
 * the benchmark), threaded as bnn_sgemm is.  BNN_GEMM_PATH_AVX512 requires
 * bnn_gemm_avx512_available(); in a build without the kernel it calls
 * OpenBLAS. */
void bnn_sgemm_path(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                    const float *a, long lda, const float *b, long ldb, float beta, float *c,
                    long ldc);

/* bnn_sgemm_bias (relu 0) or bnn_sgemm_bias_relu (1) by the given path
 * (for the tests). */
void bnn_sgemm_bias_path(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *bias,
                         float *c, long ldc, int relu);

/* bnn_sgemm_relu_mask by the given path (for the tests). */
void bnn_sgemm_relu_mask_path(int path, int trans_a, int trans_b, long m, long n, long k,
                              float alpha, const float *a, long lda, const float *b, long ldb,
                              const float *y, long ldy, float *c, long ldc);

#endif
