#!/bin/sh
# standalone_cross.sh: the LeNet standalone file on a Cortex-M4 and on
# big-endian s390x gives the host's results (issue 19, "On a real other
# architecture").  For examples/fashion_lenet.bnn (point weights: the
# network whose flash and RAM the issue budgets) and
# examples/fashion_lenet_bayes.bnn (mean-field layers, so that the
# Monte-Carlo predictive really samples: conv2d weights drawn, dense layers
# by the local reparameterisation):
#   1. the driver (bnnc --main) trains briefly on a synthetic 28x28 data set
#      (32 rows of multiples of 1/256, exact in decimal and in float; fixed
#      seed), exports the weights header, and bnnc --standalone writes the
#      inference file;
#   2. the first 4 rows become a C file of images, and t/cross/
#      standalone_probe.c runs the posterior-mean pass (mc = 0) and the
#      predictive with 4 samples (seed 19) with the summaries, in a static
#      workspace of exactly *_WORKSPACE_BYTES, printing every output as %a;
#   3. t/cross/run.sh builds it with -D<MODEL>_NO_LIBM (the file's own math:
#      the board's newlib libm rounds differently from glibc's) for the host,
#      the Cortex-M4 and s390x, and:
#      - the host's mean pass is predict --mc 0's within 1e-5 relatively;
#      - the Cortex-M4 prints the host's bytes: mean pass and samples are
#        bit-identical (same IEEE binary32 arithmetic in the same order,
#        -ffp-contract=off, no libm);
#      - s390x is within 1e-5 of the host only: GCC there evaluates float
#        expressions in double under -std=c99 (FLT_EVAL_METHOD 1), so a sum
#        is rounded once where the host rounds twice (docs/testing.md); the
#        number of values that differ and the largest difference are
#        printed;
#      - s390x with -fexcess-precision=fast (FLT_EVAL_METHOD 0) prints the
#        host's bytes: the check of byte order.  A weight or a random draw
#        that depended on it would differ in every output, far beyond any
#        tolerance; equal bits say that every baked literal, the generator
#        and the arithmetic are the same on a big-endian machine;
#      - the point model's 4 samples are its mean pass (no randomness to
#        sample), the mean-field model's are not;
#   4. the board image's text, data and bss and the workspace are printed as
#      diagnostics (the issue's budget, for int8 storage: 150 KB of flash,
#      64 KB of RAM);
#   5. the point LeNet again with its weights header exported with
#      --storage int8 (the one C file reads it: docs/standalone.md,
#      "Storage"): the host's mean pass is predict --mc 0's on the
#      checkpoint of the int8 values (export --rounded) within 1e-5, and
#      the Cortex-M4 and s390x (-fexcess-precision=fast) print the host's
#      bytes.
# A target whose tools are missing is skipped with the reason, or fails
# under BNN_REQUIRE_CROSS=1 (t/cross/cross_tap.sh).  About 25 seconds.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# shellcheck source=t/cross/cross_tap.sh
. "$top_srcdir/t/cross/cross_tap.sh"

cross=$top_srcdir/t/cross
cd "$TAP_TMP" || bail_out "no temporary directory"
ROWS=32   # training rows
N=4       # test images (the first rows)
MC=4      # Monte-Carlo samples
SEED=19   # their seed
PIXELS=784

# The data set: 28x28 inputs in [0, 1) and labels 0..9, with a header.
awk -v rows=$ROWS -v k=$PIXELS 'BEGIN {
	srand(7)
	for (j = 0; j < k; j++) printf "p%d,", j
	print "label"
	for (i = 0; i < rows; i++) {
		for (j = 0; j < k; j++) printf "%.8f,", int(rand() * 256) / 256
		print i % 10
	}
}' >data.csv

# The first N rows as the probe's C array (the literals are the CSV's
# digits, exact in float).
awk -F, -v n=$N -v k=$PIXELS 'NR == 1 {
	print "/* The first " n " examples of data.csv, for standalone_probe.c. */"
	print "const float sp_images[" n * k "] = {"
	next
}
NR > n + 1 { exit }
{ for (j = 1; j <= k; j++) printf "%s%sf,%s", (j % 8 == 1 ? "\t" : ""), $j, (j % 8 ? " " : "\n") }
END { print "};" }' data.csv >images.c

# shellcheck disable=SC2086  # CC may hold words
$CC -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -o close "$cross/standalone_close.c" -lm
ok $? "the comparison within a tolerance builds"

