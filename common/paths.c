/*
 * paths.c: the same-file test and the directory of a path (see paths.h),
 * used by bnnc's and the driver's output checks and by the atomic file
 * replacement of libbnn.
 */
#include "paths.h"

#include <string.h>
#include <sys/stat.h>

int bnn_path_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int bnn_path_dirname(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t len;

	if (!slash) {
		if (size < 2)
			return 0;
		strcpy(dir, ".");
		return 1;
	}
	len = slash == path ? 1 : (size_t)(slash - path); /* "/x": "/" */
	if (len >= size)
		return 0;
	memcpy(dir, path, len);
	dir[len] = '\0';
	return 1;
}
