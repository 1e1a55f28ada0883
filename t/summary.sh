#!/bin/sh
# summary.sh: `bnnc --summary` on representative models.
#
# 1. The table of each model below, run from the model's directory with the
#    bare file name (so the header's file name is stable), must match
#    t/summary/NAME.out byte for byte, with exit status 0 and nothing on
#    standard error.
# 2. The totals (and a few rows, shapes and overheads) are then compared
#    with counts computed here by hand from the formulas, independently of
#    bnnc's code:
#      dense      Din * Dout (+ Dout bias)
#      conv2d     out_ch * in_ch * kh * kw (+ out_ch bias); output extent
#                 (H + 2 * pad - k) / stride + 1
#      conv1d     out_ch * in_ch * k (+ out_ch bias); output length
#                 (L + 2 * pad - dilation * (k - 1) - 1) / stride + 1
#      batchnorm  2 * C (a scale and a shift per channel)
#      groupnorm  2 * C (likewise); layernorm 2 * C * H * W (per value)
#      embedding  vocab * dim; output [T, dim]
#      pooling    (H - size) / stride + 1
#      point P, meanfield 2P, dropout P, emp(k) and ecmp(k) kP
#      whvi       D = the power of two >= Din, stack = ceil(Dout / D):
#                 stack * (4D + flows * (2D + 1)) + 2 * Dout with a bias
#      gaussian(sigma = learned): one point parameter per output
#      gru        3U * (F + U + 2) (W_ih, W_hh, two biases); output [U] or [T, U]
#      attention  3D * (F + 1) + D * (D + 1) (in and out projections); output [T, D]
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

here=$(pwd)
expected=$top_srcdir/t/summary

# summary DIR NAME: runs `bnnc --summary NAME.bnn` in DIR, compares the
# output with t/summary/NAME.out and keeps it as $TAP_TMP/NAME.out.
summary() {
	cd "$1" || bail_out "cannot cd to $1"
	run "$BNNC" --summary "$2.bnn"
	cd "$here" || bail_out "cannot cd back to $here"
	is "exit status $run_status, stderr '$run_err'" "exit status 0, stderr ''" \
		"$2: bnnc --summary exits 0 with nothing on stderr"
	is_file "$expected/$2.out" "$run_out_file" "$2: summary matches t/summary/$2.out"
	cp "$run_out_file" "$TAP_TMP/$2.out"
}

# total NAME: "MODEL POSTERIOR" from the total line of NAME's summary.
total() {
	awk '$1 == "total" { gsub(/,/, ""); print $2, $3 }' "$TAP_TMP/$1.out"
}

# row NAME NODE: "MODEL POSTERIOR" from NODE's row of NAME's summary.
row() {
	awk -v node="$2" '$1 == node { gsub(/,/, ""); print $(NF - 1), $NF }' "$TAP_TMP/$1.out"
}

# shape NAME NODE: the output shape in NODE's row, "[C, H, W]".
shape() {
	awk -v node="$2" '$1 == node && match($0, /\[[^]]*\]/) { print substr($0, RSTART, RLENGTH) }' \
		"$TAP_TMP/$1.out"
}

# overhead NAME: the percentage printed on the last line, "+12.3%"; a
# posterior smaller than the network ("... 90.9% fewer parameters ...")
# gives "-90.9%".
overhead() {
	sed -n -e 's/^posterior overhead over the point network: //p' \
		-e 's/^the posterior has \(.*\)% fewer parameters than the point network$/-\1%/p' \
		"$TAP_TMP/$1.out"
}

# --- the formulas ----------------------------------------------------------

# dense DIN DOUT [BIAS]
dense() {
	echo $(($1 * $2 + ${3:-1} * $2))
}

# conv IN_CH OUT_CH KH KW [BIAS]
conv() {
	echo $(($2 * $1 * $3 * $4 + ${5:-1} * $2))
}

# bn C
bn() {
	echo $((2 * $1))
}

# extent H K STRIDE PAD: the output extent of a conv2d or pooling window
extent() {
	echo $((($1 + 2 * $4 - $2) / $3 + 1))
}

# extent1 L K STRIDE PAD DILATION: the output length of a conv1d
extent1() {
	echo $((($1 + 2 * $4 - $5 * ($2 - 1) - 1) / $3 + 1))
}

