/* fuzz_bnn.c: the .bnn front end and code generation under the fuzzer.
 *
 * The bytes are a model file: bnnc's whole path runs on them in-process as
 * `bnnc --summary` and `bnnc --main -o m.c` would (front_compile_memory:
 * scan, parse, semantic analysis; then summary_print and codegen_write, the
 * C file and header written into the scratch directory).  Diagnostics and
 * the summary go to /dev/null, still fully formatted.  The generated C is
 * not compiled: that is what t/gen_* and t/examples.sh test, on chosen
 * models.  The same entry point serves the plain target (raw bytes) and
 * the dictionary-driven one (t/fuzz/bnn.dict), which gets past the parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "front.h"
#include "fuzz.h"
#include "scratch.h"
#include "summary.h"

static FILE *bnn_devnull(void)
{
	static FILE *devnull;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	return devnull;
}

int fuzz_bnn(const uint8_t *data, size_t size)
{
	struct front f;
	struct codegen_options co;
	FILE *out = bnn_devnull();

	if (front_compile_memory(&f, "fuzz.bnn", (const char *)data, size, out) == FRONT_OK) {
		summary_print(out, &f.graph, f.src.name);
		memset(&co, 0, sizeof co);
		co.source = f.src.name;
		co.c_path = fuzz_scratch_path(1, "m.c");
		co.h_path = fuzz_scratch_path(2, "m.h");
		co.with_main = 1;
		codegen_write(&f.graph, &co, &f.diag);
	}
	front_free(&f);
	fuzz_stdout_check("front end");
	return 0;
}
