#!/bin/sh
# gen_names.sh: node names that the generated C must survive.  The pass
# names a node's buffers with a short prefix, '_' and the node's name
# (a_h, d_h, cv_h, bn_h), and has locals of its own (the convolutions'
# scratch, the batchnorm's choice of statistics); a legal model whose
# nodes are named 'col', 'tmp' and 'batch' once made cv_col, cv_tmp and
# bn_batch twice, and the C did not compile.  Checks: such a model, and
# one whose nodes take the names of the pass's arguments, compile with
# -Werror in float and in double (-DBNN_GEN_DOUBLE), and --standalone's
# file compiles against an exported weights header.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

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
run "$BNNC" --standalone -o names_infer.c names.bnn
is "$run_status$run_err" 0 "bnnc --standalone writes it"
run ./names export --load names.ckpt -o names_infer_weights.h
is "$run_status" 0 "export writes its weights"
# shellcheck disable=SC2086
run $CC -std=c99 -O2 -Wall -Wextra -Werror -c -o names_infer.o names_infer.c
is "$run_status$run_err" 0 "the standalone file compiles with -Werror"

done_testing
