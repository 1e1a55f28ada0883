/* standalone_layers.c: the inference code of each node for bnnc
 * --standalone (see standalone.h), one example at a time.
 *
 * The code of a node reads its input activations and writes its own into
 * the caller's workspace (struct sa's offsets), with every size a
 * constant.  It runs inside the file's bnns_forward(), where `noisy` says
 * whether this pass is a Monte-Carlo sample and `ekey` is the key of the
 * example's draws in it (standalone_math.c); each node draws from its own
 * stream, bnns_draw(ekey, NODE), so its noise depends on (seed, sample,
 * example, node) only.  Without noise (the posterior-mean pass) each node
 * computes what libbnn's pass computes without rng (predict --mc 0):
 *   point, meanfield   the weights μ;
 *   dropout(p)         no mask;
 *   emp, ecmp          the mean of the k components (bnn_gen_patch_mean);
 *   whvi               g = μ (through the flows, if any), the bias's mean.
 * With noise, each node samples its posterior for this example alone
 * (docs/standalone.md, "Monte-Carlo samples"):
 *   meanfield dense    the local reparameterisation (Kingma, Salimans and
 *                      Welling 2015, eq. 6 and 7): y = γ + √ν∘ε with
 *                      γ = W_μ·x + b_μ, ν = σ_W²·x² + σ_b², which has the
 *                      distribution of y under a weight sample of its own;
 *   meanfield conv2d,  W = μ + σ∘ε, the sample written into the block;
 *   batchnorm,
 *   layernorm,
 *   groupnorm
 *   dropout(p)         a mask per input value: kept, as 1/(1 − p), when
 *                      the top 24 bits of a draw are ≥ ⌈p·2^24⌉ (libbnn's
 *                      bnn_gen_dropout_mask rule);
 *   emp, ecmp          the mixing assignment (Chang et al., eq. 5 and 6):
 *                      one component for the layer (emp) or per value
 *                      (ecmp), uniform, gathered into the block;
 *   whvi               g = μ + σ∘ε, σ = softplus(ρ) (Rossi et al., eq. 2,
 *                      section 2.3), and the bias μ_b + σ_b·ε_b;
 *   meanfield gru,     W = μ + σ∘ε into the block, one sample for all steps
 *   attention,         (positions), as libbnn computes these layers on one
 *   per_step dense     weight draw per pass;
 *   dropout on         a mask per step and input feature (per_step dense),
 *   sequences          per position, zeroing the row (embedding), per input
 *                      feature and hidden unit entering U h, the same at
 *                      every step (gru: Gal and Ghahramani 2016, sec. 3);
 *   meanfield          the rows the ids pick, row v's noise at index
 *   embedding          v·dim + j of the node's stream (a repeated id, the
 *                      same sampled row).
 * Sequence ops: embedding reads ids checked before the pass (MODEL_EIDS),
 * positional adds its table written as literals, gru runs its T steps with
 * one step's projections in xt, attention keeps Q, K, V and the heads'
 * outputs in xt, transpose copies.
 * The header is read through standalone_storage.c's macros wherever the
 * storage matters (BNNS_WT, BNNS_DOT, BNNS_SCALED for the weight matrices
 * and kernels, BNNS_P for the other arrays), so the one file reads an f32,
 * bf16 or int8 header: a row's sum by sa_row_dot (dense, gru, attention),
 * an embedding's rows and σ by BNNS_WT and BNNS_ST; a layer that samples
 * its weights into the block (meanfield conv2d, conv1d, gru, attention,
 * per_step dense) decodes them there under bf16 or int8
 * (sa_emit_sampled_compressed).
 * A meanfield layer's σ comes from the weights header's `sigma` section
 * (MODEL_W_SIGMA_COUNT defined); without it (a checkpoint trained by a
 * point optimizer) the layer is its mean in every sample, as in libbnn.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "standalone.h"

/* A float constant as an exact hexadecimal literal ("0x1.8p-3f"). */
static void sa_float(double v, char *buf, size_t size)
{
	float f = (float)v;
	if (f == 0)
		snprintf(buf, size, "%s0.0f", 1 / f < 0 ? "-" : "");
	else
		snprintf(buf, size, "%af", (double)f);
}

/* The family of node I as its code sees it. */
static enum family_id sa_family(const struct sa *s, int i)
{
	return cg_family(&s->cg, i);
}

static int sa_patched(const struct sa *s, int i)
{
	return cg_patched(&s->cg, i);
}

static int sa_whvi(const struct sa *s, int i)
{
	return s->g->nodes[i].op == OP_DENSE && sa_family(s, i) == FAMILY_WHVI;
}

/* Whether node I is a per_step dense layer (the layer on each of T steps). */
static int sa_per_step(const struct sa *s, int i)
{
	return s->g->nodes[i].op == OP_DENSE && s->g->nodes[i].attrs.per_step;
}

/* Meanfield layers other than dense and embedding sample their weights
 * into the block (dense ones use the local reparameterisation, embedding
 * ones sample the rows their ids pick, sa_embedding); so does a per_step
 * dense layer, whose one weight sample is shared by its steps as in
 * libbnn (gen/layer_dense.c). */
static int sa_samples_weights(const struct sa *s, int i)
{
	enum op_id op = s->g->nodes[i].op;
	return sa_family(s, i) == FAMILY_MEANFIELD && op != OP_EMBEDDING &&
	       (op != OP_DENSE || sa_per_step(s, i));
}

/* Whether node I's weight matrix or kernel is compressed by bf16 and int8
 * (standalone_storage.c): it is then read through BNNS_WT, its bias and
 * the node's other tensors through BNNS_P. */
static int sa_node_compressed(const struct sa *s, int i)
{
	const struct cg_node *c = &s->cg.nodes[i];
	return !sa_patched(s, i) && c->ntensors > 0 && sa_compressed(s, c->first_tensor);
}

/* Whether node I's code reads its tensor K from the header as stored
 * (BNNS_WT; the rows' sums by BNNS_DOT, the int8 scale once by
 * BNNS_SCALED): a compressed tensor of a node that does not decode its
 * weights into the block. */
static int sa_reads_stored(const struct sa *s, int i, int k)
{
	return sa_node_compressed(s, i) && !sa_samples_weights(s, i) &&
	       sa_compressed(s, s->cg.nodes[i].first_tensor + k);
}

/* The floats of one copy of node I's parameters. */
static long sa_param_floats(const struct sa *s, int i)
{
	const struct cg_node *c = &s->cg.nodes[i];
	long p = 0;
	int k;
	for (k = 0; k < c->ntensors; k++)
		p += s->cg.tensors[c->first_tensor + k].size;
	return sa_patched(s, i) ? p / s->g->nodes[i].family.k : p;
}

int sa_layer_random(const struct sa *s, int i)
{
	enum family_id f = sa_family(s, i);
	if (!op_has_weights(s->g->nodes[i].op))
		return 0;
	return f == FAMILY_DROPOUT || f == FAMILY_EMP || f == FAMILY_ECMP || f == FAMILY_WHVI ||
	       (f == FAMILY_MEANFIELD && s->sigma_layers);
}

int sa_layer_alias(const struct sa *s, int i)
{
	enum op_id op = s->g->nodes[i].op;
	return op == OP_FLATTEN || op == OP_IDENTITY;
}

/* The shape of an attention node: T positions of F features, dim D in H
 * heads of DH values. */
struct sa_attn {
	long t, f, d, h, dh;
};

static struct sa_attn sa_attn_shape(const struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i], *in = &s->g->nodes[n->inputs[0]];
	struct sa_attn a;
	a.t = in->shape[0];
	a.f = in->shape[1];
	a.d = n->attrs.units;
	a.h = n->attrs.heads;
	a.dh = a.d / a.h;
	return a;
}

/* An attention layer's scratch in xt: under dropout the masked input
 * [T, F] (sa_attn_masked), then Q, K, V [T, 3D], the heads' outputs
 * [T, D] and one row of scores [T]. */
static long sa_attn_masked(const struct sa *s, int i)
{
	const struct sa_attn a = sa_attn_shape(s, i);
	return sa_family(s, i) == FAMILY_DROPOUT ? a.t * a.f : 0;
}

