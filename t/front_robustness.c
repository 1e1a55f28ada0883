/* front_robustness.c: no input may crash or hang the front end.
 *
 * Each case feeds bytes straight to front_compile_memory() and checks the
 * verdict and, where it matters, the first message: empty input, binary
 * garbage, a megabyte-long line, ten thousand nested parentheses and blocks,
 * huge and malformed numbers, NUL bytes, CR LF line ends, a missing final
 * newline, and a valid chain of 100,000 statements (which must not recurse
 * once per statement).  The sanitizer pass of CI runs this under ASan/UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "tap.h"

static char msg[1 << 16];

/* Compiles LEN bytes; returns the status and keeps the diagnostics in msg. */
static int compile(const char *bytes, size_t len, int *nodes)
{
	struct front f;
	FILE *out = tmpfile();
	size_t n;
	int r;
	if (!out)
		tap_bail_out("tmpfile failed");
	r = (int)front_compile_memory(&f, "case.bnn", bytes, len, out);
	if (nodes)
		*nodes = r == FRONT_OK ? f.graph.nnodes : -1;
	front_free(&f);
	rewind(out);
	n = fread(msg, 1, sizeof msg - 1, out);
	msg[n] = '\0';
	fclose(out);
	return r;
}

static int compile_str(const char *s, int *nodes)
{
	return compile(s, strlen(s), nodes);
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A growable string. */
struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = 2 * (b->len + n + 1);
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			tap_bail_out("out of memory");
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_n(struct buf *b, const char *s, int times)
{
	while (times-- > 0)
		put(b, s, strlen(s));
}

#define VALID_HEAD "model m;\ninput x[4];\n"
#define VALID_TAIL "y ~ categorical(out);\n"

static void garbage(void)
{
	unsigned long long x = 0x9e3779b97f4a7c15ull;
	char *bytes = malloc(65536);
	int seed, i;
	for (seed = 0; seed < 8; seed++) {
		for (i = 0; i < 65536; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			bytes[i] = (char)(x >> 24);
		}
		is_int(compile(bytes, 65536, NULL), FRONT_INVALID,
		       "64 KiB of random bytes, seed %d", seed);
		ok(lines(msg) <= 3 * 21 + 1, "stops after the error limit (%d lines)", lines(msg));
	}
	ok(strstr(msg, "too many errors") != NULL, "says it stopped");
	free(bytes);
}

static void long_lines(void)
{
	struct buf b = { 0 };
	put(&b, VALID_HEAD "out = dense(x, 2);", strlen(VALID_HEAD "out = dense(x, 2);"));
	puts_n(&b, " ", 1 << 20);
	put(&b, VALID_TAIL, strlen(VALID_TAIL));
	is_int(compile(b.p, b.len, NULL), FRONT_OK, "a valid model with a 1 MiB line of spaces");
	b.len = 0;
	put(&b, VALID_HEAD "out = dense(", strlen(VALID_HEAD "out = dense("));
	puts_n(&b, "a", 1 << 20);
	put(&b, ", 2);\n" VALID_TAIL, strlen(", 2);\n" VALID_TAIL));
	is_int(compile(b.p, b.len, NULL), FRONT_INVALID, "a 1 MiB identifier");
	ok(strstr(msg,
	          "case.bnn:3:13: error: name 'aaaaaaaaaaaaaaaaaaaa...' is too long (1048576 characters; the limit is 63)") !=
	           NULL,
	   "is reported at its start");
	ok(strlen(msg) < 2000, "without quoting the whole line (%zu bytes)", strlen(msg));
	free(b.p);
}

static void deep_nesting(void)
{
	struct buf b = { 0 };
	put(&b, VALID_HEAD "out = ", strlen(VALID_HEAD "out = "));
	puts_n(&b, "(", 10000);
	put(&b, "x", 1);
	puts_n(&b, ")", 10000);
	put(&b, ";\n" VALID_TAIL, strlen(";\n" VALID_TAIL));
	is_int(compile(b.p, b.len, NULL), FRONT_INVALID, "10,000 nested parentheses");
	ok(strstr(msg, "error: parentheses are nested too deeply (the limit is 256)") != NULL,
	   "are refused with a clear message");
	b.len = 0;
	put(&b, VALID_HEAD "out = ", strlen(VALID_HEAD "out = "));
	puts_n(&b, "relu(", 200);
	put(&b, "dense(x, 3)", strlen("dense(x, 3)"));
	puts_n(&b, ")", 200);
	put(&b, ";\n" VALID_TAIL, strlen(";\n" VALID_TAIL));
	is_int(compile(b.p, b.len, NULL), FRONT_OK, "200 nested calls are fine");
	b.len = 0;
	put(&b, VALID_HEAD, strlen(VALID_HEAD));
	puts_n(&b, "block b() {\n", 10000);
	is_int(compile(b.p, b.len, NULL), FRONT_INVALID, "10,000 nested blocks");
	ok(msg[0] != '\0', "are reported");
	free(b.p);
}

static void numbers_and_bytes(void)
{
	is_int(compile_str(VALID_HEAD "out = dense(x, 1e999);\n" VALID_TAIL, NULL), FRONT_INVALID,
	       "1e999");
	ok(strstr(msg, "case.bnn:3:16: error: number '1e999' is out of range") != NULL,
	   "is out of range");
	is_int(compile_str(VALID_HEAD "out = dense(x, 99999999999999999999999);\n" VALID_TAIL,
	                   NULL),
	       FRONT_INVALID, "a huge integer");
	ok(strstr(msg, "error: 'units' must be from 1 to 16777216, not 99999999999999999999999") !=
	           NULL,
	   "is out of range for units");
	is_int(compile_str(VALID_HEAD "out = dense(x, 1.2.3);\n" VALID_TAIL, NULL), FRONT_INVALID,
	       "1.2.3");
	ok(strstr(msg, "error: malformed number '1.2.3'") != NULL, "is malformed");
	is_int(compile(VALID_HEAD "out = dense(x,\0 2);\n" VALID_TAIL,
	               sizeof(VALID_HEAD "out = dense(x,\0 2);\n" VALID_TAIL) - 1, NULL),
	       FRONT_INVALID, "a NUL byte");
	ok(strstr(msg, "case.bnn:3:15: error: unexpected byte 0x00") != NULL, "is located");
	is_int(compile_str("", NULL), FRONT_INVALID, "an empty file");
	is_str(msg, "case.bnn: error: the model is empty; it must start with 'model NAME;'\n",
	       "says the model is empty");
	is_int(compile_str(
	               "model m;\r\ninput x[4];\r\nout = dense(x, 2);\r\ny ~ categorical(out);\r\n",
	               NULL),
	       FRONT_OK, "CR LF line ends");
	is_int(compile_str("model m;\ninput x[4];\nout = dense(x, 2);\ny ~ categorical(out);",
	                   NULL),
	       FRONT_OK, "no final newline");
	is_int(compile_str("model m;\ninput x[4];\nout = dense(x, 2);\ny ~ categorical(out)", NULL),
	       FRONT_INVALID, "a statement cut off at the end");
	is_str(msg,
	       "case.bnn:4:21: error: expected ';' before end of input\n"
	       " y ~ categorical(out)\n"
	       "                     ^\n",
	       "says what is missing");
}

static void long_chain(void)
{
	struct buf b = { 0 };
	char line[64];
	int i, nodes;
	put(&b, VALID_HEAD "a0 = relu(x);\n", strlen(VALID_HEAD "a0 = relu(x);\n"));
	/* Written in reverse order: the chain must be ordered, not just read. */
	for (i = 100000; i >= 1; i--) {
		int n = snprintf(line, sizeof line, "a%d = relu(a%d);\n", i, i - 1);
		put(&b, line, (size_t)n);
	}
	put(&b, "out = dense(a100000, 2);\n" VALID_TAIL,
	    strlen("out = dense(a100000, 2);\n" VALID_TAIL));
	is_int(compile(b.p, b.len, &nodes), FRONT_OK,
	       "a chain of 100,000 statements in reverse order");
	is_int(nodes, 100003, "has every node");
	free(b.p);
}

int main(void)
{
	garbage();
	long_lines();
	deep_nesting();
	numbers_and_bytes();
	long_chain();
	return tap_done();
}
