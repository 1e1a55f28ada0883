/*
 * datagen.c: writes the data sets of the runnable examples
 * (docs/examples.md), reproducibly from a seed with libbnn's generator
 * (bnn_rng_*, xoshiro256**).
 *
 *   datagen toy1d --n N [--seed S] [--range A,B]  > FILE.csv
 *       The 1-D regression toy of the BADAM paper (Kessler et al., appendix
 *       D.1): y = x + 0.3 sin(2 pi (x + e)) + 0.3 sin(4 pi (x + e)) + e,
 *       x uniform in (A, B), e ~ N(0, 0.02).  The paper writes N(0, 0.02)
 *       without saying whether 0.02 is the variance or the standard
 *       deviation; we read it as the variance (the usual N(mean, variance)
 *       convention), so e has standard deviation sqrt(0.02) = 0.1414.  One
 *       draw of e per point is used in all three places, as the formula is
 *       written.  CSV with a header "x,y", rows sorted by x (the order does
 *       not matter to training, which shuffles, and sorted predictions plot
 *       as a curve).
 *
 *   datagen hetero --n N [--seed S] [--range A,B]  > FILE.csv
 *       A heteroscedastic 1-D toy: y = sin(x) + (0.05 + 0.15 |x|) e with
 *       e ~ N(0, 1), x uniform in (A, B) (default 0,6): the noise's
 *       standard deviation grows from 0.05 at x = 0 to 0.95 at x = 6, so a
 *       model must learn the variance as a function of x (`make hetero`).
 *       The same CSV layout and options as toy1d.
 *
 *   datagen images DIR [--n-train N] [--n-test M] [--seed S]
 *       A synthetic stand-in for Fashion-MNIST, in its file format: gzip IDX
 *       files DIR/train-images-idx3-ubyte.gz, DIR/train-labels-idx1-ubyte.gz,
 *       DIR/t10k-images-idx3-ubyte.gz, DIR/t10k-labels-idx1-ubyte.gz (28x28
 *       u8 images, labels 0-9).  Each class is a drawn garment (T-shirt,
 *       trouser, pullover, dress, coat, sandal, shirt, sneaker, bag, ankle
 *       boot, in Fashion-MNIST's label order) whose proportions vary at
 *       random, shifted, scaled, dimmed, textured and cut by a random
 *       occluding bar.  The look-alike classes overlap on purpose, as in
 *       the real data: a shirt is a T-shirt with a collar drawn at a random
 *       strength (sometimes none), a coat a pullover with a front opening
 *       that may barely show.  So an MLP learns it well above chance (10%)
 *       but not perfectly.
 *
 *   datagen split IN HEAD TAIL --at N
 *       The first N examples of the IDX u8 file IN (images or labels) to
 *       HEAD, the others to TAIL (gzip IDX): `make compare` holds out the
 *       last 6,000 training images this way, as the validation file that
 *       training, `calibrate` and `eval --conformal` share.
 *
 *   datagen ood IN OUT [--transform rot90|flip]
 *       An out-of-distribution image set for `eval --ood`, made from the IDX
 *       u8 image file IN (rank 3: n x rows x cols, gzip or plain) by one
 *       fixed transformation of every image, written to OUT as gzip IDX (no
 *       labels: OOD detection needs none).  rot90 (the default) turns each
 *       image a quarter turn clockwise (rows and cols swap), so trousers lie
 *       down and shoes stand on their heels; flip turns it upside down.  The
 *       pixels and their histogram stay exactly those of IN: what changes is
 *       only the layout, so a detector cannot tell the sets apart by
 *       brightness or contrast, only by shape.  `make compare` uses the
 *       Fashion-MNIST test images turned by rot90 (docs/examples.md): it is
 *       the larger change of shape (bags, trousers and dresses look much
 *       the same upside down, few classes look like themselves turned) and the
 *       harder test for detection by predictive entropy (an MLP trained
 *       with Adam is *more* confident on the turned images than on real
 *       ones: OOD AUROC 0.44, against 0.71 for the flipped ones).
 *
 * Exit status: 0 success, 1 an I/O error, 2 a usage error.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <zlib.h>

#include "bnn.h"

#define DG_OK    0
#define DG_FAIL  1 /* I/O */
#define DG_USAGE 2

#define DG_PI      3.14159265358979323846
#define DG_SIDE    28 /* image height and width */
#define DG_CLASSES 10
#define DG_MAX_N   10000000L

