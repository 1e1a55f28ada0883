#!/bin/sh
# standalone_storage.sh: `MODEL export --storage f32|bf16|int8` and the
# standalone file's reading of each storage (docs/standalone.md, "Storage"),
# on small example models that cover what the storages compress: point
# dense layers and a learned σ (toy1d), meanfield dense layers
# (toy1d_bayes), dropout dense layers (whvi_toy1d_mcd), meanfield conv2d
# and batchnorm (fashion_resnet_bayes), point conv2d with dropout and
# batchnorm (fashion_resnet_dropout), per_step dense layers of each family,
# the meanfield one's rows decoded into the block (t/models/sa_steps.bnn),
# and the sequence ops (t/models/sa_*.bnn): gru's two matrices read as
# stored by a point gru (sa_gru, sa_seq), decoded into the block by a
# meanfield one (sa_seq, sa_seq1: T = 1) and under dropout's masks
# (sa_seqdrop); embedding tables, their rows scaled as they are copied,
# point (sa_seq, sa_attn), meanfield with σ in bf16 (sa_seq, sa_seq1) and
# dropout (sa_seqdrop); attention's projections, point causal or not with
# one or two heads (sa_attn, sa_attndrop), meanfield (sa_attn_mf) and
# dropout (sa_attndrop).  SA_ONLY (a list of model names) runs those only
# (the checks of errors below read toy1d's header: keep toy1d in it).
# For each model, trained for one
# epoch on 16 rows of synthetic data, and each storage:
#   - the header is exported with --rounded, the checkpoint of the values
#     the storage keeps, and the one C file of the model builds with it
#     warning-free (gcc -O0, gcc -O2, clang -O2; -std=c99 -Wall -Wextra
#     -Wpedantic -Werror);
#   - its posterior-mean pass gives predict --mc 0's outputs on the
#     rounded checkpoint within 1e-5 relatively (int8 sums q·x and scales
#     once per output, where libbnn multiplies the dequantised weights:
#     the same value up to the rounding of the sums);
#   - mc = 8 (with summaries, as %a) is the same bits in the three builds;
#   - bf16: mc = 0 and mc = 8 are the same bits as an f32 header exported
#     from the rounded checkpoint (the same values, read in the same order);
#   - an example's constant data (.rodata, `size -A`) is at most 0.55 of
#     f32's with bf16 and 0.45 with int8 (biases and scales stay f32, and
#     a meanfield weight keeps its σ in bf16: 3 bytes of 8).
# Then the errors, with their exact messages: an unknown storage, a model
# with a whvi or an emp layer (f32 only), and a compressed header given to
# the C file of such a model (#error).
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

W=$TAP_TMP
C99='-std=c99 -Wall -Wextra -Wpedantic -Werror'
MAIN=$top_srcdir/t/standalone_main.c
CLANG=$(command -v clang || true)

. "$top_srcdir/t/standalone_lib.sh"

# driver MODEL: builds examples/MODEL.bnn's (or t/models/MODEL.bnn's)
# driver and its standalone file in $W/MODEL, trains it (bbb, or adam) and
# sets m, up, cols, d.
driver() {
	base=$1
	d=$W/$base
	src=$top_srcdir/examples/$base.bnn
	[ -f "$src" ] || src=$top_srcdir/t/models/$base.bnn
	mkdir -p "$d"
	"$BNNC" --main -o "$d/drv.c" "$src" &&
		# shellcheck disable=SC2086
		$CC $BNN_CFLAGS -o "$d/drv" "$d/drv.c" $BNN_LIBS &&
		"$BNNC" --standalone -o "$d/$base.c" "$src" || return 1
	info=$("$d/drv" info)
	m=$(printf '%s\n' "$info" | sed -n 's/^model //p')
	up=$(printf '%s' "$m" | tr 'a-z' 'A-Z')
	lik=$(printf '%s\n' "$info" | sed -n 's/^likelihood \([a-z]*\).*/\1/p')
	nin=$(printf '%s\n' "$info" | sed -n 's/^inputs \([0-9]*\),.*/\1/p')
	nout=$(printf '%s\n' "$info" | sed -n 's/^inputs [0-9]*, outputs \([0-9]*\),.*/\1/p')
	cols=$nout
	std=
	ids= # ids in [0, 3) for a model of ids (every test model's vocab is larger)
	grep -q '^input .* int;' "$src" && ids=3
	if [ "$lik" = gaussian ]; then
		cols=$((2 * nout))
		[ -n "$ids" ] || std=--standardize
	fi
	rows_csv "$nin" "$nout" "$lik" 16 0 "$ids" >"$d/data.csv"
	for opt in bbb adam; do
		"$d/drv" train --data "$d/data.csv" --optimizer "$opt" --epochs 1 --batch 8 \
			--seed 1 $std --quiet --save "$d/ckpt" >/dev/null 2>&1 && return 0
	done
	return 1
}

# build NAME HEADER FLAGS...: $d/NAME, the model's file with HEADER and the
# test's main.
build() {
	name=$1
	header=$2
	shift 2
	"$@" $C99 -D"${up}_WEIGHTS=\"$header\"" -DSA_MODEL="$m" -DSA_UP="$up" \
		-DSA_HEADER="\"$base.h\"" ${ids:+-DSA_IDS} -I"$d" -o "$d/$name" "$d/$base.c" \
		"$MAIN" -lm 2>"$d/$name.err"
}

