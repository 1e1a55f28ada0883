/* symtab.h: a string-keyed hash table for the front end's scopes.
 *
 * Maps a name to a pointer chosen by the caller.  Keys are borrowed (they
 * live in the AST arena, which outlives every table).  Open addressing with
 * linear probing; lookups and inserts are O(1) on average, so a model of a
 * hundred thousand statements resolves as fast as a small one.
 */
#ifndef BNN_SYMTAB_H
#define BNN_SYMTAB_H

#include <stddef.h>

struct symtab_slot {
	const char *key; /* borrowed; NULL = empty */
	void *value;
};

struct symtab {
	struct symtab_slot *slots; /* owned */
	size_t cap, count;
};

/* Returns the value stored under KEY, or NULL. */
void *symtab_get(const struct symtab *t, const char *key);

/* Stores VALUE under KEY unless KEY is present.  Returns 1 if stored, 0 if
 * KEY was already present (*OLD receives its value if OLD is not NULL), -1
 * when out of memory. */
int symtab_put(struct symtab *t, const char *key, void *value, void **old);

void symtab_free(struct symtab *t);

#endif
