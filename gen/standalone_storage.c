/* standalone_storage.c: how the standalone inference reads the weights
 * header's arrays, for every storage of `MODEL export --storage`
 * (docs/standalone.md, "Storage").
 *
 * The storage is a property of the data: the exporter writes it into the
 * header (MODEL_W_STORAGE: 0 f32, 1 bf16, 2 int8), and the one C file bnnc
 * writes for a model selects its reading code by #if on it, so the same
 * model text still gives the same C file and no test happens at run time.
 * bf16 and int8 compress the weight matrices and kernels (tensors of role
 * BNN_ROLE_WEIGHT stored once: those of dense, conv2d, conv1d, gru and
 * attention layers and embedding tables, of point, meanfield and dropout
 * layers); everything else stays f32.  The header then splits
 * its params and sigma sections: MODEL_w_params_q holds the compressed
 * tensors in order (bf16 as uint16_t, or int8_t with one float scale per
 * output row in MODEL_w_params_scale), MODEL_w_params the others in order,
 * and the same for sigma (bf16 under both storages).  So every read of
 * the header goes through one of these macros, which this file defines:
 *   BNNS_P(off, kept)     the offset of an f32 value: off in the
 *                         checkpoint's layout, kept in the split one;
 *   BNNS_WT(off, q)       a compressed tensor's first value, as bnns_wt
 *                         (float, uint16_t or int8_t);
 *   BNNS_WV(v)            one of its values as a float (without the scale);
 *   BNNS_SCALED(v, row)   v times the int8 scale of the row (else v);
 *   BNNS_DOT(n, w, x)     a row's dot product with x (bnns_dot and its
 *                         bf16 and int8 versions, which read the values as
 *                         stored: the int8 one sums q·x, the scale applied
 *                         once per output by BNNS_SCALED);
 *   BNNS_ST, BNNS_SV, BNNS_DOT2   the same for σ (bnns_st: float or
 *                         uint16_t).
 * whvi, emp and ecmp layers read the header directly in its f32 layout:
 * the exporter refuses to compress them, and the C file stops at #error
 * if it is given such a header anyway.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bnn.h"
#include "ops.h"
#include "standalone.h"

/* Whether tensor T is compressed by bf16 and int8 (the exporter's
 * cli_export_compressed in runtime/cli/cli_export.c is the same rule). */
int sa_compressed(const struct sa *s, int t)
{
	return s->cg.tensors[t].role == BNN_ROLE_WEIGHT && s->cg.tensors[t].components == 1;
}

/* The first node whose parameters storage cannot compress, or -1. */
static int sa_refused_node(const struct sa *s)
{
	int t;
	for (t = 0; t < s->cg.ntensors; t++) {
		const struct cg_tensor *c = &s->cg.tensors[t];
		if (c->node >= 0 && (c->components > 1 || c->role >= BNN_ROLE_WHVI_S1))
			return c->node;
	}
	return -1;
}

int sa_storage_plan(struct sa *s)
{
	long q = 0, kept = 0, rows = 0;
	int t;
	s->soff = calloc((size_t)s->cg.ntensors + 1, sizeof *s->soff);
	s->srow = calloc((size_t)s->cg.ntensors + 1, sizeof *s->srow);
	if (!s->soff || !s->srow)
		return -1;
	for (t = 0; t < s->cg.ntensors; t++) {
		const struct cg_tensor *c = &s->cg.tensors[t];
		if (sa_compressed(s, t)) {
			s->soff[t] = q;
			s->srow[t] = rows;
			q += c->size;
			rows += c->shape[0];
			if (c->node >= 0 && cg_family(&s->cg, c->node) == FAMILY_MEANFIELD)
				s->q_sigma = 1;
		} else {
			s->soff[t] = kept;
			kept += c->size;
		}
	}
	s->nq = q;
	s->nrows = rows;
	s->refused = sa_refused_node(s);
	return 0;
}

void sa_kept(const struct sa *s, int t, long rel, char *buf, size_t size)
{
	snprintf(buf, size, "BNNS_P(%ld, %ld)", s->cg.tensors[t].offset + rel, s->soff[t] + rel);
}

