/*
 * runtime_rng.c: TAP tests of libbnn's random numbers (runtime/kernels/rng.c,
 * bnn_rng.h).  The raw generator against the published xoshiro256**
 * outputs for a set state, splitmix64 seeding, the jump against a state
 * computed independently (the transition matrix raised to 2^128 over
 * GF(2)); the uniform, integer and shuffle helpers by exact values and by
 * chi-square tests with fixed seeds and fixed bounds; the Gaussian sampler
 * by exact variates for crafted draws, by its moments and tail mass over
 * 10^6 variates, and by how many draws each path consumes.  Every seed is
 * fixed, so every statistic is deterministic: a bound is set at about five
 * standard errors, and the check's description prints the value the seed
 * actually gives.
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
#include "tap.h"

/* The first four outputs of xoshiro256** from s = {1, 2, 3, 4}. */
static const uint64_t ref_out[4] = { UINT64_C(11520), UINT64_C(0), UINT64_C(1509978240),
	                             UINT64_C(1215971899390074240) };

static void set_state(bnn_rng *r, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	r->s[0] = a;
	r->s[1] = b;
	r->s[2] = c;
	r->s[3] = d;
}

static int same_state(const bnn_rng *a, const bnn_rng *b)
{
	return memcmp(a->s, b->s, sizeof a->s) == 0;
}

static void test_next(void)
{
	bnn_rng r;
	int i;

	/*
	 * By hand, result = rotl(s1 * 5, 7) * 9, then the linear update:
	 * 1st: rotl(10, 7) = 1280, * 9 = 11520.  t = 2 << 17 = 262144;
	 *      s2 = 3^1 = 2, s3 = 4^2 = 6, s1 = 2^2 = 0, s0 = 1^6 = 7,
	 *      s2 = 2^262144 = 262146, s3 = rotl(6, 45) = 6 << 45.
	 * 2nd: s1 = 0, so 0.  s2 = 262146^7 = 262149, s3 = 6 << 45,
	 *      s1 = 0^262149 = 262149, s0 = 7^(6 << 45), s3 = rotl(6 << 45,
	 *      45) = 3 << 27.
	 * 3rd: rotl(262149 * 5 = 1310745, 7) = 167775360, * 9 = 1509978240.
	 * 4th: likewise (the published reference value).
	 */
	set_state(&r, 1, 2, 3, 4);
	for (i = 0; i < 4; i++)
		is_int(bnn_rng_next(&r) == ref_out[i], 1,
		       "xoshiro256** output %d from {1, 2, 3, 4} is %llu", i + 1,
		       (unsigned long long)ref_out[i]);
}

static void test_seed(void)
{
	bnn_rng a, b;
	int i, same = 0, differ = 0;

	/* splitmix64 from x = 0: x += 0x9e3779b97f4a7c15, then the two
	 * xor-shift-multiply rounds; its first outputs are the well-known
	 * 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f,
	 * 0xf88bb8a8724c81ec. */
	bnn_rng_seed(&a, 0);
	ok(a.s[0] == UINT64_C(0xe220a8397b1dcdaf) && a.s[1] == UINT64_C(0x6e789e6aa1b965f4) &&
	           a.s[2] == UINT64_C(0x06c45d188009454f) && a.s[3] == UINT64_C(0xf88bb8a8724c81ec),
	   "seed 0 gives the first four splitmix64 outputs");

	bnn_rng_seed(&a, 42);
	bnn_rng_seed(&b, 42);
	for (i = 0; i < 1000; i++)
		same += bnn_rng_next(&a) == bnn_rng_next(&b);
	is_int(same, 1000, "the same seed gives the same stream");

	bnn_rng_seed(&a, 42);
	bnn_rng_seed(&b, 43);
	for (i = 0; i < 1000; i++)
		differ += bnn_rng_next(&a) != bnn_rng_next(&b);
	is_int(differ, 1000, "seeds 42 and 43 give different streams");
}

