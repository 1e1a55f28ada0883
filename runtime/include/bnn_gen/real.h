/*
 * bnn_gen/real.h: the precision of the generated code's kernels.
 *
 * bnn_real is float, or double when BNN_GEN_DOUBLE is defined before
 * bnn_gen.h is included (the gradient tests); the BNN_GEN_EXP, ... macros
 * name the math function of that precision, so a kernel is written once for
 * both.  Every other bnn_gen/ header builds on this one.
 */
#ifndef BNN_GEN_REAL_H
#define BNN_GEN_REAL_H

#include <math.h>

#ifdef BNN_GEN_DOUBLE
typedef double bnn_real;
#define BNN_GEN_EXP   exp
#define BNN_GEN_LOG   log
#define BNN_GEN_LOG1P log1p
#define BNN_GEN_TANH  tanh
#define BNN_GEN_ERF   erf
#define BNN_GEN_COS   cos
#define BNN_GEN_SIN   sin
#define BNN_GEN_FABS  fabs
#define BNN_GEN_SQRT  sqrt
#else
typedef float bnn_real;
#define BNN_GEN_EXP   expf
#define BNN_GEN_LOG   logf
#define BNN_GEN_LOG1P log1pf
#define BNN_GEN_TANH  tanhf
#define BNN_GEN_ERF   erff
#define BNN_GEN_COS   cosf
#define BNN_GEN_SIN   sinf
#define BNN_GEN_FABS  fabsf
#define BNN_GEN_SQRT  sqrtf
#endif

/* 0.5·log(2π), the constant of the Gaussian log-density. */
#define BNN_GEN_HALF_LOG_2PI 0.91893853320467274178

#endif /* BNN_GEN_REAL_H */
