/* codegen.h: turning a checked model into C (bnnc's default action).
 *
 * codegen_write() writes the model's C file and header: the generated pass
 * (forward, loss, backward, per-example squared gradients), the workspace
 * size and the bnn_model descriptor, plus a main() calling the runtime's
 * driver when asked.  Both files are written to temporary names and renamed
 * into place only when complete, so a failure never leaves half a model.
 */
#ifndef BNN_CODEGEN_H
#define BNN_CODEGEN_H

#include "diag.h"
#include "graph.h"

struct codegen_options {
	const char *source; /* the .bnn file, for the provenance comment and the
                           * descriptor (any bytes: both are escaped) */
	const char *c_path; /* the C file to write */
	const char *h_path; /* the header to write */
	int with_main;      /* also emit main() (bnnc --main) */
};

/* Reports unsupported constructs through D (errors at their source
 * locations) and I/O failures on stderr.  Returns 0 on success.  The file
 * name of O->h_path must pass codegen_include_problem(). */
int codegen_write(const struct graph *g, const struct codegen_options *o, struct diag *d);

/* Why the file name of H_PATH (its last component) cannot be written in the
 * C file's #include "..." line: a static description ("a double quote", "a
 * newline", ...), or NULL when it can. */
const char *codegen_include_problem(const char *h_path);

/* The canonical text of a model (what its fingerprint hashes); the caller
 * frees it.  NULL when out of memory. */
char *codegen_canonical(const struct graph *g);

/* FNV-1a, 64 bits, of a NUL-terminated string. */
unsigned long long codegen_fnv1a64(const char *s);

#endif
