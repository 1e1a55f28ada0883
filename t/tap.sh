# tap.sh: a small Test Anything Protocol (TAP version 13) helper for the
# shell tests of bnnc, in POSIX sh.  A test sources it and ends with
# done_testing:
#
#     #!/bin/sh
#     . "$TAP_SH"
#     plan 2                                    # optional
#     run "$BNNC" --version
#     is "$run_status" 0 "bnnc --version exits 0"
#     is "$run_out" "bnnc 0.1.0" "bnnc --version prints the version"
#     done_testing
#
# make check passes BNNC, top_srcdir, top_builddir and TAP_SH (absolute
# paths) in the environment.  Sourcing this file:
#   - creates a private temporary directory, exported as $TAP_TMP and
#     removed when the script exits (an EXIT trap; HUP, INT and TERM exit
#     so that it still runs; a test that sets its own EXIT trap must
#     remove $TAP_TMP itself);
#   - points the script's standard input at /dev/null, so no test can wait
#     on a terminal; `run cmd <file` still gives cmd that file.
#
# Functions (all return 0, so they are safe under set -e):
#   plan N                    print the plan "1..N" (at most once)
#   ok STATUS DESC            pass if STATUS is 0: `cmd; ok $? "desc"`
#   is GOT WANT DESC          pass if the strings are equal; else show both
#   is_file WANT GOT DESC     pass if the files are equal; else show diff -u
#   run CMD [ARG...]          run CMD; set $run_out, $run_err (trailing
#                             newlines stripped, as by $(...)), $run_status;
#                             the raw output stays in $run_out_file and
#                             $run_err_file until the next run
#   skip N REASON             report N tests as "ok N # SKIP REASON"
#   diag MSG                  print MSG as "# " comment lines
#   bail_out MSG              print "Bail out! MSG" and exit 255
#   done_testing              print the plan if none yet; exit 0 if every
#                             test passed (and the plan matched), else 1
#
# The counters are shell variables, so ok, is, is_file and skip must run
# in the test's own shell: never inside a pipeline (`cmd | ok ...`), a
# $(...) or a ( ... ) subshell, where the count would be lost.  Under
# set -e, a failing `cmd; ok $? desc` would stop the script at cmd: use
# run (or `cmd && st=0 || st=$?`) there.  Internal names start with tap_.
#
# shellcheck shell=sh disable=SC2034  # run_* are results for the caller

tap_count=0        # results reported so far
tap_failed=0       # failed results
tap_planned=       # the count given to plan, empty if none
tap_nl='
'

tap_cleanup() {
	if [ -n "${TAP_TMP-}" ]; then
		rm -rf "$TAP_TMP"
	fi
}

TAP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bnnc-test.XXXXXXXX") || {
	echo "Bail out! tap.sh: mktemp -d failed"
	exit 255
}
export TAP_TMP
trap tap_cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
exec </dev/null

# tap_comment TEXT: print TEXT as comment lines ("# " prefixed).
tap_comment() {
	printf '%s\n' "$1" | sed 's/^/# /'
}

# tap_show LABEL VALUE: a value in a failure diagnostic, quoted on the
# label's line, or below it with "|" margins if it spans several lines.
tap_show() {
	case $2 in
	*"$tap_nl"*)
		printf '#     %s:\n' "$1"
		printf '%s\n' "$2" | sed 's/^/#       | /'
		;;
	*) printf "#     %s: '%s'\n" "$1" "$2" ;;
	esac
}

# tap_line TEXT: TEXT on one line (line breaks become spaces), with '#'
# written as '\#' (and backslashes right before it doubled), as TAP asks of
# descriptions, so that "# TODO" or "# SKIP" in one is not a directive.
# Sets tap_escaped.
tap_line() {
	tap_escaped=$1
	case $tap_escaped in
	*"$tap_nl"* | *'#'*)
		tap_escaped=$(printf '%s\n' "$tap_escaped" | awk '
			{ line = line (NR > 1 ? " " : "") $0 }
			END {
				out = ""; bs = 0
				for (i = 1; i <= length(line); i++) {
					c = substr(line, i, 1)
					if (c == "\\") { bs++; continue }
					if (c == "#") bs = 2 * bs + 1
					for (; bs > 0; bs--) out = out "\\"
					out = out c
				}
				for (; bs > 0; bs--) out = out "\\"
				print out
			}')
		;;
	esac
}

# tap_result PASS DESC: the common body of every check.
tap_result() {
	tap_count=$((tap_count + 1))
	tap_line "$2"
	if [ "$1" = 1 ]; then
		printf 'ok %d - %s\n' "$tap_count" "$tap_escaped"
	else
		tap_failed=$((tap_failed + 1))
		printf 'not ok %d - %s\n' "$tap_count" "$tap_escaped"
		printf '#   Failed test %s in %s\n' "'$2'" "$0"
	fi
}

plan() {
	if [ -n "$tap_planned" ]; then
		bail_out "plan called twice"
	fi
	case $1 in
	'' | *[!0-9]*) bail_out "plan: not a test count: '$1'" ;;
	esac
	tap_planned=$1
	echo "1..$1"
}

ok() {
	if [ "$1" = 0 ]; then
		tap_result 1 "$2"
	else
		tap_result 0 "$2"
		tap_comment "  exit status: $1"
	fi
	return 0
}

is() {
	if [ "$1" = "$2" ]; then
		tap_result 1 "$3"
	else
		tap_result 0 "$3"
		tap_show "     got" "$1"
		tap_show "expected" "$2"
	fi
	return 0
}

is_file() {
	if [ ! -f "$1" ] || [ ! -f "$2" ]; then
		tap_result 0 "$3"
		[ -f "$1" ] || tap_comment "  missing expected file: $1"
		[ -f "$2" ] || tap_comment "  missing file: $2"
	elif cmp -s "$1" "$2"; then
		tap_result 1 "$3"
	else
		tap_result 0 "$3"
		tap_comment "$(diff -u "$1" "$2" 2>&1)"
	fi
	return 0
}

run() {
	run_out_file=$TAP_TMP/run.out
	run_err_file=$TAP_TMP/run.err
	run_status=0
	"$@" >"$run_out_file" 2>"$run_err_file" || run_status=$?
	run_out=$(cat "$run_out_file")
	run_err=$(cat "$run_err_file")
	return 0
}

skip() {
	tap_skip_n=$1
	tap_line "$2"
	while [ "$tap_skip_n" -gt 0 ]; do
		tap_count=$((tap_count + 1))
		printf 'ok %d # SKIP %s\n' "$tap_count" "$tap_escaped"
		tap_skip_n=$((tap_skip_n - 1))
	done
	return 0
}

diag() {
	tap_comment "$*"
	return 0
}

bail_out() {
	printf 'Bail out! %s\n' "$*" | tr '\n' ' ' | sed 's/ $//'
	echo
	exit 255
}

done_testing() {
	tap_status=0
	if [ -z "$tap_planned" ]; then
		echo "1..$tap_count"
	elif [ "$tap_count" -ne "$tap_planned" ]; then
		diag "Looks like you planned $tap_planned tests but ran $tap_count."
		tap_status=1
	fi
	if [ "$tap_failed" -gt 0 ]; then
		diag "Looks like you failed $tap_failed test(s) of $tap_count."
		tap_status=1
	fi
	exit "$tap_status"
}
