/* standalone_moments.c: the one-pass analytic predictive of the standalone
 * target (bnnc --standalone --analytic; docs/standalone.md, "The analytic
 * predictive").
 *
 * Instead of S Monte-Carlo samples, MODEL_predict_analytic() propagates
 * each unit's mean and variance through the network once (moment matching,
 * the units of a layer taken as independent Gaussians):
 *   dense            a = W·x + b with independent W, b and x of mean m and
 *                    variance v: E[a] = μ_W·m + μ_b and
 *                    Var[a] = μ_W²·v + σ_W²·(m² + v) + σ_b², exact for one
 *                    layer (point layers: σ = 0);
 *   relu, leaky_relu the closed-form moments of max(0, z) for
 *                    z ~ N(μ, s²) (Frey and Hinton 1999; Wu et al. 2019,
 *                    "Deterministic variational inference", eq. 10 and 11),
 *                    and leaky_relu(z) = (1 − a)·relu(z) + a·z, whose
 *                    covariance term is Cov(relu(z), z) = s²·Φ(μ/s)
 *                    (Stein's lemma);
 *   flatten, identity, concat  the input's moments;
 *   categorical      the probit approximation of the softmax (MacKay 1992,
 *                    eq. 5 for the sigmoid; its per-logit form as in
 *                    Daxberger et al. 2021, "Laplace Redux", eq. 17):
 *                    p_k ∝ exp(κ_k·μ_k), κ_k = 1/√(1 + π·s_k²/8);
 *   bernoulli        the same, p = sigmoid(κ·μ) (exactly MacKay's);
 *   gaussian         the output's mean, and its variance plus the
 *                    likelihood's σ².
 * The classification summary's expected entropy E[H(softmax(z))] is the
 * second-order (delta-method) expansion of the entropy around the mean
 * logits, H(q) + ½·Σ_k s_k²·∂²H/∂z_k²(μ), which is right as s → 0, the
 * regime of a trained mean-field posterior; the mutual information is
 * H[p̄] minus it, clamped at 0.
 *
 * The other ops and families have no closed form here; a model that uses
 * them is refused at the node ("analytic predictive: op 'tanh' not
 * supported"; a per_step dense layer, whose rows are T, is refused too).  The pass has its own workspace layout (a mean and, when it
 * is not identically 0, a variance per unit), sized by
 * MODEL_ANALYTIC_WORKSPACE_BYTES.  Its math goes through the file's
 * BNNS_* macros (standalone_math.c), so -DMODEL_NO_LIBM works as for the
 * Monte-Carlo predictive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "standalone.h"

/* The analytic pass's plan. */
struct sa_moments {
	long *mean;    /* per node: the offset of its means (floats), -1: none */
	long *var;     /* per node: that of its variances, -1: identically 0 */
	long in_off;   /* the standardised input */
	long prob_off; /* categorical: the probabilities p̄ and q (2·K) */
	long floats;
	int use_dotsq; /* Σ (w·w)·v of a random input: 1 by a point layer, 2 by
	                  a meanfield one (without σ in the header only) */
	int use_mvar;  /* Σ (μ·μ)·v + (σ·σ)·(m·m + v) */
	int use_relu;  /* bnns_relu_moments */
};

static long mo_take(struct sa_moments *mo, long floats)
{
	long off = mo->floats;
	mo->floats += floats;
	return off;
}

static int mo_meanfield(const struct sa *s, int i)
{
	return cg_family(&s->cg, i) == FAMILY_MEANFIELD;
}

/* ---- what qualifies ---------------------------------------------------------- */