static long sa_attn_floats(const struct sa *s, int i)
{
	const struct sa_attn a = sa_attn_shape(s, i);
	return sa_attn_masked(s, i) + 4 * a.t * a.d + a.t;
}

/* A dropout gru's xt after its projections: the input mask [F] and the
 * hidden one [U], then one step's masked input [F] and state [U]. */
static long sa_gru_drop_floats(const struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	return 2 * (s->g->nodes[n->inputs[0]].shape[1] + n->attrs.units);
}

/* The dot products of the rows of node I's matrices (sa_row_dot): on
 * the floats decoded into the block under every storage (SA_DOT_F32) when
 * the node samples its weights there, else BNNS_DOT on the header's rows
 * (SA_DOT). */
static unsigned sa_row_dots(const struct sa *s, int i)
{
	return sa_samples_weights(s, i) ? SA_DOT_F32 : SA_DOT;
}

void sa_layer_plan(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	long in = s->cg.nodes[n->inputs[0]].width;
	enum family_id f = sa_family(s, i);
	if (sa_patched(s, i) || sa_samples_weights(s, i)) {
		long p = sa_param_floats(s, i);
		s->block_floats = p > s->block_floats ? p : s->block_floats;
	}
	if (f == FAMILY_DROPOUT && (n->op == OP_DENSE || n->op == OP_CONV2D || n->op == OP_CONV1D))
		s->xt_floats = in > s->xt_floats ? in : s->xt_floats;
	if (sa_whvi(s, i)) {
		struct whvi_dims w;
		whvi_dims(n->attrs.in_features, n->attrs.units, &w);
		if (2 * w.stack * w.d > s->whvi_floats)
			s->whvi_floats = 2 * w.stack * w.d;
		s->needs |= SA_EXP | SA_LOG1P | (n->family.flows > 0 ? SA_TANH : 0u);
	}
	if ((n->op == OP_DENSE && !sa_whvi(s, i)) || n->op == OP_GRU || n->op == OP_ATTENTION)
		s->needs |= sa_row_dots(s, i);
	if (n->op == OP_GRU) { /* one step's projections, 3U each, and dropout's */
		long g6 = 6 * n->attrs.units + (f == FAMILY_DROPOUT ? sa_gru_drop_floats(s, i) : 0);
		s->xt_floats = g6 > s->xt_floats ? g6 : s->xt_floats;
		s->needs |= SA_TANH;
	}
	if (n->op == OP_ATTENTION) { /* its scores: dots of floats in xt */
		long a = sa_attn_floats(s, i);
		s->xt_floats = a > s->xt_floats ? a : s->xt_floats;
		s->needs |= SA_DOT_F32 | SA_EXP;
	}
	if (f == FAMILY_MEANFIELD && n->op == OP_DENSE && !sa_per_step(s, i) && s->sigma_layers)
		s->needs |= SA_SQRT | SA_DOT2;
	if (sa_layer_random(s, i))
		s->needs |= SA_RNG;
	if ((f == FAMILY_MEANFIELD && s->sigma_layers) || sa_whvi(s, i))
		s->needs |= SA_GAUSS;
	switch (n->op) {
	case OP_BATCHNORM:
	case OP_LAYERNORM:
	case OP_GROUPNORM:
		s->needs |= SA_SQRT;
		break;
	case OP_TANH:
		s->needs |= SA_TANH;
		break;
	case OP_SIGMOID:
		s->needs |= SA_EXP;
		break;
	case OP_GELU:
		s->needs |= SA_ERF;
		break;
	case OP_SOFTPLUS:
		s->needs |= SA_EXP | SA_LOG1P;
		break;
	case OP_COS:
		s->needs |= SA_COS;
		break;
	default:
		break;
	}
}

/* NAME of node I's identifiers, "a_NAME" (cg_name). */
static const char *sa_act(const struct sa *s, int i)
{
	return cg_name(&s->cg, i);
}

/* The address of tensor K of node I, through p_NAME (the node's
 * parameters of this pass: the header's array, or the block). */
static void sa_tensor(const struct sa *s, int i, int k, char *buf, size_t size)
{
	const struct cg_node *c = &s->cg.nodes[i];
	long rel;
	if (k >= c->ntensors) {
		snprintf(buf, size, "(const float *)0");
		return;
	}
	if (sa_node_compressed(s, i) && !sa_samples_weights(s, i)) { /* no p_NAME */
		const struct cg_tensor *t = &s->cg.tensors[c->first_tensor + k];
		char at[96];
		if (sa_reads_stored(s, i, k)) {
			snprintf(buf, size, "BNNS_WT(%ld, %ld)", t->offset,
			         s->soff[c->first_tensor + k]);
			return;
		}
		sa_kept(s, c->first_tensor + k, 0, at, sizeof at);
		snprintf(buf, size, "%s_w_params + %s", s->m, at);
		return;
	}
	if (sa_patched(s, i))
		rel = cg_patch_rel(&s->cg, i, k);
	else
		rel = s->cg.tensors[c->first_tensor + k].offset -
		      s->cg.tensors[c->first_tensor].offset;
	snprintf(buf, size, "p_%s + %ld", sa_act(s, i), rel);
}

/* Tensor K of node I into the block at its place in the node's
 * parameters, under bf16 or int8 (inside sa_emit_sampled_compressed's
 * loop variables o, j and key): a compressed matrix decoded row by row
 * (BNNS_WV, the int8 scale of the row), the others copied from the f32
 * part; with noise each value gets σ times the draw of its index in the
 * node's parameters, the same draw as f32's. */
static void sa_emit_decoded_tensor(struct sa *s, int i, int k)
{
	const struct cg_node *c = &s->cg.nodes[i];
	const struct cg_tensor *t = &s->cg.tensors[c->first_tensor + k];
	const long rel = t->offset - s->cg.tensors[c->first_tensor].offset;
	const char *m = s->m;
	char at[96];

	if (sa_compressed(s, c->first_tensor + k)) {
		const long len = t->size / t->shape[0], q = s->soff[c->first_tensor + k];
		emit(s->e,
		     "\t\t\tfor (o = 0; o < %ld; o++)\n"
		     "\t\t\t\tfor (j = 0; j < %ld; j++) {\n"
		     "\t\t\t\t\tconst long at = %ld + o * %ld + j;\n"
		     "\t\t\t\t\tblk[at] = BNNS_SCALED(BNNS_WV(%s_w_params_q[%ld + o * %ld + j]), %ld + o);\n"
		     "#ifdef %s_W_SIGMA_COUNT\n"
		     "\t\t\t\t\tif (noisy)\n"
		     "\t\t\t\t\t\tblk[at] = blk[at] + BNNS_SV(%s_w_sigma_q[%ld + o * %ld + j]) *\n"
		     "\t\t\t\t\t\t                             bnns_normal(bnns_draw(key, at));\n"
		     "#endif\n"
		     "\t\t\t\t}\n",
		     t->shape[0], len, rel, len, m, q, len, s->srow[c->first_tensor + k], s->up, m,
		     q, len);
		return;
	}
	sa_kept(s, c->first_tensor + k, 0, at, sizeof at);
	emit(s->e,
	     "\t\t\tfor (j = 0; j < %ld; j++) {\n"
	     "\t\t\t\tblk[%ld + j] = %s_w_params[%s + j];\n"
	     "#ifdef %s_W_SIGMA_COUNT\n"
	     "\t\t\t\tif (noisy)\n"
	     "\t\t\t\t\tblk[%ld + j] = blk[%ld + j] + %s_w_sigma[%s + j] *\n"
	     "\t\t\t\t\t                   bnns_normal(bnns_draw(key, %ld + j));\n"
	     "#endif\n"
	     "\t\t\t}\n",
	     t->size, rel, m, at, s->up, rel, rel, m, at, rel);
}

/* p_NAME of a meanfield layer that samples its weights into the block
 * (conv2d, conv1d, gru, attention, per_step dense), whose matrices are
 * compressed: with an f32 header as sa_emit_params does (the header, or
 * the sample in the block); with bf16 or int8, every tensor goes into the
 * block (sa_emit_decoded_tensor: μ, or μ + σ∘ε with the same draws as
 * f32's). */
