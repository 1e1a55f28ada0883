/* codegen.c: writes a checked model as C (see codegen.h and cg.h).
 *
 * How it is organised.  cg_plan() decides everything before a byte is
 * written: which nodes get code, their workspace offsets, which need
 * deltas, and the parameter tensors (each layer's params hook).  Then the
 * header is written (the model's public interface), then the C file:
 * provenance comment, the pass as one static function (the noise loop of
 * layers whose posterior the pass samples, forward, output, loss, backward
 * in reverse topological order), its two entry points
 * (float: the descriptor's pass; double: the test-only *_pass_f64), the
 * tensor and layer tables, the descriptor, and main() with --main.
 * Both files are written through libbnn's bnn_file_replace() (a temporary
 * file renamed over the old one when complete), the header inside the C
 * file's, so that an existing output is never left half-written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "cg.h"
#include "codegen.h"
#include "priors.h"
#include "ops.h"

/* The runtime's likelihood enum must match the compiler's list (bnn_model.h). */
#define LIKELIHOOD(id, name, spec)                                       \
	_Static_assert((int)LIKELIHOOD_##id == (int)BNN_LIKELIHOOD_##id, \
	               "likelihoods.def and bnn_model.h differ");
#include "likelihoods.def"
#undef LIKELIHOOD
_Static_assert((int)LIKELIHOOD_COUNT == (int)BNN_LIKELIHOOD_COUNT,
               "likelihoods.def and bnn_model.h differ");

/* And the prior kinds (priors.def). */
#define PRIOR(id, name, spec) \
	_Static_assert((int)PRIOR_##id == (int)BNN_PRIOR_##id, "priors.def and bnn_model.h differ");
#include "priors.def"
#undef PRIOR
_Static_assert((int)PRIOR_COUNT == (int)BNN_PRIOR_COUNT, "priors.def and bnn_model.h differ");

/* The hooks of every op code generation supports; a NULL row is an op it
 * does not support yet (reported at the node). */
static const struct cg_layer *const cg_layers[OP_COUNT] = {
	[OP_DENSE] = &cg_layer_dense,
	[OP_CONV2D] = &cg_layer_conv2d,
	[OP_CONV1D] = &cg_layer_conv2d, /* on a [C, 1, L] map (layer_conv.c) */
	[OP_BATCHNORM] = &cg_layer_batchnorm,
	[OP_MAXPOOL] = &cg_layer_maxpool,
	[OP_AVGPOOL] = &cg_layer_avgpool,
	[OP_GLOBALAVGPOOL] = &cg_layer_globalavgpool,
	[OP_RELU] = &cg_layer_relu,
	[OP_LEAKY_RELU] = &cg_layer_leaky_relu,
	[OP_TANH] = &cg_layer_tanh,
	[OP_SIGMOID] = &cg_layer_sigmoid,
	[OP_GELU] = &cg_layer_gelu,
	[OP_SOFTPLUS] = &cg_layer_softplus,
	[OP_COS] = &cg_layer_cos,
	[OP_IDENTITY] = &cg_layer_identity,
	[OP_FLATTEN] = &cg_layer_flatten,
	[OP_ADD] = &cg_layer_add,
	[OP_CONCAT] = &cg_layer_concat,
	[OP_LAYERNORM] = &cg_layer_norm,
	[OP_GROUPNORM] = &cg_layer_norm,
	[OP_GRU] = &cg_layer_gru,
	[OP_EMBEDDING] = &cg_layer_embedding,
	[OP_POSITIONAL] = &cg_layer_positional,
	[OP_ATTENTION] = &cg_layer_attention,
	[OP_TRANSPOSE] = &cg_layer_transpose,
};

const struct cg_layer *cg_layer_of(enum op_id op)
{
	return op >= 0 && op < OP_COUNT ? cg_layers[op] : NULL;
}

/* Layers whose posterior family changes the layer itself: a whvi dense
 * layer is not a dense layer with noise but a product with
 * S1·H·diag(g)·H·S2 (layer_whvi.c). */
const struct cg_layer *cg_node_layer(const struct cg *cg, int node)
{
	enum op_id op = cg->g->nodes[node].op;
	if (op == OP_DENSE && cg_family(cg, node) == FAMILY_WHVI)
		return &cg_layer_whvi;
	return cg_layer_of(op);
}

const char *cg_name(const struct cg *cg, int node)
{
	const char *name = cg->g->nodes[node].name;
	return strlen(name) <= CG_IDENT_MAX && strncmp(name, "w_", 2) != 0 ? name
	                                                                   : cg->nodes[node].ident;
}

int cg_delta_acc(struct cg *cg, int node)
{
	int acc = cg->nodes[node].delta_set;
	cg->nodes[node].delta_set = 1;
	return acc;
}

void cg_delta_args(struct cg *cg, int in, char *buf, size_t size)
{
	if (cg->nodes[in].has_delta)
		snprintf(buf, size, "d_%s, %d", cg_name(cg, in), cg_delta_acc(cg, in));
	else
		snprintf(buf, size, "NULL, 0");
}

int cg_feeds_relu(const struct cg *cg, int node)
{
	const struct graph *g = cg->g;
	int i, j, consumers = 0;
	for (i = node + 1; i < g->nnodes; i++)
		for (j = 0; j < g->nodes[i].ninputs; j++) {
			enum op_id op = g->nodes[i].op;
			if (g->nodes[i].inputs[j] != node || !g->nodes[i].live)
				continue;
			consumers++;
			if (op == OP_MAXPOOL || op == OP_AVGPOOL) {
				if (!cg_feeds_relu(cg, i))
					return 0;
			} else if (op != OP_RELU && op != OP_LEAKY_RELU && op != OP_GELU) {
				return 0;
			}
		}
	return consumers > 0;
}

void cg_param_addr(const struct cg *cg, int node, const char *array, int guard, char *wbuf,
                   char *bbuf, size_t size)
{
	static const char *const blocks[][2] = { { "w", "pw" },
		                                 { "grad", "pg" },
		                                 { "sqgrad", "pq" } };
	const struct cg_node *c = &cg->nodes[node];
	char base[200];
	int i, patch = -1;
	/* a patched layer reads and writes this pass's block (layer_patch.c) */
	for (i = 0; i < 3 && cg_patched(cg, node); i++)
		if (strcmp(array, blocks[i][0]) == 0)
			patch = i;
	if (patch >= 0)
		snprintf(base, sizeof base, "%s_%s", blocks[patch][1], cg_name(cg, node));
	else
		snprintf(base, sizeof base, "%s", array);
	for (i = 0; i < 2; i++) {
		char *buf = i == 0 ? wbuf : bbuf;
		long off;
		if (i >= c->ntensors) {
			snprintf(buf, size, "NULL");
			continue;
		}
		off = patch >= 0 ? cg_patch_rel(cg, node, i)
		                 : cg->tensors[c->first_tensor + i].offset;
		if (guard)
			snprintf(buf, size, "%s ? %s + %ld : NULL", array, base, off);
		else
			snprintf(buf, size, "%s + %ld", base, off);
	}
}

enum family_id cg_family(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	return n->has_family ? n->family.id : FAMILY_POINT;
}

long cg_reserve(struct cg *cg, long floats)
{
	long off = cg->per_example;
	cg->per_example += floats;
	return off;
}

long cg_reserve_fixed(struct cg *cg, long floats)
{
	long off = cg->fixed;
	cg->fixed += floats;
	return off;
}

/* Appends a tensor of SIZE elements at offset *total to the list v
 * (growing it); returns its index or -1 when out of memory. */
static int cg_append_tensor(struct cg *cg, struct cg_tensor **v, int *n, int *cap, long *total,
                            int node, const char *suffix, int role, int rank, const long *shape,
                            long fan_in, long fan_out, int init)
{
	struct cg_tensor *t;
	int i;
	if (*n == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		struct cg_tensor *nv = realloc(*v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return -1;
		*v = nv;
		*cap = ncap;
	}
	t = &(*v)[*n];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s.%s",
	         node >= 0 ? cg->g->nodes[node].name : cg->g->target, suffix);
	t->node = node;
	t->role = role;
	t->rank = rank;
	t->size = 1;
	for (i = 0; i < rank; i++) {
		t->shape[i] = shape[i];
		t->size *= shape[i];
	}
	t->offset = *total;
	t->fan_in = fan_in;
	t->fan_out = fan_out;
	t->init = init;
	t->components = 1;
	*total += t->size;
	return (*n)++;
}

int cg_add_tensor(struct cg *cg, int node, const char *suffix, int role, int rank,
                  const long *shape, long fan_in, long fan_out, int init)
{
	int i = cg_append_tensor(cg, &cg->tensors, &cg->ntensors, &cg->cap_tensors, &cg->nparams,
	                         node, suffix, role, rank, shape, fan_in, fan_out, init);
	if (i >= 0 && node >= 0 && cg_patched(cg, node)) { /* k copies of the tensor */
		struct cg_tensor *t = &cg->tensors[i];
		t->components = cg->g->nodes[node].family.k;
		cg->nparams += (t->components - 1) * t->size;
		t->size *= t->components;
	}
	return i;
}

int cg_add_stat(struct cg *cg, int node, const char *suffix, int role, long size, int init)
{
	long shape[4] = { size, 0, 0, 0 };
	return cg_append_tensor(cg, &cg->stats, &cg->nstat_tensors, &cg->cap_stats, &cg->nstats,
	                        node, suffix, role, 1, shape, 0, 0, init);
}

/* The ids of an input declared "int" lie in [0, V) for the smallest V of
 * the embeddings that read them (only embeddings do); 0 for real values. */
static long cg_input_vocab(const struct graph *g)
{
	long v = 0;
	int i;
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->live && n->op == OP_EMBEDDING && (v == 0 || n->attrs.vocab < v))
			v = n->attrs.vocab;
	}
	return g->nodes[g->input].ids ? v : 0;
}

