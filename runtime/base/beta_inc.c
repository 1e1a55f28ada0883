/*
 * beta_inc.c: the regularised incomplete beta function I_x(a, b), by the
 * continued fraction of Numerical Recipes (3rd ed., §6.4, eq. 6.4.5),
 * evaluated by the modified Lentz method, on the side of the symmetry
 * I_x(a, b) = 1 − I_{1−x}(b, a) where it converges fast (x below
 * (a + 1)/(a + b + 2)).  The Student-t CDF is
 * 1 − ½·I_{ν/(ν+t²)}(ν/2, ½) for t ≥ 0, and the negative binomial's
 * P(Y ≤ y) = I_{ρ/(ρ+m)}(ρ, y + 1).
 */
#include <math.h>

#include "beta_inc.h"

/* The continued fraction of I_x(a, b)·B(a, b)·a / (x^a (1 − x)^b). */
static double beta_inc_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (m = 1; m <= 1000; m++) {
		double aa = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), del;
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double bnn_beta_inc(double a, double b, double x)
{
	double front;

	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_inc_cf(a, b, x) / a;
	return 1 - front * beta_inc_cf(b, a, 1 - x) / b;
}