static void test_jump(void)
{
	bnn_rng a, b;
	int i, differ = 0;

	/* The expected state is T^(2^128) {1, 2, 3, 4}, with T the 256 x 256
	 * GF(2) matrix of one xoshiro256 step, squared 128 times (computed
	 * separately in Python): it checks the jump constants. */
	set_state(&a, 1, 2, 3, 4);
	bnn_rng_jump(&a);
	ok(a.s[0] == UINT64_C(0x8c7a153956b5f3d1) && a.s[1] == UINT64_C(0x701f1a713401d85e) &&
	           a.s[2] == UINT64_C(0x6527f66a65469085) && a.s[3] == UINT64_C(0x8386b786c4408050),
	   "jump from {1, 2, 3, 4} lands 2^128 steps on");

	bnn_rng_seed(&a, 7);
	b = a;
	bnn_rng_jump(&b);
	ok(!same_state(&a, &b), "jump changes the state");
	for (i = 0; i < 1000; i++)
		differ += bnn_rng_next(&a) != bnn_rng_next(&b);
	is_int(differ, 1000, "the jumped stream differs from the original");
}

static void test_uniform(void)
{
	bnn_rng r;
	float f[5];
	double sum = 0, lo = 1, hi = 0;
	int i, bad = 0;

	/* 11520 >> 11 = 5, so 5 * 2^-53. */
	set_state(&r, 1, 2, 3, 4);
	is_float(bnn_rng_uniform(&r), 5 * 0x1p-53, 0, "uniform is (next >> 11) * 2^-53");

	bnn_rng_seed(&r, 3);
	for (i = 0; i < 100000; i++) {
		double u = bnn_rng_uniform(&r);

		bad += !(u >= 0 && u < 1);
		sum += u;
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
	}
	is_int(bad, 0, "100000 uniforms all in [0, 1)");
	/* Standard error sqrt(1/12/1e5) = 0.0009; this seed gives 0.4993. */
	ok(fabs(sum / 100000 - 0.5) < 0.005, "uniform mean %.4f is near 1/2", sum / 100000);
	ok(lo < 0.001 && hi > 0.999, "uniforms cover [0, 1): %g to %g", lo, hi);

	/* Draws 11520, 0, 1509978240: (11520 >> 40) = 0; (uint32)11520 >> 8
	 * = 45; then 0, 0; then the odd fifth from 1509978240 >> 40 = 0. */
	set_state(&r, 1, 2, 3, 4);
	f[4] = -1;
	bnn_rng_uniform_fill(&r, f, 5);
	ok(f[0] == 0 && f[1] == 45 * 0x1p-24f && f[2] == 0 && f[3] == 0 && f[4] == 0,
	   "uniform_fill: two 24-bit floats per draw, odd n");
	is_int(bnn_rng_next(&r) == ref_out[3], 1, "uniform_fill with n = 5 used three draws");
}

