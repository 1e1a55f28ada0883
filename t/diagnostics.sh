#!/bin/sh
# diagnostics.sh: the corpus of invalid (or warning-producing) models.
#
# Each t/invalid/NAME.bnn targets one diagnostic; t/invalid/NAME.err is what
# `bnnc --check NAME.bnn`, run inside t/invalid, prints on standard error,
# followed by a last line "exit: N" with its exit status.  For every NAME
# this test checks that
#   - the diagnostics and the exit status are exactly those of NAME.err;
#   - nothing is written to standard output.
# A NAME.bnn without a NAME.err is reported as skipped, with the output
# bnnc gives now: its expected output is still to be agreed on.
#
# To write the .err files from the current bnnc (then read every one!):
#   make check TESTS=t/diagnostics.sh BNNC_REGEN='NAME...'    those names
#   make check TESTS=t/diagnostics.sh BNNC_REGEN=missing      each one missing
#   make check TESTS=t/diagnostics.sh BNNC_REGEN=all          all of them
# (BNNC_REGEN reaches the test through the environment of make.)
#
# The source tree may be read-only (make distcheck): outputs go to $TAP_TMP.

# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

dir=$top_srcdir/t/invalid
regen=${BNNC_REGEN-}

# A hung bnnc must fail the test rather than stop the suite.
if command -v timeout >/dev/null 2>&1; then
	limit='timeout 20'
else
	limit=
fi

set -- "$dir"/*.bnn
if [ ! -f "$1" ]; then
	bail_out "no .bnn files found in $dir"
fi

for bnn in "$@"; do
	file=${bnn##*/}
	name=${file%.bnn}
	want=$dir/$name.err
	got=$TAP_TMP/$name.err
	out=$TAP_TMP/$name.out

	# shellcheck disable=SC2086  # $limit is a command and its argument
	(cd "$dir" && exec $limit "$BNNC" --check "$file") >"$out" 2>"$got"
	status=$?
	printf 'exit: %d\n' "$status" >>"$got"

	case " $regen " in
	*" all "* | *" $name "*) cp "$got" "$want" && diag "wrote $want" ;;
	*" missing "*) [ -f "$want" ] || { cp "$got" "$want" && diag "wrote $want"; } ;;
	esac

	if [ -f "$want" ]; then
		is_file "$want" "$got" "$name: diagnostics and exit status"
	else
		skip 1 "$name: no $name.err yet"
		diag "$name.bnn gives now:"
		diag "$(cat "$got")"
		# Whatever the text, a crash or a hang is never expected.
		case $status in
		0 | 1) ;;
		*) ok "$status" "$name: bnnc exits with 0 or 1" ;;
		esac
	fi

	if [ -s "$out" ]; then
		ok 1 "$name: nothing on standard output"
		diag "$(cat "$out")"
	else
		ok 0 "$name: nothing on standard output"
	fi
done

done_testing
