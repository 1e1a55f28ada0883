/*
 * cli_sensitivity.c: the driver's sensitivity command (docs/sensitivity.md).
 * Loads a checkpoint of a meanfield classifier and a labelled data set,
 * scores every example by bnn_sensitivity_scores() (the IVON paper's
 * |v_i e_i|, §4.4.2), and reports: the N most and N least sensitive
 * examples on stdout (ranked by score, ties by index, so the listing is
 * deterministic), with the data set's mean NLL and leave-one-out NLL
 * estimate; every example as CSV (--out); and, for image data, the listed
 * examples drawn as a contact sheet (--svg, bnn_plot_contact_sheet) from
 * the pixels as stored, before the checkpoint's standardisation.
 * One process: under MPI every rank would repeat the same work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "bnn_plot.h"
#include "cli_internal.h"

/* Examples listed each way without --top. */
#define SENS_DEFAULT_TOP 10

/* What the command computed, for its writers. */
struct sens_run {
	const bnn_model *m;
	const char *ckpt, *data;
	bnn_dataset ds;
	float *raw;  /* the inputs as loaded (before standardising), or NULL */
	long n, top; /* examples; listed each way */
	double *score, *loo, *nll;
	int *predicted;
	long *order; /* example indices by decreasing score, ties by index */
};

static void sens_run_free(struct sens_run *r)
{
	bnn_dataset_free(&r->ds);
	free(r->raw);
	free(r->score);
	free(r->loo);
	free(r->nll);
	free(r->predicted);
	free(r->order);
}

/* qsort's comparison over order[]: decreasing score, then increasing
 * index (qsort gets the scores through this pointer). */
static const double *sens_sort_scores;

static int sens_cmp(const void *a, const void *b)
{
	long i = *(const long *)a, j = *(const long *)b;
	double si = sens_sort_scores[i], sj = sens_sort_scores[j];

	if (si != sj)
		return si > sj ? -1 : 1;
	return (i > j) - (i < j);
}

static int sens_label(const struct sens_run *r, long i)
{
	return (int)r->ds.y[i * r->ds.targets];
}

static int sens_write_csv(FILE *f, void *ctx)
{
	const struct sens_run *r = ctx;
	long i;

	fputs("index,label,predicted,score,nll,loo_nll\n", f);
	for (i = 0; i < r->n; i++)
		fprintf(f, "%ld,%d,%d,%.9g,%.9g,%.9g\n", i, sens_label(r, i), r->predicted[i],
		        r->score[i], r->nll[i], r->loo[i]);
	return ferror(f) ? -1 : 0;
}

/* One listing line per example order[from .. from + count). */
static void sens_list(const struct sens_run *r, const char *what, long from, long count)
{
	long k;

	printf("%s:\n  %6s %8s %6s %10s %12s\n", what, "rank", "index", "label", "predicted",
	       "score");
	for (k = from; k < from + count; k++) {
		long i = r->order[k];
		printf("  %6ld %8ld %6d %10d %12.6g\n", k + 1, i, sens_label(r, i), r->predicted[i],
		       r->score[i]);
	}
}

static void sens_report(const struct sens_run *r)
{
	double score = 0, nll = 0, loo = 0;
	long i;

	for (i = 0; i < r->n; i++) {
		score += r->score[i];
		nll += r->nll[i];
		loo += r->loo[i];
	}
	printf("sensitivity of %ld examples of %s under %s: mean score %.6g, nll %.6g, "
	       "loo_nll %.6g\n",
	       r->n, r->data, r->ckpt, score / (double)r->n, nll / (double)r->n,
	       loo / (double)r->n);
	sens_list(r, "most sensitive", 0, r->top);
	sens_list(r, "least sensitive", r->n - r->top, r->top);
}

/* --svg's refusal of data that are not images, checked when the data are
 * read, before any scoring or printing. */
static int sens_sheet_check(struct bnn_cli_args *a, const struct sens_run *r)
{
	if (r->ds.rank == 2 || r->ds.rank == 3)
		return BNN_CLI_OK;
	return bnn_cli_error(a,
	                     "--svg draws image data (IDX examples of 2 or 3 dimensions); "
	                     "the examples of %s have %d",
	                     r->data, r->ds.rank);
}

/* The contact sheet of the listed examples (image data only: see
 * sens_sheet_check). */
