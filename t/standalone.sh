#!/bin/sh
# standalone.sh: `bnnc --standalone` and the driver's `export`, end to end,
# for every model in examples/ (globbed: a new example is covered without
# touching this file).  For each model:
#   - the driver (`bnnc --main`, with libbnn) trains it for one epoch on 16
#     rows of synthetic data that fit its input and likelihood (optimizer
#     bbb, or adam where bbb cannot train it; --standardize for Gaussian
#     models), and exports the checkpoint as the weights header;
#   - `bnnc --standalone` writes the inference file, which is built with
#     t/standalone_main.c and nothing else (no libbnn) by gcc -O0, gcc -O2
#     and clang -O2, each with -std=c99 -Wall -Wextra -Wpedantic -Werror;
#   - the posterior-mean pass (mc = 0) gives predict --mc 0's outputs
#     within 1e-5 relatively;
#   - the Monte-Carlo predictive with 8 samples (and its summaries) of
#     the first 4 rows, printed as %a, is the same bits in the three
#     builds; for the dropout MLP and the models of dropout on per_step
#     dense layers, embedding, gru and attention (t/models/sa_steps.bnn,
#     sa_seqdrop.bnn, sa_attndrop.bnn), 256 samples (4096 for the small
#     models) agree with predict's statistically, and differ from the mean
#     pass;
#   - the file compiles as C++ (g++ -std=c++17 -Wall -Wextra -Werror), and
#     freestanding with its own math (-ffreestanding -nostdlib
#     -DMODEL_NO_LIBM, gcc -O2) into an object with no undefined symbol,
#     whose mean pass, linked with the test's main, is predict's too.
# Every model is built by gcc -O0, gcc -O2 and clang -O2 (the Monte-Carlo
# bits compared), or by gcc -O2 alone when its weights header is at least
# SA_BITS_BYTES (unset: no limit; .ci/run's sanitizer pass sets 1 MB,
# since these builds use no sanitizer and its plain pass has run them).
# The C++ and freestanding builds run on the models whose weights header
# is under SA_FULL_BYTES (1 MB): they check the generated code, which the
# small models share op for op and family for family with the large ones
# (the Fashion-MNIST MLPs and ResNets), whose headers of millions of hex
# literals take seconds a compilation.
# Then the bad inputs, with their exact messages: a checkpoint of another
# model, a truncated and a corrupt checkpoint, a weights header of another
# model or none at all (compile errors), a workspace too small, misaligned
# or absent and invalid arguments (return codes), and bnnc's usage errors.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

W=$TAP_TMP
C99='-std=c99 -Wall -Wextra -Wpedantic -Werror'
MAIN=$top_srcdir/t/standalone_main.c
CLANG=$(command -v clang || true)
GXX=$(command -v g++ || true)

. "$top_srcdir/t/standalone_lib.sh"

# mc_agrees [MC]: the Monte-Carlo predictive samples the same posterior as
# libbnn's (its streams differ, so the check is statistical): with MC (256)
# samples, its outputs differ from predict --mc MC's by less than three
# quarters of what the mean pass's do (a pass that drew no noise, or the
# wrong noise, is as far as the mean pass or farther).  For a model whose
# noise moves its outputs (dropout); uses the caller's d and cols.  A
# model whose noise moves them little needs more samples: predict shares
# one weight sample across the data set, so its errors do not average out
# over the examples (t/models/sa_steps.bnn: 4096).
mc_agrees() {
	mc=${1:-256}
	"$d/drv" predict --load "$d/ckpt" --data "$d/data.csv" --mc "$mc" --seed 3 \
		--out "$d/predict_mc.csv" &&
		"$d/gcc-O2" "$mc" 5 g <"$d/data.csv" >"$d/mc.csv"
	run awk -F, -v cols="$cols" 'FILENAME == ARGV[1] { if (FNR > 1) for (j = 1; j <= cols; j++) mc[FNR - 1, j] = $j; next }
	FILENAME == ARGV[2] { if (FNR > 1) for (j = 1; j <= cols; j++) mean[FNR - 1, j] = $j; next }
	{ for (j = 1; j <= cols; j++) {
		a = mc[FNR, j] - $j; b = mc[FNR, j] - mean[FNR, j]
		da += a < 0 ? -a : a; db += b < 0 ? -b : b
	} }
	END { printf "%.3g %.3g", da, db; exit !(da < 0.75 * db) }' \
		"$d/predict_mc.csv" "$d/predict.csv" "$d/mc.csv"
	ok $run_status "$base: mc = $mc is nearer predict --mc $mc than the mean pass is (summed |differences| $(echo "$run_out" | cut -d' ' -f1) and $(echo "$run_out" | cut -d' ' -f2))"
}

