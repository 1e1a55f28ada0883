/*
 * data_csv.c: the CSV reader, bnn_data_load_csv().
 *
 * The file is read in one pass, a line at a time (csv_getline, in chunks
 * of 64 KiB: a line may be up to 256 MiB long, and a NUL byte stops the
 * reading at once), into arrays that double in size as rows arrive.
 * Line 1 is the header of column names; it decides which columns are
 * targets (named by opt->target, or the last opt->targets columns) and
 * maps every column to its place in a row of x or of y.  Each following
 * line is split into fields (csv_split: commas separate fields, blanks
 * around a field are dropped, a field may be wrapped in double quotes with
 * "" standing for one quote inside), and every field must be a finite
 * decimal number (csv_number).  Empty lines may end the file; anywhere
 * else they are an error, so that example i is always on line i + 1.
 *
 * Numbers follow C's decimal syntax, checked here rather than left to
 * strtof(): [+-] digits [. digits] [e [+-] digits], with no hex floats,
 * NaN or infinity.  The conversion itself is strtof()'s, correctly rounded
 * to the nearest float, rather than strtod()'s followed by a cast, which
 * rounds twice: a decimal near the midpoint of two floats could land on
 * the wrong one, and "3.4028235e38", the shortest spelling of FLT_MAX
 * (what NumPy prints for it), is above FLT_MAX as a double.  Only a
 * number that rounds to infinity is too large.  Should the program have
 * set a locale whose decimal point is not '.', the text is converted
 * again with that locale's decimal point, so files always use '.'
 * whatever the locale.
 *
 * With opt->targets_skipped, the target columns are chosen as usual, so
 * that they are not features, and then left out: csv_row passes over
 * their fields without converting them, and the data set has no targets.
 *
 * With opt->columns, the feature columns must have those names in that
 * order (csv_check_names: the first that differs is named with its
 * position).  bnn_data_csv_header() reads and checks line 1 alone.
 *
 * Positions in messages are "FILE:LINE:COL", LINE and COL counted from 1,
 * COL in bytes from the start of the line (a UTF-8 byte order mark at the
 * start of the file is skipped and not counted) to the first non-blank
 * byte of the field.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "bnn.h"
#include "common/edit_distance.h"

#define CSV_QUOTE_MAX    40                      /* field text quoted in a message, in bytes */
#define CSV_EXCERPT_SIZE (4 * CSV_QUOTE_MAX + 4) /* room for it, escaped */
#define CSV_LIST_MAX     20                      /* column names listed in a message */
#define CSV_CHUNK        65536                   /* bytes per fread() */
#define CSV_LINE_MAX     ((size_t)1 << 28)       /* the longest line read: 256 MiB */

/* One field of the current line. */
struct csv_field {
	size_t off; /* start of its text (unquoted, NUL-terminated) in buf */
	size_t len; /* length of that text */
	long col;   /* 1-based byte column of its first non-blank byte */
};

/* The reader's state: the file, the current line and its fields. */
struct csv_reader {
	const char *path; /* for messages */
	FILE *f;
	char chunk[CSV_CHUNK]; /* bytes read ahead: chunk[cpos .. cend) */
	size_t cpos, cend;
	char *line;     /* the current line */
	size_t linecap; /* its allocation */
	size_t len;     /* its length without the line break */
	long lineno;    /* 1-based number of the current line */
	char *buf;      /* the fields' text, NUL-separated */
	size_t bufcap;
	struct csv_field *fields; /* nfields of them */
	size_t nfields, fieldcap;
};

/* Outcome of converting a field to a number. */
enum csv_number_status {
	CSV_NUMBER,     /* a finite float */
	CSV_EMPTY,      /* nothing but blanks */
	CSV_NOT_NUMBER, /* text that is not a decimal number */
	CSV_NOT_FINITE, /* nan, inf, infinity */
	CSV_TOO_LARGE   /* a number beyond the range of float */
};

static int csv_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int csv_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ASCII lower case, whatever the locale. */
static int csv_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Whether the n bytes at a and b are equal, ignoring ASCII case. */
static int csv_same_nocase(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (csv_lower((unsigned char)a[i]) != csv_lower((unsigned char)b[i]))
			return 0;
	return 1;
}

/* Appends n bytes to r->line (which holds len), growing it. */
static int csv_append(struct csv_reader *r, size_t len, const char *s, size_t n, bnn_err *err)
{
	if (len + n + 1 > r->linecap) {
		size_t cap = r->linecap ? r->linecap : 256;
		char *l;
		while (cap < len + n + 1)
			cap *= 2;
		if (!(l = realloc(r->line, cap)))
			return -bnn_fail(err, BNN_ENOMEM,
			                 "%s:%ld: out of memory for a line of %zu bytes", r->path,
			                 r->lineno + 1, len + n);
		r->line = l;
		r->linecap = cap;
	}
	memcpy(r->line + len, s, n);
	return 0;
}

