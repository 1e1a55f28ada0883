/*
 * plot_internal.h: the pieces of the SVG writer (plot_svg.c) that the
 * other drawings of runtime/plot/ share (contact_sheet.c), so that every
 * SVG the library writes escapes text and prints numbers the same way.
 * Internal to the library (not installed).
 */
#ifndef BNN_PLOT_INTERNAL_H
#define BNN_PLOT_INTERNAL_H

#include <stdio.h>

/* Write s as XML character data or attribute text (entities for markup,
 * '?' for anything not valid UTF-8 or not allowed in XML 1.0). */
void plot_xml(FILE *f, const char *s);

/* Replace the C locale's decimal point in buf (printf output) by '.'. */
void plot_dot(char *buf);

/* Write an attribute name="pixels" (2 decimals, '.' as the point). */
void plot_attr(FILE *f, const char *name, double v);

/* A text element at (x, y) pixels; extra is more attributes (or ""). */
void plot_text(FILE *f, double x, double y, const char *extra, const char *text);

#endif
