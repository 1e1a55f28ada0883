/*
 * dataset.c: what every data set shares whatever file it came from:
 * releasing it (bnn_dataset_free) and checking that its targets are class
 * labels a categorical or bernoulli model can take (bnn_data_check_labels)
 * and the counts a poisson model can take (bnn_data_check_counts), and
 * that its features are the integer ids an embedding can take
 * (bnn_data_check_ids).
 * The readers themselves are in data_idx.c and data_csv.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

void bnn_dataset_free(bnn_dataset *ds)
{
	long i;

	if (!ds)
		return;
	if (ds->columns)
		for (i = 0; i < ds->features; i++)
			free(ds->columns[i]);
	free(ds->columns);
	if (ds->target_columns)
		for (i = 0; i < ds->targets; i++)
			free(ds->target_columns[i]);
	free(ds->target_columns);
	free(ds->x);
	free(ds->y);
	memset(ds, 0, sizeof *ds);
}

/* "example E" or, with several targets, "example E, target T" (from 1) of
 * target value i of ds. */
static void data_where(const bnn_dataset *ds, long i, char *where, size_t size)
{
	long t = ds->targets;

	if (t > 1)
		snprintf(where, size, "example %ld, target %ld", i / t + 1, i % t + 1);
	else
		snprintf(where, size, "example %ld", i + 1);
}

int bnn_data_check_counts(const bnn_dataset *ds, const char *source, bnn_err *err)
{
	long i;
	char where[64];

	if (!source)
		source = "data";
	if (!ds)
		return bnn_fail(err, BNN_EINVAL, "%s: no data set", source);
	if (ds->targets < 1 || !ds->y)
		return bnn_fail(err, BNN_EINVAL, "%s: the data set has no targets", source);
	for (i = 0; i < ds->n * ds->targets; i++) {
		double v = ds->y[i];

		if (isfinite(v) && v == floor(v) && v >= 0)
			continue;
		data_where(ds, i, where, sizeof where);
		if (!isfinite(v) || v != floor(v))
			return bnn_fail(
			        err, BNN_EFORMAT,
			        "%s: %s: count %g is not an integer (poisson and negbinomial targets are "
			        "non-negative integers)",
			        source, where, v);
		return bnn_fail(
		        err, BNN_ERANGE,
		        "%s: %s: count %g is negative (poisson and negbinomial targets are non-negative "
		        "integers)",
		        source, where, v);
	}
	return BNN_OK;
}

int bnn_data_check_labels(const bnn_dataset *ds, int k, const char *source, bnn_err *err)
{
	long i;
	char where[64];

	if (!source)
		source = "data";
	if (!ds)
		return bnn_fail(err, BNN_EINVAL, "%s: no data set", source);
	if (k < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "%s: bnn_data_check_labels: "
		                "k must be at least 1",
		                source);
	if (ds->targets < 1 || !ds->y)
		return bnn_fail(err, BNN_EINVAL, "%s: the data set has no labels", source);
	for (i = 0; i < ds->n * ds->targets; i++) {
		double v = ds->y[i];

		if (isfinite(v) && v == floor(v) && v >= 0 && v < k)
			continue;
		data_where(ds, i, where, sizeof where);
		if (!isfinite(v) || v != floor(v))
			return bnn_fail(err, BNN_EFORMAT, "%s: %s: label %g is not an integer",
			                source, where, v);
		return bnn_fail(err, BNN_ERANGE, "%s: %s: label %g is outside [0, %d)", source,
		                where, v, k);
	}
	return BNN_OK;
}

/* Where feature value j of example i is: a CSV file's line and column
 * (example i on line i + 2, after the header), else the example and the
 * value, from 1. */
static void data_feature_where(const bnn_dataset *ds, long i, long j, char *where, size_t size)
{
	if (ds->columns)
		snprintf(where, size, "line %ld, column '%s'", i + 2, ds->columns[j]);
	else
		snprintf(where, size, "example %ld, value %ld", i + 1, j + 1);
}

int bnn_data_check_ids(const bnn_dataset *ds, long vocab, const char *source, bnn_err *err)
{
	long i, j;
	char where[160];

	if (!source)
		source = "data";
	if (!ds)
		return bnn_fail(err, BNN_EINVAL, "%s: no data set", source);
	if (vocab < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: bnn_data_check_ids: vocab must be at least 1",
		                source);
	for (i = 0; i < ds->n; i++)
		for (j = 0; j < ds->features; j++) {
			double v = ds->x[i * ds->features + j];

			if (isfinite(v) && v == floor(v) && v >= 0 && v < (double)vocab)
				continue;
			data_feature_where(ds, i, j, where, sizeof where);
			if (!isfinite(v) || v != floor(v))
				return bnn_fail(err, BNN_EFORMAT,
				                "%s: %s: id %g is not an integer (the input holds "
				                "integer ids in [0, %ld))",
				                source, where, v, vocab);
			return bnn_fail(err, BNN_ERANGE,
			                "%s: %s: id %g is outside the vocabulary [0, %ld)", source,
			                where, v, vocab);
		}
	return BNN_OK;
}