static const char *dg_prog = "datagen";

static void dg_help(void)
{
	printf("Usage: %s toy1d --n N [--seed S] [--range A,B] > FILE.csv\n"
	       "       %s hetero --n N [--seed S] [--range A,B] > FILE.csv\n"
	       "       %s images DIR [--n-train N] [--n-test M] [--seed S]\n"
	       "       %s ood IN OUT [--transform rot90|flip]\n"
	       "       %s split IN HEAD TAIL --at N\n"
	       "Write the data sets of bnnc's runnable examples (docs/examples.md).\n"
	       "\n"
	       "toy1d   N points of the BADAM paper's 1-D toy (appendix D.1) as CSV with\n"
	       "        columns x,y on standard output, sorted by x:\n"
	       "          y = x + 0.3 sin(2 pi (x + e)) + 0.3 sin(4 pi (x + e)) + e\n"
	       "        with x uniform in (A, B) (default 0,0.5) and e ~ N(0, 0.02),\n"
	       "        0.02 read as the variance (standard deviation 0.1414).\n"
	       "hetero  N points of a heteroscedastic 1-D toy, as toy1d's CSV:\n"
	       "          y = sin(x) + (0.05 + 0.15 |x|) e,  e ~ N(0, 1)\n"
	       "        with x uniform in (A, B) (default 0,6).\n"
	       "images  a synthetic stand-in for Fashion-MNIST: 28x28 grey images of 10\n"
	       "        classes of noisy garment drawings, written to DIR (created if\n"
	       "        missing) as the gzip IDX files train-images-idx3-ubyte.gz,\n"
	       "        train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and\n"
	       "        t10k-labels-idx1-ubyte.gz (defaults: 60000 training and 10000\n"
	       "        test images, as in Fashion-MNIST).\n"
	       "ood     an out-of-distribution image set: every image of the IDX u8 image\n"
	       "        file IN (such as t10k-images-idx3-ubyte.gz) turned a quarter turn\n"
	       "        clockwise (--transform rot90, the default) or upside down\n"
	       "        (--transform flip), written to OUT as a gzip IDX file.\n"
	       "split   the first N examples of the IDX u8 file IN (images or labels) to\n"
	       "        HEAD, the others to TAIL, both gzip IDX: with the same N for an\n"
	       "        image file and its labels, a validation set held out as files.\n"
	       "\n"
	       "--seed S  the random seed (default 1): the same seed, the same files.\n"
	       "Exit status: 0 on success, 1 on an I/O error, 2 on a usage error.\n",
	       dg_prog, dg_prog, dg_prog, dg_prog, dg_prog);
}

/* "PROG: message" on stderr, without the newline. */
static void dg_say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", dg_prog);
	vfprintf(stderr, fmt, ap);
}

static int dg_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int dg_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dg_say(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", dg_prog);
	return DG_USAGE;
}

static int dg_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int dg_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dg_say(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return DG_FAIL;
}

/* Whether an argument asks for the help (--help or -h). */
static int dg_is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* ---- option parsing ------------------------------------------------------ */

/* A count in [min, DG_MAX_N]; DG_OK or a usage error naming the option. */
static int dg_count(const char *opt, const char *s, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno == ERANGE || v < min || v > DG_MAX_N)
		return dg_usage("%s: '%s' is not a whole number in [%ld, %ld]", opt, s, min,
		                DG_MAX_N);
	*out = v;
	return DG_OK;
}

static int dg_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end || errno == ERANGE || s[0] == '-')
		return dg_usage("--seed: '%s' is not a whole number in [0, 2^64)", s);
	*out = (uint64_t)v;
	return DG_OK;
}

/* "A,B" with A < B, both finite. */
static int dg_range(const char *text, double *a, double *b)
{
	const char *s = text;
	char *end;

	errno = 0;
	*a = strtod(s, &end);
	if (end == s || *end != ',' || errno == ERANGE || !isfinite(*a))
		goto bad;
	s = end + 1;
	*b = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(*b))
		goto bad;
	if (!(*a < *b))
		return dg_usage("--range: the lower end %g must be below the upper end %g", *a, *b);
	return DG_OK;
bad:
	return dg_usage("--range takes two numbers A,B (such as 0,0.5), not '%s'", text);
}

/*
 * Splits argv[i] into an option name and its value ("--n 5" or "--n=5").
 * Returns the value (advancing *i past it), or NULL after reporting a usage
 * error; *name receives the option name (up to '=').
 */