int sa_moments_check(const struct sa *s, struct diag *d)
{
	const struct graph *g = s->g;
	int i, errors = 0;
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		enum family_id f = cg_family(&s->cg, i);
		if (!s->cg.nodes[i].code)
			continue;
		if (n->op == OP_DENSE && n->attrs.per_step) { /* T rows of one layer */
			diag_error(d, n->loc,
			           "analytic predictive: per_step dense layers not supported");
			errors++;
			continue;
		}
		switch (n->op) {
		case OP_DENSE:
		case OP_RELU:
		case OP_LEAKY_RELU:
		case OP_FLATTEN:
		case OP_IDENTITY:
		case OP_CONCAT:
			break;
		default:
			diag_error(d, n->loc, "analytic predictive: op '%s' not supported",
			           op_name(n->op));
			errors++;
			continue;
		}
		if (op_has_weights(n->op) && f != FAMILY_POINT && f != FAMILY_MEANFIELD) {
			diag_error(d, n->loc, "analytic predictive: family '%s' not supported",
			           family_name(f));
			errors++;
		}
	}
	if (errors)
		diag_note(d, diag_noloc,
		          "the analytic predictive covers dense layers (point or meanfield), relu, "
		          "leaky_relu, flatten, identity and concat");
	/* its closed forms are those of a Gaussian output (docs/standalone.md) */
	if (sa_regression(g) && (g->likelihood != LIKELIHOOD_GAUSSIAN || g->scale_node >= 0)) {
		diag_error(d, g->likelihood_loc,
		           "analytic predictive: the %s likelihood%s not supported",
		           likelihood_name(g->likelihood),
		           g->scale_node >= 0 ? " with a scale given by a node" : "");
		diag_note(
		        d, diag_noloc,
		        "its likelihoods are categorical, bernoulli and gaussian (fixed or learned "
		        "sigma); the Monte-Carlo predictive supports every likelihood");
		errors++;
	}
	return errors;
}

/* ---- the workspace ---------------------------------------------------------------- */

/* Node I's means and variances; whether its variance can be nonzero. */
static void mo_plan_node(struct sa *s, struct sa_moments *mo, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	long w = s->cg.nodes[i].width, in_var = mo->var[n->inputs[0]];
	int random = in_var >= 0, j;

	switch (n->op) {
	case OP_FLATTEN:
	case OP_IDENTITY:
		mo->mean[i] = mo->mean[n->inputs[0]];
		mo->var[i] = in_var;
		return;
	case OP_DENSE:
		s->needs |= SA_DOT;
		if (mo_meanfield(s, i)) {
			random = 1;
			if (in_var < 0)
				s->needs |= SA_DOT2;
			else
				mo->use_mvar = 1;
		}
		if (in_var >= 0)
			mo->use_dotsq |= mo_meanfield(s, i) ? 2 : 1;
		break;
	case OP_CONCAT:
		for (j = 1; j < n->ninputs; j++)
			random |= mo->var[n->inputs[j]] >= 0;
		break;
	default: /* relu, leaky_relu */
		if (random) {
			mo->use_relu = 1;
			s->needs |= SA_ERF | SA_EXP | SA_SQRT;
		}
		break;
	}
	mo->mean[i] = mo_take(mo, w);
	mo->var[i] = random ? mo_take(mo, w) : -1;
}

int sa_moments_plan(struct sa *s)
{
	const struct graph *g = s->g;
	struct sa_moments *mo = calloc(1, sizeof *mo);
	int i;
	if (!mo)
		return -1;
	mo->mean = malloc((size_t)g->nnodes * sizeof *mo->mean);
	mo->var = malloc((size_t)g->nnodes * sizeof *mo->var);
	s->mo = mo;
	if (!mo->mean || !mo->var)
		return -1;
	mo->in_off = mo_take(mo, s->cg.nodes[g->input].width);
	for (i = 0; i < g->nnodes; i++) {
		mo->mean[i] = mo->var[i] = -1;
		if (i == g->input)
			mo->mean[i] = mo->in_off;
		else if (s->cg.nodes[i].code)
			mo_plan_node(s, mo, i);
	}
	if (g->likelihood == LIKELIHOOD_CATEGORICAL)
		mo->prob_off = mo_take(mo, 2 * s->cg.nodes[g->output].width);
	if (g->likelihood != LIKELIHOOD_GAUSSIAN)
		s->needs |= SA_EXP | SA_LOG | SA_SQRT;
	else if (g->sigma_learned)
		s->needs |= SA_EXP;
	return 0;
}

void sa_moments_free(struct sa *s)
{
	if (!s->mo)
		return;
	free(s->mo->mean);
	free(s->mo->var);
	free(s->mo);
	s->mo = NULL;
}

