/*
 * cli_eval.c: `MODEL eval`, `MODEL predict` and `MODEL posterior`.  eval
 * and predict load a checkpoint, apply its standardisation to the data,
 * and compute predictive distributions (bnn_predict: at the posterior mean
 * or averaged over --mc samples).  eval prints the metrics of
 * docs/metrics.md as one JSON line: a multi-label (bernoulli) model is
 * scored over every (example, label) decision as a two-class problem, with
 * nll per example summed over its labels; the predictive entropy; with
 * --ood, out-of-distribution detection scored by entropy and by
 * confidence; with --plots, the charts of docs/plots.md.  predict writes
 * one CSV row per example, atomically when --out names a file; posterior
 * writes the mean and standard deviation of every parameter.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cli_internal.h"

static void cli_json_number(const char *key, double v, int defined)
{
	if (defined && isfinite(v))
		printf(", \"%s\": %.9g", key, v);
	else
		printf(", \"%s\": null", key);
}

/* The Monte-Carlo samples of eval and predict: --mc, else 32 for a model
 * whose predictions are random (a posterior, dropout), else 0. */
static long cli_mc(const struct bnn_cli_args *a, const bnn_state *st)
{
	if (a->mc >= 0)
		return a->mc;
	return bnn_state_is_stochastic(st) ? 32 : 0;
}

/* Predictions of one data set and the uncertainty scores eval uses. */
struct cli_pred {
	bnn_dataset ds;
	float *probs, *var; /* n × outputs: probabilities, or mean and variance */
	double nll;         /* summed NLL of the predictive (with targets) */
	double *entropy;    /* n: predictive entropy */
	double *conf;       /* n: 1 − confidence (classification), else NULL */
};

static void cli_pred_free(struct cli_pred *p)
{
	bnn_dataset_free(&p->ds);
	free(p->probs);
	free(p->var);
	free(p->entropy);
	free(p->conf);
	memset(p, 0, sizeof *p);
}

/* Entropy and confidence scores: categorical rows as they are; bernoulli
 * labels as 2-class rows, summed (entropy) or averaged (1 − confidence)
 * over the labels of an example; gaussian: the entropy of each output's
 * predictive Gaussian, ½·log(2πe·var), summed. */
static int cli_scores(const bnn_model *m, struct cli_pred *p, bnn_err *err)
{
	long n = p->ds.n, k = m->outputs, i, j;
	int rc = BNN_OK;

	p->entropy = calloc((size_t)n, sizeof *p->entropy);
	if (m->likelihood != BNN_LIKELIHOOD_GAUSSIAN)
		p->conf = calloc((size_t)n, sizeof *p->conf);
	if (!p->entropy || (m->likelihood != BNN_LIKELIHOOD_GAUSSIAN && !p->conf))
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	if (m->likelihood == BNN_LIKELIHOOD_CATEGORICAL) {
		if ((rc = bnn_entropy(p->probs, n, (int)k, p->entropy, err)))
			return rc;
		return bnn_confidence_score(p->probs, n, (int)k, p->conf, err);
	}
	for (i = 0; i < n && !rc; i++)
		for (j = 0; j < k && !rc; j++) {
			double pj = p->probs[i * k + j];
			if (m->likelihood == BNN_LIKELIHOOD_GAUSSIAN) {
				p->entropy[i] += 0.5 * log(2 * 3.14159265358979323846 *
				                           2.71828182845904523536 *
				                           (double)p->var[i * k + j]);
			} else {
				float row[2];
				double h, c;
				row[0] = (float)(1 - pj);
				row[1] = (float)pj;
				if (!(rc = bnn_entropy(row, 1, 2, &h, err)) &&
				    !(rc = bnn_confidence_score(row, 1, 2, &c, err))) {
					p->entropy[i] += h;
					p->conf[i] += c / (double)k;
				}
			}
		}
	return rc;
}

/* 0, or the index of the first example whose prediction (probabilities,
 * or mean and variance) is not finite, plus 1. */
