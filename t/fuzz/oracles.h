/* oracles.h: checks on the results of the readers that several fuzzing
 * entry points share, beyond "no crash": what the public headers promise
 * about a failed call. */
#ifndef BNN_FUZZ_ORACLES_H
#define BNN_FUZZ_ORACLES_H

#include "bnn.h"

/* Whether DS owns nothing and says so (every field zero), as bnn_data.h
 * promises of a data set after a failed read. */
int fuzz_dataset_zeroed(const bnn_dataset *ds);

/* The same for an IDX array after a failed bnn_idx_read(). */
int fuzz_idx_zeroed(const bnn_idx *idx);

/* Aborts when a reader ran out of memory (RC is BNN_ENOMEM) on an input of
 * SIZE < FUZZ_SMALL_INPUT bytes: what a reader allocates must follow what
 * the file holds, not what its header claims.  The replay test runs each
 * input under a 2 GiB address-space limit (without ASan), libFuzzer under
 * -rss_limit_mb=2048, so a reader that trusts a size field fails here. */
#define FUZZ_SMALL_INPUT 16384
void fuzz_check_enomem(int rc, size_t size, const char *reader);

#endif
