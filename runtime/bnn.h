/*
 * bnn.h: the public interface of libbnn, the runtime library that models
 * compiled by bnnc link against.  This is the library's only public header;
 * it is usable from C (C11) and C++.  Sections: version, errors, then one
 * header per module, all included from here: bnn_rng.h (random numbers),
 * bnn_optim.h (optimizers, schedules, clipping), bnn_metrics.h
 * (evaluation), bnn_data.h (IDX and CSV readers, standardisation),
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

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------ */

/* The version of this header; bnn_version() gives that of the library
 * actually linked.  Kept equal to the version in configure.ac (a test
 * checks it). */
#define BNN_VERSION_MAJOR 0
#define BNN_VERSION_MINOR 1
#define BNN_VERSION_PATCH 0
#define BNN_VERSION_STRING "0.1.0"

/**
 * The version of the linked library.
 * @return BNN_VERSION_STRING as the library was built (static storage).
 */
const char *bnn_version(void);

/* ---- errors ------------------------------------------------------------- */

/* Error codes, generated from bnn_errors.def (see that file for the rules).
 * BNN_OK is 0 and every error is positive.  The numbers are stable: no file
 * format stores them yet, but new codes only ever go at the end. */
enum bnn_error {
#define BNN_ERROR(name, message) name,
#include "bnn_errors.def"
#undef BNN_ERROR
};

/**
 * Describe an error code.
 * @param code  a value returned by a libbnn function (any int is accepted).
 * @return a short lower-case message such as "out of memory" (static
 *         storage, never NULL); "unknown error" for a code not in the list.
 */
const char *bnn_strerror(int code);

/* Room for one message: long enough for two paths and a sentence. */
#define BNN_ERR_MESSAGE_MAX 1024

/* A detailed error: the code and a full message (never ends in '\n'). */
typedef struct bnn_err {
	int code;                         /* a BNN_E* code; BNN_OK when clear */
	char message[BNN_ERR_MESSAGE_MAX];/* NUL-terminated, truncated to fit */
} bnn_err;

/**
 * Record an error: err->code = code and the formatted message (printf
 * style, truncated to BNN_ERR_MESSAGE_MAX - 1 bytes).  Does nothing to a
 * NULL err.
 * @return code, so that `return bnn_fail(err, BNN_EIO, "...", ...);` works.
 */
int bnn_fail(bnn_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/**
 * Clear err (code BNN_OK, empty message).  NULL is accepted.
 */
void bnn_err_clear(bnn_err *err);

#ifdef __cplusplus
}
#endif

#include "bnn_rng.h"
#include "bnn_optim.h"
#include "bnn_metrics.h"
#include "bnn_data.h"
#include "bnn_checkpoint.h"
#include "bnn_model.h"
#include "bnn_train.h"
#include "bnn_cli.h"

#endif /* BNN_H */