# whvi DIN DOUT FLOWS [BIAS]
whvi() {
	w_d=1
	while [ "$w_d" -lt "$1" ]; do
		w_d=$((w_d * 2))
	done
	w_stack=$((($2 + w_d - 1) / w_d))
	echo $((w_stack * (4 * w_d + $3 * (2 * w_d + 1)) + ${4:-1} * 2 * $2))
}

# pct MODEL POSTERIOR: the overhead as bnnc prints it
pct() {
	awk -v m="$1" -v p="$2" 'BEGIN { printf "%+.1f%%\n", 100 * (p - m) / m }'
}

# --- the tables --------------------------------------------------------------

for name in fashion_mlp tiny_resnet lenet5 toy_regression whvi_flows multilabel emp_patch; do
	summary "$top_srcdir/examples" "$name"
done
for name in whvi_pad_stack emp_batchnorm learned_sigma all_point signal_conv1d norms gru sequence \
	attention steps; do
	summary "$expected" "$name"
done

# --- counts by hand ------------------------------------------------------------

# fashion_mlp: 784 -> 512 (meanfield) -> 512 (whvi, D = 512) -> 10 (ecmp, k = 5)
h1=$(dense 784 512)
h2=$(dense 512 512)
out=$(dense 512 10)
m=$((h1 + h2 + out))
p=$((2 * h1 + $(whvi 512 512 0) + 5 * out))
is "$(total fashion_mlp)" "$m $p" "fashion_mlp: totals $m and $p"
is "$(row fashion_mlp h2)" "$h2 $(whvi 512 512 0)" "fashion_mlp: whvi layer h2"
is "$(overhead fashion_mlp)" "$(pct $m $p)" "fashion_mlp: overhead $(pct $m $p)"

# tiny_resnet: a meanfield 3x3 stem with a point batchnorm, two blocks of
# two meanfield 3x3 convs and two emp(k = 4) batchnorms, dropout dense 16 -> 10
stem=$(conv 1 16 3 3)
c=$(conv 16 16 3 3)
b=$(bn 16)
out=$(dense 16 10)
m=$((stem + b + 2 * (2 * c + 2 * b) + out))
p=$((2 * stem + b + 2 * (2 * 2 * c + 2 * 4 * b) + out))
is "$(total tiny_resnet)" "$m $p" "tiny_resnet: totals $m and $p"
s=$(extent 28 3 1 1)
is "$(shape tiny_resnet s2_c2)" "[16, $s, $s]" "tiny_resnet: 3x3 kernel with padding 1 keeps 28x28"
is "$(row tiny_resnet s1_b1)" "$b $((4 * b))" "tiny_resnet: emp(k = 4) batchnorm s1_b1"

# lenet5: meanfield everywhere but the point output layer
c1=$(conv 1 6 5 5)
s=$(($(extent 28 5 1 2) / 2))        # C1 with padding 2, then S2
c3=$(conv 6 16 5 5)
s=$(($(extent "$s" 5 1 0) / 2))      # C3, then S4
f5=$(dense $((16 * s * s)) 120)
f6=$(dense 120 84)
out=$(dense 84 10)
m=$((c1 + c3 + f5 + f6 + out))
p=$((2 * (c1 + c3 + f5 + f6) + out))
is "$(total lenet5)" "$m $p" "lenet5: totals $m and $p"
is "$(shape lenet5 s4)" "[16, $s, $s]" "lenet5: S4 is 16x${s}x$s"

# toy_regression: meanfield 1 -> 128, whvi 128 -> 128, meanfield 128 -> 1,
# one learned sigma
h1=$(dense 1 128)
h2=$(dense 128 128)
mu=$(dense 128 1)
m=$((h1 + h2 + mu + 1))
p=$((2 * h1 + $(whvi 128 128 0) + 2 * mu + 1))
is "$(total toy_regression)" "$m $p" "toy_regression: totals $m and $p"
is "$(row toy_regression y)" "1 1" "toy_regression: the learned sigma"
is "$(overhead toy_regression)" "$(pct $m $p)" "toy_regression: overhead $(pct $m $p)"

# whvi_flows: 784 -> 300 -> 100 (whvi, 2 flows) -> 10 (whvi, 4 flows)
m=$(($(dense 784 300) + $(dense 300 100) + $(dense 100 10)))
p=$(($(whvi 784 300 2) + $(whvi 300 100 2) + $(whvi 100 10 4)))
is "$(total whvi_flows)" "$m $p" "whvi_flows: totals $m and $p"
is "$(row whvi_flows h1_dense)" "$(dense 784 300) $(whvi 784 300 2)" \
	"whvi_flows: 784 -> 300 pads to D = 1024"
