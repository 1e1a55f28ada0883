/* fuzz.h: the fuzzing entry points of bnnc and libbnn, one per input surface.
 *
 * Each entry point takes arbitrary bytes, feeds them to one reader of the
 * project the way a user's file or command line would reach it, and returns
 * 0.  A defect shows as a crash: a sanitizer report, an abort() of one of
 * the oracles below, a hang.  The same functions are linked into the
 * libFuzzer targets (t/fuzz/libfuzzer_main.c, ./configure --enable-fuzz)
 * and into the plain replay test of `make check` (t/fuzz/replay.c), which
 * feeds them every file of the regression corpus t/fuzz/corpus/<surface>/
 * with any compiler.  docs/testing.md ("Fuzzing") says how to run them.
 *
 * Oracles common to every entry point, beyond the sanitizers: the code
 * under test never exits (libFuzzer and the replay test report it); except
 * for the driver (whose results go there), it never writes to standard
 * output (scratch.h); a reader never runs out of memory on a small input
 * and leaves its output zeroed when it fails (oracles.h).
 */
#ifndef BNN_FUZZ_H
#define BNN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The .bnn front end (scan, parse, sema), the summary and code generation
 * into a scratch directory: bnnc's whole path to generated C. */
int fuzz_bnn(const uint8_t *data, size_t size);

/* The CSV reader; the first byte picks the options (target names, counts,
 * optional targets, expected features, --standardize, label check). */
int fuzz_csv(const uint8_t *data, size_t size);

/* The IDX reader: the first byte picks plain or gzip-compressed (the rest
 * compressed by the harness, so the fuzzer reaches the parser behind the
 * decompressor) and images alone or images plus labels (split at an offset
 * given by the second byte). */
int fuzz_idx(const uint8_t *data, size_t size);

/* The checkpoint loader: the bytes as a checkpoint of t/models/rt_blobs.bnn,
 * loaded generically (then saved again: the same bytes) and into the
 * model's state (then used for a prediction). */
int fuzz_ckpt(const uint8_t *data, size_t size);

/* The driver of a generated program (bnn_cli_main of rt_blobs): the bytes
 * are its arguments, separated by NUL bytes. */
int fuzz_cli(const uint8_t *data, size_t size);

#endif
