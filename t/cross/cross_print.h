/*
 * cross_print.h: the output of the programs that t/cross/run.sh builds for
 * the host, for the emulated Cortex-M4 board and for s390x.  A freestanding
 * image has no printf, so a program prints through these few functions,
 * which format in plain C99 (no library call, no locale, no float-to-decimal
 * conversion): the same source then gives the same bytes on every target,
 * and a test compares the outputs with cmp.
 *
 * cross_put_float() writes what glibc's printf("%a", (double)x) writes for
 * a float x ("0x1.8p+1", "-0x1.99999ap-4", "0x0p+0", "inf", "-nan"), so a
 * program's output can also be compared with a host program that uses
 * printf (t/cross.sh checks the two agree).  Hexadecimal floats carry the
 * exact bits: two outputs are equal only if the floats are.
 *
 * Each target supplies cross_write() (t/cross/cross_stdio.c on hosted
 * targets, t/cross/m4_semihost.c on the board); the rest is target-free.
 */
#ifndef CROSS_PRINT_H
#define CROSS_PRINT_H

#include <stddef.h>
#include <stdint.h>

/* Write n bytes to the program's standard output (the target's backend). */
void cross_write(const char *s, size_t n);

/* Write the string s (no newline added). */
void cross_put_str(const char *s);

/* Write v in decimal, with a '-' if negative. */
void cross_put_int(int32_t v);

/* Write v as 8 lowercase hexadecimal digits, without "0x". */
void cross_put_hex32(uint32_t v);

/* The 8 digits of cross_put_hex32(v) in out (no NUL), for the board's
 * fault report, which bypasses the buffered output. */
void cross_format_hex32(char out[8], uint32_t v);

/* Write x as printf("%a", (double)x) does with glibc. */
void cross_put_float(float x);

#endif
