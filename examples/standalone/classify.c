/*
 * classify.c: Fashion-MNIST classification with uncertainty, using only a
 * model's `bnnc --standalone` file (no libbnn): the Monte-Carlo predictive
 * of each test image, and a refusal to answer when its predictive entropy
 * is above a threshold (docs/standalone.md, "Porting guide", step 6).
 *
 * The generated file needs nothing but the caller; this program adds the
 * host's I/O around it: it reads the IDX image and label files (gzip or
 * plain: through zlib's gzread, which reads both, when built with
 * -DCLASSIFY_ZLIB; plain files through stdio otherwise), scales the pixels
 * to [0, 1] as libbnn's reader does (byte / 255), and prints
 *
 *   image I label L predicted P p PMAX entropy H mi MI answered|refused
 *
 * per image with --per-image, then the coverage (the fraction of images
 * answered) and the accuracy on the answered images and on all of them.
 *
 * Usage: classify [--mc S] [--seed N] [--max-entropy H] [--limit N]
 *                 [--per-image] IMAGES LABELS
 *   --mc S           Monte-Carlo samples of the predictive (32; 0: the
 *                    posterior-mean pass, whose mutual information is 0)
 *   --seed N         the samples' seed (1)
 *   --max-entropy H  refuse an image whose predictive entropy is above H
 *                    nats (0.5; ln 10 = 2.303 answers every image)
 *   --limit N        the first N images only
 *
 * Built for one model with -DCLASSIFY_MODEL=name -DCLASSIFY_UP=NAME
 * -DCLASSIFY_HEADER='"name_infer.h"' (the API's names are made from them;
 * examples/standalone/build.sh does it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CLASSIFY_ZLIB
#include <zlib.h>
#endif

#include CLASSIFY_HEADER

#define CL_CAT_(a, b)     a##b
#define CL_CAT(a, b)      CL_CAT_(a, b)
#define CL_INPUTS         CL_CAT(CLASSIFY_UP, _INPUTS)
#define CL_OUTPUTS        CL_CAT(CLASSIFY_UP, _OUTPUTS)
#define CL_OUT_FLOATS     CL_CAT(CLASSIFY_UP, _OUT_FLOATS)
#define CL_SUMMARY_FLOATS CL_CAT(CLASSIFY_UP, _SUMMARY_FLOATS)
#define CL_WS_BYTES       CL_CAT(CLASSIFY_UP, _WORKSPACE_BYTES)
#define CL_PREDICT        CL_CAT(CLASSIFY_MODEL, _predict_summary)

/* The workspace, in static RAM as on a device. */
static double cl_ws[(CL_WS_BYTES + 7) / 8];

/* ---- IDX files ------------------------------------------------------------- */

#ifdef CLASSIFY_ZLIB
typedef gzFile cl_file;
#define cl_open(path)         gzopen(path, "rb")
#define cl_read(f, buf, size) gzread(f, buf, (unsigned)(size))
#define cl_close(f)           gzclose(f)
#else
typedef FILE *cl_file;
#define cl_open(path)         fopen(path, "rb")
#define cl_read(f, buf, size) (int)fread(buf, 1, size, f)
#define cl_close(f)           fclose(f)
#endif

/* An IDX file of unsigned bytes: its sizes and its elements. */
struct cl_idx {
	int rank;
	long dims[4];
	long count; /* elements: the product of dims */
	unsigned char *data;
};

static void cl_die(const char *path, const char *what)
{
	fprintf(stderr, "classify: %s: %s\n", path, what);
	exit(1);
}

/* Reads PATH, an IDX file of unsigned bytes (type 0x08) of rank 1 to 4,
 * whole; exits with a message naming the file on any error. */
static void cl_idx_read(const char *path, struct cl_idx *x)
{
	unsigned char head[4 + 4 * 4];
	cl_file f = cl_open(path);
	int i;
	if (!f)
		cl_die(path, errno ? strerror(errno) : "cannot open");
	if (cl_read(f, head, 4) != 4 || head[0] != 0 || head[1] != 0)
		cl_die(path, "not an IDX file (its first two bytes are not zero)");
	if (head[2] != 0x08)
		cl_die(path, "not an IDX file of unsigned bytes (type 0x08)");
	x->rank = head[3];
	if (x->rank < 1 || x->rank > 4)
		cl_die(path, "an IDX rank other than 1 to 4");
	if (cl_read(f, head + 4, 4 * x->rank) != 4 * x->rank)
		cl_die(path, "truncated in its header");
	x->count = 1;
	for (i = 0; i < x->rank; i++) {
		const unsigned char *b = head + 4 + 4 * i;
		x->dims[i] = (long)b[0] << 24 | (long)b[1] << 16 | (long)b[2] << 8 | (long)b[3];
		if (x->dims[i] <= 0 || x->dims[i] > (1L << 24) ||
		    x->count > (1L << 30) / x->dims[i])
			cl_die(path, "a size that is 0 or too large");
		x->count *= x->dims[i];
	}
	x->data = malloc((size_t)x->count + 1);
	if (!x->data)
		cl_die(path, "out of memory");
	if (cl_read(f, x->data, x->count) != (int)x->count)
		cl_die(path, "truncated: fewer elements than its sizes say");
	if (cl_read(f, x->data + x->count, 1) != 0)
		cl_die(path, "longer than its sizes say");
	cl_close(f);
}

