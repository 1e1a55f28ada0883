/*
 * runtime_sqgrad.c: TAP tests of the bfloat16 kernel of VOGN's squared
 * per-example gradients of a dense layer (runtime/kernels/sqgrad_bf16.c), behind
 * bnn_gen_dense_sqgrad.
 *
 * The truth is B·Σ_b g[b][o]²·x[b][i] in double.  The weight entries must
 * lie within 2^-7 + 1e-5 relative of it (each square is rounded to 8
 * significant bits, so each product by at most 2^-7, and the sums are of
 * non-negative terms); the bias entries that bnn_gen_dense_sqgrad gives
 * around the kernel must equal B·Σ_b g[b][o]² summed in float, bit for
 * bit (their loop is the float path's, whichever computes the weights); and
 * both scratch-size and tile edges are covered: batches 1 (a lone
 * example with a zero partner), odd and even; widths around the tile's
 * 16-column vectors and 48-column blocks, and heights around its 8 rows.
 * Values are spread over many binades, including tiny ones.
 *
 * With BNN_SQGRAD=float, or on a CPU without AVX512-BF16, the kernel
 * declines (returns 0) and leaves every output untouched; that is checked
 * in a child process, since the choice is made once per process.  On 1,
 * 2 and 3 threads the kernel gives the same bytes.  Every seed is fixed.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bnn.h"
#include "bnn_gen/dense.h"
#include "fixtures.h"
#include "tap.h"

struct shape {
	long batch, k, n;
};

static const struct shape shapes[] = {
	{ 1, 1, 1 },     { 1, 17, 9 },    { 2, 16, 8 },    { 3, 15, 7 },
	{ 5, 48, 8 },    { 7, 49, 17 },   { 32, 47, 10 },  { 33, 96, 16 },
	{ 64, 100, 50 }, { 128, 13, 50 }, { 129, 97, 23 }, { 128, 784, 24 },
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* A value whose magnitude spans 2^-20 .. 2^4, either sign. */
static float spread(uint64_t *s)
{
	double m = splitmix_uniform(s, 1.0, 2.0) * ldexp(1.0, (int)splitmix_uniform(s, -20, 4));

	return (float)(splitmix_uniform(s, -1, 1) < 0 ? -m : m);
}

/* The worst relative error of the weight entries, and whether the bias
 * equals the float path's bit for bit; -1 when the kernel declined. */
static double check_shape(const struct shape *sh, uint64_t seed, int *bias_exact)
{
	long B = sh->batch, k = sh->k, n = sh->n, b, i, o;
	float *x = malloc((size_t)(B * k) * sizeof *x), *g = malloc((size_t)(B * n) * sizeof *g);
	float *x2 = malloc((size_t)(B * k) * sizeof *x2),
	      *g2 = malloc((size_t)(B * n) * sizeof *g2);
	float *sw = malloc((size_t)(n * k) * sizeof *sw), *sb = malloc((size_t)n * sizeof *sb);
	float *sw2 = malloc((size_t)(n * k) * sizeof *sw2);
	float *fb = malloc((size_t)n * sizeof *fb);
	double worst = 0;

	if (!x || !g || !x2 || !g2 || !sw || !sb || !fb || !sw2)
		tap_bail_out("out of memory");
	for (i = 0; i < B * k; i++)
		x[i] = spread(&seed);
	for (i = 0; i < B * n; i++)
		g[i] = spread(&seed);
	if (!bnn_sqgrad_bf16(B, k, n, x, g, sw, x2, g2)) {
		worst = -1;
		goto out;
	}
	for (o = 0; o < n; o++)
		for (i = 0; i < k; i++) {
			double want = 0, rel;
			for (b = 0; b < B; b++) {
				double gx = (double)g[b * n + o] * x[b * k + i];
				want += gx * gx;
			}
			want *= (double)B;
			rel = fabs(sw[o * k + i] - want) / want;
			if (!(rel <= worst)) /* NaN counts as the worst */
				worst = isnan(rel) ? INFINITY : rel;
		}
	for (o = 0; o < n; o++)
		fb[o] = g[o] * g[o];
	for (b = 1; b < B; b++)
		for (o = 0; o < n; o++)
			fb[o] += g[b * n + o] * g[b * n + o];
	bnn_gen_dense_sqgrad(B, k, n, x, g, sw2, sb, x2, g2);
	*bias_exact = 1;
	for (o = 0; o < n; o++)
		*bias_exact &= sb[o] == fb[o] * (float)B;
out:
	free(x), free(g), free(x2), free(g2), free(sw), free(sb), free(fb), free(sw2);
	return worst;
}

