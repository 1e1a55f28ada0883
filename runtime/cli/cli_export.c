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
 *
 * --storage bf16|int8 compresses the weight matrices and kernels (the
 * tensors of role BNN_ROLE_WEIGHT stored once, components 1: the weight
 * matrices and kernels of dense, conv2d, conv1d, gru, attention and
 * embedding layers of the point, meanfield and dropout families), whose
 * values are nearly all of a model's; every other array stays f32
 * (docs/standalone.md, "Storage").  Their params and sigma sections are
 * then split in two: MODEL_w_params_q (the compressed tensors, in order)
 * and MODEL_w_params (the others, in order), the same for sigma, and the
 * header announces the storage in MODEL_W_STORAGE, on which the generated
 * C file selects its reading code at compile time.  bf16 keeps the upper
 * 16 bits of each float, rounded to nearest even; int8 keeps q =
 * round(w / scale) in [-127, 127] with one scale = max|w| / 127 per output
 * row (a dense weight's row, a kernel's output channel), and σ in bf16
 * (its relative precision over a wide range, decoded by a shift: no exp
 * per weight and sample).  The layers whose parameters are not a weight
 * matrix stored once (whvi, emp, ecmp) are refused: f32 only.  --rounded
 * CKPT also saves the checkpoint with the values the storage represents,
 * so that eval and predict measure what the storage does to a model.
 */
#include <math.h>
#include <stdint.h>
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

/* --storage: the value of MODEL_W_STORAGE. */
enum cli_storage {
	CLI_STORAGE_F32,
	CLI_STORAGE_BF16,
	CLI_STORAGE_INT8
};
static const char *const cli_storage_names[] = { "f32", "bf16", "int8" };

