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

#include "bnn_core.h"
#include "bnn_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BNN_DATA_MAX_RANK 4

typedef struct bnn_dataset {
	long n;                        /* number of examples */
	long features;                 /* floats per example */
	int rank;                      /* dimensions of one example as stored: 1 for CSV, */
	long shape[BNN_DATA_MAX_RANK]; /* 2 for 28x28 IDX images, ... */
	long targets;                  /* floats of target per example; 0: no targets */
	float *x;                      /* n × features, owned */
	float *y;                      /* n × targets, owned; NULL when targets is 0 */
	char **columns; /* CSV: the feature column names (features of them), owned; else NULL */
	char **target_columns; /* CSV: the target column names (targets of them, in
	                          the order of y), owned; else NULL */
} bnn_dataset;

/** Release what ds owns and zero it.  NULL and zeroed data sets are fine. */
void bnn_dataset_free(bnn_dataset *ds);

/* An IDX array (LeCun's format: magic 0x0000TTRR, big-endian sizes). */
typedef struct bnn_idx {
	int type; /* the IDX type byte: 0x08 u8, 0x09 i8, 0x0B i16,
	             0x0C i32, 0x0D f32, 0x0E f64 */
	int rank; /* 1..BNN_DATA_MAX_RANK */
	long dims[BNN_DATA_MAX_RANK];
	long count;  /* product of dims */
	float *data; /* count values converted to float, owned */
} bnn_idx;

/**
 * Read an IDX file, plain or gzip-compressed (detected by its content, not
 * its name).  Checks the magic, the type, the rank, that the sizes fit (no
 * size 0, at most 2^31 elements) and that the file holds exactly the
 * announced data (truncated or trailing bytes are errors, and so is a gzip
 * stream that is cut short or corrupt).  f32 and f64 values must be finite
 * as floats.  Byte offsets in messages count uncompressed bytes.
 * @param path  the file to read.
 * @param out   receives the array (owned; release with bnn_idx_free());
 *              zeroed on failure.
 * @return BNN_OK; BNN_EIO (cannot open/read), BNN_EFORMAT (with the byte
 *         offset), BNN_ENOMEM.
 */
int bnn_idx_read(const char *path, bnn_idx *out, bnn_err *err);
/** Release idx->data and zero idx.  NULL and zeroed arrays are fine. */
void bnn_idx_free(bnn_idx *idx);

/**
 * Images and optional labels as a data set.  u8 images are scaled to
 * [0, 1] (divided by 255); other types are taken as they are.  Labels must
 * be a rank-1 integer IDX with as many entries as there are images
 * (labels == NULL: no targets).  Images of rank r >= 2 give examples of
 * rank r - 1 (shape = dims[1..], features = their product); rank-1 images
 * give examples of one feature (rank 1, shape {1}).
 * @param out  receives the data set (owned; bnn_dataset_free()); zeroed on
 *             failure.
 * @return BNN_OK; bnn_idx_read()'s errors for either file; BNN_EFORMAT
 *         for labels of rank other than 1 or of a float type;
 *         BNN_EMISMATCH when the counts differ.
 */
int bnn_data_load_idx(const char *images, const char *labels, bnn_dataset *out, bnn_err *err);
/** bnn_data_load_idx() for integer ids (a model's "input ids[T] int;"):
 *  u8 values are kept as the integers they are, not scaled. */
int bnn_data_load_idx_ids(const char *images, const char *labels, bnn_dataset *out, bnn_err *err);

/*
 * How to read a CSV file.  Named targets are stored in y in the order they
 * are named; the remaining columns are the features, in file order.  With
 * targets_optional, a file is read without targets (out->targets 0) when
 * named targets: none of them is in the header, and features is 0 or the
 * file has exactly `features` columns;
 * positional targets: features > 0 and the file has exactly `features`
 * columns.
 * With targets_skipped, the target columns are chosen as above (so that
 * they are not taken for features) but their fields are not read: any
 * text is accepted there, an empty field too, and the data set has no
 * targets (out->targets 0, out->y NULL, no target_columns).  A row must
 * still have as many fields as the header, and its quotes must close.
 */
