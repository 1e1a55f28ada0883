/*
 * faultshim.c: a test-only LD_PRELOAD library that makes one kind of file
 * call fail, so that t/ckpt_faults.sh can check what a program does when
 * the disk reports an error at each step of an atomic replacement
 * (runtime/base/file_replace.c).  The environment chooses the fault:
 *
 *   BNN_FAULT_CALL   write   write(2) and fwrite(3)
 *                    flush   fflush(3)
 *                    fsync   fsync(2)
 *                    rename  rename(2) (matched on its source path)
 *                    close   close(2) and fclose(3) (the file is closed
 *                            all the same, as an NFS close that reports a
 *                            failed write-back does)
 *   BNN_FAULT_ERRNO  the errno to fail with, by name (EIO, ENOSPC, EDQUOT,
 *                    EROFS, EFBIG, EACCES) or number; EIO by default
 *   BNN_FAULT_PATH   a fnmatch(3) pattern (no FNM_PATHNAME) that the file's
 *                    path must match; a descriptor's path is read from
 *                    /proc/self/fd, so this needs Linux's /proc
 *   BNN_FAULT_SKIP   how many matching calls succeed before the first
 *                    failure (0 by default); every later one fails
 *   BNN_FAULT_LOG    a file to which each injected failure appends a line
 *                    "CALL PATH", so that a test can tell that it happened
 *
 * Without BNN_FAULT_CALL every call goes straight through.  The calls are
 * forwarded with dlsym(RTLD_NEXT), so the shim also chains behind a
 * sanitizer's own interceptors.  It is compiled without sanitizers, as a
 * plain shared object (Makefile.am).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The calls a fault can be injected into. */
enum shim_call {
	SHIM_WRITE,
	SHIM_FLUSH,
	SHIM_FSYNC,
	SHIM_RENAME,
	SHIM_CLOSE,
	SHIM_NONE
};

static const char *const shim_call_names[] = { "write", "flush", "fsync", "rename", "close" };

static const struct {
	const char *name;
	int value;
} shim_errnos[] = { { "EIO", EIO },     { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
	            { "EROFS", EROFS }, { "EFBIG", EFBIG },   { "EACCES", EACCES } };

static long shim_matches; /* matching calls seen so far */

static enum shim_call shim_chosen_call(void)
{
	const char *s = getenv("BNN_FAULT_CALL");
	size_t i;

	for (i = 0; s && i < sizeof shim_call_names / sizeof *shim_call_names; i++)
		if (strcmp(s, shim_call_names[i]) == 0)
			return (enum shim_call)i;
	return SHIM_NONE;
}

static int shim_chosen_errno(void)
{
	const char *s = getenv("BNN_FAULT_ERRNO");
	size_t i;

	if (!s || !*s)
		return EIO;
	for (i = 0; i < sizeof shim_errnos / sizeof *shim_errnos; i++)
		if (strcmp(s, shim_errnos[i].name) == 0)
			return shim_errnos[i].value;
	return atoi(s) > 0 ? atoi(s) : EIO;
}

/* Appends "CALL PATH" to $BNN_FAULT_LOG, if set. */
static void shim_log(enum shim_call call, const char *path)
{
	const char *log = getenv("BNN_FAULT_LOG");
	int fd;

	if (!log || !*log)
		return;
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	dprintf(fd, "%s %s\n", shim_call_names[call], path);
	close(fd); /* this library's close: the log does not match, or is failed harmlessly */
}

/* Whether this call, on the file at path, is to fail; sets errno if so. */
static int shim_fails(enum shim_call call, const char *path)
{
	const char *pattern = getenv("BNN_FAULT_PATH");
	const char *skip = getenv("BNN_FAULT_SKIP");

	if (call != shim_chosen_call() || !path)
		return 0;
	if (pattern && fnmatch(pattern, path, 0) != 0)
		return 0;
	if (shim_matches++ < (skip ? atol(skip) : 0))
		return 0;
	shim_log(call, path);
	errno = shim_chosen_errno();
	return 1;
}

/* The path of an open descriptor, or NULL (then nothing fails). */
static const char *shim_fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	if (fd < 0)
		return NULL;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static int shim_fd_fails(enum shim_call call, int fd)
{
	char buf[4096];

	if (call != shim_chosen_call())
		return 0; /* the common case: no readlink */
	return shim_fails(call, shim_fd_path(fd, buf, sizeof buf));
}

/* The next definition of name after this library's (libc's, or a
 * sanitizer's interceptor). */
static void *shim_next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "faultshim: no next definition of %s\n", name);
		abort();
	}
	return f;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*next)(int, const void *, size_t);

	if (shim_fd_fails(SHIM_WRITE, fd))
		return -1;
	if (!next)
		next = (ssize_t(*)(int, const void *, size_t))shim_next("write");
	return next(fd, buf, n);
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	static size_t (*next)(const void *, size_t, size_t, FILE *);

	if (f && shim_fd_fails(SHIM_WRITE, fileno(f)))
		return 0;
	if (!next)
		next = (size_t(*)(const void *, size_t, size_t, FILE *))shim_next("fwrite");
	return next(p, size, n, f);
}

int fflush(FILE *f)
{
	static int (*next)(FILE *);

	if (f && shim_fd_fails(SHIM_FLUSH, fileno(f)))
		return EOF;
	if (!next)
		next = (int (*)(FILE *))shim_next("fflush");
	return next(f);
}

int fsync(int fd)
{
	static int (*next)(int);

	if (shim_fd_fails(SHIM_FSYNC, fd))
		return -1;
	if (!next)
		next = (int (*)(int))shim_next("fsync");
	return next(fd);
}

int rename(const char *from, const char *to)
{
	static int (*next)(const char *, const char *);

	if (shim_fails(SHIM_RENAME, from))
		return -1;
	if (!next)
		next = (int (*)(const char *, const char *))shim_next("rename");
	return next(from, to);
}

int close(int fd)
{
	static int (*next)(int);
	int fail = shim_fd_fails(SHIM_CLOSE, fd), e = errno;

	if (!next)
		next = (int (*)(int))shim_next("close");
	if (!fail)
		return next(fd);
	(void)next(fd);
	errno = e;
	return -1;
}

int fclose(FILE *f)
{
	static int (*next)(FILE *);
	int fail = f && shim_fd_fails(SHIM_CLOSE, fileno(f)), e = errno;

	if (!next)
		next = (int (*)(FILE *))shim_next("fclose");
	if (!fail)
		return next(f);
	(void)next(f);
	errno = e;
	return EOF;
}