/*
 * Read the next line into r->line without its "\n" or "\r\n".
 * Returns 1 for a line, 0 at end of file, or minus an error code (with
 * err filled).  A NUL byte is an error as soon as it is read, and so is a
 * line longer than CSV_LINE_MAX, so that a binary or endless input
 * (/dev/zero, /dev/urandom) is refused at once instead of being read
 * into memory whole.
 */
static int csv_getline(struct csv_reader *r, bnn_err *err)
{
	size_t len = 0;
	int rc;

	for (;;) {
		const char *s, *nl, *nul;
		size_t take;
		if (r->cpos == r->cend) {
			errno = 0;
			r->cend = fread(r->chunk, 1, sizeof r->chunk, r->f);
			r->cpos = 0;
			if (r->cend == 0 && ferror(r->f))
				return -bnn_fail(err, BNN_EIO, "%s:%ld: read error: %s", r->path,
				                 r->lineno + 1,
				                 errno ? strerror(errno) : "unknown error");
			if (r->cend == 0) {
				if (len == 0)
					return 0;
				break; /* a last line without a line break */
			}
		}
		s = r->chunk + r->cpos;
		nl = memchr(s, '\n', r->cend - r->cpos);
		take = nl ? (size_t)(nl - s) + 1 : r->cend - r->cpos;
		if ((nul = memchr(s, '\0', take)))
			return -bnn_fail(err, BNN_EFORMAT,
			                 "%s:%ld:%ld: NUL byte (is this a text file?)", r->path,
			                 r->lineno + 1, (long)(len + (size_t)(nul - s)) + 1);
		if (len + take > CSV_LINE_MAX)
			return -bnn_fail(err, BNN_EFORMAT,
			                 "%s:%ld: line longer than %zu MiB (is this a "
			                 "text file?)",
			                 r->path, r->lineno + 1, CSV_LINE_MAX >> 20);
		if ((rc = csv_append(r, len, s, take, err)))
			return rc;
		len += take;
		r->cpos += take;
		if (nl)
			break;
	}
	r->lineno++;
	r->len = len;
	if (r->len > 0 && r->line[r->len - 1] == '\n')
		r->len--;
	if (r->len > 0 && r->line[r->len - 1] == '\r')
		r->len--;
	r->line[r->len] = '\0';
	return 1;
}

/* Whether the current line holds nothing but blanks from byte start. */
static int csv_line_blank(const struct csv_reader *r, size_t start)
{
	size_t i;

	for (i = start; i < r->len; i++)
		if (!csv_blank(r->line[i]))
			return 0;
	return 1;
}

/* Append a field to r->fields. */
static int csv_add_field(struct csv_reader *r, size_t off, size_t len, long col, bnn_err *err)
{
	if (r->nfields == r->fieldcap) {
		size_t cap = r->fieldcap ? 2 * r->fieldcap : 64;
		struct csv_field *p;

		if (cap > SIZE_MAX / sizeof *p || !(p = realloc(r->fields, cap * sizeof *p)))
			return bnn_fail(err, BNN_ENOMEM, "%s:%ld: out of memory", r->path,
			                r->lineno);
		r->fields = p;
		r->fieldcap = cap;
	}
	r->fields[r->nfields].off = off;
	r->fields[r->nfields].len = len;
	r->fields[r->nfields].col = col;
	r->nfields++;
	return BNN_OK;
}

/*
 * Copy the quoted field that starts at line[*p] (the opening quote) to
 * buf + *o, "" becoming ", and move *p past the closing quote and the
 * blanks after it.  col is the field's column, for messages.
 */
static int csv_quoted(struct csv_reader *r, size_t start, size_t *p, size_t *o, long col,
                      bnn_err *err)
{
	const char *s = r->line;
	size_t len = r->len;

	for ((*p)++; *p < len; (*p)++) {
		if (s[*p] != '"') {
			r->buf[(*o)++] = s[*p];
		} else if (*p + 1 < len && s[*p + 1] == '"') {
			r->buf[(*o)++] = '"';
			(*p)++;
		} else {
			break;
		}
	}
	if (*p >= len)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:%ld:%ld: unterminated "
		                "quoted field",
		                r->path, r->lineno, col);
	for ((*p)++; *p < len && csv_blank(s[*p]); (*p)++)
		;
	if (*p < len && s[*p] != ',')
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:%ld:%ld: unexpected "
		                "text after the closing quote",
		                r->path, r->lineno, (long)(*p - start) + 1);
	return BNN_OK;
}