static void sa_emit_sampled_compressed(struct sa *s, int i)
{
	const struct cg_node *c = &s->cg.nodes[i];
	const struct cg_tensor *w = &s->cg.tensors[c->first_tensor];
	const char *name = sa_act(s, i), *m = s->m;
	int k;

	emit(s->e,
	     "#if %s_W_STORAGE == 0\n"
	     "\t\tconst float *p_%s = %s_w_params + %ld;\n"
	     "#ifdef %s_W_SIGMA_COUNT\n"
	     "\t\tif (noisy) {\n"
	     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
	     "\t\t\tlong j;\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\tblk[j] = %s_w_params[%ld + j] +\n"
	     "\t\t\t\t         %s_w_sigma[%ld + j] * bnns_normal(bnns_draw(key, j));\n"
	     "\t\t\tp_%s = blk;\n"
	     "\t\t}\n"
	     "#endif\n"
	     "#else\n"
	     "\t\tconst float *const p_%s = blk;\n"
	     "\t\t{\n"
	     "\t\t\tconst uint64_t key = noisy ? bnns_draw(ekey, %d) : 0u;\n"
	     "\t\t\tlong o, j;\n"
	     "\t\t\t(void)key;\n",
	     s->up, name, m, w->offset, s->up, i, sa_param_floats(s, i), m, w->offset, m, w->offset,
	     name, name, i);
	for (k = 0; k < c->ntensors; k++)
		sa_emit_decoded_tensor(s, i, k);
	emit(s->e, "\t\t}\n#endif\n");
}

/* p_NAME: the node's parameters of this pass.  Emp and ecmp gather them
 * into the block (or average the components); meanfield layers other than
 * dense sample them into it. */
static void sa_emit_params(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct cg_node *c = &s->cg.nodes[i];
	const char *name = sa_act(s, i);
	int k;

	if (sa_node_compressed(s, i)) {
		if (sa_samples_weights(s, i))
			sa_emit_sampled_compressed(s, i);
		return;
	}
	if (!sa_patched(s, i)) {
		char at[96];
		sa_kept(s, c->first_tensor, 0, at, sizeof at);
		emit(s->e, "\t\tconst float *p_%s = %s_w_params + %s;\n", name, s->m, at);
		if (!sa_samples_weights(s, i))
			return;
		emit(s->e,
		     "#ifdef %s_W_SIGMA_COUNT\n"
		     "\t\tif (noisy) {\n"
		     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
		     "\t\t\tlong j;\n"
		     "\t\t\tfor (j = 0; j < %ld; j++)\n"
		     "\t\t\t\tblk[j] = %s_w_params[%s + j] +\n"
		     "\t\t\t\t         %s_w_sigma[%s + j] * bnns_normal(bnns_draw(key, j));\n"
		     "\t\t\tp_%s = blk;\n"
		     "\t\t}\n"
		     "#endif\n",
		     s->up, i, sa_param_floats(s, i), s->m, at, s->m, at, name);
		return;
	}
	emit(s->e,
	     "\t\tconst float *const p_%s = blk;\n"
	     "\t\tif (noisy) { /* the mixing assignment: %s */\n"
	     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n",
	     name,
	     sa_family(s, i) == FAMILY_EMP ? "one component for the layer, eq. (5)"
	                                   : "one component per value, eq. (6)",
	     i);
	if (sa_family(s, i) == FAMILY_EMP)
		emit(s->e,
		     "\t\t\tconst long comp = (long)(((bnns_draw(key, 0) >> 32) * %dU) >> 32);\n",
		     n->family.k);
	emit(s->e, "\t\t\tlong j;\n");
	for (k = 0; k < c->ntensors; k++) {
		const struct cg_tensor *t = &s->cg.tensors[c->first_tensor + k];
		long rel = cg_patch_rel(&s->cg, i, k), size = t->size / n->family.k;
		if (sa_family(s, i) == FAMILY_EMP)
			emit(s->e,
			     "\t\t\tfor (j = 0; j < %ld; j++)\n"
			     "\t\t\t\tblk[%ld + j] = %s_w_params[%ld + comp * %ld + j];\n",
			     size, rel, s->m, t->offset, size);
		else
			emit(s->e,
			     "\t\t\tfor (j = 0; j < %ld; j++)\n"
			     "\t\t\t\tblk[%ld + j] = %s_w_params[%ld + (long)(((bnns_draw(key, %ld + j) "
			     ">> 32) * %dU) >> 32) * %ld + j];\n",
			     size, rel, s->m, t->offset, rel, n->family.k, size);
	}
	emit(s->e, "\t\t} else { /* the mean of the components */\n\t\t\tlong j, comp;\n");
	for (k = 0; k < c->ntensors; k++) {
		const struct cg_tensor *t = &s->cg.tensors[c->first_tensor + k];
		long rel = cg_patch_rel(&s->cg, i, k), size = t->size / n->family.k;
		char scale[48];
		sa_float(1.0 / (double)n->family.k, scale, sizeof scale);
		emit(s->e,
		     "\t\t\tfor (j = 0; j < %ld; j++) {\n"
		     "\t\t\t\tfloat v = %s_w_params[%ld + j];\n"
		     "\t\t\t\tfor (comp = 1; comp < %d; comp++)\n"
		     "\t\t\t\t\tv += %s_w_params[%ld + comp * %ld + j];\n"
		     "\t\t\t\tblk[%ld + j] = v * %s;\n"
		     "\t\t\t}\n",
		     size, s->m, t->offset, n->family.k, s->m, t->offset, size, rel, scale);
	}
	emit(s->e, "\t\t}\n");
}

/* ⌈p·2^24⌉: dropout keeps a value when the top 24 bits of its draw reach it. */
static unsigned long long sa_dropout_threshold(double p)
{
	double x = p * 16777216.0;
	unsigned long long t = (unsigned long long)x;
	return (double)t < x ? t + 1 : t;
}

/* Dropout's mask value of draw IDX of `key` (node I's stream): 1/(1 − p)
 * when the draw's top 24 bits reach ⌈p·2^24⌉, else 0, as a C expression. */
static void sa_keep(const struct sa *s, int i, const char *idx, char *buf, size_t size)
{
	const double p = s->g->nodes[i].family.p;
	char keep[48];
	sa_float(1 / (1 - p), keep, sizeof keep);
	snprintf(buf, size, "((bnns_draw(key, %s) >> 40) >= %lluU ? %s : 0.0f)", idx,
	         sa_dropout_threshold(p), keep);
}

/* The input a dropout layer sees: its input, or with noise xt, the input
 * times a mask. */
static void sa_emit_dropout(struct sa *s, int i, const char *in, long width)
{
	const struct graph_node *n = &s->g->nodes[i];
	char keep[160];
	sa_keep(s, i, "j", keep, sizeof keep);
	emit(s->e,
	     "\t\tconst float *x_%s = a_%s;\n"
	     "\t\tif (noisy) { /* dropout(p = %g): 1/(1 - p) when u >= p */\n"
	     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
	     "\t\t\tlong j;\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\txt[j] = a_%s[j] * %s;\n"
	     "\t\t\tx_%s = xt;\n"
	     "\t\t}\n",
	     sa_act(s, i), in, n->family.p, i, width, in, keep, sa_act(s, i));
}

/* The sum over row ROW (a C expression) of tensor K of node I, at W (its
 * address: sa_tensor), times X, LEN values, as a C expression: read as
 * stored (BNNS_DOT, the int8 scale of the row once) when the header holds
 * the tensor compressed (sa_reads_stored), else bnns_dot on floats. */
static void sa_row_dot(const struct sa *s, int i, int k, const char *row, long len, const char *w,
                       const char *x, char *buf, size_t size)
{
	if (sa_reads_stored(s, i, k))
		snprintf(buf, size, "BNNS_SCALED(BNNS_DOT(%ld, %s + %s * %ldL, %s), %ld + %s)", len,
		         w, row, len, x, s->srow[s->cg.nodes[i].first_tensor + k], row);
	else
		snprintf(buf, size, "bnns_dot(%ld, %s + %s * %ldL, %s)", len, w, row, len, x);
}

/* A per_step dense layer (gen/layer_dense.c): the layer on each of the T
 * rows of its [T, F] input, with the weights of this pass (μ, or one
 * sample shared by the steps: sa_samples_weights) and, under dropout, a
 * mask per step and input feature (T·F values, as libbnn draws them). */
