/*
 * predict.c: running a trained model over a data set.  bnn_model_outputs()
 * feeds examples through the generated pass in batches (gathering them by
 * index when asked, so training can validate on a random subset without
 * copying it), and bnn_predict() turns raw outputs into predictive
 * distributions: softmax probabilities (categorical), P(y = 1) per label
 * (bernoulli), or a regression model's predictive mean and variance
 * (gaussian and laplace: the mean, the likelihood's variance σ² or 2b² and
 * the variance of the mean over the samples, kept apart as the epistemic
 * part; poisson: the mean rate E[λ]
 * and E[λ] + Var[λ]; studentt and negbinomial likewise, one row of
 * predict_regs each; a scale given per example by a second node read from
 * the second half of each row of outputs) and its CDF at the targets
 * (calibration of central intervals),
 * at the posterior mean or averaged over Monte-Carlo samples of the
 * posterior (weights θ = μ + σ∘ε, dropout masks), with the NLL of the
 * predictive mixture by log-sum-exp, and for classifiers the mean over
 * the samples of each one's entropy (the aleatoric part of the predictive
 * entropy) and of its energy score (Liu et al. 2020), OOD scores.  A
 * categorical model calibrated by temperature scaling has its logits
 * divided by the state's temperature first (predict_temperature).  A
 * last-layer Laplace posterior predicts by the probit approximation
 * (laplace_last_layer.c: one pass, the logits scaled) unless its
 * predictive is mc.  bnn_predict_draws() says how many different
 * predictions that makes: 1 for the probit, mc 0 or 1, and a network
 * without randomness, whose entropy then has no split.
 *
 * Prediction runs in fixed batches of BNN_PREDICT_BATCH examples, split
 * across the OpenMP team (each thread with a workspace of its own,
 * allocated before the loop), and its randomness depends on (seed,
 * sample, batch) only: each batch adds to its own examples' sums, so the
 * result is the same bit for bit for every number of threads and for any
 * range of batches (bnn_predict_batches(), for sharding across
 * processes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn.h"
#include "base/beta_inc.h"
#include "base/floats.h"
#include "train_internal.h"

/* Checks that ds fits model m (and has targets when needed); what names
 * the data in the messages ("the validation data"). */
int train_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets, const char *what,
                    bnn_err *err)
{
	if (!m || !ds || !ds->x)
		return bnn_fail(err, BNN_EINVAL, "no %s given", !m ? "model" : "data");
	if (ds->features != m->inputs)
		return bnn_fail(
		        err, BNN_EMISMATCH,
		        "%s has %ld values per example but model '%s' takes %ld (input '%s')", what,
		        ds->features, m->name, m->inputs, m->input_name);
	if (need_targets && ds->targets == 0)
		return bnn_fail(err, BNN_EMISMATCH, "%s has no targets ('%s' of model '%s')", what,
		                m->target_name, m->name);
	if (need_targets && ds->targets != m->targets)
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s has %ld target values per example but model '%s' needs %ld",
		                what, ds->targets, m->name, m->targets);
	if (ds->n < 1)
		return bnn_fail(err, BNN_EINVAL, "%s set is empty", what);
	return BNN_OK;
}

int bnn_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets, bnn_err *err)
{
	return train_data_fits(m, ds, need_targets, "the data", err);
}

/* From how many batches bnn_model_outputs() and bnn_predict() run them in
 * parallel: a single batch threads its products (gemm.c); from two on,
 * whole batches per thread split the work with no synchronisation inside
 * a pass. */
#define PREDICT_PARALLEL_BATCHES 2

/* The calling thread's index in the team (0 outside a parallel region). */
static int predict_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

/* Per-thread buffers of a batch loop, allocated once before the loop: a
 * workspace, one batch's raw outputs (z) and, for gathered examples, its
 * inputs and targets. */
struct predict_team {
	int nt;          /* threads with buffers */
	float **ws, **z; /* nt each */
	float **xb, **yb;
	float **phi; /* the probit's features and scratch, or NULL */
};

static void predict_team_free(struct predict_team *team)
{
	int t;

	for (t = 0; t < team->nt; t++) {
		free(team->ws[t]);
		free(team->z[t]);
		free(team->xb[t]);
		free(team->yb[t]);
		if (team->phi)
			free(team->phi[t]);
	}
	free(team->phi);
	free(team->ws);
	free(team->z);
	free(team->xb);
	free(team->yb);
}

/* Buffers for bnn_threads() threads and batches of `batch`: z when
 * want_z, xb (and yb when want_y) when gather. */
