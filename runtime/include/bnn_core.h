/*
 * bnn_core.h: the part of libbnn's interface every module header needs:
 * the version, the error codes and struct bnn_err.  Programs include bnn.h,
 * which includes this and every module header; the conventions (errors,
 * ownership) are described there.
 */
#ifndef BNN_CORE_H
#define BNN_CORE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------ */

/* The version of this header; bnn_version() gives that of the library
 * actually linked.  Kept equal to the version in configure.ac (a test
 * checks it). */
#define BNN_VERSION_MAJOR  0
#define BNN_VERSION_MINOR  1
#define BNN_VERSION_PATCH  0
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
	int code;                          /* a BNN_E* code; BNN_OK when clear */
	char message[BNN_ERR_MESSAGE_MAX]; /* NUL-terminated, truncated to fit */
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

/* ---- files -------------------------------------------------------------- */

/**
 * Replace the file at path atomically: fill(f, ctx) writes the new
 * contents into a temporary file in path's directory, which is flushed,
 * fsynced and renamed over path only when everything succeeded.  The file
 * keeps the mode of the one it replaces (0644 when new).  An existing path
 * that is not a regular file (a device, a pipe, a directory) is refused.
 * The temporary file is named path followed by BNN_FILE_REPLACE_SUFFIX
 * (mkstemp's template), so the name needs room for that many more bytes.
 * @param what  words put before the path in messages ("checkpoint "), or "".
 * @param fill  returns 0 on success, else an errno value (or -1: use errno).
 * @return BNN_OK; BNN_EIO ("cannot write WHATPATH: reason") with the
 *         temporary file removed and path untouched; BNN_ENOMEM.
 */
#define BNN_FILE_REPLACE_SUFFIX ".tmp.XXXXXX"
int bnn_file_replace(const char *path, const char *what, int (*fill)(FILE *f, void *ctx), void *ctx,
                     bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_CORE_H */