static void test_below(void)
{
	bnn_rng r;
	long count[10] = { 0 };
	double chi2 = 0;
	int i, bad = 0;

	/*
	 * Lemire, from {1, 2, 3, 4}: below(0) draws nothing.  below(1) takes
	 * 11520: 11520 * 1 < 2^64, so 0.  below(10) takes 0: the low part
	 * 0 * 10 = 0 is below 2^64 mod 10 = 6, rejected; then 1509978240:
	 * 1509978240 * 10 < 2^64, so 0 with the low part accepted.  The next
	 * draw is then the 4th, x = 1215971899390074240 (even):
	 * below(2^63) = x * 2^63 / 2^64 = x / 2 = 607985949695037120, with
	 * low part 0 and 2^64 mod 2^63 = 0, accepted.
	 */
	set_state(&r, 1, 2, 3, 4);
	is_int(bnn_rng_below(&r, 0), 0, "below(0) is 0");
	is_int(bnn_rng_below(&r, 1), 0, "below(1) is 0");
	is_int(bnn_rng_below(&r, 10), 0, "below(10) rejects the zero draw");
	is_int(bnn_rng_below(&r, UINT64_C(1) << 63) == UINT64_C(607985949695037120), 1,
	       "below(2^63) of the 4th draw is half of it");

	/* x = 11520: x * (2^64 - 1) / 2^64 = 11519, low part 2^64 - 11520,
	 * not below 2^64 mod (2^64 - 1) = 1. */
	set_state(&r, 1, 2, 3, 4);
	is_int(bnn_rng_below(&r, UINT64_MAX) == ref_out[0] - 1, 1,
	       "below(2^64 - 1) of 11520 is 11519");

	bnn_rng_seed(&r, 11);
	for (i = 0; i < 100000; i++) {
		uint64_t k = bnn_rng_below(&r, 10);

		if (k >= 10)
			bad++;
		else
			count[k]++;
	}
	is_int(bad, 0, "below(10) is always below 10");
	for (i = 0; i < 10; i++)
		chi2 += (count[i] - 10000.0) * (count[i] - 10000.0) / 10000.0;
	/* 9 degrees of freedom: P(chi2 > 27.88) = 0.001. */
	ok(chi2 < 27.88, "below(10) is uniform: chi-square %.2f < 27.88", chi2);
}

static void test_shuffle(void)
{
	bnn_rng r;
	long idx[100], seen[100] = { 0 }, small[3];
	long perm[6] = { 0 };
	double chi2 = 0;
	int i, t, moved = 0, dup = 0;

	bnn_rng_seed(&r, 5);
	for (i = 0; i < 100; i++)
		idx[i] = i;
	bnn_rng_shuffle(&r, idx, 100);
	for (i = 0; i < 100; i++) {
		if (idx[i] < 0 || idx[i] >= 100 || seen[idx[i]]++)
			dup++;
		moved += idx[i] != i;
	}
	is_int(dup, 0, "shuffle of 100 is a permutation");
	/* A uniform permutation fixes one point on average. */
	ok(moved > 90, "shuffle moves most elements (%d of 100)", moved);

	small[0] = 9;
	bnn_rng_shuffle(&r, small, 1);
	bnn_rng_shuffle(&r, small, 0);
	bnn_rng_shuffle(&r, small, -3);
	is_int(small[0], 9, "shuffle of n <= 1 leaves the array alone");

	/* The six orders of three elements, 60000 shuffles. */
	for (t = 0; t < 60000; t++) {
		small[0] = 0;
		small[1] = 1;
		small[2] = 2;
		bnn_rng_shuffle(&r, small, 3);
		/* Lehmer code: first element * 2 + (second > third). */
		perm[small[0] * 2 + (small[1] > small[2])]++;
	}
	for (i = 0; i < 6; i++)
		chi2 += (perm[i] - 10000.0) * (perm[i] - 10000.0) / 10000.0;
	/* 5 degrees of freedom: P(chi2 > 20.52) = 0.001. */
	ok(chi2 < 20.52, "shuffles of 3 are uniform: chi-square %.2f < 20.52", chi2);
}

/* A state whose first output is x: the output depends on s1 only, and
 * s1 = rotr(x * 9^-1, 7) * 5^-1 mod 2^64 (computed separately). */
static void state_giving(bnn_rng *r, uint64_t s1)
{
	set_state(r, 1, s1, 3, 4);
}

