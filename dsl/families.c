/* families.c: the posterior families: their arguments, the ops they apply
 * to, and how many parameters each keeps (see ops.h).
 *
 *   point       the weights themselves                       P
 *   meanfield   a mean and a scale per weight                 2P
 *   dropout(p)  the weights; p is a fixed rate, not learned   P
 *   whvi        S1, S2, mean and scale of g per D x D block   whvi_params()
 *   emp(k)      k copies of the patched parameters            kP  (EMP paper, 3.3)
 *   ecmp(k)     k copies, drawn per element                   kP
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ARGN(spec) ((int)(sizeof(spec) / sizeof((spec)[0])))
#define PRIOR_ARG                                                 \
	{                                                         \
		"prior", ARG_REAL, 0, 0, 0, INFINITY, ARG_LO_OPEN \
	}

static const struct arg_spec point_args[] = {
	PRIOR_ARG,
};
static const struct arg_spec dropout_args[] = {
	{ "p", ARG_REAL, 1, 0, 0, 1, ARG_HI_OPEN },
	PRIOR_ARG,
};
static const struct arg_spec whvi_args[] = {
	{ "flows", ARG_INT, 0, 0, 0, 64, 0 },
	PRIOR_ARG,
};
static const struct arg_spec ensemble_args[] = {
	{ "k", ARG_INT, 1, 0, 2, 1024, 0 },
	PRIOR_ARG,
};

static const struct family_info family_table[FAMILY_COUNT] = {
#define FAMILY(id, name, mask, spec, caps) [FAMILY_##id] = { name, mask, spec, ARGN(spec) },
#include "families.def"
#undef FAMILY
};

const struct family_info *family_get(enum family_id f)
{
	return &family_table[f];
}

const struct family_info *family_lookup(const char *name)
{
	int i;
	for (i = 0; i < FAMILY_COUNT; i++)
		if (strcmp(family_table[i].name, name) == 0)
			return &family_table[i];
	return NULL;
}

const char *family_name(enum family_id f)
{
	return family_table[f].name;
}

int family_applies(enum family_id f, enum op_id op)
{
	unsigned on = op == OP_DENSE       ? FAM_ON_DENSE
	              : op == OP_CONV2D    ? FAM_ON_CONV2D
	              : op == OP_CONV1D    ? FAM_ON_CONV2D /* conv1d is conv2d's code */
	              : op == OP_BATCHNORM ? FAM_ON_BATCHNORM
	                                   : 0;
	if (op == OP_LAYERNORM || op == OP_GROUPNORM)
		on = FAM_ON_NORM;
	if (op == OP_GRU)
		on = FAM_ON_GRU;
	if (op == OP_EMBEDDING)
		on = FAM_ON_EMBEDDING;
	if (op == OP_ATTENTION)
		on = FAM_ON_ATTENTION;
	return (family_table[f].applies_to & on) != 0;
}

int family_check(struct diag *d, struct family *f, const struct value *const val[ARGS_MAX])
{
	const struct family_info *info = &family_table[f->id];
	int i;
	for (i = 0; i < info->nspec; i++) {
		const struct arg_spec *s = &info->spec[i];
		long n = 0;
		int bad;
		if (strcmp(s->name, "prior") == 0)
			bad = args_number(d, s, val[i], &f->prior);
		else if (strcmp(s->name, "p") == 0)
			bad = args_number(d, s, val[i], &f->p);
		else if ((bad = args_long(d, s, val[i], &n)) == 0 && strcmp(s->name, "k") == 0)
			f->k = (int)n;
		else
			f->flows = (int)n;
		if (bad)
			return -1;
	}
	if (f->id == FAMILY_DROPOUT && f->p == 0)
		diag_warning(d, f->loc,
		             "dropout(p = 0) never drops a unit: the layer is a point estimate");
	return 0;
}

void family_count(struct graph_node *n)
{
	long long p = n->model_params;
	switch (n->family.id) {
	case FAMILY_MEANFIELD:
		n->posterior_params = 2 * p;
		break;
	case FAMILY_EMP:
	case FAMILY_ECMP:
		n->posterior_params = (long long)n->family.k * p;
		break;
	case FAMILY_WHVI:
		n->posterior_params = whvi_params(n->attrs.in_features, n->attrs.units,
		                                  n->family.flows, n->attrs.bias);
		break;
	default:
		n->posterior_params = p;
		break; /* point, dropout */
	}
}

void family_str(const struct family *f, char *buf, size_t size)
{
	char args[64] = "";
	size_t used = 0;
	if (f->id == FAMILY_DROPOUT)
		used += (size_t)snprintf(args, sizeof args, "p = %g", f->p);
	else if (f->id == FAMILY_EMP || f->id == FAMILY_ECMP)
		used += (size_t)snprintf(args, sizeof args, "k = %d", f->k);
	else if (f->id == FAMILY_WHVI && f->flows)
		used += (size_t)snprintf(args, sizeof args, "flows = %d", f->flows);
	if (f->prior > 0)
		snprintf(args + used, sizeof args - used, "%sprior = %g", used ? ", " : "",
		         f->prior);
	if (args[0])
		snprintf(buf, size, "%s(%s)", family_name(f->id), args);
	else
		snprintf(buf, size, "%s", family_name(f->id));
}
