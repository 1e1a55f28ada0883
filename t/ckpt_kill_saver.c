/*
 * ckpt_kill_saver.c: the process t/ckpt_kill.sh kills.  It saves known
 * checkpoints through bnn_ckpt_save(), the library's only way of writing
 * one, so that a SIGKILL at a random moment lands inside a save:
 *
 *   ckpt_kill_saver flip PATH A B READY   load the checkpoints A and B,
 *       create the file READY, then save A, B, A, B, ... to PATH until
 *       killed (a save that fails ends it with status 1 and the message);
 *   ckpt_kill_saver save PATH SRC         load SRC and save it to PATH once.
 *
 * Loading first means that the loop does nothing but save; a killed save
 * must leave PATH byte for byte A or B, which the test checks.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bnn.h"

static int saver_fail(const bnn_err *err)
{
	fprintf(stderr, "ckpt_kill_saver: %s\n", err->message);
	return 1;
}

/* Creates the empty file path: the signal that saving has begun. */
static int saver_signal_ready(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	return close(fd) != 0;
}

static int saver_flip(const char *path, const char *a_path, const char *b_path, const char *ready)
{
	bnn_ckpt *a = NULL, *b = NULL;
	bnn_err err;
	int rc = 1;

	if (bnn_ckpt_load(a_path, &a, &err) || bnn_ckpt_load(b_path, &b, &err)) {
		rc = saver_fail(&err);
		goto done;
	}
	if (saver_signal_ready(ready))
		goto done;
	for (;;) {
		if (bnn_ckpt_save(a, path, &err) || bnn_ckpt_save(b, path, &err)) {
			rc = saver_fail(&err);
			break;
		}
	}
done:
	bnn_ckpt_free(a);
	bnn_ckpt_free(b);
	return rc;
}

static int saver_save(const char *path, const char *src)
{
	bnn_ckpt *ck = NULL;
	bnn_err err;
	int rc = 0;

	if (bnn_ckpt_load(src, &ck, &err) || bnn_ckpt_save(ck, path, &err))
		rc = saver_fail(&err);
	bnn_ckpt_free(ck);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "flip") == 0)
		return saver_flip(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 4 && strcmp(argv[1], "save") == 0)
		return saver_save(argv[2], argv[3]);
	fprintf(stderr, "usage: ckpt_kill_saver flip PATH A B READY | save PATH SRC\n");
	return 2;
}
