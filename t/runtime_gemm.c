/*
 * runtime_gemm.c: TAP tests of bnn_sgemm, the library's float matrix
 * product (runtime/kernels/gemm.c), on both of its paths: the AVX-512 kernel
 * (skipped on a CPU without AVX-512F) and the OpenBLAS fallback.
 *
 * The truth is a plain triple loop in double.  Each product is checked
 * entry by entry: |got − want| ≤ 1e-5·√k·(|alpha|·Σ_p |a_ip·b_pj| +
 * |beta·c_ij|), a bound float rounding meets with a wide margin and a
 * wrong index or a lost block misses by orders of magnitude.  Every
 * transpose combination is run over
 *
 *  - all shapes with M, N, K in a set of small sizes around the kernel's
 *    register tile (12 rows, 16 and 32 columns), with alpha in {1, −0.5}
 *    and beta in {0 (C filled with NaN first), 1, 0.25} in turn and row
 *    strides wider than the rows in turn;
 *  - shapes on either side of every cache block (192 rows, 192 of the
 *    inner dimension, 512 columns) and odd primes;
 *  - the benchmark's shapes (the 784→512 layer at batch 128, the 3×3
 *    convolution's GEMMs), checked on every 7th row to stay fast;
 *  - K = 0 (C scaled by beta), alpha = 0, M or N = 0 (C untouched).
 *
 * C is surrounded by sentinels (the gap between N and ldc, a row after
 * the last) that must come back unchanged.  Threads: on both paths, the
 * benchmark networks' products and odd shapes give the same bytes on 1, 2
 * and 3 threads, and small products (bnn_gemm_threads_for) stay on one.
 * bnn_sgemm_bias (a bias added where C is written) gives, on both paths,
 * the bytes of C's rows filled with the bias and bnn_sgemm with beta = 1.
 * Also: the dispatch (BNN_GEMM), bnn_dgemm, bnn_dgemm_bias, the double product, and the
 * transposes bnn_stranspose and bnn_dtranspose.  Every seed
 * is fixed; the whole test takes well under a second.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bnn.h"
#include "bnn_gen/gemm.h"
#include "kernels/gemm_internal.h"
#include "tap.h"

#define SENTINEL 12345.0f

static uint64_t seed = 42;

/* Uniform in [-1, 1). */
static float uniform(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((double)(seed >> 40) / (double)(1ULL << 23) - 1.0);
}

/* One product and its check. */
typedef struct gemm_case {
	int ta, tb;
	long m, n, k, lda, ldb, ldc;
	float alpha, beta;
	long row_step; /* check every row_step-th row */
} gemm_case;

/* The worst error over a group of products, as a fraction of its bound,
 * and the product it happened in. */
typedef struct gemm_worst {
	double ratio;
	gemm_case at;
	int nan_leak, sentinel, count;
} gemm_worst;

static float *alloc_floats(long n)
{
	float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);

	if (!p)
		tap_bail_out("out of memory");
	return p;
}

/* Run one product by path and fold its errors into w. */
static void run_case(int path, const gemm_case *q, gemm_worst *w)
{
	const long arows = q->ta ? q->k : q->m, brows = q->tb ? q->n : q->k;
	const long asz = arows * q->lda, bsz = brows * q->ldb, csz = (q->m + 1) * q->ldc;
	float *a = alloc_floats(asz), *b = alloc_floats(bsz);
	float *c = alloc_floats(csz), *c0 = alloc_floats(csz);
	long i, j, p;

	for (i = 0; i < asz; i++)
		a[i] = uniform();
	for (i = 0; i < bsz; i++)
		b[i] = uniform();
	for (i = 0; i < csz; i++)
		c[i] = SENTINEL;
	for (i = 0; i < q->m; i++)
		for (j = 0; j < q->n; j++)
			c[i * q->ldc + j] = q->beta == 0.0f ? NAN : uniform();
	memcpy(c0, c, (size_t)csz * sizeof *c);

	bnn_sgemm_path(path, q->ta, q->tb, q->m, q->n, q->k, q->alpha, a, q->lda, b, q->ldb,
	               q->beta, c, q->ldc);

	for (i = 0; i < q->m; i += q->row_step)
		for (j = 0; j < q->n; j++) {
			double s = 0, mag = 0, want, bound, err;
			const double cij = c0[i * q->ldc + j], got = c[i * q->ldc + j];

			for (p = 0; p < q->k; p++) {
				double x = q->ta ? a[p * q->lda + i] : a[i * q->lda + p];
				double y = q->tb ? b[j * q->ldb + p] : b[p * q->ldb + j];

				s += x * y;
				mag += fabs(x * y);
			}
			want = q->alpha * s;
			mag *= fabs(q->alpha);
			if (q->beta != 0.0f) {
				want += q->beta * cij;
				mag += fabs(q->beta * cij);
			}
			if (isnan(got)) {
				w->nan_leak++;
				w->at = *q;
				continue;
			}
			bound = 1e-5 * sqrt((double)q->k + 1.0) * mag + 1e-30;
			err = fabs(got - want) / bound;
			if (err > w->ratio) {
				w->ratio = err;
				w->at = *q;
			}
		}
	/* the gap between N and ldc, and the row after C */
	for (i = 0; i <= q->m; i++)
		for (j = i < q->m ? q->n : 0; j < q->ldc; j++)
			if (c[i * q->ldc + j] != SENTINEL && !(i < q->m && j < q->n)) {
				w->sentinel++;
				w->at = *q;
			}
	w->count++;
	free(a);
	free(b);
	free(c);
	free(c0);
}

