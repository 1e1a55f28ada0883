/*
 * cli_eval.c: `MODEL eval`, `MODEL predict` and `MODEL posterior`.  eval
 * and predict load a checkpoint, apply its standardisation to the data,
 * and compute predictive distributions (bnn_predict: at the posterior mean
 * or averaged over --mc samples).  eval prints the metrics of
 * docs/metrics.md as one JSON line: a multi-label (bernoulli) model is
 * scored over every (example, label) decision as a two-class problem, with
 * nll per example summed over its labels; the predictive entropy and, for
 * a classifier, its split into the expected entropy (aleatoric) and the
 * mutual information (epistemic); with --ood, out-of-distribution
 * detection scored by entropy, confidence, mutual information and energy;
 * with --plots, the charts of docs/plots.md.  predict writes one CSV row
 * per example (a classifier's with the entropy and its split), atomically
 * when --out names a file; posterior writes the mean and standard
 * deviation of every parameter.  --conformal adds split conformal
 * prediction (cli_conformal.c): eval's coverage and set size or width,
 * predict's set or interval columns.
 *
 * --load may name a mixture of networks (train --members): eval and
 * predict then predict with every member and average (bnn_mixture_load,
 * bnn_mixture_predict_batches; docs/ensembles.md).
 *
 * eval and predict run sharded under mpirun (cli_mpi.h): each rank
 * predicts a contiguous run of bnn_predict's batches of 256 examples, and
 * rank 0 gathers every prediction in example order and computes the
 * metrics with the single-process code, alone printing and writing.
 * bnn_predict's randomness depends on (--seed, sample, batch) only
 * (bnn_predict_batches), and the per-example NLL is summed in example
 * order, so the output is the same bytes for any number of ranks, one
 * process included (docs/driver.md, "eval and predict under mpirun").
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cli_internal.h"
#include "cli_mpi.h"

void bnn_cli_json_value(double v, int digits)
{
	if (isfinite(v))
		printf("%.*g", digits, v);
	else
		fputs("null", stdout);
}

void bnn_cli_json_number(const char *key, double v, int defined)
{
	printf(", \"%s\": ", key);
	bnn_cli_json_value(defined ? v : NAN, 9);
}

void bnn_cli_json_string(const char *key, const char *text)
{
	const unsigned char *c;

	printf(", \"%s\": \"", key);
	for (c = (const unsigned char *)text; *c; c++)
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	putchar('"');
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
	float *aleatoric;   /* regression: n × outputs, var's aleatoric part, else NULL */
	float *epistemic;   /* regression: n × outputs, var's epistemic part (the
	                       variance of the samples' means), else NULL */
	double nll;         /* summed NLL of the predictive (with targets) */
	long mc;            /* the Monte-Carlo samples predicted with */
	long draws;         /* the different predictions of each member among
	                       them (bnn_predict_draws) */
	int members;        /* the networks of the mixture predicted with */
	double *entropy;    /* n: predictive entropy */
	double *conf;       /* n: 1 − confidence (classification), else NULL */
	/* classification, else NULL: */
	double *xent;   /* n: expected entropy E_θ H[p] (bnn_predict) */
	double *mi;     /* n: mutual information, entropy − xent */
	double *energy; /* n: the samples' mean energy score (bnn_predict) */
	/* regression with targets, else NULL: n × outputs, the predictive CDF
	 * at the target and just below it (bnn_predict; central intervals) */
	double *cdf, *cdf_below;
};

static void cli_pred_free(struct cli_pred *p)
{
	bnn_dataset_free(&p->ds);
	free(p->probs);
	free(p->var);
	free(p->aleatoric);
	free(p->epistemic);
	free(p->entropy);
	free(p->conf);
	free(p->xent);
	free(p->mi);
	free(p->energy);
	free(p->cdf);
	free(p->cdf_below);
	memset(p, 0, sizeof *p);
}

