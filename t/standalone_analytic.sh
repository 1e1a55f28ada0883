#!/bin/sh
# standalone_analytic.sh: the one-pass analytic predictive of the
# standalone target (`bnnc --standalone --analytic`, MODEL_predict_analytic;
# docs/standalone.md, "The analytic predictive").  Models: t/models/an_*.bnn
# (an_linear: one meanfield dense layer, Gaussian; an_mix: every op and
# family the pass covers, categorical; an_bern: bernoulli),
# examples/toy1d_bayes.bnn (a learned σ, standardised inputs) and
# examples/toy1d.bnn (point layers only).  For each:
#   - the driver trains it for one epoch with bbb on 64 synthetic rows, from
#     σ0 = 0.3 so that the variances matter (toy1d: adam), and exports the
#     weights;
#   - the file, #included by t/standalone_analytic_main.c, builds
#     warning-free with gcc -O0, gcc -O2 and clang -O2 at t/standalone.sh's
#     flags, whose analytic outputs are the same bits; as C++17; and
#     freestanding with its own math (-D<MODEL>_NO_LIBM), with no undefined
#     symbol, whose outputs are within 1e-5 of the libm build's;
#   - toy1d: with no variance anywhere, the analytic predictive is the
#     posterior-mean pass (mc = 0), bit for bit;
#   - an_linear, where the pass is exact: its mean and variance equal the
#     closed form computed by the test in double (1e-5 relative) and agree
#     with 20,000 Monte-Carlo samples within 4.5 standard errors;
#   - models with relu or leaky_relu on random inputs: the file's moments
#     of (leaky) relu against Simpson's rule (1e-5 relative), with libm and
#     with the file's own math;
#   - the classifiers: the analytic probabilities are within 0.05 of 20,000
#     Monte-Carlo samples' (a loose bound on an approximation: an_mix's
#     last layer sees b twice, directly and through c, a correlation the
#     independence of the units ignores; measured 0.032 and 0.006).
# Then the diagnostics (exact text): an op and a family the pass does not
# cover, --analytic without --standalone; a workspace too small, absent or
# misaligned and bad arguments (return codes); and a file without
# --analytic has no analytic predictive.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

W=$TAP_TMP
C99='-std=c99 -Wall -Wextra -Wpedantic -Werror'
MAIN=$top_srcdir/t/standalone_analytic_main.c
CLANG=$(command -v clang || true)
GXX=$(command -v g++ || true)

. "$top_srcdir/t/standalone_lib.sh"

# within TOL A B: every value of A within TOL of B's, relatively to the
# largest magnitude of its row in A; prints the first difference.
within() {
	awk -F, -v tol="$1" 'NR == FNR { want[FNR] = $0; next }
	{
		n = split(want[FNR], w, ","); m = 0
		for (j = 1; j <= n; j++) { a = w[j] < 0 ? -w[j] : w[j]; m = a > m ? a : m }
		for (j = 1; j <= n; j++) {
			d = w[j] - $j; d = d < 0 ? -d : d
			if (d > tol * m) { printf "row %d column %d: %s and %s\n", FNR, j, w[j], $j; exit 1 }
		}
		rows++
	}
	END { if (rows != length(want)) { printf "%d rows of %d\n", rows, length(want); exit 1 } }' "$2" "$3"
}

# probs_near K TOL A B: the first K columns of A and B within TOL.
probs_near() {
	awk -F, -v k="$1" -v tol="$2" 'NR == FNR { want[FNR] = $0; next }
	{
		split(want[FNR], w, ",")
		for (j = 1; j <= k; j++) {
			d = w[j] - $j; d = d < 0 ? -d : d; worst = d > worst ? d : worst
		}
	}
	END { printf "%.3g", worst; exit !(worst <= tol) }' "$3" "$4"
}

