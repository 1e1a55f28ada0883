/*
 * edit_distance.c: the edit distance and the "did you mean" rule shared by
 * the compiler and the library (see edit_distance.h).  The distance is the
 * optimal string alignment one, computed row by row with three rows (the
 * one before the previous is needed for transpositions) and abandoned as
 * soon as a whole row exceeds the limit.
 */
#include "edit_distance.h"

#include <stdlib.h>
#include <string.h>

/* Rows of names up to this length live on the stack. */
enum {
	TEXT_SHORT = 64
};

/* c, lowered when it is an ASCII capital and flags ask for it. */
static int text_fold(unsigned char c, int flags)
{
	if ((flags & BNN_TEXT_IGNORE_CASE) && c >= 'A' && c <= 'Z')
		return c - 'A' + 'a';
	return c;
}

/* The distance with rows of lb + 1 cells in mem (3 rows). */
static int text_distance_rows(const char *a, size_t la, const char *b, size_t lb, int limit,
                              int flags, int *mem)
{
	int *prev2 = mem, *prev = mem + lb + 1, *cur = mem + 2 * (lb + 1), *t;
	size_t i, j;

	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int best = cur[0] = (int)i;
		int ca = text_fold((unsigned char)a[i - 1], flags);

		for (j = 1; j <= lb; j++) {
			int cb = text_fold((unsigned char)b[j - 1], flags);
			int v = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == text_fold((unsigned char)b[j - 2], flags) &&
			    cb == text_fold((unsigned char)a[i - 2], flags) && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
		t = prev2, prev2 = prev, prev = cur, cur = t;
	}
	return prev[lb] > limit ? limit + 1 : prev[lb];
}

int bnn_text_distance(const char *a, const char *b, int limit, int flags)
{
	int stack[3 * (TEXT_SHORT + 1)], *mem = stack, d;
	size_t la = strlen(a), lb = strlen(b);

	if (limit < 0 || (la > lb ? la - lb : lb - la) > (size_t)limit)
		return limit + 1;
	if (lb > TEXT_SHORT && !(mem = malloc(3 * (lb + 1) * sizeof *mem)))
		return limit + 1;
	d = text_distance_rows(a, la, b, lb, limit, flags, mem);
	if (mem != stack)
		free(mem);
	return d;
}

int bnn_text_suggest_limit(const char *wanted)
{
	size_t len = strlen(wanted);

	return len >= 6 ? 2 : len >= 3 ? 1 : 0;
}

void bnn_text_suggest_init(struct bnn_text_suggestion *s, const char *wanted, int flags)
{
	s->wanted = wanted;
	s->best = NULL;
	s->distance = bnn_text_suggest_limit(wanted) + 1;
	s->flags = flags;
}

/* How many leading characters a and b share, under flags' case rule. */
static size_t text_common_prefix(const char *a, const char *b, int flags)
{
	size_t n = 0;

	while (a[n] &&
	       text_fold((unsigned char)a[n], flags) == text_fold((unsigned char)b[n], flags))
		n++;
	return n;
}

int bnn_text_suggest_offer(struct bnn_text_suggestion *s, const char *candidate)
{
	/* as close as the best so far may still win, by its prefix */
	int limit = s->best ? s->distance : s->distance - 1;
	int d = bnn_text_distance(s->wanted, candidate, limit, s->flags);

	if (d > limit)
		return 0;
	if (s->best && d == s->distance &&
	    text_common_prefix(s->wanted, candidate, s->flags) <=
	            text_common_prefix(s->wanted, s->best, s->flags))
		return 0;
	s->best = candidate;
	s->distance = d;
	return 1;
}
