/*
 * peak.c: the single-core FP32 FMA peak, measured (see peak.h).
 *
 * The kernel keeps BNN_BENCH_CHAINS independent accumulators, each a vector
 * of floats (GCC vector extensions), and updates every one of them with
 * c = c·a + b per iteration.  A multiply-add has a latency of about four
 * cycles and a core issues one or two per cycle, so a single chain would
 * measure latency; twelve independent chains keep every FMA pipe busy.  The
 * expression is an ordinary a*b+c on vector types: compiled with
 * -march=native (Makefile.am) GCC turns it into one vfmadd instruction per
 * vector (check with `objdump -d bench/libpeak.a | grep -c vfmadd`).
 *
 * The widest kernel follows the build machine so the accumulators stay in
 * registers: 16 floats with AVX-512 (12 zmm accumulators of 32 registers),
 * 8 with AVX (12 ymm of 16), 4 otherwise; the narrower widths are there
 * too, because a BLAS may use narrower vectors than the machine has (on
 * some cores a 256-bit FMA does half the work of a 512-bit one, on others
 * the same).  With a = 0.999 and b = 0.001 every chain converges to 1, so
 * no value overflows or turns subnormal.
 */
#include <time.h>

#include "peak.h"

/* The widest vector the build machine has, in floats. */
#if defined(__AVX512F__)
#define BNN_BENCH_LANES 16
#elif defined(__AVX__)
#define BNN_BENCH_LANES 8
#else
#define BNN_BENCH_LANES 4
#endif
#define BNN_BENCH_CHAINS 12

/* Keeps the result alive, so the kernel cannot be optimised away. */
static volatile float bnn_bench_sink;
/* Read at run time, so the compiler cannot fold the chains. */
static volatile float bnn_bench_a = 0.999f, bnn_bench_b = 0.001f;

