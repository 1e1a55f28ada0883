/* standalone_math.c: the float functions and the random generator that a
 * standalone inference file carries itself (bnnc --standalone;
 * docs/standalone.md, "Math" and "Random numbers").
 *
 * Two reasons for the file's own functions.  The random generator must
 * give the same bits on every platform and compiler, so its uniforms and
 * normal variates use only +, −, ×, ÷ and integer operations, never the
 * platform's libm (whose logf and cosf differ between C libraries).  And
 * with MODEL_NO_LIBM the network's own math (expf, logf, log1pf, tanhf,
 * erff, cosf, sqrtf) comes from here too, so the file links with no libm
 * at all (a bare-metal target, -ffreestanding -nostdlib).  Every constant
 * is a hexadecimal literal, so no compiler's decimal rounding enters.
 * The results are exact up to a few ulps (each function says how); what
 * matters for the samples is that they are the same everywhere, which
 * needs IEEE single precision with round-to-nearest and no contraction of
 * a·b + c into a fused multiply-add (-ffp-contract=off; gcc's -std=c99
 * implies it).
 *
 * Only the functions the model needs are written, each once: those the
 * generator uses unconditionally, the others inside #ifdef MODEL_NO_LIBM,
 * so that neither build has an unused static function.
 */
#include <string.h>

#include "standalone.h"

/* The pieces of emitted code, in dependency order. */
enum {
	M_BITS,
	M_FLOAT,
	M_EXP,
	M_LOG,
	M_LOG1P,
	M_TANH,
	M_ERF,
	M_COSQ,
	M_COS,
	M_SQRT,
	M_RNG,
	M_GAUSS,
	M_COUNT
};

