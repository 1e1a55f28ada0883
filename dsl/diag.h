/* diag.h: source locations and GCC-style diagnostics for the .bnn front end.
 *
 * Every token and AST node carries a bnn_loc.  One reporter prints
 *
 *     FILE:LINE:COL: error: MESSAGE
 *      the source line
 *          ^~~~~
 *
 * and counts what it printed; it never exits, so one run reports several
 * errors.  An error identical to one already reported (same place, same
 * text: a mistake inside a block that is expanded twice) is not repeated.  Only bnnc's main() turns the counts into an exit status.  After
 * DIAG_MAX_ERRORS errors the reporter prints one "too many errors" line and
 * asks the phases (diag_should_stop) to give up, so garbage input cannot
 * flood the terminal.
 */
#ifndef BNN_DIAG_H
#define BNN_DIAG_H

#include <stdarg.h>
#include <stdio.h>

#include "source.h"

/* A range in the source, 1-based; last_column is inclusive.  first_line == 0
 * means "no position" (the diagnostic is about the whole file). */
typedef struct bnn_loc {
	int first_line;   /* line of the first character */
	int first_column; /* column (byte) of the first character */
	int last_line;    /* line of the last character */
	int last_column;  /* column (byte) of the last character, inclusive */
} bnn_loc;

enum {
	DIAG_MAX_ERRORS = 20
};

enum diag_kind {
	DIAG_ERROR,
	DIAG_WARNING,
	DIAG_NOTE
};

struct diag {
	const struct source *src; /* borrowed: the file being compiled */
	FILE *out;                /* borrowed: where messages go (stderr) */
	int errors;               /* errors reported so far */
	int warnings;             /* warnings reported so far */
	int stopped;              /* the error limit was reached */
	int muted;                /* the last error was suppressed: so are its notes */
	/* Called after each error or warning, to add notes that say where it
     * happened (sema: "in block 'res', expanded here"). */
	void (*context)(struct diag *d, void *arg);
	void *context_arg;
	unsigned long seen[DIAG_MAX_ERRORS + 1]; /* hashes of the errors reported */
	int nseen;
};

/* Starts a reporter for SRC writing to OUT; both are borrowed. */
void diag_init(struct diag *d, const struct source *src, FILE *out);

/* Report an error, a warning, or a note attached to the previous message. */
void diag_error(struct diag *d, bnn_loc loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *d, bnn_loc loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void diag_note(struct diag *d, bnn_loc loc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void diag_report(struct diag *d, enum diag_kind kind, bnn_loc loc, const char *fmt, va_list ap);

/* Nonzero once the error limit is reached: phases stop early. */
int diag_should_stop(const struct diag *d);

/* A location covering A through B. */
bnn_loc diag_span(bnn_loc a, bnn_loc b);

/* The "no position" location. */
extern const bnn_loc diag_noloc;

#endif
