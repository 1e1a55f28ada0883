/*
 * tap.h: a small Test Anything Protocol (TAP version 13) helper for the C
 * tests of bnnc and libbnn.  A test program calls tap_plan() (or nothing, in
 * which case tap_done() prints the plan at the end), then the check macros
 * below, and ends with `return tap_done();`.  Output goes to stdout, which is
 * made unbuffered by the first tap_ call, so TAP lines and anything the code
 * under test writes to stderr interleave in order under the harness's
 * --merge.  Call a tap_ function before printing anything else to stdout.
 *
 * Every check macro records __FILE__ and __LINE__, so a failure names the
 * line of the test source:
 *
 *     not ok 3 - parses the empty model
 *     #   Failed test at t/front_names.c:42
 *     #          got: 2
 *     #     expected: 0
 *
 * The description is a printf format (checked by the compiler) and is
 * mandatory.  '#' and '\' in descriptions are escaped as TAP requires.
 * All macros and functions return 1 if the check passed, 0 if it failed.
 * The helper is not thread-safe; it keeps its counters in static storage.
 */
#ifndef BNN_TAP_H
#define BNN_TAP_H

#if defined(__GNUC__) || defined(__clang__)
#define TAP_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define TAP_NORETURN                     __attribute__((noreturn))
#else
#define TAP_PRINTF(fmt_index, first_arg)
#define TAP_NORETURN
#endif

/* Check that cond is true. */
#define ok(cond, ...) tap_ok_at(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)
/* Check that two integers are equal (compared as long long). */
#define is_int(got, want, ...) \
	tap_is_int_at(__FILE__, __LINE__, (long long)(got), (long long)(want), __VA_ARGS__)
/* Check that two strings are equal; either may be NULL (NULL == NULL). */
#define is_str(got, want, ...) tap_is_str_at(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
/* Check |got - want| <= tol.  NaN matches only NaN; equal infinities match. */
#define is_float(got, want, tol, ...)                                                     \
	tap_is_float_at(__FILE__, __LINE__, (double)(got), (double)(want), (double)(tol), \
	                __VA_ARGS__)
/* Check |got - want| <= rtol * max(|got|, |want|), or got == want (so two
 * zeros match).  NaN matches only NaN; an infinity matches only itself. */
#define is_rel(got, want, rtol, ...)                                                     \
	tap_is_rel_at(__FILE__, __LINE__, (double)(got), (double)(want), (double)(rtol), \
	              __VA_ARGS__)

/* Print the plan "1..n".  At most once per program. */
void tap_plan(int n);

/* Report one test result; the macros above all end here. */
int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...) TAP_PRINTF(4, 5);
int tap_is_int_at(const char *file, int line, long long got, long long want, const char *fmt, ...)
        TAP_PRINTF(5, 6);
int tap_is_str_at(const char *file, int line, const char *got, const char *want, const char *fmt,
                  ...) TAP_PRINTF(5, 6);
int tap_is_float_at(const char *file, int line, double got, double want, double tol,
                    const char *fmt, ...) TAP_PRINTF(6, 7);
int tap_is_rel_at(const char *file, int line, double got, double want, double rtol, const char *fmt,
                  ...) TAP_PRINTF(6, 7);

/* Report n tests as skipped: "ok N # SKIP reason", n times. */
void tap_skip(int n, const char *reason);

/* Between tap_todo_start() and tap_todo_end(), results carry
 * "# TODO reason" and failures do not make tap_done() fail.  Not nested:
 * a second tap_todo_start() replaces the reason (which is copied). */
void tap_todo_start(const char *reason);
void tap_todo_end(void);

/* Print a diagnostic; every line of the message gets a "# " prefix. */
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);

/* Print "Bail out! message" and exit with status 255. */
void tap_bail_out(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;

/* Finish: print the plan if none was printed, then return 0 if every
 * non-TODO test passed and the number of tests run matches the plan,
 * else 1 (with a diagnostic saying why). */
int tap_done(void);

#endif /* BNN_TAP_H */
