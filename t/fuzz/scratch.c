/* scratch.c: the scratch directory of the fuzzing entry points and the guard
 * on standard output (scratch.h).
 *
 * One directory per process, so parallel fuzzers (-jobs=N) and the replay
 * test's children never share files.  It is removed at normal exit; a crash
 * leaves it in $TMPDIR as bnn-fuzz.XXXXXX, with the input that crashed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"

#define SCRATCH_SLOTS 4

static char scratch_dir[4096];
static char scratch_paths[SCRATCH_SLOTS][4096 + 256];

static void scratch_die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz: %s %s: %s\n", what, path, strerror(errno));
	abort();
}

/* Removes the entries of DIR except KEEP's (and "stdout" when KEEP_STDOUT), descending one level (the
 * driver's --plots DIR is the only subdirectory anything makes). */
static void scratch_clean_dir(const char *dir, const char *const *keep, int keep_stdout, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[sizeof scratch_paths[0]];
	int i, kept;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat sb;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		kept = keep_stdout && strcmp(e->d_name, "stdout") == 0;
		for (i = 0; keep && keep[i]; i++)
			kept |= strcmp(e->d_name, keep[i]) == 0;
		if (kept)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && depth > 0) {
			scratch_clean_dir(path, NULL, 0, depth - 1);
			rmdir(path);
		} else {
			unlink(path);
		}
	}
	closedir(d);
}

static void scratch_remove(void)
{
	fflush(stdout);
	scratch_clean_dir(scratch_dir, NULL, 0, 2);
	rmdir(scratch_dir);
}

const char *fuzz_scratch_dir(void)
{
	const char *tmp;

	if (scratch_dir[0])
		return scratch_dir;
	tmp = getenv("TMPDIR");
	snprintf(scratch_dir, sizeof scratch_dir, "%s/bnn-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch_dir))
		scratch_die("cannot make", scratch_dir);
	/* standard output into the directory: checked or discarded per input */
	if (!freopen(fuzz_scratch_path(0, "stdout"), "w", stdout))
		scratch_die("cannot redirect standard output to", scratch_paths[0]);
	atexit(scratch_remove);
	return scratch_dir;
}

const char *fuzz_scratch_path(int slot, const char *name)
{
	snprintf(scratch_paths[slot], sizeof scratch_paths[slot], "%s/%s", fuzz_scratch_dir(),
	         name);
	return scratch_paths[slot];
}

const char *fuzz_scratch_write(int slot, const char *name, const void *data, size_t size)
{
	const char *path = fuzz_scratch_path(slot, name);
	FILE *f = fopen(path, "wb");

	if (!f || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		scratch_die("cannot write", path);
	return path;
}

void fuzz_stdout_check(const char *surface)
{
	struct stat sb;

	fuzz_scratch_dir(); /* standard output redirected */
	fflush(stdout);
	if (fstat(fileno(stdout), &sb) == 0 && sb.st_size > 0) {
		fprintf(stderr, "fuzz: the %s code wrote %lld bytes to standard output\n", surface,
		        (long long)sb.st_size);
		abort();
	}
}

void fuzz_stdout_discard(void)
{
	fuzz_scratch_dir();
	fflush(stdout);
	if (ftruncate(fileno(stdout), 0) != 0 || fseek(stdout, 0, SEEK_SET) != 0)
		scratch_die("cannot empty", fuzz_scratch_path(0, "stdout"));
}

void fuzz_scratch_clean(const char *const *keep)
{
	scratch_clean_dir(fuzz_scratch_dir(), keep, 1, 1);
}