typedef struct bnn_csv_options {
	const char *target;         /* target column name(s), comma-separated,
	                               blanks around a name ignored; NULL: the
	                               last `targets` columns */
	long targets;               /* number of target columns (>= 0); with
	                               `target`, 0 or the number of names */
	int targets_optional;       /* a file with no target columns is accepted
	                               (prediction): then out->targets is 0 */
	long features;              /* expected feature columns; 0: whatever is left */
	const char *const *columns; /* NULL, or the names the feature columns must
	                               have, in order: the first feature column
	                               whose name differs is an error naming it
	                               and its position */
	long ncolumns;              /* the names in columns */
	int targets_skipped;        /* the target columns are recognised but
	                               not read (a command that does not use
	                               targets): out->targets is 0 */
} bnn_csv_options;

/**
 * Read a CSV file: a header row of column names, then one example per row,
 * every field a finite number (but those of opt->targets_skipped's target
 * columns, which are not read; leading/trailing blanks allowed; quotes
 * around a field allowed; CRLF allowed; a UTF-8 byte order mark skipped;
 * empty lines at the end ignored, elsewhere an error, so example i is on
 * line i + 1).  Numbers use C's decimal syntax with '.' whatever the
 * locale.  Errors name the file, line and column: a ragged row, a field
 * that is not a number, NaN or infinity, a missing target column, a
 * duplicate column name, an empty file or one without data rows, too many
 * or too few feature columns, a feature column whose name is not the one
 * opt->columns expects.  docs/data.md lists every message.
 * @param opt  NULL: no targets, every column a feature.
 * @param out  receives the data set (owned, with the feature names in
 *             out->columns; bnn_dataset_free()); zeroed on failure.
 * @return BNN_OK; BNN_EIO (cannot open/read); BNN_EFORMAT (bad content);
 *         BNN_ERANGE (a number too large for a float); BNN_EMISMATCH
 *         (not opt->features feature columns, or not the names of
 *         opt->columns); BNN_EINVAL (bad options:
 *         negative counts, an empty or repeated name in opt->target,
 *         opt->targets disagreeing with it); BNN_ENOMEM.
 */
int bnn_data_load_csv(const char *path, const bnn_csv_options *opt, bnn_dataset *out, bnn_err *err);

/**
 * The header of a CSV file alone, checked as bnn_data_load_csv() checks it
 * (targets, feature count and names): out gets features, targets, columns
 * and target_columns, and no examples (n 0, x and y NULL).  The rows are
 * not read.  Same returns as bnn_data_load_csv(), but for the messages
 * about rows.
 */
int bnn_data_csv_header(const char *path, const bnn_csv_options *opt, bnn_dataset *out,
                        bnn_err *err);

/* Per-feature standardisation x ← (x − mean)/std. */
typedef struct bnn_standardizer {
	long features;
	float *mean; /* owned */
	float *std;  /* owned; a constant feature gets std 1 */
} bnn_standardizer;

/**
 * Compute the statistics of ds: per feature, the mean and the population
 * standard deviation, accumulated in double.
 * @param out  receives them (owned; bnn_standardizer_free()); zeroed on
 *             failure.
 * @return BNN_OK; BNN_EINVAL when ds has no examples or no features;
 *         BNN_ENOMEM.
 */
int bnn_standardizer_fit(const bnn_dataset *ds, bnn_standardizer *out, bnn_err *err);
/** Apply them in place; BNN_EMISMATCH when the feature counts differ. */
int bnn_standardizer_apply(const bnn_standardizer *s, bnn_dataset *ds, bnn_err *err);
/** Release what s owns and zero it.  NULL is fine. */
void bnn_standardizer_free(bnn_standardizer *s);
/** A copy of s into out (owned; features 0 copies as none); out is zeroed
 *  on failure.  BNN_OK, BNN_ENOMEM. */
