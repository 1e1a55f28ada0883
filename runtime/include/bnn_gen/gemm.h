/*
 * bnn_gen/gemm.h: the BLAS seam of the generated code.
 *
 * Every matrix product of a kernel goes through bnn_gen_gemm, hence the
 * library's compiled bnn_sgemm (float) or bnn_dgemm (double, the gradient
 * tests), both in runtime/kernels/gemm.c: generated code never sees the
 * BLAS's own header.  The transposes that lay out a product's operands go
 * through bnn_gen_transpose_matrix (bnn_stranspose, bnn_dtranspose), the
 * same file's.
 */
#ifndef BNN_GEN_GEMM_H
#define BNN_GEN_GEMM_H

#include "real.h"

/* ---- the BLAS seam ------------------------------------------------------ */

/**
 * The library's float matrix product (runtime/kernels/gemm.c), with exactly
 * cblas_sgemm's row-major semantics: C = alpha·op(A)·op(B) + beta·C, op(A)
 * M×K (A itself K×M when trans_a), op(B) K×N (B itself N×K when trans_b),
 * C M×N; lda, ldb and ldc are the row strides of A, B and C as stored.
 * beta == 0 means C is not read (NaN in it does not propagate); K == 0 or
 * alpha == 0 scales C by beta; M or N == 0 does nothing.  On one thread,
 * on a CPU with AVX-512F, it runs gemm.c's own kernel; elsewhere, with the
 * environment variable BNN_GEMM=openblas (read once), or after
 * bnn_set_threads asked for more than one thread, it calls cblas_sgemm.
 * Borrows every array for the call; allocates nothing, cannot fail;
 * threads may call it at once (each packs into its own thread-local
 * buffers, 540 KB).
 */
void bnn_sgemm(int trans_a, int trans_b, long m, long n, long k, float alpha, const float *a,
               long lda, const float *b, long ldb, float beta, float *c, long ldc);

/**
 * bnn_sgemm with a bias: C = alpha·op(A)·op(B) + bias, the N values of
 * bias added to every row of C (a layer's Y = X·Wᵀ + b).  C is not read.
 * The bias is added where the product writes C, in the rounding that
 * filling C's rows with it and calling bnn_sgemm with beta = 1 gives (the
 * same bits), without that pass over C: on a transformer block's step it
 * saved writing and reading back 9 MB.  Borrows every array for the call;
 * allocates nothing, cannot fail.
 */
void bnn_sgemm_bias(int trans_a, int trans_b, long m, long n, long k, float alpha, const float *a,
                    long lda, const float *b, long ldb, const float *bias, float *c, long ldc);

/**
 * bnn_sgemm_bias through a relu: C = relu(alpha·op(A)·op(B) + bias), bias
 * NULL for none, relu(c) = c > 0 ? c : 0 (NaN and -0 give +0).  The
 * same bits as bnn_sgemm_bias followed by a relu pass over C, without
 * that pass: each block of C goes through the relu as the product writes
 * it (a dense layer followed by relu; gen/codegen.c fuses them).
 * Borrows every array for the call; allocates nothing, cannot fail.
 */
void bnn_sgemm_bias_relu(int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *bias,
                         float *c, long ldc);

/**
 * A product through a relu's mask: C = alpha·op(A)·op(B) where y > 0, else
 * 0, y M×N at row stride ldy (a relu's output: the delta of the relu's
 * input, from the product that gives the delta of its output).  The same
 * bits as bnn_sgemm with beta = 0 followed by the relu's backward pass,
 * without that pass: each block of C is masked as the product writes it.
 * Borrows every array for the call; allocates nothing, cannot fail.
 */
void bnn_sgemm_relu_mask(int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *y,
                         long ldy, float *c, long ldc);

/**
 * The library's double matrix product (runtime/kernels/gemm.c), for the
 * double build of the kernels (BNN_GEN_DOUBLE, the gradient tests): the
 * arguments of bnn_sgemm in double, and cblas_dgemm's row-major semantics,
 * which it calls.  Borrows every array for the call; allocates nothing.
 */
void bnn_dgemm(int trans_a, int trans_b, long m, long n, long k, double alpha, const double *a,
               long lda, const double *b, long ldb, double beta, double *c, long ldc);

/** bnn_sgemm_bias in double: C's rows filled with bias, then bnn_dgemm. */
void bnn_dgemm_bias(int trans_a, int trans_b, long m, long n, long k, double alpha, const double *a,
                    long lda, const double *b, long ldb, const double *bias, double *c, long ldc);

/** bnn_sgemm_bias_relu in double: bnn_dgemm_bias (bnn_dgemm when bias is
 *  NULL), then a relu pass over C. */
