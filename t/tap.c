/*
 * tap.c: the implementation of the TAP helper declared in tap.h.  It keeps
 * the test counter, the number of failures, the plan and the current TODO
 * reason in static storage, writes TAP version 13 lines to stdout (made
 * unbuffered on first use), and writes failure diagnostics as "# " comment
 * lines right after the "not ok" line they explain.  It uses only ISO C
 * (no libm: NaN and infinity tests are macros, fabs is not needed), so any
 * test can link t/libtap.a without extra libraries.
 */
#include "tap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAP_DESC_MAX 1024 /* longer descriptions are truncated */

static int tap_started;                    /* stdout has been made unbuffered */
static int tap_count;                      /* number of results reported so far */
static int tap_failures;                   /* failed results outside TODO blocks */
static int tap_planned = -1;               /* count given to tap_plan(), -1 if none */
static int tap_in_todo;                    /* inside tap_todo_start()/tap_todo_end() */
static char tap_todo_reason[TAP_DESC_MAX]; /* copy of the TODO reason */

/* Make stdout unbuffered; every public function calls this first. */
static void tap_start(void)
{
	if (tap_started)
		return;
	tap_started = 1;
	setvbuf(stdout, NULL, _IONBF, 0);
}

/* Write s on one TAP line: line breaks become spaces.  If escape is set,
 * s is a description or a directive's reason, and '#' is written as "\#"
 * (with any backslashes right before it doubled) so that a "# TODO" or
 * "# SKIP" inside it cannot be read as a directive. */
static void tap_put_line(const char *s, int escape)
{
	size_t backslashes = 0; /* run of '\' not yet written */

	for (; *s != '\0'; s++) {
		if (*s == '\\') {
			backslashes++;
			continue;
		}
		if (escape && *s == '#')
			backslashes = 2 * backslashes + 1;
		for (; backslashes > 0; backslashes--)
			putchar('\\');
		putchar(*s == '\n' || *s == '\r' ? ' ' : *s);
	}
	for (; backslashes > 0; backslashes--)
		putchar('\\');
}

/* Print text as comment lines, each prefixed by "# ". */
static void tap_put_comment(const char *text)
{
	const char *p = text;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);

		printf("# %.*s\n", (int)len, p);
		if (nl == NULL || nl[1] == '\0')
			break;
		p = nl + 1;
	}
}

/* The common body of every check: print "ok N - desc" or
 * "not ok N - desc", the TODO directive if any, and on failure the
 * location line.  Returns cond.  The caller prints value diagnostics. */
TAP_PRINTF(4, 0)
static int tap_vresult(const char *file, int line, int cond, const char *fmt, va_list ap)
{
	char desc[TAP_DESC_MAX];

	tap_start();
	vsnprintf(desc, sizeof desc, fmt, ap);
	tap_count++;
	printf("%sok %d", cond ? "" : "not ", tap_count);
	if (desc[0] != '\0') {
		fputs(" - ", stdout);
		tap_put_line(desc, 1);
	}
	if (tap_in_todo) {
		fputs(" # TODO ", stdout);
		tap_put_line(tap_todo_reason, 1);
	}
	putchar('\n');
	if (!cond) {
		if (tap_in_todo) {
			printf("#   Failed (TODO) test at %s:%d\n", file, line);
		} else {
			printf("#   Failed test at %s:%d\n", file, line);
			tap_failures++;
		}
	}
	return cond;
}

void tap_plan(int n)
{
	tap_start();
	if (tap_planned >= 0)
		tap_bail_out("tap_plan() called twice");
	if (n < 0)
		tap_bail_out("tap_plan(%d): negative test count", n);
	tap_planned = n;
	printf("1..%d\n", n);
}

int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vresult(file, line, cond, fmt, ap);
	va_end(ap);
	return r;
}

int tap_is_int_at(const char *file, int line, long long got, long long want, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vresult(file, line, got == want, fmt, ap);
	va_end(ap);
	if (!r) {
		printf("#          got: %lld\n", got);
		printf("#     expected: %lld\n", want);
	}
	return r;
}

/* Print a possibly NULL string for a diagnostic: quoted, or NULL bare. */
static void tap_put_quoted(const char *label, const char *s)
{
	if (s == NULL) {
		printf("# %12s: NULL\n", label);
		return;
	}
	printf("# %12s: \"", label);
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else
			putchar(*s);
	}
	puts("\"");
}

