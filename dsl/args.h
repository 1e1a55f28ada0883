/* args.h: one mechanism for the arguments of every callable in the language:
 * ops, posterior families, likelihoods, the prior and blocks.
 *
 * A callable describes its parameters with an arg_spec table.  args_bind()
 * matches the written arguments (positional first, then "key = value") to
 * the table and reports too many, unknown, repeated or missing arguments.
 * Once sema.c has evaluated a bound argument to a constant (struct value),
 * args_number() and friends check its type and range against the spec.
 */
#ifndef BNN_ARGS_H
#define BNN_ARGS_H

#include "ast.h"

enum arg_type {
	ARG_NODE,     /* a node */
	ARG_NODES,    /* two or more nodes: all remaining positional arguments */
	ARG_INT,      /* an integer */
	ARG_INT_PAIR, /* an integer k, or a pair (a, b) */
	ARG_REAL,     /* a number */
	ARG_BOOL,     /* true or false */
	ARG_SIGMA,    /* a positive number, the word 'learned', or (where the
	                 callee takes one) a node giving the parameter's log */
	ARG_WORD      /* one of the words the op's check hook accepts */
};

enum {
	ARG_LO_OPEN = 1,
	ARG_HI_OPEN = 2
};

struct arg_spec {
	const char *name; /* the keyword */
	enum arg_type type;
	int required;   /* no default */
	double def;     /* the default of an optional number or bool */
	double lo, hi;  /* the accepted range of numbers */
	unsigned flags; /* ARG_LO_OPEN, ARG_HI_OPEN: exclusive bounds */
};

enum {
	ARGS_MAX = 8
};

/* Which written argument went to which parameter. */
struct arg_binding {
	const struct ast_arg *arg[ARGS_MAX]; /* per spec entry: the argument or NULL */
	const struct ast_arg *rest;          /* ARG_NODES: the first of its arguments */
	int nrest;                           /* ARG_NODES: how many */
};

/* Binds ARGS to SPEC[0..NSPEC).  WHAT names the callee in messages ("'dense'",
 * "family 'emp'").  Returns 0, or -1 after reporting at least one error. */
int args_bind(struct diag *d, const char *what, bnn_loc call_loc, const struct arg_spec *spec,
              int nspec, const struct ast_arg *args, struct arg_binding *b);

/* Writes "(x, units, bias = true)" for SPEC into BUF. */
void args_signature(const struct arg_spec *spec, int nspec, char *buf, size_t size);

/* A constant argument, as sema.c evaluates it. */
enum value_kind {
	VAL_NONE,
	VAL_NUMBER,
	VAL_BOOL,
	VAL_WORD,
	VAL_TUPLE,
	VAL_NODE,
	VAL_CALL
};

struct value {
	enum value_kind kind;
	bnn_loc loc;
	double num[2];     /* NUMBER: num[0]; TUPLE: both elements (numbers only) */
	int is_integer[2]; /* written as integers */
	const char *text;  /* NUMBER: the spelling; NODE: its name; CALL: the callee */
	int ntuple;        /* TUPLE: number of elements */
	int tuple_ok;      /* TUPLE: every element is a number */
	int boolean;       /* BOOL */
	const char *word;  /* WORD: a name that is neither node nor parameter */
	int node;          /* NODE: its index */
};

/* Each checks V against SPEC and stores the result, or reports an error and
 * returns -1.  V == NULL means "not given": the spec's default is stored. */
int args_number(struct diag *d, const struct arg_spec *spec, const struct value *v, double *out);
int args_long(struct diag *d, const struct arg_spec *spec, const struct value *v, long *out);
int args_pair(struct diag *d, const struct arg_spec *spec, const struct value *v, long out[2]);
int args_bool(struct diag *d, const struct arg_spec *spec, const struct value *v, int *out);
/* ARG_SIGMA: *LEARNED is set for the word 'learned'; with NODE not NULL a
 * node is accepted too and *NODE receives its index (else -1); else *OUT
 * receives the number. */
int args_sigma(struct diag *d, const struct arg_spec *spec, const struct value *v, double *out,
               int *learned, int *node);

/* "a number", "the word 'x'", "node 'h1'"...: what V is, for messages. */
void args_describe(const struct value *v, char *buf, size_t size);

#endif
