/*
 * predict.c: running a trained model over a data set.  bnn_model_outputs()
 * feeds examples through the generated pass in batches (gathering them by
 * index when asked, so training can validate on a random subset without
 * copying it), and bnn_predict() turns raw outputs into predictive
 * distributions: softmax probabilities (categorical), P(y = 1) per label
 * (bernoulli), or a Gaussian mean and variance (σ² fixed or learned).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

/* Checks that ds fits model m (and has targets when needed). */
int bnn_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets,
                  bnn_err *err)
{
	if (ds->features != m->inputs)
		return bnn_fail(err, BNN_EMISMATCH,
		                "the data has %ld values per example but model '%s' takes %ld (input '%s')",
		                ds->features, m->name, m->inputs, m->input_name);
	if (need_targets && ds->targets == 0)
		return bnn_fail(err, BNN_EMISMATCH,
		                "the data has no targets ('%s' of model '%s')",
		                m->target_name, m->name);
	if (need_targets && ds->targets != m->targets)
		return bnn_fail(err, BNN_EMISMATCH,
		                "the data has %ld target values per example but model '%s' needs %ld",
		                ds->targets, m->name, m->targets);
	if (ds->n < 1)
		return bnn_fail(err, BNN_EINVAL, "the data set is empty");
	return BNN_OK;
}

int bnn_model_outputs(const bnn_state *st, const bnn_dataset *ds,
                      const long *idx, long n, long batch, float *out,
                      double *nll, bnn_err *err)
{
	const bnn_model *m = st->model;
	float *ws = NULL, *xb = NULL, *yb = NULL;
	double sum = 0;
	long i, j;
	int rc = bnn_data_fits(m, ds, nll != NULL, err);

	if (rc)
		return rc;
	if (batch < 1)
		return bnn_fail(err, BNN_EINVAL, "the batch size must be at least 1");
	if (batch > n)
		batch = n;
	ws = malloc(m->workspace_floats(batch) * sizeof *ws + sizeof *ws);
	xb = idx ? malloc((size_t)(batch * m->inputs) * sizeof *xb) : NULL;
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
		p.w = st->params;
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

/* σ² of each output of a Gaussian model. */
static void predict_variance(const bnn_state *st, double *var)
{
	const bnn_model *m = st->model;
	long j;
	int i;

	for (j = 0; j < m->outputs; j++)
		var[j] = m->sigma * m->sigma;
	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].role == BNN_ROLE_LOG_SIGMA)
			for (j = 0; j < m->outputs && j < m->tensors[i].size; j++)
				var[j] = exp(2.0 * (double)st->params[m->tensors[i].offset + j]);
}

int bnn_predict(const bnn_state *st, const bnn_dataset *ds, float *probs,
                float *var, bnn_err *err)
{
	const bnn_model *m = st->model;
	long i, j, k = m->outputs;
	int rc = bnn_model_outputs(st, ds, NULL, ds->n, 256, probs, NULL, err);

	if (rc)
		return rc;
	for (i = 0; i < ds->n; i++) {
		float *z = probs + i * k;
		if (m->likelihood == BNN_LIKELIHOOD_CATEGORICAL) {
			float zmax = z[0];
			double sum = 0;
			for (j = 1; j < k; j++)
				zmax = z[j] > zmax ? z[j] : zmax;
			for (j = 0; j < k; j++)
				sum += exp((double)z[j] - zmax);
			for (j = 0; j < k; j++)
				z[j] = (float)(exp((double)z[j] - zmax) / sum);
		} else if (m->likelihood == BNN_LIKELIHOOD_BERNOULLI) {
			for (j = 0; j < k; j++)
				z[j] = (float)(1.0 / (1.0 + exp(-(double)z[j])));
		}
	}
	if (m->likelihood == BNN_LIKELIHOOD_GAUSSIAN && var) {
		double *v = malloc((size_t)k * sizeof *v);
		if (!v)
			return bnn_fail(err, BNN_ENOMEM, "out of memory");
		predict_variance(st, v);
		for (i = 0; i < ds->n; i++)
			for (j = 0; j < k; j++)
				var[i * k + j] = (float)v[j];
		free(v);
	}
	return BNN_OK;
}
