/* ast.c: the arena and the node constructors of the syntax tree (ast.h). */
#include "ast.h"

#include <stdlib.h>
#include <string.h>

enum {
	AST_CHUNK_BYTES = 64 * 1024
};

struct ast_chunk {
	struct ast_chunk *next; /* older chunk */
	size_t used, cap;       /* bytes used and available in data */
	_Alignas(max_align_t) unsigned char data[];
};

void *ast_alloc(struct ast_arena *a, size_t size)
{
	struct ast_chunk *c = a->chunks;
	size_t align = _Alignof(max_align_t);
	void *p;
	size = (size + align - 1) / align * align;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > AST_CHUNK_BYTES ? size : AST_CHUNK_BYTES;
		c = malloc(sizeof *c + cap);
		if (!c) {
			a->failed = 1;
			return NULL;
		}
		c->used = 0;
		c->cap = cap;
		c->next = a->chunks;
		a->chunks = c;
	}
	p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *ast_strndup(struct ast_arena *a, const char *s, size_t n)
{
	char *p = ast_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void ast_arena_free(struct ast_arena *a)
{
	while (a->chunks) {
		struct ast_chunk *next = a->chunks->next;
		free(a->chunks);
		a->chunks = next;
	}
	a->failed = 0;
}

static struct ast_expr *ast_expr(struct ast_arena *a, enum ast_expr_kind kind, bnn_loc loc)
{
	struct ast_expr *e = ast_alloc(a, sizeof *e);
	if (e) {
		e->kind = kind;
		e->loc = loc;
	}
	return e;
}

struct ast_expr *ast_name(struct ast_arena *a, const char *name, bnn_loc loc)
{
	struct ast_expr *e = ast_expr(a, AST_NAME, loc);
	if (e) {
		e->name = name;
		e->name_loc = loc;
	}
	return e;
}

struct ast_expr *ast_call(struct ast_arena *a, const char *callee, bnn_loc callee_loc,
                          struct ast_arg *args, bnn_loc loc)
{
	struct ast_expr *e = ast_expr(a, AST_CALL, loc);
	if (e) {
		e->name = callee;
		e->name_loc = callee_loc;
		e->args = args;
	}
	return e;
}

struct ast_expr *ast_number(struct ast_arena *a, const char *text, double value, int is_integer,
                            bnn_loc loc)
{
	struct ast_expr *e = ast_expr(a, AST_NUMBER, loc);
	if (e) {
		e->text = text;
		e->number = value;
		e->is_integer = is_integer;
	}
	return e;
}

struct ast_expr *ast_bool(struct ast_arena *a, int value, bnn_loc loc)
{
	struct ast_expr *e = ast_expr(a, AST_BOOL, loc);
	if (e)
		e->boolean = value;
	return e;
}

struct ast_expr *ast_tuple(struct ast_arena *a, struct ast_arg *elems, bnn_loc loc)
{
	struct ast_expr *e = ast_expr(a, AST_TUPLE, loc);
	if (e)
		e->args = elems;
	return e;
}

struct ast_arg *ast_arg(struct ast_arena *a, const char *key, bnn_loc key_loc,
                        struct ast_expr *value)
{
	struct ast_arg *g = ast_alloc(a, sizeof *g);
	if (g) {
		g->key = key;
		g->key_loc = key_loc;
		g->value = value;
	}
	return g;
}

struct ast_family *ast_family(struct ast_arena *a, const char *name, bnn_loc loc,
                              struct ast_arg *args, bnn_loc full_loc)
{
	struct ast_family *f = ast_alloc(a, sizeof *f);
	if (f) {
		f->name = name;
		f->loc = loc;
		f->args = args;
		f->full_loc = full_loc;
	}
	return f;
}

struct ast_param *ast_param(struct ast_arena *a, const char *name, bnn_loc loc)
{
	struct ast_param *p = ast_alloc(a, sizeof *p);
	if (p) {
		p->name = name;
		p->loc = loc;
	}
	return p;
}

struct ast_stmt *ast_stmt(struct ast_arena *a, enum ast_stmt_kind kind, bnn_loc loc)
{
	struct ast_stmt *s = ast_alloc(a, sizeof *s);
	if (s) {
		s->kind = kind;
		s->loc = loc;
	}
	return s;
}

/* One reversal routine per list type; each is the same three-line loop. */
#define AST_REVERSE(fn, type)                    \
	type *fn(type *list)                     \
	{                                        \
		type *done = NULL;               \
		while (list) {                   \
			type *next = list->next; \
			list->next = done;       \
			done = list;             \
			list = next;             \
		}                                \
		return done;                     \
	}
AST_REVERSE(ast_args_reverse, struct ast_arg)
AST_REVERSE(ast_params_reverse, struct ast_param)
AST_REVERSE(ast_stmts_reverse, struct ast_stmt)

int ast_args_count(const struct ast_arg *list)
{
	int n = 0;
	for (; list; list = list->next)
		n++;
	return n;
}
