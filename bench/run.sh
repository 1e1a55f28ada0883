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
# With BENCH_ROUNDS=N the two programs run N times, alternately, and every
# figure is the median over the rounds of the figure of each round (a
# ratio is taken within a round, then the median of the ratios).
# docs/benchmarks.md explains the figures.
#
# Usage: sh bench/run.sh BENCH_BINARY TORCH_SCRIPT
# Environment: BENCH_ARGS (passed to both programs, e.g. "--repeats 11
# --min-time 0.5"); BENCH_ROUNDS [1]; PYTHON [/usr/bin/python3];
# BENCH_STRICT=1 makes a missed target an exit status of 1 (by default
# only a failed run is).  OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set
# to 1 here; anything else in the environment (OPENBLAS_CORETYPE, say)
# reaches both programs.  POSIX sh and awk only.

if [ $# -ne 2 ]; then
	echo "usage: sh $0 BENCH_BINARY TORCH_SCRIPT" >&2
	exit 2
fi
bench=$1
script=$2
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

r=1
while [ "$r" -le "$rounds" ]; do
	[ "$rounds" -gt 1 ] && echo "# round $r of $rounds"
	# shellcheck disable=SC2086 # BENCH_ARGS is split on purpose
	if ! run "$tmp/bnnc.$r.json" "$bench" ${BENCH_ARGS-}; then
		echo "run.sh: $bench failed" >&2
		exit 1
	fi
	: >"$tmp/torch.$r.json"
	if [ "$torch" = 1 ]; then
		# shellcheck disable=SC2086
		if ! run "$tmp/torch.$r.json" "$PYTHON" "$script" ${BENCH_ARGS-}; then
			echo "run.sh: $script failed; no ratios to PyTorch" >&2
			: >"$tmp/torch.$r.json"
			torch=0
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
	if (b == "adam_step") {
		ms[impl SUBSEP key, round] = field($0, "ms_per_step")
		if (!(key in seen)) {
			seen[key] = 1
			order[++nkeys] = key
		}
	} else if (b == "fma_peak") {
		peak["512", round] = field($0, "gflops")
		if (field($0, "gflops_256bit") != "")
			peak["256", round] = field($0, "gflops_256bit")
	} else if (b == "gemm_784x512") {
		op = field($0, "op")
		gemm[op, round] = field($0, "gflops")
		frac[op, round] = field($0, "fraction_of_peak")
		if (!(op in seenop)) {
			seenop[op] = 1
			ops[++nops] = op
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
	for (i = 1; i <= nkeys; i++) {
		key = order[i]
		kb_ = "bnnc" SUBSEP key
		kp_ = "pytorch" SUBSEP key
		for (r = 1; r <= rounds; r++)
			if (((kb_, r) in ms) && ((kp_, r) in ms))
				ratio[key, r] = ms[kp_, r] / ms[kb_, r]
	}
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
		printf "#\n# 784->512 layer, batch 128, against the FMA peak" \
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
			printf "\n"
			gline[i] = sprintf("{\"bench\":\"gemm_target\",\"op\":\"%s\"," \
			                   "\"fraction_of_peak\":%.3f,\"target\":0.8," \
			                   "\"met\":%s}", op, f, \
			                   f >= 0.8 ? "true" : "false")
		}
	}
	if (nsq)
		printf "#\n# step with sqgrad / plain step (VOGN squared" \
		       " gradients):\n"
	for (i = 1; i <= nsq; i++) {
		split(sqorder[i], kb, " ")
		printf "#   %-16s batch %4s: %.3fx\n", kb[1], kb[2],
		       median(sq, sqorder[i])
	}
	print "#"
	for (i = 1; i <= nkeys; i++)
		if (i in line)
			print line[i]
	for (i = 1; i <= nops; i++)
		print gline[i]
	exit (strict == 1 && missed) ? 1 : 0
}' "$tmp"/bnnc.*.json "$tmp"/torch.*.json
