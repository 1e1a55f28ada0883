/*
 * runtime_fwht.c: TAP tests of libbnn's fast Walsh-Hadamard transform
 * (runtime/kernels/fwht.c, bnn_fwht.h).
 *
 * The truth is the explicit Hadamard matrix, built here in double by
 * Sylvester's construction (H_2n = [H H; H -H]) up to n = 2^10, whose
 * top-left n x n block is H_n for every smaller n.  For every size 2^0 to
 * 2^14 (and 2^15 to 2^17, which take the cache-blocked path):
 *
 *  - integer inputs (|x_i| <= 8, so every partial sum is an integer below
 *    2^24): the float transform is exact, so it must equal H·x exactly
 *    (up to 2^10, from the matrix) and equal bnn_fwht_ref() (all sizes),
 *    and the reference must equal the matrix product exactly;
 *  - Gaussian inputs: the float transform within its rounding bound,
 *    (log2 n + 1)·2^-24·Σ|x_i|, of H·x (matrix up to 2^10, reference
 *    beyond); the orthonormal one likewise against H·x/√n;
 *  - applying the raw transform twice gives n·x exactly (integers), the
 *    orthonormal one twice gives x back within rounding.
 *
 * Also: the batched transform equals one-by-one transforms bit for bit on
 * every path (sizes below 16, in-chunk, vertical, blocked) and with both
 * normalisations, and on 1, 2 and 3 threads; H·H = n·I column by column for n = 64; and every invalid
 * argument gives BNN_EINVAL with its exact message and leaves x untouched.
 * Every seed is fixed.  The whole test takes a few tens of milliseconds.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "fixtures.h"
#include "tap.h"

/* The largest size the explicit matrix is built for, and the largest
 * size tested. */
#define MAT_LOG2 10
#define MAT_N    (1L << MAT_LOG2)
#define MAX_LOG2 17
#define MAX_N    (1L << MAX_LOG2)

/* H_{MAT_N}, row-major, by Sylvester's construction. */
static double *hmat;

static void build_sylvester(void)
{
	hmat = malloc((size_t)(MAT_N * MAT_N) * sizeof *hmat);
	if (!hmat)
		tap_bail_out("out of memory");
	fixture_sylvester(MAT_N, MAT_N, hmat);
}

/* out = H_n·x from the explicit matrix (n <= MAT_N). */
static void mat_apply(long n, const double *x, double *out)
{
	long i, j;

	for (i = 0; i < n; i++) {
		double s = 0;

		for (j = 0; j < n; j++)
			s += hmat[i * MAT_N + j] * x[j];
		out[i] = s;
	}
}

static int popcount(unsigned long v)
{
	int c = 0;

	for (; v; v &= v - 1)
		c++;
	return c;
}

static void test_matrix(void)
{
	long i, j, bad = 0;

	/* Sylvester's H is (-1)^popcount(i & j): checks the construction. */
	for (i = 0; i < MAT_N; i++)
		for (j = 0; j < MAT_N; j++)
			bad += hmat[i * MAT_N + j] !=
			       (popcount((unsigned long)(i & j)) % 2 ? -1.0 : 1.0);
	is_int(bad, 0, "the Sylvester matrix H_%ld is (-1)^popcount(i & j)", MAT_N);
}

/* Buffers shared by the per-size tests (MAX_N each). */
static float *xf, *yf;
static double *xd, *yd, *zd;

/* Integer inputs in [-8, 8]: every transform is exact in float. */
static void test_exact(long n, bnn_rng *rng)
{
	long i, bad = 0, bad_ref = 0, bad_mat = 0;
	int k = (int)log2((double)n);

	for (i = 0; i < n; i++) {
		xf[i] = (float)((long)bnn_rng_below(rng, 17) - 8);
		xd[i] = xf[i];
		yd[i] = xf[i];
	}
	memcpy(yf, xf, (size_t)n * sizeof *yf);
	if (bnn_fwht_vector(yf, n, BNN_FWHT_RAW, NULL) || bnn_fwht_ref(yd, n, BNN_FWHT_RAW, NULL))
		tap_bail_out("valid call failed at n = %ld", n);
	for (i = 0; i < n; i++)
		bad_ref += (double)yf[i] != yd[i];
	if (n <= MAT_N) {
		mat_apply(n, xd, zd);
		for (i = 0; i < n; i++) {
			bad += (double)yf[i] != zd[i];
			bad_mat += yd[i] != zd[i];
		}
		ok(bad == 0 && bad_ref == 0 && bad_mat == 0,
		   "n = 2^%d, integers: float == ref == explicit H·x exactly "
		   "(%ld, %ld, %ld differ)",
		   k, bad, bad_ref, bad_mat);
	} else {
		is_int(bad_ref, 0, "n = 2^%d, integers: float == ref exactly", k);
	}

	/* H·H = n·I: the raw transform twice is n·x, exactly. */
	if (bnn_fwht_vector(yf, n, BNN_FWHT_RAW, NULL))
		tap_bail_out("valid call failed at n = %ld", n);
	for (bad = 0, i = 0; i < n; i++)
		bad += yf[i] != (float)n * xf[i];
	is_int(bad, 0, "n = 2^%d: raw transform twice is n·x exactly", k);
}

