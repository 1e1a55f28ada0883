/*
 * standalone_probe.c: the program of t/standalone_cross.sh, built by
 * t/cross/run.sh for the host, the emulated Cortex-M4 board and big-endian
 * s390x, and linked with one `bnnc --standalone` file (with its exported
 * weights header) and a file of test images that the test writes
 * (SP_N examples in `const float sp_images[]`): nothing else, no libbnn, no
 * stdio (it prints through cross_print.h).  It runs the model's
 * posterior-mean pass (mc = 0) and its Monte-Carlo predictive (mc = SP_MC,
 * seed SP_SEED) with the uncertainty summaries over the SP_N images in one
 * call each, in a static workspace of exactly the header's
 * *_WORKSPACE_BYTES, and prints every output in "%a" notation (exact bits):
 *
 *   model NAME inputs 784 outputs 10 workspace 26744
 *   mean I: OUT_0 ... OUT_{F-1} | SUMMARY_0 SUMMARY_1 SUMMARY_2
 *   mc4 I: ...
 *
 * (F = *_OUT_FLOATS).  A non-zero return code is printed as
 * "error mean RC" (or "error mc4 RC") and is the exit status.
 *
 * Built with -DSA_MODEL=name -DSA_UP=NAME -DSA_HEADER='"name_infer.h"'
 * (as t/standalone_main.c) and -DSP_N, -DSP_MC, -DSP_SEED.
 */
#include "cross_print.h"

#include SA_HEADER

#define SP_CAT_(a, b) a##b
#define SP_CAT(a, b)  SP_CAT_(a, b)
#define SP_STR_(a)    #a
#define SP_STR(a)     SP_STR_(a)
#define SP_INPUTS     SP_CAT(SA_UP, _INPUTS)
#define SP_OUTPUTS    SP_CAT(SA_UP, _OUTPUTS)
#define SP_OUT_FLOATS SP_CAT(SA_UP, _OUT_FLOATS)
#define SP_SUMMARY    SP_CAT(SA_UP, _SUMMARY_FLOATS)
#define SP_WS_BYTES   SP_CAT(SA_UP, _WORKSPACE_BYTES)
#define SP_PREDICT    SP_CAT(SA_MODEL, _predict_summary)

/* The test images, written by the test from its data set. */
extern const float sp_images[SP_N * SP_INPUTS];

/* The workspace: exactly SP_WS_BYTES are passed (the array rounds up to
 * whole doubles, which also gives the alignment the API asks for). */
static double sp_ws[(SP_WS_BYTES + 7) / 8];
static float sp_out[SP_N * SP_OUT_FLOATS];
static float sp_summary[SP_N * SP_SUMMARY];

/* One line per example of the last prediction, each starting with tag. */
static void sp_print(const char *tag)
{
	long i, j;

	for (i = 0; i < SP_N; i++) {
		cross_put_str(tag);
		cross_put_str(" ");
		cross_put_int((int32_t)i);
		cross_put_str(":");
		for (j = 0; j < SP_OUT_FLOATS; j++) {
			cross_put_str(" ");
			cross_put_float(sp_out[i * SP_OUT_FLOATS + j]);
		}
		cross_put_str(" |");
		for (j = 0; j < SP_SUMMARY; j++) {
			cross_put_str(" ");
			cross_put_float(sp_summary[i * SP_SUMMARY + j]);
		}
		cross_put_str("\n");
	}
}

/* Predicts the images with mc samples (0: the mean pass) and prints the
 * results under tag; returns the API's code. */
static int sp_run(const char *tag, int mc)
{
	int rc = SP_PREDICT(sp_images, SP_N, mc, (uint64_t)SP_SEED, sp_ws, SP_WS_BYTES, sp_out,
	                    sp_summary);

	if (rc != 0) {
		cross_put_str("error ");
		cross_put_str(tag);
		cross_put_str(" ");
		cross_put_int(rc);
		cross_put_str("\n");
		return rc < 0 ? -rc : rc;
	}
	sp_print(tag);
	return 0;
}

int main(void)
{
	int rc;

	cross_put_str("model " SP_STR(SA_MODEL) " inputs ");
	cross_put_int((int32_t)SP_INPUTS);
	cross_put_str(" outputs ");
	cross_put_int((int32_t)SP_OUTPUTS);
	cross_put_str(" workspace ");
	cross_put_int((int32_t)SP_WS_BYTES);
	cross_put_str("\n");
	rc = sp_run("mean", 0);
	if (rc == 0)
		rc = sp_run("mc" SP_STR(SP_MC), SP_MC);
	return rc;
}