void bnn_dgemm_bias_relu(int trans_a, int trans_b, long m, long n, long k, double alpha,
                         const double *a, long lda, const double *b, long ldb, const double *bias,
                         double *c, long ldc);

/** bnn_sgemm_relu_mask in double: bnn_dgemm, then the mask. */
void bnn_dgemm_relu_mask(int trans_a, int trans_b, long m, long n, long k, double alpha,
                         const double *a, long lda, const double *b, long ldb, const double *y,
                         long ldy, double *c, long ldc);

/**
 * The library's float transpose (runtime/kernels/gemm.c), the layout change
 * a product's operands may need (BLAS extensions call it omatcopy):
 * b[j·ldb + i] = a[i·lda + j] for i < m, j < n, a and b not overlapping.
 * On a CPU with AVX-512F it moves 16 x 16 blocks with the GEMM's packing
 * transposes, elsewhere tiles of plain copies.  Borrows both arrays for
 * the call; allocates nothing, cannot fail.
 */
void bnn_stranspose(long m, long n, const float *a, long lda, float *b, long ldb);

/** The same in double (tiles of plain copies), for the double build. */
void bnn_dtranspose(long m, long n, const double *a, long lda, double *b, long ldb);

/* b = aᵀ: b[j·ldb + i] = a[i·lda + j], i < m, j < n.  Float:
 * bnn_stranspose; double: bnn_dtranspose. */
static inline void bnn_gen_transpose_matrix(long m, long n, const bnn_real *restrict a, long lda,
                                            bnn_real *restrict b, long ldb)
{
#ifdef BNN_GEN_DOUBLE
	bnn_dtranspose(m, n, a, lda, b, ldb);
#else
	bnn_stranspose(m, n, a, lda, b, ldb);
#endif
}

/* C = alpha·op(A)·op(B) + beta·C, row-major; op(A) is M×K, op(B) K×N.
 * Float: bnn_sgemm; double (the gradient tests): bnn_dgemm. */
static inline void bnn_gen_gemm(int trans_a, int trans_b, long m, long n, long k, double alpha,
                                const bnn_real *restrict a, long lda, const bnn_real *restrict b,
                                long ldb, double beta, bnn_real *restrict c, long ldc)
{
#ifdef BNN_GEN_DOUBLE
	bnn_dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
	bnn_sgemm(trans_a, trans_b, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, c, ldc);
#endif
}

/* C = alpha·op(A)·op(B) + bias (every row of C): bnn_sgemm_bias or
 * bnn_dgemm_bias. */
static inline void bnn_gen_gemm_bias(int trans_a, int trans_b, long m, long n, long k, double alpha,
                                     const bnn_real *restrict a, long lda,
                                     const bnn_real *restrict b, long ldb,
                                     const bnn_real *restrict bias, bnn_real *restrict c, long ldc)
{
#ifdef BNN_GEN_DOUBLE
	bnn_dgemm_bias(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
#else
	bnn_sgemm_bias(trans_a, trans_b, m, n, k, (float)alpha, a, lda, b, ldb, bias, c, ldc);
#endif
}

/* C = relu(alpha·op(A)·op(B) + bias), bias NULL for none:
 * bnn_sgemm_bias_relu or bnn_dgemm_bias_relu. */
static inline void bnn_gen_gemm_bias_relu(int trans_a, int trans_b, long m, long n, long k,
                                          double alpha, const bnn_real *restrict a, long lda,
                                          const bnn_real *restrict b, long ldb,
                                          const bnn_real *restrict bias, bnn_real *restrict c,
                                          long ldc)
{
#ifdef BNN_GEN_DOUBLE
	bnn_dgemm_bias_relu(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
#else
	bnn_sgemm_bias_relu(trans_a, trans_b, m, n, k, (float)alpha, a, lda, b, ldb, bias, c, ldc);
#endif
}

/* C = alpha·op(A)·op(B) where y > 0, else 0: bnn_sgemm_relu_mask or
 * bnn_dgemm_relu_mask. */
static inline void bnn_gen_gemm_relu_mask(int trans_a, int trans_b, long m, long n, long k,
                                          double alpha, const bnn_real *restrict a, long lda,
                                          const bnn_real *restrict b, long ldb,
                                          const bnn_real *restrict y, long ldy,
                                          bnn_real *restrict c, long ldc)
{
#ifdef BNN_GEN_DOUBLE
	bnn_dgemm_relu_mask(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, y, ldy, c, ldc);
#else
	bnn_sgemm_relu_mask(trans_a, trans_b, m, n, k, (float)alpha, a, lda, b, ldb, y, ldy, c,
	                    ldc);
#endif
}

#endif /* BNN_GEN_GEMM_H */
