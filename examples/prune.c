/*
 * prune.c: the weight-pruning experiment of the BADAM paper (Kessler et
 * al., section 4 and appendix D.2) for a classifier with a mean-field
 * posterior, run by `make prune` through examples/prune.sh
 * (docs/examples.md).
 *
 *   prune --load CKPT --data IMAGES --labels LABELS --out PREFIX
 *         [--fractions F1,F2,...]
 *
 * The model is compiled into the program: the build generates its C with
 * bnnc and defines PRUNE_MODEL as the name of its descriptor (by default
 * fashion_bayes_model, examples/fashion_bayes.bnn).  The checkpoint must
 * hold a posterior (sigma), e.g. one trained with --optimizer badam.
 *
 * For each fraction p, every weight of the posterior mean μ (the weight
 * matrices of the meanfield layers; biases and point parameters are left
 * alone) is ranked over the whole network by a score, the ⌊p·n⌋ weights
 * with the lowest scores are set to zero, and the pruned mean network is
 * evaluated on the test data (accuracy and NLL at the mean, no sampling):
 *
 *   snr        |μ|/σ, the posterior's signal-to-noise ratio (the paper's
 *              BADAM pruning);
 *   magnitude  |μ|, the paper's baseline ("a model with Σ = 1").
 *
 * Both start from the same μ, so they differ only in which weights go.
 * Output: PREFIX.csv with the columns
 *   fraction,pruned,accuracy_snr,nll_snr,accuracy_magnitude,nll_magnitude
 * (pruned: how many weights were set to zero), the chart PREFIX.svg (accuracy
 * against fraction pruned, one line per score; its data in
 * PREFIX_plot.csv), and the same table on standard output.
 *
 * Exit status: 0 success, 1 a file could not be read or written (or the
 * checkpoint has no posterior), 2 a usage error.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

#ifndef PRUNE_MODEL
#define PRUNE_MODEL fashion_bayes_model
#endif
extern const bnn_model PRUNE_MODEL;

#define PR_OK            0
#define PR_FAIL          1
#define PR_USAGE         2
#define PR_MAX_FRACTIONS 64

static const char *pr_prog = "prune";

/* The fractions pruned when --fractions is not given: 0 to 0.95 by 0.05. */
static const double pr_default_fractions[] = { 0,    0.05, 0.1,  0.15, 0.2,  0.25, 0.3,
	                                       0.35, 0.4,  0.45, 0.5,  0.55, 0.6,  0.65,
	                                       0.7,  0.75, 0.8,  0.85, 0.9,  0.95 };

static void pr_help(void)
{
	printf("Usage: %s --load CKPT --data IMAGES --labels LABELS --out PREFIX\n"
	       "             [--fractions F1,F2,...]\n"
	       "Prune the weights of model '%s' by signal-to-noise ratio |mu|/sigma and\n"
	       "by magnitude |mu|, and evaluate the pruned posterior mean on the data\n"
	       "(IDX images and labels, or a CSV file with the label in the last column\n"
	       "and no --labels).  Writes PREFIX.csv, PREFIX.svg and PREFIX_plot.csv.\n"
	       "Fractions: each in [0, 1]; default 0, 0.05, ..., 0.95.\n",
	       pr_prog, PRUNE_MODEL.name);
}

static int pr_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int pr_usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", pr_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", pr_prog);
	return PR_USAGE;
}

static int pr_fail(const bnn_err *err)
{
	fprintf(stderr, "%s: %s\n", pr_prog, err->message);
	return PR_FAIL;
}

/* "F1,F2,..." into f[], each a number in [0, 1]. */
static int pr_fractions(const char *text, double *f, int *n)
{
	const char *s = text;

	*n = 0;
	for (;;) {
		char *end;
		double v;
		errno = 0;
		v = strtod(s, &end);
		if (end == s || (*end && *end != ',') || errno == ERANGE || !(v >= 0 && v <= 1))
			return pr_usage("--fractions: '%s' is not a list of numbers in [0, 1]",
			                text);
		if (*n == PR_MAX_FRACTIONS)
			return pr_usage("--fractions: at most %d values", PR_MAX_FRACTIONS);
		f[(*n)++] = v;
		if (!*end)
			return PR_OK;
		s = end + 1;
	}
}

