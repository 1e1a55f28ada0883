/*
 * gen_norm.c: TAP tests of the code bnnc generates for layernorm and
 * groupnorm (gen/layer_norm.c, bnn_gen/norm.h).  Their gradients and
 * squared per-example gradients are checked by t/gen_gradcheck.c (gc_ln,
 * gc_gn); this test checks what those checks cannot see, the definition
 * of the ops, and that every optimizer trains them:
 *   1. the outputs of t/models/nm_lnref.bnn (layernorm over all 18 values
 *      of a [3, 2, 3] example, a scale and a shift per value) and
 *      nm_gnref.bnn (groupnorm of [4, 2, 3] in 2 groups of 2 channels, a
 *      scale and a shift per channel) against plain loops written from
 *      the documented layout, in double precision, to 1e-12;
 *   2. that examples are independent (no batch statistics): a batch pass
 *      gives each example's outputs, bit for bit, as a pass of that
 *      example alone does, and train = 0 gives the bits of train = 1;
 *   3. the tensors of the trained models: layernorm's scale and shift
 *      have the node's shape, groupnorm's one value per channel, with
 *      batchnorm's roles and initialisation (γ = 1, β = 0);
 *   4. end-to-end training on the three blobs: adam on the point model
 *      nm_pt, ivon, vogn and bbb on nm_mf (meanfield on every layer but
 *      one point layernorm), past 0.9 test accuracy (chance 1/3), at the mean
 *      and with 16 MC samples, every σ finite and positive, the norms'
 *      scales moved from 1, and the same seed giving the same bits.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

/* The generated headers declare NAME_pass_f64 only in double builds; the
 * float models come from t/libnmfloat.a. */
#ifndef BNN_GEN_DOUBLE
#define BNN_GEN_DOUBLE 1
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blobs.h"
#include "bnn.h"
#include "nm_gnref.h"
#include "nm_lnref.h"
#include "nm_mf.h"
#include "nm_pt.h"
#include "tap.h"

#define NM_BATCH 3
#define NM_TOL   1e-12 /* generated pass vs plain loops, relative to 1 + |y| */

typedef double nm_pass_fn(const double *w, const double *x, const double *y, long batch, double *ws,
                          double *out, double *grad, double *sqgrad, bnn_rng *rng,
                          const double *sigma, double *grad_sigma, double *stats, int train);

/* A reference model: c channels of hw values in `groups` groups, eps, and
 * whether γ and β are per value (layernorm) or per channel (groupnorm). */
struct nm_ref {
	const char *name;
	nm_pass_fn *pass;
	size_t (*workspace)(long batch);
	long c, hw, groups, nparams;
	double eps;
	int per_value;
};

static const struct nm_ref nm_refs[] = {
	{ "nm_lnref", nm_lnref_pass_f64, nm_lnref_workspace_floats, 3, 6, 1, NM_LNREF_NPARAMS, 0.1,
	  1 },
	{ "nm_gnref", nm_gnref_pass_f64, nm_gnref_workspace_floats, 4, 6, 2, NM_GNREF_NPARAMS, 0.1,
	  0 },
};

/* splitmix64, so that the data do not depend on libbnn's generator. */
static double nm_uniform(uint64_t *s, double lo, double hi)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static double *nm_alloc(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof *p);
	if (!p)
		tap_bail_out("out of memory (%zu doubles)", n);
	return p;
}

/* Layernorm or groupnorm of one example x by plain loops (Wu & He 2018,
 * eqs. 1-3): per group the mean, the biased variance, then
 * y = γ·(x − μ)/√(v + ε) + β with γ, β at w and w + cells. */
static void nm_reference(const struct nm_ref *r, const double *w, const double *x, double *y)
{
	const long n = r->c * r->hw / r->groups, cells = r->per_value ? r->c * r->hw : r->c;
	long g, j;

	for (g = 0; g < r->groups; g++) {
		double mu = 0, v = 0;
		for (j = g * n; j < (g + 1) * n; j++)
			mu += x[j] / (double)n;
		for (j = g * n; j < (g + 1) * n; j++)
			v += (x[j] - mu) * (x[j] - mu) / (double)n;
		for (j = g * n; j < (g + 1) * n; j++) {
			long cell = r->per_value ? j : j / r->hw;
			y[j] = w[cell] * (x[j] - mu) / sqrt(v + r->eps) + w[cells + cell];
		}
	}
}

