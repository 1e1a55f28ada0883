/* standalone.c: bnnc --standalone, the model's inference as C99 that needs
 * nothing but the caller (docs/standalone.md).
 *
 * Why the compiler writes code and not weights: the trained values live in
 * a checkpoint, which only libbnn reads and checks (fingerprint, CRC,
 * values), and bnnc does not link a model.  So bnnc writes NAME_infer.c
 * and NAME_infer.h from the model alone, and the model's driver writes the
 * weights header (`MODEL export`, runtime/cli/cli_export.c): each tool
 * stays in its layer, and the C file checks at compile time that the
 * header's fingerprint is the model's.
 *
 * How it is organised.  standalone_write() takes codegen's plan of the
 * model (codegen_plan: nodes, widths, tensors and their offsets in the
 * parameter vector, running statistics), lays out one example's workspace
 * (sa_plan: the accumulators of the Monte-Carlo average in doubles, then
 * the input, the activations and the scratch of the layers that need some,
 * by liveness: buffers whose lives do not meet share memory), then writes
 * the header (the API) and the C file: provenance, the weights header's
 * checks, the math (standalone_math.c), the reading of the header's
 * storage (standalone_storage.c), bnns_forward()
 * with each node's code (standalone_layers.c), and the predictive
 * (MODEL_predict_summary, MODEL_predict).  Both files go through
 * codegen_write_files(), as the pass's do, so a failure leaves the old
 * files as they were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "codegen.h"
#include "standalone.h"

/* ---- planning -------------------------------------------------------------- */

/* The workspace's floats are laid out by liveness: every buffer (an
 * activation, a layer's scratch, the input, one sample's probabilities)
 * is a region with the steps it is live over, and two regions may share
 * memory when those steps do not meet.  Step i is node i's code (the
 * nodes run in index order), step -1 the input's standardisation before
 * the pass, step nnodes the predictive's use of the outputs after it. */
struct sa_region {
	long floats;
	int first, last; /* live from the step that writes it to its last reader */
	long *off;       /* where its offset goes */
	int seq;         /* the order it was taken in */
};

struct sa_layout {
	struct sa_region *r;
	int n;
};

/* Registers a region of FLOATS live over steps [FIRST, LAST]; its offset
 * is written to *OFF by sa_place().  Regions of no floats take none. */
static void sa_take(struct sa_layout *l, long floats, int first, int last, long *off)
{
	*off = 0;
	if (floats <= 0)
		return;
	l->r[l->n].floats = floats;
	l->r[l->n].first = first;
	l->r[l->n].last = last;
	l->r[l->n].off = off;
	l->r[l->n].seq = l->n;
	l->n++;
}

/* Larger regions first, then earlier ones, then in the order taken: the
 * greedy-by-size order of offline planners (e.g. TensorFlow Lite Micro's),
 * whose large buffers set the peak and are hardest to fit later. */
