#!/bin/sh
# run.sh: the benchmark suite's driver (`make bench`).
#
# Runs the C benchmark (bench/bench.c) and, when /usr/bin/python3 (or
# $PYTHON) can import torch, the same training steps in PyTorch
# (bench/torch_mlp.py), both single-threaded; echoes their JSON lines, then
# prints a table (lines starting with '#') and one JSON line per ratio with
# its target:
#   {"bench":"ratio","net":..,"batch":..,"bnnc_over_pytorch":..,"target":..,"met":..}
# where bnnc_over_pytorch is PyTorch's ms/step over ours (how many times
# faster the generated code trains), and
#   {"bench":"gemm_target","op":..,"fraction_of_peak":..,"target":0.8,"met":..}
# for the 784->512 layer's products against the measured FMA peak (the
# "bnnc" lines of gemm_784x512, bnn_sgemm as the generated code runs it;
# the summary prints OpenBLAS's "openblas" lines beside them), and for
# the variational optimizers (issue 4: the trainer's step of each against
# Adam's on the same network and batch, and the Gaussian sampler)
#   {"bench":"vi_target","optimizer":..,"batch":..,"over_adam":..,"target":..,"met":..}
#   {"bench":"vi_ratio","optimizer":..,"batch":..,"bnnc_over_pytorch":..}
#   {"bench":"sample_target","ns_per_weight":..,"target":1,"met":..}
# and for the fast Walsh-Hadamard transform (issue 6: length 1024, batch 128)
#   {"bench":"fwht_target","us_per_vector":..,"target":0.4,"met":..}
# and for a WHVI layer's step against a mean-field one (issue 6: D -> D,
# batch 128; >= 10x at D = 1024, no slower from D = 128 up)
#   {"bench":"whvi_target","d":..,"speedup":..,"target":..,"met":..}
# and for the LeNet-5-style CNN (issue 5: bench's lenet group, the
# trainer's step with VOGN and IVON against Adam's, and Adam's step on a
# fixed batch against PyTorch's; the ratio line above has it as net "lenet")
#   {"bench":"lenet_target","optimizer":..,"batch":..,"over_adam":..,"target":..,"met":..}
#   {"bench":"lenet_target","optimizer":"adam","batch":..,"bnnc_over_pytorch":..,"target":1,"met":..}
# and for threads (issue 18: bench's threads group, the trainer's step on
# every core the process may use, at least 2, against one thread, wall
# clock; Adam's against PyTorch's step on as many threads, torch_mlp.py
# --threads T with OPENBLAS_NUM_THREADS=T)
#   {"bench":"threads_target","net":..,"batch":..,"optimizer":..,"threads":..,"speedup":..,"target":..,"met":..}
#   {"bench":"threads_vs_pytorch","net":..,"batch":..,"threads":..,"bnnc_over_pytorch":..,"target":..,"met":..}
# and for the GRU and the attention block (issue 23: bench's gru and
# transformer groups; their Adam steps against bench/torch_seq.py's
# nn.GRU and nn.TransformerEncoderLayer steps are "ratio" lines above,
# target 1.5)
#   {"bench":"sqgrad_target","net":..,"batch":..,"ratio":..,"target":1.6,"met":..}
# where ratio is the step with VOGN's squared gradients over the plain one,
# and for batch-1 inference (issue 19: bench's infer1 group, the
# 784-512-512-10 MLP's posterior-mean pass one example at a time: the
# standalone file (cc -std=c99 -O2) against libbnn's bnn_predict and
# PyTorch's no_grad forward, torch_mlp.py's infer1 line)
#   {"bench":"infer1_target","vs":"libbnn","standalone_over_libbnn":..,"target":1.5,"met":..}
#   {"bench":"infer1_target","vs":"pytorch","pytorch_over_standalone":..,"target":1,"met":..}
# With BENCH_ROUNDS=N the two programs run N times, alternately, and every
# figure is the median over the rounds of the figure of each round (a
# ratio is taken within a round, then the median of the ratios).
# docs/benchmarks.md explains the figures.
#
# Each GROUP_SCRIPT after TORCH_SCRIPT is PyTorch's side of one more of
# bench's groups (bench/torch_seq.py for the gru group): it reads the same
# BENCH_ARGS, prints nothing when --only leaves its group out, and its
# adam_step lines join the ratio table under their net, as torch_mlp.py's.
#
# Usage: sh bench/run.sh BENCH_BINARY TORCH_SCRIPT [GROUP_SCRIPT...]
# Environment: BENCH_ARGS (passed to both programs, e.g. "--repeats 11
# --min-time 0.5"); BENCH_ROUNDS [1]; PYTHON [/usr/bin/python3];
# BENCH_STRICT=1 makes a missed target an exit status of 1 (by default
# only a failed run is).  OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set
# to 1 here (but for the many-thread PyTorch run); anything else in the environment (OPENBLAS_CORETYPE, say)
# reaches both programs.  POSIX sh and awk only.