static int predict_team_alloc(struct predict_team *team, const bnn_model *m, long batch, int want_z,
                              int gather, int want_y)
{
	int t, nt = bnn_threads();

	team->nt = 0;
	team->ws = calloc((size_t)nt, sizeof *team->ws);
	team->z = calloc((size_t)nt, sizeof *team->z);
	team->xb = calloc((size_t)nt, sizeof *team->xb);
	team->yb = calloc((size_t)nt, sizeof *team->yb);
	if (!team->ws || !team->z || !team->xb || !team->yb)
		return -1;
	team->nt = nt;
	for (t = 0; t < nt; t++) {
		team->ws[t] = bnn_floats_alloc((long)m->workspace_floats(batch) + 1);
		if (!team->ws[t])
			return -1;
		if (want_z && !(team->z[t] = bnn_floats_alloc(batch * m->outputs)))
			return -1;
		if (gather && !(team->xb[t] = bnn_floats_alloc(batch * m->inputs)))
			return -1;
		if (gather && want_y && !(team->yb[t] = bnn_floats_alloc(batch * m->targets)))
			return -1;
	}
	return 0;
}

/* The probit's per-thread features and scratch
 * (train_laplace_ll_scratch floats). */
static int predict_team_phi(struct predict_team *team, const bnn_model *m, long batch)
{
	int t;

	if (!(team->phi = calloc((size_t)team->nt, sizeof *team->phi)))
		return -1;
	for (t = 0; t < team->nt; t++)
		if (!(team->phi[t] = bnn_floats_alloc(train_laplace_ll_scratch(m, batch))))
			return -1;
	return 0;
}

/* bnn_model_outputs() for the parameters w (and running statistics stats)
 * over the examples r of ds: batches in parallel, each pass's NLL kept
 * per batch and added in batch order, as a serial loop would. */
static int model_outputs(const bnn_model *m, const float *w, float *stats, const bnn_dataset *ds,
                         const bnn_example_range *r, float *out, double *nll, bnn_err *err)
{
	const long *idx = r->idx, n = r->n;
	long batch = r->batch, nb, j;
	struct predict_team team = { 0, NULL, NULL, NULL, NULL, NULL };
	double *bsum = NULL, sum = 0;
	long i;
	int rc = bnn_data_fits(m, ds, nll != NULL, err);

	if (rc)
		return rc;
	if (batch < 1)
		return bnn_fail(err, BNN_EINVAL, "the batch size must be at least 1");
	if (n < 1 || (!idx && n > ds->n))
		return bnn_fail(err, BNN_EINVAL, "%ld examples asked of a data set of %ld", n,
		                ds->n);
	for (i = 0; idx && i < n; i++)
		if (idx[i] < 0 || idx[i] >= ds->n)
			return bnn_fail(err, BNN_EINVAL,
			                "index %ld (entry %ld) is outside the data set "
			                "of %ld examples",
			                idx[i], i, ds->n);
	if (batch > n)
		batch = n;
	nb = (n + batch - 1) / batch;
	bsum = malloc((size_t)nb * sizeof *bsum);
	if (!bsum || predict_team_alloc(&team, m, batch, 0, idx != NULL, nll != NULL)) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for a batch of %ld", batch);
		goto done;
	}
#pragma omp parallel for schedule(static) if (nb >= PREDICT_PARALLEL_BATCHES)
	for (j = 0; j < nb; j++) {
		int t = predict_thread();
		long i0 = j * batch, b = n - i0 < batch ? n - i0 : batch, e;
		bnn_pass p;
		memset(&p, 0, sizeof p);
		if (idx) {
			float *xb = team.xb[t], *yb = team.yb[t];
			for (e = 0; e < b; e++) {
				memcpy(xb + e * m->inputs, ds->x + idx[i0 + e] * m->inputs,
				       (size_t)m->inputs * sizeof *xb);
				if (yb)
					memcpy(yb + e * m->targets,
					       ds->y + idx[i0 + e] * m->targets,
					       (size_t)m->targets * sizeof *yb);
			}
			p.x = xb;
			p.y = yb;
		} else {
			p.x = ds->x + i0 * m->inputs;
			p.y = nll ? ds->y + i0 * m->targets : NULL;
		}
		p.w = w;
		p.stats = stats; /* train = 0: batchnorm by the running statistics */
		p.batch = b;
		p.ws = team.ws[t];
		p.out = out ? out + i0 * m->outputs : NULL;
		bsum[j] = m->pass(&p);
	}
	for (j = 0; j < nb; j++)
		sum += bsum[j];
	if (nll)
		*nll = sum;
