/*
 * file_replace.c: bnn_file_replace(), the one way libbnn replaces a file
 * (checkpoints, the driver's predictions).  The new contents go to
 * "PATH.tmp.XXXXXX" (mkstemp, in PATH's directory so that the rename
 * cannot cross file systems), which is flushed, fsynced, closed and renamed
 * over PATH, followed by a best-effort fsync of the directory.  A failure
 * at any step removes the temporary file and leaves PATH as it was; a
 * crash leaves either the old file or the new one, never half of one.
 * PATH must be a regular file or not exist: renaming over a device or a
 * pipe would replace the node itself (as root, /dev/null would become a
 * plain file).  t/ckpt_kill.sh (SIGKILL at random moments of a save) and
 * t/ckpt_faults.sh (a full disk, read-only and vanished directories,
 * failures of write, flush, fsync, rename and close injected by
 * t/faultshim.so) test these claims (docs/checkpoint.md, "Guarantees and
 * how they are tested").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bnn.h"
#include "common/paths.h"

/* errno, or EIO when a failing call left it 0. */
static int replace_errno(void)
{
	return errno != 0 ? errno : EIO;
}

/* fsync the directory holding path, so that the rename itself survives a
 * crash.  Best effort: some file systems refuse, and the data is already
 * safe in one file or the other.  A failure is not an error of the save:
 * the rename is done and path holds the new file, while BNN_EIO promises
 * that path is unchanged. */
static void replace_sync_dir(const char *path)
{
	size_t size = strlen(path) + 2; /* room for "." */
	char *dir = malloc(size);
	int fd;

	if (!dir)
		return;
	if (!bnn_path_dirname(path, dir, size)) {
		free(dir);
		return;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	free(dir);
	if (fd < 0)
		return;
	(void)fsync(fd);
	(void)close(fd);
}

int bnn_file_replace(const char *path, const char *what, int (*fill)(FILE *f, void *ctx), void *ctx,
                     bnn_err *err)
{
	static const char suffix[] = BNN_FILE_REPLACE_SUFFIX;
	struct stat st;
	mode_t mode = 0644;
	size_t len = path ? strlen(path) : 0;
	char *tmp;

	if (!path || !fill)
		return bnn_fail(err, BNN_EINVAL, "bnn_file_replace: no %s given",
		                !path ? "path" : "fill");
	tmp = malloc(len + sizeof suffix);
	FILE *f = NULL;
	int fd, errnum = 0, rc;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		free(tmp);
		return bnn_fail(err, BNN_EIO, "cannot write %s%s: %s", what, path,
		                S_ISDIR(st.st_mode) ? strerror(EISDIR)
		                                    : "it is not a regular file");
	}
	if (!tmp)
		return bnn_fail(err, BNN_ENOMEM, "cannot write %s%s: out of memory", what, path);
	memcpy(tmp, path, len);
	memcpy(tmp + len, suffix, sizeof suffix);
	fd = mkstemp(tmp);
	if (fd < 0) {
		errnum = replace_errno();
		free(tmp);
		return bnn_fail(err, BNN_EIO, "cannot write %s%s: %s", what, path,
		                strerror(errnum));
	}
	/* mkstemp makes the file 0600: give it the mode of the file it
	 * replaces, or the usual 0644 for a new one. */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		mode = st.st_mode & 0777;
	if (fchmod(fd, mode) != 0 || (f = fdopen(fd, "wb")) == NULL) {
		errnum = replace_errno();
		(void)close(fd);
		goto fail;
	}
	errno = 0;
	rc = fill(f, ctx);
	if (rc != 0)
		errnum = rc > 0 ? rc : replace_errno();
	errno = 0;
	if (errnum == 0 && fflush(f) != 0)
		errnum = replace_errno();
	if (errnum == 0 && fsync(fileno(f)) != 0)
		errnum = replace_errno();
	errno = 0;
	if (fclose(f) != 0 && errnum == 0)
		errnum = replace_errno();
	if (errnum == 0 && rename(tmp, path) != 0)
		errnum = replace_errno();
	if (errnum != 0)
		goto fail;
	free(tmp);
	replace_sync_dir(path);
	return BNN_OK;

fail:
	(void)unlink(tmp);
	free(tmp);
	return bnn_fail(err, BNN_EIO, "cannot write %s%s: %s", what, path, strerror(errnum));
}
