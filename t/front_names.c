/* front_names.c: the rules for names that reach generated C, the "did you
 * mean" search, and the consistency of the op/family/likelihood tables. */
#include <stdio.h>
#include <string.h>

#include "names.h"
#include "ops.h"
#include "tap.h"

/* Runs names_check on NAME with diagnostics into a scratch file; returns
 * the result and leaves the message in MSG. */
static int check(const char *name, char *msg, size_t size)
{
    struct diag d;
    FILE *f = tmpfile();
    bnn_loc loc = {0, 0, 0, 0};
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
    is_str(msg, "bnnc: error: node name '_x' is reserved in C (it starts with '_'); generated code cannot use it",
           "with this message");
    is_int(check("a__b", msg, sizeof msg), -1, "'__' is rejected");
    memset(long_name, 'a', 63);
    long_name[63] = '\0';
    is_int(check(long_name, msg, sizeof msg), 0, "63 characters pass");
    long_name[63] = 'b';
    long_name[64] = '\0';
    is_int(check(long_name, msg, sizeof msg), -1, "64 characters are too long");
    is_str(msg, "bnnc: error: node name 'aaaaaaaaaaaaaaaaaaaa...' is too long (64 characters; the limit is 63)",
           "with this message");
    ok(!names_is_keyword("dense") && names_is_keyword("while") && names_is_keyword("xor_eq"),
       "keyword table lookups");

    is_int(names_distance("dense", "dense", 3), 0, "distance to itself");
    is_int(names_distance("dense", "Dense", 3), 1, "one substitution");
    is_int(names_distance("conv2d", "conv", 3), 2, "two deletions");
    is_int(names_distance("relu", "sigmoid", 2), 3, "gives up past the limit");
    names_suggest_init(&s, "denes");
    names_suggest_offer(&s, "relu");
    names_suggest_offer(&s, "dense");
    names_suggest_offer(&s, "tanh");
    is_str(s.best, "dense", "suggests the closest name");
    names_suggest_init(&s, "xy");
    names_suggest_offer(&s, "ab");
    ok(s.best == NULL, "no suggestion for an unrelated short name");

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
    ok(!family_applies(FAMILY_DROPOUT, OP_BATCHNORM) && family_applies(FAMILY_EMP, OP_BATCHNORM),
       "dropout does not apply to batchnorm, emp does");

    {
        const struct op_info *conv = op_lookup("conv2d");
        args_signature(conv->spec, conv->nspec, msg, sizeof msg);
        is_str(msg, "(x, channels, kernel, stride = 1, pad = 0, bias = true)", "conv2d's signature");
    }
    return tap_done();
}