static void report(const gemm_worst *w, const char *what)
{
	ok(w->ratio <= 1.0 && !w->nan_leak && !w->sentinel && w->count > 0,
	   "%s: %d products, worst error %.3g of the bound", what, w->count, w->ratio);
	if (w->ratio > 1.0 || w->nan_leak || w->sentinel)
		tap_diag("worst at ta=%d tb=%d m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld alpha=%g "
		         "beta=%g (NaN leaks %d, sentinels overwritten %d)",
		         w->at.ta, w->at.tb, w->at.m, w->at.n, w->at.k, w->at.lda, w->at.ldb,
		         w->at.ldc, w->at.alpha, w->at.beta, w->nan_leak, w->sentinel);
}

static const float alphas[] = { 1.0f, -0.5f };
static const float betas[] = { 0.0f, 1.0f, 0.25f };

/* A case with the given shape; strides wider than the rows when pad. */
static gemm_case make_case(int ta, int tb, long m, long n, long k, int variant, long pad)
{
	gemm_case q;

	q.ta = ta;
	q.tb = tb;
	q.m = m;
	q.n = n;
	q.k = k;
	q.lda = (ta ? m : k) + pad;
	q.ldb = (tb ? k : n) + pad;
	q.ldc = n + pad;
	if (q.lda < 1)
		q.lda = 1;
	if (q.ldb < 1)
		q.ldb = 1;
	if (q.ldc < 1)
		q.ldc = 1;
	q.alpha = alphas[variant % 2];
	q.beta = betas[(variant / 2) % 3];
	q.row_step = 1;
	return q;
}

static const char *const trans_names[4] = { "NN", "NT", "TN", "TT" };

/* Small shapes: every M, N, K of the list, alpha, beta and padding in
 * turn. */
static void test_small(int path, const char *pname)
{
	static const long sizes[] = { 1, 2, 3, 7, 11, 12, 13, 16, 17, 31, 32, 33 };
	const int ns = (int)(sizeof sizes / sizeof sizes[0]);
	int t, im, in, ik, v = 0;
	char what[128];

	for (t = 0; t < 4; t++) {
		gemm_worst w = { 0 };

		for (im = 0; im < ns; im++)
			for (in = 0; in < ns; in++)
				for (ik = 0; ik < ns; ik++, v++) {
					gemm_case q = make_case(t >> 1, t & 1, sizes[im], sizes[in],
					                        sizes[ik], v % 6,
					                        (v / 6) % 3 == 2 ? 5 : 0);
					run_case(path, &q, &w);
				}
		snprintf(what, sizeof what, "%s %s: small shapes", pname, trans_names[t]);
		report(&w, what);
	}
}

/* Shapes around the cache blocks, odd primes, and the benchmark's. */
static void test_blocks(int path, const char *pname)
{
	static const long shapes[][3] = {
		{ 191, 33, 193 }, { 192, 17, 192 },  { 193, 47, 191 }, { 385, 31, 13 },
		{ 13, 511, 193 }, { 25, 512, 97 },   { 11, 513, 385 }, { 7, 1025, 31 },
		{ 37, 41, 43 },   { 101, 103, 107 }, { 12, 32, 192 },  { 24, 64, 384 },
		{ 97, 127, 577 },
	};
	const int ns = (int)(sizeof shapes / sizeof shapes[0]);
	int t, s, v = 0;
	char what[128];

	for (t = 0; t < 4; t++) {
		gemm_worst w = { 0 };

		for (s = 0; s < ns; s++, v++) {
			gemm_case q = make_case(t >> 1, t & 1, shapes[s][0], shapes[s][1],
			                        shapes[s][2], v % 6, v % 2 ? 3 : 0);
			run_case(path, &q, &w);
		}
		snprintf(what, sizeof what, "%s %s: block boundaries", pname, trans_names[t]);
		report(&w, what);
	}
}