static void sa_dense_steps(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long k = n->attrs.in_features, units = n->attrs.units, steps = n->shape[0];
	char w[160], b[160], x[160], dot[400];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, w, sizeof w);
	sa_tensor(s, i, 1, b, sizeof b);
	snprintf(x, sizeof x, "a_%s + st * %ldL", in, k);
	if (sa_family(s, i) == FAMILY_DROPOUT) {
		sa_emit_dropout(s, i, in, steps * k);
		snprintf(x, sizeof x, "x_%s + st * %ldL", name, k);
	}
	sa_row_dot(s, i, 0, "o", k, w, x, dot, sizeof dot);
	emit(s->e,
	     "\t\tlong st, o;\n"
	     "\t\tfor (st = 0; st < %ld; st++)\n"
	     "\t\t\tfor (o = 0; o < %ld; o++)\n"
	     "\t\t\t\ta_%s[st * %ldL + o] = ",
	     steps, units, name, units);
	if (n->attrs.bias)
		emit(s->e, "(%s)[o] + ", b);
	emit(s->e, "%s;\n", dot);
}

static void sa_dense(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long k = n->attrs.in_features, units = n->attrs.units;
	const struct cg_node *c = &s->cg.nodes[i];
	char w[160], b[160], x[160], dot[400];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, w, sizeof w);
	sa_tensor(s, i, 1, b, sizeof b);
	snprintf(x, sizeof x, "a_%s", in);
	if (sa_family(s, i) == FAMILY_DROPOUT) {
		sa_emit_dropout(s, i, in, k);
		snprintf(x, sizeof x, "x_%s", name);
	}
	sa_row_dot(s, i, 0, "o", k, w, x, dot, sizeof dot);
	if (sa_family(s, i) == FAMILY_MEANFIELD && s->sigma_layers) {
		const struct cg_tensor *t = &s->cg.tensors[c->first_tensor];
		char sb[160];
		if (n->attrs.bias) { /* the bias's σ: f32 in every storage */
			char at[96];
			sa_kept(s, c->first_tensor + 1, 0, at, sizeof at);
			snprintf(sb, sizeof sb, "%s_w_sigma[%s + o]", s->m, at);
		}
		emit(s->e,
		     "#ifdef %s_W_SIGMA_COUNT\n"
		     "\t\tif (noisy) { /* the local reparameterisation */\n"
		     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
		     "\t\t\tconst bnns_st *const s_%s = BNNS_ST(%ld, %ld);\n"
		     "\t\t\tlong o;\n"
		     "\t\t\tfor (o = 0; o < %ld; o++) {\n"
		     "\t\t\t\tfloat m = %s;\n"
		     "\t\t\t\tfloat v = BNNS_DOT2(%ld, s_%s + o * %ldL, %s);\n",
		     s->up, i, name, t->offset, s->soff[c->first_tensor], units, dot, k, name, k,
		     x);
		if (n->attrs.bias)
			emit(s->e,
			     "\t\t\t\tm = (%s)[o] + m;\n"
			     "\t\t\t\tv = %s * %s + v;\n",
			     b, sb, sb);
		emit(s->e,
		     "\t\t\t\ta_%s[o] = m + BNNS_SQRT(v) * bnns_normal(bnns_draw(key, o));\n"
		     "\t\t\t}\n"
		     "\t\t} else\n"
		     "#endif\n",
		     name);
	}
	emit(s->e,
	     "\t\t{\n"
	     "\t\t\tlong o;\n"
	     "\t\t\tfor (o = 0; o < %ld; o++)\n"
	     "\t\t\t\ta_%s[o] = ",
	     units, name);
	if (n->attrs.bias)
		emit(s->e, "(%s)[o] + ", b);
	emit(s->e, "%s;\n\t\t}\n", dot);
}

/* Direct convolution, output by output: the sum over the window in
 * (channel, row, column) order, then the bias (as libbnn adds it after its
 * product); windows in the padding are skipped.  conv1d is the same on
 * its [C, 1, L] map (graph_node_map), with its taps dilation apart. */
static void sa_conv2d(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i], *inn = &s->g->nodes[n->inputs[0]];
	const struct op_attrs *a = &n->attrs;
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long xm[3], ym[3], c, h, w, f = a->channels, oh, ow;
	char wt[160], b[160], x[160];
	int q;

	graph_node_map(inn, xm);
	graph_node_map(n, ym);
	c = xm[0];
	h = xm[1];
	w = xm[2];
	oh = ym[1];
	ow = ym[2];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, wt, sizeof wt);
	sa_tensor(s, i, 1, b, sizeof b);
	snprintf(x, sizeof x, "a_%s", in);
	if (sa_family(s, i) == FAMILY_DROPOUT) {
		sa_emit_dropout(s, i, in, c * h * w);
		snprintf(x, sizeof x, "x_%s", name);
	}
	/* a compressed kernel read as stored: BNNS_WV, the int8 scale once */
	q = sa_node_compressed(s, i) && !sa_samples_weights(s, i);
	emit(s->e,
	     "\t\tconst %s *const wk = %s;\n"
	     "\t\tlong f, oy, ox, ch, ky, kx;\n"
	     "\t\tfor (f = 0; f < %ld; f++)\n"
	     "\t\t\tfor (oy = 0; oy < %ld; oy++)\n"
	     "\t\t\t\tfor (ox = 0; ox < %ld; ox++) {\n"
	     "\t\t\t\t\tfloat acc = 0.0f;\n"
	     "\t\t\t\t\tfor (ch = 0; ch < %ld; ch++)\n"
	     "\t\t\t\t\t\tfor (ky = 0; ky < %ld; ky++) {\n"
	     "\t\t\t\t\t\t\tconst long iy = oy * %ld - %ld + ky * %ld;\n"
	     "\t\t\t\t\t\t\tif (iy < 0 || iy >= %ld)\n"
	     "\t\t\t\t\t\t\t\tcontinue;\n"
	     "\t\t\t\t\t\t\tfor (kx = 0; kx < %ld; kx++) {\n"
	     "\t\t\t\t\t\t\t\tconst long ix = ox * %ld - %ld + kx * %ld;\n"
	     "\t\t\t\t\t\t\t\tif (ix >= 0 && ix < %ld)\n"
	     "\t\t\t\t\t\t\t\t\tacc += %swk[((f * %ld + ch) * %ld + ky) * %ld + kx]%s *\n"
	     "\t\t\t\t\t\t\t\t\t       %s[(ch * %ld + iy) * %ld + ix];\n"
	     "\t\t\t\t\t\t\t}\n"
	     "\t\t\t\t\t\t}\n"
	     "\t\t\t\t\ta_%s[(f * %ld + oy) * %ld + ox] = %sacc",
	     q ? "bnns_wt" : "float", wt, f, oh, ow, c, a->kernel[0], a->stride[0], a->pad[0],
	     a->dilation[0], h, a->kernel[1], a->stride[1], a->pad[1], a->dilation[1], w,
	     q ? "BNNS_WV(" : "", c, a->kernel[0], a->kernel[1], q ? ")" : "", x, h, w, name, oh,
	     ow, q ? "BNNS_SCALED(" : "");
	if (q)
		emit(s->e, ", %ldL + f)", s->srow[s->cg.nodes[i].first_tensor]);
	if (a->bias)
		emit(s->e, " + (%s)[f]", b);
	emit(s->e, ";\n\t\t\t\t}\n");
}

/* maxpool (the first largest value of each window), avgpool (the window's
 * sum in row-major order times 1/size², or 1/size on a signal),
 * globalavgpool; no padding.  A [C, L] signal is its [C, 1, L] map
 * (graph_node_map) under a 1 × size window. */
