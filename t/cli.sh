#!/bin/sh
# cli.sh: bnnc's command line: help, version, actions and their errors,
# standard input, -o, several files, unreadable files and exit statuses;
# outputs that would overwrite an input, header names that an #include
# cannot hold, and model paths that the generated C must survive.
. "$TAP_SH"

cd "$TAP_TMP" || exit 1
cat > good.bnn <<'BNN'
model tiny;
input x[3];
out = dense(x, 2);
y ~ categorical(out);
BNN
cat > bad.bnn <<'BNN'
model broken;
input x[3];
out = dense(x, 0);
y ~ categorical(out);
BNN

run "$BNNC" --help
is "$run_status" 0 "--help exits 0"
case $run_out in "Usage: bnnc [--main] [-o OUTPUT.c] FILE"*) r=0 ;; *) r=1 ;; esac
ok $r "--help starts with the usage line"
run "$BNNC" -h
is "$run_status" 0 "-h is --help"

run "$BNNC" --version
is "$run_status" 0 "--version exits 0"
is "$run_out" "bnnc 0.1.0" "--version prints the version"

# Usage errors, one row each: the arguments (standard input is good.bnn),
# the name of the test of the exit status 2, the message before bnnc's
# pointer to --help, and the name of the test of the message.
while IFS='|' read -r args status_what message message_what; do
	# shellcheck disable=SC2086  # the arguments are split on purpose
	run "$BNNC" $args <good.bnn
	is "$run_status" 2 "$status_what"
	is "$run_err" "bnnc: $message
Try 'bnnc --help' for more information." "$message_what"
done <<'ROWS'
|no arguments is a usage error|no input files|and says what is missing
--frobnicate good.bnn|an unknown option is a usage error|unknown option '--frobnicate'|and names it
--check|--check without files|no input files|says there are no files
--check --summary good.bnn|two actions are a usage error|'--summary' cannot be combined with another action|and names the second
--check -o out.txt good.bnn|-o does not go with --check|-o does not go with --check|and says so
--summary --main good.bnn|--main goes with code generation only|--main goes with code generation, not --check or --summary|and says so
good.bnn good.bnn|code generation takes one model|code generation takes one model file (use --check for several)|and says so
-o out.txt good.bnn|code generation needs a .c output|-o 'out.txt' must name a C file ending in .c|and says so
-|generating from standard input needs -o|-o is needed to name the output when the model comes from standard input|and says so
--summary good.bnn -o|-o without a file name|option '-o' needs a file name|and says so
ROWS

run "$BNNC" good.bnn
is "$run_status" 0 "code generation is the default action"
ok "$(test -s good.c && test -s good.h; echo $?)" "it writes good.c and good.h next to the working directory"
is "$run_out$run_err" "" "and prints nothing"
run "$BNNC" -o gen/model.c good.bnn
is "$run_status" 1 "an output directory that does not exist is an error"
is "$run_err" "bnnc: cannot write gen/model.c: No such file or directory" \
	"which names the file -o gave"
