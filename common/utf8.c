/*
 * utf8.c: bnn_text_utf8_len(), strict UTF-8 decoding of one character
 * (RFC 3629: the shortest form only, no surrogates, nothing above
 * U+10FFFF); see utf8.h.
 */
#include "utf8.h"

size_t bnn_text_utf8_len(const unsigned char *p, size_t avail, unsigned long *cp)
{
	unsigned long c;
	size_t len, i;

	if (avail == 0)
		return 0;
	if (p[0] < 0x80) {
		len = 1;
		c = p[0];
	} else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > avail)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	if (c >= 0xd800 && c <= 0xdfff)
		return 0;
	if (cp)
		*cp = c;
	return len;
}
