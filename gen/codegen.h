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

/* The plan the generated pass is written from, for the other writers of a
 * model (bnnc --standalone): which nodes get code, their widths, the
 * parameter tensors with their offsets in the parameter vector, the
 * running statistics.  CG is zeroed first and gets g; a plan is freed with
 * codegen_plan_free().  Reports a node without code through D and returns
 * 1; returns -1 when out of memory, 0 on success. */
struct cg;
int codegen_plan(struct cg *cg, const struct graph *g, struct diag *d);
void codegen_plan_free(struct cg *cg);

/* Writes a generated header and C file, both replaced atomically: WRITE_H
 * and WRITE_C write from CTX into E (the emitter they write with, pointed
 * here at the file's temporary copy); the C file is replaced while the header's new contents wait in
 * their temporary file, so a failure of either leaves both files as they
 * were (only a failure of the header's own final rename, after the C
 * file's, leaves the new C file with the old header).  Prints
 * "bnnc: MESSAGE" and returns 1 on failure, 0 on success. */
struct emit;
typedef void (*codegen_writer)(void *ctx);
int codegen_write_files(struct emit *e, const char *h_path, const char *c_path,
                        codegen_writer write_h, codegen_writer write_c, void *ctx);

/* The last component of PATH (what an #include line names). */
const char *codegen_basename(const char *path);

#endif