static void test_normal_exact(void)
{
	bnn_rng r;
	float z[4];

	/*
	 * Draw 0x8000000040000000: radius bits 0x80000000, j = 2^30 + 1,
	 * which rounds to 2^30 in float: u = 1/2, r = sqrt(2 ln 2).  Angle
	 * bits 0x40000000: no x flip, y flipped, phi = 0, theta = pi/4.  So
	 * (sqrt(ln 2), -sqrt(ln 2)) = (0.8325546, -0.8325546).
	 */
	state_giving(&r, UINT64_C(0xccd27d27d2800000));
	bnn_rng_normal(&r, z, 2);
	is_float(z[0], 0.8325546111576977, 1e-6, "u = 1/2, theta = pi/4: x");
	is_float(z[1], -0.8325546111576977, 1e-6, "u = 1/2, theta = pi/4: y");

	/*
	 * Draw 0xc000000020000000: u = 0x60000001 * 2^-31 -> 0.75 in float,
	 * r = sqrt(-2 ln 0.75) = 0.7585276.  Angle bits 0x20000000: no flips,
	 * the 30-bit field is -2^30 so phi = -pi/4, theta = 0: (r, 0).
	 */
	state_giving(&r, UINT64_C(0x33693e93e9400000));
	bnn_rng_normal(&r, z, 2);
	is_float(z[0], 0.7585276164409321, 1e-6, "u = 3/4, theta = 0: x");
	is_float(z[1], 0, 1e-6, "u = 3/4, theta = 0: y");

	/*
	 * From {1, 2, 3, 4}: draw 11520 has radius bits 0, so u = 2^-31, the
	 * largest radius sqrt(62 ln 2) = 6.5555416; phi = 46080 * 2^-31 *
	 * pi/4 = 1.68528e-5: (r cos(pi/4 + phi), r sin(pi/4 + phi)) =
	 * (4.6353898, 4.6355460).  Draw 0: same radius, phi = 0:
	 * r / sqrt 2 = 4.6354679 twice.
	 */
	set_state(&r, 1, 2, 3, 4);
	bnn_rng_normal(&r, z, 4);
	is_float(z[0], 4.635389772766604, 1e-5, "largest radius: x");
	is_float(z[1], 4.635546014144115, 1e-5, "largest radius: y");
	is_float(z[2], 4.635467894113635, 1e-5, "draw 0: x");
	is_float(z[3], 4.635467894113635, 1e-5, "draw 0: y");
}

static void test_normal_moments(void)
{
	enum {
		N = 1000000
	};
	float *z = malloc(N * sizeof *z);
	double m1 = 0, m2 = 0, m3 = 0, m4 = 0, var, skew, kurt, maxabs = 0;
	long beyond3 = 0, nonfinite = 0;
	bnn_rng r;
	long i;

	if (!z)
		tap_bail_out("out of memory");
	bnn_rng_seed(&r, 2024);
	bnn_rng_normal(&r, z, N);
	for (i = 0; i < N; i++) {
		if (!isfinite(z[i]))
			nonfinite++;
		else
			m1 += z[i];
	}
	is_int(nonfinite, 0, "10^6 normals are all finite");
	m1 /= N;
	for (i = 0; i < N; i++) {
		double d = z[i] - m1, d2 = d * d;

		m2 += d2;
		m3 += d2 * d;
		m4 += d2 * d2;
		beyond3 += fabs(z[i]) > 3;
		maxabs = fabs(z[i]) > maxabs ? fabs(z[i]) : maxabs;
	}
	var = m2 / N;
	skew = m3 / N / pow(var, 1.5);
	kurt = m4 / N / (var * var) - 3;
	/* Standard errors for N = 10^6: mean 0.001, variance 0.0014,
	 * skewness 0.0024, excess kurtosis 0.0049, P(|z| > 3) 5.2e-5.  The
	 * bounds are about five of them. */
	ok(fabs(m1) < 0.005, "normal mean %.5f is near 0", m1);
	ok(fabs(var - 1) < 0.007, "normal variance %.5f is near 1", var);
	ok(fabs(skew) < 0.012, "normal skewness %.5f is near 0", skew);
	ok(fabs(kurt) < 0.025, "normal excess kurtosis %.5f is near 0", kurt);
	/* 2 (1 - Phi(3)) = 0.0026998. */
	ok(fabs(beyond3 / (double)N - 0.0026998) < 0.00026, "P(|z| > 3) = %.5f is near 0.0027",
	   beyond3 / (double)N);
	ok(maxabs < 6.56 && maxabs > 4, "largest |z| %.3f is in (4, 6.56)", maxabs);

	/* The narrow path: 2000 calls of n = 99 (odd, below 512), 198000
	 * variates.  Standard errors: mean 0.0022, variance 0.0032. */
	for (i = 0; i < 2000; i++)
		bnn_rng_normal(&r, z + 99 * i, 99);
	for (m1 = 0, i = 0; i < 198000; i++)
		m1 += z[i];
	m1 /= 198000;
	for (m2 = 0, i = 0; i < 198000; i++)
		m2 += (z[i] - m1) * (z[i] - m1);
	ok(fabs(m1) < 0.011, "narrow path: mean %.5f is near 0", m1);
	ok(fabs(m2 / 198000 - 1) < 0.016, "narrow path: variance %.5f is near 1", m2 / 198000);
	free(z);
}

