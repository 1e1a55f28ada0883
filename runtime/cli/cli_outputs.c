/*
 * cli_outputs.c: the driver's checks of the files a command will write,
 * made before it reads or trains anything, so that a mistake costs nothing:
 * an output (the checkpoint --save of train, laplace, calibrate and merge;
 * predict's, posterior's and sensitivity's --out; export's -o and
 * --rounded) that is one of the command's inputs, or another of its
 * outputs, is a usage error (writing it would destroy that input, or the
 * other output), and an output whose directory does not exist or cannot
 * be written (a file is created there and removed, as the writer will
 * create its temporary file), or that is a directory, is a file error
 * named before a long training run instead of after it.  A checkpoint
 * (--save, --rounded) must be a regular file, since it is replaced by
 * renaming a new file over it; --out may name a device or a pipe
 * (/dev/null), which is written directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_internal.h"
#include "common/paths.h"

/* An option naming a file and its value (NULL: not given); for an
 * output, whether it may be a device or a pipe. */
struct cli_file {
	const char *option, *path;
	int streams;
};

/* The characters bnn_file_replace adds to a name for its temporary file. */
#define CLI_TMP_SUFFIX ((long)sizeof BNN_FILE_REPLACE_SUFFIX - 1)

/* Whether a file can be created in dir as the writer will create it
 * (mkstemp of PATH.tmp.XXXXXX, bnn_file_replace), so that /proc and /sys,
 * whose permission bits let root write and which still refuse new files,
 * fail before the work and not at the save: the probe file is removed at
 * once.  0, or an exit status after a message naming option. */
static int cli_probe_create(const struct bnn_cli_args *a, const char *option, const char *path,
                            const char *dir)
{
	char tmp[4096 + sizeof BNN_FILE_REPLACE_SUFFIX];
	int fd;

	if (strlen(path) + sizeof BNN_FILE_REPLACE_SUFFIX > sizeof tmp)
		return bnn_cli_error(a, "cannot write %s '%s': the path is too long", option, path);
	snprintf(tmp, sizeof tmp, "%s%s", path, BNN_FILE_REPLACE_SUFFIX);
	errno = 0;
	fd = mkstemp(tmp);
	if (fd < 0)
		return bnn_cli_error(a,
		                     "cannot write %s '%s': cannot create a file in directory "
		                     "'%s': %s",
		                     option, path, dir, strerror(errno ? errno : EIO));
	(void)close(fd);
	(void)unlink(tmp);
	return BNN_CLI_OK;
}

/* Whether dir, the directory that will hold path (of option), exists and
 * may be written: 0, or an exit status after a message. */
static int cli_check_dir(const struct bnn_cli_args *a, const char *option, const char *path,
                         const char *dir)
{
	struct stat s;

	if (stat(dir, &s) != 0)
		return bnn_cli_error(a, "cannot write %s '%s': directory '%s': %s", option, path,
		                     dir, strerror(errno));
	if (!S_ISDIR(s.st_mode))
		return bnn_cli_error(a, "cannot write %s '%s': '%s' is not a directory", option,
		                     path, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return bnn_cli_error(a, "cannot write %s '%s': directory '%s': %s", option, path,
		                     dir, strerror(errno));
	return BNN_CLI_OK;
}

/* Whether path can be created or replaced: 0, or an exit status after a
 * message naming option.  streams: a device or a pipe is acceptable. */
static int cli_check_writable(const struct bnn_cli_args *a, const char *option, const char *path,
                              int streams)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char dir[4096];
	struct stat s;
	long name_max;
	int rc;

	if (stat(path, &s) == 0) {
		if (S_ISDIR(s.st_mode))
			return bnn_cli_error(a, "cannot write %s '%s': it is a directory", option,
			                     path);
		if (!S_ISREG(s.st_mode))
			return streams ? BNN_CLI_OK
			               : bnn_cli_error(
			                         a,
			                         "cannot write %s '%s': it is not a regular file "
			                         "(a checkpoint is replaced by renaming a new file "
			                         "over it)",
			                         option, path);
	}
	if (!bnn_path_dirname(path, dir, sizeof dir))
		return bnn_cli_error(a, "cannot write %s '%s': the path is too long", option, path);
	if ((rc = cli_check_dir(a, option, path, dir)))
		return rc;
	name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max > 0 && (long)strlen(base) + CLI_TMP_SUFFIX > name_max)
		return bnn_cli_error(a,
		                     "cannot write %s '%s': the name is too long (its temporary "
		                     "file adds %ld characters to it, and names may have %ld)",
		                     option, path, CLI_TMP_SUFFIX, name_max);
	return cli_probe_create(a, option, path, dir);
}

