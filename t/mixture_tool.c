/*
 * mixture_tool.c: the checkpoints t/mixture.sh and t/merge.sh need that no
 * command writes, through the public API only.  Compiled by those scripts
 * with a generated model, whose descriptor TOOL_MODEL names
 * (-DTOOL_MODEL=mg_line_model).
 *
 *   mixture_tool net OUT OPTIMIZER V1 V2 ... [--sigma S1 S2 ...]
 *       one network with the given parameters (and posterior σ): the
 *       hand-chosen inputs of the merge test;
 *   mixture_tool copy IN OUT
 *       bnn_mixture_load then bnn_mixture_save: the round trip;
 *   mixture_tool broken OUT KIND
 *       a mixture of 2 networks whose second member is wrong: KIND "size"
 *       (member.2.params one value short), "missing" (the mixture says 3
 *       members and has 2), "sigma" (member.2.sigma negative).
 * Exit status 0, or 1 with the library's message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

extern const bnn_model TOOL_MODEL;

static int fail(const bnn_err *err)
{
	fprintf(stderr, "mixture_tool: %s\n", err->message);
	return 1;
}

/* net OUT OPTIMIZER V... [--sigma S...] */
static int tool_net(int argc, char **argv)
{
	const bnn_model *m = &TOOL_MODEL;
	bnn_state st;
	bnn_err err;
	long j = 0;
	int i = 4, rc;

	if (bnn_state_init(&st, m, 1, &err))
		return fail(&err);
	st.optimizer = bnn_optimizer_from_name(argv[3]);
	for (; i < argc && strcmp(argv[i], "--sigma") != 0 && j < m->nparams; i++)
		st.params[j++] = strtof(argv[i], NULL);
	if (i < argc && strcmp(argv[i], "--sigma") == 0) {
		if (!(st.sigma = calloc((size_t)m->nparams, sizeof *st.sigma)))
			return 1;
		for (i++, j = 0; i < argc && j < m->nparams; i++)
			st.sigma[j++] = strtof(argv[i], NULL);
	}
	rc = bnn_state_save(&st, argv[2], &err) ? fail(&err) : 0;
	bnn_state_free(&st);
	return rc;
}

static int tool_copy(const char *in, const char *out)
{
	bnn_mixture mix;
	bnn_err err;
	int rc;

	if (bnn_mixture_load(&mix, &TOOL_MODEL, in, &err))
		return fail(&err);
	rc = bnn_mixture_save(&mix, out, &err) ? fail(&err) : 0;
	bnn_mixture_free(&mix);
	return rc;
}

static int tool_broken(const char *out, const char *kind)
{
	const bnn_model *m = &TOOL_MODEL;
	bnn_ckpt *ck = bnn_ckpt_new(m->fingerprint, m->name);
	float *v = calloc((size_t)m->nparams, sizeof *v), *neg;
	bnn_err err;
	int rc = 0;

	neg = calloc((size_t)m->nparams, sizeof *neg);
	if (!ck || !v || !neg)
		return 1;
	neg[0] = -1;
	rc |= bnn_ckpt_add_f32(ck, "params", v, m->nparams);
	rc |= bnn_ckpt_add_text(ck, "meta", "optimizer=ivon\nstep=0\nepoch=0\n");
	rc |= bnn_ckpt_add_text(ck, "mixture",
	                        strcmp(kind, "missing") == 0 ? "version=1\nmembers=3\n"
	                                                     : "version=1\nmembers=2\n");
	rc |= bnn_ckpt_add_f32(ck, "member.2.params", v,
	                       strcmp(kind, "size") == 0 ? m->nparams - 1 : m->nparams);
	if (strcmp(kind, "sigma") == 0)
		rc |= bnn_ckpt_add_f32(ck, "member.2.sigma", neg, m->nparams);
	rc |= bnn_ckpt_add_text(ck, "member.2.meta", "optimizer=ivon\nstep=0\nepoch=0\n");
	if (!rc && bnn_ckpt_save(ck, out, &err))
		rc = fail(&err);
	bnn_ckpt_free(ck);
	free(v);
	free(neg);
	return rc != 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "net") == 0)
		return tool_net(argc, argv);
	if (argc == 4 && strcmp(argv[1], "copy") == 0)
		return tool_copy(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "broken") == 0)
		return tool_broken(argv[2], argv[3]);
	fprintf(stderr, "usage: mixture_tool net OUT OPTIMIZER V... [--sigma S...] | copy IN OUT "
	                "| broken OUT size|missing|sigma\n");
	return 2;
}