static int sa_region_cmp(const void *pa, const void *pb)
{
	const struct sa_region *a = pa, *b = pb;
	if (a->floats != b->floats)
		return a->floats > b->floats ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The lowest offset where R fits beside the placed regions live at the
 * same time. */
static long sa_lowest_fit(const struct sa_layout *l, int placed, const struct sa_region *r)
{
	long off = 0;
	int moved = 1, j;
	while (moved) {
		moved = 0;
		for (j = 0; j < placed; j++) {
			const struct sa_region *q = &l->r[j];
			if (q->last < r->first || r->last < q->first)
				continue;
			if (off < *q->off + q->floats && *q->off < off + r->floats) {
				off = *q->off + q->floats;
				moved = 1;
			}
		}
	}
	return off;
}

/* Places every region; returns the floats they span. */
static long sa_place(struct sa_layout *l)
{
	long end = 0;
	int i;
	qsort(l->r, (size_t)l->n, sizeof *l->r, sa_region_cmp);
	for (i = 0; i < l->n; i++) {
		*l->r[i].off = sa_lowest_fit(l, i, &l->r[i]);
		if (*l->r[i].off + l->r[i].floats > end)
			end = *l->r[i].off + l->r[i].floats;
	}
	return end;
}

/* Whether the model's inference is random for a checkpoint with σ. */
static int sa_any_random(const struct sa *s)
{
	int i;
	for (i = 0; i < s->g->nnodes; i++)
		if (s->cg.nodes[i].code && sa_layer_random(s, i))
			return 1;
	return 0;
}

/* Whether node I's code reads value j of its first input only before it
 * writes value j of its output (standalone_layers.c: the activations'
 * loop, batchnorm's, add's first copy), so it can overwrite that input
 * when nothing reads it later. */
static int sa_in_place_op(enum op_id op)
{
	switch (op) {
	case OP_RELU:
	case OP_LEAKY_RELU:
	case OP_TANH:
	case OP_SIGMOID:
	case OP_GELU:
	case OP_SOFTPLUS:
	case OP_COS:
	case OP_BATCHNORM:
	case OP_ADD:
	case OP_POSITIONAL:
		return 1;
	default:
		return 0;
	}
}

/* Per node, the last step that reads its activation (the output: after
 * the pass; the input: always, every sample of an example starts from
 * it), or -2 when nothing does. */
static void sa_last_readers(const struct sa *s, int *last)
{
	const struct graph *g = s->g;
	int i, j;
	for (i = 0; i < g->nnodes; i++)
		last[i] = -2;
	for (i = 0; i < g->nnodes; i++)
		if (s->cg.nodes[i].code)
			for (j = 0; j < g->nodes[i].ninputs; j++)
				last[g->nodes[i].inputs[j]] = i;
	last[g->output] = g->nnodes;
	if (g->scale_node >= 0) /* the scale's log, read by the predictive */
		last[g->scale_node] = g->nnodes;
	last[g->input] = g->nnodes;
}

/* Whether node I can write its output over its first input's buffer
 * (owner OWN[in], last read by step RLAST[owner]): an in-place op that is
 * that buffer's last reader, whose other inputs live elsewhere, and the
 * buffer is not the example's input. */
static int sa_can_overwrite(const struct sa *s, int i, const int *own, const int *rlast)
{
	const struct graph_node *n = &s->g->nodes[i];
	int o = own[n->inputs[0]], j;
	if (!sa_in_place_op(n->op) || o == s->g->input || rlast[o] != i)
		return 0;
	for (j = 1; j < n->ninputs; j++)
		if (own[n->inputs[j]] == o)
			return 0;
	return 1;
}

/* Which node's buffer holds each node's activation (OWN; flatten and
 * identity share their input's, in-place ops overwrite theirs), and the
 * last step that reads each buffer (RLAST, by owner). */
static void sa_owners(const struct sa *s, const int *last, int *own, int *rlast)
{
	const struct graph *g = s->g;
	int i;
	for (i = 0; i < g->nnodes; i++) {
		own[i] = i;
		rlast[i] = last[i];
		if (i == g->input || !s->cg.nodes[i].code)
			continue;
		if (sa_layer_alias(s, i) || sa_can_overwrite(s, i, own, rlast)) {
			own[i] = own[g->nodes[i].inputs[0]];
			if (last[i] > rlast[own[i]])
				rlast[own[i]] = last[i];
		}
	}
}

/* Node I's scratch: the block, xt and wv its plan asks for (sa_layer_plan
 * keeps the largest of each over the layers), and the first and last
 * steps that use each, FIRST and LAST, indexed 0 (block), 1 (xt), 2 (wv). */
static void sa_plan_layer(struct sa *s, int i, int *first, int *last)
{
	long *const size[3] = { &s->block_floats, &s->xt_floats, &s->whvi_floats };
	long keep[3];
	int k;
	for (k = 0; k < 3; k++) {
		keep[k] = *size[k];
		*size[k] = 0;
	}
	sa_layer_plan(s, i);
	for (k = 0; k < 3; k++) {
		if (*size[k] > 0) {
			first[k] = first[k] < 0 ? i : first[k];
			last[k] = i;
		}
		*size[k] = *size[k] > keep[k] ? *size[k] : keep[k];
	}
}

int sa_regression(const struct graph *g)
{
	return g->likelihood != LIKELIHOOD_CATEGORICAL && g->likelihood != LIKELIHOOD_BERNOULLI;
}

/* Whether the likelihood's variance differs between samples (it is read
 * from the outputs: a rate, or a scale given by a node), so that the
 * predictive sums it (a third K of accumulators); a fixed or learned scale
 * gives the same variance in every sample. */
static int sa_variance_varies(const struct graph *g)
{
	return g->scale_node >= 0 || g->likelihood == LIKELIHOOD_POISSON ||
	       g->likelihood == LIKELIHOOD_NEGBINOMIAL;
}

/* The workspace of one example: accumulators (doubles), then floats laid
 * out by liveness (sa_region): the input, the activations, the layers'
 * scratch, one sample's output probabilities.  Returns 0, or -1 when out
 * of memory. */
static int sa_plan(struct sa *s)
{
	const struct graph *g = s->g;
	const int nn = g->nnodes;
	long k = s->cg.nodes[g->output].width;
	int first[3] = { -1, -1, -1 }, last[3] = { -1, -1, -1 };
	int *rd = calloc((size_t)nn * 3, sizeof *rd);
	struct sa_layout l;
	int i;

	l.n = 0;
	l.r = calloc((size_t)nn + 4, sizeof *l.r);
	if (!rd || !l.r) {
		free(rd);
		free(l.r);
		return -1;
	}
	for (i = 0; i < nn; i++)
		if (s->cg.nodes[i].code && cg_family(&s->cg, i) == FAMILY_MEANFIELD)
			s->sigma_layers = 1;
	s->random = sa_any_random(s);
	sa_last_readers(s, rd);
	sa_owners(s, rd, rd + nn, rd + 2 * nn);
	for (i = 0; i < nn; i++) {
		const int own = rd[nn + i];
		s->act[i] = -1;
		if (i != g->input && !s->cg.nodes[i].code)
			continue;
		s->act[i] = 0; /* an offset, set below */
		if (own == i)
			sa_take(&l, s->cg.nodes[i].width, i == g->input ? -1 : i, rd[2 * nn + i],
			        &s->act[i]);
		if (i != g->input)
			sa_plan_layer(s, i, first, last);
	}
	sa_take(&l, s->block_floats, first[0], last[0], &s->block_off);
	sa_take(&l, s->xt_floats, first[1], last[1], &s->xt_off);
	sa_take(&l, s->whvi_floats, first[2], last[2], &s->whvi_off);
	if (sa_regression(g)) {
		s->doubles = sa_variance_varies(g) ? 3 * k : 2 * k;
		if (g->sigma_learned || g->scale_node >= 0 || g->likelihood == LIKELIHOOD_POISSON ||
		    g->likelihood == LIKELIHOOD_NEGBINOMIAL)
			s->needs |= SA_EXP;
	} else {
		sa_take(&l, k, nn, nn, &s->prob_off);
		s->doubles = k + 1;
		s->needs |= SA_EXP | SA_LOG;
	}
	s->floats = sa_place(&l);
	for (i = 0; i < nn; i++)
		if (s->act[i] >= 0 && rd[nn + i] != i)
			s->act[i] = s->act[rd[nn + i]];
	s->in_off = s->act[g->input];
	if (s->floats == 0)
		s->floats = 1;
	free(rd);
	free(l.r);
	return 0;
}

/* ---- the header ----------------------------------------------------------------- */

static void sa_provenance(struct sa *s, const struct standalone_options *o, const char *what)
{
	emit(s->e,
	     "/*\n"
	     " * %s of model '%s', generated by bnnc %s --standalone from ",
	     what, s->m, bnn_version());
	emit_comment_text(s->e, o->source);
	emit(s->e, ".\n"
	           " * Do not edit: change the .bnn file and run bnnc again.\n"
	           " */\n");
}

static long sa_outputs(const struct sa *s)
{
	return s->cg.nodes[s->g->output].width;
}

/* An input of integer ids (`input ids[T] int;`): the bound the ids must
 * stay under, the smallest vocabulary of the embeddings that read them;
 * 0 for an input of floats. */
static long sa_ids_below(const struct sa *s)
{
	const struct graph *g = s->g;
	long below = 0;
	int i;
	if (!g->nodes[g->input].ids)
		return 0;
	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].live && g->nodes[i].op == OP_EMBEDDING &&
		    g->nodes[i].inputs[0] == g->input &&
		    (below == 0 || g->nodes[i].attrs.vocab < below))
			below = g->nodes[i].attrs.vocab;
	return below;
}

