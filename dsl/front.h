/* front.h: the whole front end in one call, for bnnc and the tests.
 *
 * front_compile() reads a .bnn file, parses it and runs semantic analysis,
 * printing diagnostics as it goes.  The struct front keeps everything the
 * checked graph points into (the source text, the AST arena), so the graph
 * stays valid until front_free().
 */
#ifndef BNN_FRONT_H
#define BNN_FRONT_H

#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "graph.h"
#include "source.h"

struct front {
	struct source src;      /* the file */
	struct ast_arena arena; /* the syntax tree and derived names */
	struct ast_stmt *ast;   /* the statements */
	struct diag diag;       /* counts of errors and warnings */
	struct graph graph;     /* the checked model (valid when front_compile returns 0) */
};

enum front_status {
	FRONT_OK = 0,      /* the model is valid (there may be warnings) */
	FRONT_INVALID = 1, /* errors were reported */
	FRONT_NO_FILE = 2  /* the file could not be read (reported) */
};

/* Compiles the file at PATH ("-" = standard input), reporting to OUT.
 * Free F with front_free() whatever the result. */
enum front_status front_compile(struct front *f, const char *path, FILE *out);

/* The same for LEN bytes at BYTES, named NAME in diagnostics. */
enum front_status front_compile_memory(struct front *f, const char *name, const char *bytes,
                                       size_t len, FILE *out);

void front_free(struct front *f);

/* The parser alone (lexer.l): statements of SRC, allocated in ARENA. */
struct ast_stmt *front_parse(const struct source *src, struct diag *d, struct ast_arena *arena);

#endif
