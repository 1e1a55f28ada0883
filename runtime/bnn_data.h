/*
 * bnn_data.h: data sets, their readers (IDX, plain or gzip; CSV) and input
 * standardisation for libbnn (included by bnn.h).
 *
 * A data set is n examples of `features` floats each (row-major, an image
 * flattened in C order) with, optionally, `targets` floats each: class
 * labels are stored as exact integer values, regression and multi-label
 * targets as given.  Every reader reports problems with the file name and
 * a position (byte offset for IDX, line and column for CSV) through
 * bnn_err, and never leaves a half-built data set behind: on failure the
 * output is zeroed and owns nothing.
 */
#ifndef BNN_DATA_H
#define BNN_DATA_H

#include "bnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BNN_DATA_MAX_RANK 4

typedef struct bnn_dataset {
	long n;          /* number of examples */
	long features;   /* floats per example */
	int rank;        /* dimensions of one example as stored: 1 for CSV, */
	long shape[BNN_DATA_MAX_RANK]; /* 2 for 28x28 IDX images, ... */
	long targets;    /* floats of target per example; 0: no targets */
	float *x;        /* n × features, owned */
	float *y;        /* n × targets, owned; NULL when targets is 0 */
	char **columns;  /* CSV: the feature column names (features of them), owned; else NULL */
} bnn_dataset;

/** Release what ds owns and zero it.  NULL and zeroed data sets are fine. */
void bnn_dataset_free(bnn_dataset *ds);

/* An IDX array (LeCun's format: magic 0x0000TTRR, big-endian sizes). */
typedef struct bnn_idx {
	int type;       /* the IDX type byte: 0x08 u8, 0x09 i8, 0x0B i16,
	                   0x0C i32, 0x0D f32, 0x0E f64 */
	int rank;       /* 1..BNN_DATA_MAX_RANK */
	long dims[BNN_DATA_MAX_RANK];
	long count;     /* product of dims */
	float *data;    /* count values converted to float, owned */
} bnn_idx;

/**
 * Read an IDX file, plain or gzip-compressed (detected by its content, not
 * its name).  Checks the magic, the type, the rank, that the sizes fit and
 * that the file holds exactly the announced data (truncated or trailing
 * bytes are errors).
 * @return BNN_OK; BNN_EIO (cannot open/read), BNN_EFORMAT (with the byte
 *         offset), BNN_ENOMEM.
 */
int bnn_idx_read(const char *path, bnn_idx *out, bnn_err *err);
void bnn_idx_free(bnn_idx *idx);

/**
 * Images and optional labels as a data set.  u8 images are scaled to
 * [0, 1] (divided by 255); other types are taken as they are.  Labels must
 * be a rank-1 integer IDX with as many entries as there are images
 * (labels == NULL: no targets).
 */
int bnn_data_load_idx(const char *images, const char *labels,
                      bnn_dataset *out, bnn_err *err);

/* How to read a CSV file. */
typedef struct bnn_csv_options {
	const char *target;  /* target column name(s), comma-separated; NULL:
	                        the last `targets` columns */
	long targets;        /* number of target columns (>= 0) */
	int targets_optional;/* a file with no target columns is accepted
	                        (prediction): then out->targets is 0 */
	long features;       /* expected feature columns; 0: whatever is left */
} bnn_csv_options;

/**
 * Read a CSV file: a header row of column names, then one example per row,
 * every field a finite number (leading/trailing blanks allowed; quotes
 * around a field allowed; CRLF allowed; empty lines at the end ignored).
 * Errors name the file, line and column: a ragged row, a field that is not
 * a number, NaN or infinity, a missing target column, a duplicate column
 * name, an empty file, too many or too few feature columns.
 */
int bnn_data_load_csv(const char *path, const bnn_csv_options *opt,
                      bnn_dataset *out, bnn_err *err);

/* Per-feature standardisation x ← (x − mean)/std. */
typedef struct bnn_standardizer {
	long features;
	float *mean;   /* owned */
	float *std;    /* owned; a constant feature gets std 1 */
} bnn_standardizer;

/** Compute the statistics of ds (population standard deviation). */
int bnn_standardizer_fit(const bnn_dataset *ds, bnn_standardizer *out,
                         bnn_err *err);
/** Apply them in place; BNN_EMISMATCH when the feature counts differ. */
int bnn_standardizer_apply(const bnn_standardizer *s, bnn_dataset *ds,
                           bnn_err *err);
void bnn_standardizer_free(bnn_standardizer *s);

/**
 * Check that every target of ds is an integer label in [0, k) (categorical
 * models) or in {0, 1} (k = 2 with bernoulli's multi-label targets: pass
 * k = 2).  The message names `source` and the example (1-based, the CSV
 * line or the IDX index).
 */
int bnn_data_check_labels(const bnn_dataset *ds, int k, const char *source,
                          bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_DATA_H */