/* ---- planning --------------------------------------------------------------- */

/* Every op has its hooks in cg_layers, and every posterior family the
 * language allows on an op is generated; a node without hooks would be a
 * bnnc bug, reported as such.  Returns the error count. */
static int cg_check_supported(const struct graph *g, struct diag *d)
{
	int i, errors = 0;
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (!n->live || n->op == OP_INPUT || cg_layer_of(n->op))
			continue;
		diag_error(d, n->loc, "internal error: bnnc has no code for op '%s' (node '%s')",
		           op_name(n->op), n->name);
		errors++;
	}
	return errors;
}

/* The add node whose delta a node's delta can share, or -1: when an add
 * is the node's only reader (once, and not the likelihood), the node's
 * delta is the add's, and the add's backward need not copy it (a pass
 * over B·width floats per residual block).  The add's delta is complete
 * before its backward runs and is not written after, so the node's own
 * backward reads it as it would its copy. */
static int cg_add_alias(const struct cg *cg, int node)
{
	const struct graph *g = cg->g;
	int i, j, reads = 0, add = -1;
	if (node == g->output || node == g->scale_node)
		return -1;
	for (i = node + 1; i < g->nnodes; i++)
		for (j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] == node && g->nodes[i].live) {
				reads++;
				add = g->nodes[i].op == OP_ADD ? i : -1;
			}
	return reads == 1 ? add : -1;
}

/* How many live nodes read node `node`'s output; the last of them in *who. */
static int cg_readers(const struct cg *cg, int node, int *who)
{
	const struct graph *g = cg->g;
	int i, j, reads = 0;
	for (i = node + 1; i < g->nnodes; i++)
		for (j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] == node && g->nodes[i].live) {
				reads++;
				*who = i;
			}
	return reads;
}

/* The dense node whose product computes relu node `node`, or -1: a relu
 * whose input is a dense layer that can (cg_dense_fuses_relu), that
 * nothing else reads, and that is not an output.  The product then writes
 * relu(X·Wᵀ + b) (bnn_gen_dense_relu_forward) into the layer's buffer,
 * which the relu shares: no pass over B·width floats, nor their buffer,
 * and the relu's backward takes its mask from the same values, since
 * relu(x) > 0 exactly where x > 0.  Results are the same bits. */
static int cg_relu_fusion(const struct cg *cg, int node)
{
	const struct graph *g = cg->g;
	int in = g->nodes[node].inputs[0], who = -1;
	if (g->nodes[node].op != OP_RELU || g->nodes[in].op != OP_DENSE || !cg->nodes[in].code ||
	    in == g->output || in == g->scale_node || !cg_dense_fuses_relu(cg, in))
		return -1;
	return cg_readers(cg, in, &who) == 1 ? in : -1;
}

/* The dense node whose backward product writes relu node `node`'s input
 * delta, or -1: a relu with a delta, read by one dense layer only, whose
 * input delta is one product (cg_dense_backward_one_product), and whose
 * own input (the relu's) nothing else reads.  That product, dX = G·W, then writes the relu
 * input's delta through the mask of the relu's output, y > 0
 * (bnn_gen_dense_backward_input_relu), and the relu's backward pass
 * goes: the same bits, one pass over B·width floats less. */
