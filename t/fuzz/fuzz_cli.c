/* fuzz_cli.c: the driver of a generated program (bnn_cli_main) under the
 * fuzzer, with the descriptor of t/models/rt_blobs.bnn.
 *
 * The bytes are the command line after the program name, arguments
 * separated by NUL bytes (at most 32).  The driver runs in the scratch
 * directory (the process changes into it on the first input), which holds
 * a small training set d.csv (columns a,b,c,d,label; 8 rows) and a
 * checkpoint m.ckpt of the model (both rewritten for each input), so that "train --data d.csv", "eval
 * --load m.ckpt ..." and the rest do real work; whatever else a command
 * writes there is removed after each input.
 *
 * Two limits keep every input short and inside that directory, and the
 * inputs beyond them are skipped (return at once): an argument containing
 * '/' (no path can leave the directory), and an argument containing a run
 * of 3 or more digits or a digit followed by e, E, x, X, p or P (so every
 * number is below 100 and not in exponent or hex form: at most 99 epochs
 * of 8 rows, 99 Monte-Carlo samples, 99 threads).  Results go to the
 * discarded standard output; messages to stderr, which is silenced when
 * BNN_FUZZ_QUIET is set (t/fuzz/run.sh sets it for this target and replays
 * a crash without it to show the report).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bnn.h"
#include "fuzz.h"
#include "rt_blobs.h"
#include "scratch.h"

#define CLI_MAX_ARGS 32

static const char cli_data[] = "a,b,c,d,label\n"
                               "0.5,1,-1,2,0\n"
                               "1.5,-2,0.25,0,1\n"
                               "-0.5,3,1,-1,2\n"
                               "2,0,0,1,0\n"
                               "0,-1,2,0.5,1\n"
                               "1,1,1,1,2\n"
                               "-1,0.5,-2,3,0\n"
                               "3,-3,0,0,1\n";

static const char *const cli_fixtures[] = { "d.csv", "m.ckpt", NULL };

static uint8_t *cli_ckpt; /* the bytes of m.ckpt */
static long cli_ckpt_size;

/* Saves a checkpoint of the model's initial state, keeping its bytes. */
static void cli_make_checkpoint(void)
{
	bnn_state st;
	bnn_err err;
	FILE *f;

	if (bnn_state_init(&st, &rt_blobs_model, 1, &err) != BNN_OK ||
	    bnn_state_save(&st, "m.ckpt", &err) != BNN_OK) {
		fprintf(stderr, "fuzz: %s\n", err.message);
		abort();
	}
	bnn_state_free(&st);
	if (!(f = fopen("m.ckpt", "rb")) || fseek(f, 0, SEEK_END) != 0 ||
	    (cli_ckpt_size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(cli_ckpt = malloc((size_t)cli_ckpt_size)) ||
	    fread(cli_ckpt, 1, (size_t)cli_ckpt_size, f) != (size_t)cli_ckpt_size)
		abort();
	fclose(f);
}

/* The directory and its two files, written afresh for every input: a
 * command may have overwritten them (--save m.ckpt, --out d.csv), and each
 * input must run as it would alone. */
static void cli_setup(void)
{
	static int done;

	if (!done) {
		done = 1;
		if (chdir(fuzz_scratch_dir()) != 0)
			abort();
		cli_make_checkpoint();
	}
	fuzz_scratch_write(1, "d.csv", cli_data, sizeof cli_data - 1);
	fuzz_scratch_write(1, "m.ckpt", cli_ckpt, (size_t)cli_ckpt_size);
}

/* Whether argument A stays within the limits above. */
static int cli_arg_allowed(const char *a)
{
	int digits = 0;

	for (; *a; a++) {
		if (*a == '/')
			return 0;
		if (*a >= '0' && *a <= '9') {
			if (++digits >= 3 || (a[1] && strchr("eExXpP", a[1])))
				return 0;
		} else {
			digits = 0;
		}
	}
	return 1;
}

/* Splits the bytes at NUL into ARGV[1..] (ARGV[0] the program's name), in
 * BUF (size + 1 bytes).  Returns argc, or 0 when the input is skipped. */
static int cli_args(const uint8_t *data, size_t size, char *buf, char **argv)
{
	int argc = 1;
	size_t i, start = 0;

	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "rt_blobs";
	for (i = 0; i <= size; i++) {
		if (buf[i] != '\0')
			continue;
		if (i == size && start == size)
			break; /* no bytes, or a trailing NUL: no empty last argument */
		if (argc == CLI_MAX_ARGS || !cli_arg_allowed(buf + start))
			return 0;
		argv[argc++] = buf + start;
		start = i + 1;
	}
	argv[argc] = NULL;
	return argc;
}

int fuzz_cli(const uint8_t *data, size_t size)
{
	char *buf, *argv[CLI_MAX_ARGS + 1];
	int argc, saved = -1, quiet = getenv("BNN_FUZZ_QUIET") != NULL;

	cli_setup();
	if (!(buf = malloc(size + 1)))
		abort();
	if ((argc = cli_args(data, size, buf, argv)) > 0) {
		if (quiet && (saved = dup(2)) >= 0) {
			int devnull = open("/dev/null", O_WRONLY);
			dup2(devnull, 2);
			close(devnull);
		}
		bnn_cli_main(&rt_blobs_model, argc, argv);
		if (saved >= 0) {
			fflush(stderr);
			dup2(saved, 2);
			close(saved);
		}
	}
	free(buf);
	fuzz_stdout_discard();
	fuzz_scratch_clean(cli_fixtures);
	return 0;
}
