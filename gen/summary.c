/* summary.c: the model table printed by `bnnc --summary` (see summary.h).
 *
 * Columns are sized to their widest cell; counts are printed with thousands
 * separators and right-aligned.  A learned scale of a likelihood (gaussian's
 * sigma, laplace's scale) gets a row of its own, under the target's name.
 */
#include "summary.h"

#include "ops.h"
#include "priors.h"

#include <string.h>

enum {
	SUMMARY_COLS = 6,
	SUMMARY_CELL = 96
};

struct summary_row {
	char cell[SUMMARY_COLS][SUMMARY_CELL];
};

static const char *const summary_head[SUMMARY_COLS] = {
	"node", "op", "output shape", "posterior", "model params", "posterior params",
};

/* 1234567 -> "1,234,567" */
static void summary_count(long long n, char *buf, size_t size)
{
	char digits[32];
	size_t len, i, out = 0;
	snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
	len = strlen(digits);
	if (n < 0 && out + 1 < size)
		buf[out++] = '-';
	for (i = 0; i < len && out + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
}

/* Fills R with row I of the table: node I, or after the nodes the learned
 * sigma of a Gaussian likelihood (one point parameter per output). */
static void summary_row(const struct graph *g, int i, struct summary_row *r)
{
	const struct graph_node *n = &g->nodes[i < g->nnodes ? i : g->output];
	graph_shape_str(n, r->cell[2], SUMMARY_CELL);
	if (i >= g->nnodes) {
		snprintf(r->cell[0], SUMMARY_CELL, "%s", g->target);
		snprintf(r->cell[1], SUMMARY_CELL, "%s",
		         likelihood_get(g->likelihood)->spec[1].name);
		snprintf(r->cell[3], SUMMARY_CELL, "point");
		summary_count(g->likelihood_params, r->cell[4], SUMMARY_CELL);
		summary_count(g->likelihood_params, r->cell[5], SUMMARY_CELL);
		return;
	}
	snprintf(r->cell[0], SUMMARY_CELL, "%s", n->name);
	snprintf(r->cell[1], SUMMARY_CELL, "%s%s", op_name(n->op), n->live ? "" : " (unused)");
	if (n->has_family)
		family_str(&n->family, r->cell[3], SUMMARY_CELL);
	else
		snprintf(r->cell[3], SUMMARY_CELL, "-");
	summary_count(n->model_params, r->cell[4], SUMMARY_CELL);
	summary_count(n->posterior_params, r->cell[5], SUMMARY_CELL);
}

static void summary_widen(size_t *width, const struct summary_row *r)
{
	int c;
	for (c = 0; c < SUMMARY_COLS; c++)
		if (strlen(r->cell[c]) > width[c])
			width[c] = strlen(r->cell[c]);
}

static void summary_print_row(FILE *out, const struct summary_row *r, const size_t *width)
{
	int c;
	for (c = 0; c < SUMMARY_COLS; c++) {
		int w = (int)width[c];
		if (c >= 4) /* counts: right-aligned */
			fprintf(out, "  %*s", w, r->cell[c]);
		else
			fprintf(out, c ? "  %-*s" : "%-*s", w, r->cell[c]);
	}
	fputc('\n', out);
}

static void summary_rule(FILE *out, const size_t *width)
{
	size_t total = 2 * (SUMMARY_COLS - 1), c;
	for (c = 0; c < SUMMARY_COLS; c++)
		total += width[c];
	while (total--)
		fputc('-', out);
	fputc('\n', out);
}

/* "prior scalemixture(pi = 0.5, sigma1 = 1, sigma2 = 0.0025)": the prior
 * and its arguments by name (priors.c). */
static void summary_prior(FILE *out, const struct graph *g)
{
	const struct prior_info *info = prior_get((enum prior_id)g->prior);
	int i;

	fprintf(out, "prior %s(", info->name);
	for (i = 0; i < info->nspec; i++)
		fprintf(out, "%s%s = %g", i ? ", " : "", info->spec[i].name, g->prior_arg[i]);
	fprintf(out, ")");
}

static void summary_header(FILE *out, const struct graph *g, const char *file)
{
	const struct graph_node *in = &g->nodes[g->input], *o = &g->nodes[g->output];
	char shape[64], fam[128];
	graph_shape_str(in, shape, sizeof shape);
	fprintf(out, "model %s (%s)\n", g->name, file);
	fprintf(out, "input %s%s%s, likelihood %s ~ %s(%s", in->name, shape, in->ids ? " int" : "",
	        g->target, likelihood_name(g->likelihood), o->name);
	if (g->scale_node >= 0 && likelihood_node_form(g->likelihood)->positional_only)
		fprintf(out, ", %s", g->nodes[g->scale_node].name);
	else if (g->scale_node >= 0)
		fprintf(out, ", %s = %s", likelihood_get(g->likelihood)->spec[1].name,
		        g->nodes[g->scale_node].name);
	else if (likelihood_has_scale(g->likelihood) && g->sigma_learned)
		fprintf(out, ", %s = learned", likelihood_get(g->likelihood)->spec[1].name);
	else if (likelihood_has_scale(g->likelihood))
		fprintf(out, ", %s = %g", likelihood_get(g->likelihood)->spec[1].name, g->sigma);
	if (g->df > 0)
		fprintf(out, ", df = %g", g->df);
	family_str(&g->default_family, fam, sizeof fam);
	fprintf(out, ")\n");
	summary_prior(out, g);
	fprintf(out, "%s, default posterior %s\n\n", g->prior_given ? "" : " (the default)", fam);
}

void summary_print(FILE *out, const struct graph *g, const char *file)
{
	struct summary_row head, row, total;
	size_t width[SUMMARY_COLS] = { 0 };
	double overhead;
	int i, c, nrows = g->nnodes + (g->likelihood_params > 0);

	summary_header(out, g, file);
	memset(&total, 0, sizeof total);
	for (c = 0; c < SUMMARY_COLS; c++)
		snprintf(head.cell[c], SUMMARY_CELL, "%s", summary_head[c]);
	snprintf(total.cell[0], SUMMARY_CELL, "total");
	summary_count(g->total_model, total.cell[4], SUMMARY_CELL);
	summary_count(g->total_posterior, total.cell[5], SUMMARY_CELL);
	summary_widen(width, &head);
	summary_widen(width, &total);
	for (i = 0; i < nrows; i++) {
		summary_row(g, i, &row);
		summary_widen(width, &row);
	}
	summary_print_row(out, &head, width);
	summary_rule(out, width);
	for (i = 0; i < nrows; i++) {
		summary_row(g, i, &row);
		summary_print_row(out, &row, width);
	}
	summary_rule(out, width);
	summary_print_row(out, &total, width);
	overhead = g->total_model ? 100.0 * (double)(g->total_posterior - g->total_model) /
	                                    (double)g->total_model
	                          : 0.0;
	if (overhead >= 0)
		fprintf(out, "\nposterior overhead over the point network: %+.1f%%\n", overhead);
	else /* WHVI can need far fewer parameters than the network it describes */
		fprintf(out, "\nthe posterior has %.1f%% fewer parameters than the point network\n",
		        -overhead);
}
