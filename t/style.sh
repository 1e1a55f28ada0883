#!/bin/sh
# style.sh: every C source and header of the tree is formatted as
# .clang-format says (one test per file: `clang-format --dry-run
# --Werror` finds nothing to change).  The style is defined by
# clang-format 14, Debian 12's, which .ci/run installs; with another
# version (whose output may differ by a space) or none, the test skips
# and says why.  To format a file: clang-format -i FILE.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cf=${CLANG_FORMAT:-clang-format}
version=$("$cf" --version 2>/dev/null) || version=
case $version in
*"clang-format version 14."*) ;;
"")
	skip 1 "clang-format is not installed (Debian package clang-format)"
	done_testing
	;;
*)
	skip 1 "the house style is defined by clang-format 14; this is: $version"
	done_testing
	;;
esac

cd "$top_srcdir" || bail_out "cannot cd to $top_srcdir"
files=$(find common dsl gen runtime t bench examples -type f \( -name '*.c' -o -name '*.h' \) \
	! -path 't/models/*' ! -path 'bench/models/*' ! -path 'examples/out/*' \
	! -name 'parser.[ch]' ! -name 'lexer.c' 2>/dev/null | LC_ALL=C sort)
for f in $files; do
	if out=$("$cf" --dry-run --Werror "$f" 2>&1); then
		ok 0 "$f is formatted"
	else
		ok 1 "$f is formatted"
		diag "$(printf '%s\n' "$out" | head -n 12)"
	fi
done

done_testing
