# standalone_lib.sh: what the standalone target's tests share (sourced by
# t/standalone.sh, t/standalone_storage.sh and t/standalone_analytic.sh
# after t/tap.sh): a check that shows a failed build's log, the synthetic
# data the example models train on, and the comparison of the standalone
# file's mean pass with the driver's predict.
#
# shellcheck shell=sh disable=SC2154  # tap.sh defines ok and diag

# ok_or_show STATUS DESC FILE: ok, with FILE's first lines when it failed.
ok_or_show() {
	ok "$1" "$2"
	[ "$1" = 0 ] || diag "$(head -n 5 "$3")"
}

# rows_csv INPUTS OUTPUTS LIKELIHOOD [ROWS [LOW [IDS]]]: ROWS (16) rows of
# inputs in [LOW, 1) (LOW 0), or integer ids in [0, IDS) when IDS is given,
# and targets the likelihood accepts (counts for poisson and negbinomial),
# with a header.
rows_csv() {
	awk -v n="$1" -v k="$2" -v lik="$3" -v rows="${4:-16}" -v lo="${5:-0}" -v ids="${6:-0}" 'BEGIN {
		srand(19); t = lik == "categorical" ? 1 : k
		for (j = 0; j < n; j++) printf "%sf%d", (j ? "," : ""), j
		for (j = 0; j < t; j++) printf ",t%d", j
		print ""
		for (i = 0; i < rows; i++) {
			for (j = 0; j < n; j++)
				if (ids) printf "%s%d", (j ? "," : ""), int(ids * rand())
				else printf "%s%.4f", (j ? "," : ""), lo + (1 - lo) * rand()
			for (j = 0; j < t; j++)
				if (lik == "categorical") printf ",%d", i % k
				else if (lik == "bernoulli") printf ",%d", (i + j) % 2
				else if (lik == "poisson" || lik == "negbinomial") printf ",%d", int(4 * rand())
				else printf ",%.4f", 2 * rand() - 1
			print ""
		}
	}'
}

# close_to WANT GOT COLUMNS: every one of the first COLUMNS values of each
# row of GOT (the standalone program's output) within 1e-5 of WANT's
# (predict's CSV, header first), relatively to the largest of the row's
# values (an output near 0 that is a difference of large terms differs
# with the order of the sums by more than 1e-5 of itself); prints the
# first difference.  predict's aleatoric_j and epistemic_j columns, which
# the standalone program does not print, are left out of WANT.
close_to() {
	awk -F, -v cols="$3" 'NR == FNR && FNR == 1 {
		for (j = 1; j <= NF; j++) if ($j !~ /^(aleatoric|epistemic)_/) keep[++nkeep] = j
		next }
	NR == FNR { want[FNR - 1] = $0; next }
	{
		n0 = split(want[FNR], w0, ",")
		n = 0
		for (j = 1; j <= nkeep && keep[j] <= n0; j++) w[++n] = w0[keep[j]]
		if (n < cols) { printf "row %d: %d values in predict\n", FNR, n; bad = 1; exit }
		m = 0
		for (j = 1; j <= cols; j++) {
			a = w[j] + 0; a = a < 0 ? -a : a; m = a > m ? a : m
		}
		for (j = 1; j <= cols; j++) {
			a = w[j] + 0; b = $j + 0; d = a - b; d = d < 0 ? -d : d
			if (d > 1e-5 * m) {
				printf "row %d column %d: predict %s, standalone %s\n", FNR, j, w[j], $j
				bad = 1; exit
			}
		}
		rows++
	}
	END { if (!bad && rows != length(want)) { printf "%d rows of %d\n", rows, length(want); bad = 1 }
	      exit bad }' "$1" "$2"
}
