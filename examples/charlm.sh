#!/bin/sh
# charlm.sh: a tiny transformer on characters, run by `make charlm` as
#   sh examples/charlm.sh examples/out
# after the Makefile has built OUT/charlm and OUT/charlm_bayes
# (examples/charlm.bnn and examples/charlm_bayes.bnn compiled by
# `bnnc --main`; docs/examples.md).
#
# The data: the text of the GNU General Public License version 3, which
# every Debian system has in /usr/share/common-licenses/GPL-3 (package
# base-files; CHARLM_TEXT names another text).  Its characters are
# numbered in byte order (0 for the newline, ...), at most 76 distinct
# ones, the vocabulary of the models.  Example i is the 32 characters
# before position i and, as its label, the character at i.  The first 90%
# of the text gives the training examples, the rest the test examples
# (only windows wholly inside it: no test character was seen in training).
# OUT/charlm_train.csv and OUT/charlm_test.csv have a header t0,...,t31,next.
#
# Then, with settings chosen once and not tuned on the test set:
#   - charlm (point weights) trained with Adam, lr 1e-3, 10 epochs of
#     minibatches of 64, seed 1;
#   - charlm_bayes (mean-field) trained with IVON at its defaults (which
#     clip the gradient's norm to 2: without it IVON diverged on this
#     model within the first epoch, docs/optimizers/ivon.md), 10 epochs of
#     minibatches of 64, seed 1, evaluated with 32 posterior samples;
# each evaluated on the test characters (eval's JSON line: accuracy, NLL
# in nats per character, ECE, Brier).  Last, for scale, the NLL on the
# test characters of two counting baselines fitted on the training text:
# the unigram and the bigram frequencies with add-one smoothing, as one
# JSON line.
set -u
me=charlm.sh
here=$(dirname "$0")
. "$here/common.sh"
one_outdir "$@"
out=$1
text=${CHARLM_TEXT:-/usr/share/common-licenses/GPL-3}
need_built charlm "$out/charlm" "$out/charlm_bayes"
[ -r "$text" ] || die "cannot read $text (Debian: it is in base-files; CHARLM_TEXT names another text)"

# the examples: LC_ALL=C so that a character is a byte
LC_ALL=C awk -v T=32 -v V=76 -v train="$out/charlm_train.csv" -v test="$out/charlm_test.csv" '
{ text = text $0 "\n" }
END {
	n = length(text)
	for (i = 1; i <= n; i++)
		seen[substr(text, i, 1)] = 1
	m = 0
	for (c in seen)
		chars[++m] = c
	for (i = 2; i <= m; i++) { # byte order, by insertion
		x = chars[i]
		for (j = i - 1; j >= 1 && chars[j] > x; j--)
			chars[j + 1] = chars[j]
		chars[j + 1] = x
	}
	if (m > V) {
		printf "charlm.sh: the text has %d distinct characters, more than the models'"'"' %d\n", m, V > "/dev/stderr"
		exit 1
	}
	for (i = 1; i <= m; i++)
		id[chars[i]] = i - 1
	cut = int(n * 0.9)
	hdr = ""
	for (t = 0; t < T; t++)
		hdr = hdr "t" t ","
	print hdr "next" > train
	print hdr "next" > test
	for (i = T + 1; i <= n; i++) {
		line = ""
		for (t = i - T; t < i; t++)
			line = line id[substr(text, t, 1)] ","
		line = line id[substr(text, i, 1)]
		if (i <= cut)
			print line > train
		else if (i - T > cut)
			print line > test
	}
}' "$text" || die "could not write the examples"

"$out/charlm" train --optimizer adam --lr 1e-3 --epochs 10 --batch 64 --seed 1 \
	--data "$out/charlm_train.csv" --save "$out/charlm_adam.ckpt" --quiet ||
	die "charlm failed to train"
"$out/charlm" eval --load "$out/charlm_adam.ckpt" --data "$out/charlm_test.csv" ||
	die "charlm failed to evaluate"
"$out/charlm_bayes" train --optimizer ivon --epochs 10 --batch 64 --seed 1 \
	--data "$out/charlm_train.csv" --save "$out/charlm_ivon.ckpt" --quiet ||
	die "charlm_bayes failed to train"
"$out/charlm_bayes" eval --load "$out/charlm_ivon.ckpt" --data "$out/charlm_test.csv" \
	--mc 32 --seed 1 || die "charlm_bayes failed to evaluate"

# the counting baselines: unigram and bigram (previous character) with
# add-one smoothing over the 76 classes, from the training rows
awk -F, -v V=76 '
NR == FNR {
	if (FNR > 1) { uni[$NF]++; big[$(NF - 1), $NF]++; ctx[$(NF - 1)]++; n++ }
	next
}
FNR > 1 {
	m++
	lu -= log((uni[$NF] + 1) / (n + V))
	lb -= log((big[$(NF - 1), $NF] + 1) / (ctx[$(NF - 1)] + V))
}
END {
	printf "{\"baseline\": \"counts\", \"examples\": %d, \"unigram_nll\": %.4f, \"bigram_nll\": %.4f}\n", m, lu / m, lb / m
}' "$out/charlm_train.csv" "$out/charlm_test.csv" || die "could not compute the baselines"