int tap_is_str_at(const char *file, int line, const char *got, const char *want, const char *fmt,
                  ...)
{
	va_list ap;
	int same, r;

	if (got == NULL || want == NULL)
		same = got == want;
	else
		same = strcmp(got, want) == 0;
	va_start(ap, fmt);
	r = tap_vresult(file, line, same, fmt, ap);
	va_end(ap);
	if (!r) {
		tap_put_quoted("got", got);
		tap_put_quoted("expected", want);
	}
	return r;
}

/* Absolute value without libm. */
static double tap_abs(double x)
{
	return x < 0 ? -x : x;
}

/* Reports a float comparison: the result line, and on failure both values,
 * their difference and the KIND ("absolute"/"relative") of tolerance TOL. */
static int tap_float_result(const char *file, int line, int pass, double got, double want,
                            double tol, const char *kind, const char *fmt, va_list ap)
        TAP_PRINTF(8, 0);
static int tap_float_result(const char *file, int line, int pass, double got, double want,
                            double tol, const char *kind, const char *fmt, va_list ap)
{
	int r = tap_vresult(file, line, pass, fmt, ap);
	if (!r) {
		printf("#          got: %.9g\n", got);
		printf("#     expected: %.9g\n", want);
		printf("#   difference: %.9g (%s tolerance %.9g)\n", tap_abs(got - want), kind,
		       tol);
	}
	return r;
}

int tap_is_float_at(const char *file, int line, double got, double want, double tol,
                    const char *fmt, ...)
{
	va_list ap;
	int pass, r;

	if (isnan(got) || isnan(want))
		pass = isnan(got) && isnan(want);
	else if (got == want)
		pass = 1; /* also equal infinities, whose difference is NaN */
	else
		pass = tap_abs(got - want) <= tol;
	va_start(ap, fmt);
	r = tap_float_result(file, line, pass, got, want, tol, "absolute", fmt, ap);
	va_end(ap);
	return r;
}

int tap_is_rel_at(const char *file, int line, double got, double want, double rtol, const char *fmt,
                  ...)
{
	va_list ap;
	int pass, r;
	double ag = tap_abs(got), aw = tap_abs(want);

	if (isnan(got) || isnan(want))
		pass = isnan(got) && isnan(want);
	else if (got == want)
		pass = 1; /* both zero, or the same infinity */
	else if (isinf(got) || isinf(want))
		pass = 0; /* else inf <= rtol * inf would pass */
	else
		pass = tap_abs(got - want) <= rtol * (ag > aw ? ag : aw);
	va_start(ap, fmt);
	r = tap_float_result(file, line, pass, got, want, rtol, "relative", fmt, ap);
	va_end(ap);
	return r;
}

void tap_skip(int n, const char *reason)
{
	int i;

	tap_start();
	for (i = 0; i < n; i++) {
		tap_count++;
		printf("ok %d # SKIP ", tap_count);
		tap_put_line(reason != NULL ? reason : "", 1);
		putchar('\n');
	}
}

void tap_todo_start(const char *reason)
{
	tap_start();
	tap_in_todo = 1;
	snprintf(tap_todo_reason, sizeof tap_todo_reason, "%s", reason != NULL ? reason : "");
}

void tap_todo_end(void)
{
	tap_in_todo = 0;
	tap_todo_reason[0] = '\0';
}

void tap_diag(const char *fmt, ...)
{
	char msg[TAP_DESC_MAX];
	va_list ap;

	tap_start();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tap_put_comment(msg);
}

void tap_bail_out(const char *fmt, ...)
{
	char msg[TAP_DESC_MAX];
	va_list ap;

	tap_start();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fputs("Bail out! ", stdout);
	tap_put_line(msg, 0);
	putchar('\n');
	exit(255);
}

int tap_done(void)
{
	int status = 0;

	tap_start();
	if (tap_planned < 0)
		printf("1..%d\n", tap_count);
	else if (tap_count != tap_planned) {
		tap_diag("Looks like you planned %d test%s but ran %d.", tap_planned,
		         tap_planned == 1 ? "" : "s", tap_count);
		status = 1;
	}
	if (tap_failures > 0) {
		tap_diag("Looks like you failed %d test%s of %d.", tap_failures,
		         tap_failures == 1 ? "" : "s", tap_count);
		status = 1;
	}
	return status;
}