/* Gaussian inputs: within the rounding bound of H·x (or H·x/√n). */
static void test_rounding(long n, bnn_rng *rng)
{
	int k = (int)log2((double)n), norm;
	double l1 = 0;
	long i;

	bnn_rng_normal(rng, xf, (size_t)n);
	for (i = 0; i < n; i++) {
		xd[i] = xf[i];
		l1 += fabs(xd[i]);
	}
	if (n <= MAT_N) {
		mat_apply(n, xd, zd);
	} else {
		memcpy(zd, xd, (size_t)n * sizeof *zd);
		bnn_fwht_ref(zd, n, BNN_FWHT_RAW, NULL);
	}
	for (norm = BNN_FWHT_RAW; norm <= BNN_FWHT_ORTHO; norm++) {
		double c = norm == BNN_FWHT_ORTHO ? 1 / sqrt((double)n) : 1;
		double bound = (k + 2) * 0x1p-24 * l1 * c, worst = 0, wref = 0;

		memcpy(yf, xf, (size_t)n * sizeof *yf);
		memcpy(yd, xd, (size_t)n * sizeof *yd);
		bnn_fwht_vector(yf, n, norm, NULL);
		bnn_fwht_ref(yd, n, norm, NULL);
		for (i = 0; i < n; i++) {
			double e = fabs(yf[i] - c * zd[i]);
			double r = fabs(yd[i] - c * zd[i]);

			worst = e > worst ? e : worst;
			wref = r > wref ? r : wref;
		}
		ok(worst <= bound,
		   "n = 2^%d, Gaussian, %s: float within "
		   "%.3g of %s (worst %.3g)",
		   k, norm ? "orthonormal" : "raw", bound, n <= MAT_N ? "explicit H·x" : "ref",
		   worst);
		if (n <= MAT_N)
			ok(wref <= 1e-13 * l1 * c,
			   "n = 2^%d, %s: ref within "
			   "1e-13·|x|_1 of explicit H·x (worst %.3g)",
			   k, norm ? "orthonormal" : "raw", wref);
	}

	/* The orthonormal transform is its own inverse, up to rounding. */
	{
		double worst = 0, bound = 2 * (k + 2) * 0x1p-24 * l1;

		memcpy(yf, xf, (size_t)n * sizeof *yf);
		bnn_fwht_vector(yf, n, BNN_FWHT_ORTHO, NULL);
		bnn_fwht_vector(yf, n, BNN_FWHT_ORTHO, NULL);
		for (i = 0; i < n; i++) {
			double e = fabs((double)yf[i] - xd[i]);

			worst = e > worst ? e : worst;
		}
		ok(worst <= bound,
		   "n = 2^%d: orthonormal twice gives x back "
		   "within %.3g (worst %.3g)",
		   k, bound, worst);
	}
}

static void test_sizes(void)
{
	bnn_rng rng;
	long n;

	xf = malloc((size_t)MAX_N * sizeof *xf);
	yf = malloc((size_t)MAX_N * sizeof *yf);
	xd = malloc((size_t)MAX_N * sizeof *xd);
	yd = malloc((size_t)MAX_N * sizeof *yd);
	zd = malloc((size_t)MAX_N * sizeof *zd);
	if (!xf || !yf || !xd || !yd || !zd)
		tap_bail_out("out of memory");
	bnn_rng_seed(&rng, 2020);
	for (n = 1; n <= MAX_N; n *= 2) {
		test_exact(n, &rng);
		test_rounding(n, &rng);
	}
	free(xf);
	free(yf);
	free(xd);
	free(yd);
	free(zd);
}

/* H·H = n·I, column by column: e_j transformed is column j of H, and
 * transformed again n·e_j. */
static void test_involution(void)
{
	enum {
		N = 64
	};
	float e[N];
	long i, j, bad_col = 0, bad_id = 0;

	for (j = 0; j < N; j++) {
		memset(e, 0, sizeof e);
		e[j] = 1;
		bnn_fwht_vector(e, N, BNN_FWHT_RAW, NULL);
		for (i = 0; i < N; i++)
			bad_col += e[i] != hmat[i * MAT_N + j];
		bnn_fwht_vector(e, N, BNN_FWHT_RAW, NULL);
		for (i = 0; i < N; i++)
			bad_id += e[i] != (i == j ? (float)N : 0.0f);
	}
	is_int(bad_col, 0, "n = 64: H·e_j is column j of the explicit H");
	is_int(bad_id, 0, "n = 64: H·H·e_j = 64·e_j for every j (H·H = n·I)");
}