/* The pruned weights: where they live in the flat parameter vector. */
struct pr_weights {
	long n;      /* weights in all (the size of the arrays below) */
	long *index; /* their offsets in params */
	float *w;    /* a gathered copy of μ, pruned in place */
	float *snr;  /* |μ|/σ of each */
};

/* Collects the weight matrices of the meanfield layers. */
static int pr_weights_gather(const bnn_state *st, struct pr_weights *pw)
{
	const bnn_model *m = st->model;
	long k = 0, j;
	float *sigma;
	int i, pass;

	memset(pw, 0, sizeof *pw);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0, k = 0; i < m->ntensors; i++) {
			const bnn_tensor *t = &m->tensors[i];
			if (t->role != BNN_ROLE_WEIGHT || t->layer < 0 ||
			    !(m->layers[t->layer].caps & BNN_CAP_SIGMA))
				continue;
			for (j = 0; j < t->size; j++, k++)
				if (pass == 1)
					pw->index[k] = t->offset + j;
		}
		if (pass == 0) {
			pw->n = k;
			if (k == 0)
				return 0;
			pw->index = malloc((size_t)k * sizeof *pw->index);
			pw->w = malloc((size_t)k * sizeof *pw->w);
			pw->snr = malloc((size_t)k * sizeof *pw->snr);
			if (!pw->index || !pw->w || !pw->snr)
				return -1;
		}
	}
	sigma = malloc((size_t)pw->n * sizeof *sigma);
	if (!sigma)
		return -1;
	for (k = 0; k < pw->n; k++) {
		pw->w[k] = st->params[pw->index[k]];
		sigma[k] = st->sigma[pw->index[k]];
	}
	/* BADAM's pruning score (section 4); σ = 0 would give +inf, never
	 * pruned, but a trained posterior has σ > 0 on these tensors */
	bnn_snr(pw->n, pw->w, sigma, pw->snr);
	free(sigma);
	return 0;
}

static void pr_weights_free(struct pr_weights *pw)
{
	free(pw->index);
	free(pw->w);
	free(pw->snr);
}

/* Accuracy and NLL of the mean network with the fraction f of the weights
 * of lowest score (NULL: magnitude) zeroed; *pruned receives how many
 * were zeroed (bnn_prune_by_score's k). */
static int pr_evaluate(const bnn_state *st, const struct pr_weights *pw, const float *score,
                       double f, const bnn_dataset *ds, const int *labels, float *params,
                       float *probs, bnn_class_metrics *cm, long *pruned, bnn_err *err)
{
	const bnn_model *m = st->model;
	bnn_state tmp = *st;
	float *w = params + m->nparams; /* scratch: the gathered weights */
	long k;
	int rc;

	memcpy(params, st->params, (size_t)m->nparams * sizeof *params);
	memcpy(w, pw->w, (size_t)pw->n * sizeof *w);
	*pruned = bnn_prune_by_score(pw->n, w, score, f);
	for (k = 0; k < pw->n; k++)
		params[pw->index[k]] = w[k];
	tmp.params = params;
	if ((rc = bnn_predict(&tmp, ds, 0, 0, &(bnn_prediction){ .probs = probs }, err)))
		return rc;
	return bnn_metrics_classification(probs, labels, ds->n, (int)m->outputs, BNN_DEFAULT_BINS,
	                                  cm, err);
}

/* The data set: IDX images and labels, or a CSV file with the label last;
 * standardised as the checkpoint says. */