/* The C type of x: int32_t for ids, float otherwise. */
static const char *sa_input_type(const struct sa *s)
{
	return s->g->nodes[s->g->input].ids ? "int32_t" : "float";
}

static long sa_workspace_bytes(const struct sa *s)
{
	return s->doubles * 8 + s->floats * 4;
}

static void sa_write_header(struct sa *s, const struct standalone_options *o)
{
	const char *m = s->m, *u = s->up;
	int regression = sa_regression(s->g);
	long k = sa_outputs(s), below = sa_ids_below(s);
	char ids[1024] = "";

	if (s->g->nodes[s->g->input].ids) /* the embeddings' rows: checked, never read outside */
		snprintf(ids, sizeof ids,
		         "/* x holds integer ids (int32_t), each in [0, %s_IDS_BELOW): the\n"
		         " * smallest vocabulary of the embeddings that read them. */\n"
		         "#define %s_IDS_BELOW %ldL\n"
		         "#define %s_EIDS (-4)       /* an id of x outside [0, %s_IDS_BELOW) */\n",
		         u, u, below, u, u);
	sa_provenance(s, o, "Standalone inference");
	emit(s->e,
	     "#ifndef BNNS_MODEL_%s_INFER_H\n"
	     "#define BNNS_MODEL_%s_INFER_H\n"
	     "\n"
	     "#include <stddef.h>\n"
	     "#include <stdint.h>\n"
	     "\n"
	     "/* One example's input: %ld floats (as the driver reads them, before the\n"
	     " * standardisation of the weights header, which %s_predict applies). */\n"
	     "#define %s_INPUTS %ldL\n"
	     "/* Outputs: %s. */\n"
	     "#define %s_OUTPUTS %ldL\n"
	     "/* Floats of `out` per example: %s. */\n"
	     "#define %s_OUT_FLOATS %ldL\n"
	     "/* Floats of `summary` per example: %s. */\n"
	     "#define %s_SUMMARY_FLOATS 3L\n"
	     "/* The workspace %s_predict needs, whatever n and mc: %ld doubles of\n"
	     " * Monte-Carlo sums, then %ld floats.  Aligned for a double, e.g.\n"
	     " * `static double ws[(%s_WORKSPACE_BYTES + 7) / 8];`. */\n"
	     "#define %s_WORKSPACE_BYTES %ldUL\n"
	     "#define %s_WORKSPACE_ALIGN 8UL\n"
	     "\n"
	     "/* Return codes (0: success). */\n"
	     "#define %s_EINVAL (-1)     /* x or out NULL, n < 0, or mc < 0 */\n"
	     "#define %s_EWORKSPACE (-2) /* ws NULL or ws_bytes < %s_WORKSPACE_BYTES */\n"
	     "#define %s_EALIGN (-3)     /* ws not aligned to %s_WORKSPACE_ALIGN */\n"
	     "%s"
	     "\n"
	     "#ifdef __cplusplus\n"
	     "extern \"C\" {\n"
	     "#endif\n"
	     "\n",
	     u, u, s->cg.nodes[s->g->input].width, m, u, s->cg.nodes[s->g->input].width,
	     regression                                 ? "the predictive's means and variances"
	     : s->g->likelihood == LIKELIHOOD_BERNOULLI ? "P(label = 1), one per label"
	                                                : "the probabilities of the classes",
	     u, k, regression ? "the K means, then the K variances" : "the K probabilities", u,
	     regression ? 2 * k : k,
	     regression ? "total, aleatoric and epistemic variance, each summed over the outputs"
	                : "predictive entropy, expected entropy and mutual information (nats)",
	     u, m, s->doubles, s->floats, u, u, sa_workspace_bytes(s), u, u, u, u, u, u, ids);
	emit(s->e,
	     "/*\n"
	     " * The predictive of the n examples of x (n × %s_INPUTS floats, row by\n"
	     " * row), one at a time, into out (n × %s_OUT_FLOATS floats) and, when\n"
	     " * summary is not NULL, the uncertainty of each (n × %s_SUMMARY_FLOATS).\n"
	     " * mc = 0: the posterior-mean pass (meanfield: μ; dropout: no mask; emp,\n"
	     " * ecmp: the mean of the components; whvi: g = μ), as libbnn's\n"
	     " * `predict --mc 0`.  mc = S > 0: the average over S Monte-Carlo samples\n"
	     " * of the posterior; example i's sample s depends on (seed, s, i) only,\n"
	     " * so results do not depend on n or on how the examples are split into\n"
	     " * calls (pass the example's index: x + i·%s_INPUTS is example i only\n"
	     " * within one call).  Returns 0 or a negative %s_E* code; nothing is\n"
	     " * written then.  Reentrant: all state is in ws.\n"
	     " */\n"
	     "int %s_predict_summary(const %s *x, long n, int mc, uint64_t seed, void *ws,\n"
	     "        size_t ws_bytes, float *out, float *summary);\n"
	     "\n"
	     "/* The same without the summaries. */\n"
	     "int %s_predict(const %s *x, long n, int mc, uint64_t seed, void *ws, size_t ws_bytes,\n"
	     "        float *out);\n"
	     "\n",
	     u, u, u, u, u, m, sa_input_type(s), m, sa_input_type(s));
	if (s->mo)
		sa_moments_header(s);
	emit(s->e, "#ifdef __cplusplus\n"
	           "}\n"
	           "#endif\n"
	           "\n"
	           "#endif\n");
}

