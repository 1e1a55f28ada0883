/*
 * bnn.h: the public interface of libbnn, the runtime library that models
 * compiled by bnnc link against.  This is the library's only public header;
 * it is usable from C (C11) and C++.  Sections: version, errors.
 *
 * Error convention.  The library never exits, aborts or prints on bad
 * input.  A function that can fail returns an int error code: 0 (BNN_OK)
 * on success, one of the positive BNN_E* codes below on failure, with its
 * outputs left as documented for that function.  bnn_strerror() turns a
 * code into a readable message.
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

#ifdef __cplusplus
}
#endif

#endif /* BNN_H */