static int cg_relu_back_fusion(const struct cg *cg, int node)
{
	const struct graph *g = cg->g;
	int pre = g->nodes[node].inputs[0], reader = -1, who = -1;
	if (g->nodes[node].op != OP_RELU || !cg->nodes[node].has_delta ||
	    !cg->nodes[pre].has_delta || node == g->output || node == g->scale_node ||
	    pre == g->output || pre == g->scale_node)
		return -1;
	if (cg_readers(cg, node, &reader) != 1 || g->nodes[reader].op != OP_DENSE ||
	    !cg_dense_backward_one_product(cg, reader) || cg_readers(cg, pre, &who) != 1)
		return -1;
	return reader;
}

/* Fills cg->nodes and the tensors.  Returns 0, or -1 when out of memory. */
static int cg_plan(struct cg *cg)
{
	const struct graph *g = cg->g;
	long max_in = 0, max_out = 0;
	int i, j;
	cg->nodes = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1, sizeof *cg->nodes);
	if (!cg->nodes)
		return -1;
	cg->sigma_tensor = -1;
	cg->conv_col = cg->conv_tmp = -1;
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		struct cg_node *c = &cg->nodes[i];
		c->width = (long)graph_node_elements(n);
		c->first_tensor = -1;
		snprintf(c->ident, sizeof c->ident, "%d_%s", i, n->name); /* cut: see cg_name */
		c->delta_alias = -1;
		c->relu_fused = -1;
		c->relu_back = -1;
		c->layer = -1;
		c->noise_off = -1;
		c->fixed_off = -1;
		c->first_stat = -1;
		if (!n->live || n->op == OP_INPUT)
			continue;
		c->code = 1;
		c->has_delta = op_has_weights(n->op);
		for (j = 0; j < n->ninputs; j++)
			c->has_delta |= cg->nodes[n->inputs[j]].has_delta;
		c->relu_fused = cg_relu_fusion(cg, i);
		if (c->relu_fused >= 0) {
			cg->nodes[c->relu_fused].relu_fused = i;
			c->act_off = cg->nodes[c->relu_fused].act_off;
		} else {
			c->act_off = cg_reserve(cg, c->width);
		}
		if (cg_node_layer(cg, i)->params) {
			c->first_tensor = cg->ntensors;
			if (cg_node_layer(cg, i)->params(cg, i) < 0)
				return -1;
			c->ntensors = cg->ntensors - c->first_tensor;
			c->layer = cg->nlayers++;
		}
		if (n->op == OP_DENSE) { /* per_step: T rows per example */
			long rows = n->attrs.per_step ? n->shape[0] : 1;
			max_in = rows * n->attrs.in_features > max_in ? rows * n->attrs.in_features
			                                              : max_in;
			max_out = rows * n->attrs.units > max_out ? rows * n->attrs.units : max_out;
		}
	}
	for (i = 0; i < g->nnodes; i++)
		if (cg->nodes[i].code)
			cg->nodes[i].relu_back = cg_relu_back_fusion(cg, i);
	for (i = g->nnodes - 1; i >= 0; i--) { /* an add's delta before its inputs' */
		struct cg_node *c = &cg->nodes[i];
		if (!c->has_delta || c->relu_back >= 0) /* the latter: no delta of its own */
			continue;
		c->delta_alias = cg_add_alias(cg, i);
		c->delta_off = c->delta_alias >= 0 ? cg->nodes[c->delta_alias].delta_off
		                                   : cg_reserve(cg, c->width);
	}
	for (i = 0; i < g->nnodes; i++) {
		if (cg->nodes[i].code && cg_node_layer(cg, i)->plan)
			cg_node_layer(cg, i)->plan(cg, i);
		if (cg->nodes[i].code && cg_patched(cg, i))
			cg_patch_plan(cg, i);
	}
	cg->scratch_x = cg_reserve(cg, max_in);
	cg->scratch_g = cg_reserve(cg, max_out);
	if (cg->conv_col_floats > 0)
		cg->conv_col = cg_reserve_fixed(cg, cg->conv_col_floats);
	if (cg->conv_tmp_floats > 0)
		cg->conv_tmp = cg_reserve_fixed(cg, cg->conv_tmp_floats);
	if (cg->per_example == 0)
		cg->per_example = 1;
	if (g->sigma_learned) { /* gaussian's log σ, laplace's log b... */
		long shape[2] = { cg->nodes[g->output].width, 0 };
		char suffix[40];
		snprintf(suffix, sizeof suffix, "log_%s",
		         likelihood_get(g->likelihood)->spec[1].name);
		cg->sigma_tensor = cg_add_tensor(cg, -1, suffix, BNN_ROLE_LOG_SIGMA, 1, shape, 0, 0,
		                                 BNN_INIT_ZERO);
		if (cg->sigma_tensor < 0)
			return -1;
	}
	return 0;
}

/* Floats of output per example (bnn_model.outputs): the node the
 * likelihood reads, then its second node when the scale is one (each
 * example's row: the K values of the first, then the K of the second). */
static long cg_outputs(const struct cg *cg)
{
	long k = cg->nodes[cg->g->output].width;
	return cg->g->scale_node >= 0 ? 2 * k : k;
}

/* ---- the canonical model and its fingerprint ----------------------------------- */

