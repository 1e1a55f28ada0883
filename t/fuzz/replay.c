/* replay.c: the regression corpus of the fuzz targets, replayed by `make
 * check` with any compiler (no clang, no libFuzzer).
 *
 * For each surface of fuzz.h, every file of $top_srcdir/t/fuzz/corpus/
 * <surface>/ (a few seeds, and every input that ever crashed, leaked or
 * hung a target: docs/testing.md, "Fuzzing") is fed to the same entry
 * point the libFuzzer target calls, in a child process of its own, so that
 * a crash is one failed test and not a crashed harness.  One TAP test per
 * file, in name order: ok when the child returns normally; not ok when it
 * dies by a signal (a sanitizer's abort, a segfault), exits by itself (the
 * code under test must never exit), exits non-zero (LeakSanitizer in an
 * --enable-asan build) or runs over REPLAY_SECONDS.  The child's stderr is
 * captured and shown under a failure.
 *
 * `replay SURFACE PATH...` does the same for the files and directories
 * named (t/fuzz/coverage.sh measures the line coverage of the seed corpora
 * and of a campaign's corpus with it).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "scratch.h"
#include "tap.h"

/* Far above any input's time (milliseconds), even under sanitizers. */
#define REPLAY_SECONDS 60

/* The address space of a child (fuzz_check_enomem in oracles.h), except
 * under AddressSanitizer, whose shadow memory needs terabytes of it. */
#define REPLAY_MEMORY_LIMIT (2UL << 30)
#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_ASAN 1
#endif
#endif

/* A child that exits from inside the entry point exits with this. */
#define REPLAY_EXITED 97

struct replay_surface {
	const char *name; /* its directory under t/fuzz/corpus/ */
	int (*entry)(const uint8_t *data, size_t size);
};

/* bnn_dict: the inputs of the dictionary-driven target (same entry point) */
static const struct replay_surface replay_surfaces[] = {
	{ "bnn", fuzz_bnn }, { "bnn_dict", fuzz_bnn }, { "csv", fuzz_csv },
	{ "idx", fuzz_idx }, { "ckpt", fuzz_ckpt },    { "cli", fuzz_cli },
};

static int replay_returned; /* the child's entry point returned */

static void replay_check_exit(void)
{
	if (!replay_returned)
		_exit(REPLAY_EXITED);
}

/* Reads the file at PATH into *DATA (malloc'd); returns its size or -1. */
static long replay_read(const char *path, uint8_t **data)
{
	FILE *f = fopen(path, "rb");
	long n = -1;

	*data = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (*data = malloc(n > 0 ? (size_t)n : 1)) && fread(*data, 1, (size_t)n, f) != (size_t)n)
		n = -1;
	if (f)
		fclose(f);
	return *data ? n : -1;
}

/* The child: DATA to the entry point, stderr into ERR. */
static void replay_child(const struct replay_surface *s, const uint8_t *data, long n, FILE *err)
{
	dup2(fileno(err), 2);
#ifndef REPLAY_ASAN
	{
		struct rlimit lim = { REPLAY_MEMORY_LIMIT, REPLAY_MEMORY_LIMIT };
		setrlimit(RLIMIT_AS, &lim);
	}
#endif
	fuzz_scratch_dir(); /* standard output away from the TAP stream first */
	alarm(REPLAY_SECONDS);
	atexit(replay_check_exit);
	s->entry(data, (size_t)n);
	replay_returned = 1;
	exit(0);
}

/* Shows the first lines of what the child wrote to stderr. */
static void replay_show(FILE *err)
{
	char line[512];
	int lines = 0;

	rewind(err);
	while (lines++ < 40 && fgets(line, sizeof line, err))
		tap_diag("%s", line);
}

static void replay_file(const struct replay_surface *s, const char *dir, const char *name)
{
	char path[4096 + 256];
	uint8_t *data;
	long n;
	int status = 0;
	pid_t pid;
	FILE *err = tmpfile();

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((n = replay_read(path, &data)) < 0 || !err) {
		ok(0, "%s/%s: cannot read it", s->name, name);
		free(data);
		if (err)
			fclose(err);
		return;
	}
	fflush(NULL);
	if ((pid = fork()) == 0)
		replay_child(s, data, n, err);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		ok(0, "%s/%s: cannot run a child", s->name, name);
	else if (WIFSIGNALED(status))
		ok(0, "%s/%s: killed by signal %d%s", s->name, name, WTERMSIG(status),
		   WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	else if (WEXITSTATUS(status) == REPLAY_EXITED)
		ok(0, "%s/%s: the code under test called exit()", s->name, name);
	else
		ok(WEXITSTATUS(status) == 0, "%s/%s (%ld bytes)%s", s->name, name, n,
		   WEXITSTATUS(status) ? ": exit status not 0" : "");
	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
		replay_show(err);
	fclose(err);
	free(data);
}

static int replay_by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Replays every visible file of DIR, in name order; returns their count
 * (-1 if DIR cannot be read). */
static int replay_dir(const struct replay_surface *s, const char *dir)
{
	struct dirent **names;
	int i, n = scandir(dir, &names, replay_visible, replay_by_name);

	for (i = 0; i < n; i++) {
		replay_file(s, dir, names[i]->d_name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return n;
}

static void replay_surface(const struct replay_surface *s, const char *top)
{
	char dir[4096];

	snprintf(dir, sizeof dir, "%s/t/fuzz/corpus/%s", top, s->name);
	ok(replay_dir(s, dir) > 0, "corpus %s has inputs", s->name);
}

/* `replay SURFACE PATH...`: the files named, and every file of the
 * directories named, fed to SURFACE's entry point the same way (the seed
 * corpora outside t/fuzz/corpus/, and a fuzzing campaign's t/fuzz/work/
 * TARGET/, for t/fuzz/coverage.sh). */
static int replay_paths(const char *surface, char **paths, int count)
{
	const struct replay_surface *s = NULL;
	char dir[4096];
	struct stat sb;
	size_t i;
	int k;

	for (i = 0; i < sizeof replay_surfaces / sizeof replay_surfaces[0]; i++)
		if (strcmp(surface, replay_surfaces[i].name) == 0)
			s = &replay_surfaces[i];
	if (!s) {
		fprintf(stderr,
		        "replay: unknown surface '%s' (bnn, bnn_dict, csv, idx, ckpt, cli)\n",
		        surface);
		return 2;
	}
	for (k = 0; k < count; k++) {
		const char *slash = strrchr(paths[k], '/');

		if (stat(paths[k], &sb) == 0 && S_ISDIR(sb.st_mode)) {
			ok(replay_dir(s, paths[k]) >= 0, "%s: read", paths[k]);
		} else if (slash) {
			snprintf(dir, sizeof dir, "%.*s", (int)(slash - paths[k]), paths[k]);
			replay_file(s, dir, slash + 1);
		} else {
			replay_file(s, ".", paths[k]);
		}
	}
	return tap_done();
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	size_t i;

	if (argc > 2)
		return replay_paths(argv[1], argv + 2, argc - 2);
	if (!top)
		top = ".";
	for (i = 0; i < sizeof replay_surfaces / sizeof replay_surfaces[0]; i++)
		replay_surface(&replay_surfaces[i], top);
	return tap_done();
}
