/* names.c: validation of names that reach generated C, and suggestions
 * (the shared search of common/edit_distance.h). */
#include "names.h"

#include <stdlib.h>
#include <string.h>

/* C11 keywords, then the C++ keywords that are not also C keywords, so a
 * generated header stays usable from C++.  Sorted for bsearch. */
/* clang-format off */
static const char *const names_keywords[] = {
	"_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
	"_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
	"bool", "break", "case", "catch", "char", "char16_t", "char32_t",
	"char8_t", "class", "co_await", "co_return", "co_yield", "compl",
	"concept", "const", "const_cast", "consteval", "constexpr", "constinit",
	"continue", "decltype", "default", "delete", "do", "double",
	"dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
	"float", "for", "friend", "goto", "if", "inline", "int", "long",
	"mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
	"operator", "or", "or_eq", "private", "protected", "public", "register",
	"reinterpret_cast", "requires", "restrict", "return", "short", "signed",
	"sizeof", "static", "static_assert", "static_cast", "struct", "switch",
	"template", "this", "thread_local", "throw", "true", "try", "typedef",
	"typeid", "typename", "union", "unsigned", "using", "virtual", "void",
	"volatile", "wchar_t", "while", "xor", "xor_eq",
};
/* clang-format on */

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int names_is_keyword(const char *name)
{
	return bsearch(&name, names_keywords, sizeof names_keywords / sizeof *names_keywords,
	               sizeof *names_keywords, names_cmp) != NULL;
}

int names_is_reserved(const char *name)
{
	return names_is_keyword(name) || name[0] == '_' || strstr(name, "__") != NULL;
}

int names_check(struct diag *d, const char *name, bnn_loc loc, const char *what)
{
	size_t len = strlen(name);
	if (len > NAMES_MAX_LEN) {
		diag_error(d, loc,
		           "%s name '%.20s...' is too long (%zu characters; the limit is %d)", what,
		           name, len, NAMES_MAX_LEN);
		return -1;
	}
	if (names_is_keyword(name)) {
		diag_error(d, loc, "%s name '%s' is a C or C++ keyword", what, name);
		return -1;
	}
	if (name[0] == '_' || strstr(name, "__")) {
		diag_error(d, loc,
		           "%s name '%s' is reserved in C (it %s); generated code cannot use it",
		           what, name, name[0] == '_' ? "starts with '_'" : "contains '__'");
		return -1;
	}
	return 0;
}

int names_check_model(struct diag *d, const char *name, bnn_loc loc)
{
	if (names_check(d, name, loc, "model") != 0)
		return -1;
	if ((name[0] | 0x20) == 'b' && (name[1] | 0x20) == 'n' && (name[2] | 0x20) == 'n') {
		diag_error(d, loc,
		           "model name '%s' starts with 'bnn', which is reserved for libbnn", name);
		return -1;
	}
	return 0;
}

void names_suggest_init(struct names_suggestion *s, const char *wanted)
{
	bnn_text_suggest_init(&s->search, wanted, BNN_TEXT_EXACT_CASE);
	s->best = NULL;
}

void names_suggest_offer(struct names_suggestion *s, const char *candidate)
{
	bnn_text_suggest_offer(&s->search, candidate);
	s->best = s->search.best;
}