# lenet MODEL OPTIMIZER [STORAGE]: the checks above for one model, its
# weights header exported with --storage STORAGE (default f32; another
# storage reuses the model's driver and checkpoint, and predicts from the
# checkpoint of the values it keeps).
lenet() {
	m=$1
	st=${3:-f32}
	up=$(printf '%s' "$m" | tr '[:lower:]' '[:upper:]')
	ckpt=$m.$st.ckpt # the --rounded checkpoint: never the trained one, an input
	if [ "$st" = f32 ]; then
		# shellcheck disable=SC2086  # the flags are words
		"$BNNC" --main -o "$m.c" "$top_srcdir/examples/$m.bnn" &&
			$CC $BNN_CFLAGS -o "$m" "$m.c" $BNN_LIBS &&
			"./$m" train --data data.csv --optimizer "$2" --epochs 1 --batch 16 --seed 1 \
				--quiet --save "$m.ckpt" >/dev/null &&
			"$BNNC" --standalone -o "${m}_infer.c" "$top_srcdir/examples/$m.bnn"
	else
		[ -f "${m}_infer.c" ]
	fi &&
		"./$m" export --load "$m.ckpt" --storage "$st" --rounded "$ckpt" \
			-o "${m}_infer_weights.h" &&
		"./$m" predict --load "$ckpt" --data data.csv --mc 0 --out "$m${3:+.$st}.predict.csv"
	built=$?
	[ "$st" = f32 ] || m0=$m m=$m.$st # the results' file names
	ok $built "$m: trained ($2), exported ($st), bnnc --standalone, predict --mc 0"
	[ $built = 0 ] || return 0 # the rest would only fail for the same reason

	set -- -DSA_MODEL="${m0:-$m}" -DSA_UP="$up" -DSA_HEADER="\"${m0:-$m}_infer.h\"" -DSP_N=$N \
		-DSP_MC=$MC -DSP_SEED=$SEED -D"${up}_NO_LIBM" -I. \
		"$cross/standalone_probe.c" "${m0:-$m}_infer.c" images.c
	cross_run host "$m.host" "$m's probe" -- "$@"

	# The mean pass against predict's first N rows, its K probabilities.
	k=$(sed -n "s/^#define ${up}_OUTPUTS \([0-9]*\)L$/\1/p" "${m0:-$m}_infer.h")
	awk -F, -v n=$N -v k="$k" 'NR > 1 && NR <= n + 1 {
		s = "mean " NR - 2 ":"
		for (j = 1; j <= k; j++) s = s " " $j
		print s
	}' "$m.predict.csv" >"$m.predict.mean"
	grep '^mean' "$m.host" | sed 's/ |.*//' >"$m.host.mean"
	run ./close 1e-5 "$m.predict.mean" "$m.host.mean"
	ok "$run_status" "$m: the host's mean pass is predict --mc 0's within 1e-5"
	[ "$run_status" = 0 ] || diag "$run_out$run_err"

	grep "^mean" "$m.host" | cut -d: -f2 >"$m.host.0"
	grep "^mc$MC" "$m.host" | cut -d: -f2 >"$m.host.$MC"
	if [ "${m0:-$m}" = fashion_lenet ]; then
		is_file "$m.host.0" "$m.host.$MC" "$m: mc = $MC of a point model is its mean pass"
	else
		cmp -s "$m.host.0" "$m.host.$MC"
		isnt=$?
		[ -s "$m.host.$MC" ] && [ "$isnt" = 1 ]
		ok $? "$m: mc = $MC samples (its outputs are not the mean pass's)"
	fi
	ws=$(sed -n "s/^#define ${up}_WORKSPACE_BYTES \([0-9]*\)UL$/\1/p" "${m0:-$m}_infer.h")
	diag "$m: workspace ${ws} bytes (${up}_WORKSPACE_BYTES)"

	if cross_ready arm-m4 2; then
		cross_run arm-m4 "$m.arm" "$m's probe" -- "$@"
		is_file "$m.host" "$m.arm" \
			"$m: the Cortex-M4's mean pass and $MC samples are the host's bits"
		board_size "${m0:-$m}" "$m.arm.elf" "$st"
	fi

	if cross_ready s390x 4; then
		cross_run s390x "$m.s390x" "$m's probe" -- "$@"
		run ./close 1e-5 "$m.host" "$m.s390x"
		ok "$run_status" "$m: s390x (FLT_EVAL_METHOD 1) is within 1e-5 of the host"
		diag "$m: s390x against the host: $run_out$run_err"
		cross_saved=${CROSS_CFLAGS-}
		CROSS_CFLAGS="$cross_saved -fexcess-precision=fast"
		export CROSS_CFLAGS
		cross_run s390x "$m.s390x-fast" "$m's probe with -fexcess-precision=fast" -- "$@"
		CROSS_CFLAGS=$cross_saved
		is_file "$m.host" "$m.s390x-fast" \
			"$m: big-endian s390x in float precision prints the host's bytes"
	fi
}

# board_size MODEL ELF STORAGE: the image's flash (text + data) and RAM
# (data + bss), and for f32 how much of the flash is the baked weights (4
# bytes a value).
board_size() {
	cross_size "$2"
	command -v arm-none-eabi-size >/dev/null 2>&1 || return 0
	# shellcheck disable=SC2046  # the words of the table's second line
	set -- "$1" $(arm-none-eabi-size "$2" | sed -n 2p) "$3"
	if [ "$8" != f32 ]; then
		diag "$1 on the Cortex-M4 ($8 storage): flash $(($2 + $3)) bytes; RAM $(($3 + $4)) bytes"
		return 0
	fi
	values=$(sed -n 's/^#define [A-Z0-9_]*_W_[A-Z0-9_]*_COUNT \([0-9]*\)L$/\1/p' \
		"${1}_infer_weights.h" | awk '{ s += $1 } END { print s + 0 }')
	diag "$1 on the Cortex-M4 (float storage): flash $(($2 + $3)) bytes, of which" \
		"$((4 * values)) are $values weights; RAM $(($3 + $4)) bytes"
}

lenet fashion_lenet adam
lenet fashion_lenet_bayes bbb
m0=
lenet fashion_lenet adam int8

done_testing
