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
# for the 784->512 layer's products against the measured FMA peak.
# docs/benchmarks.md explains the figures.
#
# Usage: sh bench/run.sh BENCH_BINARY TORCH_SCRIPT
# Environment: BENCH_ARGS (passed to both programs, e.g. "--repeats 11
# --min-time 0.5"); PYTHON [/usr/bin/python3]; BENCH_STRICT=1 makes a
# missed target an exit status of 1 (by default only a failed run is).
# OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set to 1 here; anything
# else in the environment (OPENBLAS_CORETYPE, say) reaches both programs.
# POSIX sh and awk only.

if [ $# -ne 2 ]; then
	echo "usage: sh $0 BENCH_BINARY TORCH_SCRIPT" >&2
	exit 2
fi
bench=$1
script=$2
PYTHON=${PYTHON:-/usr/bin/python3}

# One thread everywhere: OpenBLAS's pool is not governed by
# torch.set_num_threads() nor by bnn_set_threads() in every build.
OPENBLAS_NUM_THREADS=1
OMP_NUM_THREADS=1
export OPENBLAS_NUM_THREADS OMP_NUM_THREADS

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

# shellcheck disable=SC2086 # BENCH_ARGS is split on purpose
if ! run "$tmp/bnnc.json" "$bench" ${BENCH_ARGS-}; then
	echo "run.sh: $bench failed" >&2
	exit 1
fi

: >"$tmp/torch.json"
if "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	if ! run "$tmp/torch.json" "$PYTHON" "$script" ${BENCH_ARGS-}; then
		echo "run.sh: $script failed; no ratios to PyTorch" >&2
		: >"$tmp/torch.json"
	fi
else
	echo "# note: $PYTHON cannot import torch (Debian: python3-torch);" \
	     "skipping the PyTorch comparison"
fi

awk -v strict="${BENCH_STRICT:-0}" '
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
function verdict(met) {
	if (!met)
		missed++
	return met ? "met" : "MISSED"
}
/^\{/ {
	b = field($0, "bench")
	impl = field($0, "impl")
	key = field($0, "net") " " field($0, "batch")
	if (b == "adam_step") {
		ms[impl, key] = field($0, "ms_per_step")
		if (!(key in seen)) {
			seen[key] = 1
			order[++nkeys] = key
		}
	} else if (b == "fma_peak") {
		peak = field($0, "gflops")
	} else if (b == "gemm_784x512") {
		op = field($0, "op")
		gemm[op] = field($0, "gflops")
		frac[op] = field($0, "fraction_of_peak")
		ops[++nops] = op
	} else if (b == "sqgrad_overhead") {
		sq[key] = field($0, "ratio")
		sqorder[++nsq] = key
	}
}
END {
	target["784-512-512-10 32"] = 2.5
	target["784-512-512-10 128"] = 1.3
	target["13-50-50-1 32"] = 30
	printf "#\n# %-16s %5s %12s %12s %9s %8s\n", "network", "batch",
	       "bnnc ms", "pytorch ms", "speedup", "target"
	for (i = 1; i <= nkeys; i++) {
		key = order[i]
		split(key, kb, " ")
		if (!(("pytorch", key) in ms) || !(("bnnc", key) in ms)) {
			printf "# %-16s %5s %12s %12s\n", kb[1], kb[2],
			       ms["bnnc", key], "-"
			continue
		}
		r = ms["pytorch", key] / ms["bnnc", key]
		t = (key in target) ? target[key] : 0
		v = t ? verdict(r >= t) : ""
		printf "# %-16s %5s %12.4f %12.4f %8.2fx %7s %s\n", kb[1],
		       kb[2], ms["bnnc", key], ms["pytorch", key], r,
		       t ? ">=" t "x" : "", v
		line[i] = sprintf("{\"bench\":\"ratio\",\"net\":\"%s\"," \
		                  "\"batch\":%s,\"bnnc_over_pytorch\":%.3f", \
		                  kb[1], kb[2], r)
		if (t)
			line[i] = line[i] sprintf(",\"target\":%s,\"met\":%s", \
			                          t, r >= t ? "true" : "false")
		line[i] = line[i] "}"
	}
	if (nops) {
		printf "#\n# 784->512 layer, batch 128, against the FMA peak" \
		       " of %.1f GFLOP/s (target >= 80%%):\n", peak
		for (i = 1; i <= nops; i++) {
			op = ops[i]
			printf "#   %-8s %7.1f GFLOP/s %5.1f%% %s\n", op, gemm[op],
			       100 * frac[op], verdict(frac[op] >= 0.8)
			gline[i] = sprintf("{\"bench\":\"gemm_target\",\"op\":\"%s\"," \
			                   "\"fraction_of_peak\":%s,\"target\":0.8," \
			                   "\"met\":%s}", op, frac[op], \
			                   frac[op] >= 0.8 ? "true" : "false")
		}
	}
	if (nsq)
		printf "#\n# step with sqgrad / plain step (VOGN squared" \
		       " gradients):\n"
	for (i = 1; i <= nsq; i++)
		printf "#   %-16s batch %4s: %.3fx\n", \
		       substr(sqorder[i], 1, index(sqorder[i], " ") - 1), \
		       substr(sqorder[i], index(sqorder[i], " ") + 1), sq[sqorder[i]]
	print "#"
	for (i = 1; i <= nkeys; i++)
		if (i in line)
			print line[i]
	for (i = 1; i <= nops; i++)
		print gline[i]
	exit (strict == 1 && missed) ? 1 : 0
}' "$tmp/bnnc.json" "$tmp/torch.json"