done:
	predict_team_free(&team);
	free(bsum);
	return rc;
}

int bnn_model_outputs(const bnn_state *st, const bnn_dataset *ds, const bnn_example_range *r,
                      float *out, double *nll, bnn_err *err)
{
	if (!st || !st->model)
		return bnn_fail(err, BNN_EINVAL, "no state given");
	if (!r)
		return bnn_fail(err, BNN_EINVAL, "bnn_model_outputs: no examples given");
	return model_outputs(st->model, st->params, st->stats, ds, r, out, nll, err);
}

/* log(e^a + e^b) without overflow (a = -inf: the first term). */
static double log_add(double a, double b)
{
	if (a == -INFINITY)
		return b;
	return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* ½·log(2π) (M_PI is not ISO C). */
#define PREDICT_HALF_LOG_2PI 0.91893853320467274178

/* What one sample of a regression model predicts for one output. */
struct predict_reg {
	double mean, var; /* the likelihood's mean and variance (aleatoric) */
	double ll;        /* log p(y | θ_s), with a target */
	double cdf;       /* P(Y ≤ y | θ_s), with a target */
	double cdf_below; /* P(Y < y | θ_s): cdf for continuous targets */
};

/* The Poisson CDF P(Y ≤ y) = Σ_{i ≤ y} e^(−λ)λ^i/i! for y ≥ 0, in log space
 * (a large λ would underflow e^(−λ)).  From the term at y the sum walks
 * away from the mode, where the terms only shrink: down to 0 when y < λ,
 * else up, for the tail P(Y > y) = 1 − F(y); it stops once a term is
 * below e^(−40) of the sum, so an example costs O(√λ) terms at most, not
 * O(y). */
static double predict_poisson_cdf(double y, double lambda)
{
	double term, lsum, i;

	if (y < 0)
		return 0;
	if (!(lambda > 0)) /* e^z underflowed: all the mass at 0 */
		return 1;
	if (!isfinite(lambda))
		return 0;
	y = floor(y);
	term = -lambda + y * log(lambda) - lgamma(y + 1);
	if (y < lambda) {
		for (lsum = term, i = y; i > 0 && term > lsum - 40; i--) {
			term += log(i / lambda); /* the term at i − 1 */
			lsum = log_add(lsum, term);
		}
		return fmin(exp(lsum), 1.0);
	}
	for (lsum = -INFINITY, i = y + 1; lsum == -INFINITY || term > lsum - 40; i++) {
		term += log(lambda / i); /* the term at i */
		lsum = log_add(lsum, term);
	}
	return fmax(1 - exp(lsum), 0.0);
}

/* Student-t's P(Y ≤ y) with location z, scale sc and ν degrees of
 * freedom: 1 − ½·I_{ν/(ν+t²)}(ν/2, ½) for t = (y − z)/sc ≥ 0. */
static double predict_studentt_cdf(double y, double z, double sc, double nu)
{
	double t = (y - z) / sc, tail = 0.5 * bnn_beta_inc(0.5 * nu, 0.5, nu / (nu + t * t));
	return t >= 0 ? 1 - tail : tail;
}

/* The negative binomial's P(Y ≤ y) = I_{ρ/(ρ+m)}(ρ, ⌊y⌋ + 1), y ≥ 0. */
static double predict_negbinomial_cdf(double y, double m, double rho)
{
	if (y < 0)
		return 0;
	return bnn_beta_inc(rho, floor(y) + 1, rho / (rho + m));
}

/* One regression likelihood's predictive for sample θ_s and one output:
 * from its raw output z (a mean, or a log-rate), its scale parameter
 * (predict_scale) and ν (studentt), its mean and variance, and with
 * has_y of target y its log-likelihood and CDF. */
typedef void predict_reg_fn(double z, double scale, double df, double y, int has_y,
                            struct predict_reg *t);

static void predict_gaussian(double z, double var, double df, double y, int has_y,
                             struct predict_reg *t)
{
	double d = y - z;
	(void)df;
	t->mean = z;
	t->var = var;
	if (has_y) {
		t->ll = -(PREDICT_HALF_LOG_2PI + 0.5 * log(var) + d * d / (2 * var));
		t->cdf = 0.5 * erfc(-d / sqrt(2 * var));
		t->cdf_below = t->cdf;
	}
}

static void predict_poisson(double z, double scale, double df, double y, int has_y,
                            struct predict_reg *t)
{
	(void)scale;
	(void)df;
	t->mean = t->var = exp(z);
	if (has_y) {
		t->ll = y * z - t->mean - lgamma(y + 1);
		t->cdf = predict_poisson_cdf(y, t->mean);
		t->cdf_below = predict_poisson_cdf(y - 1, t->mean);
	}
}

static void predict_laplace(double z, double b, double df, double y, int has_y,
                            struct predict_reg *t)
{
	double d = y - z;
	(void)df;
	t->mean = z;
	t->var = 2 * b * b;
	if (has_y) {
		t->ll = -log(2 * b) - fabs(d) / b;
		t->cdf = d < 0 ? 0.5 * exp(d / b) : 1 - 0.5 * exp(-d / b);
		t->cdf_below = t->cdf;
	}
}

/* The mean is the location z for ν > 1; for ν ≤ 1, where it does not
 * exist, z is still the point prediction (the median).  The variance is
 * s²ν/(ν − 2), infinite for ν ≤ 2. */
static void predict_studentt(double z, double sc, double nu, double y, int has_y,
                             struct predict_reg *t)
{
	double d = y - z;
	t->mean = z;
	t->var = nu > 2 ? sc * sc * nu / (nu - 2) : INFINITY;
	if (has_y) {
		t->ll = lgamma(0.5 * (nu + 1)) - lgamma(0.5 * nu) -
		        0.5 * log(nu * 3.14159265358979323846) - log(sc) -
		        0.5 * (nu + 1) * log1p(d * d / (sc * sc * nu));
		t->cdf = predict_studentt_cdf(y, z, sc, nu);
		t->cdf_below = t->cdf;
	}
}

/* Mean m = e^z, dispersion ρ: variance m + m²/ρ. */
static void predict_negbinomial(double z, double rho, double df, double y, int has_y,
                                struct predict_reg *t)
{
	double m = exp(z), l = z > log(rho) ? z + log1p(rho / m) : log(rho) + log1p(m / rho);
	(void)df;
	t->mean = m;
	t->var = m + m * m / rho;
	if (has_y) {
		t->ll = lgamma(y + rho) - lgamma(rho) - lgamma(y + 1) + rho * (log(rho) - l) +
		        y * (z - l);
		t->cdf = predict_negbinomial_cdf(y, m, rho);
		t->cdf_below = predict_negbinomial_cdf(y - 1, m, rho);
	}
}

/* The regression likelihoods: the predictive of one sample, and the power
 * of the scale it works with (gaussian's σ², the others' scale itself):
 * from a learned log-scale w, exp(power·w); from a fixed one σ^power;
 * from a node v, e^v (gaussian's node is already log σ²). */
static const struct {
	predict_reg_fn *predict;
	int power;
} predict_regs[BNN_LIKELIHOOD_COUNT] = {
	[BNN_LIKELIHOOD_GAUSSIAN] = { predict_gaussian, 2 },
	[BNN_LIKELIHOOD_POISSON] = { predict_poisson, 1 },
	[BNN_LIKELIHOOD_LAPLACE] = { predict_laplace, 1 },
	[BNN_LIKELIHOOD_STUDENTT] = { predict_studentt, 1 },
	[BNN_LIKELIHOOD_NEGBINOMIAL] = { predict_negbinomial, 1 },
};

/* The scale parameter of each output (predict_regs' power of it), fixed
 * or learned (as its log, in the parameters w); a scale given by a node
 * is read per example in predict_accumulate. */
static void predict_scale(const bnn_state *st, const float *w, double *scale)
{
	const bnn_model *m = st->model;
	int power = predict_regs[m->likelihood].power;
	long j, k = bnn_model_predictions(m);
	int i;

	for (j = 0; j < k; j++)
		scale[j] = power == 2 ? m->sigma * m->sigma : m->sigma;
	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].role == BNN_ROLE_LOG_SIGMA)
			for (j = 0; j < k && j < m->tensors[i].size; j++)
				scale[j] = exp(power * (double)w[m->tensors[i].offset + j]);
}