/*
 * Split the current line (from byte `start`, past a byte order mark) into
 * r->fields, their text copied to r->buf without quotes and surrounding
 * blanks.  A quote left open, or text after a closing quote is an error.
 */
static int csv_split(struct csv_reader *r, size_t start, bnn_err *err)
{
	const char *s = r->line; /* csv_getline refused NUL bytes */
	size_t p = start, o = 0, len = r->len;
	int rc;

	/* The text plus one NUL per field (at most len + 1 fields). */
	if (r->bufcap < 2 * len + 2) {
		char *b = realloc(r->buf, 2 * len + 2);

		if (!b)
			return bnn_fail(err, BNN_ENOMEM, "%s:%ld: out of memory", r->path,
			                r->lineno);
		r->buf = b;
		r->bufcap = 2 * len + 2;
	}
	r->nfields = 0;
	for (;;) {
		size_t off = o;
		long col;

		while (p < len && csv_blank(s[p]))
			p++;
		col = (long)(p - start) + 1;
		if (p < len && s[p] == '"') {
			rc = csv_quoted(r, start, &p, &o, col, err);
			if (rc)
				return rc;
		} else {
			while (p < len && s[p] != ',')
				r->buf[o++] = s[p++];
			while (o > off && csv_blank(r->buf[o - 1]))
				o--;
		}
		r->buf[o++] = '\0';
		rc = csv_add_field(r, off, o - off - 1, col, err);
		if (rc)
			return rc;
		if (p >= len)
			return BNN_OK;
		p++; /* the comma */
	}
}

/* Whether [s, s + len) is a decimal number in C syntax. */
static int csv_decimal_syntax(const char *s, size_t len)
{
	size_t p = 0, digits = 0;

	if (p < len && (s[p] == '+' || s[p] == '-'))
		p++;
	for (; p < len && csv_digit(s[p]); p++)
		digits++;
	if (p < len && s[p] == '.')
		for (p++; p < len && csv_digit(s[p]); p++)
			digits++;
	if (!digits)
		return 0;
	if (p < len && (s[p] == 'e' || s[p] == 'E')) {
		p++;
		if (p < len && (s[p] == '+' || s[p] == '-'))
			p++;
		if (p >= len || !csv_digit(s[p]))
			return 0;
		while (p < len && csv_digit(s[p]))
			p++;
	}
	return p == len;
}

/* Whether s (of length len) spells NaN or an infinity as strtod would
 * read it: [+-] (nan | nan(...) | inf | infinity), any case. */
static int csv_nonfinite_syntax(const char *s, size_t len)
{
	if (len > 0 && (s[0] == '+' || s[0] == '-')) {
		s++;
		len--;
	}
	if (len == 3 && (csv_same_nocase(s, "nan", 3) || csv_same_nocase(s, "inf", 3)))
		return 1;
	if (len == 8 && csv_same_nocase(s, "infinity", 8))
		return 1;
	return len > 4 && csv_same_nocase(s, "nan(", 4) && s[len - 1] == ')';
}

/* Convert the field text s (NUL-terminated, length len) to a float. */
static enum csv_number_status csv_number(const char *s, size_t len, float *out)
{
	char *end;
	float v;

	while (len > 0 && csv_blank(*s)) {
		s++;
		len--;
	}
	while (len > 0 && csv_blank(s[len - 1]))
		len--;
	if (len == 0)
		return CSV_EMPTY;
	if (!csv_decimal_syntax(s, len))
		return csv_nonfinite_syntax(s, len) ? CSV_NOT_FINITE : CSV_NOT_NUMBER;
	v = strtof(s, &end);
	if (end != s + len) {
		/* A locale whose decimal point is not ".": convert a copy
		 * that uses the locale's. */
		const char *dp = localeconv()->decimal_point;
		size_t dlen = strlen(dp), i;
		char *copy = malloc(len * (dlen ? dlen : 1) + 1), *q;
		int whole;

		if (!copy)
			return CSV_NOT_NUMBER; /* cannot happen in practice */
		for (q = copy, i = 0; i < len; i++) {
			if (s[i] == '.') {
				memcpy(q, dp, dlen);
				q += dlen;
			} else {
				*q++ = s[i];
			}
		}
		*q = '\0';
		v = strtof(copy, &end);
		whole = end == q;
		free(copy);
		if (!whole)
			return CSV_NOT_NUMBER;
	}
	/* strtof() overflows to an infinity: the number rounds beyond
	 * FLT_MAX.  Underflow gives a subnormal or 0, which is the nearest
	 * float and kept. */
	if (isinf(v))
		return CSV_TOO_LARGE;
	*out = v;
	return CSV_NUMBER;
}

