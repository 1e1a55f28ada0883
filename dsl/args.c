/* args.c: binding written arguments to parameter tables, and checking the
 * type and range of constant arguments (see args.h). */
#include "args.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "names.h"

static int args_integral(const struct arg_spec *s)
{
	return s->type == ARG_INT || s->type == ARG_INT_PAIR;
}

static int args_find(const struct arg_spec *spec, int nspec, const char *key)
{
	int i;
	for (i = 0; i < nspec; i++)
		if (strcmp(spec[i].name, key) == 0)
			return i;
	return -1;
}

static int args_in_range(const struct arg_spec *s, double x)
{
	if (!isfinite(x))
		return 0;
	if ((s->flags & ARG_LO_OPEN) ? x <= s->lo : x < s->lo)
		return 0;
	return (s->flags & ARG_HI_OPEN) ? x < s->hi : x <= s->hi;
}

void args_signature(const struct arg_spec *spec, int nspec, char *buf, size_t size)
{
	size_t used = 0;
	int i;
	buf[0] = '\0';
	used += (size_t)snprintf(buf, size, "(");
	for (i = 0; i < nspec && used < size; i++) {
		const struct arg_spec *s = &spec[i];
		const char *sep = i ? ", " : "";
		char def[32] = "";
		if (!s->required && s->type == ARG_BOOL)
			snprintf(def, sizeof def, " = %s", s->def != 0 ? "true" : "false");
		else if (!s->required && !args_in_range(s, s->def))
			snprintf(def, sizeof def,
			         " = ..."); /* a default that means "see the docs" */
		else if (!s->required)
			snprintf(def, sizeof def, " = %g", s->def);
		used += (size_t)snprintf(buf + used, size - used, "%s%s%s%s", sep, s->name,
		                         s->type == ARG_NODES ? ", ..." : "", def);
	}
	if (used < size)
		snprintf(buf + used, size - used, ")");
}

static void args_note_signature(struct diag *d, bnn_loc loc, const char *what,
                                const struct arg_spec *spec, int nspec)
{
	char sig[256];
	args_signature(spec, nspec, sig, sizeof sig);
	diag_note(d, loc, "%s takes %s", what, sig);
}

/* Binds one positional argument to the next free slot. */
static int args_bind_positional(struct diag *d, const char *what, const struct arg_spec *spec,
                                int nspec, const struct ast_arg *a, int *next,
                                struct arg_binding *b)
{
	if (*next < nspec && spec[*next].type == ARG_NODES) {
		if (!b->rest)
			b->rest = a;
		b->nrest++;
		return 0;
	}
	if (*next >= nspec) {
		diag_error(d, a->value->loc, "too many arguments to %s (it takes %d)", what, nspec);
		return -1;
	}
	b->arg[(*next)++] = a;
	return 0;
}

static int args_bind_keyword(struct diag *d, const char *what, const struct arg_spec *spec,
                             int nspec, const struct ast_arg *a, struct arg_binding *b)
{
	int i = args_find(spec, nspec, a->key);
	if (i < 0) {
		struct names_suggestion s;
		int j;
		names_suggest_init(&s, a->key);
		for (j = 0; j < nspec; j++)
			names_suggest_offer(&s, spec[j].name);
		if (s.best)
			diag_error(d, a->key_loc, "%s has no argument '%s'; did you mean '%s'?",
			           what, a->key, s.best);
		else
			diag_error(d, a->key_loc, "%s has no argument '%s'", what, a->key);
		return -1;
	}
	if (spec[i].type == ARG_NODES) {
		diag_error(d, a->key_loc,
		           "the inputs of %s are given by position, not as '%s = ...'", what,
		           a->key);
		return -1;
	}
	if (b->arg[i]) {
		diag_error(d, a->key_loc, "argument '%s' of %s is given twice", a->key, what);
		diag_note(d, b->arg[i]->key ? b->arg[i]->key_loc : b->arg[i]->value->loc,
		          "it was first given here");
		return -1;
	}
	b->arg[i] = a;
	return 0;
}

int args_bind(struct diag *d, const char *what, bnn_loc call_loc, const struct arg_spec *spec,
              int nspec, const struct ast_arg *args, struct arg_binding *b)
{
	const struct ast_arg *a, *first_keyword = NULL;
	int next = 0, bad = 0, i;

	memset(b, 0, sizeof *b);
	for (a = args; a; a = a->next) {
		if (a->key) {
			if (!first_keyword)
				first_keyword = a;
			bad |= args_bind_keyword(d, what, spec, nspec, a, b);
		} else if (first_keyword) {
			diag_error(d, a->value->loc,
			           "a positional argument cannot follow a keyword argument");
			diag_note(d, first_keyword->key_loc, "the first keyword argument is here");
			bad = -1;
		} else if (args_bind_positional(d, what, spec, nspec, a, &next, b) != 0) {
			args_note_signature(d, call_loc, what, spec, nspec);
			return -1;
		}
	}
	for (i = 0; i < nspec && !bad; i++) {
		if (spec[i].type == ARG_NODES && b->nrest < 2) {
			diag_error(d, call_loc, "%s needs at least two inputs", what);
			bad = -1;
		} else if (spec[i].type != ARG_NODES && spec[i].required && !b->arg[i]) {
			diag_error(d, call_loc, "%s needs argument '%s'", what, spec[i].name);
			args_note_signature(d, call_loc, what, spec, nspec);
			bad = -1;
		}
	}
	return bad ? -1 : 0;
}