unsigned long long codegen_fnv1a64(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Appends to a growing string; sets *failed when out of memory. */
static void canon_add(char **buf, size_t *len, size_t *cap, int *failed, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void canon_add(char **buf, size_t *len, size_t *cap, int *failed, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (*failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			*failed = 1;
			return;
		}
		if ((size_t)n < *cap - *len)
			break;
		char *nb = realloc(*buf, *cap * 2 + (size_t)n);
		if (!nb) {
			*failed = 1;
			return;
		}
		*buf = nb;
		*cap = *cap * 2 + (size_t)n;
	}
	*len += (size_t)n;
}

/* " name=value" for an attribute that is set (non-zero). */
static void canon_attr(char **buf, size_t *len, size_t *cap, int *failed, const char *name,
                       double v)
{
	if (v != 0)
		canon_add(buf, len, cap, failed, " %s=%.17g", name, v);
}

/* The prior's line: a gaussian's precision alone (as before the other
 * priors existed, so that those models keep their fingerprints), else the
 * prior's name and its arguments by name. */
static void canon_prior(char **buf, size_t *len, size_t *cap, int *failed, const struct graph *g)
{
	const struct prior_info *info = prior_get((enum prior_id)g->prior);
	int i;

	if (g->prior == PRIOR_GAUSSIAN) {
		canon_add(buf, len, cap, failed, "prior %.17g\n", g->prior_precision);
		return;
	}
	canon_add(buf, len, cap, failed, "prior %s", info->name);
	for (i = 0; i < info->nspec; i++)
		canon_add(buf, len, cap, failed, " %s=%.17g", info->spec[i].name, g->prior_arg[i]);
	canon_add(buf, len, cap, failed, "\n");
}

/*
 * One line per live node with every attribute, its inputs, its shape and
 * its posterior, then the likelihood and the prior: everything that decides
 * the meaning of the parameter vector, nothing of the spelling of the file
 * (comments, order of statements, blocks).
 */
char *codegen_canonical(const struct graph *g)
{
	size_t len = 0, cap = 1024;
	char *buf = malloc(cap);
	int failed = !buf, i, j;
	if (failed)
		return NULL;
	buf[0] = '\0';
	canon_add(&buf, &len, &cap, &failed, "bnn-model 1\nmodel %s\n", g->name);
	canon_prior(&buf, &len, &cap, &failed, g);
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		const struct op_attrs *a = &n->attrs;
		if (!n->live)
			continue;
		canon_add(&buf, &len, &cap, &failed, "%s %s(", n->name, op_name(n->op));
		for (j = 0; j < n->ninputs; j++)
			canon_add(&buf, &len, &cap, &failed, "%s%s", j ? "," : "",
			          g->nodes[n->inputs[j]].name);
		canon_add(&buf, &len, &cap, &failed, ") [%ld", n->shape[0]);
		for (j = 1; j < n->rank; j++)
			canon_add(&buf, &len, &cap, &failed, ",%ld", n->shape[j]);
		canon_add(&buf, &len, &cap, &failed, "]");
		canon_attr(&buf, &len, &cap, &failed, "units", (double)a->units);
		canon_attr(&buf, &len, &cap, &failed, "in", (double)a->in_features);
		canon_attr(&buf, &len, &cap, &failed, "channels", (double)a->channels);
		canon_attr(&buf, &len, &cap, &failed, "kh", (double)a->kernel[0]);
		canon_attr(&buf, &len, &cap, &failed, "kw", (double)a->kernel[1]);
		canon_attr(&buf, &len, &cap, &failed, "sh", (double)a->stride[0]);
		canon_attr(&buf, &len, &cap, &failed, "sw", (double)a->stride[1]);
		canon_attr(&buf, &len, &cap, &failed, "ph", (double)a->pad[0]);
		canon_attr(&buf, &len, &cap, &failed, "pw", (double)a->pad[1]);
		/* dilation: conv1d's (conv2d's 1 is left out, as before it existed) */
		canon_attr(&buf, &len, &cap, &failed, "dh",
		           a->dilation[0] > 1 ? (double)a->dilation[0] : 0);
		canon_attr(&buf, &len, &cap, &failed, "dw",
		           a->dilation[1] > 1 ? (double)a->dilation[1] : 0);
		canon_attr(&buf, &len, &cap, &failed, "size", (double)a->size);
		canon_attr(&buf, &len, &cap, &failed, "bias", (double)a->bias);
		canon_attr(&buf, &len, &cap, &failed, "per_step", (double)a->per_step);
		canon_attr(&buf, &len, &cap, &failed, "slope", a->slope);
		canon_attr(&buf, &len, &cap, &failed, "momentum", a->momentum);
		canon_attr(&buf, &len, &cap, &failed, "eps", a->eps);
		canon_attr(&buf, &len, &cap, &failed, "groups", (double)a->groups);
		canon_attr(&buf, &len, &cap, &failed, "seq", (double)a->sequence);
		canon_attr(&buf, &len, &cap, &failed, "vocab", (double)a->vocab);
		canon_attr(&buf, &len, &cap, &failed, "ids", (double)n->ids);
		if (n->has_family)
			canon_add(&buf, &len, &cap, &failed,
			          " family=%s k=%d p=%.17g flows=%d prior=%.17g",
			          family_name(n->family.id), n->family.k, n->family.p,
			          n->family.flows, n->family.prior);
		canon_add(&buf, &len, &cap, &failed, "\n");
	}
	canon_add(&buf, &len, &cap, &failed, "%s ~ %s(%s) sigma=%.17g learned=%d", g->target,
	          likelihood_name(g->likelihood), g->nodes[g->output].name, g->sigma,
	          g->sigma_learned);
	if (g->scale_node >= 0) /* only where present: older models keep their fingerprints */
		canon_add(&buf, &len, &cap, &failed, " node=%s", g->nodes[g->scale_node].name);
	if (g->df > 0)
		canon_add(&buf, &len, &cap, &failed, " df=%.17g", g->df);
	canon_add(&buf, &len, &cap, &failed, "\n");
	if (failed) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the header ------------------------------------------------------------------- */

static void cg_upper(const char *s, char *buf, size_t size)
{
	size_t i;
	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
	buf[i] = '\0';
}

const char *codegen_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The opening comment; the source's path is escaped (emit_comment_text), as
 * any byte may be in it. */
static void cg_provenance(struct cg *cg, const struct codegen_options *o, const char *what)
{
	emit(cg->e,
	     "/*\n"
	     " * %s of model '%s', generated by bnnc %s from ",
	     what, cg->g->name, bnn_version());
	emit_comment_text(cg->e, o->source);
	emit(cg->e, ".\n"
	            " * Do not edit: change the .bnn file and run bnnc again.\n"
	            " */\n");
}

static void cg_write_header(struct cg *cg, const struct codegen_options *o)
{
	const struct graph *g = cg->g;
	const char *m = g->name;
	char up[128];
	cg_upper(m, up, sizeof up);
	cg_provenance(cg, o, "Interface");
	emit(cg->e,
	     "#ifndef BNNC_MODEL_%s_H\n"
	     "#define BNNC_MODEL_%s_H\n"
	     "\n"
	     "#include <stddef.h>\n"
	     "\n"
	     "#include <bnn.h>\n"
	     "\n"
	     "#ifdef __cplusplus\n"
	     "extern \"C\" {\n"
	     "#endif\n"
	     "\n",
	     up, up);
	emit(cg->e,
	     "/* Sizes: floats of input, output and target per example; parameters;\n"
	     " * batchnorm running statistics. */\n"
	     "#define %s_INPUTS %ldL\n"
	     "#define %s_OUTPUTS %ldL\n"
	     "#define %s_TARGETS %ldL\n"
	     "#define %s_NPARAMS %ldL\n"
	     "#define %s_NSTATS %ldL\n"
	     "\n",
	     up, cg->nodes[g->input].width, up, cg_outputs(cg), up,
	     g->likelihood == LIKELIHOOD_CATEGORICAL ? 1L : cg->nodes[g->output].width, up,
	     cg->nparams, up, cg->nstats);
	if (cg_input_vocab(g) > 0)
		emit(cg->e,
		     "/* The input holds integer ids, each in [0, %s_INPUT_VOCAB). */\n"
		     "#define %s_INPUT_VOCAB %ldL\n"
		     "\n",
		     up, up, cg_input_vocab(g));
	emit(cg->e,
	     "/* The descriptor the runtime drives the model through (bnn_model.h). */\n"
	     "extern const bnn_model %s_model;\n"
	     "\n"
	     "/* Workspace floats for a pass of up to `batch` examples. */\n"
	     "size_t %s_workspace_floats(long batch);\n"
	     "\n"
	     "/* One pass over a minibatch: see struct bnn_pass in bnn_model.h. */\n"
	     "double %s_pass(const bnn_pass *p);\n"
	     "\n"
	     "#ifdef BNN_GEN_DOUBLE\n"
	     "/* The same pass in double precision (when this model's C file is\n"
	     " * compiled with -DBNN_GEN_DOUBLE; used by gradient tests): the fields\n"
	     " * of bnn_pass as arguments, in order, the workspace in doubles. */\n"
	     "double %s_pass_f64(const double *w, const double *x, const double *y, long batch,\n"
	     "                   double *ws, double *out, double *grad, double *sqgrad,\n"
	     "                   bnn_rng *rng, const double *sigma, double *grad_sigma,\n"
	     "                   double *stats, int train);\n"
	     "#endif\n"
	     "\n"
	     "#ifdef __cplusplus\n"
	     "}\n"
	     "#endif\n"
	     "\n"
	     "#endif\n",
	     m, m, m, m);
}

/* ---- the C file ----------------------------------------------------------------- */

/* The width of the last layer's input when the output node is a dense
 * layer without a posterior of its own (last-layer Laplace reads it,
 * bnn_pass.features), else 0. */
static long cg_features(const struct cg *cg)
{
	int out = cg->g->output;
	/* a second node (the scale) is not the last layer's: no features */
	if (cg->g->nodes[out].op != OP_DENSE || cg_family(cg, out) != FAMILY_POINT ||
	    cg->g->scale_node >= 0 || cg->g->nodes[out].attrs.per_step)
		return 0;
	return cg->g->nodes[out].attrs.in_features;
}

/*
 * The noise loop: every draw of the pass, example by example and, within
 * an example, layer by layer in forward order, so that example i's noise
 * does not depend on the batch it is in (a pass over B examples draws what
 * B passes over one example each draw from the same rng).
 */
static void cg_write_noise(struct cg *cg)
{
	const struct graph *g = cg->g;
	int i;
	if (!cg->noise_rng && !cg->noise_sigma)
		return;
	emit(cg->e,
	     "\t/* noise: example by example, each example's layers in order */\n"
	     "\tif (%s) {\n"
	     "\t\tlong e;\n"
	     "\t\tfor (e = 0; e < B; e++) {\n",
	     cg->noise_rng ? "rng" : "rng && sigma");
	for (i = 0; i < g->nnodes; i++)
		if (cg->nodes[i].code && cg_node_layer(cg, i)->noise)
			cg_node_layer(cg, i)->noise(cg, i);
	emit(cg->e, "\t\t}\n\t}\n");
}

/* After node i's backward pass: its parameters' gradients are final
 * (bnn_pass.ready; data parallelism starts their sum over the processes). */
static void cg_write_ready(struct cg *cg, int i)
{
	const struct cg_node *c = &cg->nodes[i];
	long size = 0;
	int k;

	if (c->layer < 0 || c->first_tensor < 0 || c->ntensors <= 0)
		return;
	for (k = 0; k < c->ntensors; k++)
		size += cg->tensors[c->first_tensor + k].size;
	emit(cg->e, "\tif (ready)\n\t\tready(ready_ctx, %ldL, %ldL);\n",
	     cg->tensors[c->first_tensor].offset, size);
}

static void cg_write_pass(struct cg *cg)
{
	const struct graph *g = cg->g;
	int i;
	emit(cg->e,
	     "/* The pass: forward, output, loss, backward (see struct bnn_pass).\n"
	     " * Workspace per example: %ld floats",
	     cg->per_example);
	if (cg->fixed > 0)
		emit(cg->e, "; after those of the batch, %ld more", cg->fixed);
	emit(cg->e,
	     ". */\n"
	     "static double %s_run(const bnn_real *w, const bnn_real *x, const bnn_real *y, long B,\n"
	     "                     bnn_real *ws, bnn_real *out, bnn_real *grad, bnn_real *sqgrad,\n"
	     "                     bnn_rng *rng, const bnn_real *sigma, bnn_real *grad_sigma,\n"
	     "                     bnn_real *stats, int train,\n"
	     "                     void (*ready)(void *, long, long), void *ready_ctx,\n"
	     "                     bnn_real *features)\n"
	     "{\n"
	     "\tconst bnn_real *const a_%s = x;\n",
	     g->name, cg_name(cg, g->input));
	for (i = 0; i < g->nnodes; i++)
		if (cg->nodes[i].code)
			emit(cg->e, "\tbnn_real *const a_%s = ws + %ldL * B; /* [B, %ld] */\n",
			     cg_name(cg, i), cg->nodes[i].act_off, cg->nodes[i].width);
	for (i = 0; i < g->nnodes; i++)
		if (cg->nodes[i].has_delta && cg->nodes[i].relu_back < 0)
			emit(cg->e, "\tbnn_real *const d_%s = ws + %ldL * B;\n", cg_name(cg, i),
			     cg->nodes[i].delta_off);
	for (i = 0; i < g->nnodes; i++) {
		if (cg->nodes[i].code && cg_node_layer(cg, i)->declare)
			cg_node_layer(cg, i)->declare(cg, i);
		if (cg->nodes[i].code && cg_patched(cg, i))
			cg_patch_declare(cg, i);
	}
	/* The pass's own locals must not be named as a node's can be: a short
	 * prefix, '_' and the node's name (a_h, cv_h, bn_h).  So none of them
	 * starts with such a prefix and '_': a conv2d layer named 'col' has
	 * cv_col, a batchnorm layer named 'batch' bn_batch. */
	if (cg->conv_col >= 0)
		emit(cg->e,
		     "\tbnn_real *const conv_col = ws + %ldL * B + %ldL; /* [%ld] im2col lanes */\n",
		     cg->per_example, cg->conv_col, cg->conv_col_floats);
	if (cg->conv_tmp >= 0)
		emit(cg->e,
		     "\tbnn_real *const conv_tmp = ws + %ldL * B + %ldL; /* [%ld] output and dW lanes, dW slots */\n",
		     cg->per_example, cg->conv_tmp, cg->conv_tmp_floats);
	emit(cg->e,
	     "\tbnn_real *const sq_x = ws + %ldL * B;\n"
	     "\tbnn_real *const sq_g = ws + %ldL * B;\n"
	     "\tdouble loss;\n"
	     "\n"
	     "\t(void)w; (void)grad; (void)sqgrad; (void)sq_x; (void)sq_g;\n"
	     "\t(void)rng; (void)sigma; (void)grad_sigma; (void)stats; (void)train;\n"
	     "\t(void)ready; (void)ready_ctx; (void)features;\n"
	     "\n",
	     cg->scratch_x, cg->scratch_g);
	if (cg->nstats > 0)
		emit(cg->e,
		     "\t/* batchnorm: the batch's statistics in training or without stats */\n"
		     "\tconst int batch_stats = !stats || train;\n"
		     "\n");
	cg_write_noise(cg);
	emit(cg->e, "\t/* forward */\n");
	for (i = 0; i < g->nnodes; i++)
		if (cg->nodes[i].code) {
			char shape[64];
			graph_shape_str(&g->nodes[i], shape, sizeof shape);
			emit(cg->e, "\t/* %s = %s: %s */\n", g->nodes[i].name,
			     op_name(g->nodes[i].op), shape);
			if (cg_patched(cg, i))
				cg_patch_forward(cg, i);
			cg_node_layer(cg, i)->forward(cg, i);
		}
	if (cg_features(cg) > 0) /* the last layer's input (bnn_pass.features) */
		emit(cg->e,
		     "\tif (features)\n"
		     "\t\tmemcpy(features, a_%s, (size_t)B * %ldu * sizeof *features);\n",
		     cg_name(cg, g->nodes[g->output].inputs[0]), cg_features(cg));
	if (g->scale_node < 0)
		emit(cg->e,
		     "\tif (out)\n"
		     "\t\tmemcpy(out, a_%s, (size_t)B * %ldu * sizeof *out);\n",
		     cg_name(cg, g->output), cg->nodes[g->output].width);
	else /* each example's row: the first node, then the second */
		emit(cg->e,
		     "\tif (out) {\n"
		     "\t\tlong e;\n"
		     "\t\tfor (e = 0; e < B; e++) {\n"
		     "\t\t\tmemcpy(out + e * %ldL, a_%s + e * %ldL, %ldu * sizeof *out);\n"
		     "\t\t\tmemcpy(out + e * %ldL + %ldL, a_%s + e * %ldL, %ldu * sizeof *out);\n"
		     "\t\t}\n"
		     "\t}\n",
		     cg_outputs(cg), cg_name(cg, g->output), cg->nodes[g->output].width,
		     cg->nodes[g->output].width, cg_outputs(cg), cg->nodes[g->output].width,
		     cg_name(cg, g->scale_node), cg->nodes[g->output].width,
		     cg->nodes[g->output].width);
	emit(cg->e,
	     "\tif (!y)\n"
	     "\t\treturn 0;\n"
	     "\n"
	     "\t/* loss: %s ~ %s(%s%s%s) */\n",
	     g->target, likelihood_name(g->likelihood), cg_name(cg, g->output),
	     g->scale_node >= 0 ? ", " : "", g->scale_node >= 0 ? cg_name(cg, g->scale_node) : "");
	cg_emit_likelihood(cg);
	emit(cg->e, "\tif (!grad)\n\t\treturn loss;\n\n\t/* backward */\n");
	for (i = g->nnodes - 1; i >= 0; i--)
		if (cg->nodes[i].code && cg->nodes[i].has_delta) {
			emit(cg->e, "\t/* d %s */\n", cg_name(cg, i));
			cg_node_layer(cg, i)->backward(cg, i);
			if (cg_patched(cg, i))
				cg_patch_backward(cg, i);
			cg_write_ready(cg, i);
		}
	emit(cg->e, "\treturn loss;\n}\n\n");
}

/* What each family asks of the runtime (the last column of families.def). */
static const unsigned family_caps[FAMILY_COUNT] = {
#define FAMILY(id, name, mask, spec, caps) [FAMILY_##id] = (caps),
#include "families.def"
#undef FAMILY
};

/* Writes a set of BNN_CAP_* bits as C: "BNN_CAP_SIGMA | BNN_CAP_SIGMA_LRT", or "0". */
static void cg_emit_caps(struct emit *e, unsigned caps)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
#define CG_CAP_NAME(name, bit) { BNN_CAP_##name, "BNN_CAP_" #name },
		BNN_CAPABILITIES(CG_CAP_NAME)
#undef CG_CAP_NAME
	};
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (caps & names[i].bit)
			emit(e, "%s%s", n++ ? " | " : "", names[i].name);
	if (n == 0)
		emit(e, "0");
}