/* ---- the C file ------------------------------------------------------------- */

/* The weights header: included, then checked against the model. */
static void sa_write_weights_checks(struct sa *s, const struct standalone_options *o,
                                    unsigned long long fingerprint)
{
	const char *m = s->m, *u = s->up;
	emit(s->e,
	     "/* The trained values: a header written by `%s export` (arrays %s_w_*).\n"
	     " * -D%s_WEIGHTS='\"file.h\"' names another. */\n"
	     "#ifndef %s_WEIGHTS\n"
	     "#define %s_WEIGHTS ",
	     m, m, u, u, u);
	emit_c_string(s->e, o->w_name);
	emit(s->e,
	     "\n"
	     "#endif\n"
	     "#include %s_WEIGHTS\n"
	     "\n"
	     "#ifndef BNN_WEIGHTS_FINGERPRINT\n"
	     "#error \"%s_WEIGHTS is not a weights header written by the export command of a model's driver\"\n"
	     "#endif\n"
	     "/* A header exported from another model's checkpoint stops the compilation\n"
	     " * here (C99 has no _Static_assert: the array's size is negative). */\n"
	     "typedef char %s_weights_are_of_another_model\n"
	     "        [BNN_WEIGHTS_FINGERPRINT == UINT64_C(0x%016llx) ? 1 : -1];\n",
	     u, u, m, fingerprint);
	if (s->cg.nparams > 0) /* a model without parameters exports no array */
		emit(s->e,
		     "typedef char %s_weights_params_count_differs[%s_W_PARAMS_COUNT == %ldL ? 1 : -1];\n",
		     m, u, s->cg.nparams);
	if (s->cg.nstats > 0)
		emit(s->e,
		     "typedef char %s_weights_stats_count_differs[%s_W_STATS_COUNT == %ldL ? 1 : -1];\n",
		     m, u, s->cg.nstats);
	if (s->sigma_layers)
		emit(s->e,
		     "#ifdef %s_W_SIGMA_COUNT\n"
		     "typedef char %s_weights_sigma_count_differs[%s_W_SIGMA_COUNT == %ldL ? 1 : -1];\n"
		     "#endif\n",
		     u, m, u, s->cg.nparams);
	emit(s->e,
	     "#ifdef %s_W_STANDARDIZE_MEAN_COUNT\n"
	     "typedef char %s_weights_standardize_count_differs\n"
	     "        [%s_W_STANDARDIZE_MEAN_COUNT == %s_INPUTS &&\n"
	     "         %s_W_STANDARDIZE_STD_COUNT == %s_INPUTS ? 1 : -1];\n"
	     "#endif\n\n",
	     u, m, u, u, u, u);
}

/* BNNS_EXP ...: <math.h>'s functions, or the file's own with MODEL_NO_LIBM. */
static void sa_write_math_macros(struct sa *s)
{
	static const struct {
		unsigned need;
		const char *macro, *libm;
	} fns[] = { { SA_EXP, "BNNS_EXP", "expf" },       { SA_LOG, "BNNS_LOG", "logf" },
		    { SA_LOG1P, "BNNS_LOG1P", "log1pf" }, { SA_TANH, "BNNS_TANH", "tanhf" },
		    { SA_ERF, "BNNS_ERF", "erff" },       { SA_COS, "BNNS_COS", "cosf" },
		    { SA_SQRT, "BNNS_SQRT", "sqrtf" } };
	size_t i;
	int pass;
	if (!(s->needs & (SA_EXP | SA_LOG | SA_LOG1P | SA_TANH | SA_ERF | SA_COS | SA_SQRT)))
		return;
	emit(s->e,
	     "/* The math the model needs: <math.h>'s, or the file's own (-D%s_NO_LIBM). */\n",
	     s->up);
	for (pass = 0; pass < 2; pass++) {
		emit(s->e, pass == 0 ? "#ifdef %s_NO_LIBM\n" : "#else\n#include <math.h>\n", s->up);
		for (i = 0; i < sizeof fns / sizeof fns[0]; i++)
			if (s->needs & fns[i].need)
				emit(s->e, "#define %s %s%s\n", fns[i].macro,
				     pass == 0 ? "bnns_" : "", fns[i].libm);
	}
	emit(s->e, "#endif\n\n");
}

/* TERM with each J replaced by IDX, into BUF. */
static void sa_term_at(const char *term, const char *idx, char *buf, size_t size)
{
	size_t o = 0, n = strlen(idx);
	for (; *term && o + n + 1 < size; term++) {
		if (*term == 'J') {
			memcpy(buf + o, idx, n);
			o += n;
		} else {
			buf[o++] = *term;
		}
	}
	buf[o] = '\0';
}

