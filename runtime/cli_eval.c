/*
 * cli_eval.c: `MODEL eval` and `MODEL predict`.  Both load a checkpoint,
 * apply its standardisation to the data, and compute predictive
 * distributions (bnn_predict).  eval prints the metrics of
 * docs/metrics.md as one JSON line; a multi-label (bernoulli) model is
 * scored over every (example, label) decision as a two-class problem, with
 * nll per example summed over its labels.  predict writes one CSV row per
 * example, atomically when --out names a file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

/* Loads the checkpoint and the data (standardised like the training data). */
static int cli_prepare(const bnn_model *m, struct bnn_cli_args *a, int need_targets,
                       bnn_state *st, bnn_dataset *ds)
{
	bnn_err err;
	memset(ds, 0, sizeof *ds);
	if (bnn_state_load(st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (bnn_cli_load(m, a->data, a->labels, a->target, need_targets, ds, &err) ||
	    (st->standardize.features > 0 && bnn_standardizer_apply(&st->standardize, ds, &err))) {
		bnn_state_free(st);
		return bnn_cli_error(a, "%s", err.message);
	}
	return BNN_CLI_OK;
}

static void cli_json_number(const char *key, double v, int defined)
{
	if (defined && isfinite(v))
		printf(", \"%s\": %.9g", key, v);
	else
		printf(", \"%s\": null", key);
}

/* Classification metrics; bernoulli outputs become two-class decisions. */
static int cli_eval_classes(const bnn_model *m, struct bnn_cli_args *a, const bnn_dataset *ds,
                            const float *probs)
{
	long n = ds->n, k = m->outputs, i, j, rows = n;
	int classes = (int)k, rc = BNN_CLI_OK;
	float *p2 = NULL;
	int *labels;
	bnn_class_metrics cm;
	bnn_err err;

	if (m->likelihood == BNN_LIKELIHOOD_BERNOULLI) {
		rows = n * k;
		classes = 2;
		p2 = malloc((size_t)rows * 2 * sizeof *p2);
	}
	labels = malloc((size_t)rows * sizeof *labels);
	if (!labels || (m->likelihood == BNN_LIKELIHOOD_BERNOULLI && !p2)) {
		free(labels);
		free(p2);
		return bnn_cli_error(a, "out of memory");
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < (m->likelihood == BNN_LIKELIHOOD_BERNOULLI ? k : 1); j++) {
			long r = m->likelihood == BNN_LIKELIHOOD_BERNOULLI ? i * k + j : i;
			labels[r] = (int)ds->y[i * m->targets + j];
			if (p2) {
				p2[2 * r] = 1 - probs[i * k + j];
				p2[2 * r + 1] = probs[i * k + j];
			}
		}
	if (bnn_metrics_classification(p2 ? p2 : probs, labels, rows, classes, (int)a->bins, &cm,
	                               &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
	} else {
		if (p2)
			cm.nll *= (double)k; /* per example: the sum over its labels */
		printf("{\"n\": %ld", n);
		cli_json_number("accuracy", cm.accuracy, 1);
		cli_json_number("nll", cm.nll, 1);
		cli_json_number("ece", cm.ece, 1);
		cli_json_number("mce", cm.mce, 1);
		cli_json_number("brier", cm.brier, 1);
		cli_json_number("auroc", cm.auroc, cm.auroc_defined);
		printf(", \"bins\": %ld}\n", a->bins);
	}
	free(labels);
	free(p2);
	return rc;
}

/* The predictive distributions of the data, as eval and predict need
 * them: probs (mean for regression) and var, each n × outputs, owned by the
 * caller.  On failure the message is printed and nothing is left owned. */
static int cli_predictions(const bnn_model *m, struct bnn_cli_args *a, int need_targets,
                           bnn_state *st, bnn_dataset *ds, float **probs, float **var)
{
	bnn_err err;
	int rc = cli_prepare(m, a, need_targets, st, ds);

	if (rc)
		return rc;
	*probs = malloc((size_t)(ds->n * m->outputs) * sizeof **probs);
	*var = malloc((size_t)(ds->n * m->outputs) * sizeof **var);
	if (!*probs || !*var)
		rc = bnn_cli_error(a, "out of memory");
	else if (bnn_predict(st, ds, *probs, *var, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	if (rc) {
		free(*probs);
		free(*var);
		bnn_dataset_free(ds);
		bnn_state_free(st);
	}
	return rc;
}

int bnn_cli_eval(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	bnn_dataset ds;
	bnn_err err;
	float *probs, *var;
	int rc = cli_predictions(m, a, 1, &st, &ds, &probs, &var);

	if (rc)
		return rc;
	if (m->likelihood == BNN_LIKELIHOOD_GAUSSIAN) {
		bnn_regression_metrics rm;
		if (bnn_metrics_regression(probs, var, ds.y, ds.n, m->outputs, &rm, &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
		} else {
			printf("{\"n\": %ld", ds.n);
			cli_json_number("rmse", rm.rmse, 1);
			cli_json_number("nll", rm.nll, 1);
			printf("}\n");
		}
	} else {
		rc = cli_eval_classes(m, a, &ds, probs);
	}
	if (!rc && fflush(stdout) != 0)
		rc = BNN_CLI_FAIL;
	free(probs);
	free(var);
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}

/* What predict writes. */
struct cli_rows {
	const bnn_model *m;
	const float *probs, *var;
	long n;
};

static int cli_write_rows(FILE *f, void *ctx)
{
	const struct cli_rows *r = ctx;
	long i, j, k = r->m->outputs;
	int gaussian = r->m->likelihood == BNN_LIKELIHOOD_GAUSSIAN;

	for (j = 0; j < k; j++) {
		if (gaussian)
			fprintf(f, "%smean_%ld,var_%ld", j ? "," : "", j, j);
		else
			fprintf(f, "%sp_%ld", j ? "," : "", j);
	}
	if (r->m->likelihood == BNN_LIKELIHOOD_CATEGORICAL)
		fprintf(f, ",predicted");
	fputc('\n', f);
	for (i = 0; i < r->n; i++) {
		long best = 0;
		for (j = 0; j < k; j++) {
			float p = r->probs[i * k + j];
			if (p > r->probs[i * k + best])
				best = j;
			if (gaussian)
				fprintf(f, "%s%.9g,%.9g", j ? "," : "", (double)p, (double)r->var[i * k + j]);
			else
				fprintf(f, "%s%.9g", j ? "," : "", (double)p);
		}
		if (r->m->likelihood == BNN_LIKELIHOOD_CATEGORICAL)
			fprintf(f, ",%ld", best);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int bnn_cli_write_file(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx,
                       bnn_err *err)
{
	if (path && strcmp(path, "-") != 0)
		return bnn_file_replace(path, "", fill, ctx, err);
	if (fill(stdout, ctx) != 0 || fflush(stdout) != 0)
		return bnn_fail(err, BNN_EIO, "error writing standard output");
	return BNN_OK;
}

int bnn_cli_predict(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	bnn_dataset ds;
	bnn_err err;
	struct cli_rows rows;
	float *probs, *var;
	int rc = cli_predictions(m, a, 0, &st, &ds, &probs, &var);

	if (rc)
		return rc;
	rows.m = m;
	rows.probs = probs;
	rows.var = var;
	rows.n = ds.n;
	if (bnn_cli_write_file(a->out, cli_write_rows, &rows, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	free(probs);
	free(var);
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}
