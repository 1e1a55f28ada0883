/* sema.c: semantic analysis of a .bnn file (see sema.h).
 *
 * How it is organised.  Names live in scopes: the top level, and one scope
 * per block expansion.  A scope's definitions may come in any order, so each
 * scope is processed in two steps:
 *
 *   1. order: a depth-first search over "this definition names that one"
 *      (iterative, so a chain of 100,000 statements needs no deep C stack)
 *      gives a topological order and finds cycles;
 *   2. build: the definitions are evaluated in that order.  Evaluating an
 *      expression creates graph nodes, inputs first; a call of a block opens
 *      a new scope whose names are prefixed with the call site's name.
 *
 * Block arguments are evaluated once, in the caller's scope, when the block
 * is expanded: node arguments become node indices, constants stay values.
 * A block that calls another one twice doubles its size, so a short file can
 * ask for 2^30 nodes: expansions may make SEMA_MAX_EXPANDED nodes in all.
 * The first block call that starts or ends with more reports it, and the
 * analysis gives up.
 *
 * Failures propagate silently: an expression that refers to a definition
 * that already failed yields SEMA_QUIET instead of another error, so one
 * mistake produces one message.
 */
#include "sema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "ops.h"
#include "priors.h"
#include "symtab.h"

enum {
	SEMA_FAILED = -1,
	SEMA_QUIET = -2
}; /* results of building a node */
enum {
	SEMA_MAX_BLOCK_DEPTH = 32,
	SEMA_MAX_DIMS = 3
};
enum {
	SEMA_MAX_EXPANDED = 100000
}; /* nodes made by block expansions, in all */
enum def_state {
	DEF_NEW,
	DEF_OPEN,
	DEF_DONE,
	DEF_FAILED
};

/* A name defined in a scope by an assignment (or the input declaration). */
struct sema_def {
	struct ast_stmt *stmt;
	const char *name;      /* as written */
	const char *full_name; /* with the scope's prefix */
	enum def_state state;
	int node;               /* the node it names once DONE */
	int referenced;         /* some expression names it */
	struct sema_def **deps; /* owned: definitions its expression names */
	int ndeps, next_dep;    /* next_dep: the search's position in deps */
};

struct sema_scope {
	struct sema_scope *caller; /* the scope that expanded this block, or NULL */
	struct ast_stmt *block;    /* the block, or NULL at the top level */
	const char *prefix;        /* "" at the top level, "s1" in an expansion */
	const char *call_name;     /* the name the expansion's result gets */
	bnn_loc call_loc;
	struct symtab defs;   /* name -> struct sema_def */
	struct sema_def *def; /* owned: the definitions in source order */
	int ndefs;
	struct ast_param *params;    /* the block's parameters */
	struct value args[ARGS_MAX]; /* their values, evaluated in the caller */
	int param_used[ARGS_MAX];
};

/* Where a node name was taken, to point at it when it clashes. */
struct sema_name {
	bnn_loc loc;
};

struct sema {
	struct diag *d;
	struct ast_arena *arena;
	struct graph *g;
	struct symtab names;   /* every node name -> struct sema_name */
	struct symtab derived; /* derived base name -> last suffix used (as a pointer) */
	struct symtab blocks;  /* block name -> struct ast_stmt */
	struct ast_stmt *model, *input, *prior, *posterior, *likelihood;
	struct sema_scope *cur; /* the scope being built, for context notes */
	int depth;              /* block expansions open */
	int expanded;           /* nodes made inside block expansions */
	int too_big;            /* more than SEMA_MAX_EXPANDED of them: give up */
	int oom;                /* out of memory: give up */
};

static int sema_expr(struct sema *s, struct sema_scope *sc, struct ast_expr *e, const char *name,
                     bnn_loc name_loc, const char *hint);

/* --- small helpers --------------------------------------------------------- */

/* diag's context hook: after an error inside a block expansion, say which
 * call expanded it, innermost first. */
static void sema_context(struct diag *d, void *arg)
{
	const struct sema *s = arg;
	const struct sema_scope *sc;
	for (sc = s->cur; sc && sc->block; sc = sc->caller)
		diag_note(d, sc->call_loc, "in block '%s', expanded here as '%s'", sc->block->name,
		          sc->call_name);
}