void sa_emit_sum(struct sa *s, const char *name, const char *params, const char *term)
{
	char t[256], idx[16];
	int l;
	emit(s->e,
	     "static float %s(long n, %s)\n"
	     "{\n"
	     "\tfloat p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f, p4 = 0.0f, p5 = 0.0f,\n"
	     "\t      p6 = 0.0f, p7 = 0.0f, sum;\n"
	     "\tconst long whole = n - n %% 8;\n"
	     "\tlong j;\n"
	     "\tfor (j = 0; j < whole; j += 8) {\n",
	     name, params);
	for (l = 0; l < 8; l++) {
		snprintf(idx, sizeof idx, "j + %d", l);
		sa_term_at(term, idx, t, sizeof t);
		emit(s->e, "\t\tp%d += %s;\n", l, t);
	}
	sa_term_at(term, "j", t, sizeof t);
	emit(s->e,
	     "\t}\n"
	     "\tsum = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));\n"
	     "\tfor (j = whole; j < n; j++)\n"
	     "\t\tsum += %s;\n"
	     "\treturn sum;\n"
	     "}\n\n",
	     t);
}

/* bnns_dot (a dense layer's Σ w·x) and bnns_dot2 (Σ (σ·x)²).  With
 * compressed tensors they serve the f32 storage only (bf16 and int8 read
 * the compressed rows with their own), but for bnns_dot when a layer dots
 * floats it decoded into the block (SA_DOT_F32): then it serves them all. */
static void sa_write_dots(struct sa *s)
{
	const int every = (s->needs & SA_DOT_F32) != 0;
	if (every)
		sa_emit_sum(s, "bnns_dot", "const float *w, const float *x", "w[J] * x[J]");
	if (s->nq > 0)
		emit(s->e, "#if %s_W_STORAGE == 0\n", s->up);
	if ((s->needs & SA_DOT) && !every)
		sa_emit_sum(s, "bnns_dot", "const float *w, const float *x", "w[J] * x[J]");
	if (s->needs & SA_DOT2)
		sa_emit_sum(s, "bnns_dot2", "const float *w, const float *x",
		            "(w[J] * x[J]) * (w[J] * x[J])");
	if (s->nq > 0)
		emit(s->e, "#endif\n\n");
}

static void sa_write_forward(struct sa *s)
{
	const struct graph *g = s->g;
	int i, k;
	emit(s->e,
	     "/* One pass over the example in f + %ld (standardised): the posterior mean\n"
	     " * (sample < 0) or Monte-Carlo sample `sample` of example ex, whose\n"
	     " * draws all come from the key of (seed, sample, ex).  The outputs are\n"
	     " * left in a_%s. */\n",
	     s->in_off, cg_name(&s->cg, g->output));
	if (s->random)
		emit(s->e,
		     "static void bnns_forward(float *f, long ex, long sample, uint64_t seed)\n"
		     "{\n"
		     "\tconst int noisy = sample >= 0;\n"
		     "\tconst uint64_t ekey =\n"
		     "\t        noisy ? bnns_draw(bnns_draw(bnns_mix(seed), sample), ex) : 0u;\n");
	else
		emit(s->e, "static void bnns_forward(float *f)\n{\n");
	for (i = 0; i < g->nnodes; i++) {
		if (s->act[i] < 0)
			continue;
		if (i != g->input && sa_layer_alias(s, i))
			emit(s->e, "\tfloat *const a_%s = a_%s;\n", cg_name(&s->cg, i),
			     cg_name(&s->cg, g->nodes[i].inputs[0]));
		else
			emit(s->e, "\tfloat *const a_%s = f + %ldL; /* %ld */\n",
			     cg_name(&s->cg, i), s->act[i], s->cg.nodes[i].width);
	}
	if (s->block_floats > 0)
		emit(s->e, "\tfloat *const blk = f + %ldL; /* a layer's parameters */\n",
		     s->block_off);
	if (s->xt_floats > 0)
		emit(s->e,
		     "\tfloat *const xt = f + %ldL; /* dropout's masked input, gru's and attention's scratch */\n",
		     s->xt_off);
	if (s->whvi_floats > 0)
		emit(s->e, "\tfloat *const wv = f + %ldL; /* a whvi layer's g and transform */\n",
		     s->whvi_off);
	if (s->random)
		emit(s->e, "\t(void)noisy;\n\t(void)ekey;\n");
	/* The outputs (the likelihood's node and the one giving its scale) are
	 * read by the caller: one that no code writes (the input itself, or
	 * another name for a buffer, as flatten's of a map) is otherwise unused. */
	for (k = 0; k < 2; k++) {
		int o = k ? g->scale_node : g->output;
		if (o >= 0 && (o == g->input || sa_layer_alias(s, o)))
			emit(s->e, "\t(void)a_%s;\n", cg_name(&s->cg, o));
	}
	emit(s->e, "\n");
	for (i = 0; i < g->nnodes; i++)
		if (s->cg.nodes[i].code)
			sa_layer_forward(s, i);
	emit(s->e, "}\n\n");
}

/* Whether the pass is random for the weights given: some layer draws
 * noise, or has σ and the header gives it. */
static void sa_write_random_macro(struct sa *s)
{
	int pass_noise = 0, i;
	for (i = 0; i < s->g->nnodes; i++)
		if (s->cg.nodes[i].code && sa_layer_random(s, i) &&
		    cg_family(&s->cg, i) != FAMILY_MEANFIELD)
			pass_noise = 1;
	if (pass_noise || !s->random)
		emit(s->e, "#define BNNS_RANDOM %d\n\n", pass_noise);
	else
		emit(s->e,
		     "#ifdef %s_W_SIGMA_COUNT\n#define BNNS_RANDOM 1\n#else\n#define BNNS_RANDOM 0\n"
		     "#endif\n\n",
		     s->up);
}

