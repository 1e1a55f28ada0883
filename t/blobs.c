/*
 * blobs.c: the training problem, the checks and the temporary directory
 * that t/gen_runtime.c and t/gen_bayes.c share (blobs.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "tap.h"

void blobs_flat(bnn_dataset *ds, long n, long features, float *x, float *y)
{
	memset(ds, 0, sizeof *ds);
	ds->n = n;
	ds->features = features;
	ds->rank = 1;
	ds->shape[0] = features;
	ds->targets = 1;
	ds->x = x;
	ds->y = y;
}

void blobs_make(bnn_dataset *ds, long n, uint64_t seed)
{
	static const float centre[3][4] = { { 2, 0, 0, 0 }, { 0, 2, 0, -1 }, { -2, -1, 0, 1 } };
	bnn_rng rng;
	long i, j;

	blobs_flat(ds, n, 4, malloc((size_t)n * 4 * sizeof *ds->x),
	           malloc((size_t)n * sizeof *ds->y));
	if (!ds->x || !ds->y)
		tap_bail_out("out of memory");
	bnn_rng_seed(&rng, seed);
	bnn_rng_normal(&rng, ds->x, (size_t)n * 4);
	for (i = 0; i < n; i++) {
		int c = (int)(i % 3);
		ds->y[i] = (float)c;
		for (j = 0; j < 4; j++)
			ds->x[i * 4 + j] = 0.7f * ds->x[i * 4 + j] + centre[c][j];
	}
}

double blobs_accuracy(const bnn_state *st, const bnn_dataset *ds, long mc)
{
	float *p = malloc((size_t)ds->n * 3 * sizeof *p);
	long i, right = 0;
	bnn_err err;

	if (!p || bnn_predict(st, ds, mc, 7, &(bnn_prediction){ .probs = p }, &err))
		tap_bail_out("bnn_predict failed");
	for (i = 0; i < ds->n; i++) {
		const float *r = p + i * 3;
		int best = r[1] > r[0] ? 1 : 0;
		best = r[2] > r[best] ? 2 : best;
		right += best == (int)ds->y[i];
	}
	free(p);
	return (double)right / (double)ds->n;
}

int blobs_same_floats(const float *a, const float *b, long n)
{
	return (a == NULL && b == NULL) || (a && b && memcmp(a, b, (size_t)n * sizeof *a) == 0);
}

int blobs_sigma_positive(const bnn_state *st)
{
	long i;

	if (!st->sigma)
		return 0;
	for (i = 0; i < st->model->nparams; i++)
		if (!(st->sigma[i] > 0) || !isfinite(st->sigma[i]))
			return 0;
	return 1;
}

int blobs_sigma_by_family(const bnn_state *st)
{
	const bnn_model *m = st->model;
	long j;
	int i, good = st->sigma != NULL;

	for (i = 0; good && i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		int mf = t->layer >= 0 && (m->layers[t->layer].caps & BNN_CAP_SIGMA);
		for (j = t->offset; j < t->offset + t->size; j++)
			good &= mf ? st->sigma[j] > 0 && isfinite(st->sigma[j]) : st->sigma[j] == 0;
	}
	return good;
}

/* The directory of blobs_tmpdir_make. */
static char blobs_tmpdir[256];

void blobs_tmpdir_make(const char *name)
{
	const char *base = getenv("TMPDIR");

	snprintf(blobs_tmpdir, sizeof blobs_tmpdir, "%s/%s.XXXXXX", base && *base ? base : "/tmp",
	         name);
	if (!mkdtemp(blobs_tmpdir))
		tap_bail_out("cannot create a temporary directory");
}

const char *blobs_tmp_path(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, 512, "%s/%s", blobs_tmpdir, name);
	return p;
}

void blobs_tmpdir_remove(void)
{
	rmdir(blobs_tmpdir);
}

unsigned char *blobs_file_bytes(const char *path, long *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;

	*n = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)*n)) && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}