if [ $# -lt 2 ]; then
	echo "usage: sh $0 BENCH_BINARY TORCH_SCRIPT [GROUP_SCRIPT...]" >&2
	exit 2
fi
bench=$1
script=$2
shift 2
PYTHON=${PYTHON:-/usr/bin/python3}
rounds=${BENCH_ROUNDS:-1}
case $rounds in
''|*[!0-9]*|0)
	echo "run.sh: BENCH_ROUNDS must be a positive integer" >&2
	exit 2
	;;
esac

# One thread everywhere: OpenBLAS's pool is not governed by
# torch.set_num_threads() nor by bnn_set_threads() in every build.
OPENBLAS_NUM_THREADS=1
OMP_NUM_THREADS=1
export OPENBLAS_NUM_THREADS OMP_NUM_THREADS

# OPENBLAS_CORETYPE overrides OpenBLAS's own choice of kernels, for
# PyTorch's products and for ours under BNN_GEMM=openblas; a machine may
# set it without anyone noticing (the development machine sets Haswell).
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
	echo "# note: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE is set: OpenBLAS (PyTorch's" \
		"products) runs those kernels, not the ones it would pick;" \
		"env -u OPENBLAS_CORETYPE compares with its own choice"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bnn-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT TERM

# Run a program, echoing its output as it comes and keeping a copy;
# the exit status of the program (a pipe would lose it) goes to $tmp/rc.
run() {
	out=$1
	shift
	{ "$@"; echo $? >"$tmp/rc"; } | tee "$out"
	return "$(cat "$tmp/rc")"
}

torch=1
if ! "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
	echo "# note: $PYTHON cannot import torch (Debian: python3-torch);" \
	     "skipping the PyTorch comparison"
	torch=0
fi

# The threads of the many-thread figures: bench's threads group takes
# every core the process may use, at least 2.
mt=$(nproc 2>/dev/null || echo 2)
[ "$mt" -ge 2 ] 2>/dev/null || mt=2

r=1
while [ "$r" -le "$rounds" ]; do
	[ "$rounds" -gt 1 ] && echo "# round $r of $rounds"
	# shellcheck disable=SC2086 # BENCH_ARGS is split on purpose
	if ! run "$tmp/bnnc.$r.json" "$bench" ${BENCH_ARGS-}; then
		echo "run.sh: $bench failed" >&2
		exit 1
	fi
	: >"$tmp/torch.$r.json"
	: >"$tmp/torchmt.$r.json"
	if [ "$torch" = 1 ]; then
		# shellcheck disable=SC2086
		if ! run "$tmp/torch.$r.json" "$PYTHON" "$script" ${BENCH_ARGS-}; then
			echo "run.sh: $script failed; no ratios to PyTorch" >&2
			: >"$tmp/torch.$r.json"
			torch=0
		fi
	fi
	for g in "$@"; do
		[ "$torch" = 1 ] || break
		# shellcheck disable=SC2086
		run "$tmp/group.json" "$PYTHON" "$g" ${BENCH_ARGS-} &&
			cat "$tmp/group.json" >>"$tmp/torch.$r.json" ||
			echo "run.sh: $g failed; no ratio to PyTorch for its group" >&2
	done
	# PyTorch on as many threads as bench's threads group uses (every
	# core, at least 2), for the many-thread ratios; the wall clock,
	# as the threads group's.
	if [ "$torch" = 1 ] && grep -q '"bench":"threads"' "$tmp/bnnc.$r.json"; then
		# shellcheck disable=SC2086
		if ! OPENBLAS_NUM_THREADS=$mt OMP_NUM_THREADS=$mt run "$tmp/torchmt.$r.json" \
			"$PYTHON" "$script" ${BENCH_ARGS-} --threads "$mt" --clock wall --only step,lenet; then
			echo "run.sh: $script --threads $mt failed; no many-thread ratios" >&2
			: >"$tmp/torchmt.$r.json"
		fi
	fi
	r=$((r + 1))