static void test_bench_shapes(int path, const char *pname)
{
	/* ta, tb, m, n, k, lda, ldb, ldc */
	static const long shapes[][8] = {
		{ 0, 1, 128, 512, 784, 784, 784, 512 },   /* dense forward X·Wᵀ */
		{ 1, 0, 512, 784, 128, 512, 784, 784 },   /* dense dW = Gᵀ·X */
		{ 0, 0, 128, 784, 512, 512, 784, 784 },   /* dense dX = G·W */
		{ 0, 0, 32, 3136, 288, 288, 3136, 3136 }, /* conv forward W·col */
		{ 0, 1, 288, 32, 784, 3136, 784, 32 },    /* conv dW col_i·G_iᵀ */
		{ 1, 0, 288, 3136, 32, 288, 3136, 3136 }, /* conv dX Wᵀ·G */
		{ 0, 1, 32, 50, 13, 13, 13, 50 },         /* 13-50-50-1, batch 32 */
		{ 1, 0, 50, 13, 32, 50, 13, 13 },
		{ 0, 0, 32, 50, 50, 50, 50, 50 },
		{ 0, 1, 128, 1, 50, 50, 50, 1 },
		{ 0, 1, 128, 10, 512, 512, 512, 10 }, /* a 10-class output layer */
		{ 1, 0, 10, 512, 128, 10, 512, 512 },
		{ 0, 0, 128, 512, 10, 10, 512, 512 },
	};
	const int ns = (int)(sizeof shapes / sizeof shapes[0]);
	gemm_worst w = { 0 };
	char what[128];
	int s;

	for (s = 0; s < ns; s++) {
		gemm_case q;

		q.ta = (int)shapes[s][0];
		q.tb = (int)shapes[s][1];
		q.m = shapes[s][2];
		q.n = shapes[s][3];
		q.k = shapes[s][4];
		q.lda = shapes[s][5];
		q.ldb = shapes[s][6];
		q.ldc = shapes[s][7];
		q.alpha = s % 3 == 1 ? -0.5f : 1.0f;
		q.beta = betas[s % 3];
		q.row_step = q.m * q.n * q.k > 1000000 ? 7 : 1;
		run_case(path, &q, &w);
	}
	snprintf(what, sizeof what, "%s: the benchmark's and the MLPs' shapes", pname);
	report(&w, what);
}

