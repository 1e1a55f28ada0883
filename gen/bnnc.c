/* bnnc.c: the command line of the .bnn compiler.
 *
 *   bnnc [--main] [-o OUT.c] FILE   generate OUT.c and OUT.h (default: the
 *                               model file's name with .c and .h, in the
 *                               current directory)
 *   bnnc --standalone [-o OUT.c] FILE
 *                               generate OUT.c and OUT.h, the model's inference
 *                               with no dependency (default: the model file's
 *                               name with _infer.c and _infer.h), which include
 *                               the weights header OUT_weights.h; with
 *                               --analytic, also the one-pass analytic
 *                               predictive of a meanfield network
 *   bnnc --check FILE...        report problems; print nothing for a clean model
 *   bnnc --summary [-o OUT] FILE...
 *                               a table of each model's layers and parameters
 *
 * FILE may be '-' for standard input.  Exit status: 0 when every model is
 * valid (warnings allowed), 1 when a model has errors or a file cannot be
 * read or written, 2 for a usage error.  This is the only place in the
 * front end that turns diagnostics into an exit status.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "common/paths.h"
#include "front.h"
#include "codegen.h"
#include "standalone.h"
#include "summary.h"

enum bnnc_mode {
	MODE_NONE,
	MODE_CHECK,
	MODE_SUMMARY,
	MODE_GENERATE
};

struct bnnc_options {
	enum bnnc_mode mode;
	const char *output; /* -o FILE, or NULL for the default */
	int with_main;      /* --main: generate a main() too */
	int standalone;     /* --standalone: the inference target */
	int analytic;       /* --analytic: its one-pass analytic predictive too */
	char **files;       /* borrowed from argv */
	int nfiles;
	char *c_path; /* code generation: the C file to write (owned) */
	char *h_path; /* code generation: its header (owned) */
	char *w_name; /* --standalone: the weights header's name (owned) */
};

static void bnnc_help(FILE *out)
{
	fputs("Usage: bnnc [--main] [-o OUTPUT.c] FILE\n"
	      "       bnnc --standalone [--analytic] [-o OUTPUT.c] FILE\n"
	      "       bnnc --check FILE...\n"
	      "       bnnc --summary [-o OUTPUT] FILE...\n"
	      "Compile a .bnn model into C, check model files, or describe them.\n"
	      "\n"
	      "Actions:\n"
	      "  (default)          write the model as C: OUTPUT.c (forward, loss and\n"
	      "                     backward pass, the bnn_model descriptor) and its\n"
	      "                     header OUTPUT.h; without -o, the model file's name\n"
	      "                     with .c and .h in the current directory\n"
	      "  --main             also write a main() into the C file, so that\n"
	      "                     `cc OUTPUT.c $(pkg-config --cflags --libs libbnn)`\n"
	      "                     builds a program with train, eval and predict\n"
	      "  --standalone       write the model's inference alone: OUTPUT.c and\n"
	      "                     OUTPUT.h, C99 with no libbnn, malloc or stdio (and\n"
	      "                     no libm with -D<MODEL>_NO_LIBM), which include the\n"
	      "                     trained values from OUTPUT_weights.h, written by\n"
	      "                     the model's driver: `./MODEL export --load CKPT`;\n"
	      "                     without -o, the model file's name with _infer.c\n"
	      "                     and _infer.h (docs/standalone.md)\n"
	      "  --analytic         with --standalone: add MODEL_predict_analytic, the\n"
	      "                     predictive in one deterministic pass that propagates\n"
	      "                     means and variances (dense layers, point or\n"
	      "                     meanfield, relu, leaky_relu, flatten, identity,\n"
	      "                     concat; any other op or family is an error)\n"
	      "  --check            check each FILE and report every problem found;\n"
	      "                     a valid model prints nothing (warnings aside)\n"
	      "  --summary          print a table of each model: nodes, ops, output\n"
	      "                     shapes, posterior families, parameters of the point\n"
	      "                     network and of the posterior, and the overhead\n"
	      "Options:\n"
	      "  -o, --output FILE  the C file to write (its header goes next to it, with\n"
	      "                     .h for .c), or the summary's file instead of\n"
	      "                     standard output\n"
	      "  -h, --help         show this help and exit\n"
	      "  -V, --version      show the version and exit\n"
	      "\n"
	      "FILE may be '-' for standard input.  Diagnostics go to standard error in\n"
	      "the form FILE:LINE:COLUMN: error: MESSAGE.\n"
	      "Exit status: 0 if every model is valid, 1 if a model has errors or a file\n"
	      "cannot be read or written, 2 if the command line is wrong.\n"
	      "The language is described in docs/language.md, the generated code and\n"
	      "the driver in docs/bnnc.md and docs/driver.md.\n",
	      out);
}

