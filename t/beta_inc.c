/*
 * beta_inc.c: the regularised incomplete beta function I_x(a, b)
 * (runtime/base/beta_inc.c), which prediction uses as the CDF of the
 * Student-t and negative binomial predictives, against values computed by
 * hand: the closed forms I_x(1, 1) = x, I_x(a, 1) = x^a,
 * I_x(1, b) = 1 − (1 − x)^b and I_½(a, a) = ½; for integer a and b the
 * binomial sum I_x(a, b) = Σ_{j=a}^{a+b−1} C(a+b−1, j)·x^j·(1 − x)^(a+b−1−j);
 * the symmetry I_x(a, b) = 1 − I_{1−x}(b, a); and the ends of the range.
 */
#include <math.h>

#include "beta_inc.h"
#include "tap.h"

static void test_closed_forms(void)
{
	is_float(bnn_beta_inc(1, 1, 0.3), 0.3, 1e-14, "I_0.3(1, 1) = 0.3");
	is_float(bnn_beta_inc(2.5, 1, 0.4), pow(0.4, 2.5), 1e-14, "I_0.4(2.5, 1) = 0.4^2.5");
	is_float(bnn_beta_inc(1, 3.5, 0.2), 1 - pow(0.8, 3.5), 1e-14,
	         "I_0.2(1, 3.5) = 1 - 0.8^3.5");
	is_float(bnn_beta_inc(7.25, 7.25, 0.5), 0.5, 1e-14, "I_0.5(7.25, 7.25) = 1/2");
	is_float(bnn_beta_inc(0.5, 0.5, 0.5), 0.5, 1e-14, "I_0.5(1/2, 1/2) = 1/2");
}

/* I_0.3(2, 3) = C(4,2)·0.09·0.49 + C(4,3)·0.027·0.7 + 0.3^4 = 0.3483;
 * I_0.9(3, 2) = C(4,3)·0.729·0.1 + 0.9^4 = 0.9477. */
static void test_binomial_sums(void)
{
	is_float(bnn_beta_inc(2, 3, 0.3), 0.3483, 1e-14, "I_0.3(2, 3) = 0.3483 (binomial sum)");
	is_float(bnn_beta_inc(3, 2, 0.9), 0.9477, 1e-14, "I_0.9(3, 2) = 0.9477 (binomial sum)");
}

/* Student-t's CDF at t with ν = 1 (Cauchy) is ½ + atan(t)/π; the
 * predictive computes its tail as ½·I_{ν/(ν+t²)}(ν/2, ½). */
static void test_student_tail(void)
{
	const double t = 2, nu = 1;
	is_float(0.5 * bnn_beta_inc(0.5 * nu, 0.5, nu / (nu + t * t)),
	         0.5 - atan(t) / (4 * atan(1.0)), 1e-13, "Cauchy tail at t = 2: 1/2 - atan(2)/pi");
}

static void test_symmetry_and_ends(void)
{
	is_float(bnn_beta_inc(3.3, 0.7, 0.62) + bnn_beta_inc(0.7, 3.3, 0.38), 1, 1e-13,
	         "I_x(a, b) + I_(1-x)(b, a) = 1");
	is_float(bnn_beta_inc(40, 60, 0.4) + bnn_beta_inc(60, 40, 0.6), 1, 1e-12,
	         "the same for large a and b");
	is_float(bnn_beta_inc(2, 3, 0), 0, 0, "I_0 = 0");
	is_float(bnn_beta_inc(2, 3, 1), 1, 0, "I_1 = 1");
	is_float(bnn_beta_inc(2, 3, -0.5), 0, 0, "0 below the range");
	is_float(bnn_beta_inc(2, 3, 1.5), 1, 0, "1 above the range");
}

int main(void)
{
	test_closed_forms();
	test_binomial_sums();
	test_student_tail();
	test_symmetry_and_ends();
	return tap_done();
}