static const char *dg_value(int argc, char **argv, int *i, char *name, size_t size)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');

	snprintf(name, size, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	if (eq)
		return eq + 1;
	if (*i + 1 < argc)
		return argv[++*i];
	dg_usage("option '%s' needs a value", name);
	return NULL;
}

/* ---- toy1d --------------------------------------------------------------- */

struct dg_point {
	double x, y;
};

static int dg_point_cmp(const void *pa, const void *pb)
{
	const struct dg_point *a = pa, *b = pb;
	return (a->x > b->x) - (a->x < b->x);
}

/* The BADAM toy's y at x, with one noise draw z ~ N(0, 1) used in all three
 * places, as the paper's formula is written: e ~ N(0, 0.02), 0.02 the
 * variance. */
static double dg_toy1d_y(double x, double z)
{
	double e = sqrt(0.02) * z;
	return x + 0.3 * sin(2 * DG_PI * (x + e)) + 0.3 * sin(4 * DG_PI * (x + e)) + e;
}

/* The heteroscedastic toy's y at x: a sine under noise whose standard
 * deviation 0.05 + 0.15 |x| grows with the distance from 0. */
static double dg_hetero_y(double x, double z)
{
	return sin(x) + (0.05 + 0.15 * fabs(x)) * z;
}

/* A 1-D toy: its name for messages, its default range and its y(x, z). */
struct dg_curve {
	const char *name;
	double lo, hi;
	double (*y)(double x, double z);
};

static const struct dg_curve dg_curves[] = {
	{ "toy1d", 0.0, 0.5, dg_toy1d_y },
	{ "hetero", 0.0, 6.0, dg_hetero_y },
};

/* datagen toy1d|hetero: N points (x uniform in the range, one normal draw
 * per point) as CSV "x,y" on standard output, sorted by x. */
static int dg_curve_csv(const struct dg_curve *c, int argc, char **argv)
{
	long n = -1, i;
	uint64_t seed = 1;
	double lo = c->lo, hi = c->hi;
	struct dg_point *pts;
	bnn_rng rng;
	char name[64];
	int rc, j;

	for (j = 2; j < argc; j++) {
		const char *v;
		if (dg_is_help(argv[j])) {
			dg_help();
			return DG_OK;
		}
		if (strncmp(argv[j], "--", 2) != 0)
			return dg_usage("%s: unexpected argument '%s'", c->name, argv[j]);
		if (!(v = dg_value(argc, argv, &j, name, sizeof name)))
			return DG_USAGE;
		if (strcmp(name, "--n") == 0)
			rc = dg_count("--n", v, 1, &n);
		else if (strcmp(name, "--seed") == 0)
			rc = dg_seed(v, &seed);
		else if (strcmp(name, "--range") == 0)
			rc = dg_range(v, &lo, &hi);
		else
			rc = dg_usage("%s: unknown option '%s' (%s takes --n, --seed, --range)",
			              c->name, name, c->name);
		if (rc)
			return rc;
	}
	if (n < 0)
		return dg_usage("%s needs --n N, the number of points", c->name);
	pts = malloc((size_t)n * sizeof *pts);
	if (!pts)
		return dg_fail("out of memory for %ld points", n);
	bnn_rng_seed(&rng, seed);
	for (i = 0; i < n; i++) {
		float z;
		double x = lo + (hi - lo) * bnn_rng_uniform(&rng);
		bnn_rng_normal(&rng, &z, 1);
		pts[i].x = x;
		pts[i].y = c->y(x, (double)z);
	}
	qsort(pts, (size_t)n, sizeof *pts, dg_point_cmp);
	printf("x,y\n");
	for (i = 0; i < n; i++)
		printf("%.9g,%.9g\n", pts[i].x, pts[i].y);
	free(pts);
	if (fflush(stdout) != 0 || ferror(stdout))
		return dg_fail("error writing standard output: %s", strerror(errno));
	return DG_OK;
}

/* ---- images -------------------------------------------------------------- */

/* The random variations of one garment, drawn once per image. */
struct dg_shape {
	double sleeve; /* sleeve length, as a fraction of the arm span */
	double width;  /* body half-width */
	double height; /* body half-height */
	double detail; /* strength of the class's distinguishing detail */
	double flare;  /* dress: widening towards the hem */
};

static int dg_inside(double u, double v, double u0, double v0, double u1, double v1)
{
	return u >= u0 && u <= u1 && v >= v0 && v <= v1;
}