static void sa_pool(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i], *inn = &s->g->nodes[n->inputs[0]];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long xm[3], ym[3], c, h, w;
	long kw = n->attrs.size, kh = inn->rank == 2 ? 1 : kw;
	long sw = n->attrs.stride[1], sh = inn->rank == 2 ? 1 : sw;
	char scale[48];

	graph_node_map(inn, xm);
	graph_node_map(n, ym);
	c = xm[0];
	h = xm[1];
	w = xm[2];

	if (n->op == OP_GLOBALAVGPOOL) {
		sa_float(1.0 / (double)(h * w), scale, sizeof scale);
		emit(s->e,
		     "\t\tlong ch, q;\n"
		     "\t\tfor (ch = 0; ch < %ld; ch++) {\n"
		     "\t\t\tfloat sum = 0.0f;\n"
		     "\t\t\tfor (q = 0; q < %ld; q++)\n"
		     "\t\t\t\tsum += a_%s[ch * %ld + q];\n"
		     "\t\t\ta_%s[ch] = sum * %s;\n"
		     "\t\t}\n",
		     c, h * w, in, h * w, name, scale);
		return;
	}
	emit(s->e,
	     "\t\tlong ch, oy, ox, u, v;\n"
	     "\t\tfor (ch = 0; ch < %ld; ch++)\n"
	     "\t\t\tfor (oy = 0; oy < %ld; oy++)\n"
	     "\t\t\t\tfor (ox = 0; ox < %ld; ox++) {\n"
	     "\t\t\t\t\tconst float *const xw = a_%s + ch * %ld + oy * %ld + ox * %ld;\n",
	     c, ym[1], ym[2], in, h * w, sh * w, sw);
	if (n->op == OP_MAXPOOL)
		emit(s->e,
		     "\t\t\t\t\tfloat r = xw[0];\n"
		     "\t\t\t\t\tfor (u = 0; u < %ld; u++)\n"
		     "\t\t\t\t\t\tfor (v = 0; v < %ld; v++)\n"
		     "\t\t\t\t\t\t\tif (xw[u * %ld + v] > r)\n"
		     "\t\t\t\t\t\t\t\tr = xw[u * %ld + v];\n",
		     kh, kw, w, w);
	else
		emit(s->e,
		     "\t\t\t\t\tfloat r = 0.0f;\n"
		     "\t\t\t\t\tfor (u = 0; u < %ld; u++)\n"
		     "\t\t\t\t\t\tfor (v = 0; v < %ld; v++)\n"
		     "\t\t\t\t\t\t\tr += xw[u * %ld + v];\n",
		     kh, kw, w);
	if (n->op == OP_AVGPOOL) {
		sa_float(1.0 / (double)(kh * kw), scale, sizeof scale);
		emit(s->e, "\t\t\t\t\tr = r * %s;\n", scale);
	}
	emit(s->e, "\t\t\t\t\ta_%s[(ch * %ld + oy) * %ld + ox] = r;\n\t\t\t\t}\n", name, ym[1],
	     ym[2]);
}

/* batchnorm at inference: the running statistics (header section
 * `stats`), y = γ·((x − μ)·r) + β with r = 1/√(v + ε). */
static void sa_batchnorm(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct cg_tensor *mean = &s->cg.stats[s->cg.nodes[i].first_stat];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long map[3], c, hw;
	char gm[160], bt[160], eps[48];

	graph_node_map(n, map);
	c = map[0];
	hw = map[1] * map[2];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, gm, sizeof gm);
	sa_tensor(s, i, 1, bt, sizeof bt);
	sa_float(n->attrs.eps, eps, sizeof eps);
	emit(s->e,
	     "\t\tlong ch, q;\n"
	     "\t\tfor (ch = 0; ch < %ld; ch++) {\n"
	     "\t\t\tconst float mu = %s_w_stats[%ld + ch];\n"
	     "\t\t\tconst float r = 1.0f / BNNS_SQRT(%s_w_stats[%ld + ch] + %s);\n"
	     "\t\t\tconst float g = (%s)[ch], b = (%s)[ch];\n"
	     "\t\t\tfor (q = 0; q < %ld; q++)\n"
	     "\t\t\t\ta_%s[ch * %ld + q] = g * ((a_%s[ch * %ld + q] - mu) * r) + b;\n"
	     "\t\t}\n",
	     c, s->m, mean->offset, s->m, mean->offset + c, eps, gm, bt, hw, name, hw, in, hw);
}

/* layernorm and groupnorm, as bnn_gen/norm.h computes them: per group of
 * n values of the example, the mean and r = 1/√(v + ε) (the mean first,
 * then the squared deviations, summed in double), then
 * y = γ·((x − μ)·r) + β with γ and β per cell of len values (the cells
 * repeating per step for a per-step layernorm). */
static void sa_norm(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct cg_norm_shape ns = cg_norm_shape(&s->cg, i);
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	const long size = ns.c * ns.hw / ns.groups;
	char gm[160], bt[160], eps[48];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, gm, sizeof gm);
	sa_tensor(s, i, 1, bt, sizeof bt);
	sa_float(n->attrs.eps, eps, sizeof eps);
	emit(s->e,
	     "\t\tlong g, j;\n"
	     "\t\tfor (g = 0; g < %ld; g++) {\n"
	     "\t\t\tconst float *x = a_%s + g * %ld;\n"
	     "\t\t\tfloat *y = a_%s + g * %ld;\n"
	     "\t\t\tdouble sum = 0, ss = 0, m;\n"
	     "\t\t\tfloat mu, r;\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\tsum += x[j];\n"
	     "\t\t\tm = sum / %ld;\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\tss += (x[j] - m) * (x[j] - m);\n"
	     "\t\t\tmu = (float)m;\n"
	     "\t\t\tr = 1.0f / BNNS_SQRT((float)(ss / %ld) + %s);\n"
	     "\t\t\tfor (j = 0; j < %ld; j++) {\n"
	     "\t\t\t\tconst long cell = (g * %ld + j) / %ld %% %ld;\n"
	     "\t\t\t\ty[j] = (%s)[cell] * ((x[j] - mu) * r) + (%s)[cell];\n"
	     "\t\t\t}\n"
	     "\t\t}\n",
	     ns.groups, in, size, name, size, size, size, size, size, eps, size, size, ns.len,
	     ns.cells, gm, bt);
}

/* An element-wise activation, as bnn_gen/elementwise.h computes it (with
 * the file's own math under MODEL_NO_LIBM). */
static void sa_activation(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	char slope[48];
	emit(s->e,
	     "\t\tlong j;\n"
	     "\t\tfor (j = 0; j < %ld; j++) {\n"
	     "\t\t\tconst float x = a_%s[j];\n"
	     "\t\t\ta_%s[j] = ",
	     s->cg.nodes[i].width, in, name);
	switch (n->op) {
	case OP_RELU:
		emit(s->e, "x > 0.0f ? x : 0.0f;\n");
		break;
	case OP_LEAKY_RELU:
		sa_float(n->attrs.slope, slope, sizeof slope);
		emit(s->e, "x > 0.0f ? x : %s * x;\n", slope);
		break;
	case OP_TANH:
		emit(s->e, "BNNS_TANH(x);\n");
		break;
	case OP_SIGMOID:
		emit(s->e, "x >= 0.0f ? 1.0f / (1.0f + BNNS_EXP(-x))\n"
		           "\t\t\t                : BNNS_EXP(x) / (1.0f + BNNS_EXP(x));\n");
		break;
	case OP_GELU:
		emit(s->e, "0.5f * x * (1.0f + BNNS_ERF(x * 0x1.6a09e6p-1f));\n");
		break;
	case OP_SOFTPLUS:
		emit(s->e, "(x > 0.0f ? x : 0.0f) + BNNS_LOG1P(BNNS_EXP(x < 0.0f ? x : -x));\n");
		break;
	case OP_COS:
		emit(s->e, "BNNS_COS(x);\n");
		break;
	default:
		emit(s->e, "x;\n");
		break;
	}
	emit(s->e, "\t\t}\n");
}

/* add: the first input, plus the others in order; concat: each input's
 * values after the previous one's. */
static void sa_merge(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i);
	long col = 0;
	int j;
	emit(s->e, "\t\tlong j;\n");
	for (j = 0; j < n->ninputs; j++) {
		long k = s->cg.nodes[n->inputs[j]].width;
		if (n->op == OP_ADD)
			emit(s->e, "\t\tfor (j = 0; j < %ld; j++)\n\t\t\ta_%s[j] %s= a_%s[j];\n", k,
			     name, j ? "+" : "", sa_act(s, n->inputs[j]));
		else
			emit(s->e,
			     "\t\tfor (j = 0; j < %ld; j++)\n\t\t\ta_%s[%ld + j] = a_%s[j];\n", k,
			     name, col, sa_act(s, n->inputs[j]));
		col += k;
	}
}

