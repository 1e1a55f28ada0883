/*
 * analytic.c: the analytic predictive of a standalone classifier against
 * its Monte-Carlo predictive, on an image data set (bench/analytic.sh;
 * docs/standalone.md, "The analytic predictive", reports the numbers).
 *
 *   analytic IMAGES LABELS OOD_IMAGES [MC [TIMED [ROUNDS]]]
 *
 * It #includes a `bnnc --standalone --analytic` file (-DSA_MODEL=name
 * -DSA_UP=NAME -DSA_SOURCE='"name_infer.c"') and links libbnn only for
 * what is not inference: the IDX reader and the metrics.  For the analytic
 * predictive and the MC-sample one (MC, default 32, seed 1) it prints one
 * JSON line each with libbnn's accuracy, NLL and ECE (20 bins) on
 * IMAGES/LABELS and the OOD AUROC of OOD_IMAGES by predictive entropy
 * (summary[0]), then the speed: ROUNDS (default 5) rounds of one call over
 * the first TIMED (default 500) test images each, alternately analytic and
 * MC, in one process, one thread; the medians of the seconds per example
 * and of the ratio within each round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnn.h"

#include SA_SOURCE

#define SA_CAT_(a, b) a##b
#define SA_CAT(a, b)  SA_CAT_(a, b)
#define SA_INPUTS     SA_CAT(SA_UP, _INPUTS)
#define SA_OUTPUTS    SA_CAT(SA_UP, _OUTPUTS)
#define SA_WS_BYTES   SA_CAT(SA_UP, _WORKSPACE_BYTES)
#define SA_AN_BYTES   SA_CAT(SA_UP, _ANALYTIC_WORKSPACE_BYTES)
#define SA_PREDICT    SA_CAT(SA_MODEL, _predict_summary)
#define SA_ANALYTIC   SA_CAT(SA_MODEL, _predict_analytic)

static double ws[(SA_WS_BYTES > SA_AN_BYTES ? SA_WS_BYTES : SA_AN_BYTES) / 8 + 1];

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* mc < 0: the analytic predictive. */
static int predict(const float *x, long n, int mc, float *out, float *sum)
{
	if (mc < 0)
		return SA_ANALYTIC(x, n, ws, sizeof ws, out, sum);
	return SA_PREDICT(x, n, mc, 1, ws, sizeof ws, out, sum);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The metrics of one predictive. */
static int evaluate(const char *name, int mc, const bnn_dataset *test, const bnn_dataset *ood)
{
	float *p = malloc((size_t)test->n * SA_OUTPUTS * sizeof *p);
	float *po = malloc((size_t)ood->n * SA_OUTPUTS * sizeof *po);
	float *s = malloc((size_t)test->n * 3 * sizeof *s),
	      *so = malloc((size_t)ood->n * 3 * sizeof *so);
	double *h = malloc((size_t)test->n * sizeof *h), *ho = malloc((size_t)ood->n * sizeof *ho);
	int *labels = malloc((size_t)test->n * sizeof *labels), rc = 1;
	bnn_class_metrics cm;
	bnn_ood_metrics om;
	bnn_err err;
	double t0, t1;
	long i;
	memset(&err, 0, sizeof err);
	if (!p || !po || !s || !so || !h || !ho || !labels)
		goto done;
	t0 = now();
	if (predict(test->x, test->n, mc, p, s) != 0 || predict(ood->x, ood->n, mc, po, so) != 0)
		goto done;
	t1 = now();
	for (i = 0; i < test->n; i++) {
		labels[i] = (int)test->y[i];
		h[i] = s[3 * i];
	}
	for (i = 0; i < ood->n; i++)
		ho[i] = so[3 * i];
	if (bnn_metrics_classification(p, labels, test->n, SA_OUTPUTS, BNN_DEFAULT_BINS, &cm,
	                               &err) != BNN_OK ||
	    bnn_metrics_ood(h, test->n, ho, ood->n, &om, &err) != BNN_OK) {
		fprintf(stderr, "analytic: %s\n", err.message);
		goto done;
	}
	printf("{\"predictive\": \"%s\", \"mc\": %d, \"n\": %ld, \"accuracy\": %.4f, \"nll\": %.5f, "
	       "\"ece\": %.5f, \"ood_auroc\": %.4f, \"seconds\": %.2f}\n",
	       name, mc < 0 ? 0 : mc, test->n, cm.accuracy, cm.nll, cm.ece, om.auroc, t1 - t0);
	rc = 0;
done:
	free(p), free(po), free(s), free(so), free(h), free(ho), free(labels);
	return rc;
}

static int timing(const bnn_dataset *test, int mc, long n, int rounds)
{
	float *p = malloc((size_t)n * SA_OUTPUTS * sizeof *p),
	      *s = malloc((size_t)n * 3 * sizeof *s);
	double ta[64], tm[64], ratio[64];
	int r;
	if (!p || !s || rounds > 64)
		return 1;
	for (r = 0; r < rounds; r++) {
		double t0 = now(), t1, t2;
		if (predict(test->x, n, -1, p, s) != 0)
			return 1;
		t1 = now();
		if (predict(test->x, n, mc, p, s) != 0)
			return 1;
		t2 = now();
		ta[r] = (t1 - t0) / (double)n;
		tm[r] = (t2 - t1) / (double)n;
		ratio[r] = tm[r] / ta[r];
	}
	printf("{\"timing\": \"per example\", \"examples\": %ld, \"rounds\": %d, "
	       "\"analytic_us\": %.1f, \"mc%d_us\": %.1f, \"speedup\": %.1f}\n",
	       n, rounds, 1e6 * median(ta, rounds), mc, 1e6 * median(tm, rounds),
	       median(ratio, rounds));
	free(p), free(s);
	return 0;
}

int main(int argc, char **argv)
{
	bnn_dataset test, ood;
	bnn_err err;
	int mc = argc > 4 ? atoi(argv[4]) : 32, rounds = argc > 6 ? atoi(argv[6]) : 5, rc;
	long timed = argc > 5 ? atol(argv[5]) : 500;
	memset(&err, 0, sizeof err);
	if (argc < 4 || mc < 1 || rounds < 1 || timed < 1) {
		fputs("usage: analytic IMAGES LABELS OOD_IMAGES [MC [TIMED [ROUNDS]]]\n", stderr);
		return 2;
	}
	if (bnn_data_load_idx(argv[1], argv[2], &test, &err) != BNN_OK ||
	    bnn_data_load_idx(argv[3], NULL, &ood, &err) != BNN_OK) {
		fprintf(stderr, "analytic: %s\n", err.message);
		return 1;
	}
	if (test.features != SA_INPUTS || ood.features != SA_INPUTS) {
		fprintf(stderr, "analytic: the images have %ld and %ld values, the model %ld\n",
		        test.features, ood.features, (long)SA_INPUTS);
		return 1;
	}
	timed = timed < test.n ? timed : test.n;
	rc = evaluate("analytic", -1, &test, &ood) || evaluate("mc", mc, &test, &ood) ||
	     timing(&test, mc, timed, rounds);
	bnn_dataset_free(&test);
	bnn_dataset_free(&ood);
	return rc;
}