static long cli_first_nonfinite(const bnn_model *m, const struct cli_pred *p)
{
	long i, k = m->outputs;

	for (i = 0; i < p->ds.n * k; i++)
		if (!isfinite(p->probs[i]) ||
		    (m->likelihood == BNN_LIKELIHOOD_GAUSSIAN && !isfinite(p->var[i])))
			return i / k + 1;
	return 0;
}

/* Predicts data set (path, labels) with st: mc samples, targets when
 * need_targets, and the scores when want_scores.  Prints errors. */
static int cli_pred_run(const bnn_model *m, struct bnn_cli_args *a, const bnn_state *st,
                        const char *path, const char *labels, int need_targets, int want_scores,
                        struct cli_pred *p)
{
	bnn_err err;
	long n;

	memset(p, 0, sizeof *p);
	if (bnn_cli_load(m, path, labels, a->target, need_targets, &p->ds, &err) ||
	    (st->standardize.features > 0 &&
	     bnn_standardizer_apply(&st->standardize, &p->ds, &err)))
		return bnn_cli_error(a, "%s", err.message);
	n = p->ds.n;
	p->probs = malloc((size_t)(n * m->outputs) * sizeof *p->probs);
	p->var = malloc((size_t)(n * m->outputs) * sizeof *p->var);
	if (!p->probs || !p->var)
		return bnn_cli_error(a, "out of memory");
	if (bnn_predict(st, &p->ds, cli_mc(a, st), a->train.seed,
	                &(bnn_prediction){ .probs = p->probs,
	                                   .var = p->var,
	                                   .nll = need_targets ? &p->nll : NULL },
	                &err))
		return bnn_cli_error(a, "%s", err.message);
	if ((n = cli_first_nonfinite(m, p)) > 0)
		return bnn_cli_error(
		        a,
		        "%s: example %ld: the prediction is not finite (the network "
		        "overflows: are the inputs on the scale of the training data?)",
		        path, n);
	if (want_scores && cli_scores(m, p, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* Classification rows for the metrics: categorical as they are; bernoulli
 * every (example, label) as a two-class row.  *p2 is NULL for categorical. */
static int cli_class_rows(const bnn_model *m, const struct cli_pred *p, float **p2, int **labels,
                          long *rows)
{
	long n = p->ds.n, k = m->outputs, i, j;
	int bern = m->likelihood == BNN_LIKELIHOOD_BERNOULLI;

	*rows = bern ? n * k : n;
	*p2 = bern ? malloc((size_t)*rows * 2 * sizeof **p2) : NULL;
	*labels = malloc((size_t)*rows * sizeof **labels);
	if (!*labels || (bern && !*p2))
		return BNN_ENOMEM;
	for (i = 0; i < n; i++)
		for (j = 0; j < (bern ? k : 1); j++) {
			long r = bern ? i * k + j : i;
			(*labels)[r] = (int)p->ds.y[i * m->targets + j];
			if (bern) {
				(*p2)[2 * r] = 1 - p->probs[i * k + j];
				(*p2)[2 * r + 1] = p->probs[i * k + j];
			}
		}
	return BNN_OK;
}

static double cli_mean(const double *v, long n)
{
	double s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

/* "DIR/NAME": the path of a chart; 0 or -1 when too long. */
static int cli_plot_path(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* --plots DIR: the reliability diagram (classification) and the entropy
 * histograms (in-distribution, and OOD when given). */
static int cli_plots(const bnn_model *m, struct bnn_cli_args *a, const bnn_bin *bins,
                     const struct cli_pred *in, const struct cli_pred *ood)
{
	char path[4096];
	bnn_plot_values series[2];
	bnn_plot_histogram_options hist;
	bnn_err err;
	struct stat sb;

	if (mkdir(a->plots, 0777) != 0 &&
	    !(errno == EEXIST && stat(a->plots, &sb) == 0 && S_ISDIR(sb.st_mode)))
		return bnn_cli_error(a, "cannot create the plot directory %s: %s", a->plots,
		                     strerror(errno));
	if (bins) {
		if (cli_plot_path(path, sizeof path, a->plots, "reliability.svg"))
			return bnn_cli_error(a, "--plots: the directory name is too long");
		if (bnn_plot_reliability(path, NULL, bins, (int)a->bins, "reliability diagram",
		                         &err))
			return bnn_cli_error(a, "%s", err.message);
	}
	series[0].name = "in-distribution";
	series[0].values = in->entropy;
	series[0].n = in->ds.n;
	if (ood) {
		series[1].name = "out-of-distribution";
		series[1].values = ood->entropy;
		series[1].n = ood->ds.n;
	}
	if (cli_plot_path(path, sizeof path, a->plots, "entropy.svg"))
		return bnn_cli_error(a, "--plots: the directory name is too long");
	hist.nbins = 30;
	hist.range = NULL;
	hist.xlabel = "predictive entropy";
	hist.title = m->likelihood == BNN_LIKELIHOOD_GAUSSIAN ? "predictive entropy (nats)"
	                                                      : "predictive entropy";
	if (bnn_plot_histograms(path, NULL, series, ood ? 2 : 1, &hist, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* The OOD metrics of one score under the keys ood_* (suffix "" or "_conf"). */
static int cli_json_ood(struct bnn_cli_args *a, const double *in, long n_in, const double *out,
                        long n_out, const char *suffix)
{
	bnn_ood_metrics om;
	bnn_err err;
	char key[64];

	if (bnn_metrics_ood(in, n_in, out, n_out, &om, &err))
		return bnn_cli_error(a, "%s", err.message);
#define OOD_KEY(name, value)                                         \
	do {                                                         \
		snprintf(key, sizeof key, "ood_%s%s", name, suffix); \
		cli_json_number(key, value, 1);                      \
	} while (0)
	OOD_KEY("auroc", om.auroc);
	OOD_KEY("fpr95", om.fpr95);
	OOD_KEY("detection_error", om.detection_error);
	OOD_KEY("aupr_in", om.aupr_in);
	OOD_KEY("aupr_out", om.aupr_out);
#undef OOD_KEY
	return BNN_CLI_OK;
}

int bnn_cli_eval(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	struct cli_pred in, ood;
	bnn_class_metrics cm;
	bnn_regression_metrics rm;
	bnn_bin *bins = NULL;
	bnn_err err;
	float *p2 = NULL;
	int *labels = NULL, gaussian = m->likelihood == BNN_LIKELIHOOD_GAUSSIAN;
	int classes = m->likelihood == BNN_LIKELIHOOD_BERNOULLI ? 2 : (int)m->outputs;
	long rows = 0;
	int rc;

	memset(&in, 0, sizeof in);
	memset(&ood, 0, sizeof ood);
	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	if ((rc = cli_pred_run(m, a, &st, a->data, a->labels, 1, 1, &in)) ||
	    (a->ood && (rc = cli_pred_run(m, a, &st, a->ood, a->ood_labels, 0, 1, &ood))))
		goto done;
	if (gaussian) {
		if (bnn_metrics_regression(in.probs, in.var, in.ds.y, in.ds.n, m->outputs, &rm,
		                           &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
			goto done;
		}
	} else {
		if (cli_class_rows(m, &in, &p2, &labels, &rows) ||
		    !(bins = malloc((size_t)a->bins * sizeof *bins))) {
			rc = bnn_cli_error(a, "out of memory");
			goto done;
		}
		if (bnn_metrics_classification(p2 ? p2 : in.probs, labels, rows, classes,
		                               (int)a->bins, &cm, &err) ||
		    bnn_metrics_reliability(p2 ? p2 : in.probs, labels, rows, classes, (int)a->bins,
		                            bins, &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
			goto done;
		}
		if (p2)
			cm.nll *= (double)m->outputs; /* per example: the sum over its labels */
	}
	if (a->plots && (rc = cli_plots(m, a, gaussian ? NULL : bins, &in, a->ood ? &ood : NULL)))
		goto done;
	printf("{\"n\": %ld, \"mc\": %ld", in.ds.n, cli_mc(a, &st));
	if (gaussian) {
		cli_json_number("rmse", rm.rmse, 1);
		cli_json_number("nll", in.nll / (double)in.ds.n, 1);
	} else {
		cli_json_number("accuracy", cm.accuracy, 1);
		cli_json_number("nll", cm.nll, 1);
		cli_json_number("ece", cm.ece, 1);
		cli_json_number("mce", cm.mce, 1);
		cli_json_number("brier", cm.brier, 1);
		cli_json_number("auroc", cm.auroc, cm.auroc_defined);
	}
	cli_json_number("entropy", cli_mean(in.entropy, in.ds.n), 1);
	if (a->ood) {
		printf(", \"ood_n\": %ld", ood.ds.n);
		cli_json_number("ood_entropy", cli_mean(ood.entropy, ood.ds.n), 1);
		if ((rc = cli_json_ood(a, in.entropy, in.ds.n, ood.entropy, ood.ds.n, "")) ||
		    (!gaussian &&
		     (rc = cli_json_ood(a, in.conf, in.ds.n, ood.conf, ood.ds.n, "_conf")))) {
			fputc('\n', stdout);
			goto done;
		}
	}
	if (!gaussian)
		printf(", \"bins\": %ld", a->bins);
	printf("}\n");
	rc = BNN_CLI_OK; /* bnn_cli_main checks that stdout was written */
done:
	free(p2);
	free(labels);
	free(bins);
	cli_pred_free(&in);
	cli_pred_free(&ood);
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
				fprintf(f, "%s%.9g,%.9g", j ? "," : "", (double)p,
				        (double)r->var[i * k + j]);
			else
				fprintf(f, "%s%.9g", j ? "," : "", (double)p);
		}
		if (r->m->likelihood == BNN_LIKELIHOOD_CATEGORICAL)
			fprintf(f, ",%ld", best);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* Writes straight into a device or a pipe (/dev/null, /dev/stdout, a
 * FIFO), which cannot be replaced atomically. */
static int cli_write_stream(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx,
                            bnn_err *err)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return bnn_fail(err, BNN_EIO, "cannot write %s: %s", path, strerror(errno));
	bad = fill(f, ctx) != 0 || fflush(f) != 0;
	if (fclose(f) != 0 || bad)
		return bnn_fail(err, BNN_EIO, "error writing %s", path);
	return BNN_OK;
}

int bnn_cli_write_file(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx, bnn_err *err)
{
	struct stat s;

	if (path && strcmp(path, "-") != 0) {
		if (stat(path, &s) == 0 && !S_ISREG(s.st_mode) && !S_ISDIR(s.st_mode))
			return cli_write_stream(path, fill, ctx, err);
		return bnn_file_replace(path, "", fill, ctx, err);
	}
	if (fill(stdout, ctx) != 0 || fflush(stdout) != 0)
		return bnn_fail(err, BNN_EIO, "error writing standard output");
	return BNN_OK;
}

int bnn_cli_predict(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	struct cli_pred p;
	bnn_err err;
	struct cli_rows rows;
	int rc;

	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	rc = cli_pred_run(m, a, &st, a->data, NULL, 0, 0, &p);
	if (!rc) {
		rows.m = m;
		rows.probs = p.probs;
		rows.var = p.var;
		rows.n = p.ds.n;
		if (bnn_cli_write_file(a->out, cli_write_rows, &rows, &err))
			rc = bnn_cli_error(a, "%s", err.message);
	}
	cli_pred_free(&p);
	bnn_state_free(&st);
	return rc;
}

static int cli_write_posterior(FILE *f, void *ctx)
{
	return bnn_posterior_write_csv(ctx, f);
}

int bnn_cli_posterior(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state st;
	bnn_err err;
	int rc = BNN_CLI_OK;

	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (bnn_cli_write_file(a->out, cli_write_posterior, &st, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	bnn_state_free(&st);
	return rc;
}
