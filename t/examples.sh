#!/bin/sh
# examples.sh: every model in examples/ checks clean.
#
# For each examples/*.bnn (globbed, so a new example is covered without
# touching this file): `bnnc --check FILE` exits 0 and prints nothing, on
# standard output or standard error (no warnings either).  An empty
# examples/ directory is a failure: the examples are part of the language's
# definition.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

nl='
'
examples=$top_srcdir/examples
found=0
for file in "$examples"/*.bnn; do
	[ -f "$file" ] || continue
	found=$((found + 1))
	name=${file##*/}
	run "$BNNC" --check "$file"
	verdict="exit status $run_status"
	[ ! -s "$run_out_file" ] || verdict="$verdict${nl}standard output:$nl$run_out"
	[ ! -s "$run_err_file" ] || verdict="$verdict${nl}standard error:$nl$run_err"
	is "$verdict" "exit status 0" "examples/$name checks clean"
done

[ "$found" -gt 0 ]
ok $? "examples/ holds at least one .bnn file ($found found)"

done_testing
