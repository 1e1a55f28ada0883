/* layer_patch.c: ensemble model patching (Chang et al.): the code that
 * gives a layer with an emp(k) or ecmp(k) posterior its parameters for one
 * pass, and hands their gradients back to the k components.
 *
 * A patched layer's tensors hold k copies ("components") of the layer's
 * usual tensors, one after the other (cg_add_tensor multiplies their size
 * by k).  The layer's own code (dense, conv2d, batchnorm) is unchanged: it
 * reads its parameters from a block pw_NAME of P floats (P: the size of
 * one copy of all its tensors) and writes their gradient and squared
 * per-example gradients into pg_NAME and pq_NAME, because cg_param_addr()
 * points it there.  Around it:
 *   forward   with rng, the mixing assignment is drawn (pz_NAME, one
 *             component index per parameter): EMP draws one component for
 *             the whole layer, eq. (5); ECMP one per element of every
 *             tensor, eq. (6); uniform mixing probabilities, once per pass
 *             (Algorithm 1: a forward pass samples Θ).  pw_NAME then
 *             gathers each parameter from its component.  Without rng,
 *             pw_NAME is the mean of the components (the mixture's mean).
 *   backward  each component's gradient is the layer's where that
 *             component was drawn and 0 elsewhere (with the mean: 1/k of
 *             it everywhere; squared per-example gradients 1/k²).
 * Workspace: four blocks of P floats independent of the batch.
 */
#include "cg.h"

/* Which nodes are patched, and P: the floats of one component. */
int cg_patched(const struct cg *cg, int node)
{
	enum family_id f = cg_family(cg, node);
	return f == FAMILY_EMP || f == FAMILY_ECMP;
}

static long patch_floats(const struct cg *cg, int node)
{
	const struct cg_node *c = &cg->nodes[node];
	long p = 0;
	int i;
	for (i = 0; i < c->ntensors; i++)
		p += cg->tensors[c->first_tensor + i].size / cg->g->nodes[node].family.k;
	return p;
}

/* The offset of tensor i of the node inside one component. */
long cg_patch_rel(const struct cg *cg, int node, int i)
{
	const struct cg_node *c = &cg->nodes[node];
	long rel = 0;
	int j;
	for (j = 0; j < i; j++)
		rel += cg->tensors[c->first_tensor + j].size / cg->g->nodes[node].family.k;
	return rel;
}

void cg_patch_plan(struct cg *cg, int node)
{
	cg->nodes[node].patch_off = cg_reserve_fixed(cg, 4 * patch_floats(cg, node));
}

void cg_patch_declare(struct cg *cg, int node)
{
	const char *name = cg_name(cg, node);
	long p = patch_floats(cg, node), off = cg->nodes[node].patch_off;
	emit(cg->e,
	     "\tbnn_real *const pw_%s = ws + %ldL * B + %ldL; /* [%ld] this pass's parameters */\n"
	     "\tbnn_real *const pg_%s = pw_%s + %ldL; /* their gradient */\n"
	     "\tbnn_real *const pq_%s = pw_%s + %ldL; /* their squared per-example gradients */\n"
	     "\tbnn_real *const pz_%s = pw_%s + %ldL; /* the component of each */\n",
	     name, cg->per_example, off, p, name, name, p, name, name, 2 * p, name, name, 3 * p);
}

void cg_patch_forward(struct cg *cg, int node)
{
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	int k = cg->g->nodes[node].family.k, i;
	emit(cg->e, "\tif (rng) {\n\t\tbnn_gen_patch_draw(rng, %d, %ldL, %d, pz_%s);\n", k,
	     patch_floats(cg, node), cg_family(cg, node) == FAMILY_ECMP, name);
	for (i = 0; i < c->ntensors; i++) {
		const struct cg_tensor *t = &cg->tensors[c->first_tensor + i];
		long rel = cg_patch_rel(cg, node, i);
		emit(cg->e,
		     "\t\tbnn_gen_patch_gather(%d, %ldL, w + %ld, pz_%s + %ld, pw_%s + %ld);\n", k,
		     t->size / k, t->offset, name, rel, name, rel);
	}
	emit(cg->e, "\t} else {\n");
	for (i = 0; i < c->ntensors; i++) {
		const struct cg_tensor *t = &cg->tensors[c->first_tensor + i];
		long rel = cg_patch_rel(cg, node, i);
		emit(cg->e, "\t\tbnn_gen_patch_mean(%d, %ldL, w + %ld, pw_%s + %ld);\n", k,
		     t->size / k, t->offset, name, rel);
	}
	emit(cg->e, "\t}\n");
}

void cg_patch_backward(struct cg *cg, int node)
{
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	int k = cg->g->nodes[node].family.k, i;
	for (i = 0; i < c->ntensors; i++) {
		const struct cg_tensor *t = &cg->tensors[c->first_tensor + i];
		long rel = cg_patch_rel(cg, node, i);
		emit(cg->e,
		     "\tbnn_gen_patch_scatter(%d, %ldL, rng ? pz_%s + %ld : NULL, pg_%s + %ld, grad + %ld, 1);\n"
		     "\tif (sqgrad)\n"
		     "\t\tbnn_gen_patch_scatter(%d, %ldL, rng ? pz_%s + %ld : NULL, pq_%s + %ld, sqgrad + %ld, 2);\n",
		     k, t->size / k, name, rel, name, rel, t->offset, k, t->size / k, name, rel,
		     name, rel, t->offset);
	}
}