/* What Monte-Carlo prediction accumulates over its samples, for the n
 * examples of the range predicted (row i: the range's i-th example). */
struct predict_acc {
	long n, k;
	double *sum;             /* n × k: Σ_s p_s (classification) or Σ_s μ_s (regression) */
	double *sumsq;           /* regression: Σ_s μ_s² */
	double *sumvar;          /* regression: n × k, Σ_s of the likelihood's variance */
	double *lse;             /* n: log Σ_s p(y_i | θ_s), when targets are scored */
	double *scale;           /* gaussian, laplace: k, the current sample's scales */
	double *cdf, *cdf_below; /* regression, n × k or NULL: Σ_s P(Y ≤ y | θ_s),
	                            Σ_s P(Y < y | θ_s) */
	double *sument;          /* n: Σ_s H[p(y_i | θ_s)] (classification), or NULL */
	double *sumen;           /* n: Σ_s E(x_i; θ_s), the energy score, or NULL */
};

/* The entropy −Σ_j p_j log p_j and the energy −log Σ_j exp(z_j) (Liu et
 * al. 2020, eq. 5, T = 1) of one softmax row of logits z, k of them,
 * whose largest is zmax and Σ_j exp(z_j − zmax) = norm: log p_j is
 * z_j − zmax − log norm, exact where p_j underflows to 0. */
