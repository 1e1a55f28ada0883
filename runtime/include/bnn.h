/*
 * bnn.h: the public interface of libbnn, the runtime library that models
 * compiled by bnnc link against.  This is the library's only public header;
 * it is usable from C (C11) and C++.  bnn_core.h (version, errors), then one
 * header per module, all included from here: bnn_rng.h (random numbers),
 * bnn_optim.h (optimizers, schedules, clipping), bnn_variational.h (VOGN,
 * IVON, BADAM, Bayes-by-Backprop; posterior sampling, KL, pruning),
 * bnn_metrics.h (evaluation, uncertainty, OOD detection), bnn_plot.h
 * (SVG charts), bnn_data.h (IDX and CSV readers, standardisation),
 * bnn_checkpoint.h (the checkpoint file format), bnn_model.h (the
 * descriptor of a generated model), bnn_train.h (initialisation, training,
 * prediction, model checkpoints) and bnn_cli.h (the command-line driver).
 * A program includes bnn.h only.
 *
 * Error convention.  The library never exits, aborts or prints on bad
 * input.  A function that can fail returns an int error code: 0 (BNN_OK)
 * on success, one of the positive BNN_E* codes below on failure, with its
 * outputs left as documented for that function.  bnn_strerror() turns a
 * code into a readable message.
 *
 * Error details.  Functions that read files or user-supplied values also
 * take a `bnn_err *err` (which may be NULL): on failure they write a
 * complete, human-readable message into it that says what and where
 * ("data.csv:12: column 'age': 'abc' is not a number"), and return the
 * same code they store in err->code.  On success err is left untouched.
 *
 * Ownership.  Unless a function's comment says otherwise, pointers passed
 * in are borrowed for the duration of the call only, and every object a
 * bnn_*_new() function returns is owned by the caller and released by the
 * matching bnn_*_free().  Strings returned by bnn_version() and
 * bnn_strerror() are static: valid for the life of the program, never NULL,
 * never to be freed or modified.
 */
#ifndef BNN_H
#define BNN_H

#include "bnn_core.h"
#include "bnn_rng.h"
#include "bnn_fwht.h"
#include "bnn_optim.h"
#include "bnn_variational.h"
#include "bnn_metrics.h"
#include "bnn_plot.h"
#include "bnn_data.h"
#include "bnn_checkpoint.h"
#include "bnn_model.h"
#include "bnn_train.h"
#include "bnn_cli.h"

#endif /* BNN_H */
