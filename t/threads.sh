#!/bin/sh
# threads.sh: the same seed gives the same bytes on every thread count,
# and with or without the kernels' versions for wider vectors.
# Generated drivers of nine models (dense, dense with dropout,
# meanfield, conv with batchnorm, pooling and dropout, the same
# meanfield, whvi, emp/ecmp patches, a transformer block with a GRU and
# every smooth activation, a meanfield CNN with groupnorm), big enough
# that the products, the kernels of the passes, the sampler and the
# updates take their parallel paths, train with every optimizer that
# trains them on --threads 1, 2 and 3; the checkpoints must be
# byte-identical (docs/training.md, "Threads").  Then eval and predict
# with Monte-Carlo samples, on 1, 2 and 3 threads, must print the same
# bytes too.  Last, each model is built again with one version of its
# kernels (-DBNN_GEN_NO_CLONES) and in GNU C mode (AVX2 and baseline
# versions only): one thread's checkpoint must be the same bytes
# (bnn_gen/clones.h).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# Deterministic data: N rows of F features in [-1, 1) and a label in
# [0, C) (a linear congruential generator, the same in every awk); with
# C = 0 the target is a real number.
data() { # N F C SEED
	awk -v n="$1" -v f="$2" -v c="$3" -v seed="$4" 'BEGIN {
		s = seed
		for (j = 1; j <= f; j++)
			printf "x%d,", j
		print "y"
		for (i = 0; i < n; i++) {
			t = 0
			for (j = 1; j <= f; j++) {
				s = (s * 1103515245 + 12345) % 2147483648
				v = 2 * s / 2147483648 - 1
				t += (j % 3 == 0 ? v : -v)
				printf "%.5f,", v
			}
			if (c > 0)
				print (t > 0 ? 1 : 0) + (i % 2) * (c > 2 ? 2 : 0)
			else
				printf "%.5f\n", t / 8
		}
	}'
}
data 384 128 4 1 >vec.csv
data 256 768 4 2 >img.csv
data 384 16 0 3 >reg.csv
data 192 384 4 4 >seq.csv
data 192 432 4 5 >img12.csv

cat >dense.bnn <<'EOF'
model dense;
input x[128];
h1 = relu(dense(x, 384));
h2 = tanh(dense(h1, 384));
label ~ categorical(dense(h2, 4));
EOF
cat >drop.bnn <<'EOF'
model drop;
input x[128];
h1 = relu(dense(x, 384) ~ dropout(p = 0.2));
h2 = relu(dense(h1, 384) ~ dropout(p = 0.1));
label ~ categorical(dense(h2, 4));
EOF
cat >mf.bnn <<'EOF'
model mf;
input x[128];
posterior meanfield;
h1 = relu(dense(x, 384));
h2 = relu(dense(h1, 384));
label ~ categorical(dense(h2, 4));
EOF
cat >cnn.bnn <<'EOF'
model cnn;
input img[3, 16, 16];
c1 = relu(batchnorm(conv2d(img, 16, kernel = 3, pad = 1, bias = false)));
p1 = maxpool(c1, 2);
c2 = relu(conv2d(p1, 32, kernel = 3, pad = 1) ~ dropout(p = 0.1));
p2 = avgpool(c2, 2);
label ~ categorical(dense(globalavgpool(p2), 4));
EOF
cat >cnnmf.bnn <<'EOF'
model cnnmf;
input img[3, 16, 16];
posterior meanfield;
c1 = relu(batchnorm(conv2d(img, 16, kernel = 3, pad = 1, bias = false)));
p1 = maxpool(c1, 2);
c2 = relu(conv2d(p1, 32, kernel = 3, pad = 1));
label ~ categorical(dense(globalavgpool(c2), 4));
EOF
cat >whvi.bnn <<'EOF'
model whvi;
input x[16];
posterior whvi;
h1 = relu(dense(x, 256));
h2 = relu(dense(h1, 256));
y ~ gaussian(dense(h2, 1), sigma = learned);
EOF
cat >patch.bnn <<'EOF'
model patch;
input img[3, 16, 16];
c1 = relu(batchnorm(conv2d(img, 16, kernel = 3, pad = 1, bias = false)) ~ ecmp(k = 3));
p1 = maxpool(c1, 2);
h = relu(dense(globalavgpool(p1), 256) ~ emp(k = 4));
label ~ categorical(dense(h, 4));
EOF
cat >seq.bnn <<'EOF'
model seq;
input x[16, 24];
posterior meanfield;
block encoder(x) {
	h = layernorm(add(x, attention(x, 4)), per_step = true);
	f = dense(gelu(dense(h, 48, per_step = true)), 24, per_step = true);
	return layernorm(add(h, f), per_step = true);
}
g = gru(encoder(x), 20);
z = softplus(dense(g, 32) ~ dropout(p = 0.1));
label ~ categorical(dense(tanh(sigmoid(dense(z, 16))), 4));
EOF
cat >img12.bnn <<'EOF'
model img12;
input img[3, 12, 12];
posterior meanfield;
c1 = leaky_relu(groupnorm(conv2d(img, 8, kernel = 3, pad = 1), 2));
c2 = relu(batchnorm(conv2d(c1, 8, kernel = 3, pad = 1, bias = false)));
h = cos(dense(flatten(maxpool(c2, 2)), 32));
label ~ categorical(dense(h, 4));
EOF