/* The batch equals the vectors one by one, bit for bit. */
static void test_batch(void)
{
	static const long sizes[] = { 1, 2, 8, 16, 32, 128, 1024, 4096, 8192, 32768 };
	enum {
		B = 5
	};
	bnn_rng rng;
	size_t s;
	int norm;

	bnn_rng_seed(&rng, 6);
	for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (norm = BNN_FWHT_RAW; norm <= BNN_FWHT_ORTHO; norm++) {
			long n = sizes[s], b;
			float *a = malloc((size_t)(B * n) * sizeof *a);
			float *c = malloc((size_t)(B * n) * sizeof *c);
			int rc = 0;

			if (!a || !c)
				tap_bail_out("out of memory");
			bnn_rng_normal(&rng, a, (size_t)(B * n));
			memcpy(c, a, (size_t)(B * n) * sizeof *c);
			rc |= bnn_fwht_batch(a, B, n, norm, NULL);
			for (b = 0; b < B; b++)
				rc |= bnn_fwht_vector(c + b * n, n, norm, NULL);
			ok(rc == 0 && !memcmp(a, c, (size_t)(B * n) * sizeof *a),
			   "batch of %d, n = %ld, %s: equal to one by one, bit for "
			   "bit",
			   B, n, norm ? "orthonormal" : "raw");
			free(a);
			free(c);
		}
}

/* Threads: batches large enough to be split across threads (each at least
 * FWHT_PAR_WORK in fwht.c, 600 K butterflies) give the same floats with
 * bnn_set_threads(1), 2 and 3, on the in-chunk, vertical and cache-blocked
 * paths. */
static void test_threads(void)
{
	static const long shapes[][2] = { { 12001, 16 }, { 2001, 64 }, { 61, 1024 },
		                          { 129, 4096 }, { 3, 32768 }, { 7, 131072 } };
	bnn_rng rng;
	size_t s;
	int same = 1;

	bnn_rng_seed(&rng, 9);
	for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		const long batch = shapes[s][0], n = shapes[s][1];
		const size_t len = (size_t)(batch * n);
		float *x = malloc(len * sizeof *x), *y[3];
		int t;

		if (!x)
			tap_bail_out("out of memory");
		bnn_rng_normal(&rng, x, len);
		for (t = 0; t < 3; t++) {
			if (!(y[t] = malloc(len * sizeof *y[t])))
				tap_bail_out("out of memory");
			memcpy(y[t], x, len * sizeof *x);
			bnn_set_threads(t + 1);
			same &= bnn_fwht_batch(y[t], batch, n, (int)(s % 2), NULL) == BNN_OK;
		}
		bnn_set_threads(1);
		for (t = 1; t < 3; t++)
			same &= !memcmp(y[t], y[0], len * sizeof *x);
		same &= memcmp(y[0], x, len * sizeof *x) != 0; /* transformed at all */
		for (t = 0; t < 3; t++)
			free(y[t]);
		free(x);
	}
	ok(same, "batches of 16 to 131072 floats: the same bits on 1, 2 and 3 threads");
}

/* One invalid call: the code, the exact message, x untouched. */
#define BAD_CALL(call, want, ...)                                                             \
	do {                                                                                  \
		int rc_;                                                                      \
		bnn_err_clear(&err);                                                          \
		memcpy(f, orig, sizeof f);                                                    \
		rc_ = (call);                                                                 \
		ok(rc_ == BNN_EINVAL && err.code == BNN_EINVAL && !memcmp(f, orig, sizeof f), \
		   __VA_ARGS__);                                                              \
		is_str(err.message, want, __VA_ARGS__);                                       \
	} while (0)

