#!/bin/sh
# robustness.sh: the bnnc program itself (not just the library) survives
# hostile files: it exits 1 with a diagnostic, never crashes (an exit status
# above 128 would be a signal) and never hangs.
. "$TAP_SH"

cd "$TAP_TMP" || exit 1

check_invalid() { # FILE DESC
    run "$BNNC" --check "$1"
    is "$run_status" 1 "$2: exits 1"
    test -n "$run_err"
    ok $? "$2: says why"
}

# Binary garbage: every byte value, repeated with a shift.
awk 'BEGIN { for (r = 0; r < 64; r++) for (i = 0; i < 256; i++) printf "%c", (i * 7 + r) % 256 }' \
    > garbage.bnn
check_invalid garbage.bnn "binary garbage"

printf 'model m;\ninput x[4];\nout = dense(x,\000 2);\ny ~ categorical(out);\n' > nul.bnn
check_invalid nul.bnn "a NUL byte"

awk 'BEGIN { printf "model m;\ninput x[4];\nout = "; for (i = 0; i < 10000; i++) printf "(";
             printf "x"; for (i = 0; i < 10000; i++) printf ")"; print ";" }' > parens.bnn
check_invalid parens.bnn "10,000 nested parentheses"

awk 'BEGIN { printf "model m;\ninput x[4];\nout = dense(x, 2); #"; for (i = 0; i < 1048576; i++) printf "z";
             print ""; print "y ~ categorical(out);" }' > longline.bnn
run "$BNNC" --check longline.bnn
is "$run_status" 0 "a valid model with a 1 MiB comment line"

printf 'model m;\ninput x[4];\nout = dense(x, 99999999999999999999999999999999);\ny ~ categorical(out);\n' > huge.bnn
check_invalid huge.bnn "a huge integer"

printf 'model m;\r\ninput x[4];\r\nout = dense(x, 2);\r\ny ~ categorical(out);' > crlf.bnn
run "$BNNC" --check crlf.bnn
is "$run_status" 0 "CR LF line ends and no final newline"

: > empty.bnn
check_invalid empty.bnn "an empty file"

done_testing
