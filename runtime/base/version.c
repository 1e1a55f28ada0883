/*
 * version.c: bnn_version(), the version of the library actually linked,
 * which may differ from the BNN_VERSION_* macros of the header a program
 * was compiled with.
 */
#include "bnn.h"

const char *bnn_version(void)
{
	return BNN_VERSION_STRING;
}