static int bnnc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bnnc_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("bnnc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'bnnc --help' for more information.\n", stderr);
	return 2;
}

static int bnnc_set_mode(struct bnnc_options *o, enum bnnc_mode m, const char *arg)
{
	if (o->mode != MODE_NONE && o->mode != m)
		return bnnc_usage_error("'%s' cannot be combined with another action", arg);
	o->mode = m;
	return 0;
}

/* Is PATH one of the input files: the same file (device and inode) under
 * whatever name? */
static int bnnc_is_input(const struct bnnc_options *o, const char *path)
{
	int i;
	for (i = 0; i < o->nfiles; i++)
		if (strcmp(o->files[i], "-") != 0 && bnn_path_same_file(o->files[i], path))
			return 1;
	return 0;
}

/* Standard input can be read once; no file bnnc writes (the C file and the
 * header, or the summary) may be an input. */
static int bnnc_check_files(const struct bnnc_options *o)
{
	const char *outputs[2];
	int i, n = 0, stdin_uses = 0;
	for (i = 0; i < o->nfiles; i++)
		stdin_uses += strcmp(o->files[i], "-") == 0;
	if (stdin_uses > 1)
		return bnnc_usage_error("%s", "standard input ('-') can be read only once");
	if (o->mode == MODE_GENERATE) {
		outputs[n++] = o->c_path;
		outputs[n++] = o->h_path;
	} else if (o->output) {
		outputs[n++] = o->output;
	}
	for (i = 0; i < n; i++)
		if (bnnc_is_input(o, outputs[i]))
			return bnnc_usage_error("the output '%s' is one of the input files",
			                        outputs[i]);
	return -1;
}

/* Derives the output names of code generation into O: "OUT.c" and "OUT.h"
 * from -o, or from the model file's base name.  The header's name must fit
 * in the C file's #include line.  Returns -1 to go on, or an exit status. */
static int bnnc_output_names(struct bnnc_options *o)
{
	const char *src = o->files[0], *base = strrchr(src, '/'), *problem;
	size_t n;
	if (o->output) {
		n = strlen(o->output);
		if (n < 3 || strcmp(o->output + n - 2, ".c") != 0 || o->output[n - 3] == '/')
			return bnnc_usage_error("-o '%s' must name a C file ending in .c",
			                        o->output);
		o->c_path = strdup(o->output);
	} else {
		base = base ? base + 1 : src;
		n = strlen(base);
		if (n > 4 && strcmp(base + n - 4, ".bnn") == 0)
			n -= 4;
		o->c_path = malloc(n + 10);
		if (o->c_path)
			snprintf(o->c_path, n + 10, "%.*s%s.c", (int)n, base,
			         o->standalone ? "_infer" : "");
	}
	if (o->c_path)
		o->h_path = strdup(o->c_path);
	if (o->c_path && o->standalone) { /* OUT.c: OUT_weights.h */
		const char *b = codegen_basename(o->c_path);
		n = strlen(b) - 2;
		o->w_name = malloc(n + 12);
		if (o->w_name)
			snprintf(o->w_name, n + 12, "%.*s_weights.h", (int)n, b);
	}
	if (!o->c_path || !o->h_path || (o->standalone && !o->w_name)) {
		fputs("bnnc: out of memory\n", stderr);
		return 1;
	}
	o->h_path[strlen(o->h_path) - 1] = 'h';
	if ((problem = codegen_include_problem(o->h_path)))
		return bnnc_usage_error("the header '%s' cannot be named in an #include line "
		                        "(its name contains %s); choose another name with -o",
		                        o->h_path, problem);
	return -1;
}

