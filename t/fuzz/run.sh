#!/bin/sh
# run.sh: `make fuzz FUZZ_SECONDS=N` (./configure --enable-fuzz): runs each
# libFuzzer target of t/fuzz/ for N seconds, one after the other, and
# prints a table of executions, coverage and crashes per target.
#   target     entry point  seeds
#   bnn        fuzz_bnn     t/fuzz/corpus/bnn, t/invalid/*.bnn
#   bnn_dict   fuzz_bnn     t/fuzz/corpus/bnn_dict, examples/*.bnn, t/models/*.bnn
#                           (with -dict=t/fuzz/bnn.dict)
#   csv        fuzz_csv     t/fuzz/corpus/csv, t/data/*.csv, examples/data/*.csv
#   idx        fuzz_idx     t/fuzz/corpus/idx
#   ckpt       fuzz_ckpt    t/fuzz/corpus/ckpt
#   cli        fuzz_cli     t/fuzz/corpus/cli
# In the build directory: t/fuzz/work/TARGET/ is the growing corpus (kept
# between runs, so a second run starts where the first stopped),
# t/fuzz/crashes/TARGET/ receives crash-*, leak-*, timeout-* and oom-*
# artifacts, t/fuzz/logs/TARGET.log the fuzzer's output.  Exit status 1
# if any target found something.  Every path given to a target is
# absolute: the cli target changes its directory.
# Usage: sh run.sh SECONDS SRCDIR BUILDDIR [TARGET...]
set -u
secs=${1:-60}
src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)
shift 3
targets=${*:-bnn bnn_dict csv idx ckpt cli}
status=0
summary=

# Copies the seed files matching the patterns into corpus directory $1 the
# first time (libFuzzer adds its own inputs there).
seed() {
	dir=$1
	shift
	[ -d "$dir" ] && return 0
	mkdir -p "$dir"
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$dir/"
	done
	return 0
}

for t in $targets; do
	work=$build/t/fuzz/work/$t
	crashes=$build/t/fuzz/crashes/$t
	log=$build/t/fuzz/logs/$t.log
	bin=$build/t/fuzz/fuzz_$t
	extra=
	case $t in
	bnn) seed "$work" "$src"/t/invalid/*.bnn ;;
	bnn_dict)
		bin=$build/t/fuzz/fuzz_bnn
		extra=-dict=$build/t/fuzz/bnn.dict
		seed "$work" "$src"/examples/*.bnn "$src"/t/models/*.bnn ;;
	csv) seed "$work" "$src"/t/data/*.csv "$src"/examples/data/*.csv ;;
	*) seed "$work" ;;
	esac
	mkdir -p "$crashes" "$(dirname "$log")"
	export BNN_FUZZ_QUIET=1 OPENBLAS_NUM_THREADS=1
	# the scratch files of the entry points (a checkpoint saved with fsync
	# per input) in memory when possible
	[ -n "${TMPDIR:-}" ] || { [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm; }
	echo "fuzz: $t for $secs s (log $log)"
	# shellcheck disable=SC2086  # extra is one word or none
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" $extra "$work" "$src/t/fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 edges, \2 features/p' "$log" | tail -1)
	if [ "$rc" -ne 0 ]; then
		status=1
		art=$(ls -t "$crashes"/* 2>/dev/null | head -1)
		echo "fuzz: $t FOUND A DEFECT (status $rc): $art"
		if [ -n "$art" ]; then
			# the report again, with the driver's messages (not silenced)
			env -u BNN_FUZZ_QUIET "$bin" "$art" 2>&1 | tail -60
		else
			tail -40 "$log"
		fi
	fi
	summary="$summary
$(printf '%-9s %12s executions  %-30s %s' "$t" "${execs:-?}" "${cov:-?}" \
		"$([ "$rc" -eq 0 ] && echo ok || echo "DEFECT: see $crashes")")"
done
echo
echo "fuzz: ${secs} s per target:$summary"
exit "$status"
