/*
 * plot_svg.c: libbnn's one chart writer (bnn_plot.h).  Every chart kind is
 * turned into a struct plot_chart, a list of layers of four kinds (bands,
 * bars, lines, points) over two axes, and written by plot_write(): first
 * the checks that need the data (something finite to draw, a finite axis
 * span), then the SVG and the CSV, each through bnn_file_replace().  The
 * public functions at the end only check their arguments, build the
 * layers and write their own CSV; the SVG mechanism is shared.
 *
 * The SVG is SVG 1.1 with no external references: a white background, grid
 * lines and tick labels, the data clipped to the plot area (bands first,
 * then bars, lines and points, so lines stay visible over filled areas),
 * the frame, the title, the axis labels and the legend.  Numbers are
 * written with '.' as the decimal point whatever the C locale (plot_dot()),
 * so files are valid in any locale.  Text is escaped for XML and reduced
 * to valid UTF-8 (plot_xml()); that text and number writing is shared with
 * the other drawings of this folder through plot_internal.h.
 */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "bnn_plot.h"
#include "common/utf8.h"
#include "plot_internal.h"

/* ---- canvas layout (pixels) --------------------------------------------- */

#define PLOT_WIDTH       800
#define PLOT_HEIGHT      480
#define PLOT_LEFT        72.0                                /* plot area: x from PLOT_LEFT ... */
#define PLOT_RIGHT       580.0                               /* ... to PLOT_RIGHT */
#define PLOT_TOP         48.0                                /* y from PLOT_TOP ... */
#define PLOT_BOTTOM      416.0                               /* ... to PLOT_BOTTOM */
#define PLOT_LEGEND_X    596.0                               /* left edge of the legend */
#define PLOT_LEGEND_TEXT (PLOT_WIDTH - PLOT_LEGEND_X - 40.0) /* its width */
#define PLOT_CHAR_WIDTH  6.8 /* a generous mean advance at font-size 12 */
#define PLOT_MAX_TICKS   64  /* safety bound of the tick loops */

/* Series colours, used in order and then again (8 distinct hues). */
static const char *const plot_palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
};
#define PLOT_NCOLOURS ((int)(sizeof plot_palette / sizeof plot_palette[0]))
#define PLOT_GREY     7 /* palette index of the grey used for reference lines */

/* Layer kinds, in drawing order (earlier kinds are drawn below later). */
enum plot_kind {
	PLOT_BAND,   /* filled area between lo[] and hi[] over x[] */
	PLOT_BARS,   /* rectangles [x[i], x2[i]] × [0, y[i]] */
	PLOT_LINE,   /* a polyline through (x[i], y[i]) */
	PLOT_POINTS, /* a marker at each (x[i], y[i]) */
	PLOT_NKINDS
};

/* One layer of a chart; the arrays are borrowed. */
struct plot_layer {
	enum plot_kind kind;
	const char *name; /* legend text; NULL or "": no legend entry */
	int colour;       /* index into plot_palette (taken modulo) */
	double opacity;   /* fill opacity of bands and bars */
	int dashed;       /* lines: dashed stroke */
	long n;           /* number of points or bars */
	const double *x;  /* x, or the bars' left edges */
	const double *x2; /* bars: right edges; NULL otherwise */
	const double *y;  /* y, or the bars' heights; NULL for a band */
	const double *lo; /* band: lower ends; NULL otherwise */
	const double *hi; /* band: upper ends; NULL otherwise */
};

/* One axis: the domain shown and the tick spacing. */
struct plot_axis {
	double lo, hi; /* the domain, lo < hi, hi - lo finite */
	double step;   /* tick spacing, > 0 */
};

/* A chart: labels, layers and axes. */
struct plot_chart {
	const char *title;  /* NULL or "": none */
	const char *xlabel; /* NULL or "": none */
	const char *ylabel; /* NULL or "": none */
	int fixed_x;        /* ax.lo/ax.hi given (else from the data) */
	int fixed_y;        /* ay.lo/ay.hi given (else from the data) */
	int y_zero;         /* automatic y domain includes 0 */
	const struct plot_layer *layer;
	int nlayers;
	struct plot_axis ax, ay; /* filled by plot_domain() */
};

/* ---- text and numbers --------------------------------------------------- */

/*
 * The length of the valid UTF-8 character at p (common/utf8.h) when it is
 * also allowed in XML 1.0, else 0: besides what is not UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, a code point above
 * U+10FFFF, or a truncated sequence: the NUL terminator is not a
 * continuation byte), XML forbids U+FFFE and U+FFFF.  Control characters
 * are left to plot_xml().
 */
static size_t plot_utf8_len(const unsigned char *p)
{
	unsigned long cp;
	size_t len = bnn_text_utf8_len(p, SIZE_MAX, &cp);

	if (len == 0 || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

/* Write s as XML character data or attribute text: markup characters as
 * entities, anything not valid UTF-8 or not allowed in XML 1.0 as '?'. */
void plot_xml(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		size_t len = plot_utf8_len(p);

		if (len == 0) {
			fputc('?', f);
			p++;
			continue;
		}
		if (len > 1) {
			fwrite(p, 1, len, f);
			p += len;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
				fputc('?', f);
			else
				fputc(*p, f);
		}
		p++;
	}
}

/* The number of characters plot_xml() writes for s (one per valid UTF-8
 * sequence or replaced byte), to estimate the width of a label. */
static size_t plot_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, len;

	while (*p != '\0') {
		len = plot_utf8_len(p);
		p += len > 0 ? len : 1;
		n++;
	}
	return n;
}

/* Write s as one CSV field: as is, or quoted (quotes doubled) when it
 * holds a comma, a quote or a line break (RFC 4180).  NULL is empty. */