void args_describe(const struct value *v, char *buf, size_t size)
{
	switch (v->kind) {
	case VAL_NUMBER:
		snprintf(buf, size, "%s", v->text);
		break;
	case VAL_BOOL:
		snprintf(buf, size, "%s", v->boolean ? "true" : "false");
		break;
	case VAL_WORD:
		snprintf(buf, size, "'%s'", v->word);
		break;
	case VAL_TUPLE:
		if (v->tuple_ok)
			snprintf(buf, size, "a tuple of %d numbers", v->ntuple);
		else
			snprintf(buf, size, "a tuple that is not all numbers");
		break;
	case VAL_NODE:
		snprintf(buf, size, "node '%s'", v->text);
		break;
	case VAL_CALL:
		snprintf(buf, size, "a call to '%s'", v->text);
		break;
	default:
		snprintf(buf, size, "nothing");
		break;
	}
}

/* "from 1 to 16777216", "in (0, 1]", "at least 0", "greater than 0". */
static void args_range(const struct arg_spec *s, char *buf, size_t size)
{
	int lo_open = (s->flags & ARG_LO_OPEN) != 0, hi_open = (s->flags & ARG_HI_OPEN) != 0;
	if (isinf(s->hi))
		snprintf(buf, size, "%s %.15g", lo_open ? "greater than" : "at least", s->lo);
	else if (args_integral(s) && !lo_open && !hi_open)
		snprintf(buf, size, "from %.15g to %.15g", s->lo, s->hi);
	else
		snprintf(buf, size, "in %c%.15g, %.15g%c", lo_open ? '(' : '[', s->lo, s->hi,
		         hi_open ? ')' : ']');
}

static int args_wrong_type(struct diag *d, const struct arg_spec *s, const struct value *v,
                           const char *wanted)
{
	char got[96];
	args_describe(v, got, sizeof got);
	diag_error(d, v->loc, "'%s' must be %s, not %s", s->name, wanted, got);
	return -1;
}

static int args_check_scalar(struct diag *d, const struct arg_spec *s, bnn_loc loc, double x,
                             int is_integer, const char *text)
{
	char range[96];
	if (args_integral(s) && !is_integer) {
		diag_error(d, loc, "'%s' must be an integer, not %s", s->name, text);
		return -1;
	}
	if (!args_in_range(s, x)) {
		args_range(s, range, sizeof range);
		diag_error(d, loc, "'%s' must be %s, not %s", s->name, range, text);
		return -1;
	}
	return 0;
}

int args_number(struct diag *d, const struct arg_spec *s, const struct value *v, double *out)
{
	if (!v) {
		*out = s->def;
		return 0;
	}
	if (v->kind != VAL_NUMBER)
		return args_wrong_type(d, s, v, args_integral(s) ? "an integer" : "a number");
	if (args_check_scalar(d, s, v->loc, v->num[0], v->is_integer[0], v->text) != 0)
		return -1;
	*out = v->num[0];
	return 0;
}

int args_long(struct diag *d, const struct arg_spec *s, const struct value *v, long *out)
{
	double x;
	if (args_number(d, s, v, &x) != 0)
		return -1;
	*out = (long)x;
	return 0;
}

int args_pair(struct diag *d, const struct arg_spec *s, const struct value *v, long out[2])
{
	int i;
	char text[2][32];
	if (!v || v->kind == VAL_NUMBER) {
		if (args_long(d, s, v, &out[0]) != 0)
			return -1;
		out[1] = out[0];
		return 0;
	}
	if (v->kind != VAL_TUPLE || v->ntuple != 2 || !v->tuple_ok)
		return args_wrong_type(d, s, v, "an integer or a pair (a, b) of integers");
	for (i = 0; i < 2; i++) {
		snprintf(text[i], sizeof text[i], "%.17g", v->num[i]);
		if (args_check_scalar(d, s, v->loc, v->num[i], v->is_integer[i], text[i]) != 0)
			return -1;
		out[i] = (long)v->num[i];
	}
	return 0;
}

int args_bool(struct diag *d, const struct arg_spec *s, const struct value *v, int *out)
{
	if (!v) {
		*out = s->def != 0;
		return 0;
	}
	if (v->kind != VAL_BOOL)
		return args_wrong_type(d, s, v, "true or false");
	*out = v->boolean;
	return 0;
}

int args_sigma(struct diag *d, const struct arg_spec *s, const struct value *v, double *out,
               int *learned, int *node)
{
	*learned = 0;
	if (node)
		*node = -1;
	/* 'learned' is a word even where a node happens to have that name */
	if (v && ((v->kind == VAL_WORD && strcmp(v->word, "learned") == 0) ||
	          (v->kind == VAL_NODE && strcmp(v->text, "learned") == 0))) {
		*learned = 1;
		return 0;
	}
	if (v && node && v->kind == VAL_NONE)
		return -1; /* a node whose definition failed, reported there */
	if (v && node && v->kind == VAL_NODE) {
		*node = v->node;
		return 0;
	}
	if (v && node && v->kind == VAL_WORD) {
		args_wrong_type(d, s, v, "a positive number, 'learned' or a node");
		diag_note(d, v->loc, "no node is named '%s'", v->word);
		return -1;
	}
	if (v && v->kind != VAL_NUMBER)
		return args_wrong_type(d, s, v,
		                       node ? "a positive number, 'learned' or a node"
		                            : "a positive number or 'learned'");
	return args_number(d, s, v, out);
}