/* A whvi dense layer (Rossi et al., eq. 2): per block j,
 * y_j = S1_j∘H·(g_j∘H·(S2_j∘x̄)) + b, H the orthonormal Walsh-Hadamard
 * matrix (in-place butterflies, then one product by 1/√D rounded to
 * float, as libbnn's bnn_fwht_batch), g = μ or μ + softplus(ρ)∘ε. */
static void sa_whvi_dense(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long din = n->attrs.in_features, dout = n->attrs.units;
	const struct cg_node *c = &s->cg.nodes[i];
	const struct cg_tensor *t = &s->cg.tensors[c->first_tensor];
	long s1 = t[0].offset, s2 = t[1].offset, mu = t[2].offset, rho = t[3].offset, sd;
	long nf = n->family.flows;
	int bias_t = nf > 0 ? 7 : 4; /* the bias's mean and ρ follow the flows */
	struct whvi_dims w;
	char scale[48], flows[1600];

	whvi_dims(din, dout, &w);
	sd = w.stack * w.d;
	sa_float(1.0 / sqrt((double)w.d), scale, sizeof scale);
	flows[0] = '\0';
	if (nf > 0) /* planar flows on g (appendix C, eq. 20), flow by flow */
		snprintf(
		        flows, sizeof flows,
		        "\t\tfor (h = 0; h < %ld; h++)\n"
		        "\t\t\tfor (j = 0; j < %ld; j++) {\n"
		        "\t\t\t\tconst float *const fu = %s_w_params + %ld + (j * %ld + h) * %ld;\n"
		        "\t\t\t\tconst float *const fw = %s_w_params + %ld + (j * %ld + h) * %ld;\n"
		        "\t\t\t\tfloat a = %s_w_params[%ld + j * %ld + h], th;\n"
		        "\t\t\t\tfor (q = 0; q < %ld; q++)\n"
		        "\t\t\t\t\ta += fw[q] * g[j * %ld + q];\n"
		        "\t\t\t\tth = BNNS_TANH(a);\n"
		        "\t\t\t\tfor (q = 0; q < %ld; q++)\n"
		        "\t\t\t\t\tg[j * %ld + q] = g[j * %ld + q] + fu[q] * th;\n"
		        "\t\t\t}\n",
		        nf, w.stack, s->m, t[4].offset, nf, w.d, s->m, t[5].offset, nf, w.d, s->m,
		        t[6].offset, nf, w.d, w.d, w.d, w.d, w.d);
	emit(s->e,
	     "\t\tfloat *const g = wv, *const t = wv + %ld;\n"
	     "\t\tlong j, q, h, blk0;\n"
	     "\t\tconst uint64_t key = noisy ? bnns_draw(ekey, %d) : 0u;\n"
	     "\t\tfor (q = 0; q < %ld; q++) {\n"
	     "\t\t\tconst float r = %s_w_params[%ld + q];\n"
	     "\t\t\tconst float sdv = (r > 0.0f ? r : 0.0f) + BNNS_LOG1P(BNNS_EXP(r < 0.0f ? r : -r));\n"
	     "\t\t\tg[q] = noisy ? %s_w_params[%ld + q] + sdv * bnns_normal(bnns_draw(key, q))\n"
	     "\t\t\t             : %s_w_params[%ld + q];\n"
	     "\t\t}\n"
	     "%s"
	     "\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\tfor (q = 0; q < %ld; q++)\n"
	     "\t\t\t\tt[j * %ld + q] = q < %ld ? %s_w_params[%ld + j * %ld + q] * a_%s[q] : 0.0f;\n"
	     "\t\tfor (blk0 = 0; blk0 < 2; blk0++) {\n"
	     "\t\t\tfor (j = 0; j < %ld; j++) {\n"
	     "\t\t\t\tfloat *const v = t + j * %ld;\n"
	     "\t\t\t\tfor (h = 1; h < %ld; h *= 2)\n"
	     "\t\t\t\t\tfor (q = 0; q < %ld; q += 2 * h) {\n"
	     "\t\t\t\t\t\tlong r;\n"
	     "\t\t\t\t\t\tfor (r = q; r < q + h; r++) {\n"
	     "\t\t\t\t\t\t\tconst float a = v[r], b = v[r + h];\n"
	     "\t\t\t\t\t\t\tv[r] = a + b;\n"
	     "\t\t\t\t\t\t\tv[r + h] = a - b;\n"
	     "\t\t\t\t\t\t}\n"
	     "\t\t\t\t\t}\n"
	     "\t\t\t\tfor (q = 0; q < %ld; q++)\n"
	     "\t\t\t\t\tv[q] = v[q] * %s;\n"
	     "\t\t\t}\n"
	     "\t\t\tif (blk0 == 0)\n"
	     "\t\t\t\tfor (q = 0; q < %ld; q++)\n"
	     "\t\t\t\t\tt[q] = g[q] * t[q];\n"
	     "\t\t}\n"
	     "\t\tfor (q = 0; q < %ld; q++)\n"
	     "\t\t\ta_%s[q] = %s_w_params[%ld + q] * t[q]",
	     sd, i, sd, s->m, rho, s->m, mu, s->m, mu, flows, w.stack, w.d, w.d, din, s->m, s2, w.d,
	     in, w.stack, w.d, w.d, w.d, w.d, scale, sd, dout, name, s->m, s1);
	if (n->attrs.bias) {
		long bm = t[bias_t].offset, br = t[bias_t + 1].offset;
		emit(s->e,
		     " + %s_w_params[%ld + q];\n"
		     "\t\tif (noisy)\n"
		     "\t\t\tfor (q = 0; q < %ld; q++) {\n"
		     "\t\t\t\tconst float r = %s_w_params[%ld + q];\n"
		     "\t\t\t\tconst float sdv = (r > 0.0f ? r : 0.0f) + BNNS_LOG1P(BNNS_EXP(r < 0.0f ? r : -r));\n"
		     "\t\t\t\ta_%s[q] = a_%s[q] + sdv * bnns_normal(bnns_draw(key, %ld + q));\n"
		     "\t\t\t}\n",
		     s->m, bm, dout, s->m, br, name, name, sd);
	} else {
		emit(s->e, ";\n");
	}
}

/* embedding: row id_t of the table for each of the T positions (the ids
 * were checked against the vocabulary before the pass: MODEL_EIDS).  A
 * meanfield table's sample draws row v's noise from index v·dim + j of the
 * node's stream, so a repeated id gets the same sampled row at every
 * position, as under libbnn's one weight sample per pass.  Dropout drops
 * whole output rows (Gal and Ghahramani 2016, sec. 4, per position as
 * gen/layer_embedding.c): row p by draw p of the node's stream. */
