/*
 * train_options_file.c: training options as text files and words, read
 * and written with the one table and setter of train_options.c
 * (bnn_train_set), so that an options file takes exactly the names and
 * values of the driver's --set.  An options file (`train --options FILE`,
 * written by `tune --out`; docs/tune.md) has one NAME=VALUE a line, blank
 * lines and comments from '#' to the end of a line; its errors name the
 * file and the line.  The words of bnn_train_options_text (a checkpoint's
 * "options") read back the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

/* The longest line of an options file (names and values are short). */
#define OPTIONS_LINE_MAX 1024

static char *trim(char *s)
{
	char *end;

	s += strspn(s, " \t\r\n");
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	return s;
}

/* One line (its comment cut off already): blank, or NAME=VALUE applied to
 * o; errors prefixed with "PATH:LINE: ". */
static int options_line(bnn_train_options *o, char *line, const char *path, long lineno,
                        bnn_err *err)
{
	char *s = trim(line), *eq, *name, *value;
	bnn_err inner;

	if (!*s)
		return BNN_OK;
	eq = strchr(s, '=');
	if (!eq || eq == s)
		return bnn_fail(err, BNN_EINVAL, "%s:%ld: '%s' is not NAME=VALUE", path, lineno, s);
	*eq = '\0';
	name = trim(s);
	value = trim(eq + 1);
	if (!*value)
		return bnn_fail(err, BNN_EINVAL, "%s:%ld: option '%s' has no value", path, lineno,
		                name);
	if (bnn_train_set(o, name, value, &inner))
		return bnn_fail(err, inner.code, "%s:%ld: %s", path, lineno, inner.message);
	return BNN_OK;
}

int bnn_train_options_read(bnn_train_options *o, const char *path, bnn_err *err)
{
	char line[OPTIONS_LINE_MAX + 2], *hash;
	long lineno = 0;
	int rc = BNN_OK;
	FILE *f;

	if (!o || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_train_options_read: no %s given",
		                !o ? "options" : "file");
	f = fopen(path, "r");
	if (!f)
		return bnn_fail(err, BNN_EIO, "cannot open %s: %s", path, strerror(errno));
	while (!rc && fgets(line, sizeof line, f)) {
		lineno++;
		if (strlen(line) > OPTIONS_LINE_MAX && !strchr(line, '\n')) {
			rc = bnn_fail(err, BNN_EINVAL, "%s:%ld: the line is longer than %d bytes",
			              path, lineno, OPTIONS_LINE_MAX);
			break;
		}
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		rc = options_line(o, line, path, lineno, err);
	}
	if (!rc && ferror(f))
		rc = bnn_fail(err, BNN_EIO, "cannot read %s: %s", path, strerror(errno));
	fclose(f);
	return rc;
}

/* The next word "NAME=VALUE" of an options text, or NULL at its end;
 * *len its length. */
static const char *options_word(const char *p, size_t *len)
{
	p += strspn(p, " ");
	if (!*p)
		return NULL;
	*len = strcspn(p, " ");
	return p;
}

/* Whether a word's value is "auto" (or "nan", as checkpoints written
 * before "auto" spell it): an option left at a default that the trainer
 * works out (delta, tau_start, ess), which an options file leaves out. */
static int options_word_unset(const char *w, size_t len)
{
	return (len > 4 && strncmp(w + len - 4, "=nan", 4) == 0) ||
	       (len > 5 && strncmp(w + len - 5, "=auto", 5) == 0);
}

int bnn_train_options_from_text(bnn_train_options *o, const char *text, bnn_err *err)
{
	char word[256];
	const char *p = text ? text : "", *eq;
	size_t len;

	for (; (p = options_word(p, &len)) != NULL; p += len) {
		if (options_word_unset(p, len))
			continue;
		eq = memchr(p, '=', len);
		if (!eq || len >= sizeof word)
			return bnn_fail(err, BNN_EFORMAT, "options text: '%.*s' is not NAME=VALUE",
			                (int)len, p);
		memcpy(word, p, len);
		word[len] = '\0';
		word[eq - p] = '\0';
		if (bnn_train_set(o, word, word + (eq - p) + 1, err))
			return err ? err->code : BNN_EINVAL;
	}
	return BNN_OK;
}

int bnn_train_options_write(const bnn_train_options *o, FILE *f)
{
	char *text = bnn_train_options_text(o);
	const char *p;
	size_t len;

	if (!text)
		return -1;
	for (p = text; (p = options_word(p, &len)) != NULL; p += len)
		if (!options_word_unset(p, len))
			fprintf(f, "%.*s\n", (int)len, p);
	free(text);
	return ferror(f) ? -1 : 0;
}
