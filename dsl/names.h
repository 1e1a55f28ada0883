/* names.h: the rules for names that reach generated C, and "did you mean"
 * suggestions for misspelt ones.
 *
 * Every name a .bnn file introduces (model, input, nodes, target) ends up in
 * generated C identifiers, so it must not be a C or C++ keyword, an
 * identifier reserved to the implementation (a leading underscore, or "__"
 * anywhere), or longer than NAMES_MAX_LEN characters.  The model name is
 * the prefix of every generated symbol and must not start with "bnn" (the
 * runtime's namespace).  Suggestions use the edit distance and the rule
 * that libbnn's driver also uses (common/edit_distance.h), case-sensitive.
 */
#ifndef BNN_NAMES_H
#define BNN_NAMES_H

#include <stddef.h>

#include "common/edit_distance.h"
#include "diag.h"

enum {
	NAMES_MAX_LEN = 63
};

/* Checks NAME, introduced at LOC as a WHAT ("node", "model", ...).  Reports
 * an error and returns -1 if it may not reach generated C, else 0. */
int names_check(struct diag *d, const char *name, bnn_loc loc, const char *what);
int names_check_model(struct diag *d, const char *name, bnn_loc loc);

/* Nonzero if NAME is a C11 or C++ keyword. */
int names_is_keyword(const char *name);

/* Nonzero if NAME is a keyword or reserved (leading '_', or '__'). */
int names_is_reserved(const char *name);

/* A running "did you mean" search: offer candidates, read best. */
struct names_suggestion {
	struct bnn_text_suggestion search; /* the shared search, case-sensitive */
	const char *best;                  /* the closest candidate so far, or NULL */
};
void names_suggest_init(struct names_suggestion *s, const char *wanted);
void names_suggest_offer(struct names_suggestion *s, const char *candidate);

#endif