model_test() {
	file=$1
	base=${file##*/}
	base=${base%.bnn}
	d=$W/$base
	mkdir "$d" || return
	if ! "$BNNC" --main -o "$d/drv.c" "$file" ||
		# shellcheck disable=SC2086
		! $CC $BNN_CFLAGS -o "$d/drv" "$d/drv.c" $BNN_LIBS; then
		ok 1 "$base: the driver builds"
		return
	fi
	info=$("$d/drv" info)
	m=$(printf '%s\n' "$info" | sed -n 's/^model //p')
	up=$(printf '%s' "$m" | tr 'a-z' 'A-Z')
	lik=$(printf '%s\n' "$info" | sed -n 's/^likelihood \([a-z]*\).*/\1/p')
	nin=$(printf '%s\n' "$info" | sed -n 's/^inputs \([0-9]*\),.*/\1/p')
	nout=$(printf '%s\n' "$info" | sed -n 's/^inputs [0-9]*, outputs \([0-9]*\),.*/\1/p')
	std=
	[ "$base" = toy1d_bayes ] && std=--standardize
	rows_csv "$nin" "$nout" "$lik" 64 -1 >"$d/data.csv"
	opt="bbb --set sigma0=0.3"
	grep -q meanfield "$file" || opt=adam
	# shellcheck disable=SC2086
	"$d/drv" train --data "$d/data.csv" --optimizer $opt --epochs 1 --batch 8 --seed 1 \
		$std --quiet --save "$d/ckpt" >/dev/null 2>"$d/train.err" &&
		"$d/drv" export --load "$d/ckpt" -o "$d/${m}_infer_weights.h" 2>>"$d/train.err" &&
		"$BNNC" --standalone --analytic -o "$d/${m}_infer.c" "$file" 2>>"$d/train.err"
	ok_or_show $? "$base: trains (${opt%% *}), exports, bnnc --standalone --analytic" "$d/train.err"
	defs="-DSA_MODEL=$m -DSA_UP=$up -DSA_SOURCE=\"${m}_infer.c\" -I$d"
	relu=
	if grep -q '^static void bnns_relu_moments' "$d/${m}_infer.c"; then
		relu=yes
		defs="$defs -DSA_RELU"
	fi
	[ "$base" = an_linear ] && defs="$defs -DSA_LINEAR"
	built=
	for b in gcc-O0 gcc-O2 clang-O2; do
		cc=${b%-*}
		[ "$cc" = clang ] && cc=$CLANG
		[ -n "$cc" ] || continue
		# shellcheck disable=SC2086
		$cc $C99 -${b#*-} $defs -o "$d/$b" "$MAIN" -lm 2>"$d/$b.err"
		ok_or_show $? "$base: builds warning-free with $b" "$d/$b.err"
		"$d/$b" analytic <"$d/data.csv" >"$d/$b.out"
		built="$built $b"
	done
	same=yes
	for b in $built; do
		cmp -s "$d/gcc-O2.out" "$d/$b.out" || same="no: $b differs"
	done
	[ -s "$d/gcc-O2.out" ] || same="no: no output"
	is "$same" yes "$base: the analytic predictive is the same bits in$built"
	if [ -n "$GXX" ]; then
		$GXX -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$d" \
			"$d/${m}_infer.c" 2>"$d/cxx.err"
		ok_or_show $? "$base: compiles as C++17" "$d/cxx.err"
	fi
	undefined=
	# shellcheck disable=SC2086
	gcc $C99 -O2 -ffreestanding -nostdlib -D"${up}_NO_LIBM" -I"$d" -c \
		-o "$d/free.o" "$d/${m}_infer.c" 2>"$d/free.err" &&
		undefined=$(nm -u "$d/free.o") &&
		gcc $C99 -O2 $defs -D"${up}_NO_LIBM" -o "$d/own" "$MAIN" -lm 2>>"$d/free.err"
	ok_or_show $? "$base: builds freestanding with ${up}_NO_LIBM" "$d/free.err"
	is "$undefined" "" "$base: the freestanding object needs no symbol"
	"$d/own" analytic <"$d/data.csv" >"$d/own.out"
	run within 1e-5 "$d/gcc-O2.out" "$d/own.out"
	is "$run_out" "" "$base: its own math gives the libm build's outputs within 1e-5"
	if [ "$opt" = adam ]; then
		"$d/gcc-O2" mc 0 1 <"$d/data.csv" >"$d/mean.out"
		cmp -s "$d/mean.out" "$d/gcc-O2.out"
		ok $? "$base: a point network's analytic predictive is its mean pass, bit for bit"
	fi
	if [ "$base" = an_linear ]; then
		run "$d/gcc-O2" linear 20000 <"$d/data.csv"
		is "${run_out%% *}" ok "$base: analytic = closed form (1e-5), = 20000 MC samples within 4.5 s.e. (worst: relative error, z of the mean, z of the variance: ${run_out#* })"
	fi
	if [ -n "$relu" ]; then
		for b in gcc-O2 own; do
			run "$d/$b" relu
			is "${run_out%% *}" ok "$base: $b: (leaky) relu moments = Simpson's rule within 1e-5 (worst mean, variance: ${run_out#* })"
		done
	fi
	if [ "$lik" != gaussian ]; then
		"$d/gcc-O2" mc 20000 1 <"$d/data.csv" >"$d/mc.out"
		run probs_near "$nout" 0.05 "$d/gcc-O2.out" "$d/mc.out"
		ok $run_status "$base: the probabilities are within 0.05 of 20000 MC samples' (worst $run_out)"
	fi
}

for file in "$top_srcdir"/t/models/an_linear.bnn "$top_srcdir"/t/models/an_mix.bnn \
	"$top_srcdir"/t/models/an_bern.bnn "$top_srcdir"/examples/toy1d_bayes.bnn \
	"$top_srcdir"/examples/toy1d.bnn; do
	model_test "$file"
done

# ---- diagnostics -----------------------------------------------------------------
cat >"$W/an_bad.bnn" <<'EOF'
model an_bad;
input x[4];
posterior meanfield;
h = tanh(dense(x, 8));
z = dense(h, 3) ~ dropout(p = 0.1);
y ~ categorical(z);
EOF
run "$BNNC" --standalone --analytic -o "$W/bad_infer.c" "$W/an_bad.bnn"
is "$run_status $run_err" "1 $W/an_bad.bnn:4:5: error: analytic predictive: op 'tanh' not supported
 h = tanh(dense(x, 8));
     ^~~~~~~~~~~~~~~~~
$W/an_bad.bnn:5:5: error: analytic predictive: family 'dropout' not supported
 z = dense(h, 3) ~ dropout(p = 0.1);
     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
$W/an_bad.bnn: note: the analytic predictive covers dense layers (point or meanfield), relu, leaky_relu, flatten, identity and concat" \
	"an op and a family without moments are errors at their nodes"
[ ! -e "$W/bad_infer.c" ] && [ ! -e "$W/bad_infer.h" ]
ok $? "and nothing is written"
run "$BNNC" --analytic "$W/an_bad.bnn"
is "$run_status $run_err" "2 bnnc: --analytic goes with --standalone: it adds a predictive to the standalone inference file
Try 'bnnc --help' for more information." "bnnc --analytic without --standalone is a usage error"

a=$W/an_mix
"$a/drv" export --load "$a/ckpt" --storage int8 -o "$W/an_mix_int8.h"
run gcc $C99 -c -o "$W/an_mix_int8.o" -D"AN_MIX_WEIGHTS=\"$W/an_mix_int8.h\"" "$a/an_mix_infer.c"
is "$run_status $(printf '%s\n' "$run_err" | grep -c 'error: #error "an_mix_predict_analytic reads f32 weights: export the header with --storage f32, or generate the file without --analytic"')" \
	"1 1" "an int8 weights header with the analytic predictive: a compile error that says why"
run "$a/gcc-O2" bad <"$a/data.csv"
is "$run_out" "small -2
null -2
misaligned -3
x -1
n -1
ok 0" "a workspace too small, absent or misaligned and bad arguments give their codes"

"$BNNC" --standalone -o "$W/plain_infer.c" "$top_srcdir/t/models/an_mix.bnn"
run grep -c 'predict_analytic\|ANALYTIC' "$W/plain_infer.c" "$W/plain_infer.h"
is "$run_out" "$W/plain_infer.c:0
$W/plain_infer.h:0" "without --analytic the files have no analytic predictive"

done_testing
