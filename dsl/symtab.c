/* symtab.c: the string-keyed hash table of symtab.h (FNV-1a, linear probing). */
#include "symtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t symtab_hash(const char *s)
{
	uint64_t h = 14695981039346656037u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return (size_t)h;
}

static struct symtab_slot *symtab_find(const struct symtab *t, const char *key)
{
	size_t i = symtab_hash(key) & (t->cap - 1);
	while (t->slots[i].key && strcmp(t->slots[i].key, key) != 0)
		i = (i + 1) & (t->cap - 1);
	return &t->slots[i];
}

void *symtab_get(const struct symtab *t, const char *key)
{
	return t->cap ? symtab_find(t, key)->value : NULL;
}

static int symtab_grow(struct symtab *t)
{
	struct symtab old = *t;
	size_t i;
	t->cap = old.cap ? 2 * old.cap : 64;
	t->slots = calloc(t->cap, sizeof *t->slots);
	if (!t->slots) {
		*t = old;
		return -1;
	}
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*symtab_find(t, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

int symtab_put(struct symtab *t, const char *key, void *value, void **old)
{
	struct symtab_slot *s;
	if (2 * (t->count + 1) > t->cap && symtab_grow(t) != 0)
		return -1;
	s = symtab_find(t, key);
	if (s->key) {
		if (old)
			*old = s->value;
		return 0;
	}
	s->key = key;
	s->value = value;
	t->count++;
	return 1;
}

void symtab_free(struct symtab *t)
{
	free(t->slots);
	memset(t, 0, sizeof *t);
}