/* 0 unless the output `path` (of `option`) is one of the inputs. */
static int cli_check_distinct(const struct bnn_cli_args *a, const char *option, const char *path,
                              const struct cli_file *in, int nin)
{
	int i;

	for (i = 0; i < nin; i++) /* a new file is no input */
		if (in[i].path && bnn_path_same_file(in[i].path, path))
			return bnn_cli_usage_error(
			        a,
			        "%s '%s' is the file given to %s: writing it would "
			        "destroy that input",
			        option, path, in[i].option);
	return BNN_CLI_OK;
}

/* eval --plots DIR, drawn after the evaluation: an existing directory,
 * or a name that mkdir can create (its parent a writable directory), so
 * that a long evaluation does not end without its metrics. */
static int cli_check_plots(const struct bnn_cli_args *a)
{
	char path[4096], dir[4096];
	size_t len = strlen(a->plots);
	struct stat s;

	if (stat(a->plots, &s) == 0)
		return S_ISDIR(s.st_mode) ? BNN_CLI_OK
		                          : bnn_cli_error(a,
		                                          "cannot write --plots '%s': it is not a "
		                                          "directory",
		                                          a->plots);
	while (len > 1 && a->plots[len - 1] == '/') /* "plots/": the directory plots */
		len--;
	if (len >= sizeof path)
		return bnn_cli_error(a, "cannot write --plots '%s': the path is too long",
		                     a->plots);
	memcpy(path, a->plots, len);
	path[len] = '\0';
	if (!bnn_path_dirname(path, dir, sizeof dir))
		return bnn_cli_error(a, "cannot write --plots '%s': the path is too long",
		                     a->plots);
	return cli_check_dir(a, "--plots", a->plots, dir);
}

int bnn_cli_check_outputs(const struct bnn_cli_args *a)
{
	const struct cli_file in[] = {
		{ "--data", a->data, 0 },
		{ "--labels", a->labels, 0 },
		{ "--valid", a->valid, 0 },
		{ "--valid-labels", a->valid_labels, 0 },
		{ "--load", a->load, 0 },
		{ "--ood", a->ood, 0 },
		{ "--ood-labels", a->ood_labels, 0 },
		{ "--conformal", a->conformal, 0 },
		{ "--conformal-labels", a->conformal_labels, 0 },
		{ "--options", a->options, 0 },
	};
	const struct cli_file out[] = { { "--save", a->save, 0 },
		                        { "--out", a->out, 1 },
		                        { "--svg", a->svg, 0 },
		                        { "--rounded", a->rounded, 0 } };
	int i, j, rc;

	for (i = 0; i < (int)(sizeof out / sizeof out[0]); i++) {
		if (!out[i].path || strcmp(out[i].path, "-") == 0)
			continue;
		if ((rc = cli_check_distinct(a, out[i].option, out[i].path, in,
		                             (int)(sizeof in / sizeof in[0]))) ||
		    (rc = cli_check_writable(a, out[i].option, out[i].path, out[i].streams)))
			return rc;
		for (j = 0; j < i; j++) /* export -o H --rounded H: one would clobber the other */
			if (out[j].path && (!strcmp(out[j].path, out[i].path) ||
			                    bnn_path_same_file(out[j].path, out[i].path)))
				return bnn_cli_usage_error(a,
				                           "%s '%s' is the file given to %s: one "
				                           "output would overwrite the other",
				                           out[i].option, out[i].path,
				                           out[j].option);
	}
	return a->plots ? cli_check_plots(a) : BNN_CLI_OK;
}
