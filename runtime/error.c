/*
 * error.c: bnn_strerror(), the messages of libbnn's error codes.  The
 * switch is expanded from bnn_errors.def, the same list that defines enum
 * bnn_error in bnn.h, so every code has exactly one message.
 */
#include "bnn.h"

/* Stated by bnn_errors.def's ordering rule and relied on by every caller. */
_Static_assert(BNN_OK == 0, "BNN_OK must be 0 (first entry of bnn_errors.def)");

const char *bnn_strerror(int code)
{
	switch (code) {
#define BNN_ERROR(name, message) \
	case name:                   \
		return message;
#include "bnn_errors.def"
#undef BNN_ERROR
	default:
		return "unknown error";
	}
}