/* One xoshiro256++ step (Blackman and Vigna): rotl(s0 + s3, 23) + s0,
 * then the same linear update as xoshiro256**. */
static uint64_t plusplus_next(bnn_rng *r)
{
	uint64_t *s = r->s, out = s[0] + s[3], t = s[1] << 17;

	out = ((out << 23) | (out >> 41)) + s[0];
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return out;
}

/* The documented pair, in double: u = ((rb >> 1) | 1)·2^-31,
 * r = √(−2 ln u); φ = (signed ab << 2)·π/2^33, θ = π/4 + φ; bit 31 of ab
 * flips x, bit 30 flips y. */
static void box_muller(uint32_t rb, uint32_t ab, double *x, double *y)
{
	double u = (double)((rb >> 1) | 1) * 0x1p-31;
	double r = sqrt(-2 * log(u));
	const double pi = 3.14159265358979323846;
	double th = pi / 4 + (double)(int32_t)(ab << 2) * pi * 0x1p-33;

	*x = (ab & 0x80000000u) ? -r * cos(th) : r * cos(th);
	*y = (ab & 0x40000000u) ? -r * sin(th) : r * sin(th);
}

/* Whether a[0..n) is what seed gives with BNN_RNG=generic, the compiled
 * block instead of the intrinsics (in a child, since the variable is
 * read once). */