/* K = 0, alpha = 0, M or N = 0. */
static void test_degenerate(int path, const char *pname)
{
	float a[4] = { NAN, NAN, NAN, NAN }, b[4] = { NAN, NAN, NAN, NAN };
	float c[6], want[6];
	int i, t, ok = 1;

	for (t = 0; t < 4; t++) {
		/* k = 0: C = beta·C; beta = 0 clears NaN */
		for (i = 0; i < 6; i++)
			c[i] = (float)i;
		bnn_sgemm_path(path, t >> 1, t & 1, 2, 3, 0, 1.0f, a, 2, b, 3, 0.25f, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == 0.25f * (float)i;
		for (i = 0; i < 6; i++)
			c[i] = NAN;
		bnn_sgemm_path(path, t >> 1, t & 1, 2, 3, 0, 1.0f, a, 2, b, 3, 0.0f, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == 0.0f;
		/* alpha = 0: A and B (NaN here) are not read */
		for (i = 0; i < 6; i++)
			c[i] = (float)i;
		bnn_sgemm_path(path, t >> 1, t & 1, 2, 3, 1, 0.0f, a, 3, b, 3, 0.25f, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == 0.25f * (float)i;
		/* m = 0 or n = 0: nothing touched */
		for (i = 0; i < 6; i++)
			c[i] = want[i] = (float)i;
		bnn_sgemm_path(path, t >> 1, t & 1, 0, 3, 2, 1.0f, a, 2, b, 3, 0.0f, c, 3);
		bnn_sgemm_path(path, t >> 1, t & 1, 2, 0, 2, 1.0f, a, 2, b, 2, 0.0f, c, 3);
		ok &= memcmp(c, want, sizeof c) == 0;
	}
	ok(ok,
	   "%s: K = 0 or alpha = 0 scales C by beta (beta = 0 clears NaN), M or N = 0 "
	   "leaves C alone",
	   pname);
}

/* BNN_GEMM=openblas, read in a child so this process's choice stays. */
static int child_default_path(const char *env)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (env)
			setenv("BNN_GEMM", env, 1);
		else
			unsetenv("BNN_GEMM");
		_exit(bnn_gemm_default_path());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_dispatch(void)
{
	const int avx = bnn_gemm_avx512_available();
	float a[6], b[6], c[4], want[4];
	int i, t;

	is_int(child_default_path("openblas"), BNN_GEMM_PATH_OPENBLAS,
	       "BNN_GEMM=openblas chooses OpenBLAS");
	is_int(child_default_path(NULL), avx ? BNN_GEMM_PATH_AVX512 : BNN_GEMM_PATH_OPENBLAS,
	       "without BNN_GEMM: the AVX-512 kernel if the CPU has it (%s)",
	       avx ? "it has" : "it has not");
	is_int(child_default_path("other"), avx ? BNN_GEMM_PATH_AVX512 : BNN_GEMM_PATH_OPENBLAS,
	       "BNN_GEMM set to anything else: the same");
	/* bnn_sgemm itself, on one thread and on two */
	for (i = 0; i < 6; i++) {
		a[i] = (float)(i + 1);
		b[i] = (float)(2 * i - 3);
	}
	/* C (2x2) = A (2x3) · B (3x2) */
	want[0] = 1 * -3 + 2 * 1 + 3 * 5;
	want[1] = 1 * -1 + 2 * 3 + 3 * 7;
	want[2] = 4 * -3 + 5 * 1 + 6 * 5;
	want[3] = 4 * -1 + 5 * 3 + 6 * 7;
	for (t = 1; t <= 2; t++) {
		bnn_set_threads(t);
		for (i = 0; i < 4; i++)
			c[i] = NAN;
		bnn_sgemm(0, 0, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2);
		ok(memcmp(c, want, sizeof c) == 0, "bnn_sgemm with %d thread%s: exact on integers",
		   t, t > 1 ? "s" : "");
	}
	bnn_set_threads(1);
}

/*
 * Threads: C computed with bnn_set_threads(1), 2 and 3 has the same bytes
 * (sentinels included), on the shapes of the benchmark networks'
 * products (784->512, 512->512 and 512->10 at batch 128 and 32: forward
 * X·Wᵀ, dW = Gᵀ·X, dX = G·W, each in all four transposes) and on odd
 * shapes, alpha and beta in turn (beta 0 on a C of NaN) and strides wider
 * than the rows in turn.  A product is computed once per thread count into
 * copies of the same C, so each comparison is of one product's bits.
 */
static int threads_case(int path, int ta, int tb, long m, long n, long k, int variant,
                        long *parallel)
{
	const long pad = variant % 2 ? 3 : 0;
	const long lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
	const long asz = (ta ? k : m) * lda, bsz = (tb ? n : k) * ldb, csz = (m + 1) * ldc;
	const float alpha = alphas[variant % 2], beta = betas[(variant / 2) % 3];
	float *a = alloc_floats(asz), *b = alloc_floats(bsz), *c0 = alloc_floats(csz);
	float *c[3];
	long i;
	int t, same = 1;

	for (i = 0; i < asz; i++)
		a[i] = uniform();
	for (i = 0; i < bsz; i++)
		b[i] = uniform();
	for (i = 0; i < csz; i++)
		c0[i] = i < m * ldc && i % ldc < n ? (beta == 0.0f ? NAN : uniform()) : SENTINEL;
	for (t = 0; t < 3; t++) {
		c[t] = alloc_floats(csz);
		memcpy(c[t], c0, (size_t)csz * sizeof *c0);
		bnn_set_threads(t + 1);
		if (t == 1 && bnn_gemm_threads_for(m, n, k) > 1)
			(*parallel)++;
		bnn_sgemm_path(path, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c[t], ldc);
	}
	bnn_set_threads(1);
	for (t = 1; t < 3; t++)
		same &= memcmp(c[t], c[0], (size_t)csz * sizeof *c0) == 0;
	/* and the product itself is right: no NaN left where beta was 0 */
	for (i = 0; i < m * ldc; i++)
		if (i % ldc < n && isnan(c[0][i]))
			same = 0;
	if (!same)
		tap_diag("%s%s m=%ld n=%ld k=%ld variant %d: C differs across thread counts",
		         ta ? "T" : "N", tb ? "T" : "N", m, n, k, variant);
	for (t = 0; t < 3; t++)
		free(c[t]);
	free(a);
	free(b);
	free(c0);
	return same;
}

static void test_threads(int path, const char *pname)
{
	/* in, out of the benchmark networks' dense layers */
	static const long layers[][2] = { { 784, 512 }, { 512, 512 }, { 512, 10 } };
	static const long batches[] = { 128, 32 };
	static const long odd[][3] = {
		{ 37, 53, 71 },   { 137, 253, 171 }, { 97, 389, 71 },
		{ 301, 29, 203 }, { 13, 1025, 97 },
	};
	long parallel = 0, count = 0, big = 0;
	int l, bi, prod, t, s, v = 0, same = 1;

	for (bi = 0; bi < 2; bi++)
		for (l = 0; l < 3; l++)
			for (prod = 0; prod < 3; prod++) {
				const long in = layers[l][0], out = layers[l][1], bt = batches[bi];
				/* forward (batch, out, in), dW (out, in, batch), dX (batch, in, out) */
				const long m = prod == 1 ? out : bt;
				const long n = prod == 0 ? out : in;
				const long k = prod == 0 ? in : prod == 1 ? bt : out;

				for (t = 0; t < 4; t++, v++, count++) {
					same &= threads_case(path, t >> 1, t & 1, m, n, k, v % 6,
					                     &parallel);
					big += 2.0 * (double)m * (double)n * (double)k >= 4e6;
				}
			}
	for (s = 0; s < 5; s++)
		for (t = 0; t < 4; t++, v++, count++) {
			same &= threads_case(path, t >> 1, t & 1, odd[s][0], odd[s][1], odd[s][2],
			                     v % 6, &parallel);
			big += 2.0 * (double)odd[s][0] * (double)odd[s][1] * (double)odd[s][2] >=
			       4e6;
		}
	ok(same, "%s: %ld products give the same bytes on 1, 2 and 3 threads", pname, count);
	ok(parallel >= big && big >= 40,
	   "%s: %ld of them ran on more than one thread (all %ld of at least 4 Mflop)", pname,
	   parallel, big);
}

/* Which products run on more than one thread. */
static void test_threads_for(void)
{
	int in_region = 0;

	bnn_set_threads(1);
	is_int(bnn_gemm_threads_for(128, 512, 784), 1, "1 thread: a 784->512 product stays on it");
	bnn_set_threads(3);
	is_int(bnn_gemm_threads_for(128, 512, 784), 3, "3 threads: a 784->512 product uses them");
	ok(bnn_gemm_threads_for(32, 50, 13) == 1 && bnn_gemm_threads_for(50, 13, 32) == 1 &&
	           bnn_gemm_threads_for(32, 50, 50) == 1 && bnn_gemm_threads_for(50, 50, 32) == 1 &&
	           bnn_gemm_threads_for(32, 1, 50) == 1 && bnn_gemm_threads_for(37, 53, 71) == 1,
	   "3 threads: the 13-50-50-1 network's products at batch 32 stay on one");
	ok(bnn_gemm_threads_for(0, 512, 784) == 1 && bnn_gemm_threads_for(128, 512, 0) == 1,
	   "3 threads: empty products stay on one");
#ifdef _OPENMP
#pragma omp parallel num_threads(2) reduction(+ : in_region)
	in_region += bnn_gemm_threads_for(128, 512, 784);
	is_int(in_region, 2, "inside a parallel region, every product stays on its thread");
#else
	(void)in_region;
	tap_skip(1, "built without OpenMP");
#endif
	bnn_set_threads(1);
}

/* bnn_dgemm, the double product of the kernels' double build (the
 * gradient tests), for each transpose combination on shapes that are not
 * multiples of anything, with row strides wider than the rows, alpha −0.5
 * and beta 0 (C filled with NaN first) or 0.25: every entry of C within
 * 1e-13·√K of the magnitude of its terms of a triple loop, and the gap
 * between N and ldc untouched. */
static void test_dgemm(void)
{
	static const long sizes[] = { 1, 5, 13, 40 };
	int t;

	for (t = 0; t < 4; t++) {
		const int ta = t >> 1, tb = t & 1;
		long bad = 0, count = 0, si, sj, sk, i, j, p;
		int bi;

		for (si = 0; si < 4; si++)
			for (sj = 0; sj < 4; sj++)
				for (sk = 0; sk < 4; sk++)
					for (bi = 0; bi < 2; bi++) {
						const long m = sizes[si], n = sizes[sj],
						           k = sizes[sk];
						const long lda = (ta ? m : k) + 3,
						           ldb = (tb ? k : n) + 2;
						const long ldc = n + 1;
						const double alpha = -0.5, beta = bi ? 0.25 : 0.0;
						double *a = malloc((size_t)((ta ? k : m) * lda) *
						                   sizeof *a);
						double *b = malloc((size_t)((tb ? n : k) * ldb) *
						                   sizeof *b);
						double *c = malloc((size_t)(m * ldc) * sizeof *c);
						double *c0 = malloc((size_t)(m * ldc) * sizeof *c0);

						if (!a || !b || !c || !c0)
							tap_bail_out("out of memory");
						for (i = 0; i < (ta ? k : m) * lda; i++)
							a[i] = uniform();
						for (i = 0; i < (tb ? n : k) * ldb; i++)
							b[i] = uniform();
						for (i = 0; i < m * ldc; i++)
							c[i] = i % ldc < n ? (bi ? uniform() : NAN)
							                   : SENTINEL;
						memcpy(c0, c, (size_t)(m * ldc) * sizeof *c);
						bnn_dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb,
						          beta, c, ldc);
						for (i = 0; i < m; i++)
							for (j = 0; j < ldc; j++) {
								double s = 0, mag = 0, want;

								if (j >= n) {
									bad += c[i * ldc + j] !=
									       SENTINEL;
									continue;
								}
								for (p = 0; p < k; p++) {
									double x =
									        ta ? a[p * lda + i]
									           : a[i * lda + p];
									double y =
									        tb ? b[j * ldb + p]
									           : b[p * ldb + j];

									s += x * y;
									mag += fabs(x * y);
								}
								want = alpha * s +
								       (bi ? beta * c0[i * ldc + j]
								           : 0);
								mag = fabs(alpha) * mag +
								      (bi ? fabs(beta *
								                 c0[i * ldc + j])
								          : 0);
								bad += !(fabs(c[i * ldc + j] -
								              want) <=
								         1e-13 * sqrt((double)k) *
								                         mag +
								                 1e-300);
								count++;
							}
						free(a);
						free(b);
						free(c);
						free(c0);
					}
		ok(bad == 0 && count > 0, "bnn_dgemm %s: %ld entries within 1e-13 of a triple loop",
		   trans_names[t], count);
	}
}

/* bnn_dgemm's degenerate cases, as test_degenerate's: alpha = 0 scales C
 * by beta without reading A and B (NaN here), K = 0 with beta = 0 clears
 * NaN, M = 0 leaves C alone. */
static void test_dgemm_degenerate(void)
{
	double a[4] = { NAN, NAN, NAN, NAN }, b[4] = { NAN, NAN, NAN, NAN }, c[6];
	int i, t, ok = 1;

	for (t = 0; t < 4; t++) {
		for (i = 0; i < 6; i++)
			c[i] = i;
		bnn_dgemm(t >> 1, t & 1, 2, 3, 1, 0.0, a, 3, b, 3, 0.25, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == 0.25 * i;
		for (i = 0; i < 6; i++)
			c[i] = NAN;
		bnn_dgemm(t >> 1, t & 1, 2, 3, 0, 1.0, a, 2, b, 3, 0.0, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == 0.0;
		for (i = 0; i < 6; i++)
			c[i] = i;
		bnn_dgemm(t >> 1, t & 1, 0, 3, 2, 1.0, a, 2, b, 3, 0.0, c, 3);
		for (i = 0; i < 6; i++)
			ok &= c[i] == i;
	}
	ok(ok, "bnn_dgemm: alpha = 0 or K = 0 scales C by beta (beta = 0 clears NaN), M = 0 "
	       "leaves C alone");
}

/* bnn_stranspose and bnn_dtranspose: on sizes on either side of the
 * AVX-512 path's 16 x 16 blocks, with row strides wider than the rows,
 * every entry of b is a's transposed one exactly, and the gap between m
 * and ldb keeps its sentinels. */
static void test_transpose(void)
{
	static const long sizes[] = { 1, 5, 16, 17, 33, 64, 256 };
	long bad_f = 0, bad_d = 0, count = 0, si, sj, i, j;

	for (si = 0; si < 7; si++)
		for (sj = 0; sj < 7; sj++) {
			const long m = sizes[si], n = sizes[sj], lda = n + 3, ldb = m + 2;
			float *a = alloc_floats(m * lda), *b = alloc_floats(n * ldb);
			double *ad = malloc((size_t)(m * lda) * sizeof *ad);
			double *bd = malloc((size_t)(n * ldb) * sizeof *bd);

			if (!ad || !bd)
				tap_bail_out("out of memory");
			for (i = 0; i < m * lda; i++)
				ad[i] = a[i] = uniform();
			for (i = 0; i < n * ldb; i++)
				bd[i] = b[i] = SENTINEL;
			bnn_stranspose(m, n, a, lda, b, ldb);
			bnn_dtranspose(m, n, ad, lda, bd, ldb);
			for (j = 0; j < n; j++)
				for (i = 0; i < ldb; i++) {
					const double want = i < m ? a[i * lda + j] : SENTINEL;

					bad_f += b[j * ldb + i] != (float)want;
					bad_d += bd[j * ldb + i] !=
					         (i < m ? ad[i * lda + j] : SENTINEL);
					count++;
				}
			free(a);
			free(b);
			free(ad);
			free(bd);
		}
	ok(bad_f == 0, "bnn_stranspose: %ld entries of 49 shapes exact, the gaps untouched", count);
	ok(bad_d == 0, "bnn_dtranspose: %ld entries of 49 shapes exact, the gaps untouched", count);
}

/* The shapes of the epilogues' tests: partial register tiles, the
 * dot-product path (A·Bᵀ with N <= 24 and K >= 32), several blocks of
 * the inner dimension, a product cut among threads, K = 0. */
static const long epilogue_shapes[][3] = {
	{ 1, 1, 1 },     { 13, 17, 5 },     { 12, 32, 64 },    { 25, 10, 100 }, { 7, 24, 33 },
	{ 37, 53, 400 }, { 128, 512, 784 }, { 300, 130, 128 }, { 5, 9, 0 },
};
#define EPILOGUE_SHAPES ((int)(sizeof epilogue_shapes / sizeof epilogue_shapes[0]))

/* The three epilogues of the float product. */
enum epilogue_kind {
	EPILOGUE_BIAS,      /* bnn_sgemm_bias */
	EPILOGUE_BIAS_RELU, /* bnn_sgemm_bias_relu */
	EPILOGUE_MASK       /* bnn_sgemm_relu_mask */
};

/*
 * One product with an epilogue against its definition, byte for byte
 * (sentinels included), on the given thread count.  C starts as NaN: no
 * epilogue's product reads it.
 * - bnn_sgemm_bias: C's rows filled with the bias, then bnn_sgemm with
 *   beta = 1 (several blocks of the inner dimension: the bias is added by
 *   the first block only; K = 0: C = the bias).
 * - bnn_sgemm_bias_relu: the same followed by c > 0 ? c : 0, with a NaN
 *   in A (a row or column of C NaN, which the relu makes +0) and a bias
 *   of -0 in column 0 (-0 where K = 0, which the relu makes +0).
 * - bnn_sgemm_relu_mask: bnn_sgemm with beta = 0, then c where y > 0,
 *   else 0; y has positive and negative values, +0, -0 and NaN, at a row
 *   stride of its own.
 */
static int epilogue_case(int path, enum epilogue_kind kind, int ta, int tb, long m, long n, long k,
                         float alpha, int threads)
{
	const long lda = ta ? m : k, ldb = tb ? k : n, ldc = n + 2, ldy = n + 3;
	const long csz = (m + 1) * ldc;
	const int relu = kind == EPILOGUE_BIAS_RELU;
	float *a = alloc_floats((ta ? k : m) * lda), *b = alloc_floats((tb ? n : k) * ldb);
	float *bias = alloc_floats(n), *y = alloc_floats(m * ldy);
	float *c = alloc_floats(csz), *want = alloc_floats(csz);
	static const float odd[4] = { 0.0f, -0.0f, NAN, 1e-30f };
	long i;
	int same;

	for (i = 0; i < (ta ? k : m) * lda; i++)
		a[i] = uniform();
	for (i = 0; i < (tb ? n : k) * ldb; i++)
		b[i] = uniform();
	for (i = 0; i < n; i++)
		bias[i] = uniform();
	bias[0] = -0.0f;
	for (i = 0; i < m * ldy; i++)
		y[i] = i % 7 == 3 ? odd[(i / 7) % 4] : uniform();
	if (relu && k > 0)
		a[0] = NAN;
	for (i = 0; i < csz; i++) {
		const int inside = i < m * ldc && i % ldc < n;

		c[i] = inside ? NAN : SENTINEL;
		want[i] = !inside ? SENTINEL : kind == EPILOGUE_MASK ? NAN : bias[i % ldc];
	}
	bnn_set_threads(threads);
	bnn_sgemm_path(path, ta, tb, m, n, k, alpha, a, lda, b, ldb,
	               kind == EPILOGUE_MASK ? 0.0f : 1.0f, want, ldc);
	for (i = 0; kind != EPILOGUE_BIAS && i < m * ldc; i++)
		if (i % ldc < n)
			want[i] = (relu ? want[i] : y[i / ldc * ldy + i % ldc]) > 0 ? want[i] : 0;
	if (kind == EPILOGUE_MASK)
		bnn_sgemm_relu_mask_path(path, ta, tb, m, n, k, alpha, a, lda, b, ldb, y, ldy, c,
		                         ldc);
	else
		bnn_sgemm_bias_path(path, ta, tb, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc,
		                    relu);
	bnn_set_threads(1);
	same = memcmp(c, want, (size_t)csz * sizeof *c) == 0;
	if (!same)
		tap_diag("%s%s m=%ld n=%ld k=%ld alpha %g, %d threads, epilogue %d: not the bytes "
		         "of its definition",
		         ta ? "T" : "N", tb ? "T" : "N", m, n, k, (double)alpha, threads,
		         (int)kind);
	free(a);
	free(b);
	free(bias);
	free(y);
	free(c);
	free(want);
	return same;
}

/* Each epilogue on 1 and 2 threads, for every transpose, over shapes
 * that take every kernel path (epilogue_shapes); alpha -0.5 in turn. */
static void test_epilogues(int path, const char *pname)
{
	static const char *const what[] = {
		"bnn_sgemm_bias gives the bytes of rows filled with the bias and beta 1",
		"bnn_sgemm_bias_relu gives the bytes of bnn_sgemm_bias and a relu pass, NaN and -0 "
		"included",
		"bnn_sgemm_relu_mask gives the bytes of bnn_sgemm and the mask y > 0, NaN and -0 in "
		"y included",
	};
	int kind, s, t, th, count, same;

	for (kind = EPILOGUE_BIAS; kind <= EPILOGUE_MASK; kind++) {
		count = 0;
		same = 1;
		for (s = 0; s < EPILOGUE_SHAPES; s++)
			for (t = 0; t < 4; t++)
				for (th = 1; th <= 2; th++, count++)
					same &= epilogue_case(path, (enum epilogue_kind)kind,
					                      t >> 1, t & 1, epilogue_shapes[s][0],
					                      epilogue_shapes[s][1],
					                      epilogue_shapes[s][2],
					                      count % 3 ? 1.0f : -0.5f, th);
		ok(same, "%s: %s (%d products)", pname, what[kind], count);
	}
}

/* bnn_dgemm_bias: the same, in double. */
static void test_dgemm_bias(void)
{
	const double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 0.5, -1, 2, 0.25, 1, -2 };
	const double bias[3] = { 10, 20, 30 };
	/* C = A (2x3) · B (3x2)... as A (2x2 of the first 4) · B (2x3) + bias */
	const double want[6] = {
		1 * 0.5 + 2 * 0.25 + 10, 1 * -1 + 2 * 1 + 20, 1 * 2 + 2 * -2 + 30,
		3 * 0.5 + 4 * 0.25 + 10, 3 * -1 + 4 * 1 + 20, 3 * 2 + 4 * -2 + 30
	};
	double c[6];
	int i, same = 1;

	for (i = 0; i < 6; i++)
		c[i] = NAN;
	bnn_dgemm_bias(0, 0, 2, 3, 2, 1.0, a, 2, b, 3, bias, c, 3);
	for (i = 0; i < 6; i++)
		same &= c[i] == want[i];
	ok(same, "bnn_dgemm_bias: a 2 x 2 by 2 x 3 product plus a bias, by hand");
	bnn_dgemm_bias_relu(0, 0, 2, 3, 2, 1.0, a, 2, b, 3, bias, c, 3);
	for (i = 0, same = 1; i < 6; i++)
		same &= c[i] == want[i];
	ok(same, "bnn_dgemm_bias_relu: the same, all positive");
	bnn_dgemm_bias_relu(0, 0, 2, 3, 2, -1.0, a, 2, b, 3, NULL, c, 3);
	for (i = 0, same = 1; i < 6; i++)
		same &= c[i] == (want[i] - bias[i % 3] < 0 ? -(want[i] - bias[i % 3]) : 0);
	ok(same, "and with alpha -1 and no bias: the negative products become 0");
	{
		const double y[6] = { 1, -1, 0, NAN, 2, -0.0 };

		bnn_dgemm_relu_mask(0, 0, 2, 3, 2, 1.0, a, 2, b, 3, y, 3, c, 3);
		ok(c[0] == want[0] - bias[0] && c[1] == 0 && c[2] == 0 && c[3] == 0 &&
		           c[4] == want[4] - bias[1] && c[5] == 0,
		   "bnn_dgemm_relu_mask: the product where y > 0, else 0 (y = -1, 0, NaN, -0)");
	}
}

int main(void)
{
	const int avx = bnn_gemm_avx512_available();

	tap_plan(2 * 15 + 5 + 5 + 4 + 1 + 2 + 4);
	if (avx) {
		test_small(BNN_GEMM_PATH_AVX512, "avx512");
		test_blocks(BNN_GEMM_PATH_AVX512, "avx512");
		test_bench_shapes(BNN_GEMM_PATH_AVX512, "avx512");
		test_degenerate(BNN_GEMM_PATH_AVX512, "avx512");
		test_threads(BNN_GEMM_PATH_AVX512, "avx512");
		test_epilogues(BNN_GEMM_PATH_AVX512, "avx512");
	} else {
		tap_skip(15, "this CPU (or build) has no AVX-512 kernel");
	}
	test_small(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_blocks(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_bench_shapes(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_degenerate(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_threads(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_epilogues(BNN_GEMM_PATH_OPENBLAS, "openblas");
	test_threads_for();
	test_dispatch();
	test_dgemm();
	test_dgemm_degenerate();
	test_dgemm_bias();
	test_transpose();
	return tap_done();
}
