#!/bin/sh
# sensitivity.sh: the memory-perturbation scores (runtime/train/
# sensitivity.c) through the driver's sensitivity command and the
# trainer's loo option, on t/models/sn_logreg.bnn (2 features, 2 classes,
# meanfield), whose numbers are worked out by hand below.  Checkpoints
# with chosen parameters and σ are written by t/sensitivity_ckpt.c.
# Checks: the CSV of a hand-worked set byte for byte, a second
# checkpoint's scores and LOO terms within 1e-6 of the hand values, the
# listing on stdout; a 2-2-2 tanh network (t/models/sn_net.bnn, whose V_i
# has off-diagonal terms) against its Jacobian written out in
# t/sensitivity_ref.awk; the SVG contact sheet of a 2-image IDX set byte
# for byte; that the LOO estimate training reports is the mean of the
# command's loo_nll over the same examples; the same bits on 1 and 3
# threads; and bad input with exact messages (a point model, a
# checkpoint without σ, --top 0, data of another shape, --svg on
# non-image data, loo with a point optimizer).
#
# The hand computations.  Logistic regression f = W x + b has
# ∂f_c/∂W_cj = x_j, ∂f_c/∂b_c = 1 and nothing else, so
# V = ∇fᵀ diag(σ²) ∇f is diagonal, V_cc = Σ_j σ²(W_cj) x_j² + σ²(b_c),
# and with e = softmax(f) − onehot(y) the shift from the label's logit is
# Δ_c = V_cc e_c − V_yy e_y; the score is ‖Δ‖ and the LOO term
# ℓ(f + Δ) = log Σ_c exp(f_c + Δ_c) − f_y (IVON paper §4.4, App. C.5).
#
# Checkpoint c1: W = 0, b = 0, every σ = 0.5 (σ² = 0.25): f = 0,
# softmax = (½, ½), NLL = log 2 = 0.693147181 for every example.
#   #0 x = (1, 2), y = 0: V = 0.25·5 + 0.25 = 1.5 (both classes),
#      e = (−½, ½), Δ_1 = 1.5·½ + 1.5·½ = 1.5: score 1.5,
#      LOO log(1 + e^1.5) = 1.70141328
#   #1 x = (0, 0), y = 1: V = 0.25, e = (½, −½), Δ_0 = 0.25: score 0.25,
#      LOO log(e^0.25 + 1) = 0.82593942
#   #2 x = (2, 0), y = 1: V = 0.25·4 + 0.25 = 1.25, Δ_0 = 1.25: score 1.25,
#      LOO log(e^1.25 + 1) = 1.50192908
# (two classes: Δ has one non-zero entry, v·e of the logit f_1 − f_0, whose
# variance is 2·V_cc here: 2·1.5·½ = 1.5 for #0, the paper's |v_i e_i|.)
#
# Checkpoint c2: W = [[1, 0], [0, 0]], b = 0, σ(W) = [[1, 0], [0, 0]],
# σ(b) = (0, 0.5).
#   #0 x = (1, 2), y = 0: f = (1, 0), s_0 = e/(e + 1) = 0.731058579,
#      e = (−0.268941421, 0.268941421), V_00 = 1, V_11 = 0.25,
#      Δ_1 = 0.25·0.268941421 + 1·0.268941421 = 0.336176777,
#      NLL log(1 + e^−1) = 0.313261688,
#      LOO log(e^1 + e^0.336176777) − 1 = 0.415335613
#   #1 x = (0, 0), y = 1: f = 0, V_00 = 0, V_11 = 0.25, e = (½, −½),
#      Δ_0 = 0 − 0.25·(−½) = 0.125, LOO log(e^0.125 + 1) = 0.757599
#   #2 x = (2, 0), y = 1: f = (2, 0), s_0 = 0.880797078, e_0 = 0.880797078,
#      e_1 = −0.880797078, V_00 = 4, V_11 = 0.25,
#      Δ_0 = 4·0.880797078 + 0.25·0.880797078 = 3.74338758,
#      NLL log(1 + e^2) = 2.12692801, LOO log(e^5.74338758 + 1) = 5.74658643
# shellcheck shell=sh source=t/tap.sh disable=SC2154,SC2015  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# ---- programs --------------------------------------------------------------
# shellcheck disable=SC2086
"$BNNC" --main -o net.c "$top_srcdir/t/models/sn_logreg.bnn" &&
	$CC $BNN_CFLAGS -o net net.c $BNN_LIBS &&
	"$BNNC" -o model.c "$top_srcdir/t/models/sn_logreg.bnn" &&
	$CC $BNN_CFLAGS -DSENS_MODEL=sn_logreg_model -o mkckpt \
		"$top_srcdir/t/sensitivity_ckpt.c" model.c $BNN_LIBS &&
	"$BNNC" --main -o snet.c "$top_srcdir/t/models/sn_net.bnn" &&
	$CC $BNN_CFLAGS -o snet snet.c $BNN_LIBS &&
	"$BNNC" -o snet_model.c "$top_srcdir/t/models/sn_net.bnn" &&
	$CC $BNN_CFLAGS -DSENS_MODEL=sn_net_model -o mknet \
		"$top_srcdir/t/sensitivity_ckpt.c" snet_model.c $BNN_LIBS &&
	"$BNNC" --main -o point.c "$top_srcdir/t/models/sn_point.bnn" &&
	$CC $BNN_CFLAGS -o point point.c $BNN_LIBS ||
	bail_out "cannot build the test programs"