static void predict_softmax_scores(const float *z, long k, double zmax, double norm, double *h,
                                   double *energy)
{
	double lnorm = log(norm), e = 0;
	long j;

	for (j = 0; j < k; j++) {
		double lp = (double)z[j] - zmax - lnorm;
		e -= exp(lp) * lp;
	}
	*h = e;
	*energy = -(zmax + lnorm);
}

/* The binary entropy of P(y = 1) = σ(z), p·softplus(−z) + (1 − p)·softplus(z)
 * (−log σ(z) = softplus(−z)), and the energy of the label as a two-logit
 * softmax (0, z), −log(1 + e^z) = −softplus(z) (summed over the labels: the
 * joint energy of Wang et al. 2021 for multi-label classifiers). */
static void predict_bernoulli_scores(double z, double *h, double *energy)
{
	double p = 1.0 / (1.0 + exp(-z));
	double sp_neg = log1p(exp(-fabs(z))) + fmax(-z, 0); /* softplus(−z) */
	double sp_pos = log1p(exp(-fabs(z))) + fmax(z, 0);  /* softplus(z) */

	*h = p * sp_neg + (1 - p) * sp_pos;
	*energy = -sp_pos;
}

/* Adds one sample's raw outputs z of rows [i0, i0 + b) to the sums; y (the
 * targets of those rows) may be NULL.  Each row's sums are its own: the
 * batches of a sample can be added in any order, by any thread. */
static void predict_accumulate(const bnn_model *m, struct predict_acc *acc, const float *zb,
                               const float *yb, long i0, long b, int first)
{
	long r, j, k = acc->k;

	for (r = 0; r < b; r++) {
		long i = i0 + r;
		const float *z = zb + r * m->outputs; /* a second node: z + k */
		double *sum = acc->sum + i * k, ll = 0, h = 0, en = 0;
		if (bnn_likelihood_targets(m) == BNN_TARGETS_CLASS) {
			double zmax = z[0], norm = 0;
			for (j = 1; j < k; j++)
				zmax = z[j] > zmax ? z[j] : zmax;
			for (j = 0; j < k; j++)
				norm += exp((double)z[j] - zmax);
			for (j = 0; j < k; j++)
				sum[j] += exp((double)z[j] - zmax) / norm;
			if (yb)
				ll = (double)z[(long)yb[r]] - zmax - log(norm);
			if (acc->sument || acc->sumen)
				predict_softmax_scores(z, k, zmax, norm, &h, &en);
		} else if (bnn_likelihood_targets(m) == BNN_TARGETS_BINARY) {
			for (j = 0; j < k; j++) {
				double zj = z[j], hj, ej;
				sum[j] += 1.0 / (1.0 + exp(-zj));
				if (acc->sument || acc->sumen) {
					predict_bernoulli_scores(zj, &hj, &ej);
					h += hj;
					en += ej;
				}
				/* log σ(z) = −softplus(−z), log(1 − σ(z)) = −softplus(z) */
				if (yb)
					ll -= yb[r * k + j] > 0.5f
					              ? log1p(exp(-fabs(zj))) + fmax(-zj, 0)
					              : log1p(exp(-fabs(zj))) + fmax(zj, 0);
			}
		} else {
			for (j = 0; j < k; j++) {
				struct predict_reg t = { 0, 0, 0, 0, 0 };
				double scale = m->sigma_learned == BNN_SCALE_NODE
				                       ? exp((double)z[k + j])
				                       : acc->scale[j];
				predict_regs[m->likelihood].predict(
				        z[j], scale, m->df, yb ? yb[r * k + j] : 0, yb != NULL, &t);
				sum[j] += t.mean;
				acc->sumsq[i * k + j] += t.mean * t.mean;
				acc->sumvar[i * k + j] += t.var;
				if (yb)
					ll += t.ll;
				if (yb && acc->cdf) {
					acc->cdf[i * k + j] += t.cdf;
					acc->cdf_below[i * k + j] += t.cdf_below;
				}
			}
		}
		if (yb)
			acc->lse[i] = first ? ll : log_add(acc->lse[i], ll);
		if (acc->sument) /* in sample order: the same bits for any threads */
			acc->sument[i] += h;
		if (acc->sumen)
			acc->sumen[i] += en;
	}
}

