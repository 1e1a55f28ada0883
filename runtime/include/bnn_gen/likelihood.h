/*
 * bnn_gen/likelihood.h: the kernels of the likelihoods, which say how a
 * model's output meets its targets (gen/likelihood_code.c).
 *
 * The losses are sums over the batch in a fixed order and stay on the
 * calling thread: for the models this project trains they cost a few
 * microseconds a step (K·B exponentials), well under a team's start; the
 * fixed gaussian's element-wise gradient runs on the thread's team
 * (BNN_GEN_PEACH).  Every scale, learned per output or given per example
 * by a node (gaussian's σ or log-variance, laplace's b, studentt's s,
 * negbinomial's dispersion), goes through one kernel, bnn_gen_scale_lik.
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

/* log 2, the normaliser of the Laplace density 1/(2b)·e^(−|r|/b). */
#define BNN_GEN_LOG_2 0.69314718055994530942

/* The scale families of the location-scale kernel below (the names are
 * BNN_GEN_SCALE_ and the likelihood's id in likelihoods.def). */
enum {
	BNN_GEN_SCALE_GAUSSIAN,
	BNN_GEN_SCALE_LAPLACE,
	BNN_GEN_SCALE_STUDENTT,
	BNN_GEN_SCALE_NEGBINOMIAL
};

/* ψ(x), the digamma function, for x > 0: the recurrence ψ(x) = ψ(x + 1) −
 * 1/x up to x ≥ 10, then the asymptotic series ln x − 1/(2x) − Σ B_2n/(2n
 * x^2n) to x^-14 (Abramowitz & Stegun 6.3.18), whose next term is below
 * 1e-17 there. */
static inline double bnn_gen_digamma(double x)
{
	double r = 0, f;

	while (x < 10) {
		r -= 1 / x;
		x += 1;
	}
	f = 1 / (x * x);
	return r + log(x) - 0.5 / x -
	       f * (1.0 / 12 -
	            f * (1.0 / 120 -
	                 f * (1.0 / 252 -
	                      f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760 - f / 12))))));
}

