#!/bin/sh
# fusion.sh: a relu that alone reads a dense layer is computed in the
# layer's product (gen/codegen.c, cg_relu_fusion;
# bnn_gen_dense_relu_forward; bnn_sgemm_bias_relu's epilogue).  Checks
# the generated code: the product carries the relu, the relu node has no
# forward code and shares the layer's buffer; where the relu's reader is
# a point dense layer, that layer's backward product writes the relu
# input's delta through the relu's mask (cg_relu_back_fusion,
# bnn_sgemm_relu_mask) and the relu has no backward code either; a
# meanfield layer's sampled pass (local reparameterisation) applies the
# relu in place after its products; no fusion where another node reads
# the layer's output, nor for whvi.  Then the values: from the same
# initial parameters, each fused model and the same network with
# identities around the relu (which keep it apart) train to the
# same predictions, byte for byte: point (Adam, 1 and 2 threads), MC
# dropout, meanfield with VOGN, IVON and BBB (its sampled pass); the
# layers take the product's blocked path (40 -> 48, partial tiles) and
# its dot-product path (48 -> 16).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# N rows of 40 features in [-1, 1) and a class in [0, 3).
awk -v n=400 'BEGIN {
	s = 11
	for (j = 1; j <= 40; j++)
		printf "x%d,", j
	print "y"
	for (i = 0; i < n; i++) {
		t = 0
		for (j = 1; j <= 40; j++) {
			s = (s * 1103515245 + 12345) % 2147483648
			v = 2 * s / 2147483648 - 1
			t += j % 2 ? v : -v
			printf "%.5f,", v
		}
		print (t > 0.5 ? 2 : t > -0.5 ? 1 : 0)
	}
}' >train.csv

# net FAMILY OPEN CLOSE: the network, its hidden layers of family FAMILY
# ("" for point), OPEN dense(...) CLOSE each: "relu(" ")", or kept
# apart by identities on both sides, "identity(relu(identity(" ")))".
net() {
	printf 'model net;\ninput x[40];\n'
	printf 'h1 = %sdense(x, 48)%s%s;\n' "$2" "$1" "$3"
	printf 'h2 = %sdense(h1, 16)%s%s;\n' "$2" "$1" "$3"
	printf 'y ~ categorical(dense(h2, 3));\n'
}
for fam in point drop mf; do
	case $fam in
	point) f="" ;;
	drop) f=" ~ dropout(p = 0.2)" ;;
	mf) f=" ~ meanfield" ;;
	esac
	net "$f" "relu(" ")" >"$fam.bnn"
	net "$f" "identity(relu(identity(" ")))" >"${fam}_apart.bnn"
done
cat >shared.bnn <<'EOF2'
model shared;
input x[40];
d = dense(x, 16);
y ~ categorical(dense(concat(relu(d), d), 3));
EOF2
cat >wv.bnn <<'EOF2'
model wv;
input x[40];
y ~ categorical(dense(relu(dense(x, 16) ~ whvi), 3));
EOF2

failed=0
for m in point point_apart drop drop_apart mf mf_apart shared wv; do
	"$BNNC" --main -o "$m.c" "$m.bnn" || failed=1
done
ok "$failed" "bnnc compiles the eight models"
is "$(grep -c 'bnn_gen_dense_relu_forward(B, 40, 48, a_x, w + 0, w + 1920, a_h1_dense);' point.c) $(grep -c 'bnn_gen_dense_relu_forward(B, 48, 16, a_h1, ' point.c)" "1 1" \
	"each dense layer's product computes its relu"
is "$(grep -c 'bnn_gen_relu_forward' point.c) $(grep -c 'computed by h1_dense.s product, in its buffer' point.c)" "0 1" \
	"the relu nodes have no forward code of their own"
is "$(sed -n 's/.*bnn_real \*const a_\(h1\|h1_dense\) = \(ws + [0-9]*L \* B\);.*/\2/p' point.c | uniq -c | awk '{print $1}')" 2 \
	"a_h1 is a_h1_dense's buffer"
is "$(grep -c 'bnn_gen_dense_backward_input_relu(B, 48, 16, d_h2_dense, w + 1968, a_h1, d_h1_dense);' point.c) $(grep -c 'bnn_gen_relu_backward' point.c) $(grep -c 'const d_h1 =' point.c)" "1 0 0" \
	"the next layer's backward product applies h1's mask, into h1_dense's delta: no relu backward pass, no delta of h1"
is "$(grep -c 'bnn_gen_relu_backward(B \* 48, a_h1_dense, a_h1, d_h1, d_h1_dense, 0);' drop.c)" 1 \
	"behind a dropout layer, whose backward is not one product, the relu's backward pass stays"
is "$(grep -c 'bnn_gen_dense_relu_forward(B, 40, 48, rng ? xt_h1_dense : a_x, ' drop.c)" 1 \
	"MC dropout: the product of the masked input"
is "$(grep -c 'bnn_gen_relu_in_place(B \* 48, a_h1_dense);' mf.c) $(grep -c 'bnn_gen_dense_relu_forward' mf.c) $(grep -c 'bnn_gen_relu_forward' mf.c)" "1 2 0" \
	"meanfield: the relu in place after the sampled pass's products, else in the product"
is "$(grep -c 'relu_forward' shared.c) $(grep -c 'bnn_gen_dense_forward(B, 40, 16, a_x' shared.c) $(grep -c 'relu_backward' shared.c)" "1 1 1" \
	"a layer that another node reads too keeps its own buffer and relu, forward and back"
is "$(grep -c 'bnn_gen_relu_forward' point_apart.c) $(grep -c 'bnn_gen_relu_backward' point_apart.c) $(grep -c 'dense_relu_forward\|backward_input_relu' point_apart.c)" "2 2 0" \
	"identities on both sides keep the relus apart: their own passes, forward and back"
is "$(grep -c 'bnn_gen_dense_relu_forward' wv.c) $(grep -c 'bnn_gen_relu_forward' wv.c)" "0 1" \
	"a whvi layer is not fused"

failed=0
for m in point point_apart drop drop_apart mf mf_apart; do
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o "$m" "$m.c" $BNN_LIBS || failed=1
done
ok "$failed" "the six models build"

# same FAMILY OPTIMIZER THREADS [OPTIONS]: the fused model and its apart
# twin, from the same initial parameters, predict the same bytes.
same() {
	fam=$1 opt=$2 t=$3
	shift 3
	bad=0
	"./$fam" train --data train.csv --target y --optimizer "$opt" --epochs 1 --seed 3 \
		--save "$fam.init.ckpt" --quiet >/dev/null || bad=1
	for m in "$fam" "${fam}_apart"; do
		# shellcheck disable=SC2068
		"./$m" train --data train.csv --target y --optimizer "$opt" --init "$fam.init.ckpt" \
			--epochs 4 --batch 64 --threads "$t" --save "$m.ckpt" --quiet $@ >/dev/null &&
			"./$m" predict --load "$m.ckpt" --data train.csv --mc 4 --seed 5 >"$m.txt" ||
			bad=1
	done
	[ "$bad" = 0 ] && [ "$(wc -l <"$fam.txt")" = 401 ] && cmp -s "$fam.txt" "${fam}_apart.txt"
	ok $? "$fam, $opt, $t thread(s): fused and apart predict the same bytes"
}
same point adam 1
same point adam 2
same drop adam 1
same mf vogn 1
same mf ivon 1
same mf bbb 1 --set lrt=1

done_testing
