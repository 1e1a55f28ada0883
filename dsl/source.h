/* source.h: a .bnn file held in memory, with an index of its lines.
 *
 * The whole file is read at once (the scanner works on the buffer and the
 * diagnostics quote lines from it).  NUL bytes, CR LF line ends and a missing
 * final newline are all representable; the buffer is additionally NUL
 * terminated for convenience.
 */
#ifndef BNN_SOURCE_H
#define BNN_SOURCE_H

#include <stddef.h>
#include <stdio.h>

enum {
	SOURCE_MAX_BYTES = 16 * 1024 * 1024
};

struct source {
	char *name;          /* owned: the name used in diagnostics ("<stdin>" for -) */
	char *text;          /* owned: the bytes, plus a terminating NUL */
	size_t len;          /* number of bytes, without the terminating NUL */
	size_t *line_starts; /* owned: offset of the first byte of each line */
	int nlines;          /* number of entries in line_starts */
};

/* Loads PATH ("-" = standard input) into SRC.  Returns 0, or -1 after writing
 * "bnnc: PATH: reason" to ERR.  Free with source_free() in both cases. */
int source_load(struct source *src, const char *path, FILE *err);

/* Makes SRC from LEN bytes at BYTES (copied), named NAME.  Returns 0, or -1
 * when out of memory or larger than SOURCE_MAX_BYTES. */
int source_from_memory(struct source *src, const char *name, const char *bytes, size_t len);

/* Line LINE (1-based) of SRC without its line end; *LEN receives its length.
 * Returns NULL when LINE is out of range. */
const char *source_line(const struct source *src, int line, size_t *len);

void source_free(struct source *src);

#endif