done

awk -v strict="${BENCH_STRICT:-0}" -v rounds="$rounds" '
# The value of "key" in a flat one-line JSON object ("" if absent).
function field(line, key,    pat, i, s) {
	pat = "\"" key "\":"
	i = index(line, pat)
	if (!i)
		return ""
	s = substr(line, i + length(pat))
	if (substr(s, 1, 1) == "\"") {
		s = substr(s, 2)
		return substr(s, 1, index(s, "\"") - 1)
	}
	match(s, /^[^,}]*/)
	return substr(s, 1, RLENGTH)
}
# The median of the values v[name, 1 .. rounds] that exist ("" if none).
function median(v, name,    a, n, i, j, x) {
	n = 0
	for (i = 1; i <= rounds; i++)
		if ((name, i) in v)
			a[++n] = v[name, i] + 0
	if (!n)
		return ""
	for (i = 2; i <= n; i++) {
		x = a[i]
		for (j = i - 1; j >= 1 && a[j] > x; j--)
			a[j + 1] = a[j]
		a[j + 1] = x
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function verdict(met) {
	if (!met)
		missed++
	return met ? "met" : "MISSED"
}
FNR == 1 {
	round = FILENAME
	sub(/\.json$/, "", round)
	sub(/.*\./, "", round)
}
/^\{/ {
	b = field($0, "bench")
	impl = field($0, "impl")
	key = field($0, "net") " " field($0, "batch")
	if (b == "env" && impl == "bnnc")
		cpu = field($0, "cpu")
	if (b == "adam_step" && field($0, "threads") + 0 > 1) {
		mtms[key, round] = field($0, "ms_per_step")
	} else if (b == "threads") {
		tk = field($0, "net") SUBSEP field($0, "batch") SUBSEP field($0, "optimizer")
		th1[tk, round] = field($0, "ms_per_step_1")
		thn[tk, round] = field($0, "ms_per_step")
		thx[tk, round] = field($0, "speedup")
		tht[tk] = field($0, "target")
		nthreads = field($0, "threads")
		if (!(tk in seent)) {
			seent[tk] = 1
			torder[++nt] = tk
		}
	} else if (b == "adam_step") {
		ms[impl SUBSEP key, round] = field($0, "ms_per_step")
		if (!(key in seen)) {
			seen[key] = 1
			order[++nkeys] = key
		}
	} else if (b == "fma_peak") {
		peak["512", round] = field($0, "gflops")
		if (field($0, "gflops_256bit") != "")
			peak["256", round] = field($0, "gflops_256bit")
	} else if (b == "gemm_784x512" && field($0, "impl") == "openblas") {
		op = field($0, "op")
		obfrac[op, round] = field($0, "fraction_of_peak")
	} else if (b == "gemm_784x512") {
		op = field($0, "op")
		gemm[op, round] = field($0, "gflops")
		frac[op, round] = field($0, "fraction_of_peak")
		if (!(op in seenop)) {
			seenop[op] = 1
			ops[++nops] = op
		}
	} else if (b == "conv3x3") {
		op = field($0, "op")
		conv[op, round] = field($0, "gflops")
		cfrac[op, round] = field($0, "fraction_of_peak")
		if (!(op in seencop)) {
			seencop[op] = 1
			cops[++ncops] = op
		}
	} else if (b == "conv1d") {
		op = field($0, "op")
		conv1[op, round] = field($0, "gflops")
		c1frac[op, round] = field($0, "fraction_of_peak")
		if (!(op in seenc1op)) {
			seenc1op[op] = 1
			c1ops[++nc1ops] = op
		}
	} else if (b == "train_step") {
		vk = field($0, "optimizer") SUBSEP field($0, "batch")
		if (impl == "bnnc") {
			vms[vk, round] = field($0, "ms_per_step")
			vq[vk, round] = field($0, "over_adam")
			lo = field($0, "over_adam_min") + 0
			hi = field($0, "over_adam_max") + 0
			if (!(vk in vlo) || lo < vlo[vk])
				vlo[vk] = lo
			if (!(vk in vhi) || hi > vhi[vk])
				vhi[vk] = hi
			if (!(vk in seenv)) {
				seenv[vk] = 1
				vorder[++nv] = vk
			}
		} else {
			tms[vk, round] = field($0, "ms_per_step")
			tq[vk, round] = field($0, "over_adam")
		}
	} else if (b == "lenet_step") {
		lk = field($0, "optimizer") SUBSEP field($0, "batch")
		lms[lk, round] = field($0, "ms_per_step")
		lq[lk, round] = field($0, "over_adam")
		lex[lk, round] = field($0, "examples_per_s")
		if (!(lk in seenl)) {
			seenl[lk] = 1
			lorder[++nl] = lk
		}
	} else if (b == "posterior_sample") {
		samp["ns", round] = field($0, "ns_per_weight")
	} else if (b == "fwht") {
		fw["us", round] = field($0, "us_per_vector")
		fw["text", round] = field($0, "over_textbook")
		fw["gemm", round] = field($0, "gemm_over_fwht")
	} else if (b == "whvi_step") {
		wd = field($0, "d")
		wv["whvi", wd, round] = field($0, "whvi_ms")
		wv["mf", wd, round] = field($0, "meanfield_ms")
		wv["x", wd, round] = field($0, "speedup")
		wvt[wd] = field($0, "target")
		if (!(wd in seenwd)) {
			seenwd[wd] = 1
			wdorder[++nwd] = wd
		}
	} else if (b == "infer1") {
		inf[impl, round] = field($0, "ms_per_example")
		if (impl == "libbnn") {
			infq["q", round] = field($0, "standalone_over_libbnn")
			infd = field($0, "max_rel_diff")
		}
	} else if (b == "sqgrad_overhead") {
		sq[key, round] = field($0, "ratio")
		if (!(key in seensq)) {
			seensq[key] = 1
			sqorder[++nsq] = key
		}
	}
}
END {
	target["784-512-512-10 32"] = 2.5
	target["784-512-512-10 128"] = 1.3
	target["13-50-50-1 32"] = 30
	target["lenet 128"] = 1 # issue 5: the CNN with Adam at least as fast as PyTorch
	target["gru-50x32-128 32"] = 1.5 # issue 23: the GRU step
	target["transformer-64x128 32"] = 1.5 # issue 23: the attention block
	sqt["gru-50x32-128 32"] = 1.6 # issue 23: the step with squared gradients, GRU
	for (i = 1; i <= nkeys; i++) {
		key = order[i]
		kb_ = "bnnc" SUBSEP key
		kp_ = "pytorch" SUBSEP key
		for (r = 1; r <= rounds; r++)
			if (((kb_, r) in ms) && ((kp_, r) in ms))
				ratio[key, r] = ms[kp_, r] / ms[kb_, r]
	}
	if (cpu != "")
		printf "#\n# CPU: %s (every figure below was measured on it)\n", cpu
	printf "#\n# %-16s %5s %12s %12s %9s %8s\n", "network", "batch",
	       "bnnc ms", "pytorch ms", "speedup", "target"
	if (rounds > 1)
		printf "# (medians over %d rounds; the speedup is the median" \
		       " of the per-round ratios)\n", rounds
	for (i = 1; i <= nkeys; i++) {
		key = order[i]
		split(key, kb, " ")
		mb = median(ms, "bnnc" SUBSEP key)
		mp = median(ms, "pytorch" SUBSEP key)
		rr = median(ratio, key)
		if (rr == "") {
			printf "# %-16s %5s %12.4f %12s\n", kb[1], kb[2], mb, "-"
			continue
		}
		t = (key in target) ? target[key] : 0
		v = t ? verdict(rr >= t) : ""
		printf "# %-16s %5s %12.4f %12.4f %8.2fx %7s %s\n", kb[1],
		       kb[2], mb, mp, rr, t ? ">=" t "x" : "", v
		line[i] = sprintf("{\"bench\":\"ratio\",\"net\":\"%s\"," \
		                  "\"batch\":%s,\"bnnc_over_pytorch\":%.3f", \
		                  kb[1], kb[2], rr)
		if (t)
			line[i] = line[i] sprintf(",\"target\":%s,\"met\":%s", \
			                          t, rr >= t ? "true" : "false")
		if (rounds > 1)
			line[i] = line[i] sprintf(",\"rounds\":%d", rounds)
		line[i] = line[i] "}"
	}
	if (nops) {
		p512 = median(peak, "512")
		p256 = median(peak, "256")
		printf "#\n# 784->512 layer, batch 128 (bnn_sgemm, as the generated code" \
		       " runs it), against the FMA peak" \
		       " of %.1f GFLOP/s (target >= 80%%)", p512
		if (p256 != "")
			printf ";\n# the 256-bit FMA peak is %.1f GFLOP/s", p256
		printf ":\n"
		for (i = 1; i <= nops; i++) {
			op = ops[i]
			g = median(gemm, op)
			f = median(frac, op)
			printf "#   %-8s %7.1f GFLOP/s %5.1f%% %-6s", op, g,
			       100 * f, verdict(f >= 0.8)
			if (p256 != "")
				printf " (%.0f%% of the 256-bit peak)", 100 * g / p256
			if (median(obfrac, op) != "")
				printf "; OpenBLAS %5.1f%%", 100 * median(obfrac, op)
			printf "\n"
			gline[i] = sprintf("{\"bench\":\"gemm_target\",\"op\":\"%s\"," \
			                   "\"fraction_of_peak\":%.3f,\"target\":0.8," \
			                   "\"met\":%s}", op, f, \
			                   f >= 0.8 ? "true" : "false")
		}
	}
	if (ncops)
		printf "#\n# 3x3 convolution, 32 -> 32 channels, 28x28, batch 128" \
		       " (generated code: shifted views + GEMM), target >= 60%% of peak:\n"
	for (i = 1; i <= ncops; i++) {
		op = cops[i]
		f = median(cfrac, op)
		printf "#   %-10s %7.1f GFLOP/s %5.1f%%", op, median(conv, op), 100 * f
		if (op != "dW_sqgrad")
			printf " %s", verdict(f >= 0.6)
		printf "\n"
		if (op != "dW_sqgrad")
			cline[i] = sprintf("{\"bench\":\"conv_target\",\"op\":\"%s\"," \
			                   "\"fraction_of_peak\":%.3f,\"target\":0.6," \
			                   "\"met\":%s}", op, f, f >= 0.6 ? "true" : "false")
	}
	if (nc1ops)
		printf "#\n# conv1d, 64 -> 64 channels, length 256, kernel 5, batch 64" \
		       " (issue 23), target >= 60%% of peak:\n"
	for (i = 1; i <= nc1ops; i++) {
		op = c1ops[i]
		f = median(c1frac, op)
		printf "#   %-10s %7.1f GFLOP/s %5.1f%%", op, median(conv1, op), 100 * f
		if (op != "dW_sqgrad")
			printf " %s", verdict(f >= 0.6)
		printf "\n"
		if (op != "dW_sqgrad")
			c1line[i] = sprintf("{\"bench\":\"conv1d_target\",\"op\":\"%s\"," \
			                    "\"fraction_of_peak\":%.3f,\"target\":0.6," \
			                    "\"met\":%s}", op, f, f >= 0.6 ? "true" : "false")
	}
	if (nsq)
		printf "#\n# step with sqgrad / plain step (VOGN squared" \
		       " gradients):\n"
	for (i = 1; i <= nsq; i++) {
		split(sqorder[i], kb, " ")
		q = median(sq, sqorder[i])
		printf "#   %-16s batch %4s: %.3fx", kb[1], kb[2], q
		if (sqorder[i] in sqt) {
			printf " (target <= %sx) %s", sqt[sqorder[i]], verdict(q <= sqt[sqorder[i]])
			sqline[i] = sprintf("{\"bench\":\"sqgrad_target\",\"net\":\"%s\"," \
			                    "\"batch\":%s,\"ratio\":%.3f,\"target\":%s,\"met\":%s}", \
			                    kb[1], kb[2], q, sqt[sqorder[i]], \
			                    q <= sqt[sqorder[i]] ? "true" : "false")
		}
		printf "\n"
	}
	# issue 4: the variational optimizers against Adam, and PyTorch
	vt["ivon" SUBSEP 128] = 1.15
	vt["ivon" SUBSEP 32] = 1.35
	vt["vogn" SUBSEP 128] = 1.45
	vt["vogn" SUBSEP 32] = 1.7
	vt["bbb" SUBSEP 128] = 1.6
		if (nv) {
		printf "#\n# variational optimizers, 784-512-512-10, one MC sample:" \
		       " the trainer'"'"'s step / Adam'"'"'s\n"
		printf "# %-9s %5s %9s %7s %11s %7s %-6s %10s %7s %8s\n",
		       "optimizer", "batch", "bnnc ms", "/adam", "[range]",
		       "target", "", "pytorch ms", "/adam", "speedup"
	}
	for (i = 1; i <= nv; i++) {
		vk = vorder[i]
		split(vk, kb, SUBSEP)
		for (r = 1; r <= rounds; r++)
			if (((vk, r) in vms) && ((vk, r) in tms))
				vsp[vk, r] = tms[vk, r] / vms[vk, r]
		q = median(vq, vk)
		t = (vk in vt) ? vt[vk] : 0
		v = t ? verdict(q <= t) : ""
		printf "# %-9s %5s %9.3f %7.3f [%4.2f-%4.2f] %7s %-6s", kb[1],
		       kb[2], median(vms, vk), q, vlo[vk], vhi[vk],
		       t ? "<=" t : "", v
		sp = median(vsp, vk)
		if (sp != "")
			printf " %10.3f %7.3f %7.2fx", median(tms, vk), median(tq, vk), sp
		printf "\n"
		if (t)
			vline[i] = sprintf("{\"bench\":\"vi_target\"," \
			                   "\"optimizer\":\"%s\",\"batch\":%s," \
			                   "\"over_adam\":%.3f,\"target\":%s," \
			                   "\"met\":%s}", kb[1], kb[2], q, t, \
			                   q <= t ? "true" : "false")
		if (sp != "")
			vrline[i] = sprintf("{\"bench\":\"vi_ratio\"," \
			                    "\"optimizer\":\"%s\",\"batch\":%s," \
			                    "\"bnnc_over_pytorch\":%.3f}", kb[1], \
			                    kb[2], sp)
	}
	ns = median(samp, "ns")
	if (ns != "") {
		printf "#\n# Gaussian sampling (bnn_posterior_sample, 669,706" \
		       " weights): %.3f ns per weight (target <= 1) %s\n", ns,
		       verdict(ns <= 1)
		sline = sprintf("{\"bench\":\"sample_target\"," \
		                "\"ns_per_weight\":%.3f,\"target\":1," \
		                "\"met\":%s}", ns, ns <= 1 ? "true" : "false")
	}
	# issue 6: the fast Walsh-Hadamard transform
	fu = median(fw, "us")
	if (fu != "") {
		printf "#\n# fast Walsh-Hadamard transform (bnn_fwht_batch, n = 1024," \
		       " batch 128): %.3f us per vector (target <= 0.4) %s;" \
		       " %.1fx a textbook loop, %.0fx the dense product\n", fu,
		       verdict(fu <= 0.4), median(fw, "text"), median(fw, "gemm")
		fline = sprintf("{\"bench\":\"fwht_target\"," \
		                "\"us_per_vector\":%.4f,\"target\":0.4," \
		                "\"met\":%s}", fu, fu <= 0.4 ? "true" : "false")
	}
	# issue 6: a WHVI layer step against a mean-field one
	if (nwd)
		printf "#\n# WHVI layer step (D -> D, batch 128, g sampled per example," \
		       " forward and backward)\n# against the mean-field step" \
		       " (local reparameterisation):\n#   %5s %10s %13s %8s %7s\n",
		       "D", "whvi ms", "meanfield ms", "speedup", "target"
	for (i = 1; i <= nwd; i++) {
		wd = wdorder[i]
		x = median(wv, "x" SUBSEP wd)
		t = wvt[wd] + 0
		printf "#   %5s %10.4f %13.4f %7.2fx %6s %s\n", wd,
		       median(wv, "whvi" SUBSEP wd), median(wv, "mf" SUBSEP wd), x,
		       ">=" t "x", verdict(x >= t)
		wline[i] = sprintf("{\"bench\":\"whvi_target\",\"d\":%s," \
		                   "\"speedup\":%.3f,\"target\":%s,\"met\":%s}", \
		                   wd, x, t, x >= t ? "true" : "false")
	}
	# issue 5: the LeNet-5-style CNN, the step of the trainer against Adam
	lt["vogn"] = 1.6
	lt["ivon"] = 1.2
	if (nl)
		printf "#\n# LeNet-5-style CNN (examples/fashion_lenet*.bnn), one MC" \
		       " sample: the trainer'"'"'s step / Adam'"'"'s\n# %-9s %5s %9s %10s %7s %8s\n",
		       "optimizer", "batch", "ms", "examples/s", "/adam", "target"
	for (i = 1; i <= nl; i++) {
		lk = lorder[i]
		split(lk, kb, SUBSEP)
		q = median(lq, lk)
		t = (kb[1] in lt) ? lt[kb[1]] : 0
		printf "# %-9s %5s %9.3f %10.0f %7.3f %8s %s\n", kb[1], kb[2],
		       median(lms, lk), median(lex, lk), q, t ? "<=" t : "",
		       t ? verdict(q <= t) : ""
		if (t)
			lline[i] = sprintf("{\"bench\":\"lenet_target\"," \
			                   "\"optimizer\":\"%s\",\"batch\":%s," \
			                   "\"over_adam\":%.3f,\"target\":%s," \
			                   "\"met\":%s}", kb[1], kb[2], q, t, \
			                   q <= t ? "true" : "false")
	}
	for (i = 1; i <= nkeys; i++) {
		split(order[i], kb, " ")
		if (kb[1] != "lenet")
			continue
		rr = median(ratio, order[i])
		if (rr == "") {
			printf "#\n# CNN Adam throughput vs PyTorch: no PyTorch figure\n"
			continue
		}
		printf "#\n# CNN Adam throughput vs PyTorch (LeNet, batch %s," \
		       " fixed batch): %.2fx (%.0f against %.0f examples/s;" \
		       " target >= 1.0) %s\n", kb[2], rr,
		       kb[2] * 1000 / median(ms, "bnnc" SUBSEP order[i]),
		       kb[2] * 1000 / median(ms, "pytorch" SUBSEP order[i]), verdict(rr >= 1)
		ltline = sprintf("{\"bench\":\"lenet_target\",\"optimizer\":" \
		                 "\"adam\",\"batch\":%s,\"bnnc_over_pytorch\":%.3f," \
		                 "\"target\":1,\"met\":%s}", kb[2], rr, \
		                 rr >= 1 ? "true" : "false")
	}
	# issue 18: the epoch of the trainer on every core against one thread, and
	# against PyTorch on as many threads (the step of Adam)
	mtt["784-512-512-10" SUBSEP 128] = 3
	mtt["lenet" SUBSEP 128] = 2
	if (nt)
		printf "#\n# threads: the trainer'"'"'s step on %s threads against one" \
		       " (wall clock)\n# %-16s %5s %-9s %9s %9s %8s %7s\n", nthreads,
		       "network", "batch", "optimizer", "1 thr ms", "n thr ms", "speedup",
		       "target"
	for (i = 1; i <= nt; i++) {
		tk = torder[i]
		split(tk, kb, SUBSEP)
		x = median(thx, tk)
		t = tht[tk] + 0
		printf "# %-16s %5s %-9s %9.3f %9.3f %7.2fx %7s %s\n", kb[1], kb[2], kb[3],
		       median(th1, tk), median(thn, tk), x, ">=" t "x", verdict(x >= t)
		tline[i] = sprintf("{\"bench\":\"threads_target\",\"net\":\"%s\"," \
		                   "\"batch\":%s,\"optimizer\":\"%s\",\"threads\":%s," \
		                   "\"speedup\":%.3f,\"target\":%s,\"met\":%s}", kb[1], \
		                   kb[2], kb[3], nthreads, x, t, x >= t ? "true" : "false")
		mk = kb[1] SUBSEP kb[2]
		if (kb[3] != "adam" || !(mk in mtt))
			continue
		for (r = 1; r <= rounds; r++)
			if (((kb[1] " " kb[2], r) in mtms) && ((tk, r) in thn))
				mtr[mk, r] = mtms[kb[1] " " kb[2], r] / thn[tk, r]
		rr = median(mtr, mk)
		if (rr == "") {
			printf "#   (no PyTorch figure on %s threads)\n", nthreads
			continue
		}
		printf "#   against PyTorch on %s threads: %.3f ms, %.2fx (target >= %sx) %s\n",
		       nthreads, median(mtms, kb[1] " " kb[2]), rr, mtt[mk],
		       verdict(rr >= mtt[mk])
		tpline[i] = sprintf("{\"bench\":\"threads_vs_pytorch\",\"net\":\"%s\"," \
		                    "\"batch\":%s,\"threads\":%s,\"bnnc_over_pytorch\":%.3f," \
		                    "\"target\":%s,\"met\":%s}", kb[1], kb[2], nthreads, rr, \
		                    mtt[mk], rr >= mtt[mk] ? "true" : "false")
	}
	# issue 19: batch-1 inference, standalone against libbnn and PyTorch
	for (r = 1; r <= rounds; r++)
		if ((("pytorch", r) in inf) && (("standalone", r) in inf))
			infp["p", r] = inf["pytorch", r] / inf["standalone", r]
	iq = median(infq, "q")
	ip = median(infp, "p")
	if (iq != "") {
		printf "#\n# batch-1 posterior-mean inference, 784-512-512-10, one core" \
		       " (ms per example):\n"
		printf "#   standalone (cc -std=c99 -O2) %9.4f\n", median(inf, "standalone")
		printf "#   libbnn bnn_predict, batch 1  %9.4f  standalone/libbnn %.3f" \
		       " (target <= 1.5) %s; outputs within %.2g\n", median(inf, "libbnn"), iq,
		       verdict(iq <= 1.5), infd
		iline = sprintf("{\"bench\":\"infer1_target\",\"vs\":\"libbnn\"," \
		                "\"standalone_over_libbnn\":%.3f,\"target\":1.5,\"met\":%s}", \
		                iq, iq <= 1.5 ? "true" : "false")
	}
	if (ip != "") {
		printf "#   PyTorch no_grad, batch 1     %9.4f  pytorch/standalone %.2fx" \
		       " (target > 1) %s\n", median(inf, "pytorch"), ip, verdict(ip > 1)
		ipline = sprintf("{\"bench\":\"infer1_target\",\"vs\":\"pytorch\"," \
		                 "\"pytorch_over_standalone\":%.3f,\"target\":1,\"met\":%s}", \
		                 ip, ip > 1 ? "true" : "false")
	}
	print "#"
	for (i = 1; i <= nt; i++) {
		print tline[i]
		if (i in tpline)
			print tpline[i]
	}
	for (i = 1; i <= nkeys; i++)
		if (i in line)
			print line[i]
	for (i = 1; i <= nops; i++)
		print gline[i]
	for (i = 1; i <= nsq; i++)
		if (i in sqline)
			print sqline[i]
	for (i = 1; i <= ncops; i++)
		if (i in cline)
			print cline[i]
	for (i = 1; i <= nc1ops; i++)
		if (i in c1line)
			print c1line[i]
	for (i = 1; i <= nv; i++) {
		if (i in vline)
			print vline[i]
		if (i in vrline)
			print vrline[i]
	}
	if (sline != "")
		print sline
	if (fline != "")
		print fline
	for (i = 1; i <= nwd; i++)
		print wline[i]
	for (i = 1; i <= nl; i++)
		if (i in lline)
			print lline[i]
	if (ltline != "")
		print ltline
	if (iline != "")
		print iline
	if (ipline != "")
		print ipline
	exit (strict == 1 && missed) ? 1 : 0
}' "$tmp"/bnnc.*.json "$tmp"/torch.*.json "$tmp"/torchmt.*.json