./mkckpt c1.ckpt 0 0 0 0 0 0 --sigma .5 .5 .5 .5 .5 .5 &&
	./mkckpt c2.ckpt 1 0 0 0 0 0 --sigma 1 0 0 0 0 .5 &&
	./mkckpt nosigma.ckpt 0 0 0 0 0 0 || bail_out "cannot write the checkpoints"
printf 'a,b,class\n1,2,0\n0,0,1\n2,0,1\n' >d.csv

# ---- c1: the CSV byte for byte, the listing ----------------------------------
run ./net sensitivity --load c1.ckpt --data d.csv --out c1.csv --top 1
is "$run_status" 0 "sensitivity exits 0"
cat >want.csv <<'EOF'
index,label,predicted,score,nll,loo_nll
0,0,0,1.5,0.693147181,1.70141328
1,1,0,0.25,0.693147181,0.82593942
2,1,0,1.25,0.693147181,1.50192908
EOF
is_file want.csv c1.csv "c1: every example's score, NLL and LOO term, as worked out by hand"
cat >want.txt <<'EOF'
sensitivity of 3 examples of d.csv under c1.ckpt: mean score 1, nll 0.693147, loo_nll 1.34309
most sensitive:
    rank    index  label  predicted        score
       1        0      0          0          1.5
least sensitive:
    rank    index  label  predicted        score
       3        1      1          0         0.25
EOF
is "$run_out" "$(cat want.txt)" "the most and least sensitive examples listed on stdout"

# ---- c2: unequal variances, non-zero logits (float logits: 1e-6) ------------
run ./net sensitivity --load c2.ckpt --data d.csv --out c2.csv
cat >want2.csv <<'EOF'
0,0,0,0.336176777,0.313261688,0.415335613
1,1,0,0.125,0.693147181,0.757599
2,1,0,3.74338758,2.12692801,5.74658643
EOF
is "$(awk -F, 'NR == FNR { for (j = 1; j <= 6; j++) w[FNR, j] = $j; next }
	FNR > 1 { for (j = 1; j <= 6; j++) { d = $j - w[FNR - 1, j]; d = d < 0 ? -d : d
		m = w[FNR - 1, j] < 0 ? -w[FNR - 1, j] : w[FNR - 1, j]
		if (d > 1e-6 * (m > 1 ? m : 1)) printf "row %d column %d: %s, not %s\n", FNR - 1, j, $j, w[FNR - 1, j] } }' \
	want2.csv c2.csv)" "" "c2: the scores and LOO terms within 1e-6 of the hand values"