long sa_moments_workspace_bytes(const struct sa *s)
{
	return 4 * (s->mo->floats > 0 ? s->mo->floats : 1);
}

/* ---- the header --------------------------------------------------------------------- */

void sa_moments_header(struct sa *s)
{
	const char *m = s->m, *u = s->up;
	emit(s->e,
	     "/* The workspace of %s_predict_analytic: %ld floats (each unit's mean and\n"
	     " * variance).  Aligned as the other's (%s_WORKSPACE_ALIGN). */\n"
	     "#define %s_ANALYTIC_WORKSPACE_BYTES %ldUL\n"
	     "\n"
	     "/*\n"
	     " * The analytic predictive of the n examples of x, in one deterministic\n"
	     " * pass: the mean and variance of every unit propagated through the\n"
	     " * network (moment matching; docs/standalone.md, \"The analytic\n"
	     " * predictive\"), the output's Gaussian turned into probabilities by the\n"
	     " * probit approximation, or into the predictive's mean and variance.\n"
	     " * out and summary as %s_predict_summary's (summary may be NULL).\n"
	     " * Returns 0, %s_EINVAL (x or out NULL, n < 0), %s_EWORKSPACE (ws NULL\n"
	     " * or ws_bytes < %s_ANALYTIC_WORKSPACE_BYTES) or %s_EALIGN.\n"
	     " */\n"
	     "int %s_predict_analytic(const float *x, long n, void *ws, size_t ws_bytes, float *out,\n"
	     "        float *summary);\n"
	     "\n",
	     m, s->mo->floats, u, u, sa_moments_workspace_bytes(s), m, u, u, u, u, m);
}

/* ---- the C file ------------------------------------------------------------------------- */

static void mo_write_relu(struct sa *s)
{
	emit(s->e,
	     "/* The mean and variance of (1 − a)·max(0, z) + a·z for z ~ N(mu, var)\n"
	     " * (a = 0: relu).  With s = √var, α = mu/s, Φ and φ the standard normal's\n"
	     " * distribution and density: E[max(0, z)] = mu·Φ(α) + s·φ(α),\n"
	     " * E[max(0, z)²] = (mu² + s²)·Φ(α) + mu·s·φ(α), Cov(max(0, z), z) = s²·Φ(α).\n"
	     " * Beyond |α| = 6, Φ is 0 or 1 to 1e-9.  In double: the variance is a\n"
	     " * difference of terms up to α² times larger. */\n"
	     "static void bnns_relu_moments(float mu, float var, float a, float *mean, float *vout)\n"
	     "{\n"
	     "\tdouble s, al, cdf = 0.0, pdf = 0.0, e, vr;\n"
	     "\tif (!(var > 0.0f)) {\n"
	     "\t\t*mean = mu > 0.0f ? mu : a * mu;\n"
	     "\t\t*vout = 0.0f;\n"
	     "\t\treturn;\n"
	     "\t}\n"
	     "\ts = (double)BNNS_SQRT(var);\n"
	     "\tal = (double)mu / s;\n"
	     "\tif (al > 6.0) {\n"
	     "\t\tcdf = 1.0;\n"
	     "\t} else if (al > -6.0) {\n"
	     "\t\tcdf = 0.5 * (1.0 + (double)BNNS_ERF((float)(al * 0x1.6a09e667f3bcdp-1)));\n"
	     "\t\tpdf = 0x1.9884533d43651p-2 * (double)BNNS_EXP((float)(-0.5 * al * al));\n"
	     "\t}\n"
	     "\te = (double)mu * cdf + s * pdf;\n"
	     "\tvr = ((double)mu * mu + (double)var) * cdf + (double)mu * s * pdf - e * e;\n"
	     "\tvr = vr > 0.0 ? vr : 0.0;\n"
	     "\t*mean = (float)((1.0 - a) * e + (double)a * mu);\n"
	     "\t*vout = (float)((1.0 - a) * (1.0 - a) * vr + (double)a * a * var +\n"
	     "\t                2.0 * a * (1.0 - a) * var * cdf);\n"
	     "}\n\n");
}

/* dense: the means as the mean pass computes them (bias, then the dot
 * product), then the variances. */