static void predict_acc_free(struct predict_acc *acc)
{
	free(acc->sum);
	free(acc->sumsq);
	free(acc->sumvar);
	free(acc->lse);
	free(acc->scale);
	free(acc->cdf);
	free(acc->cdf_below);
	free(acc->sument);
	free(acc->sumen);
}

/* Fails unless every σ of st is finite (a sample of an infinite σ gives no
 * prediction); the message names the first bad parameter and its tensor. */
static int predict_check_sigma(const bnn_state *st, bnn_err *err)
{
	const bnn_model *m = st->model;
	long j;
	int i;

	for (j = 0; j < m->nparams; j++)
		if (!isfinite(st->sigma[j]))
			break;
	if (j == m->nparams)
		return BNN_OK;
	for (i = 0; i < m->ntensors - 1 && j >= m->tensors[i].offset + m->tensors[i].size; i++)
		;
	return bnn_fail(err, BNN_EINVAL,
	                "parameter %ld of model '%s' (tensor '%s', entry %ld) has posterior "
	                "standard deviation %g, so its samples give no prediction: badam with "
	                "delta = 0 leaves sigma infinite where a weight never had a gradient; "
	                "retrain with delta > 0, or predict at the mean with --mc 0",
	                j, m->name, m->ntensors > 0 ? m->tensors[i].name : "?",
	                m->ntensors > 0 ? j - m->tensors[i].offset : j, (double)st->sigma[j]);
}

/* Temperature scaling (Guo et al. 2017, section 4.2): a categorical
 * model's logits divided by st->temperature before the softmax, so the
 * probabilities, the NLL, the entropies and the energy score are all the
 * calibrated model's (bnn_fit_temperature fits it; docs/calibration.md). */
static void predict_temperature(const bnn_state *st, float *z, long count)
{
	long i;

	if (!(st->temperature > 0) || st->temperature == 1 ||
	    bnn_likelihood_targets(st->model) != BNN_TARGETS_CLASS)
		return;
	for (i = 0; i < count; i++)
		z[i] = (float)((double)z[i] / st->temperature);
}

/* Whether st's last-layer Laplace posterior predicts by the probit
 * approximation at mc: one deterministic pass, its logits scaled
 * (docs/laplace.md, "The predictive"); mc = 0 is the trained network. */
static int predict_probit(const bnn_state *st, long mc)
{
	return mc > 0 && train_posthoc_last_layer(st->posthoc) &&
	       st->posthoc->predictive == BNN_LAPLACE_PROBIT;
}

long bnn_predict_draws(const bnn_state *st, long mc)
{
	if (mc <= 1 || predict_probit(st, mc) || !bnn_state_is_stochastic(st))
		return 1;
	return mc;
}

uint64_t bnn_predict_seed(uint64_t seed, long sample, long batch)
{
	/* sample s's key, then substream 0 (its weights) or j + 1 (batch j) */
	return bnn_rng_derive(bnn_rng_derive(seed, (uint64_t)sample), (uint64_t)(batch + 1));
}