/*
 * s (length len) as it is quoted in a message, in buf: at most
 * CSV_QUOTE_MAX bytes (cut before a UTF-8 continuation byte, then "..."),
 * control bytes written as \xNN so that a message stays on one line.
 */
static const char *csv_excerpt(const char *s, size_t len, char buf[CSV_EXCERPT_SIZE])
{
	size_t i, o = 0, cut = len;

	if (len > CSV_QUOTE_MAX) {
		cut = CSV_QUOTE_MAX;
		while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7F)
			o += (size_t)snprintf(buf + o, CSV_EXCERPT_SIZE - o, "\\x%02X", c);
		else
			buf[o++] = (char)c;
	}
	if (cut < len) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* A column name and its column, for sorting. */
struct csv_name {
	const char *name; /* borrowed from csv_header.names */
	long col;         /* 0-based column */
};

/* The header: the column names and where each column goes. */
struct csv_header {
	char **names; /* ncols column names, owned */
	long *cols;   /* ncols 1-based byte columns of the names */
	long ncols;
	long *dest;              /* per column: feature index k >= 0, or -1 - t for
	                            target t */
	int skip_targets;        /* the target columns' fields are not read
	                            (opt->targets_skipped): no y */
	struct csv_name *sorted; /* the names sorted, then by column */
};

static void csv_header_free(struct csv_header *h)
{
	long i;

	if (h->names)
		for (i = 0; i < h->ncols; i++)
			free(h->names[i]);
	free(h->names);
	free(h->cols);
	free(h->dest);
	free(h->sorted);
	memset(h, 0, sizeof *h);
}

static int csv_cmp(const void *pa, const void *pb)
{
	const struct csv_name *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->col > b->col) - (a->col < b->col);
}

