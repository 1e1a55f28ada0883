#!/bin/sh
# cross.sh: C99 code gives the same bits on other architectures: on a
# Cortex-M4 (little-endian, single-precision FPU, no operating system)
# emulated by qemu-system-arm -M mps2-an386, and on s390x (big-endian)
# under qemu-user, as on the host.  The harness that builds and runs a
# program on each is t/cross/run.sh (docs/testing.md, "How other
# architectures are verified"); this test checks the harness and the
# probe t/cross/probe.c, and is the pattern for comparing generated code:
#   1. the harness's "%a" formatting (t/cross/cross_print.c) agrees with
#      printf's on the host, for special floats and 200000 hashed bit
#      patterns;
#   2. the probe (float arithmetic from a counter-based hash, hexadecimal
#      float literals, subnormals, byte-order-neutral decoding) prints the
#      same bytes on the host, the Cortex-M4 and s390x, apart from its
#      first line, which must say little-endian on the board and big-endian
#      on s390x;
#   3. the harness fails loudly: a non-zero exit status, a fault on the
#      board (HardFault, exit status 131) and a hang (killed by the
#      timeout) are each reported with the target and the reason, and a
#      missing tool is named with its Debian package.
# A target whose tools are missing is skipped with the reason, unless
# BNN_REQUIRE_CROSS=1 (CI sets it: .ci/run), which makes it a failure
# (t/cross/cross_tap.sh, whose checks other tests use too).
# The size of the probe's image on the board (arm-none-eabi-size) is
# printed as a diagnostic.  About five seconds.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# shellcheck source=t/cross/cross_tap.sh
. "$top_srcdir/t/cross/cross_tap.sh"

cross=$top_srcdir/t/cross
cd "$TAP_TMP" || bail_out "no temporary directory"

# A program that ends in one of three ways: exit status END_STATUS, a
# trap instruction (-DEND_TRAP), or never (neither).
cat >end.c <<'END'
int main(void)
{
#if defined(END_STATUS)
	return END_STATUS;
#elif defined(END_TRAP)
	__builtin_trap();
#else
	for (;;)
		;
#endif
}
END

# 1. "%a" by hand against printf, on the host.
# shellcheck disable=SC2086  # CC may hold words
$CC -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I"$cross" -o print_check \
	"$cross/print_check.c" "$cross/cross_print.c" && run ./print_check
is "$run_status:$run_out" "0:0 disagreement(s)" "cross_put_float writes what printf(\"%a\") writes"

# 2. The probe: the host's output is the reference.
cross_run host host.out "the probe" -- "$cross/probe.c"
grep -v '^target: ' host.out >host.cmp
is "$(sed -n 1p host.out)" "target: byte order little, FLT_EVAL_METHOD 0" \
	"host: little-endian, floats evaluated in float"

# probe_on TARGET BYTE-ORDER: the probe on TARGET prints what the host's
# does (3 tests).
probe_on() {
	cross_run "$1" "$1.out" "the probe" -- "$cross/probe.c"
	grep -v '^target: ' "$1.out" >"$1.cmp"
	is_file host.cmp "$1.cmp" "$1: the probe prints the same bytes as on the host"
	target_line=$(sed -n 1p "$1.out")
	case $target_line in
	"target: byte order $2, FLT_EVAL_METHOD "*) ok 0 "$1: $2-endian ($target_line)" ;;
	*) is "$target_line" "target: byte order $2, ..." "$1: $2-endian" ;;
	esac
}

# end_with TIMEOUT TARGET HOW WANT-ERR DESC: a program that ends HOW
# (flags for end.c, none for the endless loop), run with a limit of
# TIMEOUT seconds, makes run.sh fail with the message WANT-ERR as its last
# line (qemu may say why it stopped before it).
end_with() {
	# shellcheck disable=SC2086  # no flags must be no word
	run env CROSS_TIMEOUT="$1" "$cross_sh" "$cross_run_sh" "$2" end.out -- $3 end.c
	is "$run_status:$(printf '%s\n' "$run_err" | tail -n 1)" "1:$4" "$2: $5"
}

# 3. The Cortex-M4 board.
if cross_ready arm-m4 6; then
	probe_on arm-m4 little
	cross_size arm-m4.out.elf
	end_with 60 arm-m4 -DEND_STATUS=3 "run.sh: arm-m4: ./end.out.elf exited with status 3" \
		"main's return value is qemu's exit status"
	run "$cross_sh" "$cross_run_sh" arm-m4 end.out -- -DEND_TRAP end.c
	case $run_err in
	"m4_startup: HardFault at pc 0x"*"
run.sh: arm-m4: ./end.out.elf exited with status 131") st=0 ;;
	*) st=1 ;;
	esac
	ok $st "arm-m4: a fault is reported with its name and pc, and ends the run"
	[ $st -eq 0 ] || diag "$run_err"
	end_with 1 arm-m4 "" "run.sh: arm-m4: ./end.out.elf timed out after 1 s" \
		"a program that never ends is stopped by the timeout"
fi

# 4. s390x.
if cross_ready s390x 4; then
	probe_on s390x big
	end_with 60 s390x -DEND_STATUS=3 "run.sh: s390x: ./end.out.elf exited with status 3" \
		"main's return value is the exit status"
fi

# 5. A missing tool is named, with its package, and exits 77.
run env PATH=/nonexistent "$cross_sh" "$cross_run_sh" --tools s390x
is "$run_status:$run_err" \
	"77:run.sh: s390x: s390x-linux-gnu-gcc is not installed (Debian package gcc-s390x-linux-gnu)" \
	"a missing cross compiler is named with its Debian package"

done_testing
