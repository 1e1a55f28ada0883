/*
 * predict.c: running a trained model over a data set.  bnn_model_outputs()
 * feeds examples through the generated pass in batches (gathering them by
 * index when asked, so training can validate on a random subset without
 * copying it), and bnn_predict() turns raw outputs into predictive
 * distributions: softmax probabilities (categorical), P(y = 1) per label
 * (bernoulli), or a Gaussian mean and variance (σ² fixed or learned),
 * at the posterior mean or averaged over Monte-Carlo samples of the
 * posterior (weights θ = μ + σ∘ε, dropout masks), with the NLL of the
 * predictive mixture by log-sum-exp.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "base/floats.h"

/* Checks that ds fits model m (and has targets when needed). */
int bnn_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets, bnn_err *err)
{
	if (!m || !ds || !ds->x)
		return bnn_fail(err, BNN_EINVAL, "no %s given", !m ? "model" : "data");
	if (ds->features != m->inputs)
		return bnn_fail(
		        err, BNN_EMISMATCH,
		        "the data has %ld values per example but model '%s' takes %ld (input '%s')",
		        ds->features, m->name, m->inputs, m->input_name);
	if (need_targets && ds->targets == 0)
		return bnn_fail(err, BNN_EMISMATCH, "the data has no targets ('%s' of model '%s')",
		                m->target_name, m->name);
	if (need_targets && ds->targets != m->targets)
		return bnn_fail(
		        err, BNN_EMISMATCH,
		        "the data has %ld target values per example but model '%s' needs %ld",
		        ds->targets, m->name, m->targets);
	if (ds->n < 1)
		return bnn_fail(err, BNN_EINVAL, "the data set is empty");
	return BNN_OK;
}

/* The network that model_outputs() runs: a model at parameters w. */
struct predict_net {
	const bnn_model *m; /* the model */
	const float *w;     /* its parameters (the mean, or a posterior sample) */
	float *stats;       /* running statistics, NULL without batchnorm layers */
	bnn_rng *rng;       /* the pass's own noise (dropout masks), or NULL */
};

/* bnn_model_outputs() for the network net over the examples r of ds: the
 * one loop that runs a model over a data set, for validation and for every
 * prediction. */
static int model_outputs(const struct predict_net *net, const bnn_dataset *ds,
                         const bnn_example_range *r, float *out, double *nll, bnn_err *err)
{
	const bnn_model *m = net->m;
	const long *idx = r->idx, n = r->n;
	long batch = r->batch;
	float *ws = NULL, *xb = NULL, *yb = NULL;
	double sum = 0;
	long i, j;
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
	ws = bnn_floats_alloc((long)m->workspace_floats(batch) + 1);
	xb = idx ? bnn_floats_alloc(batch * m->inputs) : NULL;
	yb = idx && nll ? malloc((size_t)(batch * m->targets) * sizeof *yb) : NULL;
	if (!ws || (idx && !xb) || (idx && nll && !yb)) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for a batch of %ld", batch);
		goto done;
	}
	for (i = 0; i < n; i += batch) {
		long b = n - i < batch ? n - i : batch;
		bnn_pass p;
		memset(&p, 0, sizeof p);
		if (idx) {
			for (j = 0; j < b; j++) {
				memcpy(xb + j * m->inputs, ds->x + idx[i + j] * m->inputs,
				       (size_t)m->inputs * sizeof *xb);
				if (yb)
					memcpy(yb + j * m->targets, ds->y + idx[i + j] * m->targets,
					       (size_t)m->targets * sizeof *yb);
			}
			p.x = xb;
			p.y = yb;
		} else {
			p.x = ds->x + i * m->inputs;
			p.y = nll ? ds->y + i * m->targets : NULL;
		}
		p.w = net->w;
		p.stats = net->stats; /* train = 0: batchnorm by the running statistics */
		p.rng = net->rng;
		p.batch = b;
		p.ws = ws;
		p.out = out ? out + i * m->outputs : NULL;
		sum += m->pass(&p);
	}
	if (nll)
		*nll = sum;