static int sens_sheet(struct bnn_cli_args *a, const struct sens_run *r)
{
	const bnn_dataset *ds = &r->ds;
	long shape[3], k;
	bnn_plot_image *im;
	bnn_plot_sheet_row rows[2];
	char title[256];
	bnn_err err;
	int rc = BNN_CLI_OK;

	shape[0] = ds->rank == 3 ? ds->shape[0] : 1;
	shape[1] = ds->shape[ds->rank - 2];
	shape[2] = ds->shape[ds->rank - 1];
	im = malloc((size_t)(2 * r->top) * sizeof *im);
	if (!im)
		return bnn_cli_error(a, "out of memory for the contact sheet");
	for (k = 0; k < 2 * r->top; k++) {
		long i = r->order[k < r->top ? k : r->n - 2 * r->top + k];
		im[k].pixels = r->raw + i * ds->features;
		im[k].index = i;
		im[k].label = sens_label(r, i);
		im[k].score = r->score[i];
	}
	rows[0] = (bnn_plot_sheet_row){ "most sensitive", im, r->top };
	rows[1] = (bnn_plot_sheet_row){ "least sensitive", im + r->top, r->top };
	snprintf(title, sizeof title, "sensitivity |v e| of %s under %s", r->data, r->ckpt);
	if (bnn_plot_contact_sheet(a->svg, title, rows, 2, shape, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	free(im);
	return rc;
}

/* The data (labels required), its raw inputs kept for the sheet, then
 * standardised as the checkpoint says. */
static int sens_load(struct bnn_cli_args *a, const bnn_state *st, struct sens_run *r)
{
	bnn_err err;

	if (bnn_cli_load(r->m, a, a->data, a->labels, 1, &r->ds, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (a->svg && sens_sheet_check(a, r))
		return BNN_CLI_FAIL;
	if (a->svg) {
		size_t bytes = (size_t)(r->ds.n * r->ds.features) * sizeof *r->raw;
		r->raw = malloc(bytes + 1);
		if (!r->raw)
			return bnn_cli_error(a, "out of memory for %s", a->data);
		memcpy(r->raw, r->ds.x, bytes);
	}
	if (st->standardize.features > 0 && bnn_standardizer_apply(&st->standardize, &r->ds, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

static int sens_alloc(struct bnn_cli_args *a, struct sens_run *r)
{
	size_t n = (size_t)r->n + 1;

	r->score = malloc(n * sizeof *r->score);
	r->loo = malloc(n * sizeof *r->loo);
	r->nll = malloc(n * sizeof *r->nll);
	r->predicted = malloc(n * sizeof *r->predicted);
	r->order = malloc(n * sizeof *r->order);
	if (!r->score || !r->loo || !r->nll || !r->predicted || !r->order)
		return bnn_cli_error(a, "out of memory for the scores of %ld examples", r->n);
	return BNN_CLI_OK;
}

int bnn_cli_sensitivity(const bnn_model *m, struct bnn_cli_args *a)
{
	struct sens_run r;
	bnn_state st;
	bnn_err err;
	long i;
	int rc;

	memset(&r, 0, sizeof r);
	r.m = m;
	r.ckpt = a->load;
	r.data = a->data;
	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (bnn_sensitivity_check(&st, &err)) {
		rc = bnn_cli_error(a, "%s: %s", a->load, err.message);
		goto done;
	}
	if ((rc = sens_load(a, &st, &r)))
		goto done;
	r.n = r.ds.n;
	r.top = a->top > 0 ? a->top : SENS_DEFAULT_TOP;
	if (r.top > r.n / 2)
		r.top = r.n / 2 > 0 ? r.n / 2 : r.n; /* the two lists do not overlap */
	if ((rc = sens_alloc(a, &r)))
		goto done;
	if (bnn_sensitivity_scores(&st, &r.ds, NULL, r.n,
	                           &(bnn_sensitivity){ .score = r.score,
	                                               .loo_nll = r.loo,
	                                               .nll = r.nll,
	                                               .predicted = r.predicted },
	                           &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	for (i = 0; i < r.n; i++)
		r.order[i] = i;
	sens_sort_scores = r.score;
	qsort(r.order, (size_t)r.n, sizeof *r.order, sens_cmp);
	sens_report(&r);
	if (a->out && bnn_cli_write_file(a->out, sens_write_csv, &r, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	if (!rc && a->svg)
		rc = sens_sheet(a, &r);
done:
	sens_run_free(&r);
	bnn_state_free(&st);
	return rc;
}