static void sa_embedding(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct cg_tensor *t = &s->cg.tensors[s->cg.nodes[i].first_tensor];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long steps = s->cg.nodes[n->inputs[0]].width, dim = s->cg.nodes[i].width / steps;
	const long q = s->soff[s->cg.nodes[i].first_tensor];

	/* the table read as stored: row v's values, times its int8 scale */
	emit(s->e,
	     "\t\tlong p, j;\n"
	     "\t\tfor (p = 0; p < %ld; p++) {\n"
	     "\t\t\tconst long row = (long)a_%s[p];\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\ta_%s[p * %ld + j] =\n"
	     "\t\t\t\t        BNNS_SCALED(BNNS_WV(BNNS_WT(%ld, %ld)[row * %ld + j]), %ld + row);\n"
	     "\t\t}\n",
	     steps, in, dim, name, dim, t->offset, q, dim, s->srow[s->cg.nodes[i].first_tensor]);
	if (sa_family(s, i) == FAMILY_DROPOUT) {
		char keep[160];
		sa_keep(s, i, "p", keep, sizeof keep);
		emit(s->e,
		     "\t\tif (noisy) { /* dropout(p = %g): row p kept as 1/(1 - p) when u >= p */\n"
		     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
		     "\t\t\tfor (p = 0; p < %ld; p++) {\n"
		     "\t\t\t\tconst float mk = %s;\n"
		     "\t\t\t\tfor (j = 0; j < %ld; j++)\n"
		     "\t\t\t\t\ta_%s[p * %ld + j] = a_%s[p * %ld + j] * mk;\n"
		     "\t\t\t}\n"
		     "\t\t}\n",
		     n->family.p, i, steps, keep, dim, name, dim, name, dim);
		return;
	}
	if (sa_family(s, i) != FAMILY_MEANFIELD || !s->sigma_layers)
		return;
	emit(s->e,
	     "#ifdef %s_W_SIGMA_COUNT\n"
	     "\t\tif (noisy) {\n"
	     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
	     "\t\t\tfor (p = 0; p < %ld; p++) {\n"
	     "\t\t\t\tconst long row = (long)a_%s[p];\n"
	     "\t\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\t\ta_%s[p * %ld + j] = a_%s[p * %ld + j] +\n"
	     "\t\t\t\t\t        BNNS_SV(BNNS_ST(%ld, %ld)[row * %ld + j]) *\n"
	     "\t\t\t\t\t                bnns_normal(bnns_draw(key, row * %ld + j));\n"
	     "\t\t\t}\n"
	     "\t\t}\n"
	     "#endif\n",
	     s->up, i, steps, in, dim, name, dim, name, dim, t->offset, q, dim, dim);
}

/* positional: the input plus the sinusoidal table of bnn_gen/positional.h
 * (Vaswani et al. 2017, sec. 3.5), computed here in double by the same
 * formula and written as the float literals the library's table holds, so
 * the file needs no sin, cos or pow. */
static void sa_positional(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long d = n->shape[1], steps = n->shape[0], p, j;
	char v[48];

	emit(s->e, "\t\tstatic const float pe[%ld] = {", steps * d);
	for (p = 0; p < steps; p++)
		for (j = 0; j < d; j++) {
			/* the pair (2i, 2i + 1) shares the frequency 10000^(−2i/D) */
			const double angle =
			        (double)p * pow(10000.0, -(double)(j - j % 2) / (double)d);
			sa_float(j % 2 == 0 ? sin(angle) : cos(angle), v, sizeof v);
			emit(s->e, "%s%s", (p * d + j) % 4 == 0 ? "\n\t\t\t" : " ", v);
			if (p * d + j + 1 < steps * d)
				emit(s->e, ",");
		}
	emit(s->e,
	     "\n\t\t};\n"
	     "\t\tlong j;\n"
	     "\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\ta_%s[j] = a_%s[j] + pe[j];\n",
	     steps * d, name, in);
}

/* A dropout gru's masks (Gal and Ghahramani 2016, sec. 3, as
 * gen/layer_gru.c): mk in xt after the projections, F on the input and U
 * on the hidden units entering U h, draws 0 .. F + U − 1 of the node's
 * stream, the same at every step; then xd [F] and hd [U], one step's
 * masked input and state.  Without noise, no mask. */
static void sa_gru_masks(struct sa *s, int i, long f, long u)
{
	char keep[160];
	sa_keep(s, i, "j", keep, sizeof keep);
	emit(s->e,
	     "\t\tfloat *const mk = xt + %ld, *const xd = mk + %ld, *const hd = xd + %ld;\n"
	     "\t\tif (noisy) { /* dropout(p = %g): 1/(1 - p) when u >= p */\n"
	     "\t\t\tconst uint64_t key = bnns_draw(ekey, %d);\n"
	     "\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\tmk[j] = %s;\n"
	     "\t\t}\n",
	     6 * u, f + u, f, s->g->nodes[i].family.p, i, f + u, keep);
}

/* A dropout gru's step input xs and the state hq that enters U h: the
 * step's row and h_{t-1}, or with noise their masked copies (xd, hd; h_0
 * = 0 needs none). */
static void sa_gru_mask_step(struct sa *s, const char *in, long f, long u)
{
	emit(s->e,
	     "\t\t\tconst float *xs = a_%s + st * %ldL, *hq = hp;\n"
	     "\t\t\tif (noisy) {\n"
	     "\t\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\t\txd[j] = xs[j] * mk[j];\n"
	     "\t\t\t\txs = xd;\n"
	     "\t\t\t\tif (st > 0) {\n"
	     "\t\t\t\t\tfor (j = 0; j < %ld; j++)\n"
	     "\t\t\t\t\t\thd[j] = hp[j] * mk[%ld + j];\n"
	     "\t\t\t\t\thq = hd;\n"
	     "\t\t\t\t}\n"
	     "\t\t\t}\n",
	     in, f, f, u, f);
}

/* gru, as bnn_gen/gru.h computes it (Cho et al. 2014 with PyTorch's reset
 * gate after the hidden product), step by step from h_0 = 0: the input
 * and hidden projections q = W_ih x_t + b_ih and hh = W_hh h + b_hh (xt,
 * 6U floats), then per unit r = σ(q_r + hh_r), z = σ(q_z + hh_z),
 * n = tanh(q_n + r·hh_n), h' = (1 − z)·n + z·h, with σ(x) = (1 +
 * tanh(x/2))/2 as the library's float kernel.  The state is the output:
 * h_t is row t of a sequence, or (output = last) the node's U values,
 * overwritten each step once hh has read them.  A meanfield layer's
 * weights are one sample for all steps (the block), as in libbnn; a
 * dropout layer masks each step's input and the state entering U h
 * (sa_gru_masks), while z carries the unmasked state. */
static void sa_gru(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	long u = n->attrs.units, steps = s->g->nodes[n->inputs[0]].shape[0];
	long f = s->cg.nodes[n->inputs[0]].width / steps;
	int seq = n->attrs.sequence, drop = sa_family(s, i) == FAMILY_DROPOUT;
	char wi[160], wh[160], bi[160], bh[160], x[160], dx[400], dh[400];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, wi, sizeof wi);
	sa_tensor(s, i, 1, wh, sizeof wh);
	sa_tensor(s, i, 2, bi, sizeof bi);
	sa_tensor(s, i, 3, bh, sizeof bh);
	emit(s->e,
	     "\t\tfloat *const q = xt, *const hh = xt + %ld;\n"
	     "\t\tlong st, o, j;\n",
	     3 * u);
	snprintf(x, sizeof x, "a_%s + st * %ldL", in, f);
	if (drop) {
		sa_gru_masks(s, i, f, u);
		snprintf(x, sizeof x, "xs");
	}
	if (!seq)
		emit(s->e, "\t\tfor (j = 0; j < %ld; j++)\n\t\t\ta_%s[j] = 0.0f;\n", u, name);
	emit(s->e, "\t\tfor (st = 0; st < %ld; st++) {\n", steps);
	if (seq) /* h_{t-1} is row t - 1 (unread at t = 0) */
		emit(s->e,
		     "\t\t\tconst float *const hp = a_%s + (st > 0 ? st - 1 : 0) * %ldL;\n"
		     "\t\t\tfloat *const hv = a_%s + st * %ldL;\n",
		     name, u, name, u);
	else
		emit(s->e,
		     "\t\t\tconst float *const hp = a_%s;\n"
		     "\t\t\tfloat *const hv = a_%s;\n",
		     name, name);
	if (drop)
		sa_gru_mask_step(s, in, f, u);
	sa_row_dot(s, i, 0, "o", f, wi, x, dx, sizeof dx);
	sa_row_dot(s, i, 1, "o", u, wh, drop ? "hq" : "hp", dh, sizeof dh);
	emit(s->e,
	     "\t\t\tfor (o = 0; o < %ld; o++) {\n"
	     "\t\t\t\tq[o] = (%s)[o] + %s;\n"
	     "\t\t\t\thh[o] = st > 0 ? (%s)[o] + %s : (%s)[o];\n"
	     "\t\t\t}\n"
	     "\t\t\tfor (j = 0; j < %ld; j++) {\n"
	     "\t\t\t\tconst float r = 0.5f + 0.5f * BNNS_TANH(0.5f * (q[j] + hh[j]));\n"
	     "\t\t\t\tconst float z = 0.5f + 0.5f * BNNS_TANH(0.5f * (q[%ld + j] + hh[%ld + j]));\n"
	     "\t\t\t\tconst float c = BNNS_TANH(q[%ld + j] + r * hh[%ld + j]);\n"
	     "\t\t\t\tconst float h0 = st > 0 ? hp[j] : 0.0f;\n"
	     "\t\t\t\thv[j] = (1.0f - z) * c + z * h0;\n"
	     "\t\t\t}\n"
	     "\t\t}\n",
	     3 * u, bi, dx, bh, dh, bh, u, u, u, 2 * u, 2 * u);
}

