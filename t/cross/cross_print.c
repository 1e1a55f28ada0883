/*
 * cross_print.c: the target-free formatting of cross_print.h: strings,
 * decimal integers, 32-bit hexadecimal words and floats in the "%a"
 * hexadecimal notation, built digit by digit into a small buffer and
 * handed to the target's cross_write().
 *
 * The float is taken apart through its bits (memcpy into a uint32_t, which
 * is the same on either byte order: the value's bits, not its bytes), so
 * no float arithmetic and no library routine is involved.  glibc prints a
 * float promoted to double, so a subnormal float, which is a normal
 * double, is written normalised ("0x1p-149"), and trailing zero digits of
 * the fraction are dropped.
 */
#include "cross_print.h"

#include <string.h>

enum {
	CROSS_FRAC_BITS = 23,   /* stored fraction bits of a binary32 */
	CROSS_EXP_BIAS = 127,   /* exponent bias of a binary32 */
	CROSS_EXP_SPECIAL = 255 /* biased exponent of inf and NaN */
};

static const char cross_hex_digits[] = "0123456789abcdef";

void cross_put_str(const char *s)
{
	cross_write(s, strlen(s));
}

/* Write the decimal digits of v (at least one). */
static void cross_put_decimal(uint32_t v)
{
	char buf[10];
	size_t n = 0;

	do {
		buf[sizeof buf - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	cross_write(buf + sizeof buf - n, n);
}

void cross_put_int(int32_t v)
{
	if (v < 0) {
		cross_write("-", 1);
		/* through unsigned arithmetic, so INT32_MIN is no overflow */
		cross_put_decimal(0u - (uint32_t)v);
	} else {
		cross_put_decimal((uint32_t)v);
	}
}

void cross_format_hex32(char out[8], uint32_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		out[i] = cross_hex_digits[v & 0xf];
		v >>= 4;
	}
}

void cross_put_hex32(uint32_t v)
{
	char buf[8];

	cross_format_hex32(buf, v);
	cross_write(buf, sizeof buf);
}

/* Write "1." and the fraction (23 bits, the binary point after the leading
 * 1) as hexadecimal digits without the trailing zeros, then "p" and the
 * signed binary exponent: "%a"'s layout for a normal number. */
static void cross_put_normal(uint32_t frac, int32_t exp)
{
	/* 23 bits are 6 hex digits once shifted to a multiple of 4 */
	uint32_t digits = frac << 1;
	int ndigits = 6;

	while (ndigits > 0 && (digits & 0xf) == 0) {
		digits >>= 4;
		ndigits--;
	}
	cross_put_str(ndigits > 0 ? "0x1." : "0x1");
	while (ndigits > 0) {
		ndigits--;
		cross_write(&cross_hex_digits[(digits >> (4 * ndigits)) & 0xf], 1);
	}
	cross_put_str(exp < 0 ? "p-" : "p+");
	cross_put_decimal(exp < 0 ? (uint32_t)-exp : (uint32_t)exp);
}

void cross_put_float(float x)
{
	uint32_t bits, frac;
	int32_t biased;

	memcpy(&bits, &x, sizeof bits);
	frac = bits & ((1u << CROSS_FRAC_BITS) - 1);
	biased = (int32_t)((bits >> CROSS_FRAC_BITS) & 0xff);
	if (bits >> 31)
		cross_write("-", 1);
	if (biased == CROSS_EXP_SPECIAL) {
		cross_put_str(frac != 0 ? "nan" : "inf");
	} else if (biased != 0) {
		cross_put_normal(frac, biased - CROSS_EXP_BIAS);
	} else if (frac == 0) {
		cross_put_str("0x0p+0");
	} else {
		/* subnormal: frac * 2^-149; shift its leading 1 to bit 23 */
		int32_t exp = 1 - CROSS_EXP_BIAS;

		while (!(frac & (1u << CROSS_FRAC_BITS))) {
			frac <<= 1;
			exp--;
		}
		cross_put_normal(frac & ((1u << CROSS_FRAC_BITS) - 1), exp);
	}
}
