#!/bin/sh
# coverage.sh: `make fuzz-coverage`: the line coverage that the fuzzing
# corpora reach, per source file, measured with clang's source-based
# coverage (-fprofile-instr-generate -fcoverage-mapping, llvm-profdata and
# llvm-cov of clang's version).  It replays, through t/fuzz/replay (the
# plain driver of `make check`, so no libFuzzer is needed):
#   - the regression corpus t/fuzz/corpus/SURFACE/ (what make check runs);
#   - the seeds t/fuzz/run.sh gives the fuzzers besides it:
#     bnn t/invalid/*.bnn; bnn_dict examples/*.bnn, t/models/*.bnn;
#     csv t/data/*.csv, examples/data/*.csv;
#   - with WORKDIR (FUZZ_WORK=DIR for make), a campaign's grown corpora
#     WORKDIR/TARGET/ (t/fuzz/work/ of an --enable-fuzz build).
# The build directory must be configured for coverage, without sanitizers:
#   ../configure CC=clang CFLAGS='-O1 -g -fprofile-instr-generate -fcoverage-mapping'
# Writes BUILDDIR/t/fuzz/coverage/: report.txt (llvm-cov report: regions,
# functions and lines per file, test files and system headers left out),
# lines.txt (file, lines, missed, line coverage: the table
# docs/testing.md quotes) and html/ (every source line, counts and misses).
# The per-surface replays' TAP output goes to replay-*.tap; a failing
# input there is a defect to fix, as in make check.
# Usage: sh coverage.sh SRCDIR BUILDDIR [WORKDIR]
set -u
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=${3:-}
bin=$build/t/fuzz/replay
out=$build/t/fuzz/coverage

if ! grep -q __llvm_prf_cnts "$bin" 2>/dev/null; then
	echo "fuzz-coverage: $bin is not built with coverage; configure a build directory with" >&2
	echo "  ../configure CC=clang CFLAGS='-O1 -g -fprofile-instr-generate -fcoverage-mapping'" >&2
	exit 1
fi
# the LLVM tools of the compiler's version (llvm-profdata-14 with clang 14)
cc=$(sed -n 's/^CC = //p' "$build/Makefile")
major=$($cc --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | sed 1q)
profdata=llvm-profdata-$major
llvmcov=llvm-cov-$major
command -v "$profdata" >/dev/null 2>&1 || profdata=llvm-profdata
command -v "$llvmcov" >/dev/null 2>&1 || llvmcov=llvm-cov
for tool in "$profdata" "$llvmcov"; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "fuzz-coverage: $tool not found (Debian package: llvm-$major)" >&2
		exit 1
	}
done

rm -rf "$out"
mkdir -p "$out/raw"
# one profile per process, merged online into 4 pool files (%4m): replay
# forks a child per input
LLVM_PROFILE_FILE=$out/raw/%4m.profraw
top_srcdir=$src
BNN_FUZZ_QUIET=1
OPENBLAS_NUM_THREADS=1
export LLVM_PROFILE_FILE top_srcdir BNN_FUZZ_QUIET OPENBLAS_NUM_THREADS
[ -n "${TMPDIR:-}" ] || { [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm; }

status=0
# replay NAME [SURFACE PATH...]: the inputs, TAP output to replay-NAME.tap
replay() {
	name=$1
	shift
	"$bin" "$@" >"$out/replay-$name.tap" 2>&1 || {
		status=1
		echo "fuzz-coverage: an input failed (see $out/replay-$name.tap)" >&2
	}
	printf '%-22s %6s inputs\n' "$name" "$(grep -c '^ok .* bytes)$' "$out/replay-$name.tap")"
}
replay corpus
replay seeds-bnn bnn "$src"/t/invalid/*.bnn
replay seeds-bnn_dict bnn_dict "$src"/examples/*.bnn "$src"/t/models/*.bnn
replay seeds-csv csv "$src"/t/data/*.csv "$src"/examples/data/*.csv
if [ -n "$work" ]; then
	for t in bnn bnn_dict csv idx ckpt cli; do
		[ -d "$work/$t" ] && replay "work-$t" "$t" "$work/$t"
	done
fi

"$profdata" merge -sparse "$out"/raw/*.profraw -o "$out/merged.profdata" || exit 1
ignore='(^|/)t/|^/usr/'
"$llvmcov" report "$bin" -instr-profile="$out/merged.profdata" -ignore-filename-regex="$ignore" \
	>"$out/report.txt" || exit 1
"$llvmcov" show "$bin" -instr-profile="$out/merged.profdata" -ignore-filename-regex="$ignore" \
	-format=html -output-dir="$out/html" || exit 1
# lines.txt: the file (relative to the source tree), then the Lines columns
# of the report (the three before the last three of Branches); files
# without code (headers of declarations) left out, the total last
lines() {
	awk -v src="$src/" '
		$1 == "Filename" || /^-+$/ || $(NF - 5) == 0 { next }
		NF >= 13 {
			f = $1
			sub("^" src, "", f)
			sub("^(\\.\\./)+(src/)?", "", f)
			printf "%-40s %6s %6s %8s\n", f, $(NF - 5), $(NF - 4), $(NF - 3)
		}' "$out/report.txt"
}
{
	printf '%-40s %6s %6s %8s\n' file lines missed cover
	lines | grep -v '^TOTAL ' | sort
	lines | grep '^TOTAL '
} >"$out/lines.txt"
cat "$out/lines.txt"
echo "fuzz-coverage: $out/report.txt, $out/lines.txt, $out/html/index.html"
exit "$status"