/*
 * The intensity (0 to 1) of class c's garment at (u, v), both in [-1, 1]
 * (u to the right, v downwards), before shifting, scaling and noise.
 */
static double dg_garment(int c, const struct dg_shape *s, double u, double v)
{
	double w = s->width, h = s->height, au = fabs(u);

	switch (c) {
	case 0: /* T-shirt: torso and short sleeves */
	case 6: /* shirt: the same with a collar and a button line (detail) */
	case 2: /* pullover: torso and long sleeves */
	case 4: /* coat: a pullover with a dark front opening (detail) */
		if (dg_inside(au, v, 0, -h, w, h)) {
			if (c == 4 && au < 0.06)
				return 1.0 - s->detail;
			if (c == 6 && au < 0.04 && ((int)floor((v + 1) * 10) % 2 == 0))
				return 1.0 - 0.6 * s->detail;
			if (c == 6 && v < -h + 0.2 && au < 0.25 && au > 0.1)
				return 1.0 - 0.7 * s->detail; /* the collar's outline */
			return 0.85;
		}
		/* sleeves: from the shoulder outwards and down */
		if (au > w && au < w + 0.22 + 0.15 * s->sleeve && v > -h &&
		    v < -h + 0.35 + 1.3 * s->sleeve * h)
			return 0.75;
		return 0;
	case 1: /* trouser: two legs from a waistband */
		if (dg_inside(au, v, 0, -h, w, -h + 0.15))
			return 0.9;
		if (dg_inside(au, v, 0.05 + 0.1 * s->detail, -h, w, h))
			return 0.8;
		return 0;
	case 3: { /* dress: narrow top widening to the hem */
		double half = 0.18 + (w + s->flare - 0.18) * (v + h) / (2 * h);
		return dg_inside(au, v, 0, -h, half, h) ? 0.8 : 0;
	}
	case 5: /* sandal: thin straps over a sole */
		if (dg_inside(u, v, -w - 0.2, 0.45, w + 0.2, 0.55))
			return 0.8;
		if (v > 0.05 && v < 0.45 && fmod(u + 2.0, 0.3 + 0.1 * s->detail) < 0.08)
			return 0.7;
		return 0;
	case 7: /* sneaker: a low shoe, higher at the heel */
		if (v > 0.55 || v < 0.05)
			return 0;
		if (u < -w - 0.2 || u > w + 0.2)
			return 0;
		if (v < 0.3 && u > 0.1 * s->detail)
			return 0; /* the low front */
		return v > 0.45 ? 0.95 : 0.7;
	case 8: /* bag: a box with a handle */
		if (dg_inside(au, v, 0, -0.2, w + 0.15, h))
			return 0.75;
		if (v > -h - 0.3 && v < -0.2 && fabs(hypot(u / 0.45, (v + 0.2) / 0.4) - 1) < 0.15)
			return 0.6;
		return 0;
	case 9: /* ankle boot: a tall shaft on a foot */
		if (dg_inside(u, v, -w, -h, 0.1, h))
			return 0.8;
		if (dg_inside(u, v, 0.1, 0.2, w + 0.35, h))
			return 0.8;
		return 0;
	}
	return 0;
}

/* Draws a uniform double in [a, b). */
static double dg_uniform(bnn_rng *rng, double a, double b)
{
	return a + (b - a) * bnn_rng_uniform(rng);
}