/* The column called name, or -1. */
static long csv_find(const struct csv_header *h, const char *name)
{
	long lo = 0, hi = h->ncols;

	while (lo < hi) { /* first sorted entry >= name */
		long mid = lo + (hi - lo) / 2;

		if (strcmp(h->sorted[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < h->ncols && !strcmp(h->sorted[lo].name, name))
		return h->sorted[lo].col;
	return -1;
}

/* Whether every name of h is a decimal number: the file's first line is a
 * row of data, which read as the header would drop that example without
 * a word. */
static int csv_header_all_numbers(const struct csv_header *h)
{
	long i;

	for (i = 0; i < h->ncols; i++)
		if (!csv_decimal_syntax(h->names[i], strlen(h->names[i])))
			return 0;
	return h->ncols > 0;
}

/* Read the names in r->fields into h and check them: none empty, none
 * twice, not all numbers. */
static int csv_header_read(struct csv_reader *r, struct csv_header *h, bnn_err *err)
{
	long i, dup = -1, first = -1;
	char q[CSV_EXCERPT_SIZE];

	h->ncols = (long)r->nfields;
	h->names = calloc(r->nfields, sizeof *h->names);
	h->cols = malloc(r->nfields * sizeof *h->cols);
	h->dest = calloc(r->nfields, sizeof *h->dest);
	h->sorted = malloc(r->nfields * sizeof *h->sorted);
	if (!h->names || !h->cols || !h->dest || !h->sorted)
		return bnn_fail(err, BNN_ENOMEM,
		                "%s:1: out of memory for %ld "
		                "columns",
		                r->path, h->ncols);
	for (i = 0; i < h->ncols; i++) {
		const struct csv_field *fd = &r->fields[i];

		if (fd->len == 0)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s:1:%ld: column "
			                "%ld has an empty name",
			                r->path, fd->col, i + 1);
		h->names[i] = strdup(r->buf + fd->off);
		if (!h->names[i])
			return bnn_fail(err, BNN_ENOMEM, "%s:1: out of memory", r->path);
		h->cols[i] = fd->col;
		h->sorted[i].name = h->names[i];
		h->sorted[i].col = i;
	}
	if (csv_header_all_numbers(h)) {
		csv_excerpt(h->names[0], strlen(h->names[0]), q);
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:1: the first line is a row of numbers ('%s'%s), not a header "
		                "of column names: a CSV file starts with one (docs/data.md)",
		                r->path, q, h->ncols > 1 ? ", ..." : "");
	}
	qsort(h->sorted, (size_t)h->ncols, sizeof *h->sorted, csv_cmp);
	/* Report the duplicate whose second occurrence comes first. */
	for (i = 1; i < h->ncols; i++) {
		long a = h->sorted[i - 1].col, b = h->sorted[i].col;

		if (strcmp(h->names[a], h->names[b]) || (dup >= 0 && b > dup))
			continue;
		dup = b;
		first = a;
	}
	if (dup < 0)
		return BNN_OK;
	csv_excerpt(h->names[dup], strlen(h->names[dup]), q);
	return bnn_fail(err, BNN_EFORMAT,
	                "%s:1:%ld: duplicate column name "
	                "'%s' (columns %ld and %ld)",
	                r->path, h->cols[dup], q, first + 1, dup + 1);
}

/* "a, b, c" of the first CSV_LIST_MAX of n names (quoted as messages
 * quote them; ", ..." after them when there are more) into list. */
static const char *csv_name_list(const char *const *names, long n, char list[BNN_ERR_MESSAGE_MAX])
{
	char qc[CSV_EXCERPT_SIZE];
	size_t used = 0;
	long i;

	list[0] = '\0';
	for (i = 0; i < n && i < CSV_LIST_MAX; i++) {
		int k = snprintf(list + used, BNN_ERR_MESSAGE_MAX - used, "%s%s", i ? ", " : "",
		                 csv_excerpt(names[i], strlen(names[i]), qc));

		if (k < 0 || (size_t)k >= BNN_ERR_MESSAGE_MAX - used)
			break;
		used += (size_t)k;
	}
	if (n > CSV_LIST_MAX && used + 5 < BNN_ERR_MESSAGE_MAX)
		strcpy(list + used, ", ...");
	return list;
}

/* The message for a target column that is not in the header: the
 * closest name if one is close enough (ignoring ASCII case: the shared
 * rule of common/edit_distance.h), else the list of names. */
static int csv_no_target(const char *path, const struct csv_header *h, const char *name,
                         bnn_err *err)
{
	struct bnn_text_suggestion sug;
	long i, pick = -1;
	char list[BNN_ERR_MESSAGE_MAX];
	char q[CSV_EXCERPT_SIZE], qc[CSV_EXCERPT_SIZE];

	bnn_text_suggest_init(&sug, name, BNN_TEXT_IGNORE_CASE);
	for (i = 0; i < h->ncols && sug.distance > 0; i++)
		if (bnn_text_suggest_offer(&sug, h->names[i]))
			pick = i;
	csv_excerpt(name, strlen(name), q);
	if (pick >= 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:1: no target column "
		                "'%s' (did you mean '%s'?)",
		                path, q, csv_excerpt(h->names[pick], strlen(h->names[pick]), qc));
	return bnn_fail(err, BNN_EFORMAT,
	                "%s:1: no target column '%s' (the "
	                "columns are: %s)",
	                path, q, csv_name_list((const char *const *)h->names, h->ncols, list));
}

/* The feature columns (h->dest >= 0) against the names opt->columns
 * expects, in order: the first that differs is an error naming its
 * column and position (a file with fewer or more features is left to the
 * count's check). */
static int csv_check_names(const char *path, const bnn_csv_options *opt, const struct csv_header *h,
                           bnn_err *err)
{
	char list[BNN_ERR_MESSAGE_MAX], q[CSV_EXCERPT_SIZE], qe[CSV_EXCERPT_SIZE];
	const char *want;
	long c, k = 0;

	if (!opt->columns)
		return BNN_OK;
	for (c = 0; c < h->ncols && k < opt->ncolumns; c++) {
		if (h->dest[c] < 0)
			continue;
		want = opt->columns[k++];
		if (strcmp(h->names[c], want) == 0)
			continue;
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s:1:%ld: column %ld is '%s' where '%s' is expected (the feature "
		                "columns, in order: %s)",
		                path, h->cols[c], c + 1,
		                csv_excerpt(h->names[c], strlen(h->names[c]), q),
		                csv_excerpt(want, strlen(want), qe),
		                csv_name_list(opt->columns, opt->ncolumns, list));
	}
	return BNN_OK;
}

/* The next name of a comma-separated list, trimmed of blanks; *rest moves
 * past it (NULL after the last one).  Writes NULs into the list. */
static char *csv_next_name(char **rest)
{
	char *tok = *rest, *e;

	*rest = strchr(tok, ',');
	if (*rest)
		*(*rest)++ = '\0';
	while (csv_blank(*tok))
		tok++;
	for (e = tok + strlen(tok); e > tok && csv_blank(e[-1]); e--)
		;
	*e = '\0';
	return tok;
}

/* A hint for a header whose names hold a ';' or a tab: the file was
 * written with another separator, and its columns are one. */
static const char *csv_separator_hint(const struct csv_header *h)
{
	long i;

	for (i = 0; i < h->ncols; i++)
		if (strchr(h->names[i], ';'))
			return " (the header holds ';': the fields of a CSV file are separated by "
			       "commas)";
		else if (strchr(h->names[i], '\t'))
			return " (the header holds tabs: the fields of a CSV file are separated by "
			       "commas)";
	return "";
}

/* The last opt->targets columns are the targets (h->dest set). */
static int csv_targets_last(const char *path, const bnn_csv_options *opt, struct csv_header *h,
                            long *targets, bnn_err *err)
{
	long i;

	if (opt->targets == 0)
		return BNN_OK;
	if (opt->targets_optional && opt->features > 0 && h->ncols == opt->features)
		return BNN_OK; /* no targets: a file to predict on */
	if (h->ncols <= opt->targets)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:1: %ld column%s: too few "
		                "for %ld target column%s and at least one "
		                "feature%s",
		                path, h->ncols, h->ncols == 1 ? "" : "s", opt->targets,
		                opt->targets == 1 ? "" : "s", csv_separator_hint(h));
	for (i = 0; i < opt->targets; i++)
		h->dest[h->ncols - opt->targets + i] = -1 - i;
	*targets = opt->targets;
	return BNN_OK;
}