/* log(e^a + e^b) without overflow. */
static inline double bnn_gen_log_add(double a, double b)
{
	return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* The part of studentt's ℓ that depends on ν only:
 * −log Γ((ν+1)/2) + log Γ(ν/2) + ½log(νπ). */
static inline double bnn_gen_studentt_const(double nu)
{
	return -lgamma(0.5 * (nu + 1)) + lgamma(0.5 * nu) + 0.5 * log(nu * 3.14159265358979323846);
}

/*
 * One element's ℓ of a location-scale likelihood with location z, target
 * y, s = log(scale) and (studentt) ν, c = bnn_gen_studentt_const(ν); its
 * ∂ℓ/∂z in *gz and ∂ℓ/∂s in *gs.  With the residual r = y − z:
 *   gaussian: ℓ = ½log(2π) + s + ½r²e^(−2s),  ∂z = −r·e^(−2s),  ∂s = 1 − r²e^(−2s);
 *   laplace:  ℓ = log 2 + s + |r|e^(−s),       ∂z = −sign(r)·e^(−s),
 *             ∂s = 1 − |r|e^(−s), with the subgradient sign(0) = 0;
 *   studentt: ℓ = c + s + (ν+1)/2·log(1 + r²e^(−2s)/ν),
 *             ∂z = −(ν+1)r/(νe^(2s) + r²),  ∂s = 1 − (ν+1)r²/(νe^(2s) + r²);
 *   negbinomial (z = log m, s = log ρ, the dispersion; y a count), with
 *             L = log(ρ + m):  ℓ = −log Γ(y+ρ) + log Γ(ρ) + log Γ(y+1)
 *             − ρ(s − L) − y(z − L),  ∂z = ρ(m − y)/(ρ + m),
 *             ∂s = ρ[ψ(ρ) − ψ(y+ρ) − (s − L) + (y − m)/(ρ + m)].
 */
static inline double bnn_gen_scale_term(int family, double nu, double c, double y, double z,
                                        double s, double *gz, double *gs)
{
	double r = y - z;

	switch (family) {
	case BNN_GEN_SCALE_LAPLACE: {
		double inv_b = exp(-s), a = fabs(r);
		*gz = -(double)((r > 0) - (r < 0)) * inv_b;
		*gs = 1 - a * inv_b;
		return BNN_GEN_LOG_2 + s + a * inv_b;
	}
	case BNN_GEN_SCALE_STUDENTT: {
		double den = nu * exp(2.0 * s) + r * r;
		*gz = -(nu + 1) * r / den;
		*gs = 1 - (nu + 1) * r * r / den;
		return c + s + 0.5 * (nu + 1) * log1p(r * r * exp(-2.0 * s) / nu);
	}
	case BNN_GEN_SCALE_NEGBINOMIAL: {
		double rho = exp(s), m = exp(z), l = bnn_gen_log_add(s, z);
		*gz = rho * (m - y) / (rho + m);
		*gs = rho * (bnn_gen_digamma(rho) - bnn_gen_digamma(y + rho) - (s - l) +
		             (y - m) / (rho + m));
		return -lgamma(y + rho) + lgamma(rho) + lgamma(y + 1) - rho * (s - l) - y * (z - l);
	}
	default: {
		double inv_var = exp(-2.0 * s);
		*gz = -r * inv_var;
		*gs = 1 - r * r * inv_var;
		return BNN_GEN_HALF_LOG_2PI + s + 0.5 * r * r * inv_var;
	}
	}
}

/*
 * A location-scale likelihood (family: BNN_GEN_SCALE_*, ν for studentt)
 * with location z and a log-scale read, for example i and output j, as
 * s_ij = f·S[i·srow + j·scol]: a learned one per output (srow 0, scol 1,
 * S in the parameters, f 1), a node of the model (srow k, scol 1: the
 * likelihood's second node, f = ½ for gaussian's log-variance) or one
 * fixed value (srow = scol = 0).  ℓ and its gradients per element by
 * bnn_gen_scale_term: dz = ∂ℓ/∂z / B (NULL: skipped); ds, laid out as S
 * (overwritten; NULL: skipped), receives Σ over the elements reading each
 * entry of f·∂ℓ/∂s / B: the mean gradient of a learned log-scale, or the
 * delta of the second node; ss (NULL: skipped; a learned one only) the
 * mean of the squared per-example gradients of the learned log-scale.
 */
static inline double bnn_gen_scale_lik(int family, double nu, long batch, long k,
                                       const bnn_real *restrict z, const bnn_real *restrict y,
                                       const bnn_real *restrict s, long srow, long scol, double f,
                                       bnn_real *restrict dz, bnn_real *restrict ds,
                                       bnn_real *restrict ss)
{
	double loss = 0, c = family == BNN_GEN_SCALE_STUDENTT ? bnn_gen_studentt_const(nu) : 0;
	long i, j, extent = srow > 0 ? batch * srow : scol > 0 ? k * scol : 1;

	if (ds)
		for (j = 0; j < extent; j++)
			ds[j] = 0;
	if (ss)
		for (j = 0; j < extent; j++)
			ss[j] = 0;
	for (i = 0; i < batch; i++)
		for (j = 0; j < k; j++) {
			long at = i * srow + j * scol;
			double gz, gs;
			loss += bnn_gen_scale_term(family, nu, c, (double)y[i * k + j],
			                           (double)z[i * k + j], f * (double)s[at], &gz,
			                           &gs);
			gs *= f;
			if (dz)
				dz[i * k + j] = (bnn_real)(gz / (double)batch);
			if (ds)
				ds[at] += (bnn_real)(gs / (double)batch);
			if (ss)
				ss[at] += (bnn_real)(gs * gs / (double)batch);
		}
	return loss;
}

/* A learned s = log(scale) per output (parameter vector s): gaussian's σ,
 * laplace's b (bnn_gen_scale_lik). */
static inline double bnn_gen_scale_learned(int family, long batch, long k,
                                           const bnn_real *restrict z, const bnn_real *restrict y,
                                           const bnn_real *restrict s, bnn_real *restrict dz,
                                           bnn_real *restrict ds, bnn_real *restrict ss)
{
	return bnn_gen_scale_lik(family, 0, batch, k, z, y, s, 0, 1, 1, dz, ds, ss);
}

/* gaussian with a learned s = log σ per output (bnn_gen_scale_learned). */
static inline double bnn_gen_gaussian_learned(long batch, long k, const bnn_real *restrict z,
                                              const bnn_real *restrict y,
                                              const bnn_real *restrict s, bnn_real *restrict dz,
                                              bnn_real *restrict ds, bnn_real *restrict ss)
{
	return bnn_gen_scale_learned(BNN_GEN_SCALE_GAUSSIAN, batch, k, z, y, s, dz, ds, ss);
}

/* laplace with a learned s = log b per output (bnn_gen_scale_learned). */
static inline double bnn_gen_laplace_learned(long batch, long k, const bnn_real *restrict z,
                                             const bnn_real *restrict y, const bnn_real *restrict s,
                                             bnn_real *restrict dz, bnn_real *restrict ds,
                                             bnn_real *restrict ss)
{
	return bnn_gen_scale_learned(BNN_GEN_SCALE_LAPLACE, batch, k, z, y, s, dz, ds, ss);
}

/* laplace with a fixed scale b per model, location μ = z:
 * ℓ = Σ_k log(2b) + |y − μ|/b;  dμ = sign(μ − y)/(b·B), 0 where y = μ (the
 * subgradient).  Σ|y − μ| in double, in example order. */
static inline double bnn_gen_laplace_fixed(long batch, long k, const bnn_real *restrict z,
                                           const bnn_real *restrict y, double b,
                                           bnn_real *restrict dz)
{
	double abs_sum = 0, g = 1 / (b * (double)batch);
	long e, n = batch * k;

	for (e = 0; e < n; e++) {
		double r = (double)y[e] - (double)z[e];
		abs_sum += fabs(r);
		if (dz)
			dz[e] = (bnn_real)((double)((r < 0) - (r > 0)) * g);
	}
	return (double)n * (BNN_GEN_LOG_2 + log(b)) + abs_sum / b;
}

/* poisson with log-rate z, counts y (non-negative integers, checked when
 * the data is loaded): ℓ = Σ_k e^z − y·z + log Γ(y + 1);
 * dz = (e^z − y)/B. */
static inline double bnn_gen_poisson(long batch, long k, const bnn_real *restrict z,
                                     const bnn_real *restrict y, bnn_real *restrict dz)
{
	double loss = 0;
	long e, n = batch * k;

	for (e = 0; e < n; e++) {
		double rate = exp((double)z[e]), ye = (double)y[e];
		loss += rate - ye * (double)z[e] + lgamma(ye + 1);
		if (dz)
			dz[e] = (bnn_real)((rate - ye) / (double)batch);
	}
	return loss;
}

#endif /* BNN_GEN_LIKELIHOOD_H */