static void plot_csv_text(FILE *f, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\n\r") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Replace the C locale's decimal point in buf (printf output) by '.'. */
void plot_dot(char *buf)
{
	const char *dp = localeconv()->decimal_point;
	size_t dlen;
	char *at;

	if (dp == NULL || strcmp(dp, ".") == 0 || dp[0] == '\0')
		return;
	dlen = strlen(dp);
	at = strstr(buf, dp);
	if (at == NULL)
		return;
	*at = '.';
	memmove(at + 1, at + dlen, strlen(at + dlen) + 1);
}

/* The shortest "%.Ng" form of v that reads back as v (at most 17 digits),
 * or "" when v is not finite. */
static void plot_num(char *buf, size_t size, double v)
{
	int prec;

	buf[0] = '\0';
	if (!isfinite(v))
		return;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	plot_dot(buf);
}

/* Write v to a CSV file (plot_num()). */
static void plot_csv_num(FILE *f, double v)
{
	char buf[40];

	plot_num(buf, sizeof buf, v);
	fputs(buf, f);
}

/* Write a pixel coordinate with 2 decimals; clamped so that a point far
 * outside the plot area (clipped anyway) cannot print hundreds of digits. */
static void plot_px_out(FILE *f, double v)
{
	char buf[40];

	if (!(v > -1e6))
		v = -1e6;
	else if (v > 1e6)
		v = 1e6;
	snprintf(buf, sizeof buf, "%.2f", v);
	plot_dot(buf);
	fputs(buf, f);
}

/* ---- axes --------------------------------------------------------------- */

/* A tick spacing of 1, 2 or 5 × 10^k giving about five intervals. */
static double plot_nice_step(double span)
{
	double raw = span / 5.0;
	double mag = pow(10.0, floor(log10(raw)));
	double r = raw / mag;

	if (r < 1.5)
		return mag;
	if (r < 3.0)
		return 2.0 * mag;
	if (r < 7.0)
		return 5.0 * mag;
	return 10.0 * mag;
}

/*
 * Set up axis a for data in [lo, hi] (lo <= hi, both finite): a fixed
 * domain is kept as is; an automatic one is widened to whole ticks (a
 * single value v first to v ± |v|/10, or ± ½ when v is 0).
 * @return 0, or -1 when the span is not finite or the step underflows.
 */
static int plot_axis_set(struct plot_axis *a, double lo, double hi, int fixed)
{
	if (!fixed && lo == hi) {
		double d = lo != 0.0 ? fabs(lo) * 0.1 : 0.5;

		lo -= d;
		hi += d;
	}
	if (!isfinite(hi - lo) || !(hi > lo))
		return -1;
	a->step = plot_nice_step(hi - lo);
	if (!(a->step > 0.0) || !isfinite(a->step))
		return -1;
	if (!fixed) {
		lo = floor(lo / a->step) * a->step;
		hi = ceil(hi / a->step) * a->step;
		if (!isfinite(hi - lo) || !(hi > lo))
			return -1;
	}
	a->lo = lo;
	a->hi = hi;
	return 0;
}

/* The label of tick value t on an axis with spacing step: as many
 * decimals as the step needs ("0.2", "15"), %g for extreme magnitudes. */
static void plot_tick_label(char *buf, size_t size, double t, double step)
{
	if (fabs(t) < step * 1e-6)
		t = 0.0; /* not "-0" or "5.55e-17" */
	if (step >= 1e-6 && fabs(t) < 1e9) {
		int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);

		snprintf(buf, size, "%.*f", dec, t);
	} else {
		snprintf(buf, size, "%.3g", t);
	}
	plot_dot(buf);
}

/* Is point i of layer l drawable (every coordinate it uses finite)? */
static int plot_finite(const struct plot_layer *l, long i)
{
	if (!isfinite(l->x[i]))
		return 0;
	switch (l->kind) {
	case PLOT_BAND:
		return isfinite(l->lo[i]) && isfinite(l->hi[i]);
	case PLOT_BARS:
		return isfinite(l->x2[i]) && isfinite(l->y[i]);
	default:
		return isfinite(l->y[i]);
	}
}

/*
 * Fill c->ax and c->ay: fixed domains are kept, automatic ones cover every
 * finite point of every layer (bars from 0; y from 0 when c->y_zero).
 * @return BNN_OK, or BNN_EINVAL when nothing is finite or a span is not.
 */
static int plot_domain(struct plot_chart *c, const char *who, bnn_err *err)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	long i, count = 0;
	int k;

	for (k = 0; k < c->nlayers; k++) {
		const struct plot_layer *l = &c->layer[k];

		for (i = 0; i < l->n; i++) {
			double y0, y1;

			if (!plot_finite(l, i))
				continue;
			count++;
			xlo = fmin(xlo, l->x[i]);
			xhi = fmax(xhi, l->x[i]);
			if (l->kind == PLOT_BARS) {
				xlo = fmin(xlo, l->x2[i]);
				xhi = fmax(xhi, l->x2[i]);
				y0 = fmin(0.0, l->y[i]);
				y1 = fmax(0.0, l->y[i]);
			} else if (l->kind == PLOT_BAND) {
				y0 = fmin(l->lo[i], l->hi[i]);
				y1 = fmax(l->lo[i], l->hi[i]);
			} else {
				y0 = y1 = l->y[i];
			}
			ylo = fmin(ylo, y0);
			yhi = fmax(yhi, y1);
		}
	}
	if (count == 0 && (!c->fixed_x || !c->fixed_y))
		return bnn_fail(err, BNN_EINVAL, "%s: no finite value to plot", who);
	if (c->y_zero) {
		ylo = fmin(ylo, 0.0);
		yhi = fmax(yhi, 0.0);
		if (ylo == 0.0 && yhi == 0.0)
			yhi = 1.0; /* only zeros: show [0, 1], not [-0.5, 0.5] */
	}
	if (c->fixed_x) {
		xlo = c->ax.lo;
		xhi = c->ax.hi;
	}
	if (c->fixed_y) {
		ylo = c->ay.lo;
		yhi = c->ay.hi;
	}
	if (plot_axis_set(&c->ax, xlo, xhi, c->fixed_x) != 0)
		return bnn_fail(err, BNN_EINVAL,
		                "%s: the x values span [%g, %g], which "
		                "cannot be plotted",
		                who, xlo, xhi);
	if (plot_axis_set(&c->ay, ylo, yhi, c->fixed_y) != 0)
		return bnn_fail(err, BNN_EINVAL,
		                "%s: the y values span [%g, %g], which "
		                "cannot be plotted",
		                who, ylo, yhi);
	return BNN_OK;
}

