/* emit.h: the one way generated C is written.
 *
 * Every line of generated code goes through emit(), a printf-style function
 * whose format strings the C compiler checks.  Write errors are remembered
 * (not reported at each call), so the caller checks emit_failed() once at
 * the end.  Helpers print the things that must be exact: string literals
 * with every byte escaped, file names inside comments, and floating-point
 * constants with 17 significant digits, so they round-trip.
 */
#ifndef BNN_EMIT_H
#define BNN_EMIT_H

#include <stdio.h>

struct emit {
	FILE *f;    /* borrowed: where the code goes */
	int failed; /* a write failed */
};

void emit_init(struct emit *e, FILE *f);

/* Writes formatted text. */
void emit(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes S as a C string literal (quotes included). */
void emit_c_string(struct emit *e, const char *s);

/* The same, breaking the literal after each newline onto a new line that
 * starts with INDENT (adjacent literals concatenate). */
void emit_c_string_lines(struct emit *e, const char *s, const char *indent);

/* Writes S (a file name) inside a C comment, escaped as inside a string
 * literal, and with the '/' of a star-slash or slash-star as \057, so that
 * S can neither end the comment nor start a nested one. */
void emit_comment_text(struct emit *e, const char *s);

/* Formats V so that it reads back as the same double ("0.10000000000000001"). */
void emit_double_str(double v, char *buf, size_t size);

/* Whether every write so far succeeded (flushes first). */
int emit_failed(struct emit *e);

#endif
