/*
 * print_check.c: t/cross.sh's check, on the host, that cross_put_float()
 * writes what glibc's printf("%a", (double)x) writes, for the special
 * floats (zeros, infinities, NaNs, the ends of the normal and subnormal
 * ranges) and for hashed bit patterns that cover every exponent.  So the
 * outputs of the harness's programs can be compared with those of hosted
 * programs that print with printf.  It prints each disagreement and exits
 * 1 if there was one.
 */
#include "cross_print.h"

#include <stdio.h>
#include <string.h>

enum {
	CHECK_HASHED = 200000 /* hashed bit patterns */
};

static char check_buf[64];
static size_t check_used;

/* cross_write() of this program: into check_buf, to compare. */
void cross_write(const char *s, size_t n)
{
	if (n > sizeof check_buf - 1 - check_used)
		n = sizeof check_buf - 1 - check_used;
	memcpy(check_buf + check_used, s, n);
	check_used += n;
	check_buf[check_used] = '\0';
}

/* 1 if cross_put_float() and printf agree on the float with these bits. */
static int check_bits(uint32_t bits)
{
	char want[64];
	float x;

	memcpy(&x, &bits, sizeof x);
	snprintf(want, sizeof want, "%a", (double)x);
	check_used = 0;
	cross_put_float(x);
	if (strcmp(check_buf, want) == 0)
		return 1;
	printf("bits %08lx: printf gives %s, cross_put_float %s\n", (unsigned long)bits, want,
	       check_buf);
	return 0;
}

/* xorshift32 (Marsaglia, "Xorshift RNGs", 2003): bit patterns. */
static uint32_t check_next(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

int main(void)
{
	static const uint32_t special[] = { 0x00000000, 0x80000000, 0x7f800000, 0xff800000,
		                            0x7fc00000, 0xffc00000, 0x7f800001, 0x00000001,
		                            0x80000001, 0x00000003, 0x007fffff, 0x00400000,
		                            0x00000010, 0x00800000, 0x7f7fffff, 0x3f800000,
		                            0x3fc00000, 0xbf800001, 0x3dcccccd, 0x40490fdb };
	uint32_t state = 2463534242u;
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof special / sizeof special[0]; i++)
		bad += !check_bits(special[i]);
	for (i = 0; i < CHECK_HASHED && bad < 10; i++)
		bad += !check_bits(check_next(&state));
	printf("%d disagreement(s)\n", bad);
	return bad != 0;
}
