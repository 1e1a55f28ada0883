/*
 * merge.c: one network from K trained networks of the same model
 * (bnn_merge; the driver's `merge` command, docs/merge.md).
 *
 * Hessian weighting averages the posterior means with the curvature each
 * run learned, parameter by parameter:
 *     m = (Σ_k H_k ∘ m_k) / (Σ_k H_k),   precision of the result Σ_k H_k,
 * the mean and precision of the product of the K Gaussian posteriors.  It
 * is the merging rule of Daheim et al. (2024) that the IVON paper uses in
 * §4.3.2 (θ_merged = θ_0 + Σ_t (h_0 + h_t)/(h_0 + Σ_t' h_t') (θ_t − θ_0),
 * with IVON's h as the Hessian, Table 5), without a pretrained θ_0 (h_0 =
 * 0): then it is exactly the formula above.
 *
 * H_k is the posterior precision of run k, 1/σ_k², which is what each
 * optimizer's curvature gives: IVON's σ² = 1/(λ(h + δ)) (Alg. 1 line 8),
 * so H = λ(h + δ); VOGN's σ² = 1/(N(s + δ̃)) (Alg. 1 line 9), so H = N(s + δ̃);
 * BADAM's and BBB's σ likewise.  Reading σ rather than h and δ takes the
 * δ each tensor had (its layer's prior, IVON's δ/λ scaling) from the run
 * itself, with no second copy of the trainer's rules; for runs with the
 * same λ (the same data, ess) the weights are exactly (h + δ)'s.  A run
 * without σ (sgd, adam, adamw) learned no curvature: Hessian weighting
 * refuses it, uniform weighting (m = mean of the m_k) takes it.
 *
 * Per parameter: where every σ_k is finite and > 0, the formula above;
 * where some σ_k = 0 (a parameter without a posterior: layers that are not
 * meanfield), the uniform mean of those runs' values, σ = 0; where every
 * precision is 0 (BADAM's σ = +inf for a weight no gradient reached), the
 * uniform mean, σ = +inf.  The result has σ = (Σ_k H_k)^(−1/2) when every
 * run has a σ, whichever the weights; running statistics of batchnorm
 * layers are averaged uniformly; the standardisation is the runs' (which
 * must agree); there is no optimizer state (a merged network is not
 * resumed; train --init starts from it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "base/floats.h"

/* The merged mean and σ of parameter j of the k runs; all_sigma: every
 * run has a σ (else uniform weights, and no σ). */
static void merge_one(const bnn_state *in, int k, long j, int hessian, int all_sigma, float *mean,
                      float *sigma)
{
	double sum = 0, wsum = 0, prec = 0;
	int i, zeros = 0;

	for (i = 0; all_sigma && i < k; i++) {
		if (in[i].sigma[j] == 0)
			zeros++;
		else
			prec += 1.0 / ((double)in[i].sigma[j] * in[i].sigma[j]); /* 0 for +inf */
	}
	for (i = 0; i < k; i++) {
		double w = 1;
		if (zeros > 0) /* infinite precision: only those runs count */
			w = in[i].sigma[j] == 0;
		else if (all_sigma && hessian && prec > 0)
			w = 1.0 / ((double)in[i].sigma[j] * in[i].sigma[j]); /* H_k */
		sum += w * in[i].params[j];
		wsum += w;
	}
	*mean = (float)(sum / wsum);
	if (all_sigma) /* the precision Σ_k H_k */
		*sigma = zeros > 0 ? 0.0f : prec > 0 ? (float)(1.0 / sqrt(prec)) : INFINITY;
}

/* The running statistics, averaged uniformly. */
static void merge_stats(const bnn_state *in, int k, float *stats)
{
	long j;
	int i;

	for (j = 0; j < in[0].model->nstats; j++) {
		double s = 0;
		for (i = 0; i < k; i++)
			s += in[i].stats[j];
		stats[j] = (float)(s / k);
	}
}

/* The checks of bnn_merge, naming the run at fault. */
static int merge_check(const bnn_state *in, int k, const char *const *names, int hessian,
                       bnn_err *err)
{
	char what[32];
	int i, rc;

	if (k < 2)
		return bnn_fail(err, BNN_EINVAL, "merging needs 2 networks or more, not %d", k);
	if ((rc = bnn_mixture_check(in, k, names, err)))
		return rc;
	for (i = 0; hessian && i < k; i++) {
		snprintf(what, sizeof what, "network %d", i + 1);
		if (!in[i].sigma)
			return bnn_fail(
			        err, BNN_EINVAL,
			        "%s: optimizer %s learns no curvature (the checkpoint has no posterior sigma), so "
			        "it cannot be weighted by its Hessian: merge with uniform "
			        "weights, or train with ivon, vogn, badam or bbb",
			        names ? names[i] : what, bnn_optimizer_name(in[i].optimizer));
	}
	return BNN_OK;
}

int bnn_merge(const bnn_state *in, int k, const char *const *names, int weights, bnn_state *out,
              bnn_err *err)
{
	const bnn_model *m;
	bnn_state s;
	int i, rc, hessian = weights == BNN_MERGE_HESSIAN, all_sigma = 1;
	long j;

	if (!in || !out)
		return bnn_fail(err, BNN_EINVAL, "bnn_merge: no %s given",
		                !in ? "networks" : "state");
	if (weights != BNN_MERGE_HESSIAN && weights != BNN_MERGE_UNIFORM)
		return bnn_fail(err, BNN_EINVAL, "bnn_merge: unknown weighting %d", weights);
	if ((rc = merge_check(in, k, names, hessian, err)))
		return rc;
	m = in[0].model;
	for (i = 0; i < k; i++)
		all_sigma &= in[i].sigma != NULL;
	memset(&s, 0, sizeof s);
	s.model = m;
	s.optimizer = in[0].optimizer;
	for (i = 1; i < k; i++)
		if (in[i].optimizer != s.optimizer)
			s.optimizer = -1; /* "none": runs of several optimizers */
	s.params = bnn_floats_alloc(m->nparams);
	s.sigma = all_sigma ? bnn_floats_alloc(m->nparams) : NULL;
	s.stats = m->nstats > 0 ? malloc((size_t)m->nstats * sizeof *s.stats) : NULL;
	if (!s.params || (all_sigma && !s.sigma) || (m->nstats > 0 && !s.stats) ||
	    bnn_standardizer_copy(&in[0].standardize, &s.standardize, err)) {
		bnn_state_free(&s);
		return bnn_fail(err, BNN_ENOMEM, "out of memory merging %ld parameters",
		                m->nparams);
	}
	for (j = 0; j < m->nparams; j++)
		merge_one(in, k, j, hessian, all_sigma, &s.params[j],
		          s.sigma ? &s.sigma[j] : &(float){ 0 });
	if (s.stats)
		merge_stats(in, k, s.stats);
	*out = s;
	return BNN_OK;
}
