#!/bin/sh
# gru.sh: gru layers end to end: models of [time, features] sequences
# (t/models/gr_point.bnn, t/models/gr_mf.bnn) trained by their generated
# programs on a generated task, the sign of the sum of a noisy sequence:
# each example is 10 steps of 2 features, the first a value in [-1, 1],
# the second noise; its class is 1 when the first feature sums to more
# than 0.  Checks: Adam on the point model, IVON, VOGN and BBB on the
# meanfield one all reach a held-out accuracy above a bound set well below
# what they reach with these seeds (chance: 0.5); bnnc --standalone
# refuses gru with its message.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# build and accuracy_above
. "$top_srcdir/t/blobs_lib.sh"

cd "$TAP_TMP" || bail_out "no temporary directory"

# sequences N SEED: a CSV header and N rows of 10 x 2 values and the class.
sequences() {
	awk -v n="$1" -v seed="$2" '
	function rnd() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	BEGIN { s = seed
		for (t = 0; t < 10; t++) printf "v%d,e%d,", t, t
		print "label"
		for (i = 0; i < n; i++) {
			sum = 0
			for (t = 0; t < 10; t++) {
				v = 2 * rnd() - 1; sum += v
				printf "%.6f,%.6f,", v, 2 * rnd() - 1
			}
			print (sum > 0 ? 1 : 0)
		} }'
}

sequences 600 1 >train.csv
sequences 300 2 >test.csv

# ---- compile ---------------------------------------------------------------
for m in gr_point gr_mf; do
	build $m "$top_srcdir/t/models/$m.bnn"
	ok $? "$m builds with -Werror"
done

# trains PROG OPT BOUND: trains with OPT (seed fixed), then evaluates on
# the held-out sequences; the accuracy must exceed BOUND.
held_out="--data test.csv"
trains() {
	trains_above "$1" "$2" "$3" --epochs 40 --batch 16 --seed 7 --data train.csv
}

trains gr_point adam 0.9
trains gr_mf ivon 0.9
trains gr_mf vogn 0.9
trains gr_mf bbb 0.9

# ---- the standalone target -------------------------------------------------
# t/standalone.sh runs gru (t/models/sa_gru.bnn, sa_seq.bnn); the analytic
# pass refuses it at the node
run "$BNNC" --standalone -o sa.c "$top_srcdir/t/models/gr_point.bnn"
is "$run_status/$run_err" "0/" "bnnc --standalone writes gru"
run "$BNNC" --standalone --analytic -o sa.c "$top_srcdir/t/models/gr_point.bnn"
is "$run_status/$(printf '%s\n' "$run_err" | head -1)" \
	"1/$top_srcdir/t/models/gr_point.bnn:6:5: error: analytic predictive: op 'gru' not supported" \
	"bnnc --standalone --analytic refuses gru, at the node"

done_testing