static const char *const math_text[M_COUNT] = {
	[M_BITS] = "/* The bits of a float (through a union, which C99 allows). */\n"
	           "static uint32_t bnns_bits(float x)\n"
	           "{\n"
	           "\tunion {\n\t\tfloat f;\n\t\tuint32_t u;\n\t} v;\n"
	           "\tv.f = x;\n"
	           "\treturn v.u;\n"
	           "}\n\n",
	[M_FLOAT] = "/* The float of given bits. */\n"
	            "static float bnns_float(uint32_t u)\n"
	            "{\n"
	            "\tunion {\n\t\tfloat f;\n\t\tuint32_t u;\n\t} v;\n"
	            "\tv.u = u;\n"
	            "\treturn v.f;\n"
	            "}\n\n",
	[M_EXP] = "/* e^x: x = n·ln 2 + r (Cody and Waite, ln 2 in two parts, n·hi exact),\n"
	          " * |r| <= ln 2 / 2, e^r by its Taylor polynomial to r^7 (error below\n"
	          " * 2^-26), times 2^n in two factors, so subnormal results round once.\n"
	          " * Within 2 ulps of e^x. */\n"
	          "static float bnns_expf(float x)\n"
	          "{\n"
	          "\tfloat z, n, r, p;\n"
	          "\tint32_t k, k1;\n"
	          "\tif (x != x)\n"
	          "\t\treturn x;\n"
	          "\tif (x > 0x1.62e43p+6f)\n"
	          "\t\treturn bnns_float(0x7f800000u);\n"
	          "\tif (x < -0x1.9fe368p+6f)\n"
	          "\t\treturn 0.0f;\n"
	          "\tz = x * 0x1.715476p+0f + 0x1.8p+23f; /* 1.5·2^23 + round(x / ln 2) */\n"
	          "\tn = z - 0x1.8p+23f;\n"
	          "\tr = (x - n * 0x1.63p-1f) - n * -0x1.bd0106p-13f;\n"
	          "\tp = 0x1p+0f + r * (0x1p+0f + r * (0x1p-1f + r * (0x1.555556p-3f +\n"
	          "\t    r * (0x1.555556p-5f + r * (0x1.111112p-7f + r * (0x1.6c16c2p-10f +\n"
	          "\t    r * 0x1.a01a02p-13f))))));\n"
	          "\tk = (int32_t)n;\n"
	          "\tk1 = k / 2;\n"
	          "\treturn p * bnns_float((uint32_t)(k1 + 127) << 23) *\n"
	          "\t       bnns_float((uint32_t)(k - k1 + 127) << 23);\n"
	          "}\n\n",
	[M_LOG] =
	        "/* log x: x = m·2^e with m in [√½, √2), log m = 2·atanh(s), s = (m − 1)/(m + 1),\n"
	        " * |s| <= 0.172, by its series to s^9 (error below 2^-28); e·ln 2 in two\n"
	        " * parts.  Within 2 ulps of log x. */\n"
	        "static float bnns_logf(float x)\n"
	        "{\n"
	        "\tuint32_t b = bnns_bits(x);\n"
	        "\tint32_t e = 0;\n"
	        "\tfloat m, s, s2, lm;\n"
	        "\tif (!(x > 0.0f))\n"
	        "\t\treturn x == 0.0f ? bnns_float(0xff800000u) : bnns_float(0x7fc00000u);\n"
	        "\tif (b >= 0x7f800000u)\n"
	        "\t\treturn x; /* +inf, NaN */\n"
	        "\tif (b < 0x00800000u) { /* subnormal: scale into the normal range */\n"
	        "\t\tb = bnns_bits(x * 0x1p+25f);\n"
	        "\t\te = -25;\n"
	        "\t}\n"
	        "\te += (int32_t)(b >> 23) - 127;\n"
	        "\tm = bnns_float((b & 0x007fffffu) | 0x3f800000u);\n"
	        "\tif (m > 0x1.6a09e6p+0f) {\n"
	        "\t\tm = m * 0x1p-1f;\n"
	        "\t\te++;\n"
	        "\t}\n"
	        "\ts = (m - 0x1p+0f) / (m + 0x1p+0f);\n"
	        "\ts2 = s * s;\n"
	        "\tlm = 0x1p+1f * s + 0x1p+1f * s * s2 * (0x1.555556p-2f + s2 * (0x1.99999ap-3f +\n"
	        "\t     s2 * (0x1.24924ap-3f + s2 * 0x1.c71c72p-4f)));\n"
	        "\treturn (float)e * 0x1.63p-1f + ((float)e * -0x1.bd0106p-13f + lm);\n"
	        "}\n\n",
	[M_LOG1P] = "/* log(1 + x), with the rounding of 1 + x corrected (Goldberg's trick). */\n"
	            "static float bnns_log1pf(float x)\n"
	            "{\n"
	            "\tfloat u = 0x1p+0f + x;\n"
	            "\tif (u == 0x1p+0f)\n"
	            "\t\treturn x;\n"
	            "\tif (!(u > 0.0f) || bnns_bits(u) >= 0x7f800000u)\n"
	            "\t\treturn bnns_logf(u);\n"
	            "\treturn bnns_logf(u) * (x / (u - 0x1p+0f));\n"
	            "}\n\n",
	[M_TANH] =
	        "/* tanh x: its Taylor series to x^11 for |x| < 0.3, else\n"
	        " * (1 − e)/(1 + e) with e = e^(−2|x|); ±1 beyond |x| = 9. */\n"
	        "static float bnns_tanhf(float x)\n"
	        "{\n"
	        "\tfloat a = x < 0.0f ? -x : x, y, e, a2;\n"
	        "\tif (a != a)\n"
	        "\t\treturn x;\n"
	        "\tif (a > 0x1.2p+3f)\n"
	        "\t\treturn x < 0.0f ? -0x1p+0f : 0x1p+0f;\n"
	        "\tif (a < 0x1.333334p-2f) {\n"
	        "\t\ta2 = a * a;\n"
	        "\t\ty = a + a * a2 * (-0x1.555556p-2f + a2 * (0x1.111112p-3f + a2 * (-0x1.ba1ba2p-5f +\n"
	        "\t\t    a2 * (0x1.664f48p-6f + a2 * -0x1.226e36p-7f))));\n"
	        "\t} else {\n"
	        "\t\te = bnns_expf(-0x1p+1f * a);\n"
	        "\t\ty = (0x1p+0f - e) / (0x1p+0f + e);\n"
	        "\t}\n"
	        "\treturn x < 0.0f ? -y : y;\n"
	        "}\n\n",
	[M_ERF] =
	        "/* erf x by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7). */\n"
	        "static float bnns_erff(float x)\n"
	        "{\n"
	        "\tfloat a = x < 0.0f ? -x : x, t, y;\n"
	        "\tif (a != a)\n"
	        "\t\treturn x;\n"
	        "\tt = 0x1p+0f / (0x1p+0f + 0x1.4f740ap-2f * a);\n"
	        "\ty = 0x1p+0f - t * (0x1.04f20cp-2f + t * (-0x1.23531cp-2f + t * (0x1.6be1c6p+0f +\n"
	        "\t    t * (-0x1.7401c6p+0f + t * 0x1.0fb844p+0f)))) * bnns_expf(-a * a);\n"
	        "\treturn x < 0.0f ? -y : y;\n"
	        "}\n\n",
	[M_COSQ] =
	        "/* cos(q·π/2 + r) for |r| <= π/4: the Taylor polynomials of sin r (to r^9)\n"
	        " * and cos r (to r^10), errors below 2^-28. */\n"
	        "static float bnns_cos_q(int32_t q, float r)\n"
	        "{\n"
	        "\tfloat r2 = r * r;\n"
	        "\tfloat c = 0x1p+0f + r2 * (-0x1p-1f + r2 * (0x1.555556p-5f + r2 * (-0x1.6c16c2p-10f +\n"
	        "\t          r2 * (0x1.a01a02p-16f + r2 * -0x1.27e4fcp-22f))));\n"
	        "\tfloat s = r + r * r2 * (-0x1.555556p-3f + r2 * (0x1.111112p-7f + r2 * (-0x1.a01a02p-13f +\n"
	        "\t          r2 * 0x1.71de3ap-19f)));\n"
	        "\tswitch (q & 3) {\n"
	        "\tcase 0:\n\t\treturn c;\n"
	        "\tcase 1:\n\t\treturn -s;\n"
	        "\tcase 2:\n\t\treturn -c;\n"
	        "\tdefault:\n\t\treturn s;\n"
	        "\t}\n"
	        "}\n\n",
	[M_COS] = "/* cos x: x = k·π/2 + r, π/2 in three parts (Cody and Waite, as Cephes);\n"
	          " * accurate for |x| < 8192, less so beyond. */\n"
	          "static float bnns_cosf(float x)\n"
	          "{\n"
	          "\tfloat k, r;\n"
	          "\tif (x != x || bnns_bits(x < 0.0f ? -x : x) >= 0x7f800000u)\n"
	          "\t\treturn bnns_float(0x7fc00000u);\n"
	          "\tif (x > 0x1p+22f || x < -0x1p+22f)\n"
	          "\t\treturn 0.0f; /* no meaningful phase left in a float this large */\n"
	          "\tk = (x * 0x1.45f306p-1f + 0x1.8p+23f) - 0x1.8p+23f;\n"
	          "\tr = ((x - k * 0x1.92p+0f) - k * 0x1.fb4p-12f) - k * 0x1.4442d2p-24f;\n"
	          "\treturn bnns_cos_q((int32_t)k, r);\n"
	          "}\n\n",
	[M_SQRT] = "/* √x: Newton's iteration from a guess made of the exponent's bits, five\n"
	           " * steps (within 1 ulp). */\n"
	           "static float bnns_sqrtf(float x)\n"
	           "{\n"
	           "\tfloat y;\n"
	           "\tint i;\n"
	           "\tif (!(x > 0.0f))\n"
	           "\t\treturn x == 0.0f ? x : bnns_float(0x7fc00000u);\n"
	           "\tif (bnns_bits(x) >= 0x7f800000u)\n"
	           "\t\treturn x;\n"
	           "\ty = bnns_float(0x1fbd1df5u + (bnns_bits(x) >> 1));\n"
	           "\tfor (i = 0; i < 5; i++)\n"
	           "\t\ty = 0x1p-1f * (y + x / y);\n"
	           "\treturn y;\n"
	           "}\n\n",
	[M_RNG] = "/*\n"
	          " * The counter-based generator: splitmix64's finaliser (Steele, Lea and\n"
	          " * Flood 2014) over a counter.  bnns_draw(key, j) is the j-th 64-bit\n"
	          " * value of a stream; a stream's key is drawn from its parent's key, so\n"
	          " * that a value is a function of (seed, sample, example, layer, index)\n"
	          " * alone: keys are chained seed → sample → example → layer.\n"
	          " */\n"
	          "static uint64_t bnns_mix(uint64_t z)\n"
	          "{\n"
	          "\tz = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);\n"
	          "\tz = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);\n"
	          "\treturn z ^ (z >> 31);\n"
	          "}\n"
	          "\n"
	          "static uint64_t bnns_draw(uint64_t key, long j)\n"
	          "{\n"
	          "\treturn bnns_mix(key + UINT64_C(0x9e3779b97f4a7c15) * ((uint64_t)j + 1u));\n"
	          "}\n\n",
	[M_GAUSS] = "/* A standard normal variate from one draw h, by Box and Muller:\n"
	            " * √(−2 log u1)·cos(2π u2), u1 in (0, 1] and u2 in [0, 1) from 24 bits\n"
	            " * each; 2π u2 = k·π/2 + r with k the nearest integer to 4 u2, exactly. */\n"
	            "static float bnns_normal(uint64_t h)\n"
	            "{\n"
	            "\tfloat u1 = (float)((h >> 40) + 1u) * 0x1p-24f;\n"
	            "\tfloat t = (float)((h >> 16) & 0xffffffu) * 0x1p-22f;\n"
	            "\tfloat k = (float)(int32_t)(t + 0x1p-1f);\n"
	            "\treturn bnns_sqrtf(-0x1p+1f * bnns_logf(u1)) *\n"
	            "\t       bnns_cos_q((int32_t)k, (t - k) * 0x1.921fb6p+0f);\n"
	            "}\n\n",
};

