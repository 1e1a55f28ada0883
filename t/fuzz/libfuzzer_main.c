/* libfuzzer_main.c: the libFuzzer target of one entry point of fuzz.h.
 *
 * Compiled once per target with -DFUZZ_ENTRY=fuzz_<surface> and linked with
 * clang's -fsanitize=fuzzer (./configure --enable-fuzz; `make fuzz` runs
 * them through t/fuzz/run.sh).  libFuzzer supplies main(); the entry point
 * is the one the replay test of `make check` calls, so a reproducer behaves
 * the same in both.
 */
#include "fuzz.h"

#ifndef FUZZ_ENTRY
#error "compile with -DFUZZ_ENTRY=fuzz_<surface>"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return FUZZ_ENTRY(data, size);
}