static void test_reference(const struct nm_ref *r)
{
	const long values = r->c * r->hw;
	double *w = nm_alloc((size_t)r->nparams), *x = nm_alloc((size_t)(NM_BATCH * values));
	double *ws = nm_alloc(r->workspace(NM_BATCH)), *out = nm_alloc((size_t)(NM_BATCH * values));
	double *again = nm_alloc((size_t)(NM_BATCH * values)), *one = nm_alloc((size_t)values);
	double *want = nm_alloc((size_t)values), worst = 0;
	uint64_t seed = 42;
	long e, j;
	int same = 1;

	for (j = 0; j < r->nparams; j++)
		w[j] = nm_uniform(&seed, -1.5, 1.5);
	/* an offset and a spread per example, so that the statistics matter */
	for (e = 0; e < NM_BATCH; e++) {
		double off = nm_uniform(&seed, -3, 3), sd = nm_uniform(&seed, 0.2, 4);
		for (j = 0; j < values; j++)
			x[e * values + j] = off + sd * nm_uniform(&seed, -1, 1);
	}
	r->pass(w, x, NULL, NM_BATCH, ws, out, NULL, NULL, NULL, NULL, NULL, NULL, 1);
	for (e = 0; e < NM_BATCH; e++) {
		nm_reference(r, w, x + e * values, want);
		for (j = 0; j < values; j++) {
			double d = fabs(out[e * values + j] - want[j]) / (1 + fabs(want[j]));
			worst = d > worst ? d : worst;
		}
		r->pass(w, x + e * values, NULL, 1, ws, one, NULL, NULL, NULL, NULL, NULL, NULL, 1);
		same = same && memcmp(one, out + e * values, (size_t)values * sizeof *one) == 0;
	}
	ok(worst <= NM_TOL, "%s: outputs match plain loops (worst relative difference %.3g)",
	   r->name, worst);
	ok(same, "%s: each example alone gives the bits it gets in the batch", r->name);
	r->pass(w, x, NULL, NM_BATCH, ws, again, NULL, NULL, NULL, NULL, NULL, NULL, 0);
	ok(memcmp(again, out, (size_t)(NM_BATCH * values) * sizeof *out) == 0,
	   "%s: train = 0 gives the bits of train = 1 (no running statistics)", r->name);
	free(w);
	free(x);
	free(ws);
	free(out);
	free(again);
	free(one);
	free(want);
}

/* The tensor of model m called name, or bail out. */
static const bnn_tensor *nm_tensor(const bnn_model *m, const char *name)
{
	int i;
	for (i = 0; i < m->ntensors; i++)
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	tap_bail_out("%s has no tensor %s", m->name, name);
	return NULL;
}

static void test_tensors(void)
{
	const bnn_model *m = &nm_pt_model;
	const bnn_tensor *gs = nm_tensor(m, "g_groupnorm.scale");
	const bnn_tensor *gb = nm_tensor(m, "g_groupnorm.shift");
	const bnn_tensor *ls = nm_tensor(m, "h_layernorm.scale");
	const bnn_tensor *lb = nm_tensor(m, "h_layernorm.shift");
	bnn_state st;
	bnn_err err;
	long j;
	int init = 1;

	is_int(bnn_model_check(m, &err), BNN_OK, "nm_pt's descriptor checks");
	ok(gs->rank == 1 && gs->shape[0] == 4 && gs->size == 4,
	   "groupnorm of 4 channels: a scale per channel");
	ok(ls->rank == 1 && ls->shape[0] == 8 && ls->size == 8,
	   "layernorm of 8 features: a scale per feature");
	ok(gs->role == BNN_ROLE_SCALE && ls->role == BNN_ROLE_SCALE && gb->role == BNN_ROLE_SHIFT &&
	           lb->role == BNN_ROLE_SHIFT,
	   "their scales and shifts have batchnorm's roles");
	is_int(m->nstats, 0, "no running statistics");
	bnn_state_init(&st, m, 1, &err);
	for (j = 0; j < gs->size; j++)
		init = init && st.params[gs->offset + j] == 1 && st.params[gb->offset + j] == 0;
	for (j = 0; j < ls->size; j++)
		init = init && st.params[ls->offset + j] == 1 && st.params[lb->offset + j] == 0;
	ok(init, "scales start at 1, shifts at 0");
	bnn_state_free(&st);
	ls = nm_tensor(m, "k.scale");
	ok(ls->rank == 3 && ls->shape[0] == 4 && ls->shape[1] == 2 && ls->shape[2] == 2 &&
	           ls->size == 16,
	   "layernorm of a [4, 2, 2] map: a scale of that shape");
	ls = nm_tensor(&nm_mf_model, "h_layernorm.scale");
	ok(ls->size == 8 && nm_mf_model.layers[ls->layer].caps == BNN_CAP_SIGMA,
	   "nm_mf: the annotated layernorm is meanfield");
}