/* The columns named in opt->target are the targets (h->dest set). */
static int csv_targets_named(const char *path, const bnn_csv_options *opt, struct csv_header *h,
                             long *targets, bnn_err *err)
{
	long i, c, found = 0, wanted = 1;
	const char *p;
	char *copy, *rest, *name, *missing = NULL;
	int rc = BNN_OK;

	for (p = opt->target; *p; p++)
		wanted += *p == ',';
	copy = strdup(opt->target);
	if (!copy)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory", path);
	for (rest = copy; rest;) {
		name = csv_next_name(&rest);
		if (!*name) {
			rc = bnn_fail(err, BNN_EINVAL,
			              "%s: empty column name "
			              "in the target list '%s'",
			              path, opt->target);
			goto out;
		}
		c = csv_find(h, name);
		if (c < 0) {
			if (!missing)
				missing = name;
			continue;
		}
		if (h->dest[c] < 0) {
			rc = bnn_fail(err, BNN_EINVAL,
			              "%s: target column '%s' "
			              "named twice in '%s'",
			              path, name, opt->target);
			goto out;
		}
		h->dest[c] = -1 - found++;
	}
	/* after the names' own checks, so that "y," is an empty name, not
	 * two targets where the model has one */
	if (opt->targets > 0 && opt->targets != wanted) {
		rc = bnn_fail(err, BNN_EINVAL,
		              "%s: %ld target column%s named ('%s') but %ld expected", path, wanted,
		              wanted == 1 ? "" : "s", opt->target, opt->targets);
		goto out;
	}
	if (found == 0 && opt->targets_optional &&
	    (opt->features == 0 || h->ncols == opt->features)) {
		for (i = 0; i < h->ncols; i++)
			h->dest[i] = 0;
		goto out; /* no targets: a file to predict on */
	}
	if (missing) {
		rc = csv_no_target(path, h, missing, err);
		goto out;
	}
	if (found >= h->ncols) {
		rc = bnn_fail(err, BNN_EFORMAT,
		              "%s:1: no feature columns: "
		              "every column is a target",
		              path);
		goto out;
	}
	*targets = found;
out:
	free(copy);
	return rc;
}

/* Resize one example array to `count` floats; *arr is kept on failure. */
static int csv_resize(const char *path, const bnn_dataset *ds, float **arr, size_t count,
                      bnn_err *err)
{
	float *p = realloc(*arr, count * sizeof *p);

	if (!p)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory after %ld rows", path, ds->n);
	*arr = p;
	return BNN_OK;
}

/* Grow the example arrays to hold at least one more row (doubling). */
static int csv_grow(const char *path, bnn_dataset *ds, long *cap, bnn_err *err)
{
	long n = *cap ? 2 * *cap : 16;
	long most = (long)(SIZE_MAX / sizeof(float) / 2);
	size_t nx = (size_t)n * (size_t)ds->features;
	size_t ny = (size_t)n * (size_t)ds->targets;
	int rc;

	if (n > most / ds->features || (ds->targets && n > most / ds->targets))
		return bnn_fail(err, BNN_ENOMEM, "%s: too many rows for memory", path);
	rc = csv_resize(path, ds, &ds->x, nx, err);
	if (rc == BNN_OK && ds->targets)
		rc = csv_resize(path, ds, &ds->y, ny, err);
	if (rc != BNN_OK)
		return rc;
	*cap = n;
	return BNN_OK;
}