static int generic_block_same(const float *a, size_t n, uint64_t seed)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		tap_bail_out("fork failed");
	if (pid == 0) {
		float *b = malloc(n * sizeof *b);
		bnn_rng r;

		setenv("BNN_RNG", "generic", 1);
		bnn_rng_seed(&r, seed);
		if (!b)
			_exit(2);
		bnn_rng_normal(&r, b, n);
		_exit(memcmp(a, b, n * sizeof *b) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		tap_bail_out("waitpid failed");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* splitmix64's i-th output from counter x (the first is i = 1). */
static uint64_t splitmix_out(uint64_t x, uint64_t i)
{
	uint64_t z = x + i * UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The draw a wide call makes first from a generator seeded with seed. */
static uint64_t ref_key(uint64_t seed)
{
	bnn_rng r;

	bnn_rng_seed(&r, seed);
	return bnn_rng_next(&r);
}

/*
 * The largest difference between a[0..len) and block b of chunk c of a
 * wide call with draw key, by the documented recipe in double precision:
 * lane l of chunk c is seeded by bnn_rng_seed() from splitmix64's output
 * 16c + l + 1 from key and steps as xoshiro256++; step t of block b
 * (16 steps a block) gives pair p its radius from 32-bit word p of lanes
 * 0..7's draws and its angle from word p of lanes 8..15's, the variates
 * a[32t + p] and a[32t + 16 + p].  The approximations stay within 1.6e-5.
 */
static double layout_worst(const float *a, uint64_t key, size_t c, size_t b, size_t len)
{
	bnn_rng lanes[16];
	double worst = 0;
	size_t i;
	int l;

	for (l = 0; l < 16; l++)
		bnn_rng_seed(&lanes[l], splitmix_out(key, 16 * c + (uint64_t)l + 1));
	for (i = 0; i < 16 * b; i++)
		for (l = 0; l < 16; l++)
			plusplus_next(&lanes[l]);
	for (i = 0; i < 16; i++) {
		uint64_t d[16];
		int p;

		for (l = 0; l < 16; l++)
			d[l] = plusplus_next(&lanes[l]);
		for (p = 0; p < 16; p++) {
			int shift = 32 * (p & 1);
			double x, y;

			box_muller((uint32_t)(d[p / 2] >> shift), (uint32_t)(d[8 + p / 2] >> shift),
			           &x, &y);
			if (32 * i + p < len)
				worst = fmax(worst, fabs(a[32 * i + p] - x));
			if (32 * i + 16 + p < len)
				worst = fmax(worst, fabs(a[32 * i + 16 + p] - y));
		}
	}
	return worst;
}

static void test_normal_sizes(void)
{
	float a[1100], b[1100];
	bnn_rng r, r2, ref;
	double worst;
	int i, same, bad;

	/* n = 0: nothing written, nothing drawn. */
	bnn_rng_seed(&r, 9);
	ref = r;
	a[0] = 123.0f;
	bnn_rng_normal(&r, a, 0);
	ok(a[0] == 123.0f && same_state(&r, &ref), "n = 0 does nothing");

	/* n = 1: one value, one draw; it is the first of the n = 2 pair. */
	a[1] = 123.0f;
	bnn_rng_normal(&r, a, 1);
	bnn_rng_next(&ref);
	ok(isfinite(a[0]) && a[1] == 123.0f, "n = 1 writes one value");
	ok(same_state(&r, &ref), "n = 1 uses one draw");
	bnn_rng_seed(&r, 9);
	bnn_rng_normal(&r, b, 2);
	is_float(a[0], b[0], 0, "n = 1 gives the first of the n = 2 pair");

	/* Odd n below 512: a prefix of a longer request, (n + 1) / 2 draws. */
	bnn_rng_seed(&r, 9);
	bnn_rng_seed(&r2, 9);
	ref = r;
	a[7] = 123.0f;
	bnn_rng_normal(&r, a, 7);
	bnn_rng_normal(&r2, b, 511);
	for (i = 0; i < 4; i++)
		bnn_rng_next(&ref);
	ok(same_state(&r, &ref) && a[7] == 123.0f, "n = 7 uses four draws");
	for (same = 0, i = 0; i < 7; i++)
		same += a[i] == b[i];
	is_int(same, 7, "n = 7 is a prefix of n = 511");

	/* From 512 on: one draw, whatever n. */
	bnn_rng_seed(&r, 9);
	ref = r;
	a[1001] = 123.0f;
	bnn_rng_normal(&r, a, 1001);
	bnn_rng_next(&ref);
	ok(same_state(&r, &ref), "n = 1001 uses one draw");
	for (bad = 0, i = 0; i < 1001; i++)
		bad += !isfinite(a[i]) || a[i] == 123.0f;
	ok(bad == 0 && a[1001] == 123.0f, "n = 1001 fills exactly 1001");

	/* ... and a prefix of a larger call: the last partial block is the
	 * start of the whole one. */
	bnn_rng_seed(&r2, 9);
	bnn_rng_normal(&r2, b, 1024);
	ok(memcmp(a, b, 1001 * sizeof *a) == 0, "n = 1001 is a prefix of n = 1024");

	/* The layout, against the recipe computed here in double precision
	 * (docs/optimizers.md), blocks 0 and 1 of chunk 0. */
	worst = fmax(layout_worst(a, ref_key(9), 0, 0, 512),
	             layout_worst(a + 512, ref_key(9), 0, 1, 489));
	ok(worst < 2e-5, "n = 1001: the variates follow the layout (worst %.2g)", worst);
	ok(generic_block_same(a, 1001, 9), "the AVX-512 block and the compiled one "
	                                   "(BNN_RNG=generic) give the same bits");
}

/*
 * Sizes around the chunks of BNN_RNG_NORMAL_CHUNK variates: each follows
 * the layout of its own chunk's lanes (blocks 0 and the last of each
 * chunk checked against the recipe), smaller calls are prefixes of larger
 * ones, and 1, 2 and 3 threads give the same bits.
 */
static void test_normal_chunks(void)
{
	enum {
		C = BNN_RNG_NORMAL_CHUNK
	};
	static const size_t sizes[] = { C - 1, C, C + 1, 2 * C + 512, 3 * C + 5 };
	size_t nmax = 3 * C + 5, si, c;
	float *big = malloc(nmax * sizeof *big), *x = malloc(nmax * sizeof *x);
	uint64_t key = ref_key(5);
	double worst = 0;
	int bad_prefix = 0, bad_threads = 0, bad_state = 0, t;

	if (!big || !x)
		tap_bail_out("out of memory");
	{
		bnn_rng r;

		bnn_rng_seed(&r, 5);
		bnn_rng_normal(&r, big, nmax);
	}
	for (c = 0; c * C < nmax; c++) {
		size_t len = nmax - c * C < C ? nmax - c * C : C;
		size_t last = (len - 1) / 512;

		worst = fmax(worst, layout_worst(big + c * C, key, c, 0, len < 512 ? len : 512));
		worst = fmax(worst, layout_worst(big + c * C + last * 512, key, c, last,
		                                 len - last * 512));
	}
	ok(worst < 2e-5, "n = 3 chunks + 5: each chunk follows its lanes' layout (worst %.2g)",
	   worst);
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (t = 1; t <= 3; t++) {
			size_t n = sizes[si];
			bnn_rng r, ref;

			bnn_set_threads(t);
			bnn_rng_seed(&r, 5);
			ref = r;
			bnn_rng_next(&ref);
			bnn_rng_normal(&r, x, n);
			bad_prefix += memcmp(x, big, n * sizeof *x) != 0;
			bad_threads += t > 1 && memcmp(x, big, n * sizeof *x) != 0;
			bad_state += !same_state(&r, &ref);
		}
	bnn_set_threads(1);
	is_int(bad_prefix, 0, "n = C - 1, C, C + 1, 2C + 512, 3C + 5: prefixes of one call");
	is_int(bad_threads, 0, "... the same bits with 1, 2 and 3 threads");
	is_int(bad_state, 0, "... and each uses one draw");
	ok(generic_block_same(big, nmax, 5), "n = 3 chunks + 5: the AVX-512 blocks and the "
	                                     "compiled ones give the same bits");
	free(big);
	free(x);
}

/*
 * bnn_rng_normal_begin/next: one call of bnn_rng_normal() in pieces.  For
 * n on both sides of the wide sampler's threshold and of its blocks, and
 * pieces smaller than, equal to and larger than a block, the pieces give
 * the call's variates bit for bit and leave rng where the call does; the
 * last piece is cut short at n, and later ones give nothing.
 */
static void test_normal_stream(void)
{
	enum {
		C = BNN_RNG_NORMAL_CHUNK,
		NMAX = 3 * C + 5,
		PMAX = C + 1
	};
	static const size_t sizes[] = { 0,    1,    7,     511, 512,   513, 1001,
		                        1536, 4396, C - 1, C,   C + 1, NMAX };
	static const size_t pieces[] = { 1, 3, 100, 512, 700, 1024, 5000, PMAX };
	static const size_t offsets[] = { 0, 1, 511, 512, 513, 4096, C - 1, C, C + 700, NMAX - 3 };
	float *a = malloc(NMAX * sizeof *a), *b = malloc((NMAX + PMAX) * sizeof *b);
	size_t si, pi;
	int bad_vals = 0, bad_state = 0, bad_count = 0;

	if (!a || !b)
		tap_bail_out("out of memory");
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		size_t n = sizes[si];
		bnn_rng r, ref;

		bnn_rng_seed(&ref, 31 + n);
		bnn_rng_normal(&ref, a, n);
		for (pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
			bnn_rng_normal_stream st;
			size_t got = 0, k;

			bnn_rng_seed(&r, 31 + n);
			bnn_rng_normal_begin(&st, &r, n);
			while ((k = bnn_rng_normal_next(&st, b + got, pieces[pi])) > 0) {
				got += k;
				if (k != pieces[pi] && got != n)
					bad_count++; /* a short piece before the end */
			}
			bad_count += got != n;
			bad_vals += memcmp(a, b, n * sizeof *a) != 0;
			bad_state += !same_state(&r, &ref);
		}
	}
	is_int(bad_vals, 0,
	       "normal stream: pieces of 1 to C + 1 give bnn_rng_normal's "
	       "variates for n = 0 to 3C + 5");
	is_int(bad_state, 0, "normal stream: ... and leave rng where the call does");
	is_int(bad_count, 0, "normal stream: pieces are whole until the last, which is cut at n");

	/* Seeking: a copy of a begun stream, sought to any offset, reads on
	 * from there; so does the original after its copy moved. */
	{
		bnn_rng r;
		bnn_rng_normal_stream st, cp;
		size_t oi, bad_seek = 0;

		bnn_rng_seed(&r, 31 + NMAX);
		bnn_rng_normal_begin(&st, &r, NMAX);
		for (oi = 0; oi < sizeof offsets / sizeof *offsets; oi++) {
			size_t o = offsets[oi], k;

			cp = st;
			bnn_rng_normal_seek(&cp, o);
			k = bnn_rng_normal_next(&cp, b, 1000);
			bad_seek += k != (NMAX - o < 1000 ? NMAX - o : 1000) ||
			            memcmp(b, a + o, k * sizeof *b) != 0;
			bnn_rng_normal_seek(&st, NMAX - 1 - o);
			k = bnn_rng_normal_next(&st, b, 3);
			bad_seek += memcmp(b, a + NMAX - 1 - o, k * sizeof *b) != 0;
		}
		bnn_rng_seed(&r, 3);
		bnn_rng_normal_begin(&st, &r, 300);
		bnn_rng_normal(&r, b, 0); /* nothing: r is free again */
		bnn_rng_seed(&r, 3);
		bnn_rng_normal(&r, a, 300);
		bnn_rng_normal_seek(&st, 101);
		bad_seek += bnn_rng_normal_next(&st, b, 500) != 199 ||
		            memcmp(b, a + 101, 199 * sizeof *b) != 0;
		is_int((long)bad_seek, 0,
		       "normal stream: seeking to offsets around blocks and "
		       "chunks, narrow calls included");
	}

	/* Many blocks: the AVX-512 and compiled blocks agree here too. */
	{
		enum {
			NBIG = 3 * 4096 + 77
		};
		float *c = malloc(NBIG * sizeof *c);
		bnn_rng r;

		if (!c)
			tap_bail_out("out of memory");
		bnn_rng_seed(&r, 77);
		bnn_rng_normal(&r, c, NBIG);
		ok(generic_block_same(c, NBIG, 77),
		   "n = %d: the AVX-512 blocks and the "
		   "compiled ones give the same bits",
		   NBIG);
		free(c);
	}
	free(a);
	free(b);
}

int main(void)
{
	test_next();
	test_seed();
	test_jump();
	test_uniform();
	test_below();
	test_shuffle();
	test_normal_exact();
	test_normal_moments();
	test_normal_sizes();
	test_normal_chunks();
	test_normal_stream();
	return tap_done();
}