/*
 * Threads: sw by bnn_set_threads(1), 2 and 3 has the same bytes, on the
 * benchmark networks' dense layers (784->512, 512->512, 512->10 at batch
 * 128 and 32) and odd shapes; all but the 512->10 ones and the smallest odd
 * one are above the kernel's threshold for threads (SQ_PAR_FLOPS, 4 Mflop),
 * so they run on 2 and 3.  1 if equal.
 */
static int same_on_threads(long B, long k, long n, uint64_t seed)
{
	float *x = malloc((size_t)(B * k) * sizeof *x), *g = malloc((size_t)(B * n) * sizeof *g);
	float *x2 = malloc((size_t)(B * k) * sizeof *x2),
	      *g2 = malloc((size_t)(B * n) * sizeof *g2);
	float *sw[3];
	long i;
	int t, same = 1;

	if (!x || !g || !x2 || !g2)
		tap_bail_out("out of memory");
	for (i = 0; i < B * k; i++)
		x[i] = spread(&seed);
	for (i = 0; i < B * n; i++)
		g[i] = spread(&seed);
	for (t = 0; t < 3; t++) {
		if (!(sw[t] = malloc((size_t)(n * k) * sizeof *sw[t])))
			tap_bail_out("out of memory");
		memset(sw[t], 0xff, (size_t)(n * k) * sizeof *sw[t]); /* NaN */
		bnn_set_threads(t + 1);
		same &= bnn_sqgrad_bf16(B, k, n, x, g, sw[t], x2, g2);
	}
	bnn_set_threads(1);
	for (t = 1; t < 3; t++)
		same &= memcmp(sw[t], sw[0], (size_t)(n * k) * sizeof *sw[0]) == 0;
	for (i = 0; i < n * k; i++)
		same &= !isnan(sw[0][i]);
	for (t = 0; t < 3; t++)
		free(sw[t]);
	free(x), free(g), free(x2), free(g2);
	return same;
}

static void test_threads(void)
{
	static const long shapes3[][3] = {
		{ 128, 784, 512 }, { 128, 512, 512 }, { 128, 512, 10 },
		{ 32, 784, 512 },  { 32, 512, 512 },  { 32, 512, 10 },
		{ 37, 53, 71 },    { 33, 389, 171 },  { 129, 97, 203 },
	};
	int s, same = 1;

	for (s = 0; s < 9; s++)
		same &= same_on_threads(shapes3[s][0], shapes3[s][1], shapes3[s][2],
		                        77 + (uint64_t)s);
	ok(same, "9 products give the same bytes on 1, 2 and 3 threads");
}

/* In a child with BNN_SQGRAD=float: 0 if the kernel declined and left sw
 * as it was. */
static int declines_with_float(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		tap_bail_out("fork failed");
	if (pid == 0) {
		float x[4] = { 1, 2, 3, 4 }, g[2] = { 1, 2 }, x2[4], g2[2];
		float sw[2] = { -7, -7 };
		setenv("BNN_SQGRAD", "float", 1);
		_exit(bnn_sqgrad_bf16(2, 2, 1, x, g, sw, x2, g2) == 0 && sw[0] == -7 && sw[1] == -7
		              ? 0
		              : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		tap_bail_out("waitpid failed");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int main(void)
{
	const char *env = getenv("BNN_SQGRAD");
	int s, have;

	tap_plan(2 + 2 * NSHAPES);
	ok(declines_with_float() == 0,
	   "BNN_SQGRAD=float: the kernel declines and leaves sw untouched");
	__builtin_cpu_init();
	have = __builtin_cpu_supports("avx512bf16") && !(env && strcmp(env, "float") == 0);
	if (!have) {
		tap_skip(1 + 2 * NSHAPES, "no AVX512-BF16 on this CPU, or BNN_SQGRAD=float");
		return tap_done();
	}
	for (s = 0; s < NSHAPES; s++) {
		const struct shape *sh = &shapes[s];
		int bias_exact = 0;
		double worst = check_shape(sh, 1000 + (uint64_t)s, &bias_exact);
		ok(worst >= 0 && worst <= 0x1p-7 + 1e-5,
		   "batch %ld, %ld -> %ld: weight squares within 2^-7 of double (worst %.3g)",
		   sh->batch, sh->k, sh->n, worst);
		ok(bias_exact,
		   "batch %ld, %ld -> %ld: bias squares equal the float path's bit for bit",
		   sh->batch, sh->k, sh->n);
	}
	test_threads();
	return tap_done();
}