run "$BNNC" -o bad.c bad.bnn
is "$run_status" 1 "an invalid model generates nothing"
ok "$(test ! -e bad.c && test ! -e bad.h; echo $?)" "no half-written files are left"
ls ./*.tmp.* >/dev/null 2>&1
ok "$(test $? -ne 0; echo $?)" "and no temporary files"

run "$BNNC" --check good.bnn
is "$run_status" 0 "--check on a valid model exits 0"
is "$run_out$run_err" "" "and prints nothing"

run "$BNNC" --check bad.bnn
is "$run_status" 1 "--check on an invalid model exits 1"
is "$run_err" "bad.bnn:3:16: error: 'units' must be from 1 to 16777216, not 0
 out = dense(x, 0);
                ^" "and reports the error"

run "$BNNC" --check good.bnn bad.bnn good.bnn
is "$run_status" 1 "several files: one bad one makes the run fail"

run "$BNNC" --check missing.bnn
is "$run_status" 1 "a missing file exits 1"
is "$run_err" "bnnc: missing.bnn: No such file or directory" "and says why"

mkdir adir
run "$BNNC" --check adir
is "$run_status" 1 "a directory exits 1"
is "$run_err" "bnnc: adir: Is a directory" "and says why"

run "$BNNC" --check - < bad.bnn
is "$run_status" 1 "'-' reads standard input"
case $run_err in "<stdin>:3:16: error:"*) r=0 ;; *) r=1 ;; esac
ok $r "and names it <stdin> in diagnostics"

run "$BNNC" --summary good.bnn
is "$run_status" 0 "--summary exits 0"
case $run_out in "model tiny (good.bnn)"*) r=0 ;; *) r=1 ;; esac
ok $r "--summary starts with the model line"

run "$BNNC" --summary -o summary.txt good.bnn
is "$run_status" 0 "--summary -o exits 0"
is "$run_out" "" "and prints nothing on standard output"
"$BNNC" --summary good.bnn > expected.txt
is_file expected.txt summary.txt "-o writes the summary to the file"

run "$BNNC" --summary --output=summary2.txt good.bnn
is_file expected.txt summary2.txt "--output=FILE works too"

rm -f none.txt
run "$BNNC" --summary -o none.txt bad.bnn
is "$run_status" 1 "--summary of an invalid model exits 1"
test ! -e none.txt
ok $? "and does not create the output file"

run "$BNNC" --summary -o no/such/dir/out.txt good.bnn
is "$run_status" 1 "an unwritable output exits 1"
is "$run_err" "bnnc: cannot write no/such/dir/out.txt: No such file or directory" "and says why"

run "$BNNC" --summary good.bnn good.bnn
n=$(printf '%s\n' "$run_out" | grep -c '^model tiny')
is "$n" 2 "--summary of two files prints two tables"

run "$BNNC" --check -- -weird.bnn
is "$run_status" 1 "'--' ends the options"
is "$run_err" "bnnc: -weird.bnn: No such file or directory" "so '-weird.bnn' is a file name"

cp good.bnn copy.bnn
run "$BNNC" --summary -o copy.bnn copy.bnn
is "$run_status" 2 "-o naming an input file is refused"
is "$run_err" "bnnc: the output 'copy.bnn' is one of the input files
Try 'bnnc --help' for more information." "and says why"
cmp -s good.bnn copy.bnn
ok $? "and the input is left alone"

run "$BNNC" --check - - < good.bnn
is "$run_status" 2 "standard input twice is refused"

# Every file code generation writes is checked against the inputs, the
# header as well as the C file, and whatever their names come from.
cp good.bnn net.h
run "$BNNC" -o net.c net.h
is "$run_status" 2 "a header that would overwrite the input is refused"
is "$run_err" "bnnc: the output 'net.h' is one of the input files
Try 'bnnc --help' for more information." "and names the header"
cmp -s good.bnn net.h && test ! -e net.c
ok $? "and nothing is written"
cp good.bnn net.c
run "$BNNC" -o net.c net.c
is "$run_status" 2 "a C file that would overwrite the input is refused"
is "$run_err" "bnnc: the output 'net.c' is one of the input files
Try 'bnnc --help' for more information." "and names the C file"
mkdir same && cp good.bnn same/m.bnn && ln same/m.bnn m.h
run "$BNNC" same/m.bnn
is "$run_status" 2 "a derived output name that is a link to the input is refused"
is "$run_err" "bnnc: the output 'm.h' is one of the input files
Try 'bnnc --help' for more information." "and names it"
cmp -s good.bnn same/m.bnn && test ! -e m.c
ok $? "and the input is left alone"

# The generated C compiles whatever bytes the model's path holds: "*/" and
# "/*" must not end or open a comment, a quote, a backslash before a line
# break or "??/" must not break the descriptor's string or the comments.
odd=$(printf 'a*/*b"\\\n??')
mkdir -p "$odd" && cp good.bnn "$odd/m.bnn"
run "$BNNC" -o odd.c "$odd/m.bnn"
is "$run_status" 0 "a model path with */, /*, a quote, a backslash and a newline"
# shellcheck disable=SC2086  # the flags are words
run $CC $BNN_CFLAGS -c -o odd.o odd.c
is "$run_status$run_err" 0 "gives C that compiles without a warning"
cat > print_source.c <<'C'
#include <stdio.h>
#include "odd.h"
int main(void) { return fputs(tiny_model.source, stdout) == EOF; }
C
# shellcheck disable=SC2086  # the flags are words
run $CC $BNN_CFLAGS -o print_source print_source.c odd.c $BNN_LIBS
is "$run_status$run_err" 0 "and links"
run ./print_source
is "$run_out" "$odd/m.bnn" "and whose descriptor holds the path, byte for byte"
case $(sed -n 2p odd.h) in *' from a*\057*b\"\\\012\077\077/m.bnn.') r=0 ;; *) r=1 ;; esac
ok $r "the header's opening comment shows the path escaped: $(sed -n 2p odd.h)"

# The header's name goes into the C file's #include "...": names that
# cannot be written there are refused, whether from -o or the model's name.
run "$BNNC" -o 'q"x.c' good.bnn
is "$run_status" 2 "an output name with a double quote is refused"
is "$run_err" "bnnc: the header 'q\"x.h' cannot be named in an #include line (its name contains a double quote); choose another name with -o
Try 'bnnc --help' for more information." "and says why"
ok "$(test ! -e 'q"x.c' && test ! -e 'q"x.h'; echo $?)" "and nothing is written"
run "$BNNC" -o 'back\slash.c' good.bnn
is "$run_err" "bnnc: the header 'back\\slash.h' cannot be named in an #include line (its name contains a backslash); choose another name with -o
Try 'bnnc --help' for more information." "a backslash is refused"
run "$BNNC" -o "$(printf 'new\nline.c')" good.bnn
is "$run_err" "bnnc: the header 'new
line.h' cannot be named in an #include line (its name contains a newline); choose another name with -o
Try 'bnnc --help' for more information." "a newline is refused"
run "$BNNC" -o "it's.c" good.bnn
is "$run_err" "bnnc: the header 'it's.h' cannot be named in an #include line (its name contains an apostrophe); choose another name with -o
Try 'bnnc --help' for more information." "an apostrophe is refused"
run "$BNNC" -o 'what??.c' good.bnn
is "$run_err" "bnnc: the header 'what??.h' cannot be named in an #include line (its name contains '??'); choose another name with -o
Try 'bnnc --help' for more information." "'??' (a trigraph's start) is refused"
cp good.bnn 'say"hi.bnn'
run "$BNNC" 'say"hi.bnn'
is "$run_status" 2 "so is a name derived from the model file"
is "$run_err" "bnnc: the header 'say\"hi.h' cannot be named in an #include line (its name contains a double quote); choose another name with -o
Try 'bnnc --help' for more information." "with the same message"
mkdir 'q"dir'
run "$BNNC" -o 'q"dir/ok.c' good.bnn
is "$run_status" 0 "a quote in the directory of -o is no trouble"
# shellcheck disable=SC2086  # the flags are words
run $CC $BNN_CFLAGS -c -o ok.o 'q"dir/ok.c'
is "$run_status$run_err" 0 "as the #include names the header alone"

done_testing
