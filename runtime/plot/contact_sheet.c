/*
 * contact_sheet.c: an SVG contact sheet of images (bnn_plot.h), the
 * picture of the driver's sensitivity command (the most and least
 * sensitive training images, docs/sensitivity.md).  Each pixel is a
 * square <rect> (no embedded bitmap, so the file is plain text that a
 * test can compare byte for byte and any viewer shows), the grey levels
 * or colours mapped from one range for the whole sheet so that the
 * images can be compared; the captions go through plot_svg.c's text
 * writer (plot_internal.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bnn.h"
#include "bnn_plot.h"
#include "plot_internal.h"

#define SHEET_MARGIN    16.0  /* around everything */
#define SHEET_IMAGE     84    /* the larger side of an image, in SVG pixels, about */
#define SHEET_MIN_CELL  96.0  /* a cell is at least this wide (its captions) */
#define SHEET_GAP       12.0  /* between cells */
#define SHEET_TITLE     28.0  /* the title's line */
#define SHEET_CAPTION   22.0  /* a row's caption line */
#define SHEET_MIN_WIDTH 320.0 /* room for the title */
#define SHEET_TEXT      32.0  /* the two lines under an image */

struct sheet {
	const char *title;
	const bnn_plot_sheet_row *rows;
	int nrows;
	long c, h, w;  /* the images' shape */
	long px;       /* SVG pixels per image pixel */
	double lo, hi; /* the range mapped to black .. white */
	double cell;   /* a cell's width */
	double width, height;
};

/* The smallest and largest value of every image of the sheet. */
static void sheet_range(struct sheet *s)
{
	long n = s->c * s->h * s->w, i, j;
	int r;

	s->lo = INFINITY;
	s->hi = -INFINITY;
	for (r = 0; r < s->nrows; r++)
		for (i = 0; i < s->rows[r].n; i++)
			for (j = 0; j < n; j++) {
				double v = s->rows[r].images[i].pixels[j];
				if (v < s->lo)
					s->lo = v;
				if (v > s->hi)
					s->hi = v;
			}
}

/* A value as a level 0 .. 255 (mid grey when the sheet is flat). */
static int sheet_level(const struct sheet *s, double v)
{
	double t = s->hi > s->lo ? (v - s->lo) / (s->hi - s->lo) : 0.5;

	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	return (int)lround(255.0 * t);
}

/* The pixels of one image with its top-left corner at (x, y). */
static void sheet_image(FILE *f, const struct sheet *s, const float *pix, double x, double y)
{
	long plane = s->h * s->w, i, j;
	int rgb = s->c == 3;

	for (i = 0; i < s->h; i++)
		for (j = 0; j < s->w; j++) {
			long at = i * s->w + j;
			int r = sheet_level(s, pix[at]);
			int g = rgb ? sheet_level(s, pix[plane + at]) : r;
			int b = rgb ? sheet_level(s, pix[2 * plane + at]) : r;
			fputs("<rect", f);
			plot_attr(f, "x", x + (double)(j * s->px));
			plot_attr(f, "y", y + (double)(i * s->px));
			plot_attr(f, "width", (double)s->px);
			plot_attr(f, "height", (double)s->px);
			fprintf(f, " fill=\"#%02x%02x%02x\"/>\n", r, g, b);
		}
}

/* The two lines under an image: "#index  label L" and the score. */
static void sheet_captions(FILE *f, const bnn_plot_image *im, double x, double y)
{
	char buf[96];

	if (im->label >= 0)
		snprintf(buf, sizeof buf, "#%ld label %ld", im->index, im->label);
	else
		snprintf(buf, sizeof buf, "#%ld", im->index);
	plot_text(f, x, y + 13.0, "", buf);
	snprintf(buf, sizeof buf, "%.4g", im->score);
	plot_dot(buf);
	plot_text(f, x, y + 27.0, "", buf);
}

static int sheet_fill(FILE *f, void *ctx)
{
	const struct sheet *s = ctx;
	double y = SHEET_MARGIN, ih = (double)(s->h * s->px);
	long i;
	int r;

	fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", f);
	plot_attr(f, "width", s->width);
	plot_attr(f, "height", s->height);
	fprintf(f, " viewBox=\"0 0 %.0f %.0f\"", s->width, s->height);
	fputs(" font-family=\"sans-serif\" font-size=\"12\">\n<title>", f);
	plot_xml(f, s->title);
	fputs("</title>\n<rect class=\"background\"", f);
	plot_attr(f, "width", s->width);
	plot_attr(f, "height", s->height);
	fputs(" fill=\"white\"/>\n", f);
	plot_text(f, SHEET_MARGIN, y + 16.0, " font-size=\"16\"", s->title);
	y += SHEET_TITLE;
	for (r = 0; r < s->nrows; r++) {
		const bnn_plot_sheet_row *row = &s->rows[r];
		plot_text(f, SHEET_MARGIN, y + 14.0, " font-weight=\"bold\"",
		          row->title ? row->title : "");
		y += SHEET_CAPTION;
		for (i = 0; i < row->n; i++) {
			double x = SHEET_MARGIN + (double)i * (s->cell + SHEET_GAP);
			sheet_image(f, s, row->images[i].pixels, x, y);
			sheet_captions(f, &row->images[i], x, y + ih);
		}
		y += ih + SHEET_TEXT + SHEET_GAP;
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

int bnn_plot_contact_sheet(const char *path_svg, const char *title, const bnn_plot_sheet_row *rows,
                           int nrows, const long shape[3], bnn_err *err)
{
	const char *who = "bnn_plot_contact_sheet";
	struct sheet s;
	long most = 0, side;
	int r;

	if (!path_svg || !path_svg[0])
		return bnn_fail(err, BNN_EINVAL, "%s: no path_svg given", who);
	if (!shape || shape[0] < 1 || shape[1] < 1 || shape[2] < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: the image shape must be at least 1x1x1", who);
	if (nrows < 0 || (nrows > 0 && !rows))
		return bnn_fail(err, BNN_EINVAL, "%s: no rows given", who);
	for (r = 0; r < nrows; r++) {
		if (rows[r].n < 0 || (rows[r].n > 0 && !rows[r].images))
			return bnn_fail(err, BNN_EINVAL, "%s: row %d has no images", who, r);
		if (rows[r].n > most)
			most = rows[r].n;
	}
	memset(&s, 0, sizeof s);
	s.title = title ? title : "";
	s.rows = rows;
	s.nrows = nrows;
	s.c = shape[0];
	s.h = shape[1];
	s.w = shape[2];
	side = s.h > s.w ? s.h : s.w;
	s.px = side < SHEET_IMAGE ? SHEET_IMAGE / side : 1;
	s.cell = (double)(s.w * s.px) > SHEET_MIN_CELL ? (double)(s.w * s.px) : SHEET_MIN_CELL;
	s.width =
	        2 * SHEET_MARGIN + (most > 0 ? (double)most * (s.cell + SHEET_GAP) - SHEET_GAP : 0);
	if (s.width < SHEET_MIN_WIDTH)
		s.width = SHEET_MIN_WIDTH;
	s.height = 2 * SHEET_MARGIN + SHEET_TITLE +
	           (double)nrows * (SHEET_CAPTION + (double)(s.h * s.px) + SHEET_TEXT + SHEET_GAP);
	sheet_range(&s);
	return bnn_file_replace(path_svg, "contact sheet ", sheet_fill, &s, err);
}
