/*
 * cli_calibrate.c: `MODEL calibrate`, temperature scaling of a trained
 * categorical model (Guo et al. 2017; docs/calibration.md).  It predicts
 * the validation data --data (with --labels for IDX) with the checkpoint
 * --load, keeping every Monte-Carlo sample's logits (--mc S, default as
 * eval's), fits the one temperature T that minimises the NLL of the
 * scaled predictive (bnn_fit_temperature), and saves the checkpoint with
 * the section `temperature` to --save; eval and predict then divide the
 * logits by T.  Everything else of the checkpoint is kept, except where a
 * training run stood (the resume sections): the calibrated model is not a
 * run to continue, and `train --init` takes its parameters only.  A
 * regression (gaussian) or multi-label (bernoulli) model is refused:
 * conformal intervals (eval --conformal) are the calibration offered for
 * regression.  Prints one JSON line: the temperature, the validation NLL
 * before and after, and the seconds the prediction and the fit took.
 * It runs on one process: under mpirun with more than one, the driver
 * refuses it (cli_one_process in cli.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_internal.h"

static double cli_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every Monte-Carlo sample's raw logits of ds and its labels. */
static int cli_calibrate_logits(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed,
                                float **logits, int **labels, bnn_err *err)
{
	const bnn_model *m = st->model;
	long samples = mc > 0 ? mc : 1, i;
	float *probs = malloc((size_t)(ds->n * m->outputs) * sizeof *probs);
	int rc;

	*logits = malloc((size_t)(samples * ds->n * m->outputs) * sizeof **logits);
	*labels = malloc((size_t)ds->n * sizeof **labels);
	if (!probs || !*logits || !*labels) {
		free(probs);
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the logits of %ld examples",
		                ds->n);
	}
	rc = bnn_predict(st, ds, mc, seed, &(bnn_prediction){ .probs = probs, .logits = *logits },
	                 err);
	for (i = 0; i < ds->n; i++)
		(*labels)[i] = (int)ds->y[i * m->targets];
	free(probs);
	return rc;
}

int bnn_cli_calibrate(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	bnn_dataset ds;
	bnn_err err;
	float *logits = NULL;
	int *labels = NULL, rc = BNN_CLI_OK;
	double t0 = cli_seconds(), t, before, after;
	long mc, samples;

	if (bnn_likelihood_targets(m) != BNN_TARGETS_CLASS)
		return bnn_cli_error(a,
		                     "calibrate: model '%s' is %s, and temperature scaling applies "
		                     "to categorical models only (for regression, eval --conformal "
		                     "gives calibrated intervals)",
		                     m->name, bnn_likelihood_name(m->likelihood));
	if (strcmp(a->save, "-") == 0)
		return bnn_cli_usage_error(a, "calibrate writes a checkpoint: --save names a file, "
		                              "not '-'");
	memset(&ds, 0, sizeof ds);
	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	mc = a->mc >= 0 ? a->mc : bnn_state_is_stochastic(&st) ? 32 : 0;
	samples = mc > 0 ? mc : 1;
	if (bnn_cli_load(m, a, a->data, a->labels, 1, &ds, &err) ||
	    (st.standardize.features > 0 && bnn_standardizer_apply(&st.standardize, &ds, &err)) ||
	    cli_calibrate_logits(&st, &ds, mc, a->train.seed, &logits, &labels, &err) ||
	    bnn_temperature_nll(logits, samples, ds.n, (int)m->outputs, labels, 1.0, &before,
	                        &err) ||
	    bnn_fit_temperature(logits, samples, ds.n, (int)m->outputs, labels, &t, &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	st.temperature = (float)t; /* the value the checkpoint keeps */
	bnn_state_forget_progress(&st);
	if (bnn_temperature_nll(logits, samples, ds.n, (int)m->outputs, labels, st.temperature,
	                        &after, &err) ||
	    bnn_state_save(&st, a->save, &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	fputs("{\"temperature\": ", stdout);
	bnn_cli_json_value(st.temperature, 9);
	printf(", \"n\": %ld, \"mc\": %ld", ds.n, mc);
	bnn_cli_json_number("nll_before", before, 1);
	bnn_cli_json_number("nll_after", after, 1);
	printf(", \"seconds\": %.3f", cli_seconds() - t0);
	bnn_cli_json_string("checkpoint", a->save);
	printf("}\n");
done:
	free(logits);
	free(labels);
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}
