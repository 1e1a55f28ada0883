/* emit.c: the format-checked writer of generated C (see emit.h). */
#include <stdarg.h>
#include <stdio.h>

#include "emit.h"

void emit_init(struct emit *e, FILE *f)
{
	e->f = f;
	e->failed = 0;
}

void emit(struct emit *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vfprintf(e->f, fmt, ap) < 0)
		e->failed = 1;
	va_end(ap);
}

void emit_c_string(struct emit *e, const char *s)
{
	emit_c_string_lines(e, s, NULL);
}

/* Writes the bytes of S as the inside of a C string literal: quotes and
 * backslashes escaped, control bytes, non-ASCII bytes and '?' (trigraphs)
 * as octal escapes.  With INDENT, a newline also breaks the literal (see
 * emit_c_string_lines); IN_COMMENT escapes a '/' next to a '*' as well, so
 * that S can neither end a comment nor start one inside it. */
static void emit_escaped(struct emit *e, const char *s, const char *indent, int in_comment)
{
	const unsigned char *start = (const unsigned char *)s, *p;
	for (p = start; *p; p++) {
		int star_slash =
		        in_comment && *p == '/' && ((p > start && p[-1] == '*') || p[1] == '*');
		if (*p == '\n' && indent)
			emit(e, "\\n\"%s\n%s\"", p[1] ? "" : "", indent);
		else if (*p == '"' || *p == '\\')
			emit(e, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f || *p == '?' || star_slash)
			emit(e, "\\%03o",
			     *p); /* octal: never swallows a following digit; '?' avoids trigraphs */
		else
			emit(e, "%c", *p);
	}
}

void emit_c_string_lines(struct emit *e, const char *s, const char *indent)
{
	emit(e, "\"");
	emit_escaped(e, s, indent, 0);
	emit(e, "\"");
}

void emit_comment_text(struct emit *e, const char *s)
{
	emit_escaped(e, s, NULL, 1);
}

void emit_double_str(double v, char *buf, size_t size)
{
	snprintf(buf, size, "%.17g", v);
}

int emit_failed(struct emit *e)
{
	if (fflush(e->f) != 0 || ferror(e->f))
		e->failed = 1;
	return e->failed;
}