/* Renders one image of class c into img (DG_SIDE * DG_SIDE bytes). */
static void dg_render(bnn_rng *rng, int c, unsigned char *img)
{
	struct dg_shape s;
	float noise[DG_SIDE * DG_SIDE];
	double dx, dy, scale, bright, tex, bu0, bv0, bu1, bv1;
	int r, k, bar;

	s.sleeve = c == 2 || c == 4 ? dg_uniform(rng, 0.6, 1.0) : dg_uniform(rng, 0.0, 0.35);
	s.width = dg_uniform(rng, 0.35, 0.55);
	s.height = dg_uniform(rng, 0.6, 0.85);
	s.flare = dg_uniform(rng, 0.1, 0.4);
	/* The class's detail, from invisible to clear: where it is faint, a
	 * shirt looks like a T-shirt and a coat like a pullover. */
	s.detail = dg_uniform(rng, 0.0, 1.0);
	dx = dg_uniform(rng, -0.15, 0.15);
	dy = dg_uniform(rng, -0.15, 0.15);
	scale = dg_uniform(rng, 0.85, 1.15);
	bright = dg_uniform(rng, 0.55, 1.0);
	tex = dg_uniform(rng, 0.0, 0.35);
	/* One occluding bar (horizontal or vertical) in half the images. */
	bar = (int)bnn_rng_below(rng, 4);
	bu0 = dg_uniform(rng, -1, 0.8);
	bv0 = dg_uniform(rng, -1, 0.8);
	bu1 = bar == 1 ? bu0 + 0.2 : 1;
	bv1 = bar == 2 ? bv0 + 0.2 : 1;
	if (bar == 1)
		bv0 = -1;
	if (bar == 2)
		bu0 = -1;
	bnn_rng_normal(rng, noise, DG_SIDE * DG_SIDE);
	for (r = 0; r < DG_SIDE; r++)
		for (k = 0; k < DG_SIDE; k++) {
			/* pixel centre in [-1, 1], then into the garment's frame */
			double pu = (k + 0.5) / (DG_SIDE / 2.0) - 1,
			       pv = (r + 0.5) / (DG_SIDE / 2.0) - 1;
			double u = (pu - dx) / scale, v = (pv - dy) / scale;
			double g = dg_garment(c, &s, u, v), z = noise[r * DG_SIDE + k];
			if (g > 0)
				g = bright * g * (1 + tex * z);
			if ((bar == 1 || bar == 2) && dg_inside(pu, pv, bu0, bv0, bu1, bv1))
				g = 0;
			g += 0.08 * fabs(z); /* background speckle */
			g = g < 0 ? 0 : g > 1 ? 1 : g;
			img[r * DG_SIDE + k] = (unsigned char)lrint(255 * g);
		}
}

/* Writes a big-endian 32-bit integer. */
static int dg_put32(gzFile f, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
		               (unsigned char)(v >> 8), (unsigned char)v };
	return gzwrite(f, b, 4) == 4 ? 0 : -1;
}

/* Writes an IDX u8 array to path atomically (a temporary, renamed): n
 * labels (rows = 0, rank 1) or n images of rows x cols (rank 3); DG_OK or
 * DG_FAIL after saying why. */
static int dg_write_idx(const char *path, const unsigned char *data, long n, long rows, long cols)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len);
	gzFile f;
	int bad, errnum, rank = rows > 0 ? 3 : 1;
	long i, per = rank == 3 ? rows * cols : 1;

	if (!tmp)
		return dg_fail("out of memory");
	snprintf(tmp, len, "%s.tmp", path);
	errno = 0;
	f = gzopen(tmp, "wb");
	if (!f) {
		errnum = errno;
		free(tmp);
		return dg_fail("cannot create %s: %s", path,
		               errnum ? strerror(errnum) : "out of memory");
	}
	bad = dg_put32(f, 0x00000800u | (uint32_t)rank) || dg_put32(f, (uint32_t)n);
	if (rank == 3)
		bad = bad || dg_put32(f, (uint32_t)rows) || dg_put32(f, (uint32_t)cols);
	for (i = 0; i < n && !bad; i++)
		bad = gzwrite(f, data + i * per, (unsigned)per) != (int)per;
	errno = 0;
	if (bad) {
		int zerr;
		const char *msg = gzerror(f, &zerr);
		errnum = errno;
		gzclose(f);
		remove(tmp);
		free(tmp);
		return dg_fail("cannot write %s: %s", path,
		               zerr == Z_ERRNO ? strerror(errnum) : msg);
	}
	if (gzclose(f) != Z_OK) {
		errnum = errno;
		remove(tmp);
		free(tmp);
		return dg_fail("cannot write %s: %s", path,
		               errnum ? strerror(errnum) : "error closing the gzip stream");
	}
	if (rename(tmp, path) != 0) {
		errnum = errno;
		remove(tmp);
		free(tmp);
		return dg_fail("cannot write %s: %s", path, strerror(errnum));
	}
	free(tmp);
	return DG_OK;
}

