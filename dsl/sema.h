/* sema.h: semantic analysis, from the syntax tree to a checked graph.
 *
 * sema_run() resolves names (statements may come in any order), expands
 * blocks at their call sites with call-site-prefixed names ("s1_c1"), checks
 * every argument's type and range, infers shapes, attaches posterior
 * families (the "posterior" statement sets the default for dense and conv2d
 * layers; batchnorm is point unless annotated), checks the likelihood, finds
 * cycles, warns about nodes that do not reach the likelihood and unused
 * blocks, and counts parameters.  It reports every problem it can find and
 * never stops at the first.
 */
#ifndef BNN_SEMA_H
#define BNN_SEMA_H

#include "ast.h"
#include "graph.h"

/* Checks STMTS (allocated in ARENA; sema allocates derived names there too)
 * and fills G, which the caller zeroes first and frees with graph_free().
 * Returns 0 if no error was reported, else -1 (G is then incomplete). */
int sema_run(struct diag *d, struct ast_arena *arena, struct ast_stmt *stmts, struct graph *g);

#endif