# model_test FILE: the checks above for one model.
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
	# a scale given by a node (gaussian(mu, lv), scale = ls): the outputs
	# are both nodes' values, the targets and predictions the first's
	args=$("$BNNC" --summary "$file" | sed -n 's/.*, likelihood [^ ]* ~ [a-z]*(\(.*\))$/\1/p')
	second=$(printf '%s' "$args" | cut -d, -f2 | sed 's/.*= *//; s/^ *//')
	case $second in
	"$args" | learned | [0-9]*) ;;
	*) nout=$((nout / 2)) ;;
	esac
	cols=$nout
	std=
	case $lik in
	categorical | bernoulli) ;;
	*) cols=$((2 * nout)) ;; # means, then variances
	esac
	ids=
	grep -q '^input .* int;' "$file" && ids=3 # ids in [0, 3): every model's vocab is larger
	[ "$lik" = gaussian ] && [ -z "$ids" ] && std=--standardize
	rows_csv "$nin" "$nout" "$lik" 16 0 "$ids" >"$d/data.csv"
	trained=
	for opt in bbb adam; do
		if "$d/drv" train --data "$d/data.csv" --optimizer "$opt" --epochs 1 --batch 8 \
			--seed 1 $std --quiet --save "$d/ckpt" >/dev/null 2>"$d/train.err"; then
			trained=$opt
			break
		fi
	done
	if [ -z "$trained" ]; then
		ok_or_show 1 "$base: trains with bbb or adam" "$d/train.err"
		return
	fi
	"$d/drv" export --load "$d/ckpt" -o "$d/${m}_infer_weights.h" &&
		"$BNNC" --standalone -o "$d/${m}_infer.c" "$file"
	ok $? "$base: export ($trained) and bnnc --standalone"
	defs="-DSA_MODEL=$m -DSA_UP=$up -DSA_HEADER=\"${m}_infer.h\" -I$d"
	[ -n "$ids" ] && defs="$defs -DSA_IDS"
	bytes=$(wc -c <"$d/${m}_infer_weights.h")
	builds="gcc-O0 gcc-O2 clang-O2"
	if [ -n "${SA_BITS_BYTES:-}" ] && [ "$bytes" -ge "$SA_BITS_BYTES" ]; then
		builds=gcc-O2
	fi
	full=
	[ "$bytes" -lt "${SA_FULL_BYTES:-1000000}" ] && full=yes
	built=
	for b in $builds; do
		cc=${b%-*}
		[ "$cc" = clang ] && cc=$CLANG
		[ -n "$cc" ] || continue
		# shellcheck disable=SC2086
		$cc $C99 -${b#*-} $defs -o "$d/$b" "$d/${m}_infer.c" "$MAIN" -lm 2>"$d/$b.err"
		ok_or_show $? "$base: builds warning-free with $b" "$d/$b.err"
		built="$built $b"
	done
	run "$d/drv" predict --load "$d/ckpt" --data "$d/data.csv" --mc 0 --out "$d/predict.csv"
	run "$d/gcc-O2" 0 1 <"$d/data.csv"
	printf '%s\n' "$run_out" >"$d/mean.csv"
	run close_to "$d/predict.csv" "$d/mean.csv" "$cols"
	is "$run_out" "" "$base: mc = 0 gives predict --mc 0's outputs within 1e-5"
	# (on the first 4 rows: the bits of every op are in each row, and
	# gcc -O0 on the large models takes seconds a row)
	head -n 5 "$d/data.csv" >"$d/data4.csv"
	for b in $built; do
		"$d/$b" 8 42 <"$d/data4.csv" >"$d/$b.mc8"
	done
	same=yes
	for b in $built; do
		cmp -s "$d/gcc-O2.mc8" "$d/$b.mc8" || same="no: $b differs"
	done
	[ -s "$d/gcc-O2.mc8" ] || same="no: no output"
	if [ "$built" != " gcc-O2" ]; then
		is "$same" yes "$base: mc = 8 is the same bits in$built"
	else
		is "$same" yes "$base: mc = 8 runs (gcc -O2 only: SA_BITS_BYTES)"
	fi
	case $base in
	fashion_dropout) mc_agrees ;;
	sa_steps | sa_seqdrop | sa_attndrop) mc_agrees 4096 ;;
	esac
	if [ -n "$ids" ]; then
		run "$d/gcc-O2" badids <"$d/data.csv"
		is "$run_out" "vocab 1
negative 1" "$base: an id outside [0, ${up}_IDS_BELOW) returns ${up}_EIDS"
	fi
	[ -n "$full" ] || return 0
	if [ -n "$GXX" ]; then
		$GXX -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$d" \
			"$d/${m}_infer.c" 2>"$d/cxx.err"
		ok_or_show $? "$base: compiles as C++17" "$d/cxx.err"
	fi
	# shellcheck disable=SC2086
	gcc $C99 -O2 -ffreestanding -nostdlib -D"${up}_NO_LIBM" -I"$d" -c \
		-o "$d/free.o" "$d/${m}_infer.c" 2>"$d/free.err" &&
		undefined=$(nm -u "$d/free.o") &&
		gcc $C99 -O2 $defs -o "$d/free" "$d/free.o" "$MAIN"
	ok_or_show $? "$base: builds freestanding with ${up}_NO_LIBM" "$d/free.err"
	is "$undefined" "" "$base: the freestanding object needs no symbol"
	run "$d/free" 0 1 <"$d/data.csv"
	printf '%s\n' "$run_out" >"$d/free.csv"
	run close_to "$d/predict.csv" "$d/free.csv" "$cols"
	is "$run_out" "" "$base: its own math gives predict --mc 0's outputs within 1e-5"
}