/* Whether training moved some scale of the norms away from 1. */
static int nm_scales_moved(const bnn_state *st)
{
	const char *names[] = { "g_groupnorm.scale", "h_layernorm.scale" };
	int i, moved = 1;
	for (i = 0; i < 2; i++) {
		const bnn_tensor *t = nm_tensor(st->model, names[i]);
		long j;
		int any = 0;
		for (j = 0; j < t->size; j++)
			any = any || st->params[t->offset + j] != 1.0f;
		moved = moved && any;
	}
	return moved;
}

static void train_one(const bnn_model *m, int optimizer, double lr, long epochs,
                      const bnn_dataset *train, const bnn_dataset *test)
{
	const char *name = bnn_optimizer_name(optimizer);
	bnn_train_options o = bnn_train_defaults();
	bnn_state a, b;
	bnn_err err;
	double acc;
	int rc;

	o.optimizer = optimizer;
	o.epochs = epochs;
	o.batch = 16;
	o.schedule.lr = lr;
	bnn_state_init(&a, m, 1, &err);
	rc = bnn_train(&a, &(bnn_train_io){ .train = train }, &o, &err);
	is_int(rc, BNN_OK, "%s trains %s%s%s", name, m->name, rc ? ": " : "",
	       rc ? err.message : "");
	acc = blobs_accuracy(&a, test, 0);
	ok(acc > 0.9, "%s, %s: test accuracy at the mean %.3f > 0.9 (chance 0.33)", name, m->name,
	   acc);
	ok(nm_scales_moved(&a), "%s, %s: the scales of groupnorm and layernorm are learned", name,
	   m->name);
	if (a.sigma) {
		acc = blobs_accuracy(&a, test, 16);
		ok(acc > 0.9, "%s, %s: test accuracy of 16 MC samples %.3f > 0.9", name, m->name,
		   acc);
		ok(blobs_sigma_by_family(&a),
		   "%s, %s: every meanfield parameter has a finite σ > 0, the point ones σ = 0",
		   name, m->name);
	}
	bnn_state_init(&b, m, 1, &err);
	bnn_train(&b, &(bnn_train_io){ .train = train }, &o, &err);
	ok(blobs_same_floats(a.params, b.params, m->nparams) &&
	           blobs_same_floats(a.sigma, b.sigma, m->nparams),
	   "%s, %s: the same seed trains to identical bits", name, m->name);
	bnn_state_free(&b);
	bnn_state_free(&a);
}

static void test_training(void)
{
	bnn_dataset train, test;

	blobs_make(&train, 300, 11);
	blobs_make(&test, 150, 12);
	train_one(&nm_pt_model, BNN_OPT_ADAM, 0.01, 20, &train, &test);
	train_one(&nm_mf_model, BNN_OPT_IVON, 0.2, 20, &train, &test);
	train_one(&nm_mf_model, BNN_OPT_VOGN, 0.01, 20, &train, &test);
	train_one(&nm_mf_model, BNN_OPT_BBB, 0.01, 30, &train, &test);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof nm_refs / sizeof nm_refs[0]; i++)
		test_reference(&nm_refs[i]);
	test_tensors();
	test_training();
	return tap_done();
}