/* What each piece calls. */
static const unsigned math_deps[M_COUNT] = {
	[M_EXP] = 1u << M_FLOAT,
	[M_LOG] = (1u << M_BITS) | (1u << M_FLOAT),
	[M_LOG1P] = (1u << M_LOG) | (1u << M_BITS),
	[M_TANH] = 1u << M_EXP,
	[M_ERF] = 1u << M_EXP,
	[M_COS] = (1u << M_COSQ) | (1u << M_BITS) | (1u << M_FLOAT),
	[M_SQRT] = (1u << M_BITS) | (1u << M_FLOAT),
	[M_GAUSS] = (1u << M_SQRT) | (1u << M_LOG) | (1u << M_COSQ) | (1u << M_RNG),
};

/* Closes a set of pieces under their dependencies. */
static unsigned math_closure(unsigned set)
{
	unsigned before;
	int i;
	do {
		before = set;
		for (i = 0; i < M_COUNT; i++)
			if (set & (1u << i))
				set |= math_deps[i];
	} while (set != before);
	return set;
}

void sa_emit_math(struct sa *s)
{
	static const struct {
		unsigned need;
		int piece;
	} libm[] = { { SA_EXP, M_EXP },   { SA_LOG, M_LOG }, { SA_LOG1P, M_LOG1P },
		     { SA_TANH, M_TANH }, { SA_ERF, M_ERF }, { SA_COS, M_COS },
		     { SA_SQRT, M_SQRT } };
	unsigned always = 0, own = 0;
	size_t j;
	int i;

	if (s->needs & SA_RNG)
		always |= 1u << M_RNG;
	if (s->needs & SA_GAUSS)
		always |= 1u << M_GAUSS;
	for (j = 0; j < sizeof libm / sizeof libm[0]; j++)
		if (s->needs & libm[j].need)
			own |= 1u << libm[j].piece;
	always = math_closure(always);
	own = math_closure(own) & ~always;
	for (i = 0; i < M_COUNT; i++) {
		if (always & (1u << i))
			emit(s->e, "%s", math_text[i]);
		else if (own & (1u << i))
			emit(s->e, "#ifdef %s_NO_LIBM\n%s#endif\n\n", s->up, math_text[i]);
	}
}