# storage_test MODEL
storage_test() {
	if ! driver "$1"; then
		ok 1 "$1: the driver builds and trains"
		return
	fi
	for st in f32 bf16 int8; do
		"$d/drv" export --load "$d/ckpt" --storage "$st" --rounded "$d/r_$st.ckpt" \
			-o "$d/w_$st.h"
		ok $? "$base: export --storage $st --rounded"
		built=
		for b in gcc-O0 gcc-O2 clang-O2; do
			cc=${b%-*}
			[ "$cc" = clang ] && cc=$CLANG
			[ -n "$cc" ] || continue
			build "$st-$b" "w_$st.h" $cc -"${b#*-}"
			ok_or_show $? "$base: $st builds warning-free with $b" "$d/$st-$b.err"
			built="$built $b"
		done
		"$d/drv" predict --load "$d/r_$st.ckpt" --data "$d/data.csv" --mc 0 \
			--out "$d/predict_$st.csv"
		"$d/$st-gcc-O2" 0 1 <"$d/data.csv" >"$d/mean_$st.csv"
		run close_to "$d/predict_$st.csv" "$d/mean_$st.csv" "$cols"
		is "$run_out" "" "$base: $st mc = 0 gives predict --mc 0's on the rounded checkpoint within 1e-5"
		same=yes
		for b in $built; do
			"$d/$st-$b" 8 42 <"$d/data.csv" >"$d/$st-$b.mc8"
		done
		for b in $built; do
			cmp -s "$d/$st-gcc-O2.mc8" "$d/$st-$b.mc8" || same="no: $b differs"
		done
		[ -s "$d/$st-gcc-O2.mc8" ] || same="no: no output"
		is "$same" yes "$base: $st mc = 8 is the same bits in$built"
	done
	# bf16 reads the same values as f32 does from the rounded checkpoint
	"$d/drv" export --load "$d/r_bf16.ckpt" -o "$d/w_rb.h" && build rb w_rb.h gcc -O2
	ok_or_show $? "$base: an f32 header of the bf16-rounded checkpoint builds" "$d/rb.err"
	"$d/rb" 0 1 <"$d/data.csv" >"$d/rb.mc0"
	"$d/rb" 8 42 <"$d/data.csv" >"$d/rb.mc8"
	cmp -s "$d/rb.mc0" "$d/mean_bf16.csv" && cmp -s "$d/rb.mc8" "$d/bf16-gcc-O2.mc8"
	ok $? "$base: bf16 gives the bits of f32 holding the same values (mc = 0 and 8)"
	# the sizes of the examples (a test model's few dozen weights weigh
	# less than its biases and code)
	[ -f "$top_srcdir/examples/$base.bnn" ] || return 0
	for st in f32 bf16 int8; do
		gcc $C99 -O2 -c -D"${up}_WEIGHTS=\"w_$st.h\"" -I"$d" -o "$d/$st.o" "$d/$base.c" &&
			size -A "$d/$st.o" | awk '$1 == ".rodata" { print $2 }' >"$d/$st.rodata"
	done
	run awk -v f32="$(cat "$d/f32.rodata")" -v b="$(cat "$d/bf16.rodata")" \
		-v q="$(cat "$d/int8.rodata")" 'BEGIN {
		printf "%.3f and %.3f", b / f32, q / f32; exit !(f32 > 0 && b / f32 <= 0.55 && q / f32 <= 0.45)
	}'
	ok $run_status "$base: the constant data of bf16 and int8 are $run_out of f32's (at most 0.55 and 0.45)"
}

for model in ${SA_ONLY:-toy1d toy1d_bayes whvi_toy1d_mcd fashion_resnet_bayes fashion_resnet_dropout \
	sa_steps sa_gru sa_seq sa_seq1 sa_seqdrop sa_attn sa_attn_mf sa_attndrop}; do
	storage_test "$model"
done

# ---- errors ---------------------------------------------------------------------
a=$W/toy1d
run "$a/drv" export --load "$a/ckpt" --storage fp16 -o "$W/x.h"
is "$run_status $run_err" "2 $a/drv: --storage: 'fp16' is not f32, bf16 or int8
Try '$a/drv --help'." "an unknown storage is a usage error"
[ ! -e "$W/x.h" ]
ok $? "and writes nothing"

if driver whvi_toy1d; then
	run "$d/drv" export --load "$d/ckpt" --storage int8 -o "$W/x.h"
	is "$run_status $run_err" "1 $d/drv: --storage int8: layer 'h1_dense' is whvi, whose parameters are stored in f32 only (bf16 and int8 compress the weight matrices and kernels of point, meanfield and dropout layers)" \
		"export refuses to compress a whvi layer"
	[ ! -e "$W/x.h" ]
	ok $? "and writes nothing"
	# a compressed header given anyway (another model's export: toy1d's)
	sed "s/TOY1D_/${up}_/g; s/toy1d_w_/${m}_w_/g" "$W/toy1d/w_bf16.h" >"$d/forced.h"
	run env LC_ALL=C gcc $C99 -c -D"${up}_WEIGHTS=\"forced.h\"" -I"$d" -o "$W/x.o" "$d/$base.c"
	printf '%s\n' "$run_err" | grep -q "#error \"layer 'h1_dense' is whvi: its weights header must be exported with --storage f32\""
	ok_or_show $? "the C file of a whvi model stops at a compressed header, saying why" "$run_err_file"
else
	ok 1 "whvi_toy1d: the driver builds and trains"
fi
if driver tiny_resnet; then
	run "$d/drv" export --load "$d/ckpt" --storage bf16 -o "$W/x.h"
	is "$run_status $run_err" "1 $d/drv: --storage bf16: layer 's1_b1' is emp, whose parameters are stored in f32 only (bf16 and int8 compress the weight matrices and kernels of point, meanfield and dropout layers)" \
		"export refuses to compress an emp layer"
else
	ok 1 "tiny_resnet: the driver builds and trains"
fi

done_testing