void sa_emit_standardize(struct sa *s)
{
	const char *m = s->m, *u = s->up;
	if (s->g->nodes[s->g->input].ids) { /* ids, as the float values libbnn's pass reads */
		emit(s->e,
		     "\t\tfor (j = 0; j < %s_INPUTS; j++)\n"
		     "\t\t\txs[j] = (float)xi[j];\n",
		     u);
		return;
	}
	emit(s->e,
	     "\t\tfor (j = 0; j < %s_INPUTS; j++)\n"
	     "#ifdef %s_W_STANDARDIZE_MEAN_COUNT\n"
	     "\t\t\txs[j] = (float)(((double)xi[j] - %s_w_standardize_mean[j]) /\n"
	     "\t\t\t                %s_w_standardize_std[j]); /* in double, as libbnn */\n"
	     "#else\n"
	     "\t\t\txs[j] = xi[j];\n"
	     "#endif\n",
	     u, u, m, m);
}

void sa_noise_variance(const struct sa *s, char *buf, size_t size)
{
	if (s->g->sigma_learned) {
		char at[80];
		sa_kept(s, s->cg.sigma_tensor, 0, at, sizeof at);
		snprintf(buf, size, "BNNS_EXP(2.0f * %s_w_params[%s + j])", s->m, at);
	} else
		snprintf(buf, size, "%af", (double)(float)(s->g->sigma * s->g->sigma));
}

/* The likelihood's scale of output j as a float expression (predict_regs'
 * power 1: laplace's b, studentt's s, negbinomial's ρ; gaussian's σ² is
 * sa_noise_variance's): a constant, exp of the learned log, or exp of the
 * scale node's value v[j]. */
static void sa_scale(const struct sa *s, char *buf, size_t size)
{
	if (s->g->scale_node >= 0) {
		snprintf(buf, size, "BNNS_EXP(v[j])");
	} else if (s->g->sigma_learned) {
		char at[80];
		sa_kept(s, s->cg.sigma_tensor, 0, at, sizeof at);
		snprintf(buf, size, "BNNS_EXP(%s_w_params[%s + j])", s->m, at);
	} else {
		snprintf(buf, size, "%af", (double)(float)s->g->sigma);
	}
}

/* One sample's predictive of output j, as runtime/train/predict.c's
 * predict_regs row of the likelihood computes it: MEAN from the raw output
 * z[j] (a mean, or a log-rate), and VAR, the likelihood's variance
 * (aleatoric), from that mean m and the scale. */
static void sa_sample_moments(const struct sa *s, char *mean, char *var, size_t size)
{
	const struct graph *g = s->g;
	char sc[160];
	sa_scale(s, sc, sizeof sc);
	snprintf(mean, size, "z[j]");
	switch (g->likelihood) {
	case LIKELIHOOD_POISSON: /* rate e^z, its variance the rate */
		snprintf(mean, size, "BNNS_EXP(z[j])");
		snprintf(var, size, "m");
		break;
	case LIKELIHOOD_NEGBINOMIAL: /* m = e^z, m + m²/ρ */
		snprintf(mean, size, "BNNS_EXP(z[j])");
		snprintf(var, size, "m + m * m / %s", sc);
		break;
	case LIKELIHOOD_LAPLACE: /* 2b² */
		snprintf(var, size, "2.0f * %s * %s", sc, sc);
		break;
	case LIKELIHOOD_STUDENTT: /* s²ν/(ν − 2), infinite for ν ≤ 2 */
		if (g->df > 2)
			snprintf(var, size, "%s * %s * %af", sc, sc,
			         (double)(float)(g->df / (g->df - 2)));
		else
			snprintf(var, size, "(1.0f / 0.0f)");
		break;
	default: /* gaussian: σ², or e^v of a log-variance node */
		if (g->scale_node >= 0)
			snprintf(var, size, "BNNS_EXP(v[j])");
		else
			sa_noise_variance(s, var, size);
		break;
	}
}

/* The regression predictive of example i: per sample (inside the loop over
 * samples), Σ m, Σ m² and (when it varies, sa_variance_varies) Σ of the
 * likelihood's variance; then the mixture's mean and variance, the mean
 * variance being the aleatoric part and the variance of the means the
 * epistemic one, as libbnn's predict. */
static void sa_write_regression(struct sa *s)
{
	long k = sa_outputs(s);
	int varies = sa_variance_varies(s->g);
	char mean[400], var[400];

	sa_sample_moments(s, mean, var, sizeof var);
	emit(s->e,
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tconst float m = %s;\n"
	     "\t\t\t\tacc[j] += m;\n"
	     "\t\t\t\tacc[%ldL + j] += (double)m * m;\n",
	     k, mean, k);
	if (varies)
		emit(s->e, "\t\t\t\tacc[%ldL + j] += (double)(%s);\n", 2 * k, var);
	emit(s->e, "\t\t\t}\n\t\t}\n");
	emit(s->e,
	     "\t\t{\n"
	     "\t\t\tdouble tot = 0.0, ale = 0.0, epi = 0.0;\n"
	     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
	     "\t\t\t\tconst double mean = acc[j] / (double)samples;\n"
	     "\t\t\t\tconst double ms = acc[%ldL + j] / (double)samples - mean * mean;\n",
	     k, k);
	if (varies)
		emit(s->e, "\t\t\t\tconst double a = acc[%ldL + j] / (double)samples;\n", 2 * k);
	else
		emit(s->e, "\t\t\t\tconst double a = (double)(%s);\n", var);
	emit(s->e, "\t\t\t\tconst double e = ms > 0.0 ? ms : 0.0;\n");
	sa_emit_split(s, k, "(float)mean");
	emit(s->e, "\t}\n\treturn 0;\n}\n\n");
}

