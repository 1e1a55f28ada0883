/*
 * m4_semihost.c: cross_write() and the exit of the Cortex-M4 image, through
 * Arm semihosting (m4_semihost.h).
 *
 * Standard output: SYS_OPEN of the special name ":tt" in mode 4 ("w")
 * gives the handle of the debugger's console output, which
 * qemu-system-arm writes to its own standard output (SYS_WRITE0 and
 * SYS_WRITEC go to its standard error instead, which is where m4_report()
 * sends fault messages).  Each semihosting call traps out of the emulated
 * CPU, so output is gathered in a buffer and written a block at a time,
 * and at exit.
 *
 * Exit: SYS_EXIT with ADP_Stopped_ApplicationExit can only say "success"
 * on AArch32; SYS_EXIT_EXTENDED takes the same reason plus a subcode, which
 * qemu makes its exit status (qemu 7.2, semihosting/arm-compat-semi.c).
 * This is what newlib's rdimon does too, at a fraction of its size
 * (docs/testing.md compares the two).
 */
#include "m4_semihost.h"

#include "cross_print.h"

#include <stddef.h>

enum {
	M4_SYS_OPEN = 0x01,
	M4_SYS_WRITE0 = 0x04,
	M4_SYS_WRITE = 0x05,
	M4_SYS_EXIT_EXTENDED = 0x20,
	M4_OPEN_MODE_W = 4,                /* fopen's "w" in SYS_OPEN's numbering */
	M4_ADP_APPLICATION_EXIT = 0x20026, /* ADP_Stopped_ApplicationExit */
	M4_ADP_RUNTIME_ERROR = 0x20023,    /* ADP_Stopped_RunTimeErrorUnknown */
	M4_OUT_BUFFER = 256
};

static char m4_out_buf[M4_OUT_BUFFER];
static size_t m4_out_used;
static int32_t m4_out_handle = -1; /* the ":tt" handle once opened */

/* One semihosting call: operation op, parameter block arg; returns r0. */
static int32_t m4_semihost_call(int32_t op, const void *arg)
{
	register int32_t r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;

	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

void m4_report(const char *s)
{
	m4_semihost_call(M4_SYS_WRITE0, s);
}

/* End the emulation as a run-time error (qemu exits with status 1). */
static void m4_abort(void) __attribute__((noreturn));
static void m4_abort(void)
{
	uint32_t block[2] = { M4_ADP_RUNTIME_ERROR, 1 };

	for (;;)
		m4_semihost_call(M4_SYS_EXIT_EXTENDED, block);
}

/* Write the buffered output to the console; a failure ends the run, as an
 * output that silently lost bytes would only show up as a diff. */
static void m4_flush(void)
{
	uint32_t block[3];

	if (m4_out_used == 0)
		return;
	if (m4_out_handle < 0) {
		static const char tt[] = ":tt";

		block[0] = (uint32_t)(uintptr_t)tt;
		block[1] = M4_OPEN_MODE_W;
		block[2] = sizeof tt - 1;
		m4_out_handle = m4_semihost_call(M4_SYS_OPEN, block);
		if (m4_out_handle < 0) {
			m4_report(
			        "m4_semihost: SYS_OPEN of \":tt\" failed (is semihosting enabled?)\n");
			m4_abort();
		}
	}
	block[0] = (uint32_t)m4_out_handle;
	block[1] = (uint32_t)(uintptr_t)m4_out_buf;
	block[2] = (uint32_t)m4_out_used;
	/* SYS_WRITE returns the number of bytes it did not write */
	if (m4_semihost_call(M4_SYS_WRITE, block) != 0) {
		m4_report("m4_semihost: SYS_WRITE to the console failed\n");
		m4_abort();
	}
	m4_out_used = 0;
}

void cross_write(const char *s, size_t n)
{
	while (n > 0) {
		size_t room = M4_OUT_BUFFER - m4_out_used;
		size_t take = n < room ? n : room;
		size_t i;

		for (i = 0; i < take; i++)
			m4_out_buf[m4_out_used + i] = s[i];
		m4_out_used += take;
		s += take;
		n -= take;
		if (m4_out_used == M4_OUT_BUFFER)
			m4_flush();
	}
}

void m4_exit(int32_t status)
{
	uint32_t block[2];

	m4_flush();
	block[0] = M4_ADP_APPLICATION_EXIT;
	block[1] = (uint32_t)status;
	for (;;)
		m4_semihost_call(M4_SYS_EXIT_EXTENDED, block);
}