/* The definitions of the reading macros for the three storages. */
static void sa_write_storage_macros(struct sa *s)
{
	const char *m = s->m;
	emit(s->e,
	     "#if %s_W_STORAGE == 0\n"
	     "#define BNNS_P(off, kept) (off)\n"
	     "typedef float bnns_wt;\n"
	     "typedef float bnns_st;\n"
	     "#define BNNS_WT(off, q) (%s_w_params + (off))\n"
	     "#define BNNS_WV(v) (v)\n"
	     "#define BNNS_SCALED(v, row) (v)\n"
	     "#define BNNS_DOT bnns_dot\n"
	     "#define BNNS_ST(off, q) (%s_w_sigma + (off))\n"
	     "#define BNNS_SV(v) (v)\n"
	     "#define BNNS_DOT2 bnns_dot2\n"
	     "#else\n"
	     "#define BNNS_P(off, kept) (kept)\n"
	     "#define BNNS_WT(off, q) (%s_w_params_q + (q))\n"
	     "typedef uint16_t bnns_st;\n"
	     "#define BNNS_ST(off, q) (%s_w_sigma_q + (q))\n"
	     "#define BNNS_SV(v) bnns_bf16(v)\n"
	     "#define BNNS_DOT2 bnns_dot2_bf16\n"
	     "#endif\n"
	     "#if %s_W_STORAGE == 1\n"
	     "typedef uint16_t bnns_wt;\n"
	     "#define BNNS_WV(v) bnns_bf16(v)\n"
	     "#define BNNS_SCALED(v, row) (v)\n"
	     "#define BNNS_DOT bnns_dot_bf16\n"
	     "#elif %s_W_STORAGE == 2\n"
	     "typedef int8_t bnns_wt;\n"
	     "#define BNNS_WV(v) ((float)(v))\n"
	     "#define BNNS_SCALED(v, row) ((v) * %s_w_params_scale[row])\n"
	     "#define BNNS_DOT bnns_dot_q8\n"
	     "#endif\n\n",
	     s->up, m, m, m, m, s->up, s->up, m);
}

/* The header's storage, and its counts in the split layout. */
static void sa_write_storage_checks(struct sa *s)
{
	const char *m = s->m, *u = s->up;
	emit(s->e,
	     "/* How the header stores the weight matrices and kernels: 0 f32, 1 bf16,\n"
	     " * 2 int8 (`%s export --storage`); the reading code is chosen here. */\n"
	     "#ifndef %s_W_STORAGE\n"
	     "#define %s_W_STORAGE 0\n"
	     "#endif\n"
	     "#if %s_W_STORAGE < 0 || %s_W_STORAGE > 2\n"
	     "#error \"%s_W_STORAGE is not 0 (f32), 1 (bf16) or 2 (int8)\"\n"
	     "#endif\n",
	     m, u, u, u, u, u);
	if (s->refused >= 0)
		emit(s->e,
		     "#if %s_W_STORAGE != 0\n"
		     "#error \"layer '%s' is %s: its weights header must be exported with --storage f32\"\n"
		     "#endif\n",
		     u, s->g->nodes[s->refused].name, family_name(cg_family(&s->cg, s->refused)));
	emit(s->e,
	     "#if %s_W_STORAGE != 0\n"
	     "typedef char %s_weights_q_count_differs\n"
	     "        [%s_W_PARAMS_Q_COUNT == %ldL && %s_W_PARAMS_F32_COUNT == %ldL ? 1 : -1];\n"
	     "#ifdef %s_W_SIGMA_COUNT\n"
	     "typedef char %s_weights_sigma_q_count_differs\n"
	     "        [%s_W_SIGMA_Q_COUNT == %ldL && %s_W_SIGMA_F32_COUNT == %ldL ? 1 : -1];\n"
	     "#endif\n"
	     "#endif\n"
	     "#if %s_W_STORAGE == 2\n"
	     "typedef char %s_weights_scale_count_differs[%s_W_PARAMS_SCALE_COUNT == %ldL ? 1 : -1];\n"
	     "#endif\n\n",
	     u, m, u, s->nq, u, s->cg.nparams - s->nq, u, m, u, s->nq, u, s->cg.nparams - s->nq, u,
	     m, u, s->nrows);
}

