/* ast.h: the abstract syntax tree of a .bnn file, as the parser builds it.
 *
 * The tree mirrors the text: statements, expressions (calls, names, numbers,
 * booleans, tuples), argument lists and posterior annotations.  Nothing is
 * resolved here; sema.c turns the tree into a checked graph (graph.h).
 *
 * Memory: every node and string lives in one arena (struct ast_arena) that is
 * freed at once by ast_arena_free().  The parser can therefore drop subtrees
 * during error recovery without leaking, and no node has its own destructor.
 * Lists are singly linked through `next` and kept in source order.
 */
#ifndef BNN_AST_H
#define BNN_AST_H

#include <stddef.h>

#include "diag.h"

/* --- arena ---------------------------------------------------------------- */

struct ast_chunk;
struct ast_arena {
	struct ast_chunk *chunks; /* owned: newest first */
	int failed;               /* an allocation failed (the parse is abandoned) */
};

void *ast_alloc(struct ast_arena *a, size_t size); /* zeroed; NULL on failure */
char *ast_strndup(struct ast_arena *a, const char *s, size_t n);
void ast_arena_free(struct ast_arena *a);

/* --- expressions ---------------------------------------------------------- */

enum ast_expr_kind {
	AST_NAME,   /* a reference to a node, block parameter or keyword value */
	AST_CALL,   /* OP(args) or BLOCK(args), optionally annotated ~ FAMILY */
	AST_NUMBER, /* a numeric literal, possibly negated */
	AST_BOOL,   /* true or false */
	AST_TUPLE   /* (a, b, ...): e.g. kernel = (3, 5) */
};

struct ast_arg;
struct ast_family;

struct ast_expr {
	enum ast_expr_kind kind;
	bnn_loc loc;               /* the whole expression */
	const char *name;          /* NAME: the name; CALL: the callee */
	bnn_loc name_loc;          /* CALL: the callee */
	struct ast_arg *args;      /* CALL: arguments; TUPLE: elements (positional) */
	struct ast_family *family; /* CALL: the "~ FAMILY" annotation, or NULL */
	double number;             /* NUMBER: the value */
	int is_integer;            /* NUMBER: written without '.' or exponent */
	const char *text;          /* NUMBER: the spelling, for messages */
	int boolean;               /* BOOL: the value */
};

/* One argument, positional (key == NULL) or "key = value". */
struct ast_arg {
	const char *key; /* the keyword, or NULL */
	bnn_loc key_loc; /* the keyword's location */
	struct ast_expr *value;
	struct ast_arg *next;
};

/* "~ NAME(args)" after a call, or the target of "posterior NAME(args);" and
 * "prior NAME(args);". */
struct ast_family {
	const char *name;
	bnn_loc loc;          /* the name */
	bnn_loc full_loc;     /* name through the closing parenthesis */
	struct ast_arg *args; /* may be NULL */
};

/* --- statements ----------------------------------------------------------- */

enum ast_stmt_kind {
	AST_MODEL,      /* model NAME; */
	AST_INPUT,      /* input NAME[d1, d2, ...]; */
	AST_PRIOR,      /* prior FAMILY(args); */
	AST_POSTERIOR,  /* posterior FAMILY(args); */
	AST_ASSIGN,     /* NAME = EXPR; */
	AST_LIKELIHOOD, /* NAME ~ LIKELIHOOD(args); */
	AST_BLOCK,      /* block NAME(params) { body } */
	AST_RETURN      /* return EXPR;  (inside a block) */
};

struct ast_param {
	const char *name;
	bnn_loc loc;
	struct ast_param *next;
};

struct ast_stmt {
	enum ast_stmt_kind kind;
	bnn_loc loc;      /* the whole statement */
	const char *name; /* MODEL, INPUT, ASSIGN, BLOCK: the name; LIKELIHOOD: the target */
	bnn_loc name_loc;
	struct ast_expr *expr;     /* ASSIGN, RETURN: the value; LIKELIHOOD: the call */
	struct ast_arg *dims;      /* INPUT: the dimensions */
	int ids;                   /* INPUT: declared "int": integer ids */
	bnn_loc ids_loc;           /* INPUT: where "int" was written */
	struct ast_family *family; /* PRIOR, POSTERIOR */
	struct ast_param *params;  /* BLOCK: the parameters */
	struct ast_stmt *body;     /* BLOCK: the statements */
	bnn_loc close_loc;         /* BLOCK: the closing brace */
	int warned;                /* sema: BLOCK: its unused-parameter warning was given */
	int live;                  /* sema: ASSIGN: some statement names it */
	int bad;                   /* sema: BLOCK: its definition has errors */
	int used;                  /* sema: BLOCK: it was called */
	struct ast_stmt *next;
};

/* Constructors used by the grammar actions.  All allocate from ARENA and
 * return NULL if it is exhausted (ARENA->failed is then set). */
struct ast_expr *ast_name(struct ast_arena *a, const char *name, bnn_loc loc);
struct ast_expr *ast_call(struct ast_arena *a, const char *callee, bnn_loc callee_loc,
                          struct ast_arg *args, bnn_loc loc);
struct ast_expr *ast_number(struct ast_arena *a, const char *text, double value, int is_integer,
                            bnn_loc loc);
struct ast_expr *ast_bool(struct ast_arena *a, int value, bnn_loc loc);
struct ast_expr *ast_tuple(struct ast_arena *a, struct ast_arg *elems, bnn_loc loc);
struct ast_arg *ast_arg(struct ast_arena *a, const char *key, bnn_loc key_loc,
                        struct ast_expr *value);
struct ast_family *ast_family(struct ast_arena *a, const char *name, bnn_loc loc,
                              struct ast_arg *args, bnn_loc full_loc);
struct ast_param *ast_param(struct ast_arena *a, const char *name, bnn_loc loc);
struct ast_stmt *ast_stmt(struct ast_arena *a, enum ast_stmt_kind kind, bnn_loc loc);

/* List reversal: the grammar prepends (O(1)) and reverses once at the end. */
struct ast_arg *ast_args_reverse(struct ast_arg *list);
struct ast_param *ast_params_reverse(struct ast_param *list);
struct ast_stmt *ast_stmts_reverse(struct ast_stmt *list);

int ast_args_count(const struct ast_arg *list);

#endif
