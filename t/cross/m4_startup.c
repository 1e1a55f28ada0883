/*
 * m4_startup.c: what runs before and around main() on the emulated
 * Cortex-M4 board of t/cross/run.sh (qemu-system-arm -M mps2-an386): the
 * vector table, the reset handler and a handler for every fault.
 *
 * At reset the core loads its stack pointer and the reset handler's address
 * from the first two words of the vector table, which mps2_an386.ld places
 * at address 0.  The reset handler then, in this order:
 *   1. grants full access to the FPU (coprocessors CP10 and CP11 in CPACR,
 *      Armv7-M Architecture Reference Manual B3.2.20): out of reset they
 *      are off, and the first floating-point instruction would be a
 *      UsageFault.  It is written in assembly so that no compiled code can
 *      touch an FPU register before this;
 *   2. copies .data from its load address in the code region to RAM and
 *      zeroes .bss (the C program's static storage, as C requires);
 *   3. calls main() and passes its return value to m4_exit(), which makes
 *      it qemu's exit status.
 * Every other exception ends the run: its name and the faulting pc go to
 * standard error and qemu exits with 128 + the exception number (131 for
 * a HardFault), as a shell reports a signal, so a fault fails fast instead
 * of spinning until the timeout.
 */
#include "m4_semihost.h"

#include "cross_print.h"

#include <stdint.h>
#include <string.h>

int main(void);
void m4_reset(void) __attribute__((noreturn));

/* Symbols of mps2_an386.ld. */
extern uint32_t m4_data_load[], m4_data_start[], m4_data_end[];
extern uint32_t m4_bss_start[], m4_bss_end[], m4_stack_top[];

enum {
	M4_VECTORS = 16, /* the core's own exceptions; no interrupt is enabled */
	M4_FAULT_BASE = 128
};

/* The C part of the reset handler, entered with the FPU on. */
__attribute__((used, noreturn)) static void m4_start(void)
{
	memcpy(m4_data_start, m4_data_load, (size_t)((char *)m4_data_end - (char *)m4_data_start));
	memset(m4_bss_start, 0, (size_t)((char *)m4_bss_end - (char *)m4_bss_start));
	m4_exit(main());
}

/* The reset handler (global: the image's ELF entry point).  CPACR
 * (0xe000ed88) bits 20-23: full access to CP10 and CP11; the
 * barriers make the change visible before the next instruction. */
__attribute__((naked, noreturn)) void m4_reset(void)
{
	__asm__ volatile("ldr r0, =0xe000ed88\n\t"
	                 "ldr r1, [r0]\n\t"
	                 "orr r1, r1, #(0xf << 20)\n\t"
	                 "str r1, [r0]\n\t"
	                 "dsb\n\t"
	                 "isb\n\t"
	                 "b m4_start\n\t"
	                 ".ltorg");
}

/* The names of the exceptions by number (Armv7-M ARM, B1.5.2). */
static const char *const m4_exception_names[M4_VECTORS] = {
	"thread mode",  "Reset",    "NMI",      "HardFault", "MemManage", "BusFault",
	"UsageFault",   "reserved", "reserved", "reserved",  "reserved",  "SVCall",
	"DebugMonitor", "reserved", "PendSV",   "SysTick"
};

/* Report exception `number`, whose stacked frame (r0-r3, r12, lr, pc,
 * xpsr) is at frame, and end the run. */
__attribute__((used, noreturn)) static void m4_fault_report(const uint32_t *frame, uint32_t number)
{
	char at_pc[] = " at pc 0x12345678\n";

	cross_format_hex32(at_pc + 9, frame[6]);
	m4_report("m4_startup: ");
	m4_report(m4_exception_names[number % M4_VECTORS]);
	m4_report(at_pc);
	m4_exit((int32_t)(M4_FAULT_BASE + (number & 0x1ff)));
}

/* Every exception but reset: pass the stacked frame (on the main stack,
 * the only one used) and the exception number (IPSR) to the report. */
__attribute__((naked, noreturn)) static void m4_fault(void)
{
	__asm__ volatile("mrs r0, msp\n\t"
	                 "mrs r1, ipsr\n\t"
	                 "b m4_fault_report");
}

/* The vector table: the initial stack pointer, then the handlers. */
__attribute__((section(".vectors"), used)) static const struct {
	const void *stack_top;
	void (*handler[M4_VECTORS - 1])(void);
} m4_vectors = {
	m4_stack_top,
	{ m4_reset, m4_fault, m4_fault, m4_fault, m4_fault, m4_fault, m4_fault, m4_fault, m4_fault,
	  m4_fault, m4_fault, m4_fault, m4_fault, m4_fault, m4_fault },
};