is "$(sed -n 3p "$run_out_file")" \
	"    rank    index  label  predicted        score" "the listing's header"
is "$(sed -n 4p "$run_out_file")" \
	"       1        2      1          0      3.74339" "ranked by score: example 2 first"

# ---- a 2-2-2 tanh network: V_i with off-diagonal terms ------------------------
P="0.5 -0.3 0.2 0.8 0.1 -0.2 1.0 -0.7 0.4 0.9 0.05 -0.1"
S="0.3 0.2 0.1 0.4 0.25 0.15 0.35 0.05 0.2 0.3 0.1 0.45"
# shellcheck disable=SC2086
./mknet net.ckpt $P --sigma $S || bail_out "cannot write net.ckpt"
printf 'a,b,class\n1,2,0\n-0.5,0.3,1\n2,-1,1\n0,0,0\n' >dn.csv
run ./snet sensitivity --load net.ckpt --data dn.csv --out net.csv
is "$run_status" 0 "sensitivity of the 2-2-2 network exits 0"
awk -v P="$P" -v S="$S" -f "$top_srcdir/t/sensitivity_ref.awk" dn.csv >net_ref.csv
is "$(awk -F, 'NR == FNR { for (j = 2; j <= 4; j++) w[FNR, j] = $j; next }
	FNR > 1 { r = FNR - 1; split("4 5 6", col, " ")
		for (j = 2; j <= 4; j++) { a = $(col[j - 1]); d = a - w[r, j]; d = d < 0 ? -d : d
			m = w[r, j] < 0 ? -w[r, j] : w[r, j]
			if (d > 1e-5 * m) printf "row %d: %s, not %s\n", r, a, w[r, j] } }
	END { if (FNR != 5) print "rows:", FNR }' net_ref.csv net.csv)" "" \
	"its scores, NLL and LOO terms within 1e-5 of the Jacobian's (t/sensitivity_ref.awk)"

# ---- the contact sheet of a 2-image IDX set (f32 1x2 images) -----------------
printf '\0\0\015\003\0\0\0\002\0\0\0\001\0\0\0\002\077\200\0\0\100\0\0\0\0\0\0\0\0\0\0\0' >img.idx
printf '\0\0\010\001\0\0\0\002\0\001' >lab.idx
run ./net sensitivity --load c1.ckpt --data img.idx --labels lab.idx --top 1 --svg sheet.svg
is "$run_status" 0 "sensitivity --svg on 2-D IDX examples exits 0"
cat >want.svg <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="320.00" height="276.00" viewBox="0 0 320 276" font-family="sans-serif" font-size="12">
<title>sensitivity |v e| of img.idx under c1.ckpt</title>
<rect class="background" width="320.00" height="276.00" fill="white"/>
<text x="16.00" y="32.00" font-size="16">sensitivity |v e| of img.idx under c1.ckpt</text>
<text x="16.00" y="58.00" font-weight="bold">most sensitive</text>
<rect x="16.00" y="66.00" width="42.00" height="42.00" fill="#808080"/>
<rect x="58.00" y="66.00" width="42.00" height="42.00" fill="#ffffff"/>
<text x="16.00" y="121.00">#0 label 0</text>
<text x="16.00" y="135.00">1.5</text>
<text x="16.00" y="166.00" font-weight="bold">least sensitive</text>
<rect x="16.00" y="174.00" width="42.00" height="42.00" fill="#000000"/>
<rect x="58.00" y="174.00" width="42.00" height="42.00" fill="#000000"/>
<text x="16.00" y="229.00">#1 label 1</text>
<text x="16.00" y="243.00">0.25</text>
</svg>
EOF
is_file want.svg sheet.svg "the contact sheet, byte for byte (pixels 1, 2 | 0, 0: grey levels over 0..2)"

