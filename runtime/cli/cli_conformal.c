/*
 * cli_conformal.c: split conformal prediction in eval and predict
 * (docs/conformal.md).  `--conformal FILE` (with `--conformal-labels` for
 * IDX) names calibration data, exchangeable with the data predicted and
 * unseen by training; its predictions (the same --mc and --seed as the
 * command's) give the scores whose conformal quantile q
 * (bnn_conformal_quantile, at `--level`, default 0.9) makes the sets or
 * intervals of the data predicted.  eval reports their empirical coverage
 * and mean set size or width; predict writes them as columns.
 *
 * Methods (`--conformal-method`): for a categorical model aps (the
 * default), raps (λ = 0.01, k_reg = 5) or lac; for a regression model
 * normalized (|y − μ|/σ, the default) or residual (|y − μ|).  A model
 * whose predictive variance is infinite (studentt with ν ≤ 2) has no σ to
 * normalise by: its default is residual, and normalized is refused
 * (cli_conformal_unnormalizable).  The uniform
 * draws that randomise aps and raps come from --seed: calibration example
 * i takes the i-th draw of the stream bnn_rng_derive(bnn_rng_derive(seed,
 * CONFORMAL_STREAM), 0), predicted example i of stream 1, so a run is
 * repeatable and the two sets of draws are independent.  A multi-label
 * (bernoulli) model is refused.
 *
 * eval's `--conformal-adaptive GAMMA` adds adaptive conformal inference
 * (bnn_conformal_adaptive; Gibbs and Candès 2021): the evaluated examples
 * in file order, each at the level 1 − α_t of the same calibration scores,
 * α_t updated with step size GAMMA in (0, 1) as each label is seen; with
 * `--conformal-online` each example's score joins the calibration scores
 * once its label is seen (the online run of bnn_conformal_adaptive).  eval
 * gathers every rank's predictions on rank 0 before it calls
 * bnn_cli_conformal_apply (cli_eval.c), so the sequence is the file's
 * under mpirun too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

#define CONFORMAL_STREAM      0x636f6e66u /* "conf" */
#define CONFORMAL_LEVEL       0.9
#define CONFORMAL_RAPS_LAMBDA 0.01
#define CONFORMAL_RAPS_KREG   5

/* --conformal-online changes adaptive conformal inference: it needs
 * --conformal-adaptive. */
static int cli_conformal_online_alone(struct bnn_cli_args *a)
{
	return bnn_cli_usage_error(a, "--conformal-online goes with --conformal-adaptive");
}

/* --level, --conformal-method, --conformal-labels, --conformal-adaptive
 * and --conformal-online need --conformal (and the last,
 * --conformal-adaptive). */
static int cli_conformal_alone(struct bnn_cli_args *a)
{
	const char *alone = a->conformal_labels     ? "--conformal-labels"
	                    : a->level              ? "--level"
	                    : a->conformal_method   ? "--conformal-method"
	                    : a->conformal_adaptive ? "--conformal-adaptive"
	                                            : NULL;

	if (alone)
		return bnn_cli_usage_error(a, "%s goes with --conformal", alone);
	return a->conformal_online ? cli_conformal_online_alone(a) : BNN_CLI_OK;
}

/* --conformal-method normalized with a model whose predictive variance is
 * infinite: |y − μ|/σ would be 0 for every example, q 0 and the intervals
 * ±0·∞; refused, naming the likelihood and ν. */
static int cli_conformal_unnormalizable(const bnn_model *m, struct bnn_cli_args *a)
{
	return bnn_cli_usage_error(a,
	                           "--conformal-method normalized: model '%s' is %s with df = "
	                           "%g, whose predictive variance is infinite (df <= 2), so "
	                           "there is no standard deviation to divide |y - mu| by: use "
	                           "residual (the default for this model)",
	                           m->name, bnn_likelihood_name(m->likelihood), m->df);
}

int bnn_cli_conformal_options(const bnn_model *m, struct bnn_cli_args *a,
                              struct bnn_cli_conformal *c)
{
	int gaussian = bnn_likelihood_regression(m);
	char *end;