void sa_emit_split(struct sa *s, long k, const char *mean)
{
	emit(s->e,
	     "\t\t\t\tout[i * %ldL + j] = %s;\n"
	     "\t\t\t\tout[i * %ldL + %ldL + j] = (float)(a + e);\n"
	     "\t\t\t\ttot += a + e;\n"
	     "\t\t\t\tale += a;\n"
	     "\t\t\t\tepi += e;\n"
	     "\t\t\t}\n"
	     "\t\t\tif (summary) {\n"
	     "\t\t\t\tsummary[3 * i] = (float)tot;\n"
	     "\t\t\t\tsummary[3 * i + 1] = (float)ale;\n"
	     "\t\t\t\tsummary[3 * i + 2] = (float)epi;\n"
	     "\t\t\t}\n"
	     "\t\t}\n",
	     2 * k, mean, 2 * k, k);
}

/* The predictive: one example at a time, its samples' outputs added into
 * acc (doubles), then averaged. */
static void sa_write_predict(struct sa *s)
{
	const struct graph *g = s->g;
	const char *m = s->m, *u = s->up;
	long k = sa_outputs(s);
	int regression = sa_regression(g);
	char vdecl[96] = ""; /* the scale node's values, its log-scale */

	if (g->scale_node >= 0)
		snprintf(vdecl, sizeof vdecl, "\tconst float *const v = f + %ldL;\n",
		         s->act[g->scale_node]);

	emit(s->e,
	     "int %s_predict_summary(const %s *x, long n, int mc, uint64_t seed, void *ws,\n"
	     "        size_t ws_bytes, float *out, float *summary)\n"
	     "{\n"
	     "\tdouble *const acc = (double *)ws;\n"
	     "\tfloat *const f = (float *)(void *)(acc + %ldL);\n"
	     "\tfloat *const xs = f + %ldL;\n"
	     "\tconst float *const z = f + %ldL;\n"
	     "%s"
	     "\tconst long samples = mc > 0 && BNNS_RANDOM ? mc : 1;\n"
	     "\tlong i, j, smp;\n"
	     "\n"
	     "\tif (!x || !out || n < 0 || mc < 0)\n"
	     "\t\treturn %s_EINVAL;\n"
	     "\tif (!ws || ws_bytes < %s_WORKSPACE_BYTES)\n"
	     "\t\treturn %s_EWORKSPACE;\n"
	     "\tif ((uintptr_t)ws %% %s_WORKSPACE_ALIGN != 0)\n"
	     "\t\treturn %s_EALIGN;\n",
	     m, sa_input_type(s), s->doubles, s->in_off, s->act[g->output], vdecl, u, u, u, u, u);
	if (g->nodes[g->input].ids) /* before anything is written */
		emit(s->e,
		     "\tfor (i = 0; i < n * %s_INPUTS; i++)\n"
		     "\t\tif (x[i] < 0 || x[i] >= %s_IDS_BELOW)\n"
		     "\t\t\treturn %s_EIDS;\n",
		     u, u, u);
	if (!s->random)
		emit(s->e, "\t(void)seed;\n");
	emit(s->e,
	     "\tfor (i = 0; i < n; i++) {\n"
	     "\t\tconst %s *const xi = x + i * %s_INPUTS;\n",
	     sa_input_type(s), u);
	sa_emit_standardize(s);
	emit(s->e,
	     "\t\tfor (j = 0; j < %ldL; j++)\n"
	     "\t\t\tacc[j] = 0.0;\n"
	     "\t\tfor (smp = 0; smp < samples; smp++) {\n",
	     s->doubles);
	if (s->random)
		emit(s->e, "\t\t\tbnns_forward(f, i, mc > 0 ? smp : -1L, seed);\n");
	else
		emit(s->e, "\t\t\tbnns_forward(f);\n");
	if (regression) {
		sa_write_regression(s);
	} else {
		if (g->likelihood == LIKELIHOOD_CATEGORICAL)
			emit(s->e,
			     "\t\t\t{ /* softmax, and its entropy */\n"
			     "\t\t\t\tfloat *const p = f + %ldL, zmax = z[0], norm = 0.0f, h = 0.0f;\n"
			     "\t\t\t\tfor (j = 1; j < %ldL; j++)\n"
			     "\t\t\t\t\tzmax = z[j] > zmax ? z[j] : zmax;\n"
			     "\t\t\t\tfor (j = 0; j < %ldL; j++) {\n"
			     "\t\t\t\t\tp[j] = BNNS_EXP(z[j] - zmax);\n"
			     "\t\t\t\t\tnorm += p[j];\n"
			     "\t\t\t\t}\n"
			     "\t\t\t\tfor (j = 0; j < %ldL; j++) {\n"
			     "\t\t\t\t\tp[j] = p[j] / norm;\n"
			     "\t\t\t\t\tacc[j] += p[j];\n"
			     "\t\t\t\t\tif (p[j] > 0.0f)\n"
			     "\t\t\t\t\t\th -= p[j] * BNNS_LOG(p[j]);\n"
			     "\t\t\t\t}\n"
			     "\t\t\t\tacc[%ldL] += h;\n"
			     "\t\t\t}\n"
			     "\t\t}\n",
			     s->prob_off, k, k, k, k);
		else
			emit(s->e,
			     "\t\t\t{ /* P(label = 1) = sigmoid(z), and the labels' entropies */\n"
			     "\t\t\t\tfloat h = 0.0f;\n"
			     "\t\t\t\tfor (j = 0; j < %ldL; j++) {\n"
			     "\t\t\t\t\tconst float v = z[j];\n"
			     "\t\t\t\t\tconst float p = v >= 0.0f ? 1.0f / (1.0f + BNNS_EXP(-v))\n"
			     "\t\t\t\t\t                         : BNNS_EXP(v) / (1.0f + BNNS_EXP(v));\n"
			     "\t\t\t\t\tacc[j] += p;\n"
			     "\t\t\t\t\tif (p > 0.0f)\n"
			     "\t\t\t\t\t\th -= p * BNNS_LOG(p);\n"
			     "\t\t\t\t\tif (p < 1.0f)\n"
			     "\t\t\t\t\t\th -= (1.0f - p) * BNNS_LOG(1.0f - p);\n"
			     "\t\t\t\t}\n"
			     "\t\t\t\tacc[%ldL] += h;\n"
			     "\t\t\t}\n"
			     "\t\t}\n",
			     k, k);
		emit(s->e,
		     "\t\t{\n"
		     "\t\t\tconst double eh = acc[%ldL] / (double)samples;\n"
		     "\t\t\tfloat hp = 0.0f; /* as h above: equal to eh for one sample */\n"
		     "\t\t\tfor (j = 0; j < %ldL; j++) {\n"
		     "\t\t\t\tconst float q = (float)(acc[j] / (double)samples);\n"
		     "\t\t\t\tout[i * %ldL + j] = q;\n"
		     "\t\t\t\tif (q > 0.0f)\n"
		     "\t\t\t\t\thp -= q * BNNS_LOG(q);\n",
		     k, k, k);
		if (g->likelihood == LIKELIHOOD_BERNOULLI)
			emit(s->e, "\t\t\t\tif (q < 1.0f)\n"
			           "\t\t\t\t\thp -= (1.0f - q) * BNNS_LOG(1.0f - q);\n");
		emit(s->e, "\t\t\t}\n"
		           "\t\t\tif (summary) {\n"
		           "\t\t\t\tsummary[3 * i] = hp;\n"
		           "\t\t\t\tsummary[3 * i + 1] = (float)eh;\n"
		           "\t\t\t\tsummary[3 * i + 2] = (float)(hp > eh ? hp - eh : 0.0);\n"
		           "\t\t\t}\n"
		           "\t\t}\n"
		           "\t}\n"
		           "\treturn 0;\n"
		           "}\n\n");
	}
	emit(s->e,
	     "int %s_predict(const %s *x, long n, int mc, uint64_t seed, void *ws, size_t ws_bytes,\n"
	     "        float *out)\n"
	     "{\n"
	     "\treturn %s_predict_summary(x, n, mc, seed, ws, ws_bytes, out, (float *)0);\n"
	     "}\n",
	     m, sa_input_type(s), m);
}