static void mo_write_dense(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct sa_moments *mo = s->mo;
	const struct cg_node *c = &s->cg.nodes[i];
	long k = n->attrs.in_features, units = n->attrs.units;
	long w = s->cg.tensors[c->first_tensor].offset, b = w + units * k;
	long xm = mo->mean[n->inputs[0]], xv = mo->var[n->inputs[0]];
	int mf = mo_meanfield(s, i);

	emit(s->e,
	     "\t\tlong o;\n"
	     "\t\tfor (o = 0; o < %ld; o++)\n"
	     "\t\t\tf[%ld + o] = ",
	     units, mo->mean[i]);
	if (n->attrs.bias)
		emit(s->e, "%s_w_params[%ld + o] + ", s->m, b);
	emit(s->e, "bnns_dot(%ld, %s_w_params + %ld + o * %ldL, f + %ld);\n", k, s->m, w, k, xm);
	if (mo->var[i] < 0)
		return;
	if (mf) {
		emit(s->e,
		     "#ifdef %s_W_SIGMA_COUNT\n"
		     "\t\tfor (o = 0; o < %ld; o++) /* μ_W²·v + σ_W²·(m² + v) + σ_b² */\n"
		     "\t\t\tf[%ld + o] = ",
		     s->up, units, mo->var[i]);
		if (n->attrs.bias)
			emit(s->e, "%s_w_sigma[%ld + o] * %s_w_sigma[%ld + o] + ", s->m, b, s->m,
			     b);
		if (xv < 0)
			emit(s->e, "bnns_dot2(%ld, %s_w_sigma + %ld + o * %ldL, f + %ld);\n", k,
			     s->m, w, k, xm);
		else
			emit(s->e,
			     "bnns_mvar(%ld, %s_w_params + %ld + o * %ldL, %s_w_sigma + %ld + o * "
			     "%ldL,\n\t\t\t                             f + %ld, f + %ld);\n",
			     k, s->m, w, k, s->m, w, k, xm, xv);
		emit(s->e, "#else /* no posterior in the header: σ = 0 */\n");
	}
	if (xv < 0)
		emit(s->e, "\t\tfor (o = 0; o < %ld; o++)\n\t\t\tf[%ld + o] = 0.0f;\n", units,
		     mo->var[i]);
	else
		emit(s->e,
		     "\t\tfor (o = 0; o < %ld; o++) /* μ_W²·v */\n"
		     "\t\t\tf[%ld + o] = bnns_dotsq(%ld, %s_w_params + %ld + o * %ldL, f + %ld);\n",
		     units, mo->var[i], k, s->m, w, k, xv);
	if (mf)
		emit(s->e, "#endif\n");
}

static void mo_write_activation(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct sa_moments *mo = s->mo;
	long xm = mo->mean[n->inputs[0]], xv = mo->var[n->inputs[0]];
	char slope[48];
	float a = n->op == OP_LEAKY_RELU ? (float)n->attrs.slope : 0.0f;
	if (a == 0)
		snprintf(slope, sizeof slope, "0.0f");
	else
		snprintf(slope, sizeof slope, "%af", (double)a);
	emit(s->e, "\t\tlong j;\n\t\tfor (j = 0; j < %ld; j++)\n", s->cg.nodes[i].width);
	if (xv < 0)
		emit(s->e, "\t\t\tf[%ld + j] = f[%ld + j] > 0.0f ? f[%ld + j] : %s * f[%ld + j];\n",
		     mo->mean[i], xm, xm, slope, xm);
	else
		emit(s->e,
		     "\t\t\tbnns_relu_moments(f[%ld + j], f[%ld + j], %s, f + %ld + j, f + %ld + j);\n",
		     xm, xv, slope, mo->mean[i], mo->var[i]);
}

