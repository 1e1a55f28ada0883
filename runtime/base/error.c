/*
 * error.c: bnn_strerror(), the messages of libbnn's error codes, and
 * bnn_fail()/bnn_err_clear(), the detailed messages of struct bnn_err.  The
 * switch is expanded from bnn_errors.def, the same list that defines enum
 * bnn_error in bnn.h, so every code has exactly one message.
 */
#include <stdarg.h>
#include <stdio.h>

#include "bnn.h"

/* Stated by bnn_errors.def's ordering rule and relied on by every caller. */
_Static_assert(BNN_OK == 0, "BNN_OK must be 0 (first entry of bnn_errors.def)");

const char *bnn_strerror(int code)
{
	switch (code) {
#define BNN_ERROR(name, message) \
	case name:               \
		return message;
#include "bnn_errors.def"
#undef BNN_ERROR
	default:
		return "unknown error";
	}
}

int bnn_fail(bnn_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return code;
}

void bnn_err_clear(bnn_err *err)
{
	if (!err)
		return;
	err->code = BNN_OK;
	err->message[0] = '\0';
}