static void sa_write_c(struct sa *s, const struct standalone_options *o)
{
	char *canonical = codegen_canonical(s->g);
	unsigned long long fp = canonical ? codegen_fnv1a64(canonical) : 0;
	free(canonical);
	if (!canonical) {
		s->e->failed = 1;
		return;
	}
	sa_provenance(s, o, "Standalone inference");
	emit(s->e,
	     "#include <stddef.h>\n"
	     "#include <stdint.h>\n"
	     "\n"
	     "#include \"%s\"\n"
	     "\n",
	     codegen_basename(o->h_path));
	sa_write_weights_checks(s, o, fp);
	sa_write_math_macros(s);
	sa_emit_math(s);
	sa_write_storage(s);
	sa_write_dots(s);
	sa_write_random_macro(s);
	sa_write_forward(s);
	sa_write_predict(s);
	if (s->mo) {
		emit(s->e, "\n");
		sa_moments_write(s);
	}
}

/* ---- files ---------------------------------------------------------------------- */

struct sa_files {
	struct sa *s;
	const struct standalone_options *o;
};

static void sa_files_header(void *ctx)
{
	const struct sa_files *w = ctx;
	sa_write_header(w->s, w->o);
}

static void sa_files_c(void *ctx)
{
	const struct sa_files *w = ctx;
	sa_write_c(w->s, w->o);
}

int standalone_write(const struct graph *g, const struct standalone_options *o, struct diag *d)
{
	struct sa s;
	struct emit e;
	struct sa_files w;
	int rc, status = 1;
	size_t j;

	memset(&s, 0, sizeof s);
	rc = codegen_plan(&s.cg, g, d);
	if (rc != 0) {
		if (rc < 0)
			fputs("bnnc: out of memory\n", stderr);
		codegen_plan_free(&s.cg);
		return 1;
	}
	s.g = g;
	s.e = &e;
	s.m = g->name;
	for (j = 0; g->name[j] && j + 1 < sizeof s.up; j++)
		s.up[j] = (char)(g->name[j] >= 'a' && g->name[j] <= 'z' ? g->name[j] - 'a' + 'A'
		                                                        : g->name[j]);
	s.cg.e = &e;
	s.act = calloc((size_t)g->nnodes, sizeof *s.act);
	if (!s.act) {
		fputs("bnnc: out of memory\n", stderr);
		goto done;
	}
	if (sa_plan(&s) != 0 || sa_storage_plan(&s) != 0) {
		fputs("bnnc: out of memory\n", stderr);
		goto done;
	}
	if (o->analytic && sa_moments_check(&s, d) > 0)
		goto done;
	if (o->analytic && sa_moments_plan(&s) != 0) {
		fputs("bnnc: out of memory\n", stderr);
		goto done;
	}
	w.s = &s;
	w.o = o;
	status = codegen_write_files(&e, o->h_path, o->c_path, sa_files_header, sa_files_c, &w);
done:
	sa_moments_free(&s);
	free(s.act);
	free(s.soff);
	free(s.srow);
	codegen_plan_free(&s.cg);
	return status;
}