/* Data to pixels. */
static double plot_px(const struct plot_chart *c, double x)
{
	return PLOT_LEFT + (x - c->ax.lo) / (c->ax.hi - c->ax.lo) * (PLOT_RIGHT - PLOT_LEFT);
}

static double plot_py(const struct plot_chart *c, double y)
{
	return PLOT_BOTTOM - (y - c->ay.lo) / (c->ay.hi - c->ay.lo) * (PLOT_BOTTOM - PLOT_TOP);
}

/* ---- SVG ---------------------------------------------------------------- */

/* Write "X,Y" (pixels) for data point (x, y). */
static void plot_xy(FILE *f, const struct plot_chart *c, double x, double y)
{
	plot_px_out(f, plot_px(c, x));
	fputc(',', f);
	plot_px_out(f, plot_py(c, y));
}

/* Write an attribute name="pixels". */
void plot_attr(FILE *f, const char *name, double v)
{
	fprintf(f, " %s=\"", name);
	plot_px_out(f, v);
	fputc('"', f);
}

/* A text element at (x, y) pixels; extra is more attributes (or ""). */
void plot_text(FILE *f, double x, double y, const char *extra, const char *text)
{
	fputs("<text", f);
	plot_attr(f, "x", x);
	plot_attr(f, "y", y);
	fprintf(f, "%s>", extra);
	plot_xml(f, text);
	fputs("</text>\n", f);
}

/* Grid lines, ticks and tick labels of both axes. */
static void plot_svg_axes(FILE *f, const struct plot_chart *c)
{
	char label[64];
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		const struct plot_axis *a = pass == 0 ? &c->ax : &c->ay;
		double first = ceil(a->lo / a->step - 1e-9) * a->step;

		for (i = 0; i < PLOT_MAX_TICKS; i++) {
			double t = first + i * a->step, p;

			if (t > a->hi + a->step * 1e-9)
				break;
			plot_tick_label(label, sizeof label, t, a->step);
			if (pass == 0) {
				p = plot_px(c, t);
				fputs("<line class=\"grid\"", f);
				plot_attr(f, "x1", p);
				plot_attr(f, "y1", PLOT_TOP);
				plot_attr(f, "x2", p);
				plot_attr(f, "y2", PLOT_BOTTOM + 5.0);
				fputs(" stroke=\"#dddddd\"/>\n", f);
				plot_text(f, p, PLOT_BOTTOM + 19.0, " text-anchor=\"middle\"",
				          label);
			} else {
				p = plot_py(c, t);
				fputs("<line class=\"grid\"", f);
				plot_attr(f, "x1", PLOT_LEFT - 5.0);
				plot_attr(f, "y1", p);
				plot_attr(f, "x2", PLOT_RIGHT);
				plot_attr(f, "y2", p);
				fputs(" stroke=\"#dddddd\"/>\n", f);
				plot_text(f, PLOT_LEFT - 8.0, p + 4.0, " text-anchor=\"end\"",
				          label);
			}
		}
	}
}

/* A band: the upper ends left to right, the lower ends back. */
static void plot_svg_band(FILE *f, const struct plot_chart *c, const struct plot_layer *l,
                          const char *colour)
{
	long i;
	int first = 1;

	for (i = 0; i < l->n; i++) {
		if (!plot_finite(l, i))
			continue;
		if (first)
			fputs("<path class=\"band\" d=\"M", f);
		else
			fputs(" L", f);
		plot_xy(f, c, l->x[i], l->hi[i]);
		first = 0;
	}
	if (first)
		return; /* nothing finite */
	for (i = l->n - 1; i >= 0; i--) {
		if (!plot_finite(l, i))
			continue;
		fputs(" L", f);
		plot_xy(f, c, l->x[i], l->lo[i]);
	}
	fprintf(f, " Z\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\"/>\n", colour,
	        l->opacity);
}

/* Bars of non-zero height. */
static void plot_svg_bars(FILE *f, const struct plot_chart *c, const struct plot_layer *l,
                          const char *colour)
{
	long i;

	for (i = 0; i < l->n; i++) {
		double x0, x1, y0, y1;

		if (!plot_finite(l, i) || l->y[i] == 0.0)
			continue;
		x0 = plot_px(c, fmin(l->x[i], l->x2[i]));
		x1 = plot_px(c, fmax(l->x[i], l->x2[i]));
		y0 = plot_py(c, fmax(l->y[i], 0.0));
		y1 = plot_py(c, fmin(l->y[i], 0.0));
		fputs("<rect class=\"bar\"", f);
		plot_attr(f, "x", x0);
		plot_attr(f, "y", y0);
		plot_attr(f, "width", x1 - x0);
		plot_attr(f, "height", y1 - y0);
		fprintf(f,
		        " fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"white\""
		        " stroke-width=\"0.5\"/>\n",
		        colour, l->opacity);
	}
}

/* A marker at data point (x, y). */
static void plot_svg_point(FILE *f, const struct plot_chart *c, double x, double y,
                           const char *colour)
{
	fputs("<circle class=\"point\"", f);
	plot_attr(f, "cx", plot_px(c, x));
	plot_attr(f, "cy", plot_py(c, y));
	fprintf(f, " r=\"3\" fill=\"%s\"/>\n", colour);
}

