/* scratch.h: what the fuzzing entry points share: a private scratch
 * directory for the files a reader takes by name, and the guard on
 * standard output.
 *
 * The readers of libbnn take paths, not buffers, so each input is written
 * to a file of a directory made once per process (mkdtemp under $TMPDIR,
 * removed at exit).  Standard output is pointed at a file of that
 * directory, so that an entry point can check after each input that the
 * library wrote nothing there (fuzz_stdout_check), or, for the driver,
 * throw its results away (fuzz_stdout_discard).
 */
#ifndef BNN_FUZZ_SCRATCH_H
#define BNN_FUZZ_SCRATCH_H

#include <stddef.h>

/* The scratch directory (made on first use; aborts if it cannot be). */
const char *fuzz_scratch_dir(void);

/* The path of NAME in the scratch directory, in a static buffer per call
 * slot (SLOT 0..3), so that a few paths can be held at once. */
const char *fuzz_scratch_path(int slot, const char *name);

/* Writes SIZE bytes at DATA to scratch file NAME; returns its path (as
 * fuzz_scratch_path(SLOT, NAME)).  Aborts on a write error. */
const char *fuzz_scratch_write(int slot, const char *name, const void *data, size_t size);

/* Aborts if anything was written to standard output since the last call. */
void fuzz_stdout_check(const char *surface);

/* Empties the file standard output goes to (the driver's results). */
void fuzz_stdout_discard(void);

/* Removes every file and directory of the scratch directory except those
 * named in KEEP (NULL-terminated; may be NULL) and standard output's. */
void fuzz_scratch_clean(const char *const *keep);

#endif