/* The bnn_tensor rows of V (N of them) as the array NAME_WHAT. */
static void cg_write_tensor_table(struct cg *cg, const char *what, const struct cg_tensor *v, int n)
{
	static const char *const roles[] = {
		"BNN_ROLE_WEIGHT",      "BNN_ROLE_BIAS",        "BNN_ROLE_LOG_SIGMA",
		"BNN_ROLE_SCALE",       "BNN_ROLE_SHIFT",       "BNN_ROLE_RUNNING_MEAN",
		"BNN_ROLE_RUNNING_VAR", "BNN_ROLE_WHVI_S1",     "BNN_ROLE_WHVI_S2",
		"BNN_ROLE_WHVI_G_MEAN", "BNN_ROLE_WHVI_G_RHO",  "BNN_ROLE_WHVI_FLOW_U",
		"BNN_ROLE_WHVI_FLOW_W", "BNN_ROLE_WHVI_FLOW_B", "BNN_ROLE_WHVI_BIAS_RHO"
	};
	static const char *const inits[] = { "BNN_INIT_ZERO", "BNN_INIT_GLOROT_UNIFORM",
		                             "BNN_INIT_HE_NORMAL", "BNN_INIT_ONE", "BNN_INIT_RHO" };
	int i;

	emit(cg->e, "static const bnn_tensor %s_%s[] = {\n", cg->g->name, what);
	for (i = 0; i < n; i++) {
		const struct cg_tensor *t = &v[i];
		emit(cg->e, "\t{ ");
		emit_c_string(cg->e, t->name);
		emit(cg->e,
		     ", %d, %s, %ldL, %ldL, %d, { %ldL, %ldL, %ldL, %ldL }, %ldL, %ldL, %s, %d },\n",
		     t->node >= 0 ? cg->nodes[t->node].layer : -1, roles[t->role], t->offset,
		     t->size, t->rank, t->shape[0], t->shape[1], t->shape[2], t->shape[3],
		     t->fan_in, t->fan_out, inits[t->init], t->components);
	}
	if (n == 0)
		emit(cg->e,
		     "\t{ \"\", -1, 0, 0L, 0L, 0, { 0, 0, 0, 0 }, 0L, 0L, 0, 0 } /* none */\n");
	emit(cg->e, "};\n\n");
}