/* Renders n images with balanced, shuffled labels and writes both files. */
static int dg_image_set(bnn_rng *rng, const char *dir, const char *prefix, long n)
{
	unsigned char *img = malloc((size_t)n * DG_SIDE * DG_SIDE), *lab = malloc((size_t)n);
	long *order = malloc((size_t)n * sizeof *order);
	char path[4096];
	long i;
	int rc = DG_FAIL;

	if (!img || !lab || !order) {
		dg_fail("out of memory for %ld images", n);
		goto done;
	}
	for (i = 0; i < n; i++)
		order[i] = i % DG_CLASSES; /* equally many of each class (as in Fashion-MNIST) */
	bnn_rng_shuffle(rng, order, n);
	for (i = 0; i < n; i++) {
		lab[i] = (unsigned char)order[i];
		dg_render(rng, lab[i], img + i * DG_SIDE * DG_SIDE);
	}
	if ((size_t)snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefix) >=
	    sizeof path) {
		dg_fail("%s: the directory name is too long", dir);
		goto done;
	}
	if (dg_write_idx(path, img, n, DG_SIDE, DG_SIDE))
		goto done;
	snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
	if (dg_write_idx(path, lab, n, 0, 0))
		goto done;
	rc = DG_OK;
done:
	free(img);
	free(lab);
	free(order);
	return rc;
}

static int dg_images(int argc, char **argv)
{
	long ntrain = 60000, ntest = 10000;
	uint64_t seed = 1;
	const char *dir = NULL;
	bnn_rng rng;
	char name[64];
	int rc, j;

	for (j = 2; j < argc; j++) {
		const char *v;
		if (dg_is_help(argv[j])) {
			dg_help();
			return DG_OK;
		}
		if (strncmp(argv[j], "--", 2) != 0) {
			if (dir)
				return dg_usage("images: one directory only ('%s' and '%s')", dir,
				                argv[j]);
			dir = argv[j];
			continue;
		}
		if (!(v = dg_value(argc, argv, &j, name, sizeof name)))
			return DG_USAGE;
		if (strcmp(name, "--n-train") == 0)
			rc = dg_count("--n-train", v, 1, &ntrain);
		else if (strcmp(name, "--n-test") == 0)
			rc = dg_count("--n-test", v, 1, &ntest);
		else if (strcmp(name, "--seed") == 0)
			rc = dg_seed(v, &seed);
		else
			rc = dg_usage("images: unknown option '%s' (images takes --n-train, "
			              "--n-test, --seed)",
			              name);
		if (rc)
			return rc;
	}
	if (!dir || !*dir)
		return dg_usage("images needs DIR, the directory to write to");
	if (mkdir(dir, 0777) != 0) {
		struct stat sb;
		if (errno != EEXIST)
			return dg_fail("cannot create the directory %s: %s", dir, strerror(errno));
		if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return dg_fail("%s exists and is not a directory", dir);
	}
	bnn_rng_seed(&rng, seed);
	rc = dg_image_set(&rng, dir, "train", ntrain);
	if (!rc)
		rc = dg_image_set(&rng, dir, "t10k", ntest);
	return rc;
}

/* ---- ood ----------------------------------------------------------------- */

#define DG_MAX_SIDE 4096 /* the largest image side ood accepts */

/* Reads a big-endian 32-bit integer; 0, or -1 at the end of the data. */
static int dg_get32(gzFile f, uint32_t *v)
{
	unsigned char b[4];

	if (gzread(f, b, 4) != 4)
		return -1;
	*v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return 0;
}

/* Why reading f failed: zlib's message or the system's. */
static const char *dg_gz_why(gzFile f, int errnum)
{
	int zerr;
	const char *msg = gzerror(f, &zerr);

	if (zerr == Z_ERRNO)
		return errnum ? strerror(errnum) : "read error";
	return zerr == Z_OK ? "the file ends early" : msg;
}

/*
 * Reads the IDX u8 file path (gzip or plain: zlib reads both) into *data
 * (malloc'ed, owned by the caller), with its count and image size: images
 * (rank 3; rank must be 3) or, when rank is 0, images or labels (rank 1:
 * *rows = *cols = 0, as dg_write_idx takes them); DG_OK, or DG_FAIL after
 * naming the file and the problem.
 */