double bnn_bench_now(int clock)
{
	struct timespec ts;

	clock_gettime(clock == BNN_BENCH_CPU ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * BNN_BENCH_KERNEL(L) defines bnn_bench_fma_L(iters): iters iterations of
 * BNN_BENCH_CHAINS multiply-adds of vectors of L floats.  The chains are
 * named variables, not an array, so that they live in registers whatever
 * the compiler's unrolling heuristics.  The project compiles with
 * -std=c11, under which GCC does not contract a*b+c into an FMA
 * (-ffp-contract=off is the ISO default); BNN_BENCH_CONTRACT_FN and
 * BNN_BENCH_CONTRACT_BODY turn contraction back on for the kernel alone
 * (GCC's optimize attribute, clang's fp pragma).
 */
#if defined(__clang__)
#define BNN_BENCH_CONTRACT_FN
#define BNN_BENCH_CONTRACT_BODY _Pragma("clang fp contract(fast)")
#elif defined(__GNUC__)
#define BNN_BENCH_CONTRACT_FN __attribute__((optimize("fp-contract=fast")))
#define BNN_BENCH_CONTRACT_BODY
#else
#define BNN_BENCH_CONTRACT_FN
#define BNN_BENCH_CONTRACT_BODY
#endif

#define BNN_BENCH_KERNEL(L)                                                            \
	typedef float bnn_bench_v##L __attribute__((vector_size(L * sizeof(float))));  \
	BNN_BENCH_CONTRACT_FN                                                          \
	static void bnn_bench_fma_##L(long iters)                                      \
	{                                                                              \
		BNN_BENCH_CONTRACT_BODY                                                \
		bnn_bench_v##L a, b, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11; \
		float s = 0;                                                           \
		long i;                                                                \
		int l;                                                                 \
                                                                                       \
		for (l = 0; l < L; l++) {                                              \
			a[l] = bnn_bench_a;                                            \
			b[l] = bnn_bench_b;                                            \
		}                                                                      \
		c0 = b;                                                                \
		c1 = b + b;                                                            \
		c2 = c1 + b;                                                           \
		c3 = c2 + b;                                                           \
		c4 = c3 + b;                                                           \
		c5 = c4 + b;                                                           \
		c6 = c5 + b;                                                           \
		c7 = c6 + b;                                                           \
		c8 = c7 + b;                                                           \
		c9 = c8 + b;                                                           \
		c10 = c9 + b;                                                          \
		c11 = c10 + b;                                                         \
		for (i = 0; i < iters; i++) {                                          \
			c0 = c0 * a + b;                                               \
			c1 = c1 * a + b;                                               \
			c2 = c2 * a + b;                                               \
			c3 = c3 * a + b;                                               \
			c4 = c4 * a + b;                                               \
			c5 = c5 * a + b;                                               \
			c6 = c6 * a + b;                                               \
			c7 = c7 * a + b;                                               \
			c8 = c8 * a + b;                                               \
			c9 = c9 * a + b;                                               \
			c10 = c10 * a + b;                                             \
			c11 = c11 * a + b;                                             \
		}                                                                      \
		c0 = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;      \
		for (l = 0; l < L; l++)                                                \
			s += c0[l];                                                    \
		bnn_bench_sink = s;                                                    \
	}

/* Only the widths the machine has: a wider vector would be split into
 * twice the registers and spill. */
BNN_BENCH_KERNEL(4)
#if BNN_BENCH_LANES >= 8
BNN_BENCH_KERNEL(8)
#endif
#if BNN_BENCH_LANES >= 16
BNN_BENCH_KERNEL(16)
#endif

/* The seconds taken by iters iterations of the kernel of this width. */
static double bnn_bench_fma_time(int lanes, long iters, int clock)
{
	double t0 = bnn_bench_now(clock);

	switch (lanes) {
#if BNN_BENCH_LANES >= 16
	case 16:
		bnn_bench_fma_16(iters);
		break;
#endif
#if BNN_BENCH_LANES >= 8
	case 8:
		bnn_bench_fma_8(iters);
		break;
#endif
	default:
		bnn_bench_fma_4(iters);
		break;
	}
	return bnn_bench_now(clock) - t0;
}

/* Insertion sort: the repeats are few. */
static void bnn_bench_sort(double *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		double x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

int bnn_bench_fma_lanes(void)
{
	return BNN_BENCH_LANES;
}

bnn_bench_peak bnn_bench_fma_peak(int lanes, int repeats, double min_seconds, int clock)
{
	bnn_bench_peak r;
	double rate[64], t, flops_per_iter;
	long iters = 1L << 14;
	int i;

	if (lanes != 4 && lanes != 8 && lanes != 16)
		lanes = BNN_BENCH_LANES;
	if (lanes > BNN_BENCH_LANES)
		lanes = BNN_BENCH_LANES;
	if (repeats < 1)
		repeats = 1;
	if (repeats > 64)
		repeats = 64;
	flops_per_iter = 2.0 * BNN_BENCH_CHAINS * lanes;
	/* Calibrate (and warm up: this also brings the core to its clock). */
	while ((t = bnn_bench_fma_time(lanes, iters, clock)) < min_seconds / 4)
		iters *= 2;
	iters = (long)((double)iters * 1.25 * min_seconds / t) + 1;
	(void)bnn_bench_fma_time(lanes, iters, clock);
	for (i = 0; i < repeats; i++)
		rate[i] = flops_per_iter * (double)iters / bnn_bench_fma_time(lanes, iters, clock) *
		          1e-9;
	bnn_bench_sort(rate, repeats);
	r.gflops =
	        repeats % 2 ? rate[repeats / 2] : 0.5 * (rate[repeats / 2 - 1] + rate[repeats / 2]);
	r.best = rate[repeats - 1];
	r.repeats = repeats;
	r.chains = BNN_BENCH_CHAINS;
	r.lanes = lanes;
	return r;
}
