/*
 * cli_export.c: `MODEL export`, the trained values of a checkpoint as a C
 * header for the model's standalone inference (bnnc --standalone;
 * docs/standalone.md).
 *
 * The checkpoint is read by the library's loader (bnn_state_load: model
 * fingerprint, CRC, truncation, values), so a checkpoint of another model,
 * or a damaged one, is refused with the loader's own message.  The header
 * then holds the model's fingerprint (BNN_WEIGHTS_FINGERPRINT, which the
 * generated C file compares with its own at compile time) and one
 * `static const float MODEL_w_SECTION[]` array per checkpoint section the
 * inference reads, in the checkpoint's layout (the generated code indexes
 * them at the descriptor's offsets): params (whatever the model's
 * parameter vector holds), sigma (when the checkpoint has a posterior and
 * some layer keeps a σ per parameter, BNN_CAP_SIGMA), stats (batchnorm's
 * running statistics), standardize.mean and standardize.std (when the
 * inputs were standardised).  One mechanism writes every section: the
 * exporter knows no posterior family.
 *
 * Every value is a C99 hexadecimal literal (printf's %a of the float),
 * which is its exact bits whatever the compiler's decimal rounding and
 * the target's byte order; -0 and subnormals are written as such, and an
 * infinite or NaN value is refused (no C99 literal spells it).  The file
 * is written atomically (bnn_cli_write_file: a temporary file renamed
 * into place), or to stdout with --out -.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"

/* One array of the header. */
struct cli_section {
	const char *name;  /* the checkpoint's section name ("standardize.mean") */
	const float *data; /* borrowed from the state */
	long n;
};

#define CLI_EXPORT_MAX_SECTIONS 5

/* What the header is made of. */
struct cli_export {
	const bnn_model *m;
	const char *ckpt; /* the checkpoint's path, for the opening comment */
	struct cli_section sec[CLI_EXPORT_MAX_SECTIONS];
	int nsec;
};

/* Whether some layer of m keeps a σ per parameter. */
static int cli_export_has_sigma(const bnn_model *m)
{
	int i;
	for (i = 0; i < m->nlayers; i++)
		if (m->layers[i].caps & BNN_CAP_SIGMA)
			return 1;
	return 0;
}

static void cli_export_add(struct cli_export *x, const char *name, const float *data, long n)
{
	if (data && n > 0 && x->nsec < CLI_EXPORT_MAX_SECTIONS) {
		x->sec[x->nsec].name = name;
		x->sec[x->nsec].data = data;
		x->sec[x->nsec].n = n;
		x->nsec++;
	}
}

/* NAME with '.' as '_', in capitals when UPPER (the C names of a section:
 * "standardize.mean" is MODEL_w_standardize_mean, MODEL_W_STANDARDIZE_MEAN_COUNT). */
static void cli_export_ident(const char *name, int upper, char *buf, size_t size)
{
	size_t i;
	for (i = 0; name[i] && i + 1 < size; i++) {
		char c = name[i] == '.' ? '_' : name[i];
		buf[i] = (char)(upper && c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
	}
	buf[i] = '\0';
}

/* Fails on the first value of the sections that no C literal can spell. */
static int cli_export_check(const struct bnn_cli_args *a, const struct cli_export *x)
{
	long j;
	int s;
	for (s = 0; s < x->nsec; s++)
		for (j = 0; j < x->sec[s].n; j++)
			if (!isfinite(x->sec[s].data[j]))
				return bnn_cli_error(
				        a,
				        "%s: section '%s' value %ld is %g: the weights "
				        "header cannot hold a value that is not finite",
				        a->load, x->sec[s].name, j, (double)x->sec[s].data[j]);
	return BNN_CLI_OK;
}

/* A float as a C99 hexadecimal literal with the f suffix, exactly. */
static void cli_export_float(FILE *f, float v)
{
	if (v == 0)
		fputs(signbit(v) ? "-0x0p+0f" : "0x0p+0f", f);
	else
		fprintf(f, "%af", (double)v);
}

/* A file name inside a comment: a star-slash cannot end it (its slash
 * written \057) and a newline cannot break it. */
static void cli_export_comment_text(FILE *f, const char *s)
{
	size_t j;
	for (j = 0; s[j]; j++) {
		if (s[j] == '/' && (s[j + 1] == '*' || (j > 0 && s[j - 1] == '*')))
			fputs("\\057", f);
		else if (s[j] == '\n')
			fputs("\\n", f);
		else
			fputc(s[j], f);
	}
}

static int cli_export_fill(FILE *f, void *ctx)
{
	const struct cli_export *x = ctx;
	const bnn_model *m = x->m;
	char up[BNN_ERR_MESSAGE_MAX], id[300], uid[300];
	long j;
	int s;

	cli_export_ident(m->name, 1, up, sizeof up);
	fprintf(f,
	        "/*\n"
	        " * Trained values of model '%s' for its standalone inference (bnnc\n"
	        " * --standalone), exported by libbnn %s from the checkpoint\n"
	        " * ",
	        m->name, bnn_version());
	cli_export_comment_text(f, x->ckpt);
	fprintf(f,
	        ".\n"
	        " * Floats are C99 hexadecimal literals: their exact bits.  Do not edit.\n"
	        " */\n"
	        "#ifndef BNN_WEIGHTS_%s_H\n"
	        "#define BNN_WEIGHTS_%s_H\n"
	        "\n"
	        "#include <stdint.h>\n"
	        "\n"
	        "/* The fingerprint of the model the checkpoint was trained for. */\n"
	        "#define BNN_WEIGHTS_FINGERPRINT UINT64_C(0x%016llx)\n"
	        "#define BNN_WEIGHTS_MODEL \"%s\"\n",
	        up, up, (unsigned long long)m->fingerprint, m->name);
	for (s = 0; s < x->nsec; s++) {
		const struct cli_section *c = &x->sec[s];
		cli_export_ident(c->name, 0, id, sizeof id);
		cli_export_ident(c->name, 1, uid, sizeof uid);
		fprintf(f,
		        "\n/* checkpoint section '%s' */\n"
		        "#define %s_W_%s_COUNT %ldL\n"
		        "static const float %s_w_%s[%ld] = {",
		        c->name, up, uid, c->n, m->name, id, c->n);
		for (j = 0; j < c->n; j++) {
			fputs(j % 4 ? ", " : (j ? ",\n\t" : "\n\t"), f);
			cli_export_float(f, c->data[j]);
		}
		fputs("\n};\n", f);
	}
	fputs("\n#endif\n", f);
	return ferror(f) ? -1 : 0;
}

int bnn_cli_export(const bnn_model *m, struct bnn_cli_args *a)
{
	/* a->out: the header to write (cli.c sets the default), "-" stdout */
	struct cli_export x;
	bnn_state st;
	bnn_err err;
	int rc;

	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	memset(&x, 0, sizeof x);
	x.m = m;
	x.ckpt = a->load;
	cli_export_add(&x, "params", st.params, m->nparams);
	if (cli_export_has_sigma(m))
		cli_export_add(&x, "sigma", st.sigma, m->nparams);
	cli_export_add(&x, "stats", st.stats, m->nstats);
	cli_export_add(&x, "standardize.mean", st.standardize.mean, st.standardize.features);
	cli_export_add(&x, "standardize.std", st.standardize.std, st.standardize.features);
	rc = cli_export_check(a, &x);
	if (!rc && bnn_cli_write_file(a->out, cli_export_fill, &x, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	bnn_state_free(&st);
	return rc;
}
