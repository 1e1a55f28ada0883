#!/bin/sh
# gen_names.sh: node names that the generated C must survive.  The pass
# names a node's buffers with a short prefix, '_' and the node's name
# (a_h, d_h, cv_h, bn_h), and has locals of its own (the convolutions'
# scratch, the batchnorm's choice of statistics); a legal model whose
# nodes are named 'col', 'tmp' and 'batch' once made cv_col, cv_tmp and
# bn_batch twice, and the C did not compile.  Checks: such a model, and
# one whose nodes take the names of the pass's arguments, compile with
# -Werror in float and in double (-DBNN_GEN_DOUBLE), and --standalone's
# file compiles against an exported weights header; and so do a model of
# names of 63 characters and the longer ones its block makes.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# bnnc --standalone's file of BASE.bnn, with the weights PROG exports from
# BASE.ckpt, compiles with -Werror
standalone_builds() { # BASE PROG
	run "$BNNC" --standalone -o "$1_infer.c" "$1.bnn"
	is "$run_status$run_err" 0 "bnnc --standalone writes it"
	run ./"$2" export --load "$1.ckpt" -o "$1_infer_weights.h"
	is "$run_status" 0 "export writes its weights"
	# shellcheck disable=SC2086  # flags are words
	run $CC -std=c99 -O2 -Wall -Wextra -Werror -c -o "$1_infer.o" "$1_infer.c"
	is "$run_status$run_err" 0 "the standalone file compiles with -Werror"
}

cat >names.bnn <<'BNN'
model names;
input x[1, 6, 6];
col = conv2d(x, 2, kernel = 3);
tmp = conv2d(col, 2, kernel = 3) ~ dropout(p = 0.1);
batch = batchnorm(tmp);
w = relu(batch);
ws = dense(w, 4) ~ meanfield;
B = relu(ws);
y ~ categorical(dense(B, 3));
BNN
run "$BNNC" --main -o names.c names.bnn
is "$run_status$run_err" 0 "bnnc writes a model with nodes named col, tmp, batch, w, ws and B"
# shellcheck disable=SC2086
run $CC $BNN_CFLAGS -o names names.c $BNN_LIBS
is "$run_status" 0 "its program builds with -Werror"
is "$run_err" "" "without a diagnostic"
# shellcheck disable=SC2086
run $CC $BNN_CFLAGS -DBNN_GEN_DOUBLE -c -o names_f64.o names.c
is "$run_status$run_err" 0 "and so does its double pass"

awk 'BEGIN { for (j = 1; j <= 36; j++) printf "f%d,", j; print "y"
	s = 3; for (i = 0; i < 30; i++) {
		for (j = 1; j <= 36; j++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%.4f,", s / 2147483648 }
		print i % 3 } }' >names.csv
run ./names train --data names.csv --epochs 1 --batch 8 --optimizer bbb --quiet --save names.ckpt
is "$run_status$run_err" 0 "the program trains"
standalone_builds names names

# Names of 63 characters (the longest a model may write) and longer ones
# made by block expansions: the emitters' buffers once cut the identifiers
# made of them (pw_NAME, bsd_NAME, ...), so the C did not compile.  In
# identifiers a name of more than 31 characters is the node's index, '_'
# and its first characters; the tensors keep the whole names.
q=qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq # 60
cat >long.bnn <<BNN
model longnames;
input s[6, 5];
block stage(v) {
    ${q}gru = gru(v, 3, output = sequence) ~ dropout(p = 0.1);
    ${q}att = attention(${q}gru, 1) ~ dropout(p = 0.1);
    ${q}cnv = conv1d(transpose(${q}att), 2, kernel = 2) ~ dropout(p = 0.1);
    return maxpool(${q}cnv, 2);
}
${q}stg = stage(s);
${q}lay = layernorm(${q}stg) ~ meanfield;
${q}bat = batchnorm(${q}lay) ~ ecmp(k = 2);
${q}drp = dense(${q}bat, 3) ~ dropout(p = 0.1);
${q}whv = dense(${q}drp, 4) ~ whvi(flows = 1);
${q}emp = dense(${q}whv, 4) ~ emp(k = 2);
${q}mfd = relu(add(dense(${q}emp, 4) ~ meanfield, ${q}whv));
${q}mu0 = dense(${q}mfd, 2);
${q}lv0 = dense(${q}mfd, 2);
y ~ gaussian(${q}mu0, ${q}lv0);
BNN
run "$BNNC" --main -o long.c long.bnn
is "$run_status$run_err" 0 "bnnc writes a model of names of 63 characters and of 127"
# shellcheck disable=SC2086
run $CC $BNN_CFLAGS -o longnames long.c $BNN_LIBS
is "$run_status$run_err" 0 "its program builds with -Werror, without a diagnostic"
# shellcheck disable=SC2086
run $CC $BNN_CFLAGS -DBNN_GEN_DOUBLE -c -o long_f64.o long.c
is "$run_status$run_err" 0 "and so does its double pass"
is "$(grep -c 'bnn_real \*const a_[0-9]*_q* = ' long.c)" 15 "its 15 activation buffers are named by index and name"
is "$(grep -m1 'bnn_real \*const a_1_' long.c | cut -d' ' -f1-3)" "	bnn_real *const a_1_qqqqqqqqqqqqqqqqqqqqqqqqqqqqq" \
	"as a_1_ and the first 29 characters of the name, 31 in all"
awk 'BEGIN { for (j = 1; j <= 30; j++) printf "f%d,", j; print "t1,y"
	s = 5; for (i = 0; i < 20; i++) {
		for (j = 1; j <= 32; j++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%.4f%s", s / 2147483648, j < 32 ? "," : "\n" } } }' >long.csv
run ./longnames train --data long.csv --epochs 1 --batch 8 --optimizer bbb --quiet --save long.ckpt
is "$run_status$run_err" 0 "the program trains"
run ./longnames info --load long.ckpt
case $run_out in
*"  ${q}stg_${q}gru.weight_ih "*) st=0 ;;
*) st=1 ;;
esac
ok $st "the checkpoint's tensors have the whole names"
standalone_builds long longnames

done_testing