static int dg_read_idx(const char *path, int rank, unsigned char **data, long *n, long *rows,
                       long *cols)
{
	gzFile f;
	uint32_t magic, dim[3] = { 0, 0, 0 };
	unsigned char extra;
	size_t size, got = 0;
	int errnum, i;

	*data = NULL;
	errno = 0;
	f = gzopen(path, "rb");
	if (!f)
		return dg_fail("cannot open %s: %s", path,
		               errno ? strerror(errno) : "out of memory");
	errno = 0;
	if (dg_get32(f, &magic)) {
		errnum = errno;
		dg_fail("%s: cannot read the IDX header: %s", path, dg_gz_why(f, errnum));
		goto fail;
	}
	if ((magic >> 8) != 0x08) {
		dg_fail("%s: not an IDX file of unsigned bytes (magic number 0x%08lx, expected "
		        "0x00000803)",
		        path, (unsigned long)magic);
		goto fail;
	}
	if (rank == 3 ? (magic & 0xff) != 3 : (magic & 0xff) != 3 && (magic & 0xff) != 1) {
		dg_fail("%s: an IDX file of rank %u, expected %s", path, (unsigned)(magic & 0xff),
		        rank == 3 ? "images (rank 3)" : "images (rank 3) or labels (rank 1)");
		goto fail;
	}
	rank = (int)(magic & 0xff);
	for (i = 0; i < rank; i++)
		if (dg_get32(f, &dim[i])) {
			errnum = errno;
			dg_fail("%s: cannot read the IDX header: %s", path, dg_gz_why(f, errnum));
			goto fail;
		}
	if (dim[0] < 1 || dim[0] > DG_MAX_N) {
		dg_fail("%s: %lu %s: expected 1 to %ld", path, (unsigned long)dim[0],
		        rank == 3 ? "images" : "labels", DG_MAX_N);
		goto fail;
	}
	if (rank == 3 &&
	    (dim[1] < 1 || dim[1] > DG_MAX_SIDE || dim[2] < 1 || dim[2] > DG_MAX_SIDE)) {
		dg_fail("%s: images of %lux%lu pixels: each side must be 1 to %d", path,
		        (unsigned long)dim[1], (unsigned long)dim[2], DG_MAX_SIDE);
		goto fail;
	}
	*n = (long)dim[0];
	*rows = (long)dim[1];
	*cols = (long)dim[2];
	size = (size_t)*n * (rank == 3 ? (size_t)*rows * (size_t)*cols : 1);
	if (!(*data = malloc(size))) {
		dg_fail("out of memory for the %ld images of %s", *n, path);
		goto fail;
	}
	while (got < size) {
		size_t want = size - got > (1u << 30) ? (1u << 30) : size - got;
		int r;
		errno = 0;
		r = gzread(f, *data + got, (unsigned)want);
		if (r <= 0) {
			errnum = errno;
			dg_fail("%s: %ld %s need %zu bytes after the header, read %zu: %s", path,
			        *n, rank == 3 ? "images" : "labels", size, got,
			        r < 0 ? dg_gz_why(f, errnum) : "the file ends early");
			goto fail;
		}
		got += (size_t)r;
	}
	if (gzread(f, &extra, 1) == 1) {
		dg_fail("%s: data after the %ld %s the header announces", path, *n,
		        rank == 3 ? "images" : "labels");
		goto fail;
	}
	gzclose(f);
	return DG_OK;
fail:
	gzclose(f);
	free(*data);
	*data = NULL;
	return DG_FAIL;
}

/* The transformations of `datagen ood`. */
enum {
	DG_ROT90,
	DG_FLIP
};

/*
 * One image of rows x cols pixels (row-major) transformed into out:
 * rot90, a quarter turn clockwise, gives cols x rows with
 * out[i][j] = in[rows - 1 - j][i] (the left column becomes the top row);
 * flip gives rows x cols with out[i][j] = in[rows - 1 - i][j].
 */
static void dg_transform(int how, const unsigned char *in, long rows, long cols, unsigned char *out)
{
	long i, j;

	if (how == DG_ROT90) {
		for (i = 0; i < cols; i++)
			for (j = 0; j < rows; j++)
				out[i * rows + j] = in[(rows - 1 - j) * cols + i];
	} else {
		for (i = 0; i < rows; i++)
			memcpy(out + i * cols, in + (rows - 1 - i) * cols, (size_t)cols);
	}
}

