#!/bin/sh
# standalone_workspace.sh: the workspace `bnnc --standalone` lays out by
# liveness (gen/standalone.c, sa_plan), as MODEL_WORKSPACE_BYTES, for the
# example models docs/standalone.md's Memory table lists: the exact bytes,
# so a change of the planner shows here and in that table together (the
# outputs it gives are t/standalone.sh's), and issue 19's bound for LeNet
# on a microcontroller: at most 64 KB of RAM.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

W=$TAP_TMP

# model bytes (docs/standalone.md, "Memory")
cases='fashion_point 7320
fashion_bayes 7320
fashion_dropout 10456
fashion_mlp 25832
fashion_lenet 26744
fashion_lenet_bayes 36408
lenet5 36408
fashion_resnet 65944
fashion_resnet_bayes 102808
fashion_resnet_dropout 65944
fashion_resnet_emp 67264
fashion_resnet_ecmp 67264
tiny_resnet 163032
emp_patch 535392
whvi_flows 13016
multilabel 3272
whvi_diabetes 2104
toy_regression 2068
whvi_toy1d 2068
bandit 844
toy1d 420
toy1d_bayes 420'

plan $(($(printf '%s\n' "$cases" | wc -l) + 1))

# bytes MODEL: its MODEL_WORKSPACE_BYTES, or the error
bytes() {
	up=$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')
	"$BNNC" --standalone -o "$W/$1_infer.c" "$top_srcdir/examples/$1.bnn" 2>&1 &&
		sed -n "s/^#define ${up}_WORKSPACE_BYTES \([0-9]*\)UL$/\1/p" "$W/$1_infer.h"
}

printf '%s\n' "$cases" | {
	while read -r m want; do
		is "$(bytes "$m")" "$want" "$m: ${want} bytes of workspace"
	done
	got=$(bytes fashion_lenet_bayes)
	[ "$got" -le 65536 ] 2>/dev/null
	ok $? "the meanfield LeNet's workspace fits in 64 KB of RAM ($got bytes)"
	done_testing
}