/* bnns_NAME(n, w, x): the sum over a row of PRE w[j] POST · x[j] (squared
 * when SQUARE), in bnns_dot's order (eight partial sums, added pairwise,
 * then the rest), so that a bf16 header gives the bits of an f32 header
 * holding the same values. */
static void sa_write_dot_fn(struct sa *s, const char *name, const char *wtype, const char *pre,
                            const char *post, int square)
{
	int l;
	emit(s->e,
	     "static float bnns_%s(long n, const %s *w, const float *x)\n"
	     "{\n"
	     "\tfloat p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f, p4 = 0.0f, p5 = 0.0f,\n"
	     "\t      p6 = 0.0f, p7 = 0.0f, sum;\n"
	     "\tconst long whole = n - n %% 8;\n"
	     "\tlong j;\n"
	     "\tfor (j = 0; j < whole; j += 8) {\n",
	     name, wtype);
	for (l = 0; l < 8; l++) {
		if (square)
			emit(s->e,
			     "\t\tp%d += (%sw[j + %d]%s * x[j + %d]) * (%sw[j + %d]%s * x[j + %d]);\n",
			     l, pre, l, post, l, pre, l, post, l);
		else
			emit(s->e, "\t\tp%d += %sw[j + %d]%s * x[j + %d];\n", l, pre, l, post, l);
	}
	emit(s->e, "\t}\n"
	           "\tsum = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));\n"
	           "\tfor (j = whole; j < n; j++)\n");
	if (square)
		emit(s->e, "\t\tsum += (%sw[j]%s * x[j]) * (%sw[j]%s * x[j]);\n", pre, post, pre,
		     post);
	else
		emit(s->e, "\t\tsum += %sw[j]%s * x[j];\n", pre, post);
	emit(s->e, "\treturn sum;\n}\n");
}

void sa_write_storage(struct sa *s)
{
	const char *u = s->up;
	sa_write_storage_checks(s);
	if (s->nq == 0) {
		emit(s->e, "#define BNNS_P(off, kept) (%s_W_STORAGE == 0 ? (off) : (kept))\n\n", u);
		return;
	}
	sa_write_storage_macros(s);
	/* bnns_bf16: the bf16 values (1), and int8's σ when the header has it */
	emit(s->e, "#if %s_W_STORAGE == 1", u);
	if (s->q_sigma)
		emit(s->e, " || (%s_W_STORAGE == 2 && defined(%s_W_SIGMA_COUNT))", u, u);
	emit(s->e, "\n"
	           "/* A bf16 value: the upper half of a float's bits (integer shifts: the\n"
	           " * same on every byte order). */\n"
	           "static float bnns_bf16(uint16_t h)\n"
	           "{\n"
	           "\tunion {\n"
	           "\t\tuint32_t u;\n"
	           "\t\tfloat f;\n"
	           "\t} v;\n"
	           "\tv.u = (uint32_t)h << 16;\n"
	           "\treturn v.f;\n"
	           "}\n"
	           "#endif\n");
	if (s->needs & SA_DOT) {
		emit(s->e, "#if %s_W_STORAGE == 1\n", u);
		sa_write_dot_fn(s, "dot_bf16", "uint16_t", "bnns_bf16(", ")", 0);
		emit(s->e, "#elif %s_W_STORAGE == 2\n", u);
		sa_write_dot_fn(s, "dot_q8", "int8_t", "(float)", "", 0);
		emit(s->e, "#endif\n");
	}
	if (s->needs & SA_DOT2) {
		emit(s->e, "#if %s_W_STORAGE != 0 && defined(%s_W_SIGMA_COUNT)\n", u, u);
		sa_write_dot_fn(s, "dot2_bf16", "uint16_t", "bnns_bf16(", ")", 1);
		emit(s->e, "#endif\n");
	}
	emit(s->e, "\n");
}