done:
	free(ws);
	free(xb);
	free(yb);
	return rc;
}

int bnn_model_outputs(const bnn_state *st, const bnn_dataset *ds, const bnn_example_range *r,
                      float *out, double *nll, bnn_err *err)
{
	if (!st || !st->model)
		return bnn_fail(err, BNN_EINVAL, "no state given");
	if (!r)
		return bnn_fail(err, BNN_EINVAL, "bnn_model_outputs: no examples given");
	return model_outputs(&(struct predict_net){ st->model, st->params, st->stats, NULL }, ds, r,
	                     out, nll, err);
}

/* ½·log(2π) (M_PI is not ISO C). */
#define PREDICT_HALF_LOG_2PI 0.91893853320467274178

/* σ² of each output of a Gaussian model. */
static void predict_variance(const bnn_state *st, const float *w, double *var)
{
	const bnn_model *m = st->model;
	long j;
	int i;

	for (j = 0; j < m->outputs; j++)
		var[j] = m->sigma * m->sigma;
	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].role == BNN_ROLE_LOG_SIGMA)
			for (j = 0; j < m->outputs && j < m->tensors[i].size; j++)
				var[j] = exp(2.0 * (double)w[m->tensors[i].offset + j]);
}

/* log(e^a + e^b) without overflow (a = -inf: the first term). */
static double log_add(double a, double b)
{
	if (a == -INFINITY)
		return b;
	return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* What Monte-Carlo prediction accumulates over its samples. */
struct predict_acc {
	long n, k;
	double *sum;    /* n × k: Σ_s p_s (classification) or Σ_s μ_s (gaussian) */
	double *sumsq;  /* gaussian: Σ_s μ_s² */
	double *sumvar; /* gaussian: Σ_s σ²_s per output (k) */
	double *lse;    /* n: log Σ_s p(y_i | θ_s), when targets are scored */
	double *var;    /* gaussian: σ² per output of the current sample */
	float *z;       /* n × k raw outputs of one sample */
};

/* Adds one sample's raw outputs (acc->z) to the sums; y may be NULL. */
static void predict_accumulate(const bnn_model *m, struct predict_acc *acc, const float *y,
                               int first)
{
	long i, j, k = acc->k;

	for (i = 0; i < acc->n; i++) {
		const float *z = acc->z + i * k;
		double *sum = acc->sum + i * k, ll = 0;
		if (m->likelihood == BNN_LIKELIHOOD_CATEGORICAL) {
			double zmax = z[0], norm = 0;
			for (j = 1; j < k; j++)
				zmax = z[j] > zmax ? z[j] : zmax;
			for (j = 0; j < k; j++)
				norm += exp((double)z[j] - zmax);
			for (j = 0; j < k; j++)
				sum[j] += exp((double)z[j] - zmax) / norm;
			if (y)
				ll = (double)z[(long)y[i]] - zmax - log(norm);
		} else if (m->likelihood == BNN_LIKELIHOOD_BERNOULLI) {
			for (j = 0; j < k; j++) {
				double zj = z[j];
				sum[j] += 1.0 / (1.0 + exp(-zj));
				/* log σ(z) = −softplus(−z), log(1 − σ(z)) = −softplus(z) */
				if (y)
					ll -= y[i * k + j] > 0.5f
					              ? log1p(exp(-fabs(zj))) + fmax(-zj, 0)
					              : log1p(exp(-fabs(zj))) + fmax(zj, 0);
			}
		} else {
			for (j = 0; j < k; j++) {
				double mu = z[j];
				sum[j] += mu;
				acc->sumsq[i * k + j] += mu * mu;
				if (y) {
					double d = y[i * k + j] - mu;
					ll -= PREDICT_HALF_LOG_2PI + 0.5 * log(acc->var[j]) +
					      d * d / (2 * acc->var[j]);
				}
			}
		}
		if (y)
			acc->lse[i] = first ? ll : log_add(acc->lse[i], ll);
	}
}

static void predict_acc_free(struct predict_acc *acc)
{
	free(acc->sum);
	free(acc->sumsq);
	free(acc->sumvar);
	free(acc->lse);
	free(acc->var);
	free(acc->z);
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

int bnn_predict(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed,
                const bnn_prediction *out, bnn_err *err)
{
	float *probs = out ? out->probs : NULL, *var = out ? out->var : NULL;
	double *nll = out ? out->nll : NULL;
	const bnn_model *m = st && st->model ? st->model : NULL;
	long n = ds ? ds->n : 0, k = m ? m->outputs : 0, i, s, samples = mc > 0 ? mc : 1;
	int gaussian = m && m->likelihood == BNN_LIKELIHOOD_GAUSSIAN;
	struct predict_acc acc;
	float *theta = NULL;
	bnn_rng rng;
	int rc = bnn_data_fits(m, ds, nll != NULL, err);

	if (rc)
		return rc;
	if (!probs)
		return bnn_fail(err, BNN_EINVAL, "no array given for the predictions");
	if (mc < 0)
		return bnn_fail(err, BNN_EINVAL,
		                "the number of Monte-Carlo samples must be 0 or more");
	if (mc > 0 && st->sigma && (rc = predict_check_sigma(st, err)))
		return rc;
	memset(&acc, 0, sizeof acc);
	acc.n = n;
	acc.k = k;
	acc.sum = calloc((size_t)(n * k), sizeof *acc.sum);
	acc.sumsq = gaussian ? calloc((size_t)(n * k), sizeof *acc.sumsq) : NULL;
	acc.sumvar = calloc((size_t)k, sizeof *acc.sumvar);
	acc.lse = nll ? malloc((size_t)n * sizeof *acc.lse) : NULL;
	acc.var = malloc((size_t)k * sizeof *acc.var);
	acc.z = malloc((size_t)(n * k) * sizeof *acc.z);
	if (mc > 0 && st->sigma)
		theta = bnn_floats_alloc(m->nparams);
	if (!acc.sum || (gaussian && !acc.sumsq) || !acc.sumvar || (nll && !acc.lse) || !acc.var ||
	    !acc.z || (mc > 0 && st->sigma && !theta)) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory predicting %ld examples", n);
		goto done;
	}
	bnn_rng_seed(&rng, seed);
	for (s = 0; s < samples; s++) {
		const float *w = st->params;
		if (theta) { /* θ_s = μ + σ∘ε for the whole data set */
			bnn_posterior_sample(m->nparams, st->params, st->sigma, NULL, theta, &rng);
			w = theta;
		}
		struct predict_net net = { m, w, st->stats, mc > 0 ? &rng : NULL };
		if ((rc = model_outputs(&net, ds, &(bnn_example_range){ .n = n, .batch = 256 },
		                        acc.z, NULL, err)))
			goto done;
		if (gaussian)
			predict_variance(st, w, acc.var);
		predict_accumulate(m, &acc, nll ? ds->y : NULL, s == 0);
		for (i = 0; gaussian && i < k; i++)
			acc.sumvar[i] += acc.var[i];
	}
	for (i = 0; i < n * k; i++) {
		double mean = acc.sum[i] / (double)samples;
		probs[i] = (float)mean;
		if (gaussian && var) /* the mixture's variance: mean σ² + variance of μ_s */
			var[i] = (float)(acc.sumvar[i % k] / (double)samples +
			                 fmax(acc.sumsq[i] / (double)samples - mean * mean, 0.0));
	}
	if (nll) {
		double total = 0;
		for (i = 0; i < n; i++)
			total -= acc.lse[i] - log((double)samples);
		*nll = total;
	}
done:
	predict_acc_free(&acc);
	free(theta);
	return rc;
}
