/*
 * m4_semihost.h: the Arm semihosting calls the Cortex-M4 image of
 * t/cross/run.sh uses to talk to the emulator: its standard output and its
 * exit status.  On M-profile cores a semihosting call is "bkpt 0xab" with
 * the operation in r0 and its argument (a pointer to a parameter block) in
 * r1; qemu-system-arm serves it with -semihosting-config enable=on
 * (Arm, "Semihosting for AArch32 and AArch64", version 2.0, sections 4 and
 * 5: SYS_OPEN, SYS_WRITE, SYS_WRITE0, SYS_EXIT_EXTENDED).
 */
#ifndef M4_SEMIHOST_H
#define M4_SEMIHOST_H

#include <stdint.h>

/* Write any buffered standard output, then end the emulation with the
 * process exit status `status` (qemu-system-arm exits with it). */
void m4_exit(int32_t status) __attribute__((noreturn));

/* Write the NUL-terminated message s to the emulator's standard error
 * (SYS_WRITE0), unbuffered: for faults, where the program's own output
 * path may be what broke. */
void m4_report(const char *s);

#endif