/* A line through the finite points (a marker when there is only one). */
static void plot_svg_line(FILE *f, const struct plot_chart *c, const struct plot_layer *l,
                          const char *colour)
{
	long i, count = 0, last = 0;

	for (i = 0; i < l->n; i++)
		if (plot_finite(l, i)) {
			count++;
			last = i;
		}
	if (count == 1)
		plot_svg_point(f, c, l->x[last], l->y[last], colour);
	if (count < 2)
		return;
	fputs("<polyline class=\"line\" points=\"", f);
	count = 0;
	for (i = 0; i < l->n; i++) {
		if (!plot_finite(l, i))
			continue;
		if (count++ > 0)
			fputc(' ', f);
		plot_xy(f, c, l->x[i], l->y[i]);
	}
	fprintf(f,
	        "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\""
	        " stroke-linejoin=\"round\"%s/>\n",
	        colour, l->dashed ? " stroke-dasharray=\"6 4\"" : "");
}

/* The legend: one entry per named layer, right of the plot area. */
static void plot_svg_legend(FILE *f, const struct plot_chart *c)
{
	double y = PLOT_TOP + 10.0, width;
	char extra[128];
	int k;

	for (k = 0; k < c->nlayers; k++) {
		const struct plot_layer *l = &c->layer[k];
		const char *colour = plot_palette[l->colour % PLOT_NCOLOURS];

		if (l->name == NULL || l->name[0] == '\0')
			continue;
		switch (l->kind) {
		case PLOT_BAND:
		case PLOT_BARS:
			fputs("<rect class=\"swatch\"", f);
			plot_attr(f, "x", PLOT_LEGEND_X);
			plot_attr(f, "y", y - 6.0);
			fprintf(f,
			        " width=\"24\" height=\"12\" fill=\"%s\""
			        " fill-opacity=\"%.2f\"/>\n",
			        colour, l->opacity);
			break;
		case PLOT_LINE:
			fputs("<line class=\"swatch\"", f);
			plot_attr(f, "x1", PLOT_LEGEND_X);
			plot_attr(f, "y1", y);
			plot_attr(f, "x2", PLOT_LEGEND_X + 24.0);
			plot_attr(f, "y2", y);
			fprintf(f, " stroke=\"%s\" stroke-width=\"2\"%s/>\n", colour,
			        l->dashed ? " stroke-dasharray=\"6 4\"" : "");
			break;
		default:
			fputs("<circle class=\"swatch\"", f);
			plot_attr(f, "cx", PLOT_LEGEND_X + 12.0);
			plot_attr(f, "cy", y);
			fprintf(f, " r=\"3\" fill=\"%s\"/>\n", colour);
			break;
		}
		/* A label estimated wider than the room left of the canvas
		 * edge gets a smaller font (not below 7) and a textLength,
		 * so that it fits rather than being cut off. */
		extra[0] = '\0';
		width = (double)plot_chars(l->name) * PLOT_CHAR_WIDTH;
		if (width > PLOT_LEGEND_TEXT) {
			snprintf(extra, sizeof extra,
			         " font-size=\"%d\""
			         " textLength=\"%d\""
			         " lengthAdjust=\"spacingAndGlyphs\"",
			         (int)fmax(7.0, floor(12.0 * PLOT_LEGEND_TEXT / width)),
			         (int)PLOT_LEGEND_TEXT);
		}
		plot_text(f, PLOT_LEGEND_X + 32.0, y + 4.0, extra, l->name);
		y += 20.0;
	}
}

/* bnn_file_replace() callback: the whole SVG document. */
static int plot_svg_fill(FILE *f, void *ctx)
{
	const struct plot_chart *c = ctx;
	int kind, k;

	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""
	        " width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
	        " font-family=\"sans-serif\" font-size=\"12\">\n",
	        PLOT_WIDTH, PLOT_HEIGHT, PLOT_WIDTH, PLOT_HEIGHT);
	fputs("<title>", f);
	plot_xml(f, c->title != NULL && c->title[0] != '\0' ? c->title : "chart");
	fputs("</title>\n", f);
	fputs("<defs><clipPath id=\"plot-area\"><rect", f);
	plot_attr(f, "x", PLOT_LEFT);
	plot_attr(f, "y", PLOT_TOP);
	plot_attr(f, "width", PLOT_RIGHT - PLOT_LEFT);
	plot_attr(f, "height", PLOT_BOTTOM - PLOT_TOP);
	fputs("/></clipPath></defs>\n", f);
	fprintf(f,
	        "<rect class=\"background\" width=\"%d\" height=\"%d\""
	        " fill=\"white\"/>\n",
	        PLOT_WIDTH, PLOT_HEIGHT);

	plot_svg_axes(f, c);

	fputs("<g clip-path=\"url(#plot-area)\">\n", f);
	for (kind = 0; kind < PLOT_NKINDS; kind++) {
		for (k = 0; k < c->nlayers; k++) {
			const struct plot_layer *l = &c->layer[k];
			const char *colour = plot_palette[l->colour % PLOT_NCOLOURS];

			if ((int)l->kind != kind)
				continue;
			if (l->kind == PLOT_BAND) {
				plot_svg_band(f, c, l, colour);
			} else if (l->kind == PLOT_BARS) {
				plot_svg_bars(f, c, l, colour);
			} else if (l->kind == PLOT_LINE) {
				plot_svg_line(f, c, l, colour);
			} else {
				long i;

				for (i = 0; i < l->n; i++)
					if (plot_finite(l, i))
						plot_svg_point(f, c, l->x[i], l->y[i], colour);
			}
		}
	}
	fputs("</g>\n", f);

	fputs("<rect class=\"frame\"", f);
	plot_attr(f, "x", PLOT_LEFT);
	plot_attr(f, "y", PLOT_TOP);
	plot_attr(f, "width", PLOT_RIGHT - PLOT_LEFT);
	plot_attr(f, "height", PLOT_BOTTOM - PLOT_TOP);
	fputs(" fill=\"none\" stroke=\"#333333\"/>\n", f);

	if (c->title != NULL && c->title[0] != '\0')
		plot_text(f, (PLOT_LEFT + PLOT_RIGHT) / 2.0, 28.0,
		          " text-anchor=\"middle\" font-size=\"16\""
		          " font-weight=\"bold\"",
		          c->title);
	if (c->xlabel != NULL && c->xlabel[0] != '\0')
		plot_text(f, (PLOT_LEFT + PLOT_RIGHT) / 2.0, PLOT_HEIGHT - 20.0,
		          " text-anchor=\"middle\"", c->xlabel);
	if (c->ylabel != NULL && c->ylabel[0] != '\0') {
		double x = 20.0, y = (PLOT_TOP + PLOT_BOTTOM) / 2.0;

		fputs("<text", f);
		plot_attr(f, "x", x);
		plot_attr(f, "y", y);
		fputs(" text-anchor=\"middle\" transform=\"rotate(-90 ", f);
		plot_px_out(f, x);
		fputc(' ', f);
		plot_px_out(f, y);
		fputs(")\">", f);
		plot_xml(f, c->ylabel);
		fputs("</text>\n", f);
	}
	plot_svg_legend(f, c);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