	memset(c, 0, sizeof *c);
	if (!a->conformal)
		return cli_conformal_alone(a);
	if (bnn_likelihood_targets(m) == BNN_TARGETS_BINARY)
		return bnn_cli_error(
		        a,
		        "--conformal: model '%s' is bernoulli (multi-label): conformal "
		        "prediction here makes sets of classes of categorical models "
		        "and intervals of gaussian ones",
		        m->name);
	c->level = CONFORMAL_LEVEL;
	if (a->level) {
		c->level = strtod(a->level, &end);
		if (end == a->level || *end || !(c->level > 0 && c->level < 1))
			return bnn_cli_usage_error(
			        a, "--level: '%s' is not a coverage level in (0, 1), such as 0.9",
			        a->level);
	}
	if (a->conformal_adaptive) {
		c->gamma = strtod(a->conformal_adaptive, &end);
		if (end == a->conformal_adaptive || *end || !(c->gamma > 0 && c->gamma < 1))
			return bnn_cli_usage_error(a,
			                           "--conformal-adaptive: '%s' is not a step size "
			                           "in (0, 1), such as 0.005",
			                           a->conformal_adaptive);
	} else if (a->conformal_online) {
		return cli_conformal_online_alone(a);
	}
	c->online = a->conformal_online;
	c->o.method = !gaussian                           ? BNN_CONFORMAL_APS
	              : bnn_likelihood_variance_finite(m) ? BNN_CONFORMAL_NORMALIZED
	                                                  : BNN_CONFORMAL_RESIDUAL;
	c->o.lambda = CONFORMAL_RAPS_LAMBDA;
	c->o.kreg = CONFORMAL_RAPS_KREG;
	if (a->conformal_method) {
		c->o.method = bnn_conformal_method_from_name(a->conformal_method);
		if (c->o.method < 0)
			return bnn_cli_usage_error(
			        a,
			        "--conformal-method: '%s' is not aps, raps, lac, "
			        "residual or normalized",
			        a->conformal_method);
		if (bnn_conformal_is_regression(c->o.method) != gaussian)
			return bnn_cli_usage_error(
			        a,
			        "--conformal-method: '%s' is for %s, and model "
			        "'%s' is %s: use %s",
			        a->conformal_method, gaussian ? "classifiers" : "regression",
			        m->name, bnn_likelihood_name(m->likelihood),
			        gaussian ? "normalized or residual" : "aps, raps or lac");
		if (c->o.method == BNN_CONFORMAL_NORMALIZED && !bnn_likelihood_variance_finite(m))
			return cli_conformal_unnormalizable(m, a);
	}
	return BNN_CLI_OK;
}

/* n uniforms in [0, 1) of the stream for the calibration (0) or the
 * predicted data (1); NULL for a method without randomisation. */
static double *cli_conformal_uniforms(const struct bnn_cli_conformal *c, uint64_t seed, long n,
                                      uint64_t which)
{
	double *u;
	bnn_rng rng;
	long i;

	if (c->o.method != BNN_CONFORMAL_APS && c->o.method != BNN_CONFORMAL_RAPS)
		return NULL;
	if (!(u = malloc((size_t)n * sizeof *u)))
		return NULL;
	bnn_rng_seed(&rng, bnn_rng_derive(bnn_rng_derive(seed, CONFORMAL_STREAM), which));
	for (i = 0; i < n; i++)
		u[i] = bnn_rng_uniform(&rng);
	return u;
}

/* The scores of n examples: n × k class scores, or n regression scores
 * (y needed). */
static int cli_conformal_scores(const bnn_model *m, const struct bnn_cli_conformal *c,
                                uint64_t seed, uint64_t which, const float *probs, const float *var,
                                const float *y, long n, double **scores, bnn_err *err)
{
	int gaussian = bnn_likelihood_regression(m), rc;
	long k = gaussian ? 1 : bnn_model_predictions(m);
	double *u = gaussian ? NULL : cli_conformal_uniforms(c, seed, n, which);

	*scores = malloc((size_t)(n * k) * sizeof **scores);
	if (!*scores || (!gaussian && !u && c->o.method != BNN_CONFORMAL_LAC)) {
		free(u);
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the scores of %ld examples", n);
	}
	if (gaussian)
		rc = bnn_conformal_regression_scores(probs, var, y, n, bnn_model_predictions(m),
		                                     c->o.method, *scores, err);
	else
		rc = bnn_conformal_class_scores(probs, n, (int)k, u, &c->o, *scores, err);
	free(u);
	return rc;
}

/* The labels of a classifier's targets y (n). */
static int *cli_conformal_labels(const bnn_model *m, const float *y, long n)
{
	int *labels = malloc((size_t)n * sizeof *labels);
	long i;

	for (i = 0; labels && i < n; i++)
		labels[i] = (int)y[i * m->targets];
	return labels;
}

int bnn_cli_conformal_fit(const bnn_model *m, struct bnn_cli_args *a, struct bnn_cli_conformal *c,
                          const float *probs, const float *var, const float *y, long n_cal)
{
	int gaussian = bnn_likelihood_regression(m);
	double *scores = NULL, *own = NULL;
	int *labels = NULL, rc = BNN_OK;
	bnn_err err;
	long i;

	c->n_cal = n_cal;
	if ((rc = cli_conformal_scores(m, c, a->train.seed, 0, probs, var, y, n_cal, &scores,
	                               &err)))
		goto done;
	if (!gaussian) { /* each example's score is its true class's */
		labels = cli_conformal_labels(m, y, n_cal);
		own = malloc((size_t)n_cal * sizeof *own);
		if (!labels || !own) {
			rc = bnn_fail(&err, BNN_ENOMEM, "out of memory");
			goto done;
		}
		for (i = 0; i < n_cal; i++)
			own[i] = scores[i * bnn_model_predictions(m) + labels[i]];
	}
	rc = bnn_conformal_quantile(own ? own : scores, n_cal, c->level, &c->q, &err);
	c->cal = own ? own : scores; /* kept for --conformal-adaptive */
done:
	if (scores != c->cal)
		free(scores);
	if (own != c->cal)
		free(own);
	free(labels);
	return rc ? bnn_cli_error(a, "--conformal %s: %s", a->conformal, err.message) : BNN_CLI_OK;
}