/* ---- options ----------------------------------------------------------------- */

struct cl_opts {
	int mc;
	unsigned long seed;
	double max_entropy;
	long limit;
	int per_image;
	const char *images, *labels;
};

static void cl_usage(void)
{
	fputs("usage: classify [--mc S] [--seed N] [--max-entropy H] [--limit N] [--per-image]"
	      " IMAGES LABELS\n",
	      stderr);
	exit(2);
}

/* A number in [lo, hi] from option NAME's argument, or the usage. */
static double cl_number(const char *name, const char *arg, double lo, double hi)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "classify: %s: '%s' is not a number in [%g, %g]\n", name, arg, lo,
		        hi);
		exit(2);
	}
	return v;
}

static void cl_args(int argc, char **argv, struct cl_opts *o)
{
	int i, files = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--per-image")) {
			o->per_image = 1;
		} else if (a[0] == '-' && a[1] == '-' && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(a, "--mc"))
				o->mc = (int)cl_number(a, v, 0, 100000);
			else if (!strcmp(a, "--seed"))
				o->seed = (unsigned long)cl_number(a, v, 0, 4294967295.0);
			else if (!strcmp(a, "--max-entropy"))
				o->max_entropy = cl_number(a, v, 0, 1e9);
			else if (!strcmp(a, "--limit"))
				o->limit = (long)cl_number(a, v, 1, 1e9);
			else
				cl_usage();
		} else if (a[0] != '-' && files < 2) {
			*(files++ == 0 ? &o->images : &o->labels) = a;
		} else {
			cl_usage();
		}
	}
	if (files != 2)
		cl_usage();
}

/* ---- the classification -------------------------------------------------- */

static long cl_argmax(const float *p)
{
	long j, best = 0;
	for (j = 1; j < CL_OUTPUTS; j++)
		if (p[j] > p[best])
			best = j;
	return best;
}

int main(int argc, char **argv)
{
	struct cl_opts o = { 32, 1, 0.5, 0, 0, NULL, NULL };
	struct cl_idx im, lb;
	float x[CL_INPUTS], out[CL_OUT_FLOATS], summary[CL_SUMMARY_FLOATS];
	long n, i, j, answered = 0, right = 0, right_all = 0;

	cl_args(argc, argv, &o);
	cl_idx_read(o.images, &im);
	cl_idx_read(o.labels, &lb);
	if (im.count / im.dims[0] != CL_INPUTS) {
		fprintf(stderr, "classify: %s: images of %ld values, but the model takes %ld\n",
		        o.images, im.count / im.dims[0], (long)CL_INPUTS);
		return 1;
	}
	if (lb.rank != 1 || lb.dims[0] != im.dims[0]) {
		fprintf(stderr, "classify: %s: %ld labels for %ld images\n", o.labels, lb.dims[0],
		        im.dims[0]);
		return 1;
	}
	n = o.limit > 0 && o.limit < im.dims[0] ? o.limit : im.dims[0];
	for (i = 0; i < n; i++) {
		long label = lb.data[i], pred;
		int ok;
		for (j = 0; j < CL_INPUTS; j++)
			x[j] = (float)im.data[i * CL_INPUTS + j] / 255.0f; /* as libbnn's reader */
		/* one call per image, as a device sees them: each call's example
		 * is its example 0, so seed + i gives each image noise of its own */
		if (CL_PREDICT(x, 1, o.mc, (uint64_t)o.seed + (uint64_t)i, cl_ws, sizeof cl_ws, out,
		               summary) != 0) {
			fputs("classify: the predictive failed (workspace or arguments)\n", stderr);
			return 1;
		}
		pred = cl_argmax(out);
		ok = summary[0] <= o.max_entropy;
		answered += ok;
		right += ok && pred == label;
		right_all += pred == label;
		if (o.per_image)
			printf("image %ld label %ld predicted %ld p %.4f entropy %.4f mi %.4f %s\n",
			       i, label, pred, (double)out[pred], (double)summary[0],
			       (double)summary[2], ok ? "answered" : "refused");
	}
	printf("images %ld answered %ld coverage %.4f (max entropy %.4f nats, mc %d)\n", n,
	       answered, n ? (double)answered / (double)n : 0.0, o.max_entropy, o.mc);
	printf("accuracy answered %.4f (%ld of %ld) all %.4f (%ld of %ld)\n",
	       answered ? (double)right / (double)answered : 0.0, right, answered,
	       n ? (double)right_all / (double)n : 0.0, right_all, n);
	free(im.data);
	free(lb.data);
	return 0;
}