/* The mutual information of a classifier's predictions, entropy − the
 * expected entropy bnn_predict gave.  One prediction (--mc 0 or 1, the
 * probit predictive of a last-layer Laplace posterior, a network without
 * randomness: bnn_predict_draws) has no split (docs/metrics.md): the
 * expected entropy is the entropy itself, the mutual information 0,
 * exactly; unless a mixture's members gave one each (docs/ensembles.md). */
static int cli_split(long n, struct cli_pred *p, bnn_err *err)
{
	if (!(p->mi = calloc((size_t)n, sizeof *p->mi)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	if (p->draws > 1 || p->members > 1)
		return bnn_mutual_information(p->entropy, p->xent, n, p->mi, err);
	memcpy(p->xent, p->entropy, (size_t)n * sizeof *p->xent);
	return BNN_OK;
}

/* Entropy and confidence scores: categorical rows as they are; bernoulli
 * labels as 2-class rows, summed (entropy) or averaged (1 − confidence)
 * over the labels of an example; regression: the entropy of a Gaussian
 * with each output's predictive variance, ½·log(2πe·var), summed (exact
 * for gaussian at the mean; for laplace, poisson and mixtures the largest
 * entropy any distribution of that variance has).  Then a classifier's
 * mutual information (cli_split). */
static int cli_scores(const bnn_model *m, struct cli_pred *p, bnn_err *err)
{
	long n = p->ds.n, k = bnn_model_predictions(m), i, j;
	int rc = BNN_OK;

	p->entropy = calloc((size_t)n, sizeof *p->entropy);
	if (!bnn_likelihood_regression(m))
		p->conf = calloc((size_t)n, sizeof *p->conf);
	if (!p->entropy || (!bnn_likelihood_regression(m) && !p->conf))
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	if (bnn_likelihood_targets(m) == BNN_TARGETS_CLASS) {
		if ((rc = bnn_entropy(p->probs, n, (int)k, p->entropy, err)) ||
		    (rc = bnn_confidence_score(p->probs, n, (int)k, p->conf, err)))
			return rc;
		return cli_split(n, p, err);
	}
	for (i = 0; i < n && !rc; i++)
		for (j = 0; j < k && !rc; j++) {
			double pj = p->probs[i * k + j];
			if (bnn_likelihood_regression(m)) {
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
	if (!rc && bnn_likelihood_targets(m) == BNN_TARGETS_BINARY)
		rc = cli_split(n, p, err);
	return rc;
}

/* 0, or the index of the first example whose prediction (probabilities,
 * or mean and variance) is not finite, plus 1; the variance may be +inf
 * where the likelihood's is (studentt with ν ≤ 2). */
static long cli_first_nonfinite(const bnn_model *m, const struct cli_pred *p)
{
	long i, k = bnn_model_predictions(m);

	for (i = 0; i < p->ds.n * k; i++)
		if (!isfinite(p->probs[i]) ||
		    (bnn_likelihood_regression(m) && !isfinite(p->var[i]) &&
		     !(p->var[i] > 0 && !bnn_likelihood_variance_finite(m))))
			return i / k + 1;
	return 0;
}

/* The examples [*lo, *hi) of rank r of size: a contiguous run of
 * bnn_predict's batches (BNN_PREDICT_BATCH examples, the unit its
 * randomness is tied to), the batches split as evenly as they go (the
 * first ranks get one fewer when they do not divide; a rank may get
 * none); *j0, *j1 the batches. */
static void cli_shard(long n, int r, int size, long *j0, long *j1, long *lo, long *hi)
{
	long batches = (n + BNN_PREDICT_BATCH - 1) / BNN_PREDICT_BATCH;

	*j0 = batches * r / size;
	*j1 = batches * (r + 1) / size;
	*lo = *j0 * BNN_PREDICT_BATCH < n ? *j0 * BNN_PREDICT_BATCH : n;
	*hi = *j1 * BNN_PREDICT_BATCH < n ? *j1 * BNN_PREDICT_BATCH : n;
}

/* Predicts data set (path, labels) with st: mc samples, targets when
 * need_targets.  Every rank loads the data and predicts its share of the
 * batches (cli_shard, bnn_predict_batches); rank 0 gathers every rank's
 * rows and each example's NLL in example order and sums the NLL in that
 * order, so that its arrays and sums are bnn_predict's, bit for bit,
 * whatever the number of ranks (cli_pred_check then checks and scores them).
 * Collective; returns the status all ranks agreed on (the message printed
 * by rank 0). */
static int cli_pred_run(const bnn_model *m, struct bnn_cli_args *a, const bnn_mixture *mix,
                        const char *path, const char *labels, int need_targets, struct cli_pred *p)
{
	const bnn_state *st = &mix->member[0]; /* the members share the standardisation */
	bnn_err err;
	long n = 0, j0, j1, lo = 0, hi = 0, rows, i, *count = NULL, *ncount = NULL;
	double *nll = NULL;
	int rc = BNN_CLI_OK, r, classes = !bnn_likelihood_regression(m);

	memset(p, 0, sizeof *p);
	if (bnn_cli_load(m, a, path, labels, need_targets, &p->ds, &err) ||
	    (st->standardize.features > 0 &&
	     bnn_standardizer_apply(&st->standardize, &p->ds, &err)))
		rc = bnn_cli_error(a, "%s", err.message);
	if ((rc = bnn_cli_agree(a, rc)))
		return rc;
	n = p->ds.n;
	cli_shard(n, a->rank, a->ranks, &j0, &j1, &lo, &hi);
	rows = a->rank == 0 ? n : hi - lo; /* rank 0 receives everyone's rows */
	p->probs = malloc((size_t)(rows * bnn_model_predictions(m) + 1) * sizeof *p->probs);
	p->var = malloc((size_t)(rows * bnn_model_predictions(m) + 1) * sizeof *p->var);
	p->mc = cli_mc(a, st);
	p->draws = bnn_predict_draws(st, p->mc);
	p->members = mix->members;
	if (classes) {
		p->xent = malloc((size_t)(rows + 1) * sizeof *p->xent);
		p->energy = malloc((size_t)(rows + 1) * sizeof *p->energy);
	}
	if (!classes) {
		p->aleatoric = malloc((size_t)(rows * bnn_model_predictions(m) + 1) *
		                      sizeof *p->aleatoric);
		p->epistemic = malloc((size_t)(rows * bnn_model_predictions(m) + 1) *
		                      sizeof *p->epistemic);
	}
	if (!classes && need_targets) {
		p->cdf = malloc((size_t)(rows * bnn_model_predictions(m) + 1) * sizeof *p->cdf);
		p->cdf_below = malloc((size_t)(rows * bnn_model_predictions(m) + 1) *
		                      sizeof *p->cdf_below);
	}
	nll = need_targets ? malloc((size_t)(rows + 1) * sizeof *nll) : NULL;
	count = malloc((size_t)a->ranks * sizeof *count);
	ncount = malloc((size_t)a->ranks * sizeof *ncount);
	if (!p->probs || !p->var || (need_targets && !nll) || !count || !ncount ||
	    (classes && (!p->xent || !p->energy)) ||
	    (!classes && (!p->aleatoric || !p->epistemic)) ||
	    (!classes && need_targets && (!p->cdf || !p->cdf_below))) {
		rc = bnn_cli_error(a, "out of memory");
	} else if (j1 > j0 &&
	           bnn_mixture_predict_batches(mix, &p->ds, p->mc, a->train.seed, j0, j1,
	                                       &(bnn_prediction){ .probs = p->probs,
	                                                          .var = p->var,
	                                                          .aleatoric = p->aleatoric,
	                                                          .epistemic = p->epistemic,
	                                                          .nll_each = nll,
	                                                          .expected_entropy = p->xent,
	                                                          .energy = p->energy,
	                                                          .cdf = p->cdf,
	                                                          .cdf_below = p->cdf_below },
	                                       &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
	}
	if ((rc = bnn_cli_agree(a, rc)))
		goto done;
	for (r = 0; r < a->ranks; r++) {
		long l, h;
		cli_shard(n, r, a->ranks, &j0, &j1, &l, &h);
		count[r] = (h - l) * bnn_model_predictions(m);
		ncount[r] = h - l;
	}
	if (bnn_cli_shard_gather(a, p->probs, count, 0) ||
	    bnn_cli_shard_gather(a, p->var, count, 0) ||
	    (!classes && (bnn_cli_shard_gather(a, p->aleatoric, count, 0) ||
	                  bnn_cli_shard_gather(a, p->epistemic, count, 0))) ||
	    (need_targets && bnn_cli_shard_gather(a, nll, ncount, 1)) ||
	    (classes && (bnn_cli_shard_gather(a, p->xent, ncount, 1) ||
	                 bnn_cli_shard_gather(a, p->energy, ncount, 1))) ||
	    (p->cdf && (bnn_cli_shard_gather(a, p->cdf, count, 1) ||
	                bnn_cli_shard_gather(a, p->cdf_below, count, 1)))) {
		rc = bnn_cli_agree(a, bnn_cli_error(a, "too many predictions to gather"));
		goto done;
	}
	for (i = 0; a->rank == 0 && need_targets && i < n; i++)
		p->nll += nll[i]; /* example order, as bnn_predict sums them */
done:
	free(nll);
	free(count);
	free(ncount);
	return rc;
}

/* Rank 0, after cli_pred_run: checks that every prediction of data set path
 * is finite and computes the scores when want_scores.  Prints errors. */
static int cli_pred_check(const bnn_model *m, struct bnn_cli_args *a, const char *path,
                          int want_scores, struct cli_pred *p)
{
	bnn_err err;
	long n;

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
	long n = p->ds.n, k = bnn_model_predictions(m), i, j;
	int bern = bnn_likelihood_targets(m) == BNN_TARGETS_BINARY;

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

/* The bins of eval's PIT histogram (docs/plots.md). */
#define CLI_PIT_BINS 20

/* --plots DIR, regression: pit.svg, the PIT histogram of every target
 * (every output of every example) of the evaluation data. */
static int cli_plot_pit(const bnn_model *m, struct bnn_cli_args *a, const struct cli_pred *in)
{
	char path[4096];
	double fraction[CLI_PIT_BINS];
	bnn_err err;

	if (cli_plot_path(path, sizeof path, a->plots, "pit.svg"))
		return bnn_cli_error(a, "--plots: the directory name is too long");
	if (bnn_metrics_pit(in->cdf, in->cdf_below, in->ds.n * bnn_model_predictions(m),
	                    CLI_PIT_BINS, fraction, &err) ||
	    bnn_plot_pit(path, NULL, fraction, CLI_PIT_BINS, "PIT histogram", &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* The finite values of the histograms' n series. */
static long cli_plot_finite(const bnn_plot_values *series, int n)
{
	long count = 0, i;
	int s;

	for (s = 0; s < n; s++)
		for (i = 0; i < series[s].n; i++)
			count += isfinite(series[s].values[i]) != 0;
	return count;
}

/* --plots, when no predictive entropy is finite (an infinite predictive
 * variance: studentt with ν ≤ 2): entropy.svg is not drawn, and stderr
 * says so; the other charts and the metrics go on. */
static void cli_plot_skip_entropy(const bnn_model *m, const struct bnn_cli_args *a,
                                  const char *path, long n)
{
	char why[160] = "";

	if (!bnn_likelihood_variance_finite(m))
		snprintf(why, sizeof why,
		         " (model '%s' is %s with df = %g, whose predictive variance is infinite)",
		         m->name, bnn_likelihood_name(m->likelihood), m->df);
	(void)bnn_cli_error(a,
	                    "--plots: %s not drawn: the predictive entropy of all %ld %s is "
	                    "not finite%s",
	                    path, n, n == 1 ? "example" : "examples", why);
}

/* --plots DIR: the reliability diagram (classification) or the PIT
 * histogram (regression), and the entropy histograms (in-distribution, and
 * OOD when given), their values that are not finite skipped (the legend
 * counts them; no chart and a note when none is finite). */
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
	} else if (in->cdf) {
		int rc = cli_plot_pit(m, a, in);
		if (rc)
			return rc;
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
	hist.title =
	        bnn_likelihood_regression(m) ? "predictive entropy (nats)" : "predictive entropy";
	if (cli_plot_finite(series, ood ? 2 : 1) == 0)
		cli_plot_skip_entropy(m, a, path, in->ds.n + (ood ? ood->ds.n : 0));
	else if (bnn_plot_histograms(path, NULL, series, ood ? 2 : 1, &hist, &err))
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
		bnn_cli_json_number(key, value, 1);                  \
	} while (0)
	OOD_KEY("auroc", om.auroc);
	OOD_KEY("fpr95", om.fpr95);
	OOD_KEY("detection_error", om.detection_error);
	OOD_KEY("aupr_in", om.aupr_in);
	OOD_KEY("aupr_out", om.aupr_out);
#undef OOD_KEY
	return BNN_CLI_OK;
}

/* --laplace-predictive probit|mc: how bnn_predict uses the last-layer
 * Laplace posterior of every member (docs/laplace.md). */
static int cli_laplace_predictive(struct bnn_cli_args *a, bnn_mixture *mix)
{
	const char *v = a->laplace_predictive;
	int i, mc = v && strcmp(v, "mc") == 0;

	if (!v)
		return BNN_CLI_OK;
	if (!mc && strcmp(v, "probit") != 0)
		return bnn_cli_usage_error(a, "--laplace-predictive: '%s' is not probit or mc", v);
	for (i = 0; i < mix->members; i++) {
		bnn_posthoc *p = mix->member[i].posthoc;
		if (!p || (p->kind != BNN_POSTHOC_LAPLACE_LAST_LAYER &&
		           p->kind != BNN_POSTHOC_LAPLACE_KRON))
			return bnn_cli_usage_error(
			        a,
			        "--laplace-predictive: '%s' has no last-layer Laplace posterior "
			        "(laplace --weights last-layer, the default)",
			        a->load);
		p->predictive = mc ? BNN_LAPLACE_MC : BNN_LAPLACE_PROBIT;
	}
	return BNN_CLI_OK;
}

/* A regression model's mean absolute error and the coverage of its
 * central 50%, 90% and 95% predictive intervals (docs/metrics.md) under
 * the keys mae and coverage_50, _90, _95. */
static int cli_json_intervals(const bnn_model *m, struct bnn_cli_args *a,
                              const bnn_regression_metrics *rm, const struct cli_pred *in)
{
	static const int levels[] = { 50, 90, 95 };
	char key[32];
	bnn_err err;
	double c;
	size_t i;

	bnn_cli_json_number("mae", rm->mae, 1);
	for (i = 0; i < sizeof levels / sizeof levels[0]; i++) {
		if (bnn_metrics_coverage(in->cdf, in->cdf_below,
		                         in->ds.n * bnn_model_predictions(m), levels[i] / 100.0, &c,
		                         &err))
			return bnn_cli_error(a, "%s", err.message);
		snprintf(key, sizeof key, "coverage_%d", levels[i]);
		bnn_cli_json_number(key, c, 1);
	}
	return BNN_CLI_OK;
}

/* Loads --load (one network, or a mixture: docs/ensembles.md) on every
 * rank: 0, or the status the ranks agreed on. */
static int cli_state_load(const bnn_model *m, struct bnn_cli_args *a, bnn_mixture *mix)
{
	bnn_err err;
	int rc = bnn_mixture_load(mix, m, a->load, &err) ? bnn_cli_error(a, "%s", err.message)
	                                                 : BNN_CLI_OK;

	if ((rc = bnn_cli_agree(a, rc)))
		return rc;
	return cli_laplace_predictive(a, mix);
}

/* Rank 0's part of eval: the metrics of the gathered predictions, the
 * charts and the JSON line.  Prints errors. */
static int cli_eval_report(const bnn_model *m, struct bnn_cli_args *a, const bnn_mixture *mix,
                           struct cli_pred *in, struct cli_pred *ood, struct cli_pred *cal,
                           struct bnn_cli_conformal *conf)
{
	const bnn_state *st = &mix->member[0];
	bnn_class_metrics cm;
	bnn_regression_metrics rm;
	bnn_bin *bins = NULL;
	bnn_err err;
	float *p2 = NULL;
	int *labels = NULL, regression = bnn_likelihood_regression(m);
	int classes = bnn_model_classes(m);
	long rows = 0;
	int rc;

	if ((rc = cli_pred_check(m, a, a->data, 1, in)) ||
	    (a->ood && (rc = cli_pred_check(m, a, a->ood, 1, ood))) ||
	    (a->conformal && ((rc = cli_pred_check(m, a, a->conformal, 0, cal)) ||
	                      (rc = bnn_cli_conformal_fit(m, a, conf, cal->probs, cal->var,
	                                                  cal->ds.y, cal->ds.n)))))
		return rc;
	if (regression) {
		if (bnn_metrics_regression(in->probs, in->var, in->ds.y, in->ds.n,
		                           bnn_model_predictions(m), &rm, &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
			goto done;
		}
	} else {
		if (cli_class_rows(m, in, &p2, &labels, &rows) ||
		    !(bins = malloc((size_t)a->bins * sizeof *bins))) {
			rc = bnn_cli_error(a, "out of memory");
			goto done;
		}
		if (bnn_metrics_classification(p2 ? p2 : in->probs, labels, rows, classes,
		                               (int)a->bins, &cm, &err) ||
		    bnn_metrics_reliability(p2 ? p2 : in->probs, labels, rows, classes,
		                            (int)a->bins, bins, &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
			goto done;
		}
		if (p2) /* per example: the sum over its labels */
			cm.nll *= (double)bnn_model_predictions(m);
	}
	if (a->plots && (rc = cli_plots(m, a, regression ? NULL : bins, in, a->ood ? ood : NULL)))
		goto done;
	printf("{\"n\": %ld, \"mc\": %ld", in->ds.n, cli_mc(a, st));
	if (mix->members > 1)
		printf(", \"members\": %d", mix->members);
	if (regression) {
		bnn_cli_json_number("rmse", rm.rmse, 1);
		bnn_cli_json_number("nll", in->nll / (double)in->ds.n, 1);
	} else {
		bnn_cli_json_number("accuracy", cm.accuracy, 1);
		bnn_cli_json_number("nll", cm.nll, 1);
		bnn_cli_json_number("ece", cm.ece, 1);
		bnn_cli_json_number("ece_floor", cm.ece_floor, 1);
		bnn_cli_json_number("mce", cm.mce, 1);
		bnn_cli_json_number("brier", cm.brier, 1);
		bnn_cli_json_number("auroc", cm.auroc, cm.auroc_defined);
	}
	bnn_cli_json_number("entropy", cli_mean(in->entropy, in->ds.n), 1);
	if (regression && (rc = cli_json_intervals(m, a, &rm, in))) {
		fputc('\n', stdout);
		goto done;
	}
	if (!regression) {
		bnn_cli_json_number("expected_entropy", cli_mean(in->xent, in->ds.n), 1);
		bnn_cli_json_number("mutual_information", cli_mean(in->mi, in->ds.n), 1);
	}
	if (a->ood) {
		printf(", \"ood_n\": %ld", ood->ds.n);
		bnn_cli_json_number("ood_entropy", cli_mean(ood->entropy, ood->ds.n), 1);
		if (!regression) {
			bnn_cli_json_number("ood_expected_entropy", cli_mean(ood->xent, ood->ds.n),
			                    1);
			bnn_cli_json_number("ood_mutual_information", cli_mean(ood->mi, ood->ds.n),
			                    1);
		}
		if ((rc = cli_json_ood(a, in->entropy, in->ds.n, ood->entropy, ood->ds.n, "")) ||
		    (!regression &&
		     ((rc = cli_json_ood(a, in->conf, in->ds.n, ood->conf, ood->ds.n, "_conf")) ||
		      (rc = cli_json_ood(a, in->mi, in->ds.n, ood->mi, ood->ds.n, "_mi")) ||
		      (rc = cli_json_ood(a, in->energy, in->ds.n, ood->energy, ood->ds.n,
		                         "_energy"))))) {
			fputc('\n', stdout);
			goto done;
		}
	}
	if (a->conformal &&
	    (rc = bnn_cli_conformal_apply(m, a, conf, in->probs, in->var, in->ds.y, in->ds.n))) {
		fputc('\n', stdout);
		goto done;
	}
	if (!regression)
		printf(", \"bins\": %ld", a->bins);
	printf("}\n");
	rc = BNN_CLI_OK; /* bnn_cli_main checks that stdout was written */
done:
	free(p2);
	free(labels);
	free(bins);
	return rc;
}

/* eval: every rank loads the checkpoint and the data and predicts its
 * share (cli_pred_run); rank 0 computes the metrics with the
 * single-process code and prints them; every rank ends with rank 0's
 * status. */
int bnn_cli_eval(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_mixture mix;
	struct cli_pred in, ood, cal;
	struct bnn_cli_conformal conf;
	int rc;

	memset(&in, 0, sizeof in);
	memset(&ood, 0, sizeof ood);
	memset(&cal, 0, sizeof cal);
	if ((rc = bnn_cli_conformal_options(m, a, &conf)))
		return rc;
	if ((rc = cli_state_load(m, a, &mix)))
		return rc;
	if ((rc = cli_pred_run(m, a, &mix, a->data, a->labels, 1, &in)) ||
	    (a->ood && (rc = cli_pred_run(m, a, &mix, a->ood, a->ood_labels, 0, &ood))) ||
	    (a->conformal &&
	     (rc = cli_pred_run(m, a, &mix, a->conformal, a->conformal_labels, 1, &cal))))
		goto done;
	if (a->rank == 0)
		rc = cli_eval_report(m, a, &mix, &in, &ood, &cal, &conf);
	rc = bnn_cli_agree(a, rc); /* rank 0 has said why */
done:
	bnn_cli_conformal_free(&conf);
	cli_pred_free(&in);
	cli_pred_free(&ood);
	cli_pred_free(&cal);
	bnn_mixture_free(&mix);
	return rc;
}

/* What predict writes. */
struct cli_rows {
	const bnn_model *m;
	const float *probs, *var, *aleatoric, *epistemic;
	const struct cli_pred *p; /* a classifier's entropy, xent and mi */
	long n;
	const struct bnn_cli_conformal *conf; /* --conformal: sets or intervals */
};

static int cli_write_rows(FILE *f, void *ctx)
{
	const struct cli_rows *r = ctx;
	long i, j, k = bnn_model_predictions(r->m);
	int regression = bnn_likelihood_regression(r->m);

	for (j = 0; j < k; j++) {
		if (regression)
			fprintf(f, "%smean_%ld,var_%ld,aleatoric_%ld,epistemic_%ld", j ? "," : "",
			        j, j, j, j);
		else
			fprintf(f, "%sp_%ld", j ? "," : "", j);
	}
	if (bnn_likelihood_targets(r->m) == BNN_TARGETS_CLASS)
		fprintf(f, ",predicted");
	if (!regression)
		fprintf(f, ",entropy,expected_entropy,mutual_information");
	bnn_cli_conformal_header(f, r->conf);
	fputc('\n', f);
	for (i = 0; i < r->n; i++) {
		long best = 0;
		for (j = 0; j < k; j++) {
			float p = r->probs[i * k + j];
			if (p > r->probs[i * k + best])
				best = j;
			if (regression) /* var may be inf (studentt, ν ≤ 2), epistemic not */
				fprintf(f, "%s%.9g,%.9g,%.9g,%.9g", j ? "," : "", (double)p,
				        (double)r->var[i * k + j], (double)r->aleatoric[i * k + j],
				        (double)r->epistemic[i * k + j]);
			else
				fprintf(f, "%s%.9g", j ? "," : "", (double)p);
		}
		if (bnn_likelihood_targets(r->m) == BNN_TARGETS_CLASS)
			fprintf(f, ",%ld", best);
		if (!regression)
			fprintf(f, ",%.9g,%.9g,%.9g", r->p->entropy[i], r->p->xent[i], r->p->mi[i]);
		bnn_cli_conformal_row(f, r->conf, i);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* "error writing PATH: reason" (the reason when the system gave one, as
 * for the final flush of standard output in cli.c). */
static int cli_write_error(const char *path, int e, bnn_err *err)
{
	return bnn_fail(err, BNN_EIO, "error writing %s%s%s", path, e ? ": " : "",
	                e ? strerror(e) : "");
}

/* Writes straight into a device or a pipe (/dev/null, /dev/stdout, a
 * FIFO), which cannot be replaced atomically. */
static int cli_write_stream(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx,
                            bnn_err *err)
{
	FILE *f = fopen(path, "w");
	int bad, e;

	if (!f)
		return bnn_fail(err, BNN_EIO, "cannot write %s: %s", path, strerror(errno));
	errno = 0;
	bad = fill(f, ctx) != 0 || fflush(f) != 0;
	e = errno;
	if (fclose(f) != 0 || bad)
		return cli_write_error(path, bad ? e : errno, err);
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
	errno = 0;
	if (fill(stdout, ctx) != 0 || fflush(stdout) != 0)
		return cli_write_error("standard output", errno, err);
	return BNN_OK;
}

int bnn_cli_predict(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_mixture mix;
	struct cli_pred p, cal;
	struct bnn_cli_conformal conf;
	bnn_err err;
	struct cli_rows rows;
	int rc;

	memset(&p, 0, sizeof p);
	memset(&cal, 0, sizeof cal);
	if ((rc = bnn_cli_conformal_options(m, a, &conf)))
		return rc;
	if ((rc = cli_state_load(m, a, &mix)))
		return rc;
	if ((rc = cli_pred_run(m, a, &mix, a->data, NULL, 0, &p)) ||
	    (a->conformal &&
	     (rc = cli_pred_run(m, a, &mix, a->conformal, a->conformal_labels, 1, &cal))))
		goto done; /* the ranks have agreed */
	if (a->rank == 0 &&
	    !(rc = cli_pred_check(m, a, a->data, !bnn_likelihood_regression(m), &p)) &&
	    !(a->conformal &&
	      ((rc = cli_pred_check(m, a, a->conformal, 0, &cal)) ||
	       (rc = bnn_cli_conformal_fit(m, a, &conf, cal.probs, cal.var, cal.ds.y, cal.ds.n)) ||
	       (rc = bnn_cli_conformal_apply(m, a, &conf, p.probs, p.var, NULL, p.ds.n))))) {
		rows.conf = &conf;
		rows.m = m;
		rows.probs = p.probs;
		rows.var = p.var;
		rows.aleatoric = p.aleatoric;
		rows.epistemic = p.epistemic;
		rows.p = &p;
		rows.n = p.ds.n;
		if (bnn_cli_write_file(a->out, cli_write_rows, &rows, &err))
			rc = bnn_cli_error(a, "%s", err.message);
	}
	rc = bnn_cli_agree(a, rc); /* rank 0 has said why */
done:
	bnn_cli_conformal_free(&conf);
	cli_pred_free(&p);
	cli_pred_free(&cal);
	bnn_mixture_free(&mix);
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
