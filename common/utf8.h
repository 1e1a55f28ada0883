/*
 * utf8.h: the one UTF-8 validator of bnnc and libbnn.  The compiler's
 * diagnostics quote a source line character by character, and the SVG
 * charts escape their labels; both need to know where a valid UTF-8
 * character ends and what is not one.  A check particular to one user
 * (the characters XML forbids, in plot_svg.c) is layered on top of the
 * code point this returns.  Shared by dsl/ and runtime/: not part of the
 * public API.
 */
#ifndef BNN_COMMON_UTF8_H
#define BNN_COMMON_UTF8_H

#include <stddef.h>

/*
 * The length (1 to 4) of the valid UTF-8 character at p, of which at most
 * avail bytes may be read, or 0 when p does not start one: a stray
 * continuation byte, an overlong form, a surrogate (U+D800..U+DFFF), a
 * code point above U+10FFFF, or a sequence cut short by avail or by a
 * byte that is not a continuation byte (so a NUL-terminated string may be
 * passed with avail SIZE_MAX).  An ASCII byte, NUL included, is 1.  When
 * cp is not NULL it receives the code point of a valid character.
 */
size_t bnn_text_utf8_len(const unsigned char *p, size_t avail, unsigned long *cp);

#endif
