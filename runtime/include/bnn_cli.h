/*
 * bnn_cli.h: the command-line driver of a generated model (included by
 * bnn.h).  `bnnc --main` emits a main() that calls bnn_cli_main() with the
 * model's descriptor; the subcommands (train, eval, predict, info) are
 * documented in docs/driver.md and by `MODEL --help`.
 */
#ifndef BNN_CLI_H
#define BNN_CLI_H

#include "bnn_core.h"
#include "bnn_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run the driver.  Returns the process exit status: 0 on success, 1 on a
 * data, model or file error, 2 on a usage error.  Messages go to stderr,
 * results to stdout.
 */
int bnn_cli_main(const bnn_model *m, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* BNN_CLI_H */
