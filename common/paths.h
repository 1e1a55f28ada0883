/*
 * paths.h: questions about file paths that bnnc and the generated
 * programs' driver both ask before writing: is an output the same file as
 * an input (under whatever name), and which directory holds a path (to
 * check that it can be written, or to fsync it after a rename).  Shared by
 * gen/ and runtime/: not part of the public API.
 */
#ifndef BNN_COMMON_PATHS_H
#define BNN_COMMON_PATHS_H

#include <stddef.h>

/* 1 when a and b both exist and are the same file (same device and
 * inode, whatever the names: links, "./x" and "x"), else 0. */
int bnn_path_same_file(const char *a, const char *b);

/*
 * The directory part of path into dir (size bytes): "." when path has no
 * '/', "/" for "/x", else everything before the last '/'.  Returns 1, or
 * 0 (dir untouched) when it does not fit.
 */
int bnn_path_dirname(const char *path, char *dir, size_t size);

#endif
