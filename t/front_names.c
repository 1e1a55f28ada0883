/* front_names.c: the rules for names that reach generated C, the "did you
 * mean" search (the shared one of common/edit_distance.h: its distance,
 * its limit and the case-insensitive variant the CSV reader uses), and the
 * consistency of the op/family/likelihood tables. */
#include <stdio.h>
#include <string.h>

#include "common/edit_distance.h"
#include "names.h"
#include "ops.h"
#include "tap.h"

/* Runs names_check on NAME with diagnostics into a scratch file; returns
 * the result and leaves the message in MSG. */
static int check(const char *name, char *msg, size_t size)
{
	struct diag d;
	FILE *f = tmpfile();
	bnn_loc loc = { 0, 0, 0, 0 };
	int r;
	size_t n;
	diag_init(&d, NULL, f);
	r = names_check(&d, name, loc, "node");
	rewind(f);
	n = fread(msg, 1, size - 1, f);
	msg[n] = '\0';
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	fclose(f);
	return r;
}

int main(void)
{
	char msg[512], long_name[80];
	struct names_suggestion s;
	int i;

	is_int(check("h1", msg, sizeof msg), 0, "an ordinary name passes");
	is_str(msg, "", "and prints nothing");
	is_int(check("int", msg, sizeof msg), -1, "a C keyword is rejected");
	is_str(msg, "bnnc: error: node name 'int' is a C or C++ keyword", "with this message");
	is_int(check("class", msg, sizeof msg), -1, "a C++ keyword is rejected");
	is_int(check("_Bool", msg, sizeof msg), -1, "a C11 keyword is rejected");
	is_int(check("_x", msg, sizeof msg), -1, "a leading underscore is rejected");
	is_str(msg,
	       "bnnc: error: node name '_x' is reserved in C (it starts with '_'); generated code cannot use it",
	       "with this message");
	is_int(check("a__b", msg, sizeof msg), -1, "'__' is rejected");
	memset(long_name, 'a', 63);
	long_name[63] = '\0';
	is_int(check(long_name, msg, sizeof msg), 0, "63 characters pass");
	long_name[63] = 'b';
	long_name[64] = '\0';
	is_int(check(long_name, msg, sizeof msg), -1, "64 characters are too long");
	is_str(msg,
	       "bnnc: error: node name 'aaaaaaaaaaaaaaaaaaaa...' is too long (64 characters; the limit is 63)",
	       "with this message");
	ok(!names_is_keyword("dense") && names_is_keyword("while") && names_is_keyword("xor_eq"),
	   "keyword table lookups");

	{
		/* a, b, limit, flags: the distance */
		static const struct {
			const char *a, *b;
			int limit, flags, want;
			const char *what;
		} dist[] = {
			{ "dense", "dense", 3, BNN_TEXT_EXACT_CASE, 0, "distance to itself" },
			{ "dense", "Dense", 3, BNN_TEXT_EXACT_CASE, 1, "one substitution" },
			{ "conv2d", "conv", 3, BNN_TEXT_EXACT_CASE, 2, "two deletions" },
			{ "relu", "sigmoid", 2, BNN_TEXT_EXACT_CASE, 3, "gives up past the limit" },
			{ "denes", "dense", 3, BNN_TEXT_EXACT_CASE, 1,
			  "a transposition is one edit" },
			{ "dense", "Dense", 3, BNN_TEXT_IGNORE_CASE, 0,
			  "ASCII case ignored on request" },
			{ "pirce", "Price", 3, BNN_TEXT_IGNORE_CASE, 1,
			  "a transposition across cases" },
			{ "abc", "abcdef", 2, BNN_TEXT_EXACT_CASE, 3, "lengths too far apart" },
			{ "x", "y", -1, BNN_TEXT_EXACT_CASE, 0,
			  "a negative limit gives up at once" },
		};
		for (i = 0; i < (int)(sizeof dist / sizeof dist[0]); i++)
			is_int(bnn_text_distance(dist[i].a, dist[i].b, dist[i].limit,
			                         dist[i].flags),
			       dist[i].want, "%s", dist[i].what);
	}
	is_int(bnn_text_suggest_limit("xy"), 0, "no edits for a name under 3 characters");
	is_int(bnn_text_suggest_limit("lrr"), 1, "one edit under 6 characters");
	is_int(bnn_text_suggest_limit("meanfeild"), 2, "two edits from 6 characters on");
	names_suggest_init(&s, "denes");
	names_suggest_offer(&s, "relu");
	names_suggest_offer(&s, "dense");
	names_suggest_offer(&s, "tanh");
	is_str(s.best, "dense", "suggests the closest name");
	names_suggest_init(&s, "xy");
	names_suggest_offer(&s, "ab");
	ok(s.best == NULL, "no suggestion for an unrelated short name");
	{
		struct bnn_text_suggestion t;
		bnn_text_suggest_init(&t, "--lod", BNN_TEXT_EXACT_CASE);
		bnn_text_suggest_offer(&t, "--ood");
		bnn_text_suggest_offer(&t, "--load");
		bnn_text_suggest_offer(&t, "--loud");
		is_str(t.best, "--load",
		       "of equally close names, the one sharing the longest prefix");
		is_int(t.distance, 1, "at its distance");
		bnn_text_suggest_init(&t, "LBL", BNN_TEXT_IGNORE_CASE);
		bnn_text_suggest_offer(&t, "abl");
		bnn_text_suggest_offer(&t, "lbx");
		bnn_text_suggest_offer(&t, "lby");
		is_str(t.best, "lbx",
		       "the prefix compared without case, and the first of equal ones");
	}

	for (i = 0; i < OP_COUNT; i++) {
		const struct op_info *op = op_get((enum op_id)i);
		ok(i == OP_INPUT ? op_lookup(op->name) == NULL : op_lookup(op->name) == op,
		   "op '%s' is found by name", op->name);
	}
	for (i = 0; i < FAMILY_COUNT; i++)
		ok(family_lookup(family_name((enum family_id)i)) == family_get((enum family_id)i),
		   "family '%s' is found by name", family_name((enum family_id)i));
	for (i = 0; i < LIKELIHOOD_COUNT; i++)
		ok(likelihood_lookup(likelihood_name((enum likelihood_id)i)) ==
		           likelihood_get((enum likelihood_id)i),
		   "likelihood '%s' is found by name", likelihood_name((enum likelihood_id)i));
	ok(family_applies(FAMILY_WHVI, OP_DENSE) && !family_applies(FAMILY_WHVI, OP_CONV2D),
	   "whvi applies to dense only");
	ok(!family_applies(FAMILY_DROPOUT, OP_BATCHNORM) &&
	           family_applies(FAMILY_EMP, OP_BATCHNORM),
	   "dropout does not apply to batchnorm, emp does");

	{
		const struct op_info *conv = op_lookup("conv2d");
		args_signature(conv->spec, conv->nspec, msg, sizeof msg);
		is_str(msg, "(x, channels, kernel, stride = 1, pad = 0, bias = true)",
		       "conv2d's signature");
	}
	return tap_done();
}
