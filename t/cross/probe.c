/*
 * probe.c: the program that t/cross.sh builds for the host, for the
 * emulated Cortex-M4 board and for big-endian s390x, whose outputs must be
 * byte for byte the same, apart from the first line ("target: ..."), which
 * says how the target stores and evaluates floats.  It exercises what
 * generated inference code relies on, in pure C99:
 *   - float arithmetic, with inputs from a counter-based hash of (seed,
 *     counter), so every target draws the same numbers: a small dense layer
 *     with ReLU, divisions, square roots, a long running sum, subnormal
 *     results (a core that flushed them to zero would differ) and
 *     float-to-integer conversion;
 *   - a const float table written as C99 hexadecimal literals, as the
 *     standalone target bakes weights: the compiler must give the same bits
 *     on every target;
 *   - byte order: the bytes of a float read and written with shifts (which
 *     give the same result on either order), and on the "target:" line the
 *     native order seen through memcpy (t/cross.sh checks that s390x is
 *     big-endian, so the comparison really spans both orders).
 * Every float is printed in "%a" notation (cross_print.h), i.e. exactly.
 *
 * Evaluation method: GCC 12 on s390x in a strict ISO mode (-std=c99, c11)
 * has FLT_EVAL_METHOD 1, i.e. evaluates float expressions in double, and
 * rounds to float only on assignment, cast, call or return; x86-64 and the
 * Cortex-M4 have 0.  So every float operation here stores its result in a
 * float before the next one uses it: a single +, -, *, / or sqrt done in
 * double and then rounded to float gives the correctly rounded float
 * result, since double's 53 bits are at least 2 x 24 + 2 (Figueroa, "When
 * is double rounding innocuous?", ACM SIGNUM Newsletter 30(3), 1995).  An
 * expression such as `acc += w * x` would be rounded once instead of twice
 * on s390x and differ in the last bit.  (-ffp-contract=off, which run.sh
 * passes, likewise keeps the compiler from fusing a*b+c into one rounding.)
 */
#include "cross_print.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum {
	PROBE_IN = 16,   /* inputs of the dense layer */
	PROBE_OUT = 8,   /* its outputs */
	PROBE_SUM = 4096 /* terms of the running sum */
};

/* Exact bits, whatever the compiler's decimal conversion: pi and -e
 * rounded to float, 0.1f, FLT_MAX, FLT_MIN, the smallest subnormal, a
 * subnormal with fraction bits, minus zero, and 1 + 2^-23. */
static const float probe_table[] = {
	0x1.921fb6p+1f, -0x1.5bf0a8p+1f, 0x1.99999ap-4f, 0x1.fffffep+127f, 0x1p-126f,
	0x1p-149f,      0x1.4p-140f,     -0x0p+0f,       0x1.000002p+0f,
};

/* A float stored as little-endian bytes, decoded with shifts below. */
static const unsigned char probe_le_bytes[4] = { 0xdb, 0x0f, 0x49, 0x40 };

/* The seeds are offset by this, read at run time, so that the compiler
 * cannot fold the arithmetic below into constants: the target computes it. */
static volatile uint32_t probe_seed_offset = 0;

/* The counter-based hash: splitmix64's finaliser of seed and counter
 * (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014), the high 32 bits. */