static int dg_ood(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	unsigned char *img, *res;
	long n = 0, rows = 0, cols = 0, i;
	int how = DG_ROT90, rc, j;
	char name[64];

	for (j = 2; j < argc; j++) {
		const char *v;
		if (dg_is_help(argv[j])) {
			dg_help();
			return DG_OK;
		}
		if (strncmp(argv[j], "--", 2) != 0) {
			if (!in)
				in = argv[j];
			else if (!out)
				out = argv[j];
			else
				return dg_usage(
				        "ood: takes two files, IN and OUT ('%s' is a third)",
				        argv[j]);
			continue;
		}
		if (!(v = dg_value(argc, argv, &j, name, sizeof name)))
			return DG_USAGE;
		if (strcmp(name, "--transform") != 0)
			return dg_usage("ood: unknown option '%s' (ood takes --transform)", name);
		if (strcmp(v, "rot90") == 0)
			how = DG_ROT90;
		else if (strcmp(v, "flip") == 0)
			how = DG_FLIP;
		else
			return dg_usage(
			        "--transform: '%s' is not a transformation (use rot90 or flip)", v);
	}
	if (!in || !*in || !out || !*out)
		return dg_usage("ood needs IN and OUT, the IDX image file to read and the one to "
		                "write");
	if ((rc = dg_read_idx(in, 3, &img, &n, &rows, &cols)))
		return rc;
	if (!(res = malloc((size_t)n * (size_t)rows * (size_t)cols))) {
		free(img);
		return dg_fail("out of memory for the %ld images of %s", n, in);
	}
	for (i = 0; i < n; i++)
		dg_transform(how, img + i * rows * cols, rows, cols, res + i * rows * cols);
	rc = how == DG_ROT90 ? dg_write_idx(out, res, n, cols, rows)
	                     : dg_write_idx(out, res, n, rows, cols);
	free(img);
	free(res);
	return rc;
}

/*
 * datagen split IN HEAD TAIL --at N: the first N examples of the IDX u8
 * file IN (images or labels) to HEAD, the others to TAIL, in their order.
 * Applied to an image file and its label file with the same N, it holds
 * out the last examples as a validation set that `calibrate` and
 * `eval --conformal` can read (the driver's own valid_fraction split is
 * internal to `train`).
 */
static int dg_split(int argc, char **argv)
{
	const char *file[3] = { NULL, NULL, NULL };
	unsigned char *data;
	long at = -1, n = 0, rows = 0, cols = 0, per;
	int rc, j, nfiles = 0;
	char name[64];

	for (j = 2; j < argc; j++) {
		const char *v;
		if (dg_is_help(argv[j])) {
			dg_help();
			return DG_OK;
		}
		if (strncmp(argv[j], "--", 2) != 0) {
			if (nfiles == 3)
				return dg_usage("split: takes three files, IN, HEAD and TAIL ('%s' "
				                "is a fourth)",
				                argv[j]);
			file[nfiles++] = argv[j];
			continue;
		}
		if (!(v = dg_value(argc, argv, &j, name, sizeof name)))
			return DG_USAGE;
		if (strcmp(name, "--at") != 0)
			return dg_usage("split: unknown option '%s' (split takes --at)", name);
		if ((rc = dg_count("--at", v, 1, &at)))
			return rc;
	}
	if (nfiles < 3 || !*file[0] || !*file[1] || !*file[2])
		return dg_usage("split needs IN, HEAD and TAIL, the IDX file to read and the two "
		                "to write");
	if (at < 0)
		return dg_usage("split needs --at N, the number of examples HEAD gets");
	if ((rc = dg_read_idx(file[0], 0, &data, &n, &rows, &cols)))
		return rc;
	if (at >= n) {
		free(data);
		return dg_usage("--at %ld: %s holds %ld examples, so TAIL would be empty (use 1 to "
		                "%ld)",
		                at, file[0], n, n - 1);
	}
	per = rows > 0 ? rows * cols : 1;
	rc = dg_write_idx(file[1], data, at, rows, cols);
	if (rc == DG_OK)
		rc = dg_write_idx(file[2], data + at * per, n - at, rows, cols);
	free(data);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 0 && argv[0] && *argv[0]) {
		const char *slash = strrchr(argv[0], '/');
		dg_prog = slash ? slash + 1 : argv[0];
	}
	if (argc < 2)
		return dg_usage("no data set named: use toy1d, hetero, images, ood or split");
	if (dg_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		dg_help();
		return fflush(stdout) == 0 ? DG_OK : DG_FAIL;
	}
	for (size_t k = 0; k < sizeof dg_curves / sizeof dg_curves[0]; k++)
		if (strcmp(argv[1], dg_curves[k].name) == 0)
			return dg_curve_csv(&dg_curves[k], argc, argv);
	if (strcmp(argv[1], "images") == 0)
		return dg_images(argc, argv);
	if (strcmp(argv[1], "ood") == 0)
		return dg_ood(argc, argv);
	if (strcmp(argv[1], "split") == 0)
		return dg_split(argc, argv);
	return dg_usage("unknown data set '%s': use toy1d, hetero, images, ood or split", argv[1]);
}