/* The descriptor's bnn_prior: the kind, then the gaussian's precision, the
 * scale mixture's π, σ1, σ2 and the laplace's b (0 for another kind). */
static void cg_write_prior(struct cg *cg)
{
	static const int slot[BNN_PRIOR_COUNT][PRIOR_MAXARGS] = {
		[BNN_PRIOR_GAUSSIAN] = { 0 },
		[BNN_PRIOR_SCALEMIXTURE] = { 1, 2, 3 },
		[BNN_PRIOR_LAPLACE] = { 4 },
	};
	const struct graph *g = cg->g;
	const struct prior_info *info = prior_get((enum prior_id)g->prior);
	double v[5] = { 0 };
	char num[40];
	int i;

	for (i = 0; i < info->nspec; i++)
		v[slot[g->prior][i]] = g->prior_arg[i];
	emit(cg->e, "{ %d", g->prior);
	for (i = 0; i < 5; i++) {
		emit_double_str(v[i], num, sizeof num);
		emit(cg->e, ", %s", num);
	}
	emit(cg->e, " }");
}

static void cg_write_tables(struct cg *cg, const struct codegen_options *o, const char *canonical)
{
	static const char *const liks[] = {
#define LIKELIHOOD(id, name, spec) "BNN_LIKELIHOOD_" #id,
#include "likelihoods.def"
#undef LIKELIHOOD
	};
	const struct graph *g = cg->g;
	const struct graph_node *in = &g->nodes[g->input];
	const char *m = g->name;
	char num[40], num2[40];
	int i;

	cg_write_tensor_table(cg, "tensors", cg->tensors, cg->ntensors);
	cg_write_tensor_table(cg, "stat_tensors", cg->stats, cg->nstat_tensors);
	emit(cg->e, "static const bnn_layer %s_layers[] = {\n", m);
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		const struct cg_node *c = &cg->nodes[i];
		if (c->layer < 0)
			continue;
		emit_double_str(n->family.p, num, sizeof num);
		emit_double_str(n->family.prior > 0 ? n->family.prior : g->prior_precision, num2,
		                sizeof num2);
		emit(cg->e, "\t{ ");
		emit_c_string(cg->e, n->name);
		emit(cg->e, ", \"%s\", \"%s\", ", op_name(n->op), family_name(n->family.id));
		cg_emit_caps(cg->e, family_caps[n->family.id] | c->caps);
		emit(cg->e, ", %d, %s, %d, %s, %ldL, %ldL, %d, %d, %d },\n", n->family.k, num,
		     n->family.flows, num2, (long)graph_node_elements(&g->nodes[n->inputs[0]]),
		     c->width, c->first_tensor, c->ntensors,
		     n->family.prior > 0 ? PRIOR_GAUSSIAN : g->prior);
	}
	if (cg->nlayers == 0)
		emit(cg->e, "\t{ \"\", \"\", \"\", 0, 0, 0, 0, 0, 0L, 0L, 0, 0, 0 } /* none */\n");
	emit(cg->e, "};\n\n");

	emit(cg->e,
	     "double %s_pass(const bnn_pass *p)\n"
	     "{\n"
	     "\treturn %s_run(p->w, p->x, p->y, p->batch, p->ws, p->out, p->grad, p->sqgrad,\n"
	     "\t               p->rng, p->sigma, p->grad_sigma, p->stats, p->train, p->ready,\n"
	     "\t               p->ready_ctx, p->features);\n"
	     "}\n\n",
	     m, m);
	emit(cg->e, "const bnn_model %s_model = {\n\tBNN_MODEL_ABI,\n\t", m);
	emit_c_string(cg->e, m);
	emit(cg->e, ",\n\t");
	emit_c_string(cg->e, o->source);
	emit(cg->e, ",\n\t\"%s\",\n\tUINT64_C(0x%016llx),\n\t", bnn_version(),
	     codegen_fnv1a64(canonical));
	emit_c_string_lines(cg->e, canonical, "\t");
	emit(cg->e, ",\n\t");
	emit_c_string(cg->e, in->name);
	emit(cg->e, ",\n\t%d, { %ldL, %ldL, %ldL },\n\t%ldL, %ldL,\n\t%s,\n\t", in->rank,
	     in->shape[0], in->rank > 1 ? in->shape[1] : 0L, in->rank > 2 ? in->shape[2] : 0L,
	     cg->nodes[g->input].width, cg_outputs(cg), liks[g->likelihood]);
	emit_c_string(cg->e, g->target);
	emit_double_str(g->sigma, num, sizeof num);
	emit_double_str(g->prior_precision, num2, sizeof num2);
	emit(cg->e,
	     ",\n\t%ldL,\n\t%s, %s,\n\t%s,\n\t%ldL,\n\t%d, %s_tensors,\n\t%d, %s_layers,\n"
	     "\t%ldL, %d, %s_stat_tensors,\n"
	     "\t%s_workspace_floats,\n\t%s_pass,\n\t",
	     g->likelihood == LIKELIHOOD_CATEGORICAL ? 1L : cg->nodes[g->output].width, num,
	     g->scale_node >= 0 ? "BNN_SCALE_NODE"
	     : g->sigma_learned ? "BNN_SCALE_LEARNED"
	                        : "BNN_SCALE_FIXED",
	     num2, cg->nparams, cg->ntensors, m, cg->nlayers, m, cg->nstats, cg->nstat_tensors, m,
	     m, m);
	emit_c_string(cg->e, g->nodes[g->output].name);
	emit(cg->e, ", \"%s\",\n\t%ldL, %d,\n\t%ldL,\n\t", op_name(g->nodes[g->output].op),
	     cg_features(cg), cg_features(cg) > 0 ? cg->nodes[g->output].layer : -1,
	     cg_input_vocab(g));
	cg_write_prior(cg);
	emit_double_str(g->df, num, sizeof num);
	emit(cg->e, ",\n\t%s\n};\n", num);
}

