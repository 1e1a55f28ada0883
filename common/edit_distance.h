/*
 * edit_distance.h: the one "did you mean" of bnnc and libbnn.  The
 * compiler (misspelt operations, families, names, arguments), the driver
 * and the trainer (misspelt option names) and the CSV reader (misspelt
 * column names) all measure how far a wrong name is from the right ones
 * with bnn_text_distance() and pick a suggestion with the same rule
 * (bnn_text_suggest_init/offer), so they suggest alike.  Only the CSV
 * reader ignores ASCII case (a header's "Price" for "price"), through a
 * flag.  Shared by dsl/ and runtime/: not part of the public API.
 */
#ifndef BNN_COMMON_EDIT_DISTANCE_H
#define BNN_COMMON_EDIT_DISTANCE_H

/* Flags of bnn_text_distance() and bnn_text_suggest_init(). */
enum {
	BNN_TEXT_EXACT_CASE = 0,  /* 'A' and 'a' differ */
	BNN_TEXT_IGNORE_CASE = 1, /* ASCII letters compare without case */
};

/*
 * The optimal string alignment distance between a and b: insertions,
 * deletions, substitutions and transpositions of two neighbours ("denes"
 * -> "dense") each cost 1.  Gives up early and returns limit + 1 once the
 * distance exceeds limit (also when memory runs out for long strings).
 */
int bnn_text_distance(const char *a, const char *b, int limit, int flags);

/*
 * The most edits a suggestion for wanted may be away: only close names are
 * offered, about a third of the length and at most 2 edits (0 for names
 * under 3 characters, 1 under 6, else 2).
 */
int bnn_text_suggest_limit(const char *wanted);

/* A running "did you mean" search: init, offer every candidate, read best
 * (the closest candidate within the limit, or NULL; of equally close
 * ones, the one that shares the longest prefix with wanted, then the
 * first offered: '--lod' gives '--load', not '--ood'). */
struct bnn_text_suggestion {
	const char *wanted; /* the misspelt name */
	const char *best;   /* the closest candidate so far, or NULL */
	int distance;       /* best's distance; before any, one past the limit */
	int flags;          /* BNN_TEXT_EXACT_CASE or BNN_TEXT_IGNORE_CASE */
};
void bnn_text_suggest_init(struct bnn_text_suggestion *s, const char *wanted, int flags);

/* Offers candidate; returns 1 when it became the best so far, else 0. */
int bnn_text_suggest_offer(struct bnn_text_suggestion *s, const char *candidate);

#endif