static void mo_write_concat(struct sa *s, int i)
{
	const struct graph_node *n = &s->g->nodes[i];
	const struct sa_moments *mo = s->mo;
	long col = 0;
	int j;
	emit(s->e, "\t\tlong j;\n");
	for (j = 0; j < n->ninputs; j++) {
		int in = n->inputs[j];
		long k = s->cg.nodes[in].width;
		emit(s->e, "\t\tfor (j = 0; j < %ld; j++) {\n\t\t\tf[%ld + j] = f[%ld + j];\n", k,
		     mo->mean[i] + col, mo->mean[in]);
		if (mo->var[i] >= 0 && mo->var[in] >= 0)
			emit(s->e, "\t\t\tf[%ld + j] = f[%ld + j];\n", mo->var[i] + col,
			     mo->var[in]);
		else if (mo->var[i] >= 0)
			emit(s->e, "\t\t\tf[%ld + j] = 0.0f;\n", mo->var[i] + col);
		emit(s->e, "\t\t}\n");
		col += k;
	}
}

static void mo_write_moments(struct sa *s)
{
	const struct graph *g = s->g;
	int i;
	emit(s->e,
	     "/* The moments of every unit for the example in f + %ld (standardised):\n"
	     " * the outputs' means at f + %ld, their variances at f + %ld. */\n"
	     "static void bnns_moments(float *f)\n"
	     "{\n",
	     s->mo->in_off, s->mo->mean[g->output], s->mo->var[g->output]);
	for (i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		char shape[64];
		if (!s->cg.nodes[i].code)
			continue;
		graph_shape_str(n, shape, sizeof shape);
		emit(s->e, "\t{ /* %s = %s: %s */\n", n->name, op_name(n->op), shape);
		switch (n->op) {
		case OP_DENSE:
			mo_write_dense(s, i);
			break;
		case OP_CONCAT:
			mo_write_concat(s, i);
			break;
		case OP_FLATTEN:
		case OP_IDENTITY:
			emit(s->e, "\t\t/* the input's moments, in place */\n");
			break;
		default:
			mo_write_activation(s, i);
			break;
		}
		emit(s->e, "\t}\n");
	}
	emit(s->e, "}\n\n");
}

/* The output's variance of unit j, or 0 when it is identically 0. */
static void mo_out_var(const struct sa *s, char *buf, size_t size)
{
	long v = s->mo->var[s->g->output];
	if (v < 0)
		snprintf(buf, size, "0.0f");
	else
		snprintf(buf, size, "f[%ldL + j]", v);
}

/* Categorical: p̄ = softmax(κ∘μ) (the probit approximation), its entropy;
 * the expected entropy by the delta method around q = softmax(μ):
 * ∂²H/∂z_k² = −q_k(1 − 2q_k)(log q_k + H(q)) − q_k(1 − q_k). */
static void mo_write_categorical(struct sa *s)
{
	long k = s->cg.nodes[s->g->output].width, zm = s->mo->mean[s->g->output],
	     p = s->mo->prob_off;
	char zv[64];
	mo_out_var(s, zv, sizeof zv);
	emit(s->e,
	     "\t\t{\n"
	     "\t\t\tconst float *const z = f + %ldL;\n"
	     "\t\t\tfloat *const p = f + %ldL, *const q = f + %ldL;\n"
	     "\t\t\tfloat pmax, qmax, pn = 0.0f, qn = 0.0f, hp = 0.0f, hq = 0.0f, curv = 0.0f, eh;\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) /* κ·μ: π/8 = 0x1.921fb6p-2 */\n"
	     "\t\t\t\tp[j] = z[j] / BNNS_SQRT(1.0f + 0x1.921fb6p-2f * %s);\n"
	     "\t\t\tpmax = p[0];\n"
	     "\t\t\tqmax = z[0];\n"
	     "\t\t\tfor (j = 1; j < %ldL; j++) {\n"
	     "\t\t\t\tpmax = p[j] > pmax ? p[j] : pmax;\n"
	     "\t\t\t\tqmax = z[j] > qmax ? z[j] : qmax;\n"
	     "\t\t\t}\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tp[j] = BNNS_EXP(p[j] - pmax);\n"
	     "\t\t\t\tpn += p[j];\n"
	     "\t\t\t\tq[j] = BNNS_EXP(z[j] - qmax);\n"
	     "\t\t\t\tqn += q[j];\n"
	     "\t\t\t}\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tp[j] = p[j] / pn;\n"
	     "\t\t\t\tq[j] = q[j] / qn;\n"
	     "\t\t\t\tout[i * %ldL + j] = p[j];\n"
	     "\t\t\t\tif (p[j] > 0.0f)\n"
	     "\t\t\t\t\thp -= p[j] * BNNS_LOG(p[j]);\n"
	     "\t\t\t\tif (q[j] > 0.0f)\n"
	     "\t\t\t\t\thq -= q[j] * BNNS_LOG(q[j]);\n"
	     "\t\t\t}\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++)\n"
	     "\t\t\t\tif (q[j] > 0.0f)\n"
	     "\t\t\t\t\tcurv += %s * (-q[j] * (1.0f - 2.0f * q[j]) * (BNNS_LOG(q[j]) + hq) -\n"
	     "\t\t\t\t\t                q[j] * (1.0f - q[j]));\n"
	     "\t\t\teh = hq + 0.5f * curv;\n"
	     "\t\t\teh = eh > 0.0f ? eh : 0.0f;\n"
	     "\t\t\tif (summary) {\n"
	     "\t\t\t\tsummary[3 * i] = hp;\n"
	     "\t\t\t\tsummary[3 * i + 1] = eh;\n"
	     "\t\t\t\tsummary[3 * i + 2] = hp > eh ? hp - eh : 0.0f;\n"
	     "\t\t\t}\n"
	     "\t\t}\n",
	     zm, p, p + k, k, zv, k, k, k, k, k, zv);
}