/* attention, as bnn_gen/attention.h computes it (Vaswani et al. 2017,
 * sec. 3.2.1 eq. 1 and sec. 3.2.2), position by position: the
 * projections [Q K V] = X W_inᵀ + b_in into qkv, then per head h and
 * query position r the scores s_j = Q_h[r]·K_h[j]/√d over the keys j
 * (j ≤ r when causal), their softmax with the row's maximum subtracted
 * first, and the head's output O[r, hd..] = Σ_j s_j V_h[j]; finally
 * Y = O W_outᵀ + b_out.  The scratch is xt (sa_attn_floats).  A meanfield
 * layer's weights are one sample in the block, shared by every position,
 * as in libbnn.  Under dropout the projections read the input times a
 * mask per position and input feature (sa_emit_dropout on its T·F values,
 * drawn as libbnn draws them: gen/layer_attention.c), in xt's first T·F
 * floats, and the rest of the scratch follows it. */
static void sa_attention(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct sa_attn a = sa_attn_shape(s, i);
	const char *name = sa_act(s, i), *in = sa_act(s, n->inputs[0]);
	const long e = 3 * a.d;
	char wi[160], bi[160], wo[160], bo[160], x[160], xr[200], scale[48], keys[32];
	char orow[48], din[400], dout[400];

	sa_emit_params(s, i);
	sa_tensor(s, i, 0, wi, sizeof wi);
	sa_tensor(s, i, 1, bi, sizeof bi);
	sa_tensor(s, i, 2, wo, sizeof wo);
	sa_tensor(s, i, 3, bo, sizeof bo);
	snprintf(x, sizeof x, "a_%s", in);
	if (sa_family(s, i) == FAMILY_DROPOUT) {
		sa_emit_dropout(s, i, in, a.t * a.f);
		snprintf(x, sizeof x, "x_%s", name);
	}
	snprintf(xr, sizeof xr, "%s + r * %ldL", x, a.f);
	sa_row_dot(s, i, 0, "c", a.f, wi, xr, din, sizeof din);
	snprintf(orow, sizeof orow, "o + r * %ldL", a.d);
	sa_row_dot(s, i, 2, "c", a.d, wo, orow, dout, sizeof dout);
	/* the scale as the library's float kernel rounds it: 1/√d of a float d */
	sa_float(1.0 / (double)sqrtf((float)a.dh), scale, sizeof scale);
	if (n->attrs.causal)
		snprintf(keys, sizeof keys, "r + 1"); /* the keys up to the query's position */
	else
		snprintf(keys, sizeof keys, "%ldL", a.t);
	emit(s->e,
	     "\t\tfloat *const qkv = xt + %ldL, *const o = qkv + %ldL, *const sc = o + %ldL;\n"
	     "\t\tlong r, c, h, j;\n"
	     "\t\tfor (r = 0; r < %ld; r++)\n"
	     "\t\t\tfor (c = 0; c < %ld; c++)\n"
	     "\t\t\t\tqkv[r * %ldL + c] = (%s)[c] + %s;\n"
	     "\t\tfor (h = 0; h < %ld; h++)\n"
	     "\t\t\tfor (r = 0; r < %ld; r++) {\n"
	     "\t\t\t\tconst float *const qr = qkv + r * %ldL + h * %ldL;\n"
	     "\t\t\t\tconst long nk = %s;\n"
	     "\t\t\t\tfloat mx, z = 0.0f;\n"
	     "\t\t\t\tfor (j = 0; j < nk; j++)\n"
	     "\t\t\t\t\tsc[j] = %s * bnns_dot(%ld, qr, qkv + j * %ldL + %ld + h * %ldL);\n"
	     "\t\t\t\tmx = sc[0];\n"
	     "\t\t\t\tfor (j = 1; j < nk; j++)\n"
	     "\t\t\t\t\tmx = sc[j] > mx ? sc[j] : mx;\n"
	     "\t\t\t\tfor (j = 0; j < nk; j++) {\n"
	     "\t\t\t\t\tsc[j] = BNNS_EXP(sc[j] - mx);\n"
	     "\t\t\t\t\tz += sc[j];\n"
	     "\t\t\t\t}\n"
	     "\t\t\t\tfor (j = 0; j < nk; j++)\n"
	     "\t\t\t\t\tsc[j] = sc[j] / z;\n"
	     "\t\t\t\tfor (c = 0; c < %ld; c++) {\n"
	     "\t\t\t\t\tfloat acc = 0.0f;\n"
	     "\t\t\t\t\tfor (j = 0; j < nk; j++)\n"
	     "\t\t\t\t\t\tacc += sc[j] * qkv[j * %ldL + %ld + h * %ldL + c];\n"
	     "\t\t\t\t\to[r * %ldL + h * %ldL + c] = acc;\n"
	     "\t\t\t\t}\n"
	     "\t\t\t}\n"
	     "\t\tfor (r = 0; r < %ld; r++)\n"
	     "\t\t\tfor (c = 0; c < %ld; c++)\n"
	     "\t\t\t\ta_%s[r * %ldL + c] = (%s)[c] + %s;\n",
	     sa_attn_masked(s, i), a.t * e, a.t * a.d, a.t, e, e, bi, din, a.h, a.t, e, a.dh, keys,
	     scale, a.dh, e, a.d, a.dh, a.dh, e, 2 * a.d, a.dh, a.d, a.dh, a.t, a.d, name, a.d, bo,
	     dout);
}

/* transpose: the example's [A, B] values to [B, A] (bnn_gen/transpose.h). */
static void sa_transpose(struct sa *s, int i)
{
	const struct graph_node *x = &s->g->nodes[s->g->nodes[i].inputs[0]];
	emit(s->e,
	     "\t\tlong r, c;\n"
	     "\t\tfor (r = 0; r < %ld; r++)\n"
	     "\t\t\tfor (c = 0; c < %ld; c++)\n"
	     "\t\t\t\ta_%s[c * %ldL + r] = a_%s[r * %ldL + c];\n",
	     x->shape[0], x->shape[1], sa_act(s, i), x->shape[0],
	     sa_act(s, s->g->nodes[i].inputs[0]), x->shape[1]);
}

void sa_layer_forward(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	char shape[64];
	graph_shape_str(n, shape, sizeof shape);
	emit(s->e, "\t{ /* %s = %s: %s */\n", n->name, op_name(n->op), shape);
	switch (n->op) {
	case OP_DENSE:
		if (sa_whvi(s, i))
			sa_whvi_dense(s, i);
		else if (sa_per_step(s, i))
			sa_dense_steps(s, i);
		else
			sa_dense(s, i);
		break;
	case OP_CONV2D:
	case OP_CONV1D:
		sa_conv2d(s, i);
		break;
	case OP_MAXPOOL:
	case OP_AVGPOOL:
	case OP_GLOBALAVGPOOL:
		sa_pool(s, i);
		break;
	case OP_BATCHNORM:
		sa_batchnorm(s, i);
		break;
	case OP_LAYERNORM:
	case OP_GROUPNORM:
		sa_norm(s, i);
		break;
	case OP_ADD:
	case OP_CONCAT:
		sa_merge(s, i);
		break;
	case OP_FLATTEN:
	case OP_IDENTITY:
		emit(s->e, "\t\t/* the input's values, in place */\n");
		break;
	case OP_EMBEDDING:
		sa_embedding(s, i);
		break;
	case OP_POSITIONAL:
		sa_positional(s, i);
		break;
	case OP_GRU:
		sa_gru(s, i);
		break;
	case OP_ATTENTION:
		sa_attention(s, i);
		break;
	case OP_TRANSPOSE:
		sa_transpose(s, i);
		break;
	default:
		sa_activation(s, i);
		break;
	}
	emit(s->e, "\t}\n");
}