/* C11 6.4.7: an #include "..." name ends at a double quote or a line break,
 * and a backslash or an apostrophe in it is undefined; "??" could start a
 * trigraph, which -std=c11 replaces first. */
const char *codegen_include_problem(const char *h_path)
{
	const char *p, *name = codegen_basename(h_path);
	for (p = name; *p; p++) {
		if (*p == '"')
			return "a double quote";
		if (*p == '\\')
			return "a backslash";
		if (*p == '\'')
			return "an apostrophe";
		if (*p == '\n')
			return "a newline";
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "a control character";
		if (p[0] == '?' && p[1] == '?')
			return "'?\?'"; /* "?\?": two '?' would make a trigraph here too */
	}
	return NULL;
}

static void cg_write_c(struct cg *cg, const struct codegen_options *o, const char *canonical)
{
	const char *m = cg->g->name;
	cg_provenance(cg, o, "Forward, loss and backward pass");
	emit(cg->e,
	     "#include <stdint.h>\n"
	     "#include <string.h>\n"
	     "\n"
	     "#include <bnn_gen.h>\n"
	     "\n"
	     "#include \"%s\"\n"
	     "\n",
	     codegen_basename(o->h_path));
	cg_write_pass(cg);
	emit(cg->e,
	     "size_t %s_workspace_floats(long batch)\n"
	     "{\n"
	     "\treturn (size_t)(batch > 0 ? batch : 0) * %ldu",
	     m, cg->per_example);
	if (cg->fixed > 0)
		emit(cg->e, " + %ldu", cg->fixed);
	emit(cg->e, ";\n}\n\n");
	emit(cg->e,
	     "#ifdef BNN_GEN_DOUBLE\n"
	     "double %s_pass_f64(const double *w, const double *x, const double *y, long batch,\n"
	     "                   double *ws, double *out, double *grad, double *sqgrad,\n"
	     "                   bnn_rng *rng, const double *sigma, double *grad_sigma,\n"
	     "                   double *stats, int train)\n"
	     "{\n"
	     "\treturn %s_run(w, x, y, batch, ws, out, grad, sqgrad, rng, sigma, grad_sigma, stats,\n"
	     "\t               train, NULL, NULL, NULL);\n"
	     "}\n"
	     "#else\n",
	     m, m);
	cg_write_tables(cg, o, canonical);
	emit(cg->e, "#endif /* BNN_GEN_DOUBLE */\n");
	if (o->with_main)
		emit(cg->e,
		     "\n"
		     "#if !defined(BNN_NO_MAIN) && !defined(BNN_GEN_DOUBLE)\n"
		     "/* The command-line driver: train, eval, predict (bnnc --main). */\n"
		     "int main(int argc, char **argv)\n"
		     "{\n"
		     "\treturn bnn_cli_main(&%s_model, argc, argv);\n"
		     "}\n"
		     "#endif\n",
		     m);
}

