/* layer_embedding.c: code for embedding layers (bnn_gen/embedding.h), the
 * rows of a vocab × dim table picked by a sequence of T integer ids, with
 * a point, meanfield or dropout(p) posterior.
 *
 * Parameter: NAME.weight, [vocab, dim], Glorot-uniform with fan-in and
 * fan-out dim (entries of variance 1/dim: a row has about unit norm).  Its
 * role is a weight's, so the prior and weight decay apply to it.  The
 * backward kernel needs vocab + T·dim floats of fixed workspace (em_NAME):
 * the marks of the rows an example uses and its sums by row, from which it
 * writes the gradient and the squared per-example gradients of the rows
 * used alone.  The ids have no delta.
 *
 * meanfield: like layernorm, the layer gathers rows of the weights in w,
 * as the runtime's samplers give them; it ignores sigma.
 *
 * dropout(p): when rng is given, each output row (one position of one
 * example) is dropped with probability p and the others scaled by
 * 1/(1 − p), a mask of T values per example (m_NAME) drawn in the noise
 * loop, afresh for every pass and so for every MC sample.  Dropping whole
 * embedded vectors rather than single features is Gal and Ghahramani's
 * embedding dropout (2016, "A Theoretically Grounded Application of
 * Dropout in Recurrent Neural Networks", sec. 4), drawn per position here
 * rather than per word type: a repeated id may be kept at one position and
 * dropped at another.  The backward pass masks the delta (in place) before
 * its sums.
 */
#include "bnn_gen/embedding.h"
#include "bnn_model.h"
#include "cg.h"

static void em_sizes(const struct cg *cg, int node, long *t, long *vocab, long *dim)
{
	const struct graph_node *n = &cg->g->nodes[node];
	*t = n->shape[0];
	*vocab = n->attrs.vocab;
	*dim = n->shape[1];
}

static int em_params(struct cg *cg, int node)
{
	long t, vocab, dim;
	long shape[4] = { 0, 0, 0, 0 };
	em_sizes(cg, node, &t, &vocab, &dim);
	shape[0] = vocab;
	shape[1] = dim;
	return cg_add_tensor(cg, node, "weight", BNN_ROLE_WEIGHT, 2, shape, dim, dim,
	                     BNN_INIT_GLOROT_UNIFORM) < 0
	               ? -1
	               : 0;
}

static int em_dropout(const struct cg *cg, int node)
{
	return cg_family(cg, node) == FAMILY_DROPOUT;
}

static void em_plan(struct cg *cg, int node)
{
	long t, vocab, dim;
	em_sizes(cg, node, &t, &vocab, &dim);
	cg->nodes[node].fixed_off = cg_reserve_fixed(cg, bnn_gen_embedding_floats(t, vocab, dim));
	if (!em_dropout(cg, node))
		return;
	cg->nodes[node].noise_off = cg_reserve(cg, t);
	cg->noise_rng = 1;
}

static void em_declare(struct cg *cg, int node)
{
	const char *name = cg_name(cg, node);
	long t, vocab, dim;
	em_sizes(cg, node, &t, &vocab, &dim);
	emit(cg->e,
	     "\tbnn_real *const em_%s = ws + %ldL * B + %ldL; /* [%ld + %ld] marks, sums */\n",
	     name, cg->per_example, cg->nodes[node].fixed_off, vocab, t * dim);
	if (em_dropout(cg, node))
		emit(cg->e,
		     "\tbnn_real *const m_%s = ws + %ldL * B; /* [B, %ld] row mask: 0 or 1/(1 - p) */\n",
		     name, cg->nodes[node].noise_off, t);
}

static void em_noise(struct cg *cg, int node)
{
	long t, vocab, dim;
	char p[40];
	if (!em_dropout(cg, node))
		return;
	em_sizes(cg, node, &t, &vocab, &dim);
	emit_double_str(cg->g->nodes[node].family.p, p, sizeof p);
	emit(cg->e, "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, m_%s + e * %ldL);\n", t, p,
	     cg_name(cg, node), t);
}

/* With dropout and rng: the rows of the block PREFIX_NAME times the mask. */
static void em_drop_rows(struct cg *cg, int node, const char *prefix)
{
	const char *name = cg_name(cg, node);
	long t, vocab, dim;
	if (!em_dropout(cg, node))
		return;
	em_sizes(cg, node, &t, &vocab, &dim);
	emit(cg->e, "\tif (rng)\n\t\tbnn_gen_embedding_drop_rows(B * %ldL, %ld, m_%s, %s_%s);\n", t,
	     dim, name, prefix, name);
}

static void em_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long t, vocab, dim;
	char w[64], b[64];
	em_sizes(cg, node, &t, &vocab, &dim);
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	emit(cg->e, "\tbnn_gen_embedding_forward(B, %ld, %ld, %ld, a_%s, %s, a_%s);\n", t, vocab,
	     dim, cg_name(cg, n->inputs[0]), w, cg_name(cg, node));
	em_drop_rows(cg, node, "a");
}

static void em_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	long t, vocab, dim;
	char g[64], b[64], q[96], qb[96];
	em_sizes(cg, node, &t, &vocab, &dim);
	cg_param_addr(cg, node, "grad", 0, g, b, sizeof g);
	cg_param_addr(cg, node, "sqgrad", 1, q, qb, sizeof q);
	em_drop_rows(cg, node, "d");
	emit(cg->e,
	     "\tbnn_gen_embedding_backward(B, %ld, %ld, %ld, a_%s, d_%s, %s,\n"
	     "\t                           %s, em_%s);\n",
	     t, vocab, dim, cg_name(cg, n->inputs[0]), name, g, q, name);
}

const struct cg_layer cg_layer_embedding = {
	.params = em_params,
	.plan = em_plan,
	.declare = em_declare,
	.noise = em_noise,
	.forward = em_forward,
	.backward = em_backward,
};
