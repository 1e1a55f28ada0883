/*
 * blobs.h: what the tests that train generated models share
 * (t/gen_runtime.c, t/gen_bayes.c): the three-blob classification problem
 * they train on, test accuracy through bnn_predict, comparing arrays bit
 * for bit, checking a posterior's σ, the temporary directory their
 * checkpoints go to, and reading a checkpoint's bytes back.
 */
#ifndef BNN_TEST_BLOBS_H
#define BNN_TEST_BLOBS_H

#include <stdint.h>

#include "bnn.h"

/* n examples of three Gaussian blobs in 4-D (example i has class i % 3,
 * centres at ±2 on different axes, noise sd 0.7): linearly separable up
 * to a few per cent of overlap.  Bails out when out of memory. */
/* ds: n examples of `features` values in x, one target each in y (the
 * arrays are the caller's; nothing is copied). */
void blobs_flat(bnn_dataset *ds, long n, long features, float *x, float *y);

void blobs_make(bnn_dataset *ds, long n, uint64_t seed);

/* Test accuracy of a 3-class st on ds, predicting with mc samples (seed
 * 7).  Bails out when bnn_predict fails. */
double blobs_accuracy(const bnn_state *st, const bnn_dataset *ds, long mc);

/* Whether a and b hold the same n floats bit for bit (both NULL counts). */
int blobs_same_floats(const float *a, const float *b, long n);

/* Whether st has a σ that is finite and > 0 on every parameter (every
 * layer of the model meanfield). */
int blobs_sigma_positive(const bnn_state *st);

/* Whether st has a σ that is finite and > 0 on the tensors of meanfield
 * layers (BNN_CAP_SIGMA) and 0 on all others (point layers, batchnorm and
 * the other norms without a posterior, trained without noise). */
int blobs_sigma_by_family(const bnn_state *st);

/* Create the temporary directory $TMPDIR/name.XXXXXX (/tmp when TMPDIR
 * is unset or empty).  Bails out when it cannot. */
void blobs_tmpdir_make(const char *name);

/* The path of file name in that directory; each of the last four
 * results stays valid. */
const char *blobs_tmp_path(const char *name);

/* Remove that directory, which the test has emptied by then. */
void blobs_tmpdir_remove(void);

/* The bytes of file path (malloc'd), or NULL; *n its size. */
unsigned char *blobs_file_bytes(const char *path, long *n);

#endif