/* Bernoulli: p = sigmoid(κ·μ) per label (MacKay 1992, eq. 5); the
 * expected binary entropy by the delta method around q = sigmoid(μ), with
 * H''(z) = −q(1 − q)(1 + z(1 − 2q)). */
static void mo_write_bernoulli(struct sa *s)
{
	long k = s->cg.nodes[s->g->output].width, zm = s->mo->mean[s->g->output];
	char zv[64];
	mo_out_var(s, zv, sizeof zv);
	emit(s->e,
	     "\t\t{\n"
	     "\t\t\tfloat hp = 0.0f, eh = 0.0f;\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tconst float mu = f[%ldL + j], v = %s;\n"
	     "\t\t\t\tconst float t = mu / BNNS_SQRT(1.0f + 0x1.921fb6p-2f * v);\n"
	     "\t\t\t\tconst float p = t >= 0.0f ? 1.0f / (1.0f + BNNS_EXP(-t))\n"
	     "\t\t\t\t                          : BNNS_EXP(t) / (1.0f + BNNS_EXP(t));\n"
	     "\t\t\t\tconst float q = mu >= 0.0f ? 1.0f / (1.0f + BNNS_EXP(-mu))\n"
	     "\t\t\t\t                           : BNNS_EXP(mu) / (1.0f + BNNS_EXP(mu));\n"
	     "\t\t\t\tfloat hq = 0.0f;\n"
	     "\t\t\t\tout[i * %ldL + j] = p;\n"
	     "\t\t\t\tif (p > 0.0f)\n"
	     "\t\t\t\t\thp -= p * BNNS_LOG(p);\n"
	     "\t\t\t\tif (p < 1.0f)\n"
	     "\t\t\t\t\thp -= (1.0f - p) * BNNS_LOG(1.0f - p);\n"
	     "\t\t\t\tif (q > 0.0f)\n"
	     "\t\t\t\t\thq -= q * BNNS_LOG(q);\n"
	     "\t\t\t\tif (q < 1.0f)\n"
	     "\t\t\t\t\thq -= (1.0f - q) * BNNS_LOG(1.0f - q);\n"
	     "\t\t\t\thq = hq - 0.5f * v * q * (1.0f - q) * (1.0f + mu * (1.0f - 2.0f * q));\n"
	     "\t\t\t\teh += hq > 0.0f ? hq : 0.0f;\n"
	     "\t\t\t}\n"
	     "\t\t\tif (summary) {\n"
	     "\t\t\t\tsummary[3 * i] = hp;\n"
	     "\t\t\t\tsummary[3 * i + 1] = eh;\n"
	     "\t\t\t\tsummary[3 * i + 2] = hp > eh ? hp - eh : 0.0f;\n"
	     "\t\t\t}\n"
	     "\t\t}\n",
	     k, zm, zv, k);
}

