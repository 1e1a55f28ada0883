#!/bin/sh
# run.sh: build a C99 program for a target architecture together with the
# harness of t/cross/, run it (under emulation for the foreign targets) and
# write its standard output to a file.  A test builds the same sources for
# the host and for the other targets and compares the outputs with cmp.
#
#   t/cross/run.sh TARGET OUT -- CC-ARGUMENT...
#   t/cross/run.sh --tools TARGET
#
# TARGET is one of
#   host    $CC (default cc), run directly;
#   arm-m4  arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16
#           -mfloat-abi=hard, freestanding: linked with mps2_an386.ld,
#           m4_startup.c (vector table, FPU on, .data/.bss, faults),
#           m4_semihost.c (output and exit status through semihosting) and
#           newlib (only for what the compiler may call: memcpy, memset, and
#           libm), run by qemu-system-arm -M mps2-an386 with semihosting;
#   s390x   s390x-linux-gnu-gcc -static (big-endian, glibc), run by
#           qemu-s390x (qemu-user).
# Every target compiles with -std=c99 -ffp-contract=off -O2 -Wall -Wextra
# -Wpedantic -Werror, then $CROSS_CFLAGS, then the CC-ARGUMENTs (C files,
# -I, -D, or an -O that overrides -O2), and links cross_print.c (the
# program prints through cross_print.h: no printf on the board), the
# target's cross_write() (cross_stdio.c on host and s390x) and -lm.  The
# program is `int main(void)`; its return value is the run's exit status
# on every target.
#
# Writes OUT (the program's standard output) and OUT.elf (the program, for
# arm-none-eabi-size); the program's standard error passes through.  Every
# run is limited to $CROSS_TIMEOUT seconds (default 60), so a hang fails.
# Exit status: 0 if the program was built and exited with 0; 77 if a tool
# of the target is missing (the message names it and its Debian package;
# --tools checks just that, exiting 0 if all are there); 1 for any other
# failure, with a message on standard error that names the target.
#
# shellcheck shell=sh

me=run.sh
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
here=$(cd "$here" && pwd) || exit 1
CC=${CC:-cc}
flags='-std=c99 -ffp-contract=off -O2 -Wall -Wextra -Wpedantic -Werror'
m4_flags='-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard'

usage() {
	echo "usage: $me TARGET OUT -- CC-ARGUMENT...   or   $me --tools TARGET" >&2
	echo "TARGET: host, arm-m4 or s390x" >&2
	exit 1
}

# need TOOL PACKAGE: exit 77 if TOOL is not on the PATH.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "$me: $target: $1 is not installed (Debian package $2)" >&2
	exit 77
}

# need_lib COMPILER FLAGS LIB PACKAGE: exit 77 if COMPILER (with FLAGS)
# cannot find LIB, i.e. prints back the bare name.
need_lib() {
	# shellcheck disable=SC2086  # flags are words
	found=$("$1" $2 -print-file-name="$3" 2>/dev/null) || found=$3
	[ "$found" != "$3" ] && [ -f "$found" ] && return 0
	echo "$me: $target: $1 finds no $3 (Debian package $4)" >&2
	exit 77
}

# The tools of $target, or exit 77.
check_tools() {
	case $target in
	host)
		need "${CC%% *}" build-essential
		;;
	arm-m4)
		need arm-none-eabi-gcc gcc-arm-none-eabi
		need_lib arm-none-eabi-gcc "$m4_flags" libc.a libnewlib-arm-none-eabi
		need qemu-system-arm qemu-system-arm
		;;
	s390x)
		need s390x-linux-gnu-gcc gcc-s390x-linux-gnu
		need_lib s390x-linux-gnu-gcc "" libc.a libc6-dev-s390x-cross
		need qemu-s390x qemu-user
		;;
	*)
		echo "$me: unknown target '$target'" >&2
		usage
		;;
	esac
	need timeout coreutils
}

if [ "${1-}" = --tools ]; then
	[ $# -eq 2 ] || usage
	target=$2
	check_tools
	exit 0
fi
if [ $# -lt 4 ] || [ "$3" != -- ]; then
	usage
fi
target=$1
out=$2
shift 3
check_tools
prog=$out.elf
case $prog in
*/*) ;;
*) prog=./$prog ;; # run it from here, not through the PATH
esac
rm -f "$out" "$prog"

# Build.  CROSS_CFLAGS and the caller's arguments are words.
# shellcheck disable=SC2086
case $target in
host)
	$CC $flags $CROSS_CFLAGS -I"$here" "$@" \
		"$here/cross_print.c" "$here/cross_stdio.c" -lm -o "$prog"
	;;
arm-m4)
	arm-none-eabi-gcc $m4_flags $flags $CROSS_CFLAGS -I"$here" "$@" \
		"$here/cross_print.c" "$here/m4_semihost.c" "$here/m4_startup.c" \
		-nostartfiles --specs=nano.specs -T "$here/mps2_an386.ld" \
		-ffunction-sections -fdata-sections -Wl,--gc-sections -lm -o "$prog"
	;;
s390x)
	s390x-linux-gnu-gcc $flags $CROSS_CFLAGS -I"$here" "$@" \
		"$here/cross_print.c" "$here/cross_stdio.c" -static -lm -o "$prog"
	;;
esac || {
	echo "$me: $target: the build failed" >&2
	exit 1
}

# Run.
limit=${CROSS_TIMEOUT:-60}
case $target in
host)
	timeout "$limit" "$prog" >"$out" </dev/null
	;;
arm-m4)
	timeout "$limit" qemu-system-arm -M mps2-an386 -nographic \
		-semihosting-config enable=on,target=native -kernel "$prog" >"$out" </dev/null
	;;
s390x)
	timeout "$limit" qemu-s390x "$prog" >"$out" </dev/null
	;;
esac
status=$?
case $status in
0) exit 0 ;;
124) echo "$me: $target: $prog timed out after $limit s" >&2 ;;
*) echo "$me: $target: $prog exited with status $status" >&2 ;;
esac
exit 1