/* Convert the fields of the current line into row ds->n. */
static int csv_row(struct csv_reader *r, const struct csv_header *h, bnn_dataset *ds, bnn_err *err)
{
	float *x = ds->x + ds->n * ds->features;
	float *y = ds->y ? ds->y + ds->n * ds->targets : NULL;
	long c;

	if ((long)r->nfields != h->ncols)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s:%ld: row has %zu field%s "
		                "but the header has %ld",
		                r->path, r->lineno, r->nfields, r->nfields == 1 ? "" : "s",
		                h->ncols);
	for (c = 0; c < h->ncols; c++) {
		const struct csv_field *fd = &r->fields[c];
		const char *text = r->buf + fd->off, *name;
		char q[CSV_EXCERPT_SIZE], qn[CSV_EXCERPT_SIZE];
		float v = 0;
		enum csv_number_status st;

		if (h->dest[c] < 0 && h->skip_targets)
			continue; /* a target column nobody reads */
		st = csv_number(text, fd->len, &v);
		if (st == CSV_NUMBER) {
			if (h->dest[c] >= 0)
				x[h->dest[c]] = v;
			else
				y[-1 - h->dest[c]] = v;
			continue;
		}
		/* The names have moved to ds->columns and ds->target_columns. */
		name = h->dest[c] >= 0 ? ds->columns[h->dest[c]]
		                       : ds->target_columns[-1 - h->dest[c]];
		csv_excerpt(name, strlen(name), qn);
		csv_excerpt(text, fd->len, q);
		switch (st) {
		case CSV_EMPTY:
			return bnn_fail(err, BNN_EFORMAT,
			                "%s:%ld:%ld: column "
			                "'%s': empty field, expected a number",
			                r->path, r->lineno, fd->col, qn);
		case CSV_NOT_FINITE:
			return bnn_fail(err, BNN_EFORMAT,
			                "%s:%ld:%ld: column "
			                "'%s': '%s' is not a finite number",
			                r->path, r->lineno, fd->col, qn, q);
		case CSV_TOO_LARGE:
			return bnn_fail(err, BNN_ERANGE,
			                "%s:%ld:%ld: column "
			                "'%s': '%s' is too large for a float",
			                r->path, r->lineno, fd->col, qn, q);
		default:
			return bnn_fail(err, BNN_EFORMAT,
			                "%s:%ld:%ld: column "
			                "'%s': '%s' is not a number",
			                r->path, r->lineno, fd->col, qn, q);
		}
	}
	return BNN_OK;
}

/* Read the header line and set up out->features, targets and columns. */
static int csv_read_header(struct csv_reader *r, const bnn_csv_options *opt, struct csv_header *h,
                           bnn_dataset *out, bnn_err *err)
{
	size_t start = 0;
	const char *cr;
	long c, k;
	int rc;

	rc = csv_getline(r, err);
	if (rc < 0)
		return -rc;
	if (rc == 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: empty file (expected a "
		                "header row of column names)",
		                r->path);
	if (r->len >= 3 && !memcmp(r->line, "\xEF\xBB\xBF", 3))
		start = 3;
	if (csv_line_blank(r, start)) {
		/* Nothing but empty lines is an empty file. */
		while ((rc = csv_getline(r, err)) > 0)
			if (!csv_line_blank(r, 0))
				return bnn_fail(err, BNN_EFORMAT,
				                "%s:1: the "
				                "header row is empty",
				                r->path);
		if (rc < 0)
			return -rc;
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: empty file (expected a "
		                "header row of column names)",
		                r->path);
	}
	if ((cr = memchr(r->line + start, '\r', r->len - start)))
		return bnn_fail(
		        err, BNN_EFORMAT,
		        "%s:1:%ld: carriage return within the header line: a CR alone (as "
		        "classic Mac OS ended lines) is not a line break; the lines of a CSV "
		        "file end in LF or CRLF",
		        r->path, (long)(cr - (r->line + start)) + 1);
	rc = csv_split(r, start, err);
	if (rc)
		return rc;
	rc = csv_header_read(r, h, err);
	if (rc)
		return rc;
	if (opt->target)
		rc = csv_targets_named(r->path, opt, h, &out->targets, err);
	else
		rc = csv_targets_last(r->path, opt, h, &out->targets, err);
	if (rc || (rc = csv_check_names(r->path, opt, h, err)))
		return rc;

	out->features = h->ncols - out->targets;
	if (opt->features > 0 && out->features != opt->features)
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s: %ld feature "
		                "column%s but the model takes %ld%s",
		                r->path, out->features, out->features == 1 ? "" : "s",
		                opt->features, csv_separator_hint(h));
	if (opt->targets_skipped && out->targets > 0) {
		h->skip_targets = 1; /* their names stay in h, freed with it */
		out->targets = 0;
	}
	out->rank = 1;
	out->shape[0] = out->features;
	out->columns = calloc((size_t)out->features, sizeof *out->columns);
	out->target_columns = calloc((size_t)out->targets + 1, sizeof *out->target_columns);
	if (!out->columns || !out->target_columns)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory", r->path);
	for (c = 0, k = 0; c < h->ncols; c++) {
		if (h->dest[c] < 0) {
			if (h->skip_targets)
				continue;
			out->target_columns[-1 - h->dest[c]] = h->names[c];
		} else {
			h->dest[c] = k;
			out->columns[k++] = h->names[c];
		}
		h->names[c] = NULL; /* moved */
	}
	return BNN_OK;
}

