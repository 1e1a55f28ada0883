/*
 * beta_inc.h: the regularised incomplete beta function (beta_inc.c), the
 * CDF of the Student-t and negative binomial distributions that
 * prediction scores central intervals with.  Internal to the library (not
 * installed).
 */
#ifndef BNN_BETA_INC_H
#define BNN_BETA_INC_H

/* I_x(a, b) = B(x; a, b)/B(a, b) for a, b > 0 and 0 ≤ x ≤ 1 (0 below,
 * 1 above that range). */
double bnn_beta_inc(double a, double b, double x);

#endif
