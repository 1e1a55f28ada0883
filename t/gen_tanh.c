/*
 * gen_tanh.c: TAP tests of bnn_gen_tanhf, the vectorisable float tanh of
 * the generated code's tanh layers (runtime/include/bnn_gen.h), against libm's
 * tanh in double: within 3e-7 relatively (3e-44 absolutely for the
 * denormals) on every 509th float bit pattern of both signs and on the
 * edges of its branches (|x| = 0.3, 9), odd (tanh(−x) = −tanh(x)), exact
 * at ±0 and ±inf, NaN for NaN; and bnn_gen_tanh_forward over an array
 * gives the scalar function's floats (whichever clone the CPU runs).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <bnn_gen.h>

#include "tap.h"

static float from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* The error of bnn_gen_tanhf(x) relative to max(|tanh x|, 1e-37): for
 * denormal results, 3e-7 of it is 3e-44, two denormal steps. */
static double tanh_error(float x)
{
	double want = tanh((double)x), got = bnn_gen_tanhf(x);

	return fabs(got - want) / fmax(fabs(want), 1e-37);
}

int main(void)
{
	static float xs[4096], ys[4096];
	double worst = 0, e;
	float at = 0;
	uint32_t u;
	int i, odd = 1, same = 1;

	for (u = 0; u < 0x7F800000u; u += 509) {
		float x = from_bits(u);
		e = tanh_error(x);
		if (e > worst) {
			worst = e;
			at = x;
		}
		odd &= bnn_gen_tanhf(-x) == -bnn_gen_tanhf(x);
	}
	ok(worst <= 3e-7,
	   "within 3e-7 of tanh over every 509th positive float (worst %.3g at %.9g)", worst,
	   (double)at);
	ok(odd, "odd: tanh(-x) = -tanh(x) bit for bit");
	worst = 0;
	for (i = -1000; i <= 1000; i++) {
		float edges[] = { 0.3f, 9.0f, 0.34657359f }; /* ln(2)/2 */
		int j;
		for (j = 0; j < 3; j++) {
			e = tanh_error(edges[j] * (1 + (float)i * 1e-6f));
			worst = e > worst ? e : worst;
		}
	}
	ok(worst <= 3e-7, "within 3e-7 around |x| = 0.3, 9 and ln(2)/2 (worst %.3g)", worst);
	ok(bnn_gen_tanhf(0.0f) == 0 && !signbit(bnn_gen_tanhf(0.0f)) &&
	           signbit(bnn_gen_tanhf(-0.0f)),
	   "tanh(±0) = ±0");
	ok(bnn_gen_tanhf(INFINITY) == 1 && bnn_gen_tanhf(-INFINITY) == -1 && bnn_gen_tanhf(20) == 1,
	   "tanh(±inf) = ±1, and 1 from 9 on");
	ok(isnan(bnn_gen_tanhf(NAN)), "tanh(NaN) is NaN");
	for (i = 0; i < 4096; i++)
		xs[i] = (float)(i - 2048) / 256;
	bnn_gen_tanh_forward(4096, xs, ys);
	for (i = 0; i < 4096; i++)
		same &= ys[i] == bnn_gen_tanhf(xs[i]);
	ok(same, "bnn_gen_tanh_forward gives bnn_gen_tanhf's floats");
	return tap_done();
}