# ---- training: the LOO estimate is the mean of the command's terms ---------
awk 'BEGIN { s = 3; print "a,b,class"
	for (i = 0; i < 200; i++) {
		s = (s * 1103515245 + 12345) % 2147483648; u = s / 2147483648
		s = (s * 1103515245 + 12345) % 2147483648; v = s / 2147483648
		k = i % 2; printf "%.4f,%.4f,%d\n", (k ? 1 : -1) + 2 * (u - 0.5), 2 * (v - 0.5), k
	} }' >train.csv
run ./net train --data train.csv --optimizer ivon --epochs 3 --seed 2 --set loo=1000 \
	--save ivon.ckpt
is "$run_status" 0 "train --set loo=1000 exits 0"
is "$(grep -c 'loo nll [0-9]' "$run_err_file")" 3 "every epoch's progress line has the LOO estimate"
loo=$(sed -n 's/.*"loo_nll": \([^,]*\),.*/\1/p' "$run_out_file")
run ./net sensitivity --load ivon.ckpt --data train.csv --out all.csv
is "$(awk -F, 'NR > 1 { s += $6; n++ } END { printf "%.6g", s / n }' all.csv)" "$loo" \
	"the summary's loo_nll is the mean LOO term of the 200 training examples"
run ./net sensitivity --load ivon.ckpt --data train.csv --out all1.csv --threads 1
run ./net sensitivity --load ivon.ckpt --data train.csv --out all3.csv --threads 3
is_file all1.csv all3.csv "the same bits on 1 and 3 threads"
is_file all1.csv all.csv "and on the default number of threads"
run ./net train --data train.csv --optimizer ivon --epochs 1 --seed 2 --set loo=10 \
	--save ivon10.ckpt
is "$(grep -c 'loo nll [0-9]' "$run_err_file")" 1 "loo=10 scores a subset (10 evenly spaced examples)"

# ---- bad input ---------------------------------------------------------------
run ./point train --data train.csv --optimizer adam --epochs 1 --save point.ckpt
run ./point sensitivity --load point.ckpt --data d.csv
is "$run_status" 1 "a point model's checkpoint: exit 1"
is "$run_err" "./point: point.ckpt: sensitivities and the leave-one-out estimate need meanfield layers only; layer 'logits' of model 'sn_point' has a point posterior" \
	"with the reason"
run ./net sensitivity --load nosigma.ckpt --data d.csv
is "$run_err" "./net: nosigma.ckpt: sensitivities need the posterior variances; this state is a point estimate (optimizer none): train with ivon, vogn, bbb or badam" \
	"a meanfield checkpoint without σ is refused"
run ./net sensitivity --load c1.ckpt --data d.csv --top 0
is "$run_status" 2 "--top 0: a usage error"
is "$run_err" "./net: --top: '0' is not a number of examples in [1, 1000000000]
Try './net --help'." "with the range"
printf 'a,b,c,class\n1,2,3,0\n' >d3.csv
run ./net sensitivity --load c1.ckpt --data d3.csv
is "$run_err" "./net: d3.csv: 3 feature columns but the model takes 2" \
	"data of another shape is refused"
run ./net sensitivity --load c1.ckpt --data d.csv --svg x.svg --out x.csv
is "$run_err" "./net: --svg draws image data (IDX examples of 2 or 3 dimensions); the examples of d.csv have 1" \
	"--svg on CSV data is refused"
ok "$(test ! -e x.svg && test ! -e x.csv; echo $?)" "and writes nothing"
is "$(cat "$run_out_file")" "" "before scoring: nothing is printed"
run ./point train --data train.csv --optimizer adam --epochs 1 --set loo=10 --save p2.ckpt
is "$run_err" "./point: loo needs the posterior variances of a variational optimizer (ivon, vogn, bbb or badam); adam learns none" \
	"train --set loo with a point optimizer is refused"
run ./net sensitivity --data d.csv
is "$run_status" 2 "sensitivity without --load: a usage error"

done_testing