/*
 * Write a chart: the domain checks first (nothing written on failure),
 * then the SVG at path_svg and the CSV (csv_fill(f, csv_ctx)) at path_csv,
 * or at path_svg with ".svg" replaced by ".csv" when path_csv is NULL.
 */
static int plot_write(struct plot_chart *c, const char *path_svg, const char *path_csv,
                      int (*csv_fill)(FILE *f, void *ctx), void *csv_ctx, const char *who,
                      bnn_err *err)
{
	char *derived = NULL;
	int rc;

	rc = plot_domain(c, who, err);
	if (rc != BNN_OK)
		return rc;
	if (path_csv == NULL) {
		size_t len = strlen(path_svg);

		if (len >= 4 && strcmp(path_svg + len - 4, ".svg") == 0)
			len -= 4;
		derived = malloc(len + 5);
		if (derived == NULL)
			return bnn_fail(err, BNN_ENOMEM, "%s: out of memory for the CSV path", who);
		memcpy(derived, path_svg, len);
		memcpy(derived + len, ".csv", 5);
		path_csv = derived;
	}
	rc = bnn_file_replace(path_svg, "plot ", plot_svg_fill, c, err);
	if (rc == BNN_OK)
		rc = bnn_file_replace(path_csv, "plot data ", csv_fill, csv_ctx, err);
	free(derived);
	return rc;
}

/* The checks every chart kind starts with. */
static int plot_check_paths(const char *who, const char *path_svg, bnn_err *err)
{
	if (path_svg == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: path_svg is NULL", who);
	if (path_svg[0] == '\0')
		return bnn_fail(err, BNN_EINVAL, "%s: path_svg is empty", who);
	return BNN_OK;
}

/* Allocate n doubles (n >= 1), or NULL. */
static double *plot_doubles(long n)
{
	if (n < 1 || (unsigned long)n > SIZE_MAX / sizeof(double))
		return NULL;
	return malloc((size_t)n * sizeof(double));
}

/*
 * Start a chart: every field cleared, then its three labels and its layers;
 * the caller adds the axis settings its kind needs.
 */
static void plot_chart_start(struct plot_chart *c, const char *title, const char *xlabel,
                             const char *ylabel, const struct plot_layer *layer, int nlayers)
{
	memset(c, 0, sizeof *c);
	c->title = title;
	c->xlabel = xlabel;
	c->ylabel = ylabel;
	c->layer = layer;
	c->nlayers = nlayers;
}

/* ---- bars over the bins of [0, 1] ----------------------------------------- */

/* A chart of nbins equal-width bins of [0, 1] (the reliability diagram,
 * the PIT histogram): a bar per bin as high as height[b] (NaN: no bar) and
 * a dashed grey reference line from (0, line_y[0]) to (1, line_y[1]). */
struct plot_bin_chart {
	const char *bar_name; /* the bars' legend */
	const double *height; /* nbins */
	int nbins;            /* >= 1 */
	const double *line_y; /* 2 */
	const char *title, *xlabel, *ylabel;
	int unit_y; /* y axis [0, 1], else from 0 to the data */
};

static int plot_bin_bars(const struct plot_bin_chart *bc, const char *path_svg,
                         const char *path_csv, int (*csv_fill)(FILE *f, void *ctx), void *csv_ctx,
                         const char *who, bnn_err *err)
{
	static const double unit[2] = { 0.0, 1.0 };
	struct plot_layer layer[2];
	struct plot_chart c;
	double *lo = plot_doubles(bc->nbins), *hi = plot_doubles(bc->nbins);
	double *y = plot_doubles(bc->nbins);
	long nbar = 0;
	int b, rc;

	if (lo == NULL || hi == NULL || y == NULL) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %d bins", who, bc->nbins);
		goto done;
	}
	for (b = 0; b < bc->nbins; b++) {
		if (isnan(bc->height[b]))
			continue;
		lo[nbar] = (double)b / bc->nbins;
		hi[nbar] = (double)(b + 1) / bc->nbins;
		y[nbar] = bc->height[b];
		nbar++;
	}
	memset(layer, 0, sizeof layer);
	layer[0] = (struct plot_layer){ .kind = PLOT_BARS,
		                        .name = bc->bar_name,
		                        .colour = 0,
		                        .opacity = 0.75,
		                        .n = nbar,
		                        .x = lo,
		                        .x2 = hi,
		                        .y = y };
	layer[1] = (struct plot_layer){ .kind = PLOT_LINE,
		                        .name = "perfect calibration",
		                        .colour = PLOT_GREY,
		                        .dashed = 1,
		                        .n = 2,
		                        .x = unit,
		                        .y = bc->line_y };
	plot_chart_start(&c, bc->title, bc->xlabel, bc->ylabel, layer, 2);
	c.fixed_x = 1;
	c.ax.lo = 0.0;
	c.ax.hi = 1.0;
	if (bc->unit_y) {
		c.fixed_y = 1;
		c.ay.lo = 0.0;
		c.ay.hi = 1.0;
	} else
		c.y_zero = 1;
	rc = plot_write(&c, path_svg, path_csv, csv_fill, csv_ctx, who, err);
done:
	free(lo);
	free(hi);
	free(y);
	return rc;
}

