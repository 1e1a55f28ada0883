/*
 * runtime_basics.c: TAP tests of libbnn's version and error-code basics
 * (runtime/include/bnn.h, version.c, error.c): the version macros, bnn_version()
 * and configure's version agree; BNN_OK is 0 and every other code is
 * positive and distinct; every code has its own non-empty message; codes
 * outside the list give "unknown error".  It also exercises the passing
 * paths of the TAP helper's typed checks (t/tap.h), which every other C
 * test relies on.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bnn.h"
#include "tap.h"

/* Every code in errors.def with its name, in list order. */
static const struct {
	int code;         /* the enumerator's value */
	const char *name; /* the enumerator's spelling */
} codes[] = {
#define BNN_ERROR(name, message) { name, #name },
#include "bnn_errors.def"
#undef BNN_ERROR
};
#define NCODES ((int)(sizeof codes / sizeof codes[0]))

static void test_version(void)
{
	char buf[64];

	is_str(BNN_VERSION_STRING, "0.1.0", "BNN_VERSION_STRING is 0.1.0");
	is_str(bnn_version(), BNN_VERSION_STRING, "bnn_version() matches the header");
	snprintf(buf, sizeof buf, "%d.%d.%d", BNN_VERSION_MAJOR, BNN_VERSION_MINOR,
	         BNN_VERSION_PATCH);
	is_str(buf, BNN_VERSION_STRING, "BNN_VERSION_MAJOR.MINOR.PATCH match BNN_VERSION_STRING");
#ifdef PACKAGE_VERSION
	is_str(BNN_VERSION_STRING, PACKAGE_VERSION, "bnn.h and configure.ac agree on the version");
#else
	tap_skip(1, "no config.h: configure's version unknown");
#endif
}

static void test_codes(void)
{
	int i, j;

	is_int(BNN_OK, 0, "BNN_OK is 0");
	is_str(codes[0].name, "BNN_OK", "BNN_OK is first in errors.def");
	is_str(bnn_strerror(BNN_OK), "success", "BNN_OK means success");
	is_str(bnn_strerror(BNN_ENOMEM), "out of memory", "BNN_ENOMEM message");
	is_str(bnn_strerror(BNN_EINVAL), "invalid argument", "BNN_EINVAL message");
	is_str(bnn_strerror(BNN_EIO), "input/output error", "BNN_EIO message");
	is_str(bnn_strerror(BNN_EFORMAT), "malformed input", "BNN_EFORMAT message");
	is_str(bnn_strerror(BNN_EMISMATCH), "model or shape mismatch", "BNN_EMISMATCH message");
	is_str(bnn_strerror(BNN_ERANGE), "value out of range", "BNN_ERANGE message");
	is_str(bnn_strerror(BNN_EUNSUPPORTED), "unsupported operation", "BNN_EUNSUPPORTED message");

	for (i = 0; i < NCODES; i++) {
		const char *msg = bnn_strerror(codes[i].code);

		is_int(codes[i].code, i, "%s has value %d (its list position)", codes[i].name, i);
		ok(msg != NULL && msg[0] != '\0', "%s has a message", codes[i].name);
		ok(msg != NULL && strcmp(msg, "unknown error") != 0, "%s is not an unknown error",
		   codes[i].name);
		for (j = 0; j < i; j++) {
			const char *other = bnn_strerror(codes[j].code);

			if (msg == NULL || other == NULL || strcmp(msg, other) == 0)
				break;
		}
		ok(j == i, "%s's message \"%s\" differs from those before it", codes[i].name,
		   msg != NULL ? msg : "(null)");
	}
}

static void test_unknown(void)
{
	static const int bad[] = { -1, INT_MIN, INT_MAX, 1000 };
	size_t i;

	is_str(bnn_strerror(NCODES), "unknown error", "the code after the last one is unknown");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		is_str(bnn_strerror(bad[i]), "unknown error", "bnn_strerror(%d) is unknown error",
		       bad[i]);
}

/* The TAP helper's own checks, passing cases only (a failing case would
 * fail this test; the failure output is checked by hand). */
static void test_tap_helper(void)
{
	is_int(-9000000000000LL, -9000000000000LL, "is_int keeps long long");
	is_str(NULL, NULL, "is_str: NULL equals NULL");
	is_str("a#b\\c", "a#b\\c", "is_str: '#' and '\\' in a description");
	is_float(0.1 + 0.2, 0.3, 1e-15, "is_float: 0.1 + 0.2 within 1e-15");
	is_float(1.0f / 3.0f, 1.0 / 3.0, 1e-7, "is_float: float vs double");
	is_float(2.5, 2.5, 0.0, "is_float: exact with zero tolerance");
	is_float(NAN, NAN, 0.0, "is_float: NaN matches NaN");
	is_float(INFINITY, INFINITY, 0.0, "is_float: inf matches inf");
	is_float(-INFINITY, -INFINITY, 1.0, "is_float: -inf matches -inf");
	is_rel(1e10 + 1.0, 1e10, 1e-9, "is_rel: 1e10+1 within 1e-9 of 1e10");
	is_rel(-3.0e-20, -3.0000001e-20, 1e-6, "is_rel: scale-free near 0");
	is_rel(0.0, 0.0, 0.0, "is_rel: 0 matches 0 with zero tolerance");
	is_rel(-0.0, 0.0, 0.0, "is_rel: -0 matches +0");
	is_rel(NAN, NAN, 0.0, "is_rel: NaN matches NaN");
	is_rel(INFINITY, INFINITY, 0.0, "is_rel: inf matches inf");
}

int main(void)
{
	test_version();
	test_codes();
	test_unknown();
	test_tap_helper();
	return tap_done();
}