/* ---- files ---------------------------------------------------------------------- */

/* What the two fills of bnn_file_replace() need. */
struct cg_files {
	struct emit *e;
	const char *h_path;
	codegen_writer write_h, write_c;
	void *ctx;
	bnn_err h_err; /* why the header could not be written */
	int h_failed;  /* the header failed (report h_err) */
};

/* Writes the header into F (a fill of bnn_file_replace()). */
static int cg_fill_h(FILE *f, void *ctx)
{
	struct cg_files *w = ctx;
	emit_init(w->e, f);
	w->write_h(w->ctx);
	return emit_failed(w->e) ? -1 : 0;
}

/* Writes the C file into F, then replaces the header while the C file's
 * new contents wait in their temporary file: the file named by -o is the
 * first one tried, so an unwritable place is reported by its name. */
static int cg_fill_c(FILE *f, void *ctx)
{
	struct cg_files *w = ctx;
	emit_init(w->e, f);
	w->write_c(w->ctx);
	if (emit_failed(w->e))
		return -1;
	if (bnn_file_replace(w->h_path, "", cg_fill_h, w, &w->h_err) != BNN_OK) {
		w->h_failed = 1;
		return EIO;
	}
	return 0;
}

int codegen_write_files(struct emit *e, const char *h_path, const char *c_path,
                        codegen_writer write_h, codegen_writer write_c, void *ctx)
{
	struct cg_files w;
	bnn_err err;

	memset(&w, 0, sizeof w);
	w.e = e;
	w.h_path = h_path;
	w.write_h = write_h;
	w.write_c = write_c;
	w.ctx = ctx;
	if (bnn_file_replace(c_path, "", cg_fill_c, &w, &err) == BNN_OK)
		return 0;
	fprintf(stderr, "bnnc: %s\n", w.h_failed ? w.h_err.message : err.message);
	return 1;
}

/* The generated pass's files, as codegen_write_files() writes them. */
struct cg_model {
	struct cg *cg;
	const struct codegen_options *o;
	const char *canonical; /* the model's canonical text (provenance) */
};

static void cg_model_header(void *ctx)
{
	const struct cg_model *m = ctx;
	cg_write_header(m->cg, m->o);
}

static void cg_model_c(void *ctx)
{
	const struct cg_model *m = ctx;
	cg_write_c(m->cg, m->o, m->canonical);
}

int codegen_plan(struct cg *cg, const struct graph *g, struct diag *d)
{
	memset(cg, 0, sizeof *cg);
	cg->g = g;
	if (cg_check_supported(g, d) > 0)
		return 1;
	return cg_plan(cg) < 0 ? -1 : 0;
}

void codegen_plan_free(struct cg *cg)
{
	free(cg->nodes);
	free(cg->tensors);
	free(cg->stats);
	cg->nodes = NULL;
	cg->tensors = cg->stats = NULL;
}

int codegen_write(const struct graph *g, const struct codegen_options *o, struct diag *d)
{
	struct cg cg;
	struct emit e;
	struct cg_model m;
	char *canonical = NULL;
	int status = 1, rc;

	rc = codegen_plan(&cg, g, d); /* > 0: reported through d */
	cg.e = &e;
	if (rc > 0)
		goto done;
	if (rc < 0 || !(canonical = codegen_canonical(g))) {
		fputs("bnnc: out of memory\n", stderr);
		goto done;
	}
	m.cg = &cg;
	m.o = o;
	m.canonical = canonical;
	status = codegen_write_files(&e, o->h_path, o->c_path, cg_model_header, cg_model_c, &m);
done:
	free(canonical);
	codegen_plan_free(&cg);
	return status;
}