/* --conformal-adaptive: adaptive conformal inference over the n examples
 * in file order (their scores c->scores, labels NULL for intervals),
 * online with --conformal-online, its JSON keys after split conformal's. */
static int cli_conformal_adaptive(struct bnn_cli_args *a, const struct bnn_cli_conformal *c,
                                  const int *labels)
{
	bnn_conformal_examples x = { c->scores, labels, c->var, c->n, c->k, c->o.method };
	bnn_conformal_adaptive_run run = { .level = c->level,
		                           .gamma = c->gamma,
		                           .online = c->online };
	bnn_err err;
	char key[40];

	if (bnn_conformal_adaptive(c->cal, c->n_cal, &x, &run, &err))
		return bnn_cli_error(a, "--conformal-adaptive: %s", err.message);
	snprintf(key, sizeof key, "conformal_adaptive_%s", c->classes ? "set_size" : "width");
	bnn_cli_json_number("conformal_adaptive_gamma", c->gamma, 1);
	printf(", \"conformal_adaptive_online\": %s", c->online ? "true" : "false");
	bnn_cli_json_number("conformal_adaptive_coverage", run.coverage, 1);
	bnn_cli_json_number(key, run.mean_size, 1); /* null: every interval infinite */
	printf(", \"conformal_adaptive_infinite\": %ld", run.infinite);
	return BNN_CLI_OK;
}

int bnn_cli_conformal_apply(const bnn_model *m, struct bnn_cli_args *a, struct bnn_cli_conformal *c,
                            const float *probs, const float *var, const float *y, long n)
{
	int gaussian = bnn_likelihood_regression(m), *labels = NULL, rc = BNN_CLI_OK;
	double coverage = 0, size = 0;
	bnn_err err;

	c->n = n;
	c->k = bnn_model_predictions(m);
	c->classes = !gaussian;
	c->mean = probs;
	c->var = var;
	if (gaussian && !y) /* predict's intervals need no scores: μ ± q (or q·σ) */
		return BNN_CLI_OK;
	if (cli_conformal_scores(m, c, a->train.seed, 1, probs, var, y, n, &c->scores, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (!y)
		return BNN_CLI_OK;
	if (gaussian) {
		bnn_conformal_intervals(var, c->scores, n, c->k, c->o.method, c->q, &coverage,
		                        &size);
	} else {
		if (!(labels = cli_conformal_labels(m, y, n)))
			return bnn_cli_error(a, "out of memory");
		bnn_conformal_sets(c->scores, labels, n, (int)c->k, c->q, &coverage, &size);
	}
	printf(", \"conformal_method\": \"%s\"", bnn_conformal_method_name(c->o.method));
	bnn_cli_json_number("conformal_level", c->level, 1);
	printf(", \"conformal_n\": %ld", c->n_cal);
	bnn_cli_json_number("conformal_quantile", c->q, 1);
	bnn_cli_json_number("conformal_coverage", coverage, 1);
	bnn_cli_json_number(gaussian ? "conformal_width" : "conformal_set_size", size, 1);
	if (c->gamma > 0)
		rc = cli_conformal_adaptive(a, c, labels);
	free(labels);
	return rc;
}

void bnn_cli_conformal_header(FILE *f, const struct bnn_cli_conformal *c)
{
	long j;

	if (!c->mean)
		return;
	if (c->classes) {
		fprintf(f, ",set");
		return;
	}
	for (j = 0; j < c->k; j++)
		fprintf(f, ",lo_%ld,hi_%ld", j, j);
}

void bnn_cli_conformal_row(FILE *f, const struct bnn_cli_conformal *c, long i)
{
	long j;
	int first = 1;

	if (!c->mean)
		return;
	if (c->classes) { /* the classes in the set, "3;5", in class order */
		fputc(',', f);
		for (j = 0; j < c->k; j++)
			if (c->scores[i * c->k + j] <= c->q) {
				fprintf(f, "%s%ld", first ? "" : ";", j);
				first = 0;
			}
		return;
	}
	for (j = 0; c->mean && j < c->k; j++) {
		double mu = c->mean[i * c->k + j];
		double h = bnn_conformal_half_width(c->o.method, c->q, c->var[i * c->k + j]);
		fprintf(f, ",%.9g,%.9g", mu - h, mu + h);
	}
}

void bnn_cli_conformal_free(struct bnn_cli_conformal *c)
{
	free(c->scores);
	free(c->cal);
	c->scores = NULL;
	c->cal = NULL;
}