is "$(row whvi_flows out)" "$(dense 100 10) $(whvi 100 10 4)" "whvi_flows: 100 -> 10 with 4 flows"

# multilabel: four branches of 40 inputs (whvi, meanfield, point, point),
# concatenated to 200 + 64 + 32 + 16, then dropout, point without bias,
# ecmp(k = 3)
joined=$((200 + 64 + 32 + 16))
m=$(($(dense 40 200) + $(dense 40 64) + $(dense 40 32) + $(dense 40 16) +
	$(dense "$joined" 128) + $(dense 128 16 0) + $(dense 16 12)))
p=$(($(whvi 40 200 0) + 2 * $(dense 40 64) + $(dense 40 32) + $(dense 40 16) +
	$(dense "$joined" 128) + $(dense 128 16 0) + 3 * $(dense 16 12)))
is "$(total multilabel)" "$m $p" "multilabel: totals $m and $p"
is "$(row multilabel wide_dense)" "$(dense 40 200) $(whvi 40 200 0)" \
	"multilabel: 40 -> 200 stacks 4 blocks of D = 64"
is "$(shape multilabel joined)" "[$joined]" "multilabel: concat of vectors"

# emp_patch: point convs without bias, emp(k = 4) batchnorms in the blocks,
# dropout on the strided convs, ecmp(k = 4) on d1's batchnorm, emp(k = 4) out
stem=$(conv 1 32 5 5)
s=$(extent 96 5 2 2)                 # 48
s=$(extent "$s" 3 2 0)               # maxpool 3, stride 2: 23
is "$(shape emp_patch pool1)" "[32, $s, $s]" "emp_patch: overlapping max pooling gives ${s}x$s"
# inception IN CH: sets i_model and i_post, the counts of one expansion:
# three point convs without bias and three emp(k = 4) batchnorms
inception() {
	i_conv=$(($(conv "$1" "$2" 1 1 0) + $(conv "$1" "$2" 1 7 0) + $(conv "$2" "$2" 7 1 0)))
	i_model=$((i_conv + 3 * $(bn "$2")))
	i_post=$((i_conv + 3 * 4 * $(bn "$2")))
}
inception 32 32
m1_m=$i_model m1_p=$i_post
down=$(conv 64 64 3 3 0)
s=$(extent "$s" 3 2 1)               # 12
is "$(shape emp_patch d1)" "[64, $s, $s]" "emp_patch: stride 2, padding 1 gives ${s}x$s"
inception 64 64
m2_m=$i_model m2_p=$i_post
is "$(shape emp_patch m2_row_c)" "[64, $(extent "$s" 1 1 0), $(extent "$s" 7 1 3)]" \
	"emp_patch: a 1x7 kernel with padding (0, 3) keeps ${s}x$s"
s=$((s / 2))                         # maxpool 2: 6
head=$(dense $((128 * s * s)) 128)
out=$(dense 128 30)
m=$((stem + m1_m + down + $(bn 64) + m2_m + head + out))
p=$((stem + m1_p + down + 4 * $(bn 64) + m2_p + head + 4 * out))
is "$(total emp_patch)" "$m $p" "emp_patch: totals $m and $p"
is "$(row emp_patch m2_row_c)" "$(conv 64 64 1 7 0) $(conv 64 64 1 7 0)" "emp_patch: 1x7 kernel"
# Chang et al., section 3.3: a patch costs 2(K - 1)N2 more parameters on a
# batchnorm of N2 channels, (K - 1)(I + 1)O on an output layer of I inputs
# and O outputs
set -- $(row emp_patch m2_wide_batchnorm)
is "$(($2 - $1))" "$((2 * (4 - 1) * 64))" "emp_patch: emp(k = 4) on 64 channels adds 2(K-1)N2"
set -- $(row emp_patch keypoints)
is "$(($2 - $1))" "$(((4 - 1) * (128 + 1) * 30))" "emp_patch: emp(k = 4) on 128 -> 30 adds (K-1)(I+1)O"

