#!/bin/sh
# dict.sh: writes the libFuzzer dictionary of the .bnn language
# (t/fuzz/bnn.dict, made by `make fuzz`) to standard output, from the
# tables that define the language, so that it never falls behind them:
#   the keywords and punctuation of the scanner (dsl/lexer.l),
#   the ops, posterior families and likelihoods (dsl/ops.def,
#   dsl/families.def, dsl/likelihoods.def),
#   every parameter name of their argument tables and of the prior
#   (the { "name", ARG_... } rows of dsl/*.c),
# plus the fragments that join them ("~", " = ", "[", "block ... return").
# Usage: sh dict.sh SRCDIR
set -eu
src=${1:-.}
# one entry per line: name="text" (libFuzzer's dictionary syntax)
entry() {
	printf '%s="%s"\n' "$1" "$2"
}
sed -n 's/^"\([a-z]*\)"[[:space:]]*{ return lex_token.*/\1/p' "$src/dsl/lexer.l" |
	while read -r w; do entry "kw_$w" "$w"; done
for def in ops families likelihoods; do
	sed -n 's/^[A-Z]*([A-Z_0-9]*,[[:space:]]*"\([a-z_0-9]*\)".*/\1/p' "$src/dsl/$def.def" |
		while read -r w; do entry "${def}_$w" "$w"; done
done
cat "$src"/dsl/*.c | sed -n 's/.*{ "\([a-z_]*\)", ARG_[A-Z_]*,.*/\1/p' | sort -u |
	while read -r w; do entry "arg_$w" "$w"; done
# the scanner's single-character tokens: ( ) ; and [,=~\[\]{}-]
for c in '(' ')' ';' ',' '=' '~' '[' ']' '{' '}' '-'; do
	entry "punct" "$c"
done
entry "assign" " = "
entry "tilde" " ~ "
entry "comment" "# "
entry "newline" "\\x0a"
entry "real" "1e-4"
entry "input_stmt" "input x[4];"
entry "model_stmt" "model m;"
entry "call" "(x, 8)"
entry "like_end" "y ~ categorical(h);"