int bnn_predict_batches(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed, long j0,
                        long j1, const bnn_prediction *out, bnn_err *err)
{
	float *probs = out ? out->probs : NULL, *var = out ? out->var : NULL;
	float *aleatoric = out ? out->aleatoric : NULL, *epistemic = out ? out->epistemic : NULL;
	double *nll = out ? out->nll : NULL, *nll_each = out ? out->nll_each : NULL;
	double *xent = out ? out->expected_entropy : NULL, *energy = out ? out->energy : NULL;
	float *logits = out ? out->logits : NULL;
	int scored = nll || nll_each;
	const bnn_model *m = st && st->model ? st->model : NULL;
	long k = m ? bnn_model_predictions(m) : 0, kz = m ? m->outputs : 0, i, s,
	     samples = mc > 0 ? mc : 1, nb, first, n;
	int regression = m && bnn_likelihood_regression(m);
	double *cdf = out && regression ? out->cdf : NULL;
	double *cdf_below = out && regression ? out->cdf_below : NULL;
	struct predict_acc acc;
	struct predict_team team = { 0, NULL, NULL, NULL, NULL, NULL };
	float *theta = NULL, *phi = NULL;
	int rc = bnn_data_fits(m, ds, scored, err), probit, llmc;

	if (rc)
		return rc;
	if (!probs)
		return bnn_fail(err, BNN_EINVAL, "no array given for the predictions");
	if (mc < 0)
		return bnn_fail(err, BNN_EINVAL,
		                "the number of Monte-Carlo samples must be 0 or more");
	if (regression && (xent || energy))
		return bnn_fail(err, BNN_EINVAL,
		                "model '%s' is a regression model (%s): the expected entropy "
		                "and the energy score are defined for classifiers only",
		                m->name, bnn_likelihood_name(m->likelihood));
	if ((cdf || cdf_below) && !scored)
		return bnn_fail(err, BNN_EINVAL,
		                "the predictive CDF at the targets needs the targets: ask for "
		                "nll or nll_each too");
	nb = (ds->n + BNN_PREDICT_BATCH - 1) / BNN_PREDICT_BATCH;
	if (j0 < 0 || j1 < j0 || j1 > nb)
		return bnn_fail(err, BNN_EINVAL,
		                "batches [%ld, %ld) asked of a data set of %ld batches of %d", j0,
		                j1, nb, BNN_PREDICT_BATCH);
	if (j1 == j0) { /* no batch (a shard with nothing to do): nothing written */
		if (nll)
			*nll = 0;
		return BNN_OK;
	}
	if (mc > 0 && st->sigma && (rc = predict_check_sigma(st, err)))
		return rc;
	probit = predict_probit(st, mc);
	if (probit) /* one deterministic pass, its logits scaled */
		samples = 1;
	/* mc samples of the last layer only: the first sample's pass keeps the
	 * features, the others multiply them by their last layer */
	llmc = mc > 0 && train_posthoc_last_layer(st->posthoc) && !probit;
	first = j0 * BNN_PREDICT_BATCH;
	n = (j1 * BNN_PREDICT_BATCH < ds->n ? j1 * BNN_PREDICT_BATCH : ds->n) - first;
	memset(&acc, 0, sizeof acc);
	acc.n = n;
	acc.k = k;
	acc.sum = calloc((size_t)(n * k), sizeof *acc.sum);
	acc.sumsq = regression ? calloc((size_t)(n * k), sizeof *acc.sumsq) : NULL;
	acc.sumvar = regression ? calloc((size_t)(n * k), sizeof *acc.sumvar) : NULL;
	if (cdf || cdf_below) {
		acc.cdf = calloc((size_t)(n * k), sizeof *acc.cdf);
		acc.cdf_below = calloc((size_t)(n * k), sizeof *acc.cdf_below);
	}
	acc.lse = scored ? malloc((size_t)n * sizeof *acc.lse) : NULL;
	acc.scale = malloc((size_t)k * sizeof *acc.scale);
	acc.sument = xent ? calloc((size_t)n, sizeof *acc.sument) : NULL;
	acc.sumen = energy ? calloc((size_t)n, sizeof *acc.sumen) : NULL;
	if (mc > 0 && st->sigma && !probit)
		theta = bnn_floats_alloc(m->nparams);
	if (llmc)
		phi = bnn_floats_alloc(n * m->features);
	if (!acc.sum || (regression && (!acc.sumsq || !acc.sumvar)) || (scored && !acc.lse) ||
	    ((cdf || cdf_below) && (!acc.cdf || !acc.cdf_below)) || !acc.scale ||
	    (mc > 0 && st->sigma && !probit && !theta) || (llmc && !phi) || (xent && !acc.sument) ||
	    (energy && !acc.sumen) ||
	    predict_team_alloc(&team, m, n < BNN_PREDICT_BATCH ? n : BNN_PREDICT_BATCH, 1, 0, 0) ||
	    (probit && predict_team_phi(&team, m, n < BNN_PREDICT_BATCH ? n : BNN_PREDICT_BATCH))) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory predicting %ld examples", n);
		goto done;
	}
	for (s = 0; s < samples; s++) {
		const float *w = st->params;
		long j;
		if (theta) { /* θ_s = μ + σ∘ε for the whole data set, from (seed, s) */
			bnn_rng wr;
			bnn_rng_seed(&wr, bnn_rng_derive(bnn_rng_derive(seed, (uint64_t)s), 0));
			bnn_posterior_sample(m->nparams, st->params, st->sigma, NULL, theta, &wr);
			train_posthoc_sample(st, theta, &wr); /* SWAG's low-rank part */
			w = theta;
		}
		if (regression)
			predict_scale(st, w, acc.scale);
			/* each batch's pass noise from (seed, s, j), its rows' sums its
		 * own: nothing depends on which thread runs it */
#pragma omp parallel for schedule(static) if (j1 - j0 >= PREDICT_PARALLEL_BATCHES)
		for (j = j0; j < j1; j++) {
			int t = predict_thread();
			long i0 = j * BNN_PREDICT_BATCH - first;
			long b = n - i0 < BNN_PREDICT_BATCH ? n - i0 : BNN_PREDICT_BATCH;
			const float *yb = scored ? ds->y + (first + i0) * m->targets : NULL;
			bnn_rng rng;
			bnn_pass p;
			long c;

			memset(&p, 0, sizeof p);
			p.x = ds->x + (first + i0) * m->inputs;
			p.w = w;
			p.stats = st->stats; /* train = 0: batchnorm by the running statistics */
			if (mc > 0) {
				bnn_rng_seed(&rng, bnn_predict_seed(seed, s, j));
				p.rng = &rng;
			}
			p.batch = b;
			p.ws = team.ws[t];
			p.out = team.z[t];
			p.features = probit ? team.phi[t] : llmc ? phi + i0 * m->features : NULL;
			if (llmc && s > 0)
				train_laplace_ll_logits(st, w, phi + i0 * m->features, b,
				                        team.z[t]);
			else
				m->pass(&p);
			if (probit && st->posthoc->kind == BNN_POSTHOC_LAPLACE_KRON)
				train_laplace_kron_probit(st, team.phi[t], team.z[t], b);
			else if (probit)
				train_laplace_ll_probit(st, team.phi[t], team.z[t], b);
			for (c = 0; logits && c < (probit ? mc : 1);
			     c++) /* probit: every sample's */
				memcpy(logits + ((s + c) * n + i0) * kz, team.z[t],
				       (size_t)(b * kz) * sizeof *logits);
			predict_temperature(st, team.z[t], b * kz);
			predict_accumulate(m, &acc, team.z[t], yb, i0, b, s == 0);
		}
	}
	for (i = 0; i < n * k; i++) {
		double mean = acc.sum[i] / (double)samples;
		/* the variance of the samples' means (epistemic), by itself: finite
		 * even where the likelihood's variance is infinite (studentt, ν ≤ 2),
		 * where var − aleatoric would be ∞ − ∞; exactly 0 for one sample */
		double spread =
		        regression ? fmax(acc.sumsq[i] / (double)samples - mean * mean, 0.0) : 0;
		probs[i] = (float)mean;
		if (regression && var) /* the mixture's variance: mean variance (aleatoric) +
		                          variance of the means (epistemic) */
			var[i] = (float)(acc.sumvar[i] / (double)samples + spread);
		if (regression && aleatoric)
			aleatoric[i] = (float)(acc.sumvar[i] / (double)samples);
		if (regression && epistemic)
			epistemic[i] = (float)spread;
		if (cdf) /* the mixture's CDF: the mean of the samples' */
			cdf[i] = acc.cdf[i] / (double)samples;
		if (cdf_below)
			cdf_below[i] = acc.cdf_below[i] / (double)samples;
	}
	for (i = 0; i < n; i++) {
		if (xent)
			xent[i] = acc.sument[i] / (double)samples;
		if (energy)
			energy[i] = acc.sumen[i] / (double)samples;
	}
	if (scored) {
		double total = 0;
		for (i = 0; i < n; i++) {
			double e = -(acc.lse[i] - log((double)samples));
			if (nll_each)
				nll_each[i] = e;
			total += e; /* in example order: a sharded sum of nll_each matches */
		}
		if (nll)
			*nll = total;
	}
done:
	predict_acc_free(&acc);
	predict_team_free(&team);
	free(theta);
	free(phi);
	return rc;
}

int bnn_predict(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed,
                const bnn_prediction *out, bnn_err *err)
{
	long nb = ds && ds->n > 0 ? (ds->n + BNN_PREDICT_BATCH - 1) / BNN_PREDICT_BATCH : 1;

	return bnn_predict_batches(st, ds, mc, seed, 0, nb, out, err);
}