/* What the header is made of. */
struct cli_export {
	const bnn_model *m;
	const char *ckpt; /* the checkpoint's path, for the opening comment */
	struct cli_section sec[CLI_EXPORT_MAX_SECTIONS];
	int nsec;
	enum cli_storage storage;
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

/* Whether --storage compresses tensor t: a weight matrix or kernel stored
 * once (bnnc's sa_compressed in gen/standalone_storage.c is the same rule). */
static int cli_export_compressed(const bnn_tensor *t)
{
	return t->role == BNN_ROLE_WEIGHT && t->components == 1;
}

/* The upper 16 bits of v rounded to nearest even (v finite; a value that
 * rounds beyond FLT_MAX is caught by cli_export_check_rounded). */
static uint16_t cli_export_bf16(float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static float cli_export_from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float v;
	memcpy(&v, &u, sizeof v);
	return v;
}

/* Row r of an int8 tensor: its scale max|w| / 127 (0 for a row of zeros). */
static float cli_export_row_scale(const float *w, long len)
{
	float big = 0;
	long j;
	for (j = 0; j < len; j++)
		big = fabsf(w[j]) > big ? fabsf(w[j]) : big;
	return (float)(big / 127.0);
}

static int cli_export_q8(float v, float scale)
{
	double q = scale > 0 ? nearbyint((double)v / scale) : 0;
	return (int)(q > 127 ? 127 : q < -127 ? -127 : q);
}

/* The value --storage keeps of element j of compressed tensor t in section
 * SIGMA or params (row scale SCALE for int8 params). */
static float cli_export_kept(const struct cli_export *x, int sigma, float v, float scale)
{
	if (x->storage == CLI_STORAGE_F32)
		return v;
	if (x->storage == CLI_STORAGE_INT8 && !sigma)
		return (float)cli_export_q8(v, scale) * scale;
	return cli_export_from_bf16(cli_export_bf16(v));
}

/* The layer of a model that --storage cannot compress, or -1: whvi, emp
 * and ecmp layers, whose parameters are not one weight matrix. */
static int cli_export_refused_layer(const bnn_model *m)
{
	int t;
	for (t = 0; t < m->ntensors; t++) {
		const bnn_tensor *c = &m->tensors[t];
		if (c->layer >= 0 && (c->components > 1 || c->role >= BNN_ROLE_WHVI_S1))
			return c->layer;
	}
	return -1;
}

/* "int8" into x->storage; a usage error for another name, an error for a
 * model with a layer it cannot compress. */
static int cli_export_storage(const struct bnn_cli_args *a, struct cli_export *x)
{
	int k, layer;
	for (k = 0; k < 3; k++)
		if (!a->storage || strcmp(a->storage, cli_storage_names[k]) == 0)
			break;
	if (k == 3)
		return bnn_cli_usage_error(a, "--storage: '%s' is not f32, bf16 or int8",
		                           a->storage);
	x->storage = (enum cli_storage)(a->storage ? k : 0);
	layer = x->storage != CLI_STORAGE_F32 ? cli_export_refused_layer(x->m) : -1;
	if (layer >= 0)
		return bnn_cli_error(a,
		                     "--storage %s: layer '%s' is %s, whose parameters "
		                     "are stored in f32 only (bf16 and int8 compress the weight "
		                     "matrices and kernels of point, meanfield and dropout layers)",
		                     cli_storage_names[x->storage], x->m->layers[layer].name,
		                     x->m->layers[layer].family);
	return BNN_CLI_OK;
}

/* Counts of a split section: compressed values, their rows, the others. */
struct cli_split {
	long q, rows, f32;
};

static struct cli_split cli_export_split(const bnn_model *m)
{
	struct cli_split c = { 0, 0, 0 };
	int t;
	for (t = 0; t < m->ntensors; t++)
		if (cli_export_compressed(&m->tensors[t])) {
			c.q += m->tensors[t].size;
			c.rows += m->tensors[t].shape[0];
		}
	c.f32 = m->nparams - c.q;
	return c;
}

/* The rows of the compressed tensors in order (a dense weight's output
 * rows, a kernel's output channels): the row of each int8 scale. */
struct cli_rows {
	const bnn_model *m;
	int t;         /* the tensor */
	long r;        /* its row, -1 before the first */
	long off, len; /* the row: len values at off in the section */
};

static void cli_rows_begin(struct cli_rows *it, const bnn_model *m)
{
	it->m = m;
	it->t = -1;
	it->r = 0;
	it->off = it->len = 0;
}

/* Moves to the next row; 0 past the last. */
static int cli_rows_next(struct cli_rows *it)
{
	const bnn_tensor *w = it->t >= 0 ? &it->m->tensors[it->t] : NULL;
	if (w && ++it->r < w->shape[0]) {
		it->off += it->len;
		return 1;
	}
	for (it->t++; it->t < it->m->ntensors; it->t++) {
		w = &it->m->tensors[it->t];
		if (cli_export_compressed(w) && w->shape[0] > 0) {
			it->r = 0;
			it->off = w->offset;
			it->len = w->size / w->shape[0];
			return 1;
		}
	}
	return 0;
}

/* "\n\t" every 8 (or 4) values. */
static void cli_export_sep(FILE *f, long j, int per_line)
{
	fputs(j % per_line ? ", " : (j ? ",\n\t" : "\n\t"), f);
}

/* Section SEC (params or sigma) split: the compressed tensors' values
 * (bf16 as uint16_t, int8 as int8_t with one float scale per row), then
 * the others' in f32; arrays of at least one value (C has no empty one). */
static void cli_export_split_section(FILE *f, const struct cli_export *x,
                                     const struct cli_section *c, const char *up, const char *id,
                                     const char *uid)
{
	const bnn_model *m = x->m;
	struct cli_split n = cli_export_split(m);
	int sigma = strcmp(c->name, "sigma") == 0;
	int q8 = x->storage == CLI_STORAGE_INT8 && !sigma;
	struct cli_rows it;
	long j, k = 0;
	int t;

	fprintf(f,
	        "\n/* checkpoint section '%s', %s: the weight matrices and kernels, then the others */\n"
	        "#define %s_W_%s_COUNT %ldL\n"
	        "#define %s_W_%s_Q_COUNT %ldL\n"
	        "static const %s %s_w_%s_q[%ld] = {",
	        c->name, q8 ? "int8 with a scale per row" : "bf16", up, uid, c->n, up, uid, n.q,
	        q8 ? "int8_t" : "uint16_t", m->name, id, n.q > 0 ? n.q : 1);
	for (cli_rows_begin(&it, m); cli_rows_next(&it);) {
		const float *v = c->data + it.off;
		float scale = q8 ? cli_export_row_scale(v, it.len) : 0;
		for (j = 0; j < it.len; j++, k++) {
			cli_export_sep(f, k, 8);
			if (q8)
				fprintf(f, "%d", cli_export_q8(v[j], scale));
			else
				fprintf(f, "0x%04x", (unsigned)cli_export_bf16(v[j]));
		}
	}
	fputs(n.q > 0 ? "\n};\n" : "\n\t0\n};\n", f);
	if (q8) {
		fprintf(f,
		        "#define %s_W_%s_SCALE_COUNT %ldL\n"
		        "static const float %s_w_%s_scale[%ld] = {",
		        up, uid, n.rows, m->name, id, n.rows > 0 ? n.rows : 1);
		for (k = 0, cli_rows_begin(&it, m); cli_rows_next(&it); k++) {
			cli_export_sep(f, k, 4);
			cli_export_float(f, cli_export_row_scale(c->data + it.off, it.len));
		}
		fputs(n.rows > 0 ? "\n};\n" : "\n\t0x0p+0f\n};\n", f);
	}
	fprintf(f,
	        "#define %s_W_%s_F32_COUNT %ldL\n"
	        "static const float %s_w_%s[%ld] = {",
	        up, uid, n.f32, m->name, id, n.f32 > 0 ? n.f32 : 1);
	for (k = 0, t = 0; t < m->ntensors; t++) {
		const bnn_tensor *w = &m->tensors[t];
		if (cli_export_compressed(w))
			continue;
		for (j = 0; j < w->size; j++, k++) {
			cli_export_sep(f, k, 4);
			cli_export_float(f, c->data[w->offset + j]);
		}
	}
	fputs(n.f32 > 0 ? "\n};\n" : "\n\t0x0p+0f\n};\n", f);
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
	        "#define BNN_WEIGHTS_MODEL \"%s\"\n"
	        "/* How the weight matrices and kernels are stored: 0 f32, 1 bf16, 2 int8. */\n"
	        "#define %s_W_STORAGE %d\n"
	        "#define %s_W_STORAGE_NAME \"%s\"\n",
	        up, up, (unsigned long long)m->fingerprint, m->name, up, (int)x->storage, up,
	        cli_storage_names[x->storage]);
	for (s = 0; s < x->nsec; s++) {
		const struct cli_section *c = &x->sec[s];
		cli_export_ident(c->name, 0, id, sizeof id);
		cli_export_ident(c->name, 1, uid, sizeof uid);
		if (x->storage != CLI_STORAGE_F32 &&
		    (strcmp(c->name, "params") == 0 || strcmp(c->name, "sigma") == 0)) {
			cli_export_split_section(f, x, c, up, id, uid);
			continue;
		}
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

/* Replaces the compressed tensors' values of DATA (params, or sigma when
 * SIGMA) by those the storage keeps; fails on one that is not finite (a
 * float beyond bf16's largest value).  Name: the section, for the message. */
static int cli_export_round(const struct bnn_cli_args *a, const struct cli_export *x, float *data,
                            int sigma, const char *name)
{
	struct cli_rows it;
	long j;
	for (cli_rows_begin(&it, x->m); cli_rows_next(&it);) {
		const float *v = data + it.off;
		float scale = cli_export_row_scale(v, it.len);
		for (j = 0; j < it.len; j++)
			if (!isfinite(cli_export_kept(x, sigma, v[j], scale)))
				return bnn_cli_error(
				        a,
				        "%s: section '%s' value %ld is %g, beyond what "
				        "--storage %s can hold",
				        a->load, name, it.off + j, (double)v[j],
				        cli_storage_names[x->storage]);
	}
	for (cli_rows_begin(&it, x->m); cli_rows_next(&it);) { /* the checks passed */
		float *v = data + it.off;
		float scale = cli_export_row_scale(v, it.len);
		for (j = 0; j < it.len; j++)
			v[j] = cli_export_kept(x, sigma, v[j], scale);
	}
	return BNN_CLI_OK;
}

/* --rounded CKPT: the state with the values the storage keeps. */
static int cli_export_rounded(const struct bnn_cli_args *a, const struct cli_export *x,
                              bnn_state *st)
{
	bnn_err err;
	int rc = cli_export_round(a, x, st->params, 0, "params");
	if (!rc && st->sigma && cli_export_has_sigma(x->m))
		rc = cli_export_round(a, x, st->sigma, 1, "sigma");
	if (!rc && bnn_state_save(st, a->rounded, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	return rc;
}

/* What the header leaves out of the checkpoint, said on stderr (the export
 * still succeeds): a post-hoc posterior (Laplace, SWAG), of which the
 * header holds the mean network, and a temperature, which the standalone
 * inference does not apply (docs/standalone.md). */
static void cli_export_notes(const struct bnn_cli_args *a, const bnn_state *st)
{
	if (st->posthoc)
		fprintf(stderr,
		        "%s: note: %s holds a %s posterior, which the header leaves out: the "
		        "standalone inference runs its mean network\n",
		        a->prog, a->load,
		        st->posthoc->kind == BNN_POSTHOC_SWAG ? "SWAG" : "Laplace");
	if (st->temperature > 0)
		fprintf(stderr,
		        "%s: note: %s holds a temperature (T = %.9g), which the header leaves "
		        "out: the standalone inference computes the softmax of the raw logits\n",
		        a->prog, a->load, st->temperature);
}

int bnn_cli_export(const bnn_model *m, struct bnn_cli_args *a)
{
	/* a->out: the header to write (cli.c sets the default), "-" stdout */
	struct cli_export x;
	bnn_state st;
	bnn_err err;
	int rc;

	memset(&x, 0, sizeof x);
	x.m = m;
	x.ckpt = a->load;
	rc = cli_export_storage(a, &x);
	if (rc)
		return rc;
	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	cli_export_add(&x, "params", st.params, m->nparams);
	if (cli_export_has_sigma(m))
		cli_export_add(&x, "sigma", st.sigma, m->nparams);
	cli_export_add(&x, "stats", st.stats, m->nstats);
	cli_export_add(&x, "standardize.mean", st.standardize.mean, st.standardize.features);
	cli_export_add(&x, "standardize.std", st.standardize.std, st.standardize.features);
	rc = cli_export_check(a, &x);
	if (!rc && x.storage != CLI_STORAGE_F32) { /* the storage's own limits, on copies */
		bnn_state probe;
		if (bnn_state_load(&probe, m, a->load, &err))
			rc = bnn_cli_error(a, "%s", err.message);
		else {
			rc = cli_export_round(a, &x, probe.params, 0, "params");
			if (!rc && probe.sigma && cli_export_has_sigma(m))
				rc = cli_export_round(a, &x, probe.sigma, 1, "sigma");
			bnn_state_free(&probe);
		}
	}
	if (!rc && bnn_cli_write_file(a->out, cli_export_fill, &x, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	if (!rc && a->rounded)
		rc = cli_export_rounded(a, &x, &st);
	if (!rc)
		cli_export_notes(a, &st);
	bnn_state_free(&st);
	return rc;
}