/* bnn_data_load_csv, or with rows 0 bnn_data_csv_header. */
static int csv_load(const char *path, const bnn_csv_options *opt, int rows, bnn_dataset *out,
                    bnn_err *err)
{
	static const bnn_csv_options none = { NULL, 0, 0, 0, NULL, 0, 0 };
	struct csv_reader r;
	struct csv_header h;
	long cap = 0, blank = 0;
	int rc;

	if (!out)
		return bnn_fail(err, BNN_EINVAL, "bnn_data_load_csv: out is NULL");
	memset(out, 0, sizeof *out);
	if (!path)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_data_load_csv: path is "
		                "NULL");
	if (!opt)
		opt = &none;
	if (opt->targets < 0 || opt->features < 0)
		return bnn_fail(err, BNN_EINVAL,
		                "%s: negative count of %s "
		                "columns in the options",
		                path, opt->targets < 0 ? "target" : "feature");
	memset(&r, 0, sizeof r);
	memset(&h, 0, sizeof h);
	r.path = path;
	errno = 0;
	r.f = fopen(path, "r");
	if (!r.f)
		return bnn_fail(err, errno == ENOMEM ? BNN_ENOMEM : BNN_EIO, "%s: cannot open: %s",
		                path, errno ? strerror(errno) : "unknown error");

	rc = csv_read_header(&r, opt, &h, out, err);
	while (!rc && rows) {
		int got = csv_getline(&r, err);

		if (got < 0) {
			rc = -got;
			break;
		}
		if (got == 0)
			break;
		if (csv_line_blank(&r, 0)) {
			if (!blank)
				blank = r.lineno;
			continue;
		}
		if (blank) {
			rc = bnn_fail(err, BNN_EFORMAT,
			              "%s:%ld: empty line "
			              "(only the end of the file may have "
			              "empty lines)",
			              path, blank);
			break;
		}
		rc = csv_split(&r, 0, err);
		if (!rc && out->n == cap)
			rc = csv_grow(path, out, &cap, err);
		if (!rc)
			rc = csv_row(&r, &h, out, err);
		if (!rc)
			out->n++;
	}
	if (!rc && rows && out->n == 0)
		rc = bnn_fail(err, BNN_EFORMAT,
		              "%s: no examples: the file has "
		              "a header row but no data rows",
		              path);

	fclose(r.f);
	free(r.line);
	free(r.buf);
	free(r.fields);
	csv_header_free(&h);
	if (rc) {
		bnn_dataset_free(out);
		return rc;
	}
	/* Give back what the doubling over-allocated (failure is harmless). */
	if (out->n < cap) {
		float *p = realloc(out->x, (size_t)out->n * (size_t)out->features * sizeof *p);

		if (p)
			out->x = p;
		if (out->targets) {
			p = realloc(out->y, (size_t)out->n * (size_t)out->targets * sizeof *p);
			if (p)
				out->y = p;
		}
	}
	return BNN_OK;
}

int bnn_data_load_csv(const char *path, const bnn_csv_options *opt, bnn_dataset *out, bnn_err *err)
{
	return csv_load(path, opt, 1, out, err);
}

int bnn_data_csv_header(const char *path, const bnn_csv_options *opt, bnn_dataset *out,
                        bnn_err *err)
{
	return csv_load(path, opt, 0, out, err);
}