# whvi_pad_stack: padding and stacking
h1=$(whvi 20 100 3)
h2=$(whvi 100 256 0)
out=$(whvi 256 10 1 0)
is "$(row whvi_pad_stack h1)" "$(dense 20 100) $h1" "whvi_pad_stack: 20 -> 100 is 4 blocks of D = 32, 3 flows"
is "$(row whvi_pad_stack h2)" "$(dense 100 256) $h2" "whvi_pad_stack: 100 -> 256 is 2 blocks of D = 128"
is "$(row whvi_pad_stack out)" "$(dense 256 10 0) $out" "whvi_pad_stack: 256 -> 10 without bias, 1 flow"
m=$(($(dense 20 100) + $(dense 100 256) + $(dense 256 10 0)))
p=$((h1 + h2 + out))
is "$(total whvi_pad_stack)" "$m $p" "whvi_pad_stack: totals $m and $p"
is "$(overhead whvi_pad_stack)" "$(pct $m $p)" "whvi_pad_stack: overhead $(pct $m $p)"

# emp_batchnorm: a (3, 5) kernel, stride (1, 2), padding (1, 2) on 16x16
h=$(extent 16 3 1 1)
w=$(extent 16 5 2 2)
is "$(shape emp_batchnorm c)" "[8, $h, $w]" "emp_batchnorm: non-square kernel, stride and padding"
c=$(conv 3 8 3 5)
c2=$(conv 8 4 1 1 0)
out=$(dense $((4 * (h / 2) * (w / 2))) 3)
m=$((c + $(bn 8) + c2 + $(bn 4) + out))
p=$((2 * c + 5 * $(bn 8) + c2 + $(bn 4) + 2 * out))
is "$(total emp_batchnorm)" "$m $p" "emp_batchnorm: totals $m and $p"
is "$(row emp_batchnorm n2)" "$(bn 4) $(bn 4)" "emp_batchnorm: the default posterior does not reach batchnorm"

# learned_sigma: whvi on one input (D = 1, 50 blocks), 3 learned sigmas
m=$(($(dense 1 50) + $(dense 50 3) + 3))
p=$(($(whvi 1 50 0) + 2 * $(dense 50 3) + 3))
is "$(total learned_sigma)" "$m $p" "learned_sigma: totals $m and $p"
is "$(row learned_sigma y)" "3 3" "learned_sigma: one sigma per output"

# all_point: point everywhere, no overhead
m=$(($(conv 3 4 3 3) + $(dense 4 2)))
is "$(total all_point)" "$m $m" "all_point: totals $m and $m"
is "$(overhead all_point)" "+0.0%" "all_point: no overhead"

# signal_conv1d: [6, 128] signals; conv1d 7 taps padded by 3 (meanfield by
# default) and its point batchnorm, maxpool 2; 5 taps 2 apart with stride
# 2 (dropout), avgpool 4 stride 2 and globalavgpool; a point conv1d as
# long as its input, no bias; a meanfield dense 40 -> 5
l1=$(extent1 128 7 1 3 1)
l2=$(extent1 $((l1 / 2)) 5 2 0 2)
l3=$(((l2 - 4) / 2 + 1))
is "$(shape signal_conv1d c1_conv1d) $(shape signal_conv1d c2_conv1d) $(shape signal_conv1d p2)" \
	"[16, $l1] [32, $l2] [32, $l3]" "signal_conv1d: lengths $l1, $l2 (dilation 2, stride 2), $l3"
