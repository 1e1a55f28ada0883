#!/bin/sh
# attention.sh: attention layers end to end: models of 6 embedded ids with
# positions added and one attention of 2 heads with no residual path
# (t/models/at_point.bnn, t/models/at_mf.bnn, t/models/at_drop.bnn with
# MC dropout on the attention's inputs), trained by their generated
# programs on a generated task that needs attention: each example is 6 ids
# in [0, 4), its class 1 when the first id equals the last (half the
# examples).  Without attention weights that depend on the ids and the
# positions, what reaches the dense layers is the bag of ids, which cannot
# tell which id is first and which last.  Checks: Adam on the point model
# and on the dropout one, IVON, VOGN and BBB on the meanfield one all reach
# a held-out accuracy above a bound set below what they reach with these
# seeds (chance: 0.5); MC prediction of the dropout model redraws its
# masks per sample and at the mean (--mc 0) draws none;
# IVON with lr 0.1 and ess = 10 N (a tempered posterior: with the default
# lr 0.3 and ess = N its noise keeps the attention uniform on 600
# examples) and VOGN over 80 epochs; bnnc --standalone writes attention,
# and dropout on it, and its analytic pass refuses attention with its
# message.  Last, the code of a block with two residual additions: one
# pass each forward, and backward no copy of the delta to an input that
# the add alone reads.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# build and accuracy_above
. "$top_srcdir/t/blobs_lib.sh"

cd "$TAP_TMP" || bail_out "no temporary directory"

# sequences N SEED: a CSV header and N rows of 6 ids and the class (i % 2):
# the last id is the first (class 1) or another (class 0).
sequences() {
	awk -v n="$1" -v seed="$2" '
	function rnd() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	BEGIN { s = seed
		for (j = 0; j < 6; j++) printf "t%d,", j
		print "label"
		for (i = 0; i < n; i++) {
			k = i % 2
			for (t = 0; t < 6; t++) x[t] = int(rnd() * 4)
			if (k == 1) x[5] = x[0]
			else while (x[5] == x[0]) x[5] = int(rnd() * 4)
			for (t = 0; t < 6; t++) printf "%d,", x[t]
			print k
		} }'
}

sequences 600 1 >train.csv
sequences 300 2 >test.csv

# ---- compile ---------------------------------------------------------------
for m in at_point at_mf at_drop; do
	build $m "$top_srcdir/t/models/$m.bnn"
	ok $? "$m builds with -Werror"
done

# trains PROG OPT BOUND ARGS...: trains with OPT and ARGS (seed fixed), then
# evaluates on the held-out sequences; the accuracy must exceed BOUND.
held_out="--data test.csv"
trains() {
	_tp=$1
	_to=$2
	_tb=$3
	shift 3
	trains_above "$_tp" "$_to" "$_tb" --batch 16 --seed 7 --data train.csv "$@"
}

trains at_point adam 0.9 --epochs 40
trains at_mf ivon 0.9 --epochs 80 --lr 0.1 --set ess=6000
trains at_mf vogn 0.9 --epochs 80
trains at_mf bbb 0.9 --epochs 40
trains at_drop adam 0.9 --epochs 40

# MC prediction of at_drop: each sample draws its own masks, so one
# sample's predictions change with the seed; at the mean (--mc 0) no mask
# is drawn and the seed changes nothing.
mc() {
	./at_drop predict --load at_drop-adam.ckpt --data test.csv --mc "$1" --seed "$2" \
		>"mc-$1-$2.out" 2>&1
}
mc 0 1 && mc 0 2 && mc 1 1 && mc 1 2
ok $? "at_drop predicts with --mc 0 and 1"
cmp -s mc-0-1.out mc-0-2.out
ok $? "at_drop at the mean (--mc 0): the seed changes nothing"
! cmp -s mc-1-1.out mc-1-2.out
ok $? "at_drop with --mc 1: another seed draws other dropout masks"

# ---- the standalone target -------------------------------------------------
# t/standalone.sh runs attention (t/models/sa_attn.bnn, sa_attn_mf.bnn, and
# examples/charlm*.bnn); its analytic pass refuses it at the node (a model
# of real inputs, so that attention is its first op without a closed form)
printf 'model sa;\ninput x[4, 3];\na = attention(x, 1);\ny ~ categorical(dense(a, 2));\n' >sa.bnn
run "$BNNC" --standalone -o sa.c sa.bnn
is "$run_status/$run_err" "0/" "bnnc --standalone writes attention"
run "$BNNC" --standalone --analytic -o sa.c sa.bnn
is "$run_status/$(printf '%s\n' "$run_err" | head -1)" \
	"1/sa.bnn:3:5: error: analytic predictive: op 'attention' not supported" \
	"bnnc --standalone --analytic refuses attention, at the node"
# dropout on attention (its masks: t/models/sa_attndrop.bnn in t/standalone.sh)
run "$BNNC" --standalone -o sa.c "$top_srcdir/t/models/at_drop.bnn"
is "$run_status/$run_err" "0/" "bnnc --standalone writes dropout on attention"

# The code of two residual additions: each sums its two inputs in one
# pass, and backward copies the add's delta only to h, which a dense layer
# reads too; the attention and f, read by an add alone, share its delta
# buffer and get no copy (gen/codegen.c, cg_add_alias; the gradient checks
# of t/models/gc_attn.bnn cover the values).
cat >res.bnn <<'EOF'
model res;
input x[4, 8];
h = layernorm(add(x, attention(x, 2)), per_step = true);
f = dense(relu(dense(h, 16, per_step = true)), 8, per_step = true);
y ~ categorical(dense(flatten(layernorm(add(h, f), per_step = true)), 3));
EOF
run "$BNNC" -o res.c res.bnn
is "$run_status" 0 "bnnc compiles a block with two residual additions"
is "$(grep -c 'bnn_gen_add_pair(B \* 32, a_x, a_h_attention, a_h_add);' res.c) $(grep -c 'bnn_gen_add_pair(B \* 32, a_h, a_f, a_y_add);' res.c)" "1 1" \
	"each addition's forward is one add_pair of its two inputs"
is "$(grep 'bnn_gen_add_into(' res.c)" "	bnn_gen_add_into(B * 32, d_y_add, d_h, 0);" \
	"backward copies one delta: the add's to h, the input another layer reads"
is "$(sed -n 's/.*bnn_real \*const d_\(f\|y_add\|h_attention\|h_add\) = \(ws + [0-9]*L \* B\);/\2/p' res.c | uniq -c | awk '{print $1}' | tr '\n' ' ')" "2 2 " \
	"f shares d_y_add's buffer, the attention d_h_add's"

done_testing