static uint32_t probe_hash(uint32_t seed, uint32_t counter)
{
	uint64_t z = ((uint64_t)(seed + probe_seed_offset) << 32 | counter) +
	             UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Uniform on [-1, 1) in steps of 2^-23: 24 hashed bits; the conversion,
 * the scaling and the subtraction are all exact. */
static float probe_uniform(uint32_t seed, uint32_t counter)
{
	float unit = (float)(probe_hash(seed, counter) >> 8) * 0x1p-23f;

	return unit - 1.0f;
}

static uint32_t probe_bits(float x)
{
	uint32_t bits;

	memcpy(&bits, &x, sizeof bits);
	return bits;
}

/* One output line: "label index value" with the value in %a notation. */
static void probe_line(const char *label, int32_t index, float value)
{
	cross_put_str(label);
	cross_put_str(" ");
	cross_put_int(index);
	cross_put_str(" ");
	cross_put_float(value);
	cross_put_str("\n");
}

/* The line that differs between targets and is left out of the
 * comparison: the native byte order, seen through memcpy, and
 * FLT_EVAL_METHOD. */
static void probe_target(void)
{
	const float one_and_half = 1.5f; /* bits 0x3fc00000 */
	unsigned char native[4];

	memcpy(native, &one_and_half, sizeof native);
	cross_put_str(native[0] == 0x3f ? "target: byte order big" : "target: byte order little");
	cross_put_str(", FLT_EVAL_METHOD ");
	cross_put_int(FLT_EVAL_METHOD);
	cross_put_str("\n");
}

/* A float through shifts in both directions: the same on either order. */
static void probe_byte_order(void)
{
	uint32_t decoded = 0, bits = probe_bits(0x1.921fb6p+1f);
	float from_bytes;
	int i;

	for (i = 3; i >= 0; i--)
		decoded = decoded << 8 | probe_le_bytes[i];
	memcpy(&from_bytes, &decoded, sizeof from_bytes);
	probe_line("le-decoded", (int32_t)decoded, from_bytes);
	cross_put_str("le-encoded");
	for (i = 0; i < 4; i++) {
		cross_put_str(" ");
		cross_put_int((int32_t)(bits >> (8 * i) & 0xff));
	}
	cross_put_str("\n");
}

static void probe_hex_table(void)
{
	size_t i;

	for (i = 0; i < sizeof probe_table / sizeof probe_table[0]; i++) {
		cross_put_str("table ");
		cross_put_hex32(probe_bits(probe_table[i]));
		probe_line("", (int32_t)i, probe_table[i]);
	}
}

/* y = relu(W x + b), summed in index order, as a generated dense layer. */
static void probe_dense(void)
{
	float x[PROBE_IN], y[PROBE_OUT];
	int o, i;

	for (i = 0; i < PROBE_IN; i++)
		x[i] = probe_uniform(2, (uint32_t)i);
	for (o = 0; o < PROBE_OUT; o++) {
		float acc = probe_uniform(3, (uint32_t)o); /* the bias */

		float num, den;

		for (i = 0; i < PROBE_IN; i++) {
			float product = probe_uniform(1, (uint32_t)(o * PROBE_IN + i)) * x[i];

			acc += product;
		}
		y[o] = acc > 0.0f ? acc : 0.0f;
		probe_line("dense", o, y[o]);
		num = y[o] + probe_table[0];
		num = sqrtf(num);
		den = y[o] - 3.0f;
		probe_line("div-sqrt", o, num / den);
	}
}

/* A long sum, where any difference in rounding would accumulate, and the
 * integer conversions of its scaled terms. */
static void probe_running_sum(void)
{
	float sum = 0.0f;
	int32_t isum = 0;
	uint32_t k;

	for (k = 0; k < PROBE_SUM; k++) {
		float u = probe_uniform(4, k);
		float square = u * u;
		float term = square * probe_table[2];
		float ratio = u / probe_table[0];
		float scaled = u * 1000.0f;

		term -= ratio;
		sum += term;
		isum += (int32_t)scaled; /* truncation of the rounded product */
	}
	probe_line("sum", PROBE_SUM, sum);
	cross_put_str("int-sum ");
	cross_put_int(isum);
	cross_put_str("\n");
}

/* Results in the subnormal range and at the ends of the float range; the
 * operands are read through volatile so that the target's FPU, not the
 * compiler's constant folding, computes them. */
static void probe_extremes(void)
{
	volatile const float *t = probe_table;
	float min_normal = t[4], smallest = t[5], sub = t[6], one_ulp = t[8];
	float shifted = min_normal * 0x1p-22f; /* a subnormal, rounded */

	probe_line("subnormal", 0, min_normal * 0.25f);
	probe_line("subnormal", 1, shifted + sub);
	probe_line("subnormal", 2, smallest * 3.0f);
	probe_line("underflow", 0, smallest * 0.5f);
	probe_line("overflow", 0, t[3] * 2.0f);
	probe_line("round-even", 0, one_ulp + 0x1p-24f);
}

int main(void)
{
	probe_target();
	probe_byte_order();
	probe_hex_table();
	probe_dense();
	probe_running_sum();
	probe_extremes();
	return 0;
}