is "$(shape signal_conv1d c3)" "[8, 1]" "signal_conv1d: a kernel as long as its input"
c1=$(conv 6 16 1 7)
c2=$(conv 16 32 1 5)
c3=$(conv 32 8 1 $l3 0)
out=$(dense $((8 + 32)) 5)
m=$((c1 + $(bn 16) + c2 + c3 + out))
p=$((2 * c1 + $(bn 16) + c2 + c3 + 2 * out))
is "$(total signal_conv1d)" "$m $p" "signal_conv1d: totals $m and $p"
is "$(row signal_conv1d c2_conv1d)" "$c2 $c2" "signal_conv1d: dropout keeps the count"
is "$(overhead signal_conv1d)" "$(pct $m $p)" "signal_conv1d: overhead $(pct $m $p)"
# norms: meanfield conv 3 -> 12 (3x3, padding 1), meanfield groupnorm,
# point layernorm of the [12, 9, 7] map, avgpool 3, meanfield dense -> 10,
# point groupnorm, meanfield layernorm of 10, meanfield dense 10 -> 4
c=$(conv 3 12 3 3)
g=$(bn 12)
l=$((2 * 12 * 9 * 7))
h=$(dense $((12 * 3 * 2)) 10)
out=$(dense 10 4)
m=$((c + g + l + h + 2 * 10 + 2 * 10 + out))
p=$((2 * c + 2 * g + l + 2 * h + 2 * 10 + 2 * 2 * 10 + 2 * out))
is "$(shape norms p)" "[12, $(extent 9 3 3 0), $(extent 7 3 3 0)]" "norms: avgpool 3 of 9x7"
is "$(total norms)" "$m $p" "norms: totals $m and $p"
is "$(row norms l)" "$l $l" "norms: layernorm keeps a scale and a shift per value, point by default"
is "$(row norms g)" "$g $((2 * g))" "norms: groupnorm keeps them per channel, meanfield when annotated"
is "$(shape norms h)" "[10]" "norms: groupnorm of a vector keeps its shape"
# gru: meanfield gru 6 -> 16 over 12 steps (every state), point gru 16 -> 8
# (the last state), meanfield dense 8 -> 5
s=$((3 * 16 * (6 + 16 + 2)))
r=$((3 * 8 * (16 + 8 + 2)))
out=$(dense 8 5)
m=$((s + r + out))
p=$((2 * s + r + 2 * out))
is "$(shape gru s)" "[12, 16]" "gru: output = sequence keeps every step"
is "$(shape gru r)" "[8]" "gru: the last state by default"
is "$(total gru)" "$m $p" "gru: totals $m and $p"
is "$(row gru s)" "$s $((2 * s))" "gru: 3U(F + U + 2) parameters, meanfield by the default posterior"
# sequence: 12 ids, a meanfield embedding 50 x 8 and a point one 40 x 8,
# added, positional, point layernorm of [12, 8], meanfield dense -> 16 -> 3
e=$((50 * 8))
f=$((40 * 8))
l=$((2 * 12 * 8))
h=$(dense $((12 * 8)) 16)
out=$(dense 16 3)
m=$((e + f + l + h + out))
p=$((2 * e + f + l + 2 * h + 2 * out))
is "$(total sequence)" "$m $p" "sequence: totals $m and $p"
is "$(row sequence e)" "$e $((2 * e))" "sequence: embedding keeps vocab x dim weights, meanfield by default"
is "$(row sequence f)" "$f $f" "sequence: a point embedding when annotated"
is "$(shape sequence e)" "[12, 8]" "sequence: embedding of 12 ids is [12, 8]"
is "$(shape sequence p)" "[12, 8]" "sequence: positional keeps the shape"
# attention: meanfield attention 12 -> 12 (4 heads) over 16 positions,
# point layernorm of [16, 12], point causal attention 12 -> 8 (2 heads),
# meanfield dense 128 -> 5
a=$((3 * 12 * (12 + 1) + 12 * (12 + 1)))
l=$((2 * 16 * 12))
c=$((3 * 8 * (12 + 1) + 8 * (8 + 1)))
out=$(dense $((16 * 8)) 5)
m=$((a + l + c + out))
p=$((2 * a + l + c + 2 * out))
is "$(total attention)" "$m $p" "attention: totals $m and $p"
is "$(row attention a)" "$a $((2 * a))" "attention: 3D(F + 1) + D(D + 1) parameters, meanfield by default"
is "$(row attention c)" "$c $c" "attention: a point attention when annotated"
is "$(shape attention a)" "[16, 12]" "attention: dim defaults to the input's features"
is "$(shape attention c)" "[16, 8]" "attention: dim = 8 gives [T, 8]"
# steps: a dropout embedding 30 x 6 of 10 ids, transposed to [6, 10] for a
# meanfield conv1d of 8 filters of 3 taps, transposed back to [10, 8] for
# a meanfield per_step dense 8 -> 12 (F·units + units, whatever T), a
# point gru 12 -> 5, meanfield dense 5 -> 3
e=$((30 * 6))
c=$((8 * 6 * 3 + 8))
f=$(dense 8 12)
g=$((3 * 5 * (12 + 5 + 2)))
out=$(dense 5 3)
m=$((e + c + f + g + out))
p=$((e + 2 * c + 2 * f + g + 2 * out))
is "$(total steps)" "$m $p" "steps: totals $m and $p"
is "$(row steps f)" "$f $((2 * f))" "steps: a per_step dense layer keeps dense's parameters"
is "$(row steps e)" "$e $e" "steps: a dropout embedding keeps vocab x dim weights"
is "$(shape steps c_transpose)" "[6, 10]" "steps: transpose of [10, 6] is [6, 10]"
is "$(shape steps f)" "[10, 12]" "steps: per_step dense of [10, 8] is [10, 12]"

done_testing