/* Gaussian: the output's moments, plus the likelihood's σ² (aleatoric). */
static void mo_write_gaussian(struct sa *s)
{
	long k = s->cg.nodes[s->g->output].width, zm = s->mo->mean[s->g->output];
	char zv[64], noise[200], mean[40];
	mo_out_var(s, zv, sizeof zv);
	sa_noise_variance(s, noise, sizeof noise);
	emit(s->e,
	     "\t\t{\n"
	     "\t\t\tdouble tot = 0.0, ale = 0.0, epi = 0.0;\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tconst double a = (double)%s, e = (double)%s;\n",
	     k, noise, zv);
	snprintf(mean, sizeof mean, "f[%ldL + j]", zm);
	sa_emit_split(s, k, mean);
}

static void mo_write_predict(struct sa *s)
{
	const char *m = s->m, *u = s->up;
	emit(s->e,
	     "int %s_predict_analytic(const float *x, long n, void *ws, size_t ws_bytes, float *out,\n"
	     "        float *summary)\n"
	     "{\n"
	     "\tfloat *const f = (float *)ws;\n"
	     "\tlong i, j;\n"
	     "\n"
	     "\tif (!x || !out || n < 0)\n"
	     "\t\treturn %s_EINVAL;\n"
	     "\tif (!ws || ws_bytes < %s_ANALYTIC_WORKSPACE_BYTES)\n"
	     "\t\treturn %s_EWORKSPACE;\n"
	     "\tif ((uintptr_t)ws %% %s_WORKSPACE_ALIGN != 0)\n"
	     "\t\treturn %s_EALIGN;\n"
	     "\tfor (i = 0; i < n; i++) {\n",
	     m, u, u, u, u, u);
	emit(s->e,
	     "\t\tconst float *const xi = x + i * %s_INPUTS;\n"
	     "\t\tfloat *const xs = f + %ldL;\n",
	     u, s->mo->in_off);
	sa_emit_standardize(s);
	emit(s->e, "\t\tbnns_moments(f);\n");
	switch (s->g->likelihood) {
	case LIKELIHOOD_CATEGORICAL:
		mo_write_categorical(s);
		break;
	case LIKELIHOOD_BERNOULLI:
		mo_write_bernoulli(s);
		break;
	default:
		mo_write_gaussian(s);
		break;
	}
	emit(s->e, "\t}\n\treturn 0;\n}\n");
}

void sa_moments_write(struct sa *s)
{
	const struct sa_moments *mo = s->mo;
	emit(s->e, "/* ---- the analytic predictive (bnnc --analytic) ---- */\n\n");
	/* It reads the weights as f32 arrays at their parameter-vector offsets:
	 * a compressed header (export --storage bf16|int8) is refused here. */
	emit(s->e,
	     "#if %s_W_STORAGE != 0\n"
	     "#error \"%s_predict_analytic reads f32 weights: export the header with --storage f32, "
	     "or generate the file without --analytic\"\n"
	     "#endif\n\n",
	     s->up, s->m);
	if (mo->use_mvar) { /* under σ only: a header without it leaves it unused */
		emit(s->e, "#ifdef %s_W_SIGMA_COUNT\n", s->up);
		sa_emit_sum(s, "bnns_mvar",
		            "const float *w, const float *sg, const float *m, const float *v",
		            "(w[J] * w[J]) * v[J] + (sg[J] * sg[J]) * (m[J] * m[J] + v[J])");
		emit(s->e, "#endif\n\n");
	}
	if (mo->use_dotsq == 2) /* only where the header has no σ */
		emit(s->e, "#ifndef %s_W_SIGMA_COUNT\n", s->up);
	if (mo->use_dotsq)
		sa_emit_sum(s, "bnns_dotsq", "const float *w, const float *v",
		            "(w[J] * w[J]) * v[J]");
	if (mo->use_dotsq == 2)
		emit(s->e, "#endif\n\n");
	if (mo->use_relu)
		mo_write_relu(s);
	mo_write_moments(s);
	mo_write_predict(s);
}