static int pr_load_data(const bnn_state *st, const char *data, const char *labels, bnn_dataset *ds,
                        bnn_err *err)
{
	size_t len = strlen(data);
	int rc;

	if (len > 4 && strcmp(data + len - 4, ".csv") == 0 && !labels) {
		bnn_csv_options o;
		memset(&o, 0, sizeof o);
		o.targets = 1;
		rc = bnn_data_load_csv(data, &o, ds, err);
	} else {
		rc = bnn_data_load_idx(data, labels, ds, err);
	}
	if (rc)
		return rc;
	if (st->standardize.features > 0)
		rc = bnn_standardizer_apply(&st->standardize, ds, err);
	if (!rc)
		rc = bnn_data_fits(st->model, ds, 1, err);
	if (!rc)
		rc = bnn_data_check_labels(ds, (int)st->model->outputs, data, err);
	if (rc)
		bnn_dataset_free(ds);
	return rc;
}

/* Writes PREFIX.csv, PREFIX.svg and PREFIX_plot.csv. */
static int pr_write(const char *prefix, const double *f, int nf, const long *pruned,
                    const bnn_class_metrics *snr, const bnn_class_metrics *mag, long nweights,
                    bnn_err *err)
{
	size_t len = strlen(prefix) + 16;
	char *path = malloc(len), *plot = malloc(len), *csv = malloc(len);
	double *x = malloc((size_t)nf * sizeof *x), *ys = malloc((size_t)nf * sizeof *ys);
	double *ym = malloc((size_t)nf * sizeof *ym);
	bnn_plot_curve c[2];
	FILE *fp = NULL;
	char title[128];
	bnn_plot_curves_options text;
	int i, rc = BNN_OK;

	if (!path || !plot || !csv || !x || !ys || !ym) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory");
		goto done;
	}
	snprintf(csv, len, "%s.csv", prefix);
	snprintf(path, len, "%s.svg", prefix);
	snprintf(plot, len, "%s_plot.csv", prefix);
	if (!(fp = fopen(csv, "w"))) {
		rc = bnn_fail(err, BNN_EIO, "cannot write %s: %s", csv, strerror(errno));
		goto done;
	}
	fprintf(fp, "fraction,pruned,accuracy_snr,nll_snr,accuracy_magnitude,nll_magnitude\n");
	for (i = 0; i < nf; i++)
		fprintf(fp, "%.9g,%ld,%.9g,%.9g,%.9g,%.9g\n", f[i], pruned[i], snr[i].accuracy,
		        snr[i].nll, mag[i].accuracy, mag[i].nll);
	if (fclose(fp) != 0) {
		rc = bnn_fail(err, BNN_EIO, "cannot write %s: %s", csv, strerror(errno));
		goto done;
	}
	for (i = 0; i < nf; i++) {
		x[i] = f[i];
		ys[i] = snr[i].accuracy;
		ym[i] = mag[i].accuracy;
	}
	memset(c, 0, sizeof c);
	c[0].name = "by SNR |mu|/sigma";
	c[1].name = "by magnitude |mu|";
	c[0].n = c[1].n = nf;
	c[0].x = c[1].x = x;
	c[0].y = ys;
	c[1].y = ym;
	c[0].style = c[1].style = BNN_PLOT_LINE;
	snprintf(title, sizeof title, "Pruning %ld weights of %s", nweights, PRUNE_MODEL.name);
	text.title = title;
	text.xlabel = "fraction of weights pruned";
	text.ylabel = "test accuracy";
	rc = bnn_plot_curves(path, plot, c, 2, &text, err);
done:
	free(path);
	free(plot);
	free(csv);
	free(x);
	free(ys);
	free(ym);
	return rc;
}

