/*
 * bias_correction.h: 1 − β^t, the bias correction of Adam's moment
 * estimates, remembered per thread (bias_correction.c).  Internal to the
 * library (not installed).
 */
#ifndef BNN_BIAS_CORRECTION_H
#define BNN_BIAS_CORRECTION_H

/* 1 − β^t, exactly as 1.0 - pow(beta, t) computes it. */
double bnn_bias_correction(double beta, double t);

#endif
