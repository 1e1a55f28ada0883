/* source.c: reading a .bnn file (or standard input) into memory and indexing
 * its lines for the diagnostics.  See source.h. */
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int source_index_lines(struct source *src)
{
	size_t cap = 64, i;
	src->nlines = 0;
	src->line_starts = malloc(cap * sizeof *src->line_starts);
	if (!src->line_starts)
		return -1;
	src->line_starts[src->nlines++] = 0;
	for (i = 0; i < src->len; i++) {
		if (src->text[i] != '\n')
			continue;
		if ((size_t)src->nlines == cap) {
			size_t *grown = realloc(src->line_starts, 2 * cap * sizeof *grown);
			if (!grown)
				return -1;
			src->line_starts = grown;
			cap *= 2;
		}
		src->line_starts[src->nlines++] = i + 1;
	}
	return 0;
}

static int source_adopt(struct source *src, const char *name, char *text, size_t len)
{
	src->name = malloc(strlen(name) + 1);
	src->text = text;
	src->len = len;
	if (!src->name)
		return -1;
	strcpy(src->name, name);
	text[len] = '\0';
	return source_index_lines(src);
}

int source_from_memory(struct source *src, const char *name, const char *bytes, size_t len)
{
	char *text;
	memset(src, 0, sizeof *src);
	if (len > SOURCE_MAX_BYTES || !(text = malloc(len + 1)))
		return -1;
	if (len)
		memcpy(text, bytes, len);
	return source_adopt(src, name, text, len);
}

/* Reads all of F; returns the buffer (with room for a NUL) or NULL. */
static char *source_slurp(FILE *f, size_t *len, const char **why)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap + 1);
	*why = "out of memory";
	if (!buf)
		return NULL;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n > SOURCE_MAX_BYTES) {
			*why = "file too large (the limit is 16 MiB)";
			free(buf);
			return NULL;
		}
		if (n == cap) {
			char *grown = realloc(buf, 2 * cap + 1);
			if (!grown) {
				free(buf);
				return NULL;
			}
			buf = grown;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		*why = strerror(errno);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int source_load(struct source *src, const char *path, FILE *err)
{
	int from_stdin = strcmp(path, "-") == 0;
	const char *why = NULL;
	FILE *f;
	char *text;
	size_t len = 0;

	memset(src, 0, sizeof *src);
	f = from_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		fprintf(err, "bnnc: %s: %s\n", path, strerror(errno));
		return -1;
	}
	text = source_slurp(f, &len, &why);
	if (!from_stdin)
		fclose(f);
	if (!text) {
		/* A directory opens but fails to read with EISDIR. */
		fprintf(err, "bnnc: %s: %s\n", from_stdin ? "<stdin>" : path, why);
		return -1;
	}
	if (source_adopt(src, from_stdin ? "<stdin>" : path, text, len) != 0) {
		fprintf(err, "bnnc: %s: out of memory\n", path);
		return -1;
	}
	return 0;
}

const char *source_line(const struct source *src, int line, size_t *len)
{
	size_t start, end;
	if (line < 1 || line > src->nlines)
		return NULL;
	start = src->line_starts[line - 1];
	end = start;
	while (end < src->len && src->text[end] != '\n')
		end++;
	if (end > start && src->text[end - 1] == '\r')
		end--;
	*len = end - start;
	return src->text + start;
}

void source_free(struct source *src)
{
	free(src->name);
	free(src->text);
	free(src->line_starts);
	memset(src, 0, sizeof *src);
}