/* Parses argv into O.  Returns -1 to go on, or an exit status. */
static int bnnc_parse_args(int argc, char **argv, struct bnnc_options *o)
{
	int i, r, only_files = 0;
	memset(o, 0, sizeof *o);
	o->files = calloc((size_t)argc, sizeof *o->files);
	if (!o->files) {
		fputs("bnnc: out of memory\n", stderr);
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		r = 0;
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
			o->files[o->nfiles++] = argv[i];
		} else if (strcmp(a, "--") == 0) {
			only_files = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			bnnc_help(stdout);
			return 0;
		} else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			printf("bnnc %s\n", bnn_version());
			return 0;
		} else if (strcmp(a, "--check") == 0) {
			r = bnnc_set_mode(o, MODE_CHECK, a);
		} else if (strcmp(a, "--summary") == 0) {
			r = bnnc_set_mode(o, MODE_SUMMARY, a);
		} else if (strcmp(a, "--main") == 0) {
			o->with_main = 1;
		} else if (strcmp(a, "--standalone") == 0) {
			o->standalone = 1;
		} else if (strcmp(a, "--analytic") == 0) {
			o->analytic = 1;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if (i + 1 >= argc)
				return bnnc_usage_error("option '%s' needs a file name", a);
			o->output = argv[++i];
		} else if (strncmp(a, "--output=", 9) == 0) {
			o->output = a + 9;
		} else if (strncmp(a, "-o", 2) == 0) {
			o->output = a + 2;
		} else {
			return bnnc_usage_error("unknown option '%s'", a);
		}
		if (r)
			return r;
	}
	if (o->mode == MODE_NONE)
		o->mode = MODE_GENERATE;
	if (o->nfiles == 0)
		return bnnc_usage_error("%s", "no input files");
	if (o->with_main && o->mode != MODE_GENERATE)
		return bnnc_usage_error(
		        "%s", "--main goes with code generation, not --check or --summary");
	if (o->standalone && o->mode != MODE_GENERATE)
		return bnnc_usage_error(
		        "%s", "--standalone goes with code generation, not --check or --summary");
	if (o->standalone && o->with_main)
		return bnnc_usage_error("%s",
		                        "--standalone does not go with --main: the standalone "
		                        "file has no driver (its weights come from the "
		                        "driver's export command)");
	if (o->analytic && !o->standalone)
		return bnnc_usage_error("%s", "--analytic goes with --standalone: it adds a "
		                              "predictive to the standalone inference file");
	if (o->output && o->mode == MODE_CHECK)
		return bnnc_usage_error("%s", "-o does not go with --check");
	if (o->output && !o->output[0])
		return bnnc_usage_error("%s", "-o needs a file name");
	if (o->mode == MODE_GENERATE && o->nfiles > 1)
		return bnnc_usage_error(
		        "%s", "code generation takes one model file (use --check for several)");
	if (o->mode == MODE_GENERATE && !o->output && strcmp(o->files[0], "-") == 0)
		return bnnc_usage_error(
		        "%s",
		        "-o is needed to name the output when the model comes from standard input");
	if (o->mode == MODE_GENERATE && (r = bnnc_output_names(o)) >= 0)
		return r;
	return bnnc_check_files(o);
}

/* Compiles the one model file into C. */
static int bnnc_generate(const struct bnnc_options *o, struct front *f)
{
	struct codegen_options co;
	if (o->standalone) {
		struct standalone_options so;
		so.source = f->src.name;
		so.c_path = o->c_path;
		so.h_path = o->h_path;
		so.w_name = o->w_name;
		so.analytic = o->analytic;
		return standalone_write(&f->graph, &so, &f->diag);
	}
	memset(&co, 0, sizeof co);
	co.source = f->src.name;
	co.c_path = o->c_path;
	co.h_path = o->h_path;
	co.with_main = o->with_main;
	return codegen_write(&f->graph, &co, &f->diag);
}

/* Writes every summary to OUTPUT only once all models are valid, so a
 * failed run never leaves a half-written file. */
static int bnnc_run(const struct bnnc_options *o)
{
	struct front *fronts = calloc(o->nfiles > 0 ? (size_t)o->nfiles : 1, sizeof *fronts);
	FILE *out = stdout;
	int i, status = 0;
	if (!fronts) {
		fputs("bnnc: out of memory\n", stderr);
		return 1;
	}
	for (i = 0; i < o->nfiles; i++)
		if (front_compile(&fronts[i], o->files[i], stderr) != FRONT_OK)
			status = 1;
	if (status == 0 && o->mode == MODE_GENERATE)
		status = bnnc_generate(o, &fronts[0]);
	if (status == 0 && o->mode == MODE_SUMMARY) {
		if (o->output && !(out = fopen(o->output, "w"))) {
			fprintf(stderr, "bnnc: cannot write %s: %s\n", o->output, strerror(errno));
			status = 1;
		}
		for (i = 0; i < o->nfiles && out; i++) {
			if (i > 0)
				fputc('\n', out);
			summary_print(out, &fronts[i].graph, fronts[i].src.name);
		}
		if (out && (fflush(out) != 0 || ferror(out) || (o->output && fclose(out) != 0))) {
			fprintf(stderr, "bnnc: error writing %s\n",
			        o->output ? o->output : "standard output");
			status = 1;
		}
	}
	for (i = 0; i < o->nfiles; i++)
		front_free(&fronts[i]);
	free(fronts);
	return status;
}

int main(int argc, char **argv)
{
	struct bnnc_options o;
	int status = bnnc_parse_args(argc, argv, &o);
	if (status < 0)
		status = bnnc_run(&o);
	free(o.files);
	free(o.c_path);
	free(o.h_path);
	free(o.w_name);
	return status;
}