int main(int argc, char **argv)
{
	const char *ckpt = NULL, *data = NULL, *labels_path = NULL, *prefix = NULL;
	double fractions[PR_MAX_FRACTIONS];
	int nf = (int)(sizeof pr_default_fractions / sizeof pr_default_fractions[0]);
	bnn_class_metrics snr[PR_MAX_FRACTIONS], mag[PR_MAX_FRACTIONS];
	long pruned[PR_MAX_FRACTIONS], k;
	bnn_state st;
	bnn_dataset ds;
	struct pr_weights pw;
	float *params = NULL, *probs = NULL;
	int *labels = NULL, i, rc;
	bnn_err err;

	memcpy(fractions, pr_default_fractions, sizeof pr_default_fractions);
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i];
		if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
			pr_help();
			return PR_OK;
		}
		if (i + 1 >= argc)
			return pr_usage("option '%s' needs a value", opt);
		if (strcmp(opt, "--load") == 0)
			ckpt = argv[++i];
		else if (strcmp(opt, "--data") == 0)
			data = argv[++i];
		else if (strcmp(opt, "--labels") == 0)
			labels_path = argv[++i];
		else if (strcmp(opt, "--out") == 0)
			prefix = argv[++i];
		else if (strcmp(opt, "--fractions") == 0) {
			if ((rc = pr_fractions(argv[++i], fractions, &nf)))
				return rc;
		} else
			return pr_usage("unknown option '%s'", opt);
	}
	if (!ckpt || !data || !prefix)
		return pr_usage("--load, --data and --out are required");

	if (bnn_state_load(&st, &PRUNE_MODEL, ckpt, &err))
		return pr_fail(&err);
	if (!st.sigma) {
		fprintf(stderr,
		        "%s: %s holds a point estimate, not a posterior: train model '%s' "
		        "with --optimizer badam (or vogn, ivon, bbb)\n",
		        pr_prog, ckpt, PRUNE_MODEL.name);
		bnn_state_free(&st);
		return PR_FAIL;
	}
	if (pr_load_data(&st, data, labels_path, &ds, &err)) {
		bnn_state_free(&st);
		return pr_fail(&err);
	}
	rc = PR_FAIL;
	if (pr_weights_gather(&st, &pw)) {
		fprintf(stderr, "%s: out of memory\n", pr_prog);
		goto done;
	}
	if (pw.n == 0) {
		fprintf(stderr, "%s: model '%s' has no meanfield weights to prune\n", pr_prog,
		        PRUNE_MODEL.name);
		goto done;
	}
	params = malloc((size_t)(PRUNE_MODEL.nparams + pw.n) * sizeof *params);
	probs = malloc((size_t)(ds.n * PRUNE_MODEL.outputs) * sizeof *probs);
	labels = malloc((size_t)ds.n * sizeof *labels);
	if (!params || !probs || !labels) {
		fprintf(stderr, "%s: out of memory\n", pr_prog);
		goto done;
	}
	for (k = 0; k < ds.n; k++)
		labels[k] = (int)ds.y[k];

	printf("%-9s %9s %13s %9s %13s %9s\n", "fraction", "pruned", "accuracy_snr", "nll_snr",
	       "accuracy_mag", "nll_mag");
	for (i = 0; i < nf; i++) {
		long dummy;
		if (pr_evaluate(&st, &pw, pw.snr, fractions[i], &ds, labels, params, probs, &snr[i],
		                &pruned[i], &err) ||
		    pr_evaluate(&st, &pw, NULL, fractions[i], &ds, labels, params, probs, &mag[i],
		                &dummy, &err)) {
			pr_fail(&err);
			goto done;
		}
		printf("%-9.3g %9ld %13.4f %9.4f %13.4f %9.4f\n", fractions[i], pruned[i],
		       snr[i].accuracy, snr[i].nll, mag[i].accuracy, mag[i].nll);
		fflush(stdout);
	}
	if (pr_write(prefix, fractions, nf, pruned, snr, mag, pw.n, &err)) {
		pr_fail(&err);
		goto done;
	}
	rc = PR_OK;
done:
	pr_weights_free(&pw);
	free(params);
	free(probs);
	free(labels);
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}