found=0
for file in "$top_srcdir"/examples/${SA_ONLY:-*}.bnn "$top_srcdir"/t/models/${SA_ONLY:-sa_*}.bnn; do
	[ -f "$file" ] || continue
	found=$((found + 1))
	model_test "$file"
done
[ "$found" -gt 0 ]
ok $? "examples/ holds models ($found)"

# ---- bad input, on two small models (toy1d, toy_regression) --------------------
a=$W/toy1d
b=$W/toy_regression
run "$a/drv" export --load "$b/ckpt" -o "$W/x.h"
is "$run_status $run_err" \
	"1 $a/drv: $b/ckpt: this checkpoint belongs to model 'toy_regression', not to model 'toy1d'" \
	"export refuses a checkpoint of another model"
[ ! -e "$W/x.h" ]
ok $? "and writes nothing"
head -c 12 "$a/ckpt" >"$W/short.ckpt"
run "$a/drv" export --load "$W/short.ckpt" -o "$W/x.h"
is "$run_status $run_err" \
	"1 $a/drv: $W/short.ckpt: truncated checkpoint (the header needs 28 bytes at offset 0, only 12 remain)" \
	"export refuses a truncated checkpoint"
size=$(wc -c <"$a/ckpt")
cp "$a/ckpt" "$W/bad.ckpt"
printf 'X' | dd of="$W/bad.ckpt" bs=1 seek=$((size - 20)) conv=notrunc 2>/dev/null
run "$a/drv" export --load "$W/bad.ckpt" -o "$W/x.h"
is "$run_status $run_err" \
	"1 $a/drv: $W/bad.ckpt: checksum mismatch: the checkpoint is corrupt" \
	"export refuses a corrupt checkpoint"
run "$a/drv" export --load "$a/ckpt" -o /nonexistent/dir/w.h
is "$run_status $run_err" \
	"1 $a/drv: cannot write --out '/nonexistent/dir/w.h': directory '/nonexistent/dir': No such file or directory" \
	"export to a directory that does not exist fails before loading"
run "$a/drv" export --load "$a/ckpt" --data x.csv
is "$run_status $run_err" "2 $a/drv: option '--data' does not go with 'export'
Try '$a/drv --help'." "export takes no data"

run env LC_ALL=C gcc $C99 -c -I"$a" -DTOY1D_WEIGHTS="\"$b/toy_regression_infer_weights.h\"" \
	-o "$W/x.o" "$a/toy1d_infer.c"
printf '%s\n' "$run_err" | grep -q "toy1d_infer.c:[0-9]*:[0-9]*: error: size of array 'toy1d_weights_are_of_another_model' is negative"
ok_or_show $? "a weights header of another model stops the compilation, saying so" "$run_err_file"
run env LC_ALL=C gcc $C99 -c -I"$a" -DTOY1D_WEIGHTS='"toy1d_infer.h"' -o "$W/x.o" "$a/toy1d_infer.c"
printf '%s\n' "$run_err" | grep -q '#error "TOY1D_WEIGHTS is not a weights header written by the export command of a model'"'"'s driver"'
ok_or_show $? "a header that is not a weights header stops the compilation, saying so" "$run_err_file"

run "$a/gcc-O2" bad <"$a/data.csv"
is "$run_out" "small -2
null -2
misaligned -3
mc -1
n -1
ok 0" "a workspace too small, absent or misaligned and bad arguments give their codes"

run "$BNNC" --standalone --main "$top_srcdir/examples/toy1d.bnn"
is "$run_status $run_err" "2 bnnc: --standalone does not go with --main: the standalone file has no driver (its weights come from the driver's export command)
Try 'bnnc --help' for more information." "bnnc --standalone --main is a usage error"
run "$BNNC" --standalone --check "$top_srcdir/examples/toy1d.bnn"
is "$run_status $run_err" "2 bnnc: --standalone goes with code generation, not --check or --summary
Try 'bnnc --help' for more information." "bnnc --standalone --check is a usage error"
(cd "$W" && "$BNNC" --standalone "$top_srcdir/examples/toy1d.bnn")
ok $? "bnnc --standalone without -o"
[ -f "$W/toy1d_infer.c" ] && [ -f "$W/toy1d_infer.h" ] &&
	grep -q '#define TOY1D_WEIGHTS "toy1d_infer_weights.h"' "$W/toy1d_infer.c"
ok $? "writes toy1d_infer.c and .h, which include toy1d_infer_weights.h"
(cd "$W" && "$a/drv" export --load "$a/ckpt")
[ -f "$W/toy1d_infer_weights.h" ]
ok $? "export without -o writes MODEL_infer_weights.h, the name bnnc's default includes"

done_testing
