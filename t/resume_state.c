/*
 * resume_state.c: TAP tests of the resume sections through the library
 * (t/models/rt_blobs.bnn; the end-to-end tests are t/resume.sh): a
 * checkpoint bnn_train writes carries them and loads with its progress; a
 * loaded state saves again to the same bytes; one run of 6 epochs equals 3
 * and bnn_train_io.resume to 6, bit for bit; a damaged resume section is
 * refused with the message naming the key; bnn_train refuses to resume a
 * state without progress or one of a data-parallel run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "bnn.h"
#include "rt_blobs.h"
#include "tap.h"

static bnn_dataset train_set;
static char whole[512], half[512], again[512], bad[512];

/* Trains a fresh rt_blobs with adam for `epochs` (valid_fraction 0.2),
 * saving to path; or resumes the state loaded from `from`. */
static int train_to(const char *path, long epochs, const char *from, bnn_err *err)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_state st;
	int rc;

	o.epochs = epochs;
	o.batch = 32;
	o.valid_fraction = 0.2;
	o.threads = 1;
	rc = from ? bnn_state_load(&st, &rt_blobs_model, from, err)
	          : bnn_state_init(&st, &rt_blobs_model, o.seed, err);
	if (!rc)
		rc = bnn_train(&st,
		               &(bnn_train_io){ .train = &train_set,
		                                .checkpoint = path,
		                                .resume = from != NULL },
		               &o, err);
	bnn_state_free(&st);
	return rc;
}

static int same_file(const char *a, const char *b)
{
	FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
	int c, d, same = f && g;

	while (same && ((c = getc(f)) != EOF) + ((d = getc(g)) != EOF))
		same = c == d;
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	return same;
}

/* A copy of checkpoint src at dst, its resume text replaced (NULL: the
 * section left out). */
static void rewrite(const char *src, const char *dst, const char *resume)
{
	static const char *const f32[] = { "params",        "opt.a",        "opt.b",
		                           "resume.params", "resume.opt.a", "resume.opt.b" };
	static const char *const text[] = { "meta", "options", "tensors" };
	bnn_ckpt *in = NULL, *out;
	bnn_err err;
	size_t i;

	if (bnn_ckpt_load(src, &in, &err))
		tap_bail_out("%s", err.message);
	out = bnn_ckpt_new(bnn_ckpt_fingerprint(in), bnn_ckpt_model_name(in));
	for (i = 0; i < sizeof f32 / sizeof f32[0]; i++) {
		long n = 0;
		const float *v = bnn_ckpt_find_f32(in, f32[i], &n);
		if (v)
			bnn_ckpt_add_f32(out, f32[i], v, n);
	}
	for (i = 0; i < sizeof text / sizeof text[0]; i++)
		if (bnn_ckpt_find_text(in, text[i]))
			bnn_ckpt_add_text(out, text[i], bnn_ckpt_find_text(in, text[i]));
	if (resume)
		bnn_ckpt_add_text(out, "resume", resume);
	if (bnn_ckpt_save(out, dst, &err))
		tap_bail_out("%s", err.message);
	bnn_ckpt_free(in);
	bnn_ckpt_free(out);
}

/* The resume text of path with the line of key replaced by `line`. */
static char *resume_with(const char *path, const char *key, const char *line)
{
	bnn_ckpt *ck = NULL;
	bnn_err err;
	const char *text, *p;
	char *out;
	size_t k = strlen(key);

	if (bnn_ckpt_load(path, &ck, &err) || !(text = bnn_ckpt_find_text(ck, "resume")))
		tap_bail_out("no resume section in %s", path);
	out = malloc(strlen(text) + strlen(line) + 2);
	out[0] = '\0';
	for (p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
		if (strncmp(p, key, k) == 0 && p[k] == '=')
			strcat(strcat(out, line), *line ? "\n" : "");
		else
			strncat(out, p, len);
		p += len;
	}
	bnn_ckpt_free(ck);
	return out;
}

static void load_refused(const char *resume, const char *want, const char *what)
{
	bnn_state st;
	bnn_err err;
	char expected[1024];

	rewrite(half, bad, resume);
	snprintf(expected, sizeof expected, "%s: %s", bad, want);
	is_int(bnn_state_load(&st, &rt_blobs_model, bad, &err), BNN_EFORMAT, "%s is refused", what);
	is_str(err.message, expected, "naming it");
}

int main(void)
{
	bnn_state st;
	bnn_err err;
	char *text;

	blobs_tmpdir_make("resume_state");
	blobs_make(&train_set, 240, 11);
	/* blobs_tmp_path keeps its last four results only */
	snprintf(whole, sizeof whole, "%s", blobs_tmp_path("whole.ckpt"));
	snprintf(half, sizeof half, "%s", blobs_tmp_path("half.ckpt"));
	snprintf(again, sizeof again, "%s", blobs_tmp_path("again.ckpt"));
	snprintf(bad, sizeof bad, "%s", blobs_tmp_path("bad.ckpt"));

	is_int(train_to(whole, 6, NULL, &err), BNN_OK, "6 epochs of adam in one go");
	is_int(train_to(half, 3, NULL, &err), BNN_OK, "and 3 epochs");
	is_int(bnn_state_load(&st, &rt_blobs_model, half, &err), BNN_OK, "whose checkpoint loads");
	ok(st.progress != NULL, "with its progress");
	is_int(bnn_train_progress_epoch(st.progress), 3, "3 epochs done");
	is_int(bnn_state_save(&st, again, &err), BNN_OK, "and saves again");
	ok(same_file(half, again), "to the same bytes");
	bnn_state_free(&st);
	is_int(train_to(again, 6, half, &err), BNN_OK, "resumed to 6 epochs");
	ok(same_file(whole, again), "it ends with the bytes of the run in one go");

	/* damaged resume sections */
	text = resume_with(half, "ranks", "");
	load_refused(text, "section 'resume': 'ranks' is missing", "a missing key");
	free(text);
	text = resume_with(half, "version", "version=2");
	load_refused(text, "section 'resume': version 2, and this library reads version 1",
	             "another version");
	free(text);
	text = resume_with(half, "rng.noise", "rng.noise=0 0 0 0");
	load_refused(text, "section 'resume': 'rng.noise' is not a generator state",
	             "a stream of zeros");
	free(text);
	text = resume_with(half, "step", "step=-1");
	load_refused(text, "section 'resume': 'step' is not a valid count", "a negative step");
	free(text);
	text = resume_with(half, "best_nll", "best_nll=nan");
	load_refused(text, "section 'resume': 'best_nll' is not a number", "a NaN best NLL");
	free(text);

	/* bnn_train refuses what it cannot resume */
	rewrite(half, bad, NULL);
	is_int(train_to(again, 6, bad, &err), BNN_EINVAL,
	       "resuming a state without progress is refused");
	is_str(err.message,
	       "the state has no training progress to resume (its checkpoint has no section "
	       "'resume')",
	       "saying so");
	text = resume_with(half, "ranks", "ranks=2");
	rewrite(half, bad, text);
	free(text);
	is_int(train_to(again, 6, bad, &err), BNN_EUNSUPPORTED,
	       "a data-parallel run's state is refused");
	is_str(err.message,
	       "the run to resume trained on 2 processes, and a run can be resumed only if it "
	       "trained on one",
	       "saying why");

	unlink(whole);
	unlink(half);
	unlink(again);
	unlink(bad);
	blobs_tmpdir_remove();
	bnn_dataset_free(&train_set);
	return tap_done();
}
