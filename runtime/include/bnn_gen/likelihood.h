/*
 * bnn_gen/likelihood.h: the kernels of the likelihoods, which say how a
 * model's output meets its targets (gen/likelihood_code.c).
 *
 * The losses are sums over the batch in a fixed order and stay on the
 * calling thread: for the models this project trains they cost a few
 * microseconds a step (K·B exponentials), well under a team's start; the
 * gaussian's element-wise gradient runs on the thread's team
 * (BNN_GEN_PEACH).
 */
#ifndef BNN_GEN_LIKELIHOOD_H
#define BNN_GEN_LIKELIHOOD_H

#include <math.h>

#include "elementwise.h"
#include "loop.h"
#include "real.h"

/* ---- likelihoods ------------------------------------------------------------
 * Each returns Σ_i ℓ_i, the summed negative log-likelihood of the batch,
 * and, when dz is not NULL, writes dz = ∂((1/B)·Σ ℓ_i)/∂z. */

/* categorical over K logits; y holds class labels as exact values:
 * ℓ = logsumexp(z) − z_y;  dz = (softmax(z) − onehot(y))/B. */
static inline double bnn_gen_categorical(long batch, long k, const bnn_real *restrict z,
                                         const bnn_real *restrict y, bnn_real *restrict dz)
{
	double loss = 0;
	long i, j;

	for (i = 0; i < batch; i++) {
		const bnn_real *zi = z + i * k;
		long label = (long)y[i];
		bnn_real zmax = zi[0];
		double sum = 0;
		for (j = 1; j < k; j++)
			zmax = zi[j] > zmax ? zi[j] : zmax;
		for (j = 0; j < k; j++)
			sum += BNN_GEN_EXP(zi[j] - zmax);
		loss += (double)zmax + log(sum) - (double)zi[label];
		if (!dz)
			continue;
		for (j = 0; j < k; j++)
			dz[i * k + j] = (bnn_real)(BNN_GEN_EXP(zi[j] - zmax) / sum / (double)batch);
		dz[i * k + label] -= (bnn_real)(1.0 / (double)batch);
	}
	return loss;
}

/* bernoulli over K independent logits, y in {0, 1}:
 * ℓ = Σ_k softplus(z_k) − y_k·z_k;  dz = (σ(z) − y)/B. */
static inline double bnn_gen_bernoulli(long batch, long k, const bnn_real *restrict z,
                                       const bnn_real *restrict y, bnn_real *restrict dz)
{
	double loss = 0;
	long i;

	for (i = 0; i < batch * k; i++) {
		loss += (double)bnn_gen_softplus1(z[i]) - (double)y[i] * (double)z[i];
		if (dz)
			dz[i] = (bnn_real)(((double)bnn_gen_sigmoid1(z[i]) - (double)y[i]) /
			                   (double)batch);
	}
	return loss;
}

/* gaussian with a fixed σ per model, mean μ = z:
 * ℓ = Σ_k ½log(2π) + log σ + (y − μ)²/(2σ²);  dμ = (μ − y)/(σ²·B).
 * The constant terms are added once, and Σ(y − μ)² is summed in double in
 * four interleaved partial sums (one serial chain of additions would set
 * the pace of the whole loop). */
static inline double bnn_gen_gaussian_fixed(long batch, long k, const bnn_real *restrict z,
                                            const bnn_real *restrict y, double sigma,
                                            bnn_real *restrict dz)
{
	double inv_var = 1 / (sigma * sigma), part[4] = { 0, 0, 0, 0 };
	long e, n = batch * k;
	int j;

	for (e = 0; e + 4 <= n; e += 4)
		for (j = 0; j < 4; j++) {
			double r = (double)y[e + j] - (double)z[e + j];
			part[j] += r * r;
		}
	for (; e < n; e++) {
		double r = (double)y[e] - (double)z[e];
		part[0] += r * r;
	}
	if (dz) {
		bnn_real scale = (bnn_real)(inv_var / (double)batch);
		BNN_GEN_PEACH(n, 1, 0, dz, (z[i] - y[i]) * scale);
	}
	return (double)n * (BNN_GEN_HALF_LOG_2PI + log(sigma)) +
	       0.5 * inv_var * ((part[0] + part[1]) + (part[2] + part[3]));
}

/*
 * gaussian with a learned s = log σ per output (parameter vector s):
 * ℓ = Σ_k ½log(2π) + s_k + ½(y − μ)²·e^(−2s_k);
 * dμ = (μ − y)·e^(−2s)/B (dz NULL: skipped);  ∂ℓ/∂s = 1 − (y − μ)²·e^(−2s),
 * averaged into ds (overwritten; NULL: skipped) and, squared, into ss (the
 * mean of squares; NULL: skipped).
 */
static inline double bnn_gen_gaussian_learned(long batch, long k, const bnn_real *restrict z,
                                              const bnn_real *restrict y,
                                              const bnn_real *restrict s, bnn_real *restrict dz,
                                              bnn_real *restrict ds, bnn_real *restrict ss)
{
	double loss = 0;
	long i, j;

	if (ds)
		for (j = 0; j < k; j++)
			ds[j] = 0;
	if (ss)
		for (j = 0; j < k; j++)
			ss[j] = 0;
	for (i = 0; i < batch; i++)
		for (j = 0; j < k; j++) {
			double r = (double)y[i * k + j] - (double)z[i * k + j];
			double inv_var = exp(-2.0 * (double)s[j]);
			double gs = 1 - r * r * inv_var;
			loss += BNN_GEN_HALF_LOG_2PI + (double)s[j] + 0.5 * r * r * inv_var;
			if (dz)
				dz[i * k + j] = (bnn_real)(-r * inv_var / (double)batch);
			if (ds)
				ds[j] += (bnn_real)(gs / (double)batch);
			if (ss)
				ss[j] += (bnn_real)(gs * gs / (double)batch);
		}
	return loss;
}

#endif /* BNN_GEN_LIKELIHOOD_H */