int bnn_standardizer_copy(const bnn_standardizer *s, bnn_standardizer *out, bnn_err *err);

/**
 * Check that every target of ds is an integer label in [0, k) (categorical
 * models) or in {0, 1} (k = 2 with bernoulli's multi-label targets: pass
 * k = 2).  The message names `source` and the first bad example, counted
 * from 1 (for a CSV file, example i is on line i + 1; for an IDX file it
 * is entry i - 1), and with several targets the target, also from 1:
 * "train.csv: example 42, target 2: label 11 is outside [0, 10)".
 * @param source  the name to print (the file); NULL: "data".
 * @return BNN_OK; BNN_ERANGE (a label outside [0, k)); BNN_EFORMAT (not an
 *         integer); BNN_EINVAL (k < 1, or ds has no targets).
 */
int bnn_data_check_labels(const bnn_dataset *ds, int k, const char *source, bnn_err *err);

/**
 * Check that every target of ds is a count, a non-negative integer (poisson
 * models), naming the first bad one as bnn_data_check_labels() does:
 * "counts.csv: example 3: count -1 is negative (poisson and negbinomial targets are
 * non-negative integers)".
 * @return BNN_OK; BNN_ERANGE (negative); BNN_EFORMAT (not an integer);
 *         BNN_EINVAL (ds has no targets).
 */
int bnn_data_check_counts(const bnn_dataset *ds, const char *source, bnn_err *err);

/**
 * Check that every feature of ds is an integer id in [0, vocab) (the input
 * of an embedding, declared "input ids[T] int;"), naming the first bad one:
 * for a CSV file (ds->columns set) by line and column,
 * "train.csv: line 5, column 'ids_2': id 12 is outside the vocabulary
 * [0, 10)", else by example and value, from 1: "x.idx: example 4, value 2:
 * ...".  Ids are stored as floats holding exact integers (exact up to
 * 2^24, the largest vocab a model can declare).
 * @param source  the name to print (the file); NULL: "data".
 * @return BNN_OK; BNN_ERANGE (outside [0, vocab)); BNN_EFORMAT (not an
 *         integer); BNN_EINVAL (vocab < 1).
 */
int bnn_data_check_ids(const bnn_dataset *ds, long vocab, const char *source, bnn_err *err);

/* ---- image augmentation (augment.c) ------------------------------------ */

/* The shape of one image: C channels of H×W pixels, NCHW (channel after
 * channel, rows in order). */
typedef struct bnn_image_shape {
	long channels; /* C */
	long height;   /* H, rows */
	long width;    /* W, pixels per row */
} bnn_image_shape;

/* One example's augmentation: the crop's offset and the flip. */
typedef struct bnn_augmentation {
	long dy;  /* rows: pixel (i, j) comes from row i + dy */
	long dx;  /* columns: from column j' + dx */
	int flip; /* 1: mirror every row (j' = W − 1 − j), 0: j' = j */
} bnn_augmentation;

/**
 * Shift and mirror one image in place.  Pixel (i, j) of the result is
 * pixel (i + dy, j' + dx) of the original, j' = W − 1 − j when flip, else
 * j, and 0 where that lies outside the image: the random crop with zero
 * padding of the VOGN paper's experiments, at offset (dy, dx), followed by
 * a horizontal flip.
 * @param scratch  C·H·W floats the function may overwrite
 * Nothing happens when C, H or W is below 1.
 */
void bnn_augment_image(float *x, const bnn_image_shape *shape, const bnn_augmentation *aug,
                       float *scratch);

/**
 * Draw one example's augmentation from rng into *out: dy and dx uniform in
 * [−pad, pad] (pad < 0 counts as 0), and flip 0 or 1 with probability ½
 * when flip (else 0).  Consumes two or three draws of rng.
 */
void bnn_augment_draw(bnn_rng *rng, long pad, int flip, bnn_augmentation *out);

#ifdef __cplusplus
}
#endif

#endif /* BNN_DATA_H */
