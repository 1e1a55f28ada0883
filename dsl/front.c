/* front.c: source -> tokens -> syntax tree -> checked graph (see front.h). */
#include "front.h"

#include <string.h>

#include "sema.h"

static enum front_status front_run(struct front *f, FILE *out)
{
	diag_init(&f->diag, &f->src, out);
	f->ast = front_parse(&f->src, &f->diag, &f->arena);
	/* After syntax errors, recovery has dropped the broken statements; a
     * semantic pass would then report their names as undefined, so stop. */
	if (f->diag.errors)
		return FRONT_INVALID;
	if (sema_run(&f->diag, &f->arena, f->ast, &f->graph) != 0 || f->diag.errors)
		return FRONT_INVALID;
	return FRONT_OK;
}

enum front_status front_compile(struct front *f, const char *path, FILE *out)
{
	memset(f, 0, sizeof *f);
	if (source_load(&f->src, path, out) != 0)
		return FRONT_NO_FILE;
	return front_run(f, out);
}

enum front_status front_compile_memory(struct front *f, const char *name, const char *bytes,
                                       size_t len, FILE *out)
{
	memset(f, 0, sizeof *f);
	if (source_from_memory(&f->src, name, bytes, len) != 0) {
		fprintf(out, "bnnc: %s: out of memory\n", name);
		return FRONT_NO_FILE;
	}
	return front_run(f, out);
}

void front_free(struct front *f)
{
	graph_free(&f->graph);
	ast_arena_free(&f->arena);
	source_free(&f->src);
}