/* ---- reliability diagram ------------------------------------------------ */

/* What the reliability CSV writer needs. */
struct plot_reliability_ctx {
	const bnn_bin *bins;
	int nbins;
};

static int plot_reliability_csv(FILE *f, void *ctx)
{
	const struct plot_reliability_ctx *r = ctx;
	int b;

	fputs("bin_lower,bin_upper,count,confidence,accuracy\n", f);
	for (b = 0; b < r->nbins; b++) {
		plot_csv_num(f, (double)b / r->nbins);
		fputc(',', f);
		plot_csv_num(f, (double)(b + 1) / r->nbins);
		fprintf(f, ",%ld,", r->bins[b].count);
		plot_csv_num(f, r->bins[b].conf);
		fputc(',', f);
		plot_csv_num(f, r->bins[b].acc);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int bnn_plot_reliability(const char *path_svg, const char *path_csv, const bnn_bin *bins, int nbins,
                         const char *title, bnn_err *err)
{
	static const char who[] = "bnn_plot_reliability";
	static const double diag[2] = { 0.0, 1.0 };
	struct plot_reliability_ctx ctx;
	double *height;
	long nonempty = 0;
	int b, rc;

	rc = plot_check_paths(who, path_svg, err);
	if (rc != BNN_OK)
		return rc;
	if (bins == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: bins is NULL", who);
	if (nbins < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: nbins is %d, need at least 1 bin", who,
		                nbins);
	for (b = 0; b < nbins; b++) {
		if (bins[b].count < 0)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: bin %d (0-based): count %ld is "
			                "negative",
			                who, b, bins[b].count);
		if (bins[b].count > 0 && (!isfinite(bins[b].conf) || !isfinite(bins[b].acc)))
			return bnn_fail(err, BNN_EINVAL,
			                "%s: bin %d (0-based): confidence %g or "
			                "accuracy %g is not finite",
			                who, b, bins[b].conf, bins[b].acc);
		if (bins[b].count > 0)
			nonempty++;
	}
	if (nonempty == 0)
		return bnn_fail(err, BNN_EINVAL, "%s: all %d bins are empty, nothing to plot", who,
		                nbins);

	height = plot_doubles(nbins);
	if (height == NULL)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %d bins", who, nbins);
	for (b = 0; b < nbins; b++) /* an empty bin draws no bar */
		height[b] = bins[b].count > 0 ? bins[b].acc : NAN;
	ctx.bins = bins;
	ctx.nbins = nbins;
	rc = plot_bin_bars(&(struct plot_bin_chart){ .bar_name = "accuracy",
	                                             .height = height,
	                                             .nbins = nbins,
	                                             .line_y = diag,
	                                             .title = title,
	                                             .xlabel = "confidence",
	                                             .ylabel = "accuracy",
	                                             .unit_y = 1 },
	                   path_svg, path_csv, plot_reliability_csv, &ctx, who, err);
	free(height);
	return rc;
}

/* ---- PIT histogram ------------------------------------------------------ */

/* What the PIT CSV writer needs. */
struct plot_pit_ctx {
	const double *fraction;
	int nbins;
};

static int plot_pit_csv(FILE *f, void *ctx)
{
	const struct plot_pit_ctx *p = ctx;
	int b;

	fputs("bin_lower,bin_upper,fraction,density\n", f);
	for (b = 0; b < p->nbins; b++) {
		plot_csv_num(f, (double)b / p->nbins);
		fputc(',', f);
		plot_csv_num(f, (double)(b + 1) / p->nbins);
		fputc(',', f);
		plot_csv_num(f, p->fraction[b]);
		fputc(',', f);
		plot_csv_num(f, p->fraction[b] * p->nbins);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int bnn_plot_pit(const char *path_svg, const char *path_csv, const double *fraction, int nbins,
                 const char *title, bnn_err *err)
{
	static const char who[] = "bnn_plot_pit";
	static const double flat[2] = { 1.0, 1.0 };
	struct plot_pit_ctx ctx;
	double *density;
	int b, rc;

	rc = plot_check_paths(who, path_svg, err);
	if (rc != BNN_OK)
		return rc;
	if (fraction == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: fraction is NULL", who);
	if (nbins < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: nbins is %d, need at least 1 bin", who,
		                nbins);
	for (b = 0; b < nbins; b++)
		if (!(fraction[b] >= 0) || !isfinite(fraction[b]))
			return bnn_fail(err, BNN_EINVAL,
			                "%s: bin %d (0-based): fraction %g is not a finite "
			                "value >= 0",
			                who, b, fraction[b]);
	density = plot_doubles(nbins);
	if (density == NULL)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %d bins", who, nbins);
	for (b = 0; b < nbins; b++)
		density[b] = fraction[b] * nbins; /* a calibrated predictive: 1 */
	ctx.fraction = fraction;
	ctx.nbins = nbins;
	rc = plot_bin_bars(&(struct plot_bin_chart){ .bar_name = "targets",
	                                             .height = density,
	                                             .nbins = nbins,
	                                             .line_y = flat,
	                                             .title = title,
	                                             .xlabel = "predictive CDF at the target (PIT)",
	                                             .ylabel = "density",
	                                             .unit_y = 0 },
	                   path_svg, path_csv, plot_pit_csv, &ctx, who, err);
	free(density);
	return rc;
}

/* ---- histograms --------------------------------------------------------- */

/* What the histogram CSV writer needs. */
struct plot_hist_ctx {
	const bnn_plot_values *series;
	int nseries, nbins;
	const double *edge; /* nbins + 1 bin edges */
	const long *count;  /* nseries × nbins counts */
	const double *frac; /* nseries × nbins fractions */
};

static int plot_hist_csv(FILE *f, void *ctx)
{
	const struct plot_hist_ctx *h = ctx;
	int s, b;

	fputs("series,bin_lower,bin_upper,count,fraction\n", f);
	for (s = 0; s < h->nseries; s++) {
		for (b = 0; b < h->nbins; b++) {
			size_t at = (size_t)s * (size_t)h->nbins + (size_t)b;

			plot_csv_text(f, h->series[s].name);
			fputc(',', f);
			plot_csv_num(f, h->edge[b]);
			fputc(',', f);
			plot_csv_num(f, h->edge[b + 1]);
			fprintf(f, ",%ld,", h->count[at]);
			plot_csv_num(f, h->frac[at]);
			fputc('\n', f);
		}
	}
	return ferror(f) ? -1 : 0;
}

/* The legend of a histogram's series: its name, and when `skipped` of its
 * n values were not finite, " (K of N not finite, not shown)" after it, so
 * the chart says what it leaves out.  A new string (the caller frees it),
 * or NULL for no legend (a NULL or empty name) and when out of memory
 * (*nomem set). */
static char *plot_hist_legend(const bnn_plot_values *v, long skipped, int *nomem)
{
	char note[64] = "";
	size_t size;
	char *name;

	if (v->name == NULL || v->name[0] == '\0')
		return NULL;
	if (skipped > 0)
		snprintf(note, sizeof note, " (%ld of %ld not finite, not shown)", skipped, v->n);
	size = strlen(v->name) + strlen(note) + 1;
	if ((name = malloc(size)) == NULL)
		*nomem = 1;
	else
		snprintf(name, size, "%s%s", v->name, note);
	return name;
}

int bnn_plot_histograms(const char *path_svg, const char *path_csv, const bnn_plot_values *series,
                        int nseries, const bnn_plot_histogram_options *options, bnn_err *err)
{
	static const char who[] = "bnn_plot_histograms";
	const int nbins = options != NULL ? options->nbins : 0;
	const double *range = options != NULL ? options->range : NULL;
	struct plot_hist_ctx ctx;
	struct plot_layer *layer = NULL;
	struct plot_chart c;
	char **legend = NULL; /* nseries: each series' legend (plot_hist_legend) */
	double *edge = NULL, *frac = NULL;
	long *count = NULL, nfinite_all = 0;
	double lo = INFINITY, hi = -INFINITY;
	size_t cells;
	long i;
	int s, b, rc, nomem = 0;

	rc = plot_check_paths(who, path_svg, err);
	if (rc != BNN_OK)
		return rc;
	if (series == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: series is NULL", who);
	if (nseries < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: nseries is %d, need at least 1 series", who,
		                nseries);
	if (options == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: options is NULL", who);
	if (nbins < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: nbins is %d, need at least 1 bin", who,
		                nbins);
	if (range != NULL && !(isfinite(range[0]) && isfinite(range[1]) && range[0] < range[1]))
		return bnn_fail(err, BNN_EINVAL,
		                "%s: range [%g, %g] is not finite with lower < "
		                "upper",
		                who, range[0], range[1]);
	for (s = 0; s < nseries; s++) {
		const bnn_plot_values *v = &series[s];

		if (v->values == NULL || v->n < 1)
			return bnn_fail(err, BNN_EINVAL, "%s: series %d (0-based, \"%s\") %s", who,
			                s, v->name != NULL ? v->name : "",
			                v->values == NULL ? "has NULL values" : "is empty");
		for (i = 0; i < v->n; i++) {
			if (!isfinite(v->values[i]))
				continue;
			nfinite_all++;
			lo = fmin(lo, v->values[i]);
			hi = fmax(hi, v->values[i]);
		}
	}
	if (nfinite_all == 0)
		return bnn_fail(err, BNN_EINVAL, "%s: no finite value to plot", who);
	if (range != NULL) {
		lo = range[0];
		hi = range[1];
	} else if (lo == hi) {
		lo -= 0.5;
		hi += 0.5;
	}
	if (!isfinite(hi - lo) || !(hi > lo))
		return bnn_fail(err, BNN_EINVAL,
		                "%s: the values span [%g, %g], which cannot be "
		                "plotted",
		                who, lo, hi);

	cells = (size_t)nseries * (size_t)nbins; /* both < 2^31 */
	if (cells > SIZE_MAX / sizeof(double) / 2)
		return bnn_fail(err, BNN_ENOMEM,
		                "%s: %d series x %d bins are "
		                "too many",
		                who, nseries, nbins);
	edge = malloc(((size_t)nbins + 1) * sizeof *edge);
	frac = malloc(cells * sizeof *frac);
	count = calloc(cells, sizeof *count);
	layer = calloc((size_t)nseries, sizeof *layer);
	legend = calloc((size_t)nseries, sizeof *legend);
	if (edge == NULL || frac == NULL || count == NULL || layer == NULL || legend == NULL) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %d series x %d bins", who,
		              nseries, nbins);
		goto done;
	}
	for (b = 0; b <= nbins; b++)
		edge[b] = b == nbins ? hi : lo + (hi - lo) * ((double)b / nbins);

	for (s = 0; s < nseries; s++) {
		const bnn_plot_values *v = &series[s];
		long *cnt = count + (size_t)s * (size_t)nbins;
		long nfinite = 0;

		for (i = 0; i < v->n; i++) {
			double x = v->values[i], pos;

			if (!isfinite(x))
				continue;
			nfinite++;
			if (x < lo || x > hi)
				continue; /* in the total, in no bin */
			pos = floor((x - lo) / (hi - lo) * nbins);
			b = pos < 0.0 ? 0 : pos >= nbins ? nbins - 1 : (int)pos;
			cnt[b]++;
		}
		for (b = 0; b < nbins; b++)
			frac[(size_t)s * (size_t)nbins + (size_t)b] =
			        nfinite > 0 ? (double)cnt[b] / (double)nfinite : 0.0;
		legend[s] = plot_hist_legend(v, v->n - nfinite, &nomem);
		layer[s] = (struct plot_layer){ .kind = PLOT_BARS,
			                        .name = legend[s],
			                        .colour = s,
			                        .opacity = 0.45,
			                        .n = nbins,
			                        .x = edge,
			                        .x2 = edge + 1,
			                        .y = frac + (size_t)s * (size_t)nbins };
	}

	if (nomem) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory for the legend", who);
		goto done;
	}
	plot_chart_start(&c, options->title, options->xlabel, "fraction of examples", layer,
	                 nseries);
	c.fixed_x = 1;
	c.ax.lo = lo;
	c.ax.hi = hi;
	c.y_zero = 1;
	ctx.series = series;
	ctx.nseries = nseries;
	ctx.nbins = nbins;
	ctx.edge = edge;
	ctx.count = count;
	ctx.frac = frac;
	rc = plot_write(&c, path_svg, path_csv, plot_hist_csv, &ctx, who, err);
done:
	for (s = 0; legend != NULL && s < nseries; s++)
		free(legend[s]);
	free(legend);
	free(edge);
	free(frac);
	free(count);
	free(layer);
	return rc;
}

/* ---- curves ------------------------------------------------------------- */

/* What the curves CSV writer needs. */
struct plot_curves_ctx {
	const bnn_plot_curve *series;
	int nseries;
};

static int plot_curves_csv(FILE *f, void *ctx)
{
	const struct plot_curves_ctx *cc = ctx;
	int s;
	long i;

	fputs("series,x,y,lower,upper\n", f);
	for (s = 0; s < cc->nseries; s++) {
		const bnn_plot_curve *v = &cc->series[s];

		for (i = 0; i < v->n; i++) {
			if (!isfinite(v->x[i]) || !isfinite(v->y[i]))
				continue;
			plot_csv_text(f, v->name);
			fputc(',', f);
			plot_csv_num(f, v->x[i]);
			fputc(',', f);
			plot_csv_num(f, v->y[i]);
			fputc(',', f);
			if (v->lower != NULL)
				plot_csv_num(f, v->lower[i]);
			fputc(',', f);
			if (v->upper != NULL)
				plot_csv_num(f, v->upper[i]);
			fputc('\n', f);
		}
	}
	return ferror(f) ? -1 : 0;
}

int bnn_plot_curves(const char *path_svg, const char *path_csv, const bnn_plot_curve *series,
                    int nseries, const bnn_plot_curves_options *options, bnn_err *err)
{
	static const bnn_plot_curves_options no_text = { NULL, NULL, NULL };
	static const char who[] = "bnn_plot_curves";
	struct plot_curves_ctx ctx;
	struct plot_layer *layer;
	struct plot_chart c;
	long i, nfinite = 0;
	int s, k = 0, rc;

	rc = plot_check_paths(who, path_svg, err);
	if (rc != BNN_OK)
		return rc;
	if (series == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: series is NULL", who);
	if (nseries < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: nseries is %d, need at least 1 series", who,
		                nseries);
	for (s = 0; s < nseries; s++) {
		const bnn_plot_curve *v = &series[s];
		const char *name = v->name != NULL ? v->name : "";

		if (v->n < 1)
			return bnn_fail(err, BNN_EINVAL, "%s: series %d (0-based, \"%s\") is empty",
			                who, s, name);
		if (v->x == NULL || v->y == NULL)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: series %d (0-based, \"%s\"): %s is "
			                "NULL",
			                who, s, name, v->x == NULL ? "x" : "y");
		if ((v->lower == NULL) != (v->upper == NULL))
			return bnn_fail(err, BNN_EINVAL,
			                "%s: series %d (0-based, \"%s\"): lower "
			                "and upper must both be given or both "
			                "NULL",
			                who, s, name);
		if (v->style != BNN_PLOT_LINE && v->style != BNN_PLOT_POINTS)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: series %d (0-based, \"%s\"): style "
			                "%d is not BNN_PLOT_LINE or "
			                "BNN_PLOT_POINTS",
			                who, s, name, v->style);
		for (i = 0; i < v->n; i++)
			if (isfinite(v->x[i]) && isfinite(v->y[i]))
				nfinite++;
	}
	if (nfinite == 0)
		return bnn_fail(err, BNN_EINVAL, "%s: no finite point to plot", who);

	layer = calloc(2 * (size_t)nseries, sizeof *layer);
	if (layer == NULL)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %d series", who, nseries);
	for (s = 0; s < nseries; s++) {
		const bnn_plot_curve *v = &series[s];

		if (v->lower == NULL)
			continue;
		layer[k].kind = PLOT_BAND; /* unnamed: the series names it */
		layer[k].colour = s;
		layer[k].opacity = 0.2;
		layer[k].n = v->n;
		layer[k].x = v->x;
		layer[k].lo = v->lower;
		layer[k].hi = v->upper;
		k++;
	}
	for (s = 0; s < nseries; s++) {
		const bnn_plot_curve *v = &series[s];

		layer[k].kind = v->style == BNN_PLOT_LINE ? PLOT_LINE : PLOT_POINTS;
		layer[k].name = v->name;
		layer[k].colour = s;
		layer[k].n = v->n;
		layer[k].x = v->x;
		layer[k].y = v->y;
		k++;
	}

	if (options == NULL)
		options = &no_text;
	plot_chart_start(&c, options->title, options->xlabel, options->ylabel, layer, k);
	ctx.series = series;
	ctx.nseries = nseries;
	rc = plot_write(&c, path_svg, path_csv, plot_curves_csv, &ctx, who, err);
	free(layer);
	return rc;
}