static char *sema_strf(struct sema *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *sema_strf(struct sema *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	return ast_strndup(s->arena, buf, (size_t)n);
}

static void sema_oom(struct sema *s)
{
	if (!s->oom)
		diag_error(s->d, diag_noloc, "out of memory");
	s->oom = 1;
}

/* Claims NAME for a node.  Returns 0, or -1 after reporting a clash. */
static int sema_claim(struct sema *s, const char *name, bnn_loc loc, const char *how)
{
	struct sema_name *entry = ast_alloc(s->arena, sizeof *entry);
	void *old = NULL;
	int r;
	if (!entry) {
		sema_oom(s);
		return -1;
	}
	entry->loc = loc;
	r = symtab_put(&s->names, name, entry, &old);
	if (r < 0) {
		sema_oom(s);
		return -1;
	}
	if (r == 0) {
		diag_error(s->d, loc, "%s '%s', which is already taken", how, name);
		diag_note(s->d, ((struct sema_name *)old)->loc, "'%s' was first defined here",
		          name);
		return -1;
	}
	return 0;
}

/* "A_B", without doubling an underscore that A already ends with. */
static const char *sema_join(struct sema *s, const char *a, const char *b)
{
	size_t n = strlen(a);
	return sema_strf(s, "%s%s%s", a, n && a[n - 1] == '_' ? "" : "_", b);
}

/* A fresh name "HINT_CALLEE" (or "..._2", "..._3") for a nested call,
 * never a C keyword or reserved identifier. */
static const char *sema_derive(struct sema *s, const char *hint, const char *callee, bnn_loc loc)
{
	const char *base = sema_join(s, hint, callee), *name = base;
	int *count = base ? symtab_get(&s->derived, base) : NULL;
	if (base && !count && (count = ast_alloc(s->arena, sizeof *count)) &&
	    symtab_put(&s->derived, base, count, NULL) < 0)
		count = NULL;
	if (!count) {
		sema_oom(s);
		return NULL;
	}
	if (*count == 0)
		*count = 1;
	while (name && (symtab_get(&s->names, name) || names_is_reserved(name)))
		name = sema_strf(s, "%s_%d", base, ++*count);
	if (!name) {
		sema_oom(s);
		return NULL;
	}
	return sema_claim(s, name, loc, "the derived name") == 0 ? name : NULL;
}

/* Reports NAME as undefined in SC, with a suggestion from its scope. */
static void sema_undefined(struct sema *s, struct sema_scope *sc, const char *name, bnn_loc loc)
{
	struct names_suggestion sug;
	struct ast_param *p;
	int i;
	names_suggest_init(&sug, name);
	for (i = 0; i < sc->ndefs; i++)
		names_suggest_offer(&sug, sc->def[i].name);
	for (p = sc->params; p; p = p->next)
		names_suggest_offer(&sug, p->name);
	if (sug.best)
		diag_error(s->d, loc, "'%s' is not defined; did you mean '%s'?", name, sug.best);
	else if (sc->block)
		diag_error(
		        s->d, loc,
		        "'%s' is not defined in block '%s' (a block sees only its parameters and its own names)",
		        name, sc->block->name);
	else
		diag_error(s->d, loc, "'%s' is not defined", name);
}

/* --- values ---------------------------------------------------------------- */

/* Records that an expression names DEF; returns 1. */
static int sema_mark_used(struct sema_def *def)
{
	def->referenced = 1;
	if (def->stmt->kind == AST_ASSIGN)
		def->stmt->live = 1; /* for block locals: named by some expansion */
	return 1;
}

static int sema_param_index(struct sema_scope *sc, const char *name)
{
	struct ast_param *p;
	int i = 0;
	for (p = sc->params; p; p = p->next, i++)
		if (strcmp(p->name, name) == 0)
			return i;
	return -1;
}

/* Evaluates E as a constant argument (or a node reference) into V, without
 * creating nodes.  Calls become VAL_CALL; unknown names become words. */
static void sema_value(struct sema *s, struct sema_scope *sc, struct ast_expr *e, struct value *v)
{
	struct ast_arg *a;
	struct sema_def *def;
	int i;
	memset(v, 0, sizeof *v);
	v->loc = e->loc;
	switch (e->kind) {
	case AST_NUMBER:
		v->kind = VAL_NUMBER;
		v->num[0] = e->number;
		v->is_integer[0] = e->is_integer;
		v->text = e->number < 0 ? sema_strf(s, "-%s", e->text) : e->text;
		break;
	case AST_BOOL:
		v->kind = VAL_BOOL;
		v->boolean = e->boolean;
		break;
	case AST_TUPLE:
		v->kind = VAL_TUPLE;
		v->tuple_ok = 1;
		for (a = e->args; a; a = a->next, v->ntuple++) {
			struct value elem;
			sema_value(s, sc, a->value, &elem);
			if (elem.kind != VAL_NUMBER)
				v->tuple_ok = 0;
			if (elem.kind != VAL_NUMBER || v->ntuple >= 2)
				continue; /* only pairs are ever used: keep the first two */
			v->num[v->ntuple] = elem.num[0];
			v->is_integer[v->ntuple] = elem.is_integer[0];
		}
		break;
	case AST_CALL:
		v->kind = VAL_CALL;
		v->text = e->name;
		break;
	case AST_NAME:
		if ((i = sema_param_index(sc, e->name)) >= 0) {
			sc->param_used[i] = 1;
			*v = sc->args[i];
			v->loc = e->loc;
		} else if ((def = symtab_get(&sc->defs, e->name)) && sema_mark_used(def) &&
		           def->state == DEF_DONE) {
			v->kind = VAL_NODE;
			v->node = def->node;
			v->text = s->g->nodes[def->node].name;
		} else if (def) {
			v->kind = VAL_NONE; /* a definition that failed */
		} else {
			v->kind = VAL_WORD;
			v->word = e->name;
		}
		break;
	}
}

/* --- nodes ----------------------------------------------------------------- */

/* Resolves a name used where a node is needed. */
static int sema_name_ref(struct sema *s, struct sema_scope *sc, struct ast_expr *e)
{
	struct sema_def *def = symtab_get(&sc->defs, e->name);
	int i;
	if (def) {
		sema_mark_used(def);
		return def->state == DEF_DONE ? def->node : SEMA_QUIET;
	}
	if ((i = sema_param_index(sc, e->name)) >= 0) {
		const struct value *v = &sc->args[i];
		char what[96];
		sc->param_used[i] = 1;
		if (v->kind == VAL_NODE)
			return v->node;
		if (v->kind == VAL_NONE)
			return SEMA_QUIET;
		args_describe(v, what, sizeof what);
		diag_error(s->d, e->loc, "parameter '%s' is %s here, but a node is needed", e->name,
		           what);
		diag_note(s->d, sc->call_loc, "'%s' was given by this call of block '%s'", e->name,
		          sc->block->name);
		return SEMA_FAILED;
	}
	sema_undefined(s, sc, e->name, e->loc);
	return SEMA_FAILED;
}

/* Appends a node for OP named NAME; returns its index or SEMA_FAILED. */
static int sema_new_node(struct sema *s, enum op_id op, const char *name, bnn_loc loc,
                         bnn_loc name_loc, int *inputs, int ninputs)
{
	int i = graph_add_node(s->g);
	struct graph_node *n;
	if (i < 0) {
		free(inputs);
		sema_oom(s);
		return SEMA_FAILED;
	}
	if (s->depth > 0)
		s->expanded++;
	n = &s->g->nodes[i];
	n->op = op;
	n->name = name;
	n->loc = loc;
	n->name_loc = name_loc;
	n->inputs = inputs;
	n->ninputs = ninputs;
	return i;
}

/* Evaluates the arguments of a family annotation or statement into F. */
static int sema_family(struct sema *s, struct sema_scope *sc, struct ast_family *af,
                       struct family *f)
{
	const struct family_info *info = family_lookup(af->name);
	struct arg_binding b;
	struct value vals[ARGS_MAX];
	const struct value *val[ARGS_MAX] = { 0 };
	char what[64];
	int i;

	memset(f, 0, sizeof *f);
	f->loc = af->full_loc;
	if (!info) {
		struct names_suggestion sug;
		names_suggest_init(&sug, af->name);
		for (i = 0; i < FAMILY_COUNT; i++)
			names_suggest_offer(&sug, family_name((enum family_id)i));
		if (sug.best)
			diag_error(s->d, af->loc,
			           "unknown posterior family '%s'; did you mean '%s'?", af->name,
			           sug.best);
		else
			diag_error(
			        s->d, af->loc,
			        "unknown posterior family '%s' (the families are point, meanfield, dropout, whvi, emp and ecmp)",
			        af->name);
		return -1;
	}
	f->id = (enum family_id)(info - family_get(0));
	snprintf(what, sizeof what, "family '%s'", info->name);
	if (args_bind(s->d, what, af->full_loc, info->spec, info->nspec, af->args, &b) != 0)
		return -1;
	for (i = 0; i < info->nspec; i++)
		if (b.arg[i]) {
			sema_value(s, sc, b.arg[i]->value, &vals[i]);
			val[i] = &vals[i];
		}
	return family_check(s->d, f, val);
}

/* The normalisation layers, whose scale and shift stay point estimates
 * unless annotated (the model's default posterior is for weights). */
static int sema_point_by_default(enum op_id op)
{
	return op == OP_BATCHNORM || op == OP_LAYERNORM || op == OP_GROUPNORM;
}

/* A per_step dense layer (ops.c) refuses the families written for one
 * product per example: whvi's structured product and emp/ecmp's patching
 * are untested on its B·T rows. */
static int sema_refused_per_step(const struct graph_node *n)
{
	return n->op == OP_DENSE && n->attrs.per_step &&
	       (n->family.id == FAMILY_WHVI || n->family.id == FAMILY_EMP ||
	        n->family.id == FAMILY_ECMP);
}

/* The KL terms of emp, ecmp and whvi are written for a Gaussian prior:
 * such a layer under a model prior of another kind needs a precision of
 * its own (the runtime refuses it too, train_check_prior, for code not
 * compiled by this bnnc; here it is an error at its place). */
static int sema_kl_needs_gaussian(struct sema *s, const struct graph_node *n,
                                  const struct ast_family *af)
{
	const enum family_id f = n->family.id;
	const char *name = family_name(f);

	if ((f != FAMILY_EMP && f != FAMILY_ECMP && f != FAMILY_WHVI) || n->family.prior > 0 ||
	    s->g->prior == PRIOR_GAUSSIAN)
		return 0;
	diag_error(s->d, af ? af->loc : n->loc,
	           "layer '%s' has %s %s posterior, whose KL term needs a gaussian prior, and the "
	           "model's prior is %s: give the layer a precision of its own ('~ %s(prior = "
	           "...)')",
	           n->name, strchr("aeiou", name[0]) ? "an" : "a", name,
	           prior_get((enum prior_id)s->g->prior)->name, name);
	if (s->prior)
		diag_note(s->d, s->prior->loc, "the model's prior is declared here");
	return -1;
}

/* Attaches the posterior family of node N: the annotation AF, else the
 * model's default for dense and conv2d, else point. */
static int sema_attach_family(struct sema *s, struct sema_scope *sc, struct graph_node *n,
                              struct ast_family *af)
{
	n->has_family = op_has_weights(n->op);
	if (!n->has_family) {
		if (af) {
			diag_error(s->d, af->loc,
			           "'%s' has no weights, so it cannot have a posterior",
			           op_name(n->op));
			return -1;
		}
		n->posterior_params = n->model_params;
		return 0;
	}
	if (af) {
		if (sema_family(s, sc, af, &n->family) != 0)
			return -1;
	} else if (!sema_point_by_default(n->op)) {
		n->family = s->g->default_family;
	} else {
		n->family.id = FAMILY_POINT;
	}
	if (!family_applies(n->family.id, n->op) || sema_refused_per_step(n)) {
		const char *why =
		        n->op == OP_GRU ? "the weights of gru take point, meanfield or dropout"
		        : n->op == OP_ATTENTION
		                ? "the projections of attention take point, meanfield or dropout"
		        : n->op == OP_DENSE
		                ? "a per_step dense layer takes point, meanfield or dropout"
		        : n->family.id == FAMILY_WHVI ? "whvi is defined for dense layers only"
		        : n->family.id == FAMILY_DROPOUT
		                ? "dropout masks the input units of dense, conv2d, conv1d, gru and "
		                  "attention layers, or the rows of an embedding"
		        : n->op == OP_EMBEDDING
		                ? "the rows of an embedding take point, meanfield or dropout"
		                : "the scales and shifts of layernorm and groupnorm take point or meanfield only";
		diag_error(s->d, af ? af->loc : n->loc,
		           "posterior '%s' cannot apply to %s layer '%s': %s",
		           family_name(n->family.id), op_name(n->op), n->name, why);
		if (!af)
			diag_note(
			        s->d, n->family.loc,
			        "the default posterior is set here; annotate the layer with '~ point' or another family");
		return -1;
	}
	if (sema_kl_needs_gaussian(s, n, af) != 0)
		return -1;
	family_count(n);
	return 0;
}

static int sema_check_size(struct sema *s, const struct graph_node *n)
{
	long long e = graph_node_elements(n);
	if (e > GRAPH_MAX_ELEMENTS) {
		diag_error(s->d, n->loc,
		           "the output of '%s' would have %lld elements (the limit is %ld)",
		           n->name, e, GRAPH_MAX_ELEMENTS);
		return -1;
	}
	if (n->model_params > GRAPH_MAX_ELEMENTS) {
		diag_error(s->d, n->loc,
		           "'%s' would have %lld parameters (the limit is %ld per layer)", n->name,
		           n->model_params, GRAPH_MAX_ELEMENTS);
		return -1;
	}
	return 0;
}

/* Evaluates the node arguments of a call (in order, so inputs come first). */
static int sema_call_inputs(struct sema *s, struct sema_scope *sc, const struct op_info *op,
                            const struct arg_binding *b, const char *hint, int **inputs,
                            int *ninputs)
{
	const struct ast_arg *a;
	int i, k = 0, bad = 0, n = 0;
	for (i = 0; i < op->nspec; i++)
		n += op->spec[i].type == ARG_NODE    ? 1
		     : op->spec[i].type == ARG_NODES ? b->nrest
		                                     : 0;
	*inputs = calloc((size_t)(n ? n : 1), sizeof **inputs);
	if (!*inputs) {
		sema_oom(s);
		return SEMA_FAILED;
	}
	for (i = 0; i < op->nspec; i++) {
		int count = op->spec[i].type == ARG_NODE    ? 1
		            : op->spec[i].type == ARG_NODES ? b->nrest
		                                            : 0;
		for (a = op->spec[i].type == ARG_NODES ? b->rest : b->arg[i]; count-- > 0;
		     a = a->next) {
			int r = sema_expr(s, sc, a->value, NULL, a->value->loc, hint);
			if (r < 0)
				bad = bad == SEMA_FAILED ? bad : r;
			(*inputs)[k++] = r;
		}
	}
	*ninputs = k;
	if (bad) {
		free(*inputs);
		*inputs = NULL;
	}
	return bad;
}

/* Integer ids are read by embedding alone: any other op refuses an input
 * declared "int", at the argument that names it (a variadic list's at the
 * call).  embedding's own check refuses real values. */
static int sema_check_ids(struct sema *s, const struct op_info *op, const struct op_ctx *c,
                          bnn_loc call)
{
	int k;
	if (c->n->op == OP_EMBEDDING)
		return 0;
	for (k = 0; k < c->n->ninputs; k++) {
		const struct graph_node *in = &s->g->nodes[c->n->inputs[k]];
		if (!in->ids)
			continue;
		diag_error(s->d, k < op->nspec && op->spec[k].type == ARG_NODE ? c->loc[k] : call,
		           "'%s' needs a real input; '%s' holds integer ids (use embedding)",
		           op->name, in->name);
		return -1;
	}
	return 0;
}

static int sema_op_call(struct sema *s, struct sema_scope *sc, struct ast_expr *e,
                        const struct op_info *op, const char *name, bnn_loc name_loc,
                        const char *hint)
{
	struct arg_binding b;
	struct value vals[ARGS_MAX];
	struct op_ctx c;
	int *inputs, ninputs, i, r, bad = 0;
	char what[64];

	snprintf(what, sizeof what, "'%s'", op->name);
	if (args_bind(s->d, what, e->loc, op->spec, op->nspec, e->args, &b) != 0)
		return SEMA_FAILED;
	if ((r = sema_call_inputs(s, sc, op, &b, hint, &inputs, &ninputs)) != 0)
		return r;
	memset(&c, 0, sizeof c);
	for (i = 0; i < op->nspec; i++) {
		c.loc[i] = b.arg[i] ? b.arg[i]->value->loc : e->loc;
		if (op->spec[i].type != ARG_NODE && op->spec[i].type != ARG_NODES && b.arg[i]) {
			sema_value(s, sc, b.arg[i]->value, &vals[i]);
			if (vals[i].kind == VAL_NONE)
				bad = 1; /* names a definition that failed: already reported */
			c.val[i] = &vals[i];
		}
	}
	if (!name && !(name = sema_derive(s, hint, op->name, e->loc))) {
		free(inputs);
		return SEMA_FAILED;
	}
	if ((r = sema_new_node(s, (enum op_id)(op - op_get(0)), name, e->loc, name_loc, inputs,
	                       ninputs)) < 0)
		return r;
	c.d = s->d;
	c.g = s->g;
	c.n = &s->g->nodes[r];
	if (bad || sema_check_ids(s, op, &c, e->loc) != 0 || op->check(&c) != 0 ||
	    sema_attach_family(s, sc, c.n, e->family) != 0 || sema_check_size(s, c.n) != 0)
		return bad ? SEMA_QUIET : SEMA_FAILED;
	return r;
}

/* --- scopes ------------------------------------------------------------------ */

static int sema_scope_build(struct sema *s, struct sema_scope *sc);

/* Adds the definition of STMT to SC; reports redefinitions. */
static int sema_define(struct sema *s, struct sema_scope *sc, struct ast_stmt *st)
{
	struct sema_def *def = &sc->def[sc->ndefs];
	void *old = NULL;
	int r;
	memset(def, 0, sizeof *def);
	def->stmt = st;
	def->name = st->name;
	def->full_name = sc->prefix[0] ? sema_join(s, sc->prefix, st->name) : st->name;
	def->node = SEMA_QUIET;
	r = symtab_put(&sc->defs, st->name, def, &old);
	if (r < 0 || !def->full_name) {
		sema_oom(s);
		return -1;
	}
	if (r == 0) {
		diag_error(s->d, st->name_loc, "redefinition of '%s'", st->name);
		diag_note(s->d, ((struct sema_def *)old)->stmt->name_loc,
		          "'%s' was first defined here", st->name);
		return -1;
	}
	sc->ndefs++;
	return 0;
}

/* Collects into DEF->deps the definitions of SC that E names. */
static int sema_collect_deps(struct sema *s, struct sema_scope *sc, struct ast_expr *e,
                             struct sema_def *def, int *cap)
{
	struct ast_arg *a;
	struct sema_def *dep;
	if (e->kind == AST_NAME && (dep = symtab_get(&sc->defs, e->name))) {
		if (def->ndeps == *cap) {
			int ncap = *cap ? 2 * *cap : 4;
			struct sema_def **grown = realloc(def->deps, (size_t)ncap * sizeof *grown);
			if (!grown) {
				sema_oom(s);
				return -1;
			}
			def->deps = grown;
			*cap = ncap;
		}
		def->deps[def->ndeps++] = dep;
	}
	if (e->kind == AST_CALL || e->kind == AST_TUPLE)
		for (a = e->args; a; a = a->next)
			if (sema_collect_deps(s, sc, a->value, def, cap) != 0)
				return -1;
	return 0;
}

/* Reports the cycle that closes at DEF: STACK[from..top] lead back to it. */
static void sema_report_cycle(struct sema *s, struct sema_def **stack, int from, int top)
{
	char path[512];
	size_t used = 0;
	int i;
	for (i = from; i <= top && used < sizeof path; i++)
		used += (size_t)snprintf(path + used, sizeof path - used, "'%s' -> ",
		                         stack[i]->name);
	if (used < sizeof path)
		snprintf(path + used, sizeof path - used, "'%s'", stack[from]->name);
	if (from == top)
		diag_error(s->d, stack[from]->stmt->name_loc, "'%s' is defined in terms of itself",
		           stack[from]->name);
	else
		diag_error(s->d, stack[from]->stmt->name_loc, "the definitions form a cycle: %s",
		           path);
	for (i = from + 1; i <= top; i++)
		diag_note(s->d, stack[i]->stmt->name_loc, "'%s' is defined here", stack[i]->name);
	for (i = from; i <= top; i++)
		stack[i]->state = DEF_FAILED;
}

/* Orders SC's definitions so each comes after those it names (iterative
 * depth-first search); ORDER receives them.  Cycles are reported. */
static int sema_scope_order(struct sema *s, struct sema_scope *sc, struct sema_def **order,
                            int *norder)
{
	struct sema_def **stack = malloc((size_t)(sc->ndefs ? sc->ndefs : 1) * sizeof *stack);
	int i, top;
	if (!stack) {
		sema_oom(s);
		return -1;
	}
	*norder = 0;
	for (i = 0; i < sc->ndefs; i++) {
		int cap = 0;
		if (sc->def[i].stmt->kind == AST_ASSIGN &&
		    sema_collect_deps(s, sc, sc->def[i].stmt->expr, &sc->def[i], &cap) != 0) {
			free(stack);
			return -1;
		}
	}
	for (i = 0; i < sc->ndefs; i++) {
		if (sc->def[i].state != DEF_NEW)
			continue;
		top = 0;
		stack[0] = &sc->def[i];
		stack[0]->state = DEF_OPEN;
		while (top >= 0) {
			struct sema_def *cur = stack[top];
			if (cur->state == DEF_OPEN && cur->next_dep < cur->ndeps) {
				struct sema_def *dep = cur->deps[cur->next_dep++];
				if (dep->state == DEF_NEW) {
					dep->state = DEF_OPEN;
					stack[++top] = dep;
				} else if (dep->state == DEF_OPEN) {
					int from = top;
					while (stack[from] != dep)
						from--;
					sema_report_cycle(s, stack, from, top);
				}
				continue;
			}
			if (cur->state == DEF_OPEN) {
				cur->state = DEF_DONE; /* ordered; built later */
				order[(*norder)++] = cur;
			}
			top--;
		}
	}
	free(stack);
	return 0;
}

/* Builds every definition of SC in dependency order. */
static int sema_scope_build(struct sema *s, struct sema_scope *sc)
{
	struct sema_def **order = malloc((size_t)(sc->ndefs ? sc->ndefs : 1) * sizeof *order);
	int i, n = 0;
	if (!order || sema_scope_order(s, sc, order, &n) != 0) {
		free(order);
		if (!order)
			sema_oom(s);
		return -1;
	}
	for (i = 0; i < n; i++) /* mark "not yet built" until each is evaluated */
		order[i]->state = DEF_NEW;
	for (i = 0; i < n && !s->oom && !diag_should_stop(s->d); i++) {
		struct sema_def *def = order[i];
		int r;
		if (def->stmt->kind != AST_ASSIGN) { /* the input, built beforehand */
			def->state = DEF_DONE;
			continue;
		}
		r = sema_expr(s, sc, def->stmt->expr, def->full_name, def->stmt->name_loc,
		              def->full_name);
		def->node = r;
		def->state = r >= 0 ? DEF_DONE : DEF_FAILED;
	}
	free(order);
	return 0;
}

static void sema_scope_free(struct sema_scope *sc)
{
	int i;
	for (i = 0; i < sc->ndefs; i++)
		free(sc->def[i].deps);
	free(sc->def);
	symtab_free(&sc->defs);
}

/* --- blocks ------------------------------------------------------------------ */

/* Checks a block definition once: parameters, statements, one return. */
static void sema_block_check(struct sema *s, struct ast_stmt *b)
{
	struct ast_stmt *st, *ret = NULL;
	struct ast_param *p, *q;
	int nparams = 0;
	for (p = b->params; p; p = p->next, nparams++)
		for (q = b->params; q != p; q = q->next)
			if (strcmp(p->name, q->name) == 0) {
				diag_error(s->d, p->loc, "block '%s' has two parameters named '%s'",
				           b->name, p->name);
				b->bad = 1;
			}
	if (nparams > ARGS_MAX) {
		diag_error(s->d, b->name_loc, "block '%s' has %d parameters (the limit is %d)",
		           b->name, nparams, ARGS_MAX);
		b->bad = 1;
	}
	for (st = b->body; st; st = st->next) {
		if (st->kind == AST_RETURN) {
			if (ret) {
				diag_error(s->d, st->loc, "block '%s' has a second 'return'",
				           b->name);
				diag_note(s->d, ret->loc, "the first 'return' is here");
				b->bad = 1;
			}
			ret = st;
		} else if (st->kind != AST_ASSIGN) {
			diag_error(s->d, st->loc,
			           "only assignments and 'return' may appear inside a block");
			b->bad = 1;
		} else if (names_check(s->d, st->name, st->name_loc, "node") != 0) {
			b->bad = 1;
		} else {
			for (p = b->params; p; p = p->next)
				if (strcmp(p->name, st->name) == 0) {
					diag_error(
					        s->d, st->name_loc,
					        "'%s' is a parameter of block '%s' and cannot be redefined",
					        st->name, b->name);
					diag_note(s->d, p->loc, "the parameter is declared here");
					b->bad = 1;
				}
		}
	}
	if (!ret) {
		diag_error(s->d, b->close_loc, "block '%s' has no 'return' statement", b->name);
		b->bad = 1;
	}
}

static struct ast_stmt *sema_block_return(struct ast_stmt *b)
{
	struct ast_stmt *st;
	for (st = b->body; st; st = st->next)
		if (st->kind == AST_RETURN)
			return st;
	return NULL;
}

/* Evaluates the arguments of a block call in the caller's scope. */
static int sema_block_args(struct sema *s, struct sema_scope *caller, struct sema_scope *sc,
                           struct ast_expr *e, const char *hint)
{
	struct arg_spec spec[ARGS_MAX];
	struct arg_binding b;
	struct ast_param *p;
	char what[96];
	int n = 0, i, bad = 0;
	for (p = sc->params; p; p = p->next, n++) {
		memset(&spec[n], 0, sizeof spec[n]);
		spec[n].name = p->name;
		spec[n].type = ARG_NODE;
		spec[n].required = 1;
	}
	snprintf(what, sizeof what, "block '%s'", sc->block->name);
	if (args_bind(s->d, what, e->loc, spec, n, e->args, &b) != 0)
		return SEMA_FAILED;
	for (i = 0; i < n; i++) {
		struct ast_expr *a = b.arg[i]->value;
		if (a->kind == AST_CALL) {
			int r = sema_expr(s, caller, a, NULL, a->loc, hint);
			sc->args[i].kind = r >= 0 ? VAL_NODE : VAL_NONE;
			sc->args[i].node = r;
			sc->args[i].text = r >= 0 ? s->g->nodes[r].name : NULL;
			sc->args[i].loc = a->loc;
			bad = r < 0 ? (bad == SEMA_FAILED ? bad : r) : bad;
		} else {
			sema_value(s, caller, a, &sc->args[i]);
			if (sc->args[i].kind == VAL_WORD) {
				sema_undefined(s, caller, a->name, a->loc);
				bad = SEMA_FAILED;
			} else if (sc->args[i].kind == VAL_NONE && !bad) {
				bad = SEMA_QUIET;
			}
		}
	}
	return bad;
}

/* A block-local name joined to its call site must still be a usable name. */
static int sema_check_expanded(struct sema *s, const char *name, bnn_loc loc)
{
	if (!names_is_reserved(name))
		return 0;
	diag_error(s->d, loc, "expanding the block here makes the name '%s', which is %s", name,
	           names_is_keyword(name) ? "a C or C++ keyword" : "reserved in C");
	return -1;
}

/* Is block B being expanded already (a recursive call)? */
static int sema_block_open(const struct sema_scope *sc, const struct ast_stmt *b)
{
	for (; sc; sc = sc->caller)
		if (sc->block == b)
			return 1;
	return 0;
}

/* Past SEMA_MAX_EXPANDED expanded nodes, reports it once, at the block call
 * E, and returns -1 (the analysis then gives up); else returns 0. */
static int sema_expansion_limit(struct sema *s, const struct ast_expr *e)
{
	if (s->expanded <= SEMA_MAX_EXPANDED)
		return 0;
	if (!s->too_big)
		diag_error(s->d, e->name_loc,
		           "blocks expand into too many nodes (the limit is %d in all)",
		           SEMA_MAX_EXPANDED);
	s->too_big = 1;
	return -1;
}

static int sema_block_call(struct sema *s, struct sema_scope *caller, struct ast_expr *e,
                           struct ast_stmt *b, const char *name, bnn_loc name_loc, const char *hint)
{
	struct sema_scope sc;
	struct ast_stmt *st, *ret;
	struct ast_param *p;
	int r, i, nbody = 0;

	b->used = 1;
	if (b->bad)
		return SEMA_QUIET;
	if (e->family) {
		diag_error(
		        s->d, e->family->loc,
		        "a block call cannot carry a posterior; annotate the layers inside block '%s'",
		        b->name);
		return SEMA_FAILED;
	}
	if (sema_block_open(caller, b)) {
		if (caller->block == b)
			diag_error(s->d, e->name_loc, "block '%s' calls itself", b->name);
		else
			diag_error(s->d, e->name_loc, "block '%s' calls itself through block '%s'",
			           b->name, caller->block->name);
		return SEMA_FAILED;
	}
	if (s->depth >= SEMA_MAX_BLOCK_DEPTH) {
		diag_error(s->d, e->name_loc, "blocks are nested too deeply (the limit is %d)",
		           SEMA_MAX_BLOCK_DEPTH);
		return SEMA_FAILED;
	}
	if (sema_expansion_limit(s, e) != 0)
		return SEMA_FAILED;
	if (!name && !(name = sema_derive(s, hint, b->name, e->loc)))
		return SEMA_FAILED;
	memset(&sc, 0, sizeof sc);
	sc.caller = caller;
	sc.block = b;
	sc.params = b->params;
	sc.call_name = name;
	sc.call_loc = e->loc;
	sc.prefix = name;
	for (st = b->body; st; st = st->next)
		nbody++;
	sc.def = calloc((size_t)(nbody ? nbody : 1), sizeof *sc.def);
	if (!sc.def || !sc.prefix) {
		sema_oom(s);
		free(sc.def);
		return SEMA_FAILED;
	}
	/* The block's names are claimed before its arguments are evaluated, so
     * nodes derived for the arguments steer clear of them. */
	r = 0;
	for (st = b->body; st && !r; st = st->next)
		if (st->kind == AST_ASSIGN && sema_define(s, &sc, st) == 0 &&
		    (sema_check_expanded(s, sc.def[sc.ndefs - 1].full_name, e->loc) != 0 ||
		     sema_claim(s, sc.def[sc.ndefs - 1].full_name, e->loc,
		                "expanding the block here makes the name") != 0))
			r = SEMA_FAILED;
	if (!r)
		r = sema_block_args(s, caller, &sc, e, hint);
	s->depth++;
	s->cur = &sc;
	if (!r && sema_scope_build(s, &sc) == 0) {
		ret = sema_block_return(b);
		r = sema_expr(s, &sc, ret->expr, name, name_loc, name);
	}
	s->cur = caller;
	s->depth--;
	if (r >= 0 && sema_expansion_limit(s, e) != 0)
		r = SEMA_FAILED;
	for (p = sc.params, i = 0; p && r >= 0; p = p->next, i++)
		if (!sc.param_used[i] && !b->warned) {
			diag_warning(s->d, p->loc, "parameter '%s' of block '%s' is never used",
			             p->name, b->name);
			b->warned = 1; /* once per block, not per expansion */
		}
	sema_scope_free(&sc);
	return r;
}

/* --- expressions ------------------------------------------------------------ */

/* Builds the node(s) of E and returns the index of its result.  NAME names
 * the result (NULL: derive one from HINT); NAME_LOC is where it was written. */
static int sema_expr(struct sema *s, struct sema_scope *sc, struct ast_expr *e, const char *name,
                     bnn_loc name_loc, const char *hint)
{
	const struct op_info *op;
	struct ast_stmt *b;
	if (s->oom || s->too_big || diag_should_stop(s->d))
		return SEMA_QUIET;
	switch (e->kind) {
	case AST_NAME:
		return sema_name_ref(s, sc, e);
	case AST_CALL:
		if ((op = op_lookup(e->name)))
			return sema_op_call(s, sc, e, op, name, name_loc, hint);
		if ((b = symtab_get(&s->blocks, e->name)))
			return sema_block_call(s, sc, e, b, name, name_loc, hint);
		{
			struct names_suggestion sug;
			int i;
			names_suggest_init(&sug, e->name);
			for (i = 0; i < OP_COUNT; i++)
				if (i != OP_INPUT)
					names_suggest_offer(&sug, op_name((enum op_id)i));
			for (i = 0; (size_t)i < s->blocks.cap; i++)
				if (s->blocks.slots[i].key)
					names_suggest_offer(&sug, s->blocks.slots[i].key);
			if (sug.best)
				diag_error(s->d, e->name_loc,
				           "unknown operation '%s'; did you mean %s'%s'?", e->name,
				           op_lookup(sug.best) ? "" : "block ", sug.best);
			else
				diag_error(s->d, e->name_loc, "unknown operation '%s'", e->name);
		}
		return SEMA_FAILED;
	default: {
		struct value v;
		char what[96];
		sema_value(s, sc, e, &v);
		args_describe(&v, what, sizeof what);
		diag_error(s->d, e->loc, "a node is needed here, not %s", what);
		return SEMA_FAILED;
	}
	}
}

/* --- the top level ------------------------------------------------------------ */

/* Keeps the first statement of a kind that may appear once; reports others. */
static void sema_once(struct sema *s, struct ast_stmt **slot, struct ast_stmt *st, const char *what)
{
	if (*slot) {
		diag_error(s->d, st->loc, "the model has more than one %s", what);
		diag_note(s->d, (*slot)->loc, "the first %s is here", what);
		return;
	}
	*slot = st;
}

/* Sorts the top-level statements into their roles. */
static void sema_collect(struct sema *s, struct ast_stmt *stmts, int *nassign)
{
	struct ast_stmt *st;
	void *old;
	for (st = stmts; st; st = st->next) {
		switch (st->kind) {
		case AST_MODEL:
			if (st != stmts && !s->model)
				diag_error(s->d, st->loc, "'model' must be the first statement");
			sema_once(s, &s->model, st, "'model' statement");
			break;
		case AST_INPUT:
			sema_once(s, &s->input, st, "input");
			break;
		case AST_PRIOR:
			sema_once(s, &s->prior, st, "'prior' statement");
			break;
		case AST_POSTERIOR:
			sema_once(s, &s->posterior, st, "'posterior' statement");
			break;
		case AST_LIKELIHOOD:
			sema_once(s, &s->likelihood, st, "likelihood");
			break;
		case AST_ASSIGN:
			(*nassign)++;
			break;
		case AST_RETURN:
			diag_error(s->d, st->loc, "'return' outside a block");
			break;
		case AST_BLOCK:
			if (op_lookup(st->name) || likelihood_lookup(st->name) ||
			    family_lookup(st->name)) {
				diag_error(s->d, st->name_loc,
				           "block '%s' has the name of a built-in", st->name);
				st->bad = 1;
			} else if (symtab_put(&s->blocks, st->name, st, &old) == 0) {
				diag_error(s->d, st->name_loc, "redefinition of block '%s'",
				           st->name);
				diag_note(s->d, ((struct ast_stmt *)old)->name_loc,
				          "block '%s' was first defined here", st->name);
			}
			sema_block_check(s, st);
			break;
		}
	}
	if (!stmts)
		diag_error(s->d, diag_noloc,
		           "the model is empty; it must start with 'model NAME;'");
	else if (!s->model)
		diag_error(s->d, stmts->loc, "the first statement must be 'model NAME;'");
}

static void sema_model_name(struct sema *s)
{
	if (s->model && names_check_model(s->d, s->model->name, s->model->name_loc) == 0)
		s->g->name = s->model->name;
}

/* The model's prior (priors.c): gaussian of precision 1 without a
 * statement. */
static void sema_prior(struct sema *s, struct sema_scope *top)
{
	const struct prior_info *info;
	struct ast_family *f;
	struct arg_binding b;
	bnn_loc loc[PRIOR_MAXARGS];
	char what[64], names[96];
	int i, bad = 0;

	s->g->prior = PRIOR_GAUSSIAN;
	s->g->prior_precision = GRAPH_DEFAULT_PRIOR;
	s->g->prior_arg[0] = GRAPH_DEFAULT_PRIOR;
	if (!s->prior)
		return;
	f = s->prior->family;
	if (!(info = prior_lookup(f->name))) {
		prior_list(names, sizeof names);
		diag_error(s->d, f->loc, "unknown prior '%s'; the priors are %s", f->name, names);
		return;
	}
	snprintf(what, sizeof what, "prior '%s'", info->name);
	if (args_bind(s->d, what, f->full_loc, info->spec, info->nspec, f->args, &b) != 0)
		return;
	for (i = 0; i < info->nspec; i++) {
		struct value v;
		sema_value(s, top, b.arg[i]->value, &v);
		loc[i] = v.loc;
		bad |= args_number(s->d, &info->spec[i], &v, &s->g->prior_arg[i]) != 0;
	}
	if (bad || prior_check(s->d, (enum prior_id)(info - prior_get(0)), s->g->prior_arg, loc))
		return;
	s->g->prior = (int)(info - prior_get(0));
	s->g->prior_precision = s->g->prior == PRIOR_GAUSSIAN ? s->g->prior_arg[0] : 0;
	s->g->prior_given = 1;
}

static void sema_posterior(struct sema *s, struct sema_scope *top)
{
	s->g->default_family.id = FAMILY_POINT;
	if (s->posterior && sema_family(s, top, s->posterior->family, &s->g->default_family) != 0)
		s->g->default_family.id = FAMILY_POINT;
	if (s->posterior)
		s->g->default_family.loc = s->posterior->loc;
}

/* "int" after an input's dimensions declares integer ids, a vector of
 * them (the sequence an embedding reads). */
static int sema_input_ids(struct sema *s, const struct ast_stmt *st, struct graph_node *n)
{
	if (n->rank != 1) {
		diag_error(s->d, st->ids_loc,
		           "integer ids are a vector 'input %s[T] int;', not %d dimensions",
		           st->name, n->rank);
		return -1;
	}
	n->ids = 1;
	return 0;
}

/* Builds the input node from "input NAME[d, ...];" (always node 0). */
static int sema_input(struct sema *s, struct sema_scope *top)
{
	static const struct arg_spec dim = {
		"dimension", ARG_INT, 1, 0, 1, (double)GRAPH_MAX_DIM, 0
	};
	struct ast_stmt *st = s->input;
	struct graph_node *n;
	struct ast_arg *a;
	int i, rank = 0, bad = 0;
	if (!st) {
		diag_error(s->d, s->model ? s->model->loc : diag_noloc,
		           "the model has no input; declare one like 'input x[784];'");
		return -1;
	}
	rank = ast_args_count(st->dims);
	if (rank < 1 || rank > 3) {
		diag_error(
		        s->d, st->loc,
		        "an input has 1 dimension [features], 2 [channels, length] or 3 [channels, height, width], not %d",
		        rank);
		return -1;
	}
	if (names_check(s->d, st->name, st->name_loc, "input") != 0 ||
	    sema_claim(s, st->name, st->name_loc, "the input takes the name") != 0)
		return -1;
	i = sema_new_node(s, OP_INPUT, st->name, st->loc, st->name_loc, NULL, 0);
	if (i < 0)
		return -1;
	n = &s->g->nodes[i];
	n->rank = rank;
	if (st->ids && sema_input_ids(s, st, n) != 0)
		bad = -1;
	for (a = st->dims, i = 0; a; a = a->next, i++) {
		struct value v;
		sema_value(s, top, a->value, &v);
		bad |= args_long(s->d, &dim, &v, &n->shape[i]);
	}
	if (!bad && graph_node_elements(n) > GRAPH_MAX_ELEMENTS) {
		diag_error(s->d, st->loc, "the input has %lld elements (the limit is %ld)",
		           graph_node_elements(n), GRAPH_MAX_ELEMENTS);
		bad = -1;
	}
	s->g->input = 0;
	return bad;
}

static void sema_likelihood(struct sema *s, struct sema_scope *top)
{
	struct ast_stmt *st = s->likelihood;
	const struct likelihood_info *info;
	struct arg_binding b;
	struct value vals[ARGS_MAX];
	const struct value *val[ARGS_MAX] = { 0 };
	bnn_loc loc[ARGS_MAX];
	int keyed[ARGS_MAX] = { 0 };
	struct ast_expr *call;
	char what[64];
	int i, r;

	if (!st) {
		diag_error(
		        s->d, s->model ? s->model->loc : diag_noloc,
		        "the model has no likelihood; end it with a statement like 'y ~ categorical(out);'");
		return;
	}
	call = st->expr;
	if (!(info = likelihood_lookup(call->name))) {
		char names[256];
		likelihood_list(names, sizeof names);
		diag_error(s->d, call->name_loc, "unknown likelihood '%s' (the likelihoods are %s)",
		           call->name, names);
		return;
	}
	if (symtab_get(&top->defs, st->name)) {
		diag_error(s->d, st->name_loc, "the target '%s' has the name of a node", st->name);
		diag_note(s->d,
		          ((struct sema_def *)symtab_get(&top->defs, st->name))->stmt->name_loc,
		          "'%s' is defined here", st->name);
		return;
	}
	if (names_check(s->d, st->name, st->name_loc, "target") != 0)
		return;
	snprintf(what, sizeof what, "likelihood '%s'", info->name);
	if (args_bind(s->d, what, call->loc, info->spec, info->nspec, call->args, &b) != 0)
		return;
	r = sema_expr(s, top, b.arg[0]->value, NULL, b.arg[0]->value->loc, st->name);
	if (r < 0)
		return;
	for (i = 0; i < info->nspec; i++) {
		loc[i] = b.arg[i] ? b.arg[i]->value->loc : call->loc;
		keyed[i] = b.arg[i] && b.arg[i]->key;
		if (i > 0 && b.arg[i]) {
			sema_value(s, top, b.arg[i]->value, &vals[i]);
			val[i] = &vals[i];
		}
	}
	if (s->g->nodes[r].ids) {
		diag_error(
		        s->d, b.arg[0]->value->loc,
		        "likelihood '%s' needs a real input; '%s' holds integer ids (use embedding)",
		        info->name, s->g->nodes[r].name);
		return;
	}
	s->g->output = r;
	s->g->likelihood = (enum likelihood_id)(info - likelihood_get(0));
	s->g->target = st->name;
	s->g->likelihood_loc = st->loc;
	if (likelihood_check(s->d, s->g, call->loc, val, loc, keyed) != 0)
		s->g->output = -1;
}

/* Marks the nodes the likelihood reads, directly or not, and warns about
 * names that are never used: a top-level name that no statement names or
 * whose node does not reach the likelihood, and a block-local name that no
 * statement of its block names. */
static void sema_liveness(struct sema *s, struct sema_scope *top)
{
	struct graph *g = s->g;
	struct ast_stmt *st;
	int i, j;
	size_t k;
	if (g->output < 0)
		return;
	g->nodes[g->output].live = 1;
	if (g->scale_node >= 0) /* the likelihood's second node */
		g->nodes[g->scale_node].live = 1;
	for (i = g->nnodes - 1; i >= 0; i--)
		if (g->nodes[i].live)
			for (j = 0; j < g->nodes[i].ninputs; j++)
				g->nodes[g->nodes[i].inputs[j]].live = 1;
	for (i = 0; i < top->ndefs; i++) {
		struct sema_def *def = &top->def[i];
		if (def->state == DEF_DONE && (!g->nodes[def->node].live || !def->referenced))
			diag_warning(s->d, def->stmt->name_loc,
			             "'%s' is never used: it does not reach the likelihood",
			             def->name);
	}
	for (k = 0; k < s->blocks.cap; k++) {
		struct ast_stmt *b = s->blocks.slots[k].value;
		if (!b || !b->used || b->bad)
			continue;
		for (st = b->body; st; st = st->next)
			if (st->kind == AST_ASSIGN && !st->live)
				diag_warning(s->d, st->name_loc, "'%s' is never used in block '%s'",
				             st->name, b->name);
	}
}

int sema_run(struct diag *d, struct ast_arena *arena, struct ast_stmt *stmts, struct graph *g)
{
	struct sema *s = calloc(1, sizeof *s);
	struct sema_scope top;
	struct ast_stmt *st;
	int nassign = 0, errors = d->errors, oom;
	size_t i;

	memset(&top, 0, sizeof top);
	if (!s) {
		diag_error(d, diag_noloc, "out of memory");
		return -1;
	}
	s->d = d;
	s->arena = arena;
	s->g = g;
	g->output = -1;
	g->scale_node = -1;
	d->context = sema_context;
	d->context_arg = s;
	top.prefix = "";
	sema_collect(s, stmts, &nassign);
	if (!stmts)
		goto done; /* "the model is empty" says it all */
	sema_model_name(s);
	sema_prior(s, &top);
	sema_posterior(s, &top);
	top.def = calloc((size_t)nassign + 1, sizeof *top.def);
	if (!top.def) {
		sema_oom(s);
		goto done;
	}
	/* A declaration that fails still defines its name, as failed, so that
     * its uses stay quiet instead of reporting it undefined. */
	if (s->input) {
		int bad = sema_input(s, &top);
		if (sema_define(s, &top, s->input) == 0) {
			top.def[0].state = bad ? DEF_FAILED : DEF_DONE;
			top.def[0].node = bad ? SEMA_QUIET : 0;
		}
	} else {
		sema_input(s, &top); /* reports the missing input */
	}
	for (st = stmts; st; st = st->next) {
		int bad;
		if (st->kind != AST_ASSIGN)
			continue;
		bad = names_check(d, st->name, st->name_loc, "node");
		if (sema_define(s, &top, st) == 0 &&
		    (bad || sema_claim(s, st->name, st->name_loc, "the node takes the name") != 0))
			top.def[top.ndefs - 1].state = DEF_FAILED;
	}
	sema_scope_build(s, &top);
	if (!s->oom && !diag_should_stop(d))
		sema_likelihood(s, &top);
	if (d->errors == errors) {
		sema_liveness(s, &top);
		for (i = 0; i < s->blocks.cap; i++) {
			struct ast_stmt *b = s->blocks.slots[i].value;
			if (b && !b->used)
				diag_warning(d, b->name_loc, "block '%s' is never used", b->name);
		}
		for (i = 0; i < (size_t)g->nnodes; i++) { /* unused nodes cost nothing */
			g->total_model += g->nodes[i].live ? g->nodes[i].model_params : 0;
			g->total_posterior += g->nodes[i].live ? g->nodes[i].posterior_params : 0;
		}
		g->total_model += g->likelihood_params;
		g->total_posterior += g->likelihood_params;
	}
done:
	d->context = NULL;
	d->context_arg = NULL;
	sema_scope_free(&top);
	symtab_free(&s->names);
	symtab_free(&s->derived);
	symtab_free(&s->blocks);
	oom = s->oom;
	free(s);
	return d->errors == errors && !oom ? 0 : -1;
}