static void test_errors(void)
{
	float f[16], orig[16];
	double d[4] = { 1, 2, 3, 4 };
	bnn_err err;
	int i;

	for (i = 0; i < 16; i++)
		orig[i] = (float)i;
	BAD_CALL(bnn_fwht_vector(f, 12, BNN_FWHT_RAW, &err),
	         "bnn_fwht_vector: length 12 is not a power of two", "n = 12 is refused");
	BAD_CALL(bnn_fwht_vector(f, 3, BNN_FWHT_ORTHO, &err),
	         "bnn_fwht_vector: length 3 is not a power of two", "n = 3 is refused");
	BAD_CALL(bnn_fwht_vector(f, 0, BNN_FWHT_RAW, &err),
	         "bnn_fwht_vector: length 0 is not positive", "n = 0 is refused");
	BAD_CALL(bnn_fwht_batch(f, 1, -4, BNN_FWHT_RAW, &err),
	         "bnn_fwht_batch: length -4 is not positive", "n = -4 is refused");
	BAD_CALL(bnn_fwht_batch(f, -1, 16, BNN_FWHT_RAW, &err),
	         "bnn_fwht_batch: batch -1 is negative", "batch = -1 is refused");
	BAD_CALL(bnn_fwht_batch(f, 1, 16, 2, &err),
	         "bnn_fwht_batch: norm 2 is neither BNN_FWHT_RAW (0) nor "
	         "BNN_FWHT_ORTHO (1)",
	         "norm = 2 is refused");
	BAD_CALL(bnn_fwht_vector(f, 16, -1, &err),
	         "bnn_fwht_vector: norm -1 is neither BNN_FWHT_RAW (0) nor "
	         "BNN_FWHT_ORTHO (1)",
	         "norm = -1 is refused");
	BAD_CALL(bnn_fwht_vector(NULL, 16, BNN_FWHT_RAW, &err), "bnn_fwht_vector: x is NULL",
	         "x = NULL is refused");
	BAD_CALL(bnn_fwht_batch(NULL, 2, 16, BNN_FWHT_RAW, &err), "bnn_fwht_batch: x is NULL",
	         "x = NULL with batch 2 is refused");
#if LONG_MAX > 2147483647L
	BAD_CALL(bnn_fwht_batch(f, 1, 1L << 31, BNN_FWHT_RAW, &err),
	         "bnn_fwht_batch: length 2147483648 is above the largest, 2^30",
	         "n = 2^31 is refused");
#else
	tap_skip(2, "long is 32 bits: 2^31 is not a long");
#endif
	BAD_CALL(bnn_fwht_ref(d, 6, BNN_FWHT_RAW, &err),
	         "bnn_fwht_ref: length 6 is not a power of two", "ref: n = 6 is refused");
	ok(d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4, "ref: x untouched after the error");
	BAD_CALL(bnn_fwht_ref(d, 4, 5, &err),
	         "bnn_fwht_ref: norm 5 is neither BNN_FWHT_RAW (0) nor "
	         "BNN_FWHT_ORTHO (1)",
	         "ref: norm = 5 is refused");

	/* A NULL err is allowed; batch 0 does nothing, even with x NULL. */
	is_int(bnn_fwht_vector(f, 7, BNN_FWHT_RAW, NULL), BNN_EINVAL,
	       "an invalid call with err NULL returns BNN_EINVAL");
	bnn_err_clear(&err);
	is_int(bnn_fwht_batch(NULL, 0, 16, BNN_FWHT_RAW, &err), BNN_OK,
	       "batch 0 with x NULL is a valid no-op");
	is_int(err.code, BNN_OK, "a valid call leaves err alone");
	memcpy(f, orig, sizeof f);
	is_int(bnn_fwht_batch(f, 0, 16, BNN_FWHT_ORTHO, &err), BNN_OK, "batch 0 returns BNN_OK");
	ok(!memcmp(f, orig, sizeof f), "batch 0 leaves x alone");
}

/* Small cases by hand. */
static void test_by_hand(void)
{
	float a[1] = { 3 }, b[2] = { 3, 5 }, c[4] = { 1, 2, 3, 4 };
	float o[2] = { 1, 1 };

	bnn_fwht_vector(a, 1, BNN_FWHT_RAW, NULL);
	ok(a[0] == 3, "n = 1 is the identity");
	bnn_fwht_vector(b, 2, BNN_FWHT_RAW, NULL);
	ok(b[0] == 8 && b[1] == -2, "n = 2: (3, 5) -> (8, -2)");
	/* H_4 = [1 1 1 1; 1 -1 1 -1; 1 1 -1 -1; 1 -1 -1 1]. */
	bnn_fwht_vector(c, 4, BNN_FWHT_RAW, NULL);
	ok(c[0] == 10 && c[1] == -2 && c[2] == -4 && c[3] == 0,
	   "n = 4: (1, 2, 3, 4) -> (10, -2, -4, 0)");
	bnn_fwht_vector(o, 2, BNN_FWHT_ORTHO, NULL);
	is_float(o[0], sqrt(2.0), 1e-7,
	         "n = 2, orthonormal: (1, 1) -> "
	         "(√2, 0): first");
	is_float(o[1], 0, 0, "n = 2, orthonormal: second is 0");
}

int main(void)
{
	build_sylvester();
	test_matrix();
	test_by_hand();
	test_involution();
	test_sizes();
	test_batch();
	test_threads();
	test_errors();
	free(hmat);
	return tap_done();
}
