# cross_tap.sh: TAP checks for tests that run code on other architectures
# through t/cross/run.sh, to be sourced after t/tap.sh:
#
#     . "$TAP_SH"
#     . "$top_srcdir/t/cross/cross_tap.sh"
#     cross_run host ref.out "the host" -- main.c net.c
#     if cross_ready arm-m4 2; then
#             cross_run arm-m4 arm.out "the Cortex-M4" -- main.c net.c
#             is_file ref.out arm.out "the Cortex-M4 prints what the host prints"
#     fi
#
# Functions (like tap.sh's, they run in the test's own shell):
#   cross_ready TARGET N  0 if TARGET's tools are installed; otherwise
#                         report the N tests that depend on them as skipped,
#                         naming the missing tool, and return 1.  Under
#                         BNN_REQUIRE_CROSS=1 (CI) the first of the N is a
#                         failure instead: CI must never skip.
#   cross_run TARGET OUT DESC -- CC-ARGUMENT...
#                         one test: run.sh builds the program for TARGET
#                         and runs it, writing its output to OUT (and the
#                         program to OUT.elf); passes if that succeeded
#                         with nothing on standard error, else shows it.
#   cross_size ELF        print arm-none-eabi-size's table of a board image
#                         as a diagnostic (nothing if the tool is missing).
# Internal names start with cross_.
#
# shellcheck shell=sh disable=SC2154  # the harness sets top_srcdir; tap.sh run_*

cross_run_sh=$top_srcdir/t/cross/run.sh
cross_sh=$(command -v sh) || bail_out "cross_tap.sh: no sh on the PATH"

cross_ready() {
	cross_missing=$("$cross_sh" "$cross_run_sh" --tools "$1" 2>&1) && return 0
	if [ "${BNN_REQUIRE_CROSS-}" = 1 ]; then
		is "$cross_missing" "" "$1: its tools are installed (BNN_REQUIRE_CROSS=1)"
		skip $(($2 - 1)) "$cross_missing"
	else
		skip "$2" "$cross_missing"
	fi
	return 1
}

cross_run() {
	cross_target=$1
	cross_out=$2
	cross_desc=$3
	shift 3
	run "$cross_sh" "$cross_run_sh" "$cross_target" "$cross_out" "$@"
	is "$run_status$run_err" 0 "$cross_target: $cross_desc builds and runs"
}

cross_size() {
	if command -v arm-none-eabi-size >/dev/null 2>&1; then
		diag "arm-none-eabi-size $1:"
		diag "$(arm-none-eabi-size "$1")"
	fi
	return 0
}