# model  data     optimizers
cat >plan.txt <<'EOF'
dense vec.csv sgd adam adamw
drop vec.csv adam
mf vec.csv vogn ivon badam bbb
cnn img.csv adam
cnnmf img.csv vogn ivon
whvi reg.csv adam bbb
patch img.csv adam
seq seq.csv vogn ivon
img12 img12.csv vogn
EOF

while read -r model csv optimizers; do
	# shellcheck disable=SC2086
	"$BNNC" --main -o "$model.c" "$model.bnn" &&
		$CC $BNN_CFLAGS -o "$model" "$model.c" $BNN_LIBS
	ok $? "the $model model builds"
	for opt in $optimizers; do
		extra=
		[ "$model" = cnnmf ] && [ "$opt" = vogn ] && extra="--set mc=2"
		failed=0
		for t in 1 2 3; do
			# shellcheck disable=SC2086
			run "./$model" train --data "$csv" --target y --optimizer "$opt" --epochs 2 \
				--batch 96 --seed 7 --threads "$t" --save "$model.$opt.$t.ckpt" --quiet $extra
			[ "$run_status" = 0 ] || { failed=1; diag "$run_err"; }
		done
		[ "$failed" = 0 ] && cmp -s "$model.$opt.1.ckpt" "$model.$opt.2.ckpt" &&
			cmp -s "$model.$opt.1.ckpt" "$model.$opt.3.ckpt"
		ok $? "$model, $opt: the checkpoints of 1, 2 and 3 threads are the same bytes"
	done
	opt=${optimizers%% *}
	failed=0
	for t in 1 2 3; do
		"./$model" eval --load "$model.$opt.1.ckpt" --data "$csv" --target y --mc 4 \
			--seed 3 --threads "$t" >"$model.eval.$t" 2>&1 || failed=1
		"./$model" predict --load "$model.$opt.1.ckpt" --data "$csv" --mc 4 --seed 3 \
			--threads "$t" >"$model.pred.$t" 2>&1 || failed=1
	done
	[ "$failed" = 0 ] || diag "$(cat "$model.eval.1" "$model.pred.1")"
	[ "$failed" = 0 ] && cmp -s "$model.eval.1" "$model.eval.2" &&
		cmp -s "$model.eval.1" "$model.eval.3"
	ok $? "$model: eval --mc 4 prints the same bytes on 1, 2 and 3 threads"
	[ "$failed" = 0 ] && cmp -s "$model.pred.1" "$model.pred.2" &&
		cmp -s "$model.pred.1" "$model.pred.3"
	ok $? "$model: and so does predict --mc 4"
done <plan.txt

# One version of the kernels, and GNU C mode, give the bytes of the
# default build (ISO C: AVX-512, AVX2 and baseline versions).  Where
# GCC builds no versions, or the CPU has no AVX2, the comparison would
# prove nothing: skipped.
if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
	skip 2 "this CPU has no AVX2: the kernels' wider versions never run here"
elif ! nm dense 2>/dev/null | grep -q 'relu_forward.*avx2'; then
	skip 2 "this compiler builds no versions of the kernels (GCC on x86-64 Linux does)"
else
	failed=0
	while read -r model csv optimizers; do
		opt=${optimizers%% *}
		extra=
		[ "$model" = cnnmf ] && extra="--set mc=2"
		for variant in one gnu; do
			flags=-DBNN_GEN_NO_CLONES
			[ "$variant" = gnu ] && flags=-std=gnu11
			# shellcheck disable=SC2086
			$CC $BNN_CFLAGS $flags -o "$model.$variant" "$model.c" $BNN_LIBS &&
				"./$model.$variant" train --data "$csv" --target y --optimizer "$opt" \
					--epochs 2 --batch 96 --seed 7 --threads 1 \
					--save "$model.$variant.ckpt" --quiet $extra &&
				cmp -s "$model.$opt.1.ckpt" "$model.$variant.ckpt" ||
				{ failed=1; diag "$model, $opt: the $variant build differs"; }
		done
	done <plan.txt
	ok "$failed" "every model's checkpoint is the same bytes with one version of the kernels, and in GNU C"
	nm seq 2>/dev/null | grep -q 'norm_input_delta.*avx512f' &&
		nm seq.gnu 2>/dev/null | grep -q 'norm_input_delta.*avx2' &&
		! nm seq.gnu 2>/dev/null | grep -q 'norm_input_delta.*avx512f' &&
		! nm seq.one 2>/dev/null | grep -q 'norm_input_delta.*avx2'
	ok $? "ISO C builds AVX-512 and AVX2 versions, GNU C AVX2 alone, -DBNN_GEN_NO_CLONES none"
fi

# The default is every core the process may use: its affinity mask.
if command -v taskset >/dev/null 2>&1; then
	run taskset -c 0 ./dense --help
	case $run_out in
	*"every core this process may use (1 here: its CPU affinity"*) ok 0 "--help counts one core under taskset -c 0" ;;
	*) ok 1 "--help counts one core under taskset -c 0" ;;
	esac
	run taskset -c 0 ./dense train --data vec.csv --target y --epochs 1 --batch 96 --seed 7 \
		--save affinity.ckpt --quiet
	is "$run_status" 0 "and trains there with the default threads"
	./dense train --data vec.csv --target y --epochs 1 --batch 96 --seed 7 --threads 2 \
		--save two.ckpt --quiet && cmp -s affinity.ckpt two.ckpt
	ok $? "to the bytes of a run on 2 threads"
else
	skip 3 "taskset (util-linux) is not installed"
fi

done_testing
