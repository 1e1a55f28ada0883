/* diag.c: the one diagnostic reporter of the front end (see diag.h).
 *
 * Quoting the source line is the delicate part: the line may hold tabs, UTF-8
 * text, NUL or other control bytes, or be a megabyte long.  Tabs are echoed
 * into the underline so the caret lines up; a valid UTF-8 character
 * (common/utf8.h) takes one column; any other non-printable byte is shown
 * as '?'; a long line is shown as a window of DIAG_WINDOW bytes around the
 * caret, with "..." at a cut.
 */
#include "diag.h"

#include <string.h>

#include "common/utf8.h"

enum {
	DIAG_WINDOW = 160
};

const bnn_loc diag_noloc = { 0, 0, 0, 0 };

void diag_init(struct diag *d, const struct source *src, FILE *out)
{
	memset(d, 0, sizeof *d);
	d->src = src;
	d->out = out;
}

int diag_should_stop(const struct diag *d)
{
	return d->stopped;
}

bnn_loc diag_span(bnn_loc a, bnn_loc b)
{
	bnn_loc r = a;
	r.last_line = b.last_line;
	r.last_column = b.last_column;
	return r;
}

/* Prints bytes [FROM, TO) of LINE as the quoted source line, and the
 * underline for columns FIRST..LAST (0-based byte offsets, inclusive); MORE
 * says the line goes on after TO. */
static void diag_quote(FILE *out, const unsigned char *line, size_t from, size_t to, size_t first,
                       size_t last, int more)
{
	char shown[4 * DIAG_WINDOW + 16], under[4 * DIAG_WINDOW + 16];
	size_t ns = 0, nu = 0, i = from;
	if (from > 0) {
		memcpy(shown, "...", 3);
		memcpy(under, "   ", 3);
		ns = nu = 3;
	}
	while (i < to) {
		size_t n = bnn_text_utf8_len(line + i, to - i, NULL);
		char mark = i < first ? ' ' : i == first ? '^' : i <= last ? '~' : 0;
		if (n == 0)
			n = 1, shown[ns++] = '?';
		else if (n > 1)
			memcpy(shown + ns, line + i, n), ns += n;
		else if (line[i] == '\t')
			shown[ns++] = '\t', mark = mark == ' ' ? '\t' : mark;
		else
			shown[ns++] = (line[i] < 0x20 || line[i] == 0x7f) ? '?' : (char)line[i];
		if (mark)
			under[nu++] = mark;
		i += n;
	}
	if (first >= to) /* the caret sits just past the end of the line */
		under[nu++] = '^';
	shown[ns] = under[nu] = '\0';
	fprintf(out, " %s%s\n %s\n", shown, more ? "..." : "", under);
}

static void diag_show_line(const struct diag *d, bnn_loc loc)
{
	size_t len, first, last, from = 0, to;
	const char *line = d->src ? source_line(d->src, loc.first_line, &len) : NULL;
	if (!line || loc.first_column < 1)
		return;
	first = (size_t)loc.first_column - 1;
	last = loc.last_line == loc.first_line && loc.last_column >= loc.first_column
	               ? (size_t)loc.last_column - 1
	               : (len > first ? len - 1 : first);
	if (first > len)
		first = len;
	to = len;
	if (len > DIAG_WINDOW) {
		from = first > DIAG_WINDOW / 2 ? first - DIAG_WINDOW / 2 : 0;
		to = from + DIAG_WINDOW < len ? from + DIAG_WINDOW : len;
		/* do not start inside a UTF-8 character */
		while (from > 0 && ((unsigned char)line[from] & 0xc0) == 0x80)
			from--;
	}
	diag_quote(d->out, (const unsigned char *)line, from, to, first, last, to < len);
}

/* A hash of an error's place and text, to report each error once. */
static unsigned long diag_hash(bnn_loc loc, const char *text)
{
	unsigned long h =
	        5381u + (unsigned long)loc.first_line * 65599u + (unsigned long)loc.first_column;
	while (*text)
		h = h * 33u + (unsigned char)*text++;
	return h;
}

static int diag_repeated(struct diag *d, bnn_loc loc, const char *text)
{
	unsigned long h = diag_hash(loc, text);
	int i;
	for (i = 0; i < d->nseen; i++)
		if (d->seen[i] == h)
			return 1;
	if (d->nseen < DIAG_MAX_ERRORS + 1)
		d->seen[d->nseen++] = h;
	return 0;
}

void diag_report(struct diag *d, enum diag_kind kind, bnn_loc loc, const char *fmt, va_list ap)
{
	static const char *const label[] = { "error", "warning", "note" };
	const char *name = d->src ? d->src->name : "bnnc";
	char text[1024];

	if (kind == DIAG_NOTE && d->muted)
		return;
	vsnprintf(text, sizeof text, fmt, ap);
	if (kind != DIAG_NOTE) {
		d->muted = d->stopped || diag_repeated(d, loc, text);
		if (d->muted)
			return;
	}
	if (kind == DIAG_ERROR) {
		if (d->errors == DIAG_MAX_ERRORS) {
			fprintf(d->out, "%s: fatal error: too many errors (%d), stopping\n", name,
			        DIAG_MAX_ERRORS);
			d->stopped = 1;
			d->muted = 1;
			return;
		}
		d->errors++;
	} else if (kind == DIAG_WARNING) {
		d->warnings++;
	}
	if (loc.first_line > 0)
		fprintf(d->out, "%s:%d:%d: %s: %s\n", name, loc.first_line, loc.first_column,
		        label[kind], text);
	else
		fprintf(d->out, "%s: %s: %s\n", name, label[kind], text);
	if (loc.first_line > 0)
		diag_show_line(d, loc);
	if (kind != DIAG_NOTE && d->context)
		d->context(d, d->context_arg);
}

#define DIAG_DEFINE(fn, kind)                                      \
	void fn(struct diag *d, bnn_loc loc, const char *fmt, ...) \
	{                                                          \
		va_list ap;                                        \
		va_start(ap, fmt);                                 \
		diag_report(d, kind, loc, fmt, ap);                \
		va_end(ap);                                        \
	}
DIAG_DEFINE(diag_error, DIAG_ERROR)
DIAG_DEFINE(diag_warning, DIAG_WARNING)
DIAG_DEFINE(diag_note, DIAG_NOTE)
