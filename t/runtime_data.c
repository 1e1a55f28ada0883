/*
 * runtime_data.c: TAP tests of libbnn's data sets and readers
 * (runtime/include/bnn_data.h: dataset.c, data_idx.c, data_csv.c,
 * data_standardize.c).
 *
 * The IDX files are written by the test itself into a fresh temporary
 * directory (plain, and gzip through zlib's gzopen "wb"), byte by byte,
 * so the expected values are known exactly; so are the CSV files, whose
 * line endings, byte order marks and blanks must survive untouched.  One
 * CSV fixture, t/data/small.csv, is read through $top_srcdir.  When the
 * Debian package of Fashion-MNIST is installed, its test set is loaded
 * and checked against facts about that data set; otherwise those checks
 * are skipped.  Every error case checks the code and the exact message.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bnn.h"
#include "tap.h"

#ifndef FMNIST /* where Debian's fashion-mnist package puts it */
#define FMNIST "/usr/share/datasets/fashion-mnist/"
#endif

static char tmpdir[256];      /* the fresh directory of this run */
static char created[128][64]; /* names written in it, to remove */
static int ncreated;

/* The path of name in tmpdir (one of four rotating static buffers). */
static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	if (snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name) >= (int)sizeof buf[0])
		tap_bail_out("path too long: %s/%s", tmpdir, name);
	return p;
}

/* A printf-formatted string (one of four rotating static buffers). */
static const char *fmt(const char *f, ...) TAP_PRINTF(1, 2);
static const char *fmt(const char *f, ...)
{
	static char buf[4][2048];
	static int next;
	char *p = buf[next++ % 4];
	va_list ap;

	va_start(ap, f);
	vsnprintf(p, sizeof buf[0], f, ap);
	va_end(ap);
	return p;
}

static void remember(const char *name)
{
	int i;

	for (i = 0; i < ncreated; i++)
		if (!strcmp(created[i], name))
			return;
	if (ncreated == 128 || strlen(name) >= sizeof created[0])
		tap_bail_out("too many temporary files, or %s too long", name);
	strcpy(created[ncreated++], name);
}

/* Write len bytes to tmpdir/name, plain or gzip-compressed. */
static void put(const char *name, const void *data, size_t len, int gz)
{
	remember(name);
	if (gz) {
		gzFile f = gzopen(tpath(name), "wb");

		if (!f || (len && gzwrite(f, data, (unsigned)len) != (int)len) ||
		    gzclose(f) != Z_OK)
			tap_bail_out("cannot write %s", tpath(name));
	} else {
		FILE *f = fopen(tpath(name), "wb");

		if (!f || fwrite(data, 1, len, f) != len || fclose(f))
			tap_bail_out("cannot write %s", tpath(name));
	}
}

static void put_text(const char *name, const char *text)
{
	put(name, text, strlen(text), 0);
}

/* Build an IDX file in buf: header for (type, rank, dims), then len bytes
 * of already big-endian data.  Returns the total size. */
static size_t idx_build(unsigned char *buf, int type, int rank, const unsigned long *dims,
                        const void *data, size_t len)
{
	size_t n = 0;
	int i;

	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = (unsigned char)type;
	buf[n++] = (unsigned char)rank;
	for (i = 0; i < rank; i++) {
		buf[n++] = (unsigned char)(dims[i] >> 24);
		buf[n++] = (unsigned char)(dims[i] >> 16);
		buf[n++] = (unsigned char)(dims[i] >> 8);
		buf[n++] = (unsigned char)dims[i];
	}
	memcpy(buf + n, data, len);
	return n + len;
}

/* Check a failure: the code, the exact message, and a zeroed output. */
#define FAILS(rc, err, code, want, ...) \
	fails_at(__FILE__, __LINE__, rc, err, code, want, __VA_ARGS__)
static void fails_at(const char *file, int line, int rc, const bnn_err *e, int code,
                     const char *want, const char *what, ...) TAP_PRINTF(7, 8);
static void fails_at(const char *file, int line, int rc, const bnn_err *e, int code,
                     const char *want, const char *what, ...)
{
	char d[512];
	va_list ap;

	va_start(ap, what);
	vsnprintf(d, sizeof d, what, ap);
	va_end(ap);
	tap_is_int_at(file, line, rc, code, "%s: error code", d);
	tap_is_int_at(file, line, e->code, code, "%s: err->code", d);
	tap_is_str_at(file, line, e->message, want, "%s: message", d);
}

/* ---- IDX ---------------------------------------------------------------- */

static void test_idx_u8(void)
{
	/* 2 images of 2 x 3 pixels; labels 7 and 0. */
	static const unsigned char px[12] = { 0, 255, 51, 1, 2, 3, 10, 20, 30, 40, 50, 102 };
	static const unsigned char lab[2] = { 7, 0 };
	unsigned long dims[3] = { 2, 2, 3 }, ldims[1] = { 2 };
	unsigned char buf[128];
	size_t n;
	int gz;

	for (gz = 0; gz <= 1; gz++) {
		const char *what = gz ? "gzip" : "plain";
		bnn_idx idx;
		bnn_dataset ds;
		bnn_err e = { 0, "" };
		int rc;

		n = idx_build(buf, 0x08, 3, dims, px, sizeof px);
		put(gz ? "u8.idx.gz" : "u8.idx", buf, n, gz);
		n = idx_build(buf, 0x08, 1, ldims, lab, sizeof lab);
		put(gz ? "lab.idx.gz" : "lab.idx", buf, n, gz);

		rc = bnn_idx_read(tpath(gz ? "u8.idx.gz" : "u8.idx"), &idx, &e);
		is_int(rc, BNN_OK, "%s u8 IDX reads", what);
		is_int(e.code, 0, "%s u8 IDX: err untouched", what);
		is_int(idx.type, 0x08, "%s u8 IDX: type", what);
		is_int(idx.rank, 3, "%s u8 IDX: rank", what);
		ok(idx.dims[0] == 2 && idx.dims[1] == 2 && idx.dims[2] == 3,
		   "%s u8 IDX: dims 2 x 2 x 3", what);
		is_int(idx.count, 12, "%s u8 IDX: count 2*2*3", what);
		/* Raw bytes, unscaled. */
		ok(idx.data[0] == 0 && idx.data[1] == 255 && idx.data[5] == 3 &&
		           idx.data[11] == 102,
		   "%s u8 IDX: raw values 0 255 .. 3 .. 102", what);
		bnn_idx_free(&idx);
		ok(idx.data == NULL && idx.count == 0, "bnn_idx_free zeroes the array");

		rc = bnn_data_load_idx(tpath(gz ? "u8.idx.gz" : "u8.idx"),
		                       tpath(gz ? "lab.idx.gz" : "lab.idx"), &ds, &e);
		is_int(rc, BNN_OK, "%s images + labels load", what);
		is_int(ds.n, 2, "%s: n = dims[0] = 2", what);
		is_int(ds.features, 6, "%s: features = 2*3", what);
		is_int(ds.rank, 2, "%s: example rank 2", what);
		ok(ds.shape[0] == 2 && ds.shape[1] == 3, "%s: shape 2 x 3", what);
		is_int(ds.targets, 1, "%s: one target", what);
		ok(ds.columns == NULL, "%s: no column names", what);
		/* u8 scaled by 1/255: 255 -> 1, 51 -> 0.2, 102 -> 0.4. */
		is_float(ds.x[0], 0.0, 0, "%s: pixel 0 -> 0", what);
		is_float(ds.x[1], 1.0, 0, "%s: pixel 255 -> 1", what);
		is_float(ds.x[2], 51.0f / 255.0f, 0, "%s: pixel 51 -> 0.2", what);
		is_rel(ds.x[2], 0.2, 1e-6, "%s: 51/255 is 0.2", what);
		is_rel(ds.x[11], 0.4, 1e-6, "%s: 102/255 is 0.4", what);
		ok(ds.y[0] == 7 && ds.y[1] == 0, "%s: labels 7 0 unscaled", what);
		bnn_dataset_free(&ds);
		ok(ds.x == NULL && ds.y == NULL && ds.n == 0,
		   "bnn_dataset_free zeroes the data set");
	}

	/* Without labels: no targets; rank-1 images are one feature. */
	{
		static const unsigned char v[3] = { 0, 255, 51 };
		unsigned long d1[1] = { 3 };
		bnn_dataset ds;
		bnn_err e = { 0, "" };

		n = idx_build(buf, 0x08, 1, d1, v, sizeof v);
		put("r1.idx", buf, n, 0);
		is_int(bnn_data_load_idx(tpath("r1.idx"), NULL, &ds, &e), 0,
		       "rank-1 images without labels load");
		ok(ds.n == 3 && ds.features == 1 && ds.rank == 1 && ds.shape[0] == 1,
		   "rank-1 images: 3 examples of 1 feature");
		ok(ds.targets == 0 && ds.y == NULL, "no labels: no targets");
		is_float(ds.x[1], 1.0, 0, "rank-1 images are scaled too");
		bnn_dataset_free(&ds);
	}
}

static void test_idx_types(void)
{
	/* i32: 0x01020304 = 16909060 (an even number below 2^25, exact in
	 * float), 0xFFFFFFFE = -2, 0x7FFFFFFF = 2147483647 -> 2^31. */
	static const unsigned char i32[12] = { 1,    2,    3,    4,    0xFF, 0xFF,
		                               0xFF, 0xFE, 0x7F, 0xFF, 0xFF, 0xFF };
	/* f32: 0x3FC00000 = 1.5, 0xBE800000 = -0.25, 0x40400000 = 3,
	 * 0x00000000 = 0. */
	static const unsigned char f32[16] = { 0x3F, 0xC0, 0, 0, 0xBE, 0x80, 0, 0,
		                               0x40, 0x40, 0, 0, 0,    0,    0, 0 };
	/* i8: 0xFF = -1, 0x80 = -128, 0x7F = 127. */
	static const unsigned char i8[3] = { 0xFF, 0x80, 0x7F };
	/* i16: 0x0102 = 258, 0xFF00 = -256. */
	static const unsigned char i16[4] = { 0x01, 0x02, 0xFF, 0x00 };
	/* f64: 0x3FF8000000000000 = 1.5, 0xC000000000000000 = -2. */
	static const unsigned char f64[16] = { 0x3F, 0xF8, 0, 0, 0, 0, 0, 0,
		                               0xC0, 0,    0, 0, 0, 0, 0, 0 };
	unsigned long d3[1] = { 3 }, d22[2] = { 2, 2 }, d2[1] = { 2 };
	unsigned char buf[128];
	bnn_idx idx;
	bnn_dataset ds;
	bnn_err e = { 0, "" };
	size_t n;
	int gz;

	for (gz = 0; gz <= 1; gz++) {
		const char *name = gz ? "i32.idx.gz" : "i32.idx";

		n = idx_build(buf, 0x0C, 1, d3, i32, sizeof i32);
		put(name, buf, n, gz);
		is_int(bnn_idx_read(tpath(name), &idx, &e), 0, "%s reads", name);
		ok(idx.type == 0x0C && idx.rank == 1 && idx.count == 3, "%s: i32, rank 1, 3 values",
		   name);
		is_float(idx.data[0], 16909060.0, 0, "%s: 0x01020304", name);
		is_float(idx.data[1], -2.0, 0, "%s: 0xFFFFFFFE is -2", name);
		is_float(idx.data[2], 2147483648.0, 0, "%s: 2^31 - 1 rounds to 2^31 in float",
		         name);
		bnn_idx_free(&idx);

		name = gz ? "f32.idx.gz" : "f32.idx";
		n = idx_build(buf, 0x0D, 2, d22, f32, sizeof f32);
		put(name, buf, n, gz);
		is_int(bnn_idx_read(tpath(name), &idx, &e), 0, "%s reads", name);
		ok(idx.type == 0x0D && idx.rank == 2 && idx.dims[0] == 2 && idx.dims[1] == 2,
		   "%s: f32, 2 x 2", name);
		ok(idx.data[0] == 1.5f && idx.data[1] == -0.25f && idx.data[2] == 3.0f &&
		           idx.data[3] == 0.0f,
		   "%s: 1.5 -0.25 3 0", name);
		bnn_idx_free(&idx);
	}

	/* f32 images are taken as they are (not scaled), with i32 labels. */
	n = idx_build(buf, 0x0D, 2, d22, f32, sizeof f32);
	put("f32.idx", buf, n, 0);
	n = idx_build(buf, 0x0C, 1, d2, i32, 8);
	put("i32lab.idx", buf, n, 0);
	is_int(bnn_data_load_idx(tpath("f32.idx"), tpath("i32lab.idx"), &ds, &e), 0,
	       "f32 images with i32 labels load");
	ok(ds.n == 2 && ds.features == 2 && ds.rank == 1 && ds.shape[0] == 2,
	   "f32 images: 2 examples of 2 features");
	ok(ds.x[0] == 1.5f && ds.x[1] == -0.25f && ds.x[2] == 3.0f, "f32 images are not scaled");
	ok(ds.y[0] == 16909060.0f && ds.y[1] == -2.0f, "i32 labels");
	bnn_dataset_free(&ds);

	n = idx_build(buf, 0x09, 1, d3, i8, sizeof i8);
	put("i8.idx", buf, n, 0);
	is_int(bnn_idx_read(tpath("i8.idx"), &idx, &e), 0, "i8 IDX reads");
	ok(idx.data[0] == -1 && idx.data[1] == -128 && idx.data[2] == 127, "i8: -1 -128 127");
	bnn_idx_free(&idx);

	n = idx_build(buf, 0x0B, 1, d2, i16, sizeof i16);
	put("i16.idx", buf, n, 0);
	is_int(bnn_idx_read(tpath("i16.idx"), &idx, &e), 0, "i16 IDX reads");
	ok(idx.data[0] == 258 && idx.data[1] == -256, "i16: 258 -256");
	bnn_idx_free(&idx);

	n = idx_build(buf, 0x0E, 1, d2, f64, sizeof f64);
	put("f64.idx", buf, n, 0);
	is_int(bnn_idx_read(tpath("f64.idx"), &idx, &e), 0, "f64 IDX reads");
	ok(idx.type == 0x0E && idx.data[0] == 1.5f && idx.data[1] == -2.0f, "f64: 1.5 -2");
	bnn_idx_free(&idx);

	/* A rank-4 file of 2 x 1 x 1 x 2 u8: examples of shape 1 x 1 x 2. */
	{
		static const unsigned char v[4] = { 255, 0, 0, 255 };
		unsigned long d4[4] = { 2, 1, 1, 2 };

		n = idx_build(buf, 0x08, 4, d4, v, sizeof v);
		put("r4.idx", buf, n, 0);
		is_int(bnn_data_load_idx(tpath("r4.idx"), NULL, &ds, &e), 0, "rank-4 IDX loads");
		ok(ds.rank == 3 && ds.shape[0] == 1 && ds.shape[1] == 1 && ds.shape[2] == 2 &&
		           ds.features == 2 && ds.n == 2,
		   "rank 4: 2 examples of shape 1 x 1 x 2");
		bnn_dataset_free(&ds);
	}
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One IDX file that bnn_idx_read must refuse. */
struct idx_failure {
	const char *file;      /* in tmpdir */
	int raw;               /* 1: bytes are the whole file; 0: a header comes first */
	int type;              /* header: the IDX type byte */
	int rank;              /* header: the rank byte */
	unsigned long dims[3]; /* header: the sizes of the first rank dimensions */
	const char *bytes;     /* the file (raw) or the data after the header */
	size_t len;            /* how many of those bytes */
	int gz;                /* written gzip-compressed */
	const char *after;     /* the message after the file's path */
	const char *what;      /* the test's name */
};

/* Bytes 1..9: the data of the 2 x 3 u8 files, 6 of them when complete. */
#define NINE "\1\2\3\4\5\6\7\10\11"

/* Three tests per failure (code, err->code, exact message); *idx is left
 * as the last read left it. */
static void idx_fails(const struct idx_failure *c, int n, bnn_idx *idx)
{
	unsigned char buf[256];
	bnn_err e;
	size_t len;
	int i, rc;

	for (i = 0; i < n; i++) {
		if (c[i].raw) {
			put(c[i].file, c[i].bytes, c[i].len, c[i].gz);
		} else {
			len = idx_build(buf, c[i].type, c[i].rank, c[i].dims, c[i].bytes, c[i].len);
			put(c[i].file, buf, len, c[i].gz);
		}
		rc = bnn_idx_read(tpath(c[i].file), idx, &e);
		FAILS(rc, &e, BNN_EFORMAT, fmt("%s%s", tpath(c[i].file), c[i].after), "%s",
		      c[i].what);
	}
}

/* Malformed headers, up to a truncated body: the last row is truncated. */
static const struct idx_failure idx_bad_headers[] = {
	{ "pgm.idx",
	  1,
	  0,
	  0,
	  { 0 },
	  "P5\n2 3\n255\n",
	  11,
	  0,
	  ": not an IDX file (magic bytes 0x50 0x35 at offset 0)",
	  "wrong magic" },
	{ "empty.idx",
	  1,
	  0,
	  0,
	  { 0 },
	  "",
	  0,
	  0,
	  ": empty file, not an IDX file",
	  "empty IDX file" },
	{ "short.idx",
	  1,
	  0,
	  0,
	  { 0 },
	  "\0\0\x08",
	  3,
	  0,
	  ": truncated: expected a 4-byte IDX magic, found 3 bytes",
	  "3-byte file" },
	{ "type.idx",
	  0,
	  0x07,
	  2,
	  { 2, 3 },
	  NINE,
	  6,
	  0,
	  ": unknown IDX type 0x07 at offset 2 (known: 0x08 u8, "
	  "0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64)",
	  "unknown type" },
	{ "rank0.idx",
	  0,
	  0x08,
	  0,
	  { 2, 3 },
	  NINE,
	  6,
	  0,
	  ": IDX rank 0 at offset 3 is not in 1..4",
	  "rank 0" },
	{ "rank5.idx",
	  1,
	  0,
	  0,
	  { 0 },
	  "\0\0\x08\x05",
	  4,
	  0,
	  ": IDX rank 5 at offset 3 is not in 1..4",
	  "rank 5" },
	/* Rank 3 needs 4 + 12 = 16 header bytes; 4 + 6 given. */
	{ "hdr.idx",
	  1,
	  0,
	  0,
	  { 0 },
	  "\0\0\x08\x03\0\0\0\x02\0\0",
	  10,
	  0,
	  ": truncated: a rank-3 IDX header has 16 bytes, found 10",
	  "truncated header" },
	/* Dimension 2's size sits at offset 4 + 4 = 8. */
	{ "zero.idx",
	  0,
	  0x08,
	  3,
	  { 2, 0, 3 },
	  NINE,
	  6,
	  0,
	  ": dimension 2 has size 0 (offset 8)",
	  "a size of 0" },
	/* 65536 * 65536 = 2^32 > 2^31 at dimension 2. */
	{ "big.idx",
	  0,
	  0x08,
	  3,
	  { 65536, 65536, 1 },
	  NINE,
	  6,
	  0,
	  ": too large: dimensions 1..2 (offset 8) hold more "
	  "than 2147483648 elements",
	  "more than 2^31 elements" },
	/* 2 x 3 u8 needs 6 data bytes after the 12-byte header. */
	{ "trunc.idx",
	  0,
	  0x08,
	  2,
	  { 2, 3 },
	  NINE,
	  4,
	  0,
	  ": truncated: expected 6 bytes of data after the 12-byte "
	  "header, found 4",
	  "truncated data" },
};

/* Bodies of the wrong size, plain and compressed (the offsets are the
 * same), and values a float cannot hold. */
static const struct idx_failure idx_bad_bodies[] = {
	{ "trail.idx",
	  0,
	  0x08,
	  2,
	  { 2, 3 },
	  NINE,
	  9,
	  0,
	  ": trailing bytes: expected 6 bytes of data after the "
	  "12-byte header, found 9",
	  "trailing bytes" },
	{ "trunc.idx.gz",
	  0,
	  0x08,
	  2,
	  { 2, 3 },
	  NINE,
	  4,
	  1,
	  ": truncated: expected 6 bytes of data after the 12-byte "
	  "header, found 4",
	  "truncated data, gzip" },
	{ "trail.idx.gz",
	  0,
	  0x08,
	  2,
	  { 2, 3 },
	  NINE,
	  9,
	  1,
	  ": trailing bytes: expected 6 bytes of data after the "
	  "12-byte header, found 9",
	  "trailing bytes, gzip" },
	/* f32 NaN (0x7FC00000) as element 1, at offset 8 + 4. */
	{ "nan.idx",
	  0,
	  0x0D,
	  1,
	  { 2 },
	  "\x3F\x80\0\0\x7F\xC0\0\0",
	  8,
	  0,
	  ": element 1 (0-based, at offset 12) is NaN, "
	  "infinite or too large for a float",
	  "f32 NaN" },
};

static void test_idx_errors(void)
{
	static const unsigned char six[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	unsigned long d23[2] = { 2, 3 }, d2[1] = { 2 }, d3[1] = { 3 };
	unsigned char buf[256];
	bnn_idx idx;
	bnn_dataset ds;
	bnn_err e;
	size_t n;
	int rc;

	rc = bnn_idx_read(tpath("missing.idx"), &idx, &e);
	FAILS(rc, &e, BNN_EIO,
	      fmt("%s: cannot open: No such file or directory", tpath("missing.idx")),
	      "missing file");
	ok(idx.data == NULL && idx.count == 0, "failure leaves out zeroed");

	idx_fails(idx_bad_headers, COUNT(idx_bad_headers), &idx);
	ok(idx.data == NULL, "truncated: no data left behind");
	idx_fails(idx_bad_bodies, COUNT(idx_bad_bodies), &idx);

	/* A complete IDX file whose gzip stream is cut short: the last 8
	 * bytes of a gzip file are its CRC-32 and length, so dropping them
	 * loses no data, but the stream is still incomplete.  Then a stream
	 * cut in the middle of the data. */
	{
		static unsigned char big[16 + 60000], gzbuf[70000];
		unsigned long d[3] = { 100, 600, 1 };
		FILE *f;
		size_t i, gzlen;

		for (i = 0; i < 60000; i++) /* poorly compressible */
			big[16 + i] = (unsigned char)((i * 2654435761u) >> 13);
		n = idx_build(buf, 0x08, 3, d, "", 0);
		memcpy(big, buf, n);
		put("whole.idx.gz", big, n + 60000, 1);
		f = fopen(tpath("whole.idx.gz"), "rb");
		gzlen = f ? fread(gzbuf, 1, sizeof gzbuf, f) : 0;
		if (f)
			fclose(f);
		ok(gzlen > 1000 && gzlen < sizeof gzbuf, "the gzip file has %zu bytes", gzlen);
		is_int(bnn_idx_read(tpath("whole.idx.gz"), &idx, &e), 0,
		       "the whole gzip file reads");
		is_int(idx.count, 60000, "it holds 100 * 600 * 1 values");
		bnn_idx_free(&idx);

		put("cut8.idx.gz", gzbuf, gzlen - 8, 0);
		rc = bnn_idx_read(tpath("cut8.idx.gz"), &idx, &e);
		FAILS(rc, &e, BNN_EFORMAT,
		      fmt("%s: corrupt or truncated gzip stream (after 60016 "
		          "uncompressed bytes): unexpected end of file",
		          tpath("cut8.idx.gz")),
		      "gzip without its trailer");

		put("cuthalf.idx.gz", gzbuf, gzlen / 2, 0);
		rc = bnn_idx_read(tpath("cuthalf.idx.gz"), &idx, &e);
		is_int(rc, BNN_EFORMAT, "gzip cut in half: BNN_EFORMAT");
		ok(strstr(e.message, ": corrupt or truncated gzip stream "
		                     "(after ") != NULL &&
		           strstr(e.message, " uncompressed bytes): unexpected end of "
		                             "file"),
		   "gzip cut in half: %s", e.message);
		ok(idx.data == NULL, "gzip cut in half: nothing left behind");

		/* A byte of the compressed data changed: zlib notices. */
		gzbuf[gzlen / 2] ^= 0x55;
		gzbuf[gzlen / 2 + 1] ^= 0xAA;
		put("bad.idx.gz", gzbuf, gzlen, 0);
		rc = bnn_idx_read(tpath("bad.idx.gz"), &idx, &e);
		is_int(rc, BNN_EFORMAT, "corrupt gzip data: BNN_EFORMAT (%s)", e.message);
	}

	{
		/* The f64 1e39 is finite but too large for a float: element
		 * 0, at offset 8 after a rank-1 header. */
		double big = 1e39;
		unsigned long d1[1] = { 1 };
		unsigned char be[8];
		uint64_t u;
		int k;

		memcpy(&u, &big, sizeof u);
		for (k = 0; k < 8; k++) /* big-endian */
			be[k] = (unsigned char)(u >> (56 - 8 * k));
		n = idx_build(buf, 0x0E, 1, d1, be, sizeof be);
		put("f64big.idx", buf, n, 0);
		rc = bnn_idx_read(tpath("f64big.idx"), &idx, &e);
		FAILS(rc, &e, BNN_EFORMAT,
		      fmt("%s: element 0 (0-based, at offset 8) is NaN, "
		          "infinite or too large for a float",
		          tpath("f64big.idx")),
		      "f64 beyond float range");
	}

	/* Labels that do not fit the images. */
	n = idx_build(buf, 0x08, 2, d23, six, 6);
	put("im.idx", buf, n, 0);
	n = idx_build(buf, 0x08, 1, d3, six, 3);
	put("lab3.idx", buf, n, 0);
	rc = bnn_data_load_idx(tpath("im.idx"), tpath("lab3.idx"), &ds, &e);
	FAILS(rc, &e, BNN_EMISMATCH,
	      fmt("labels %s has 3 entries but images %s has 2", tpath("lab3.idx"),
	          tpath("im.idx")),
	      "label count mismatch");
	ok(ds.x == NULL && ds.y == NULL && ds.n == 0, "label mismatch: data set left zeroed");

	rc = bnn_data_load_idx(tpath("im.idx"), tpath("im.idx"), &ds, &e);
	FAILS(rc, &e, BNN_EFORMAT,
	      fmt("labels %s has rank 2; labels must have rank 1 (one label "
	          "per image)",
	          tpath("im.idx")),
	      "rank-2 labels");

	n = idx_build(buf, 0x0D, 1, d2, "\x3f\x80\0\0\0\0\0\0", 8);
	put("flab.idx", buf, n, 0);
	rc = bnn_data_load_idx(tpath("im.idx"), tpath("flab.idx"), &ds, &e);
	FAILS(rc, &e, BNN_EFORMAT,
	      fmt("labels %s has type f32; labels must have an integer type "
	          "(u8, i8, i16 or i32)",
	          tpath("flab.idx")),
	      "f32 labels");

	rc = bnn_data_load_idx(tpath("im.idx"), tpath("nolab.idx"), &ds, &e);
	FAILS(rc, &e, BNN_EIO,
	      fmt("%s: cannot open: No such file or directory", tpath("nolab.idx")),
	      "missing label file");
	rc = bnn_data_load_idx(tpath("pgm.idx"), tpath("lab3.idx"), &ds, &e);
	FAILS(rc, &e, BNN_EFORMAT,
	      fmt("%s: not an IDX file (magic bytes 0x50 0x35 at offset 0)", tpath("pgm.idx")),
	      "bad image file");

	/* A directory opens but cannot be read. */
	rc = bnn_idx_read(tmpdir, &idx, &e);
	FAILS(rc, &e, BNN_EIO,
	      fmt("%s: read error at offset 0: Is a "
	          "directory",
	          tmpdir),
	      "IDX: a directory");

	is_int(bnn_idx_read(tpath("im.idx"), &idx, NULL), 0, "err may be NULL (success)");
	bnn_idx_free(&idx);
	is_int(bnn_idx_read(tpath("pgm.idx"), &idx, NULL), BNN_EFORMAT,
	       "err may be NULL (failure)");
	bnn_idx_free(NULL);
	bnn_dataset_free(NULL);
}

/* Fashion-MNIST's test set, when Debian's package is installed. */
static void test_fashion_mnist(void)
{
	const char *im = FMNIST "t10k-images-idx3-ubyte.gz";
	const char *lb = FMNIST "t10k-labels-idx1-ubyte.gz";
	long count[10] = { 0 }, i, bad = 0;
	float lo = 1, hi = 0;
	bnn_dataset ds;
	bnn_err e = { 0, "" };
	int rc;

	if (access(im, R_OK) || access(lb, R_OK)) {
		tap_skip(12, "Fashion-MNIST not installed in " FMNIST);
		return;
	}
	rc = bnn_data_load_idx(im, lb, &ds, &e);
	if (!is_int(rc, 0, "Fashion-MNIST t10k loads")) {
		tap_diag("%s", e.message);
		tap_skip(11, "Fashion-MNIST did not load");
		return;
	}
	is_int(ds.n, 10000, "t10k: 10000 images");
	is_int(ds.features, 784, "t10k: 28 * 28 = 784 features");
	ok(ds.rank == 2 && ds.shape[0] == 28 && ds.shape[1] == 28, "t10k: images are 28 x 28");
	is_int(ds.targets, 1, "t10k: one label per image");
	for (i = 0; i < ds.n * ds.features; i++) {
		if (ds.x[i] < lo)
			lo = ds.x[i];
		if (ds.x[i] > hi)
			hi = ds.x[i];
	}
	is_float(lo, 0.0, 0, "t10k: darkest pixel is 0");
	is_float(hi, 1.0, 0, "t10k: brightest pixel is 255/255 = 1");
	for (i = 0; i < ds.n; i++) {
		if (ds.y[i] >= 0 && ds.y[i] <= 9 && ds.y[i] == (int)ds.y[i])
			count[(int)ds.y[i]]++;
		else
			bad++;
	}
	is_int(bad, 0, "t10k: every label is in 0..9");
	ok(count[0] == 1000 && count[9] == 1000 && count[5] == 1000,
	   "t10k: 1000 images per class (checked for 0, 5, 9)");
	/* The first five test labels: ankle boot, pullover, trouser,
	 * trouser, shirt. */
	ok(ds.y[0] == 9 && ds.y[1] == 2 && ds.y[2] == 1 && ds.y[3] == 1 && ds.y[4] == 6,
	   "t10k: labels begin 9 2 1 1 6");
	is_int(bnn_data_check_labels(&ds, 10, lb, &e), 0,
	       "t10k: labels pass the check for 10 classes");
	rc = bnn_data_check_labels(&ds, 9, lb, &e);
	is_str(e.message, fmt("%s: example 1: label 9 is outside [0, 9)", lb),
	       "t10k: the first ankle boot fails a 9-class check (rc %d)", rc);
	bnn_dataset_free(&ds);
}

/* ---- CSV ---------------------------------------------------------------- */

/* Load tmpdir/name with the given options; returns the code. */
static int csv(const char *name, const char *target, long targets, int optional, long features,
               bnn_dataset *ds, bnn_err *e)
{
	bnn_csv_options o;

	memset(&o, 0, sizeof o); /* and no expected names */
	o.target = target;
	o.targets = targets;
	o.targets_optional = optional;
	o.features = features;
	return bnn_data_load_csv(tpath(name), &o, ds, e);
}

static void test_csv_ok(void)
{
	bnn_dataset ds;
	bnn_err e = { 0, "" };
	int rc;

	put_text("last.csv", "a,b,y\n1,2,0\n3,4.5,1\n");
	rc = csv("last.csv", NULL, 1, 0, 0, &ds, &e);
	is_int(rc, 0, "default: the last column is the target");
	ok(e.code == 0 && e.message[0] == '\0', "success leaves err untouched");
	ok(ds.n == 2 && ds.features == 2 && ds.targets == 1,
	   "last.csv: 2 examples, 2 features, 1 target");
	ok(ds.rank == 1 && ds.shape[0] == 2, "CSV examples have rank 1");
	ok(ds.x[0] == 1 && ds.x[1] == 2 && ds.x[2] == 3 && ds.x[3] == 4.5f,
	   "last.csv: x = 1 2 / 3 4.5");
	ok(ds.y[0] == 0 && ds.y[1] == 1, "last.csv: y = 0 1");
	ok(ds.columns && !strcmp(ds.columns[0], "a") && !strcmp(ds.columns[1], "b"),
	   "last.csv: feature names a b");
	bnn_dataset_free(&ds);

	rc = csv("last.csv", "b", 0, 0, 2, &ds, &e);
	is_int(rc, 0, "target by name, in the middle");
	ok(ds.features == 2 && ds.targets == 1 && ds.x[0] == 1 && ds.x[1] == 0 && ds.x[2] == 3 &&
	           ds.x[3] == 1,
	   "target b: features a y in file order");
	ok(ds.y[0] == 2 && ds.y[1] == 4.5f, "target b: y = 2 4.5");
	ok(!strcmp(ds.columns[0], "a") && !strcmp(ds.columns[1], "y"),
	   "target b: feature names a y");
	bnn_dataset_free(&ds);

	rc = csv("last.csv", NULL, 0, 0, 0, &ds, &e);
	is_int(rc, 0, "no targets: every column is a feature");
	ok(ds.features == 3 && ds.targets == 0 && ds.y == NULL && ds.x[2] == 0 && ds.x[5] == 1,
	   "no targets: 3 features");
	bnn_dataset_free(&ds);

	put_text("two.csv", "x1,t1,x2,t2\n1,10,2,20\n3,30,4,40\n");
	rc = csv("two.csv", " t2 , t1", 2, 0, 2, &ds, &e);
	is_int(rc, 0, "two targets by name (with blanks)");
	ok(ds.targets == 2 && ds.y[0] == 20 && ds.y[1] == 10 && ds.y[2] == 40 && ds.y[3] == 30,
	   "two targets: y in the order named (t2, t1)");
	ok(ds.x[0] == 1 && ds.x[1] == 2 && ds.x[2] == 3 && ds.x[3] == 4,
	   "two targets: x1 x2 are the features");
	bnn_dataset_free(&ds);
	rc = csv("two.csv", NULL, 2, 0, 0, &ds, &e);
	is_int(rc, 0, "the last two columns as targets");
	ok(ds.features == 2 && ds.y[0] == 2 && ds.y[1] == 20 && ds.x[0] == 1 && ds.x[1] == 10,
	   "last two: x2 t2 are targets");
	bnn_dataset_free(&ds);

	put_text("quoted.csv", "\"a\",\"say \"\"hi\"\"\", \"c,d\" ,y\n"
	                       "\"1.5\", \" -2 \" ,\"3e2\",\"0\"\n");
	rc = csv("quoted.csv", "y", 1, 0, 3, &ds, &e);
	is_int(rc, 0, "quoted fields: %s", e.message);
	ok(ds.n == 1 && ds.x[0] == 1.5f && ds.x[1] == -2 && ds.x[2] == 300 && ds.y[0] == 0,
	   "quoted: 1.5 -2 300 / 0");
	is_str(ds.columns[1], "say \"hi\"", "quoted name with \"\" escapes");
	is_str(ds.columns[2], "c,d", "quoted name with a comma");
	bnn_dataset_free(&ds);

	put_text("crlf.csv", "a,y\r\n1,2\r\n3,4\r\n\r\n");
	rc = csv("crlf.csv", NULL, 1, 0, 1, &ds, &e);
	is_int(rc, 0, "CRLF line ends");
	ok(ds.n == 2 && ds.x[1] == 3 && ds.y[1] == 4, "CRLF: 2 rows");
	is_str(ds.columns[0], "a", "CRLF: names have no \\r");
	bnn_dataset_free(&ds);

	put_text("bom.csv", "\xEF\xBB\xBFid,y\n7,1");
	rc = csv("bom.csv", "id", 1, 0, 0, &ds, &e);
	is_int(rc, 0, "a UTF-8 BOM is skipped (and no final newline)");
	ok(ds.n == 1 && ds.y[0] == 7 && ds.x[0] == 1, "BOM: id is the target");
	bnn_dataset_free(&ds);

	put_text("blanks.csv", " a\t, b ,y \n 1 ,\t-.5\t, +2. \n"
	                       "1e3,1E-2,-0\n\n  \n\t\n");
	rc = csv("blanks.csv", "y", 1, 0, 0, &ds, &e);
	is_int(rc, 0, "blanks around fields, trailing empty lines");
	ok(ds.n == 2 && ds.x[0] == 1 && ds.x[1] == -0.5f && ds.y[0] == 2 && ds.x[2] == 1000 &&
	           ds.x[3] == 0.01f && ds.y[1] == 0,
	   "numbers: 1 -.5 +2. 1e3 1E-2 -0");
	ok(!strcmp(ds.columns[0], "a") && !strcmp(ds.columns[1], "b"), "names are trimmed");
	bnn_dataset_free(&ds);

	/* targets_optional: the file has the features and no target. */
	put_text("pred.csv", "a,b\n1,2\n");
	rc = csv("pred.csv", "y", 1, 1, 2, &ds, &e);
	is_int(rc, 0, "optional named target absent: loads");
	ok(ds.targets == 0 && ds.y == NULL && ds.features == 2,
	   "optional named target absent: no targets");
	bnn_dataset_free(&ds);
	rc = csv("pred.csv", NULL, 1, 1, 2, &ds, &e);
	is_int(rc, 0, "optional last target absent: loads");
	ok(ds.targets == 0 && ds.features == 2, "optional: 2 features");
	bnn_dataset_free(&ds);
	rc = csv("last.csv", "y", 1, 1, 2, &ds, &e);
	ok(rc == 0 && ds.targets == 1 && ds.y[1] == 1, "optional target present: it is read");
	bnn_dataset_free(&ds);

	rc = bnn_data_load_csv(tpath("last.csv"), NULL, &ds, &e);
	ok(rc == 0 && ds.features == 3 && ds.targets == 0, "NULL options: all features");
	bnn_dataset_free(&ds);

	/* targets_skipped: the target columns are found (by name or last) but
	 * not read, whatever they hold; a row still needs every field. */
	{
		bnn_csv_options o;

		memset(&o, 0, sizeof o);
		o.targets = 1;
		o.targets_skipped = 1;
		put_text("skip.csv", "a,y,b\n1,,2\n3,abc,4\n5,\"x, y\",6\n7,nan,8\n");
		o.target = "y";
		rc = bnn_data_load_csv(tpath("skip.csv"), &o, &ds, &e);
		is_int(rc, 0, "targets_skipped: a named target of empty, text, quoted, nan fields");
		ok(ds.n == 4 && ds.features == 2 && ds.targets == 0 && ds.y == NULL &&
		           ds.x[0] == 1 && ds.x[1] == 2 && ds.x[6] == 7 && ds.x[7] == 8,
		   "targets_skipped: the features a, b only, no targets");
		ok(ds.columns && !strcmp(ds.columns[0], "a") && !strcmp(ds.columns[1], "b"),
		   "targets_skipped: feature names a b");
		bnn_dataset_free(&ds);
		put_text("skiplast.csv", "a,b,y\n1,2,7e99\n");
		o.target = NULL;
		rc = bnn_data_load_csv(tpath("skiplast.csv"), &o, &ds, &e);
		ok(rc == 0 && ds.n == 1 && ds.features == 2 && ds.targets == 0 && ds.x[1] == 2,
		   "targets_skipped: the last column, out of float range, not read");
		bnn_dataset_free(&ds);
		put_text("skipshort.csv", "a,b,y\n1,2\n");
		rc = bnn_data_load_csv(tpath("skipshort.csv"), &o, &ds, &e);
		ok(rc == BNN_EFORMAT && strstr(e.message, "row has 2 fields but the header has 3"),
		   "targets_skipped: a row without the target's field is still refused");
	}

	/* A line of more than 1 MB: a million leading zeros. */
	{
		size_t len = 1000000 + 64, k;
		char *big = malloc(len);

		if (!big)
			tap_bail_out("out of memory");
		k = (size_t)sprintf(big, "a,y\n");
		memset(big + k, '0', 1000000);
		k += 1000000;
		sprintf(big + k, "2.5,1\n");
		put_text("long.csv", big);
		free(big);
		rc = csv("long.csv", NULL, 1, 0, 0, &ds, &e);
		ok(rc == 0 && ds.n == 1 && ds.x[0] == 2.5f, "a 1 MB line: 000...0002.5 is 2.5");
		bnn_dataset_free(&ds);
	}

	/* 30000 columns named c0..c29999, and 3 rows. */
	{
		size_t cap = 30000 * 12 + 64, k = 0;
		char *wide = malloc(cap);
		int c, r;

		if (!wide)
			tap_bail_out("out of memory");
		for (c = 0; c < 30000; c++)
			k += (size_t)sprintf(wide + k, "%sc%d", c ? "," : "", c);
		wide[k++] = '\n';
		for (r = 0; r < 3; r++) {
			for (c = 0; c < 30000; c++)
				k += (size_t)sprintf(wide + k, "%s%d", c ? "," : "", (c + r) % 7);
			wide[k++] = '\n';
			if (r == 0) {
				put("wide.csv", wide, k, 0);
				k = 0;
			}
		}
		{
			FILE *f = fopen(tpath("wide.csv"), "ab");

			if (!f || fwrite(wide, 1, k, f) != k || fclose(f))
				tap_bail_out("cannot append to wide.csv");
		}
		free(wide);
		rc = csv("wide.csv", "c12345", 1, 0, 29999, &ds, &e);
		is_int(rc, 0, "30000 columns: %s", e.message);
		/* Row 2 (r = 2): c12345 is (12345 + 2) % 7 = 12347 % 7 = 6;
		 * feature 29998 is column c29999: (29999 + 2) % 7 = 30001 % 7
		 * = 6 (7 * 4285 = 29995); feature 12345 is c12346: 12348 % 7
		 * = 0 (7 * 1764 = 12348). */
		ok(ds.n == 3 && ds.y[2] == 6 && ds.x[2 * 29999 + 29998] == 6 &&
		           ds.x[2 * 29999 + 12345] == 0,
		   "30000 columns: values");
		is_str(ds.columns ? ds.columns[29998] : NULL, "c29999", "30000 columns: last name");
		bnn_dataset_free(&ds);
	}

	/* 20000 rows: the arrays grow. */
	{
		FILE *f;
		long i, okrows = 0;

		remember("rows.csv");
		f = fopen(tpath("rows.csv"), "w");
		if (!f)
			tap_bail_out("cannot write rows.csv");
		fputs("i,half,y\n", f);
		for (i = 0; i < 20000; i++)
			fprintf(f, "%ld,%ld.5,%ld\n", i, i / 2, i % 3);
		if (fclose(f))
			tap_bail_out("cannot write rows.csv");
		rc = csv("rows.csv", NULL, 1, 0, 2, &ds, &e);
		is_int(rc, 0, "20000 rows load");
		is_int(ds.n, 20000, "20000 rows: n");
		for (i = 0; rc == 0 && i < ds.n; i++)
			okrows += ds.x[2 * i] == i && ds.x[2 * i + 1] == i / 2 + 0.5f &&
			          ds.y[i] == i % 3;
		is_int(okrows, 20000, "20000 rows: every value right");
		bnn_dataset_free(&ds);
	}

	/* The fixture in the source tree. */
	{
		const char *top = getenv("top_srcdir");
		char path[1024];
		bnn_csv_options o = { "price", 1, 0, 3 };

		snprintf(path, sizeof path, "%s/t/data/small.csv", top ? top : ".");
		rc = bnn_data_load_csv(path, &o, &ds, &e);
		is_int(rc, 0, "t/data/small.csv loads: %s", rc ? e.message : "ok");
		ok(rc == 0 && ds.n == 5 && ds.features == 3 && ds.targets == 1,
		   "small.csv: 5 examples, 3 features");
		ok(rc == 0 && ds.y[0] == 120.5f && ds.y[4] == 99 && ds.x[0] == 3 && ds.x[14] == 12,
		   "small.csv: first price 120.5, last 99, corners 3 and 12");
		is_str(rc == 0 ? ds.columns[2] : NULL, "age", "small.csv: third feature is age");
		bnn_dataset_free(&ds);
	}
}

/* One CSV file that fails to load: the file (written first unless text
 * is NULL), the options, and the error expected. */
struct csv_failure {
	const char *file;   /* in tmpdir */
	const char *text;   /* its contents, or NULL: written before */
	const char *target; /* options: the target list, or NULL */
	long targets;       /* options: the count of target columns */
	int optional;       /* options: targets_optional */
	long features;      /* options: the model's feature count, or 0 */
	int code;           /* the error code */
	const char *after;  /* the message after the file's path */
	const char *what;   /* the test's name */
};

/* Three tests per failure: the code, err->code and the exact message; *ds
 * is left as the last load left it. */
static void csv_fails(const struct csv_failure *c, int n, bnn_dataset *ds)
{
	bnn_err e;
	int i, rc;

	for (i = 0; i < n; i++) {
		if (c[i].text)
			put_text(c[i].file, c[i].text);
		rc = csv(c[i].file, c[i].target, c[i].targets, c[i].optional, c[i].features, ds,
		         &e);
		FAILS(rc, &e, c[i].code, fmt("%s%s", tpath(c[i].file), c[i].after), "%s",
		      c[i].what);
	}
}

static void test_csv_errors(void)
{
	/* Values that are not finite numbers, and text quoted in messages. */
	/* A file that is not there, then a ragged one: the last row. */
	static const struct csv_failure unreadable[] = {
		{ "nope.csv", NULL, NULL, 1, 0, 0, BNN_EIO,
		  ": cannot open: No such file or directory", "CSV missing" },
		{ "ragged.csv", "a,b,y\n1,2,3\n4,5\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":3: row has 2 fields but the header has 3", "ragged row" },
	};
	static const struct csv_failure values[] = {
		{ "ragged2.csv", "a,y\n1,2,\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2: row has 3 fields but the header has 2", "trailing comma" },
		/* 'abc' starts at byte 7 of "1, 2.5,abc": 1 , space 2 . 5 , a. */
		{ "nan.csv", "x,age,y\n1, 2.5,abc\n", "x", 1, 0, 0, BNN_EFORMAT,
		  ":2:8: column 'y': 'abc' is not a number", "not a number" },
		{ "nan2.csv", "x,age,y\n1,2,3\n4, nan ,6\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":3:4: column 'age': 'nan' is not a finite number", "NaN" },
		{ "inf.csv", "x,y\n-Infinity,1\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:1: column 'x': '-Infinity' is not a finite number", "infinity" },
		{ "empty_field.csv", "x,y\n1,\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:3: column 'y': empty field, expected a number", "empty field" },
		{ "quoted_empty.csv", "x,y\n\"\",1\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:1: column 'x': empty field, expected a number", "quoted empty field" },
		{ "hex.csv", "x,y\n0x10,1\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:1: column 'x': '0x10' is not a number", "hex float" },
		{ "comma.csv", "x,y\n1;5,2\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:1: column 'x': '1;5' is not a number", "semicolon" },
		{ "huge.csv", "x,y\n1e39,1\n", NULL, 1, 0, 0, BNN_ERANGE,
		  ":2:1: column 'x': '1e39' is too large for a float", "too large for float" },
		{ "longfield.csv", "x,y\n1,abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n",
		  NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:3: column 'y': 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN...' is not a number",
		  "long field text is cut at 40 bytes" },
		{ "ctrl.csv", "x,y\n1,a\x01\rb\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:3: column 'y': 'a\\x01\\x0Db' is not a number",
		  "control bytes are escaped in messages" },
		/* 39 ASCII bytes, then U+00E9 (0xC3 0xA9) across the 40-byte cut:
		 * the cut moves back to 39 bytes, before the whole character. */
		{ "utf8.csv", "x,y\n1,abcdefghijklmnopqrstuvwxyz0123456789abc\xC3\xA9z\n", NULL, 1,
		  0, 0, BNN_EFORMAT,
		  ":2:3: column 'y': 'abcdefghijklmnopqrstuvwxyz0123456789abc...' is not a number",
		  "long text is cut between UTF-8 characters" },
		{ "open.csv", "x,y\n1,\"2\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:3: unterminated quoted field", "open quote" },
		{ "after.csv", "x,y\n\"1\"2,3\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":2:4: unexpected text after the closing quote", "text after a quote" },
	};
	/* Target lists that do not fit the header. */
	static const struct csv_failure targets[] = {
		{ "last.csv", NULL, "pric", 1, 0, 0, BNN_EFORMAT,
		  ":1: no target column 'pric' (the columns are: a, b, y)",
		  "unknown target: the list" },
		{ "house.csv", "rooms,Price,age\n3,100,5\n", "price", 1, 0, 0, BNN_EFORMAT,
		  ":1: no target column 'price' (did you mean 'Price'?)",
		  "unknown target: a case slip" },
		{ "house.csv", NULL, "pirce", 1, 0, 0, BNN_EFORMAT,
		  ":1: no target column 'pirce' (did you mean 'Price'?)",
		  "unknown target: a typo" },
		{ "house.csv", NULL, "age,sold", 2, 0, 0, BNN_EFORMAT,
		  ":1: no target column 'sold' (the columns are: rooms, Price, age)",
		  "one of two targets missing" },
		{ "house.csv", NULL, "age,,rooms", 0, 0, 0, BNN_EINVAL,
		  ": empty column name in the target list 'age,,rooms'",
		  "empty name in the target list" },
		{ "house.csv", NULL, "age,", 1, 0, 0, BNN_EINVAL,
		  ": empty column name in the target list 'age,'",
		  "a stray comma is an empty name, not a second target" },
		{ "house.csv", NULL, "age,,rooms", 2, 0, 0, BNN_EINVAL,
		  ": empty column name in the target list 'age,,rooms'",
		  "an empty name before the count" },
		{ "house.csv", NULL, "age,age", 0, 0, 0, BNN_EINVAL,
		  ": target column 'age' named twice in 'age,age'", "target named twice" },
		{ "house.csv", NULL, "age", 2, 0, 0, BNN_EINVAL,
		  ": 1 target column named ('age') but 2 expected",
		  "targets count disagrees with the names" },
		{ "house.csv", NULL, "rooms,Price,age", 0, 0, 0, BNN_EFORMAT,
		  ":1: no feature columns: every column is a target", "every column a target" },
		{ "house.csv", NULL, NULL, 3, 0, 0, BNN_EFORMAT,
		  ":1: 3 columns: too few for 3 target columns and at least one feature",
		  "too few columns for the targets" },
	};
	/* Headers, empty lines and shapes that do not fit the options. */
	static const struct csv_failure shapes[] = {
		{ "dup.csv", "a,b,a,y\n1,2,3,4\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":1:5: duplicate column name 'a' (columns 1 and 3)", "duplicate name" },
		{ "noname.csv", "a,,y\n1,2,3\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":1:3: column 2 has an empty name", "empty name" },
		{ "nohdr.csv", "-0.5,2,1\n1,2,0\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":1: the first line is a row of numbers ('-0.5', ...), not a header of column "
		  "names: a CSV file starts with one (docs/data.md)",
		  "a row of numbers for a header" },
		{ "nohdr1.csv", " 3 \n1\n", NULL, 0, 0, 0, BNN_EFORMAT,
		  ":1: the first line is a row of numbers ('3'), not a header of column names: a "
		  "CSV file starts with one (docs/data.md)",
		  "one number for a header" },
		{ "empty.csv", "", NULL, 1, 0, 0, BNN_EFORMAT,
		  ": empty file (expected a header row of column names)", "empty file" },
		{ "blank.csv", "\n \r\n\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ": empty file (expected a header row of column names)", "only empty lines" },
		{ "nohead.csv", "\na,y\n1,2\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":1: the header row is empty", "empty first line" },
		{ "header.csv", "a,b,y\r\n\r\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ": no examples: the file has a header row but no data rows", "header only" },
		{ "mac.csv", "a,b,y\r1,2,0\r3,4,1\r", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":1:6: carriage return within the header line: a CR alone (as classic Mac OS "
		  "ended lines) is not a line break; the lines of a CSV file end in LF or CRLF",
		  "lines ended by CR alone" },
		{ "gap.csv", "a,y\n1,2\n\n3,4\n", NULL, 1, 0, 0, BNN_EFORMAT,
		  ":3: empty line (only the end of the file may have empty lines)",
		  "empty line in the middle" },
		{ "last.csv", NULL, NULL, 1, 0, 3, BNN_EMISMATCH,
		  ": 2 feature columns but the model takes 3", "feature count mismatch" },
		{ "pred.csv", NULL, "y", 1, 0, 2, BNN_EFORMAT,
		  ":1: no target column 'y' (the columns are: a, b)",
		  "target required when not optional" },
		/* 2 columns, not the model's 3: the last one is taken as the
		 * target after all, leaving 1 feature. */
		{ "pred.csv", NULL, NULL, 1, 1, 3, BNN_EMISMATCH,
		  ": 1 feature column but the model takes 3", "optional target, wrong width" },
		{ "last.csv", NULL, NULL, -1, 0, 0, BNN_EINVAL,
		  ": negative count of target columns in the options", "negative targets" },
	};
	bnn_dataset ds;
	bnn_err e;
	int rc;

	rc = bnn_data_load_csv(tmpdir, NULL, &ds, &e);
	FAILS(rc, &e, BNN_EIO, fmt("%s:1: read error: Is a directory", tmpdir), "CSV: a directory");

	csv_fails(unreadable, COUNT(unreadable), &ds);
	ok(ds.x == NULL && ds.columns == NULL && ds.n == 0, "ragged: data set left zeroed");
	csv_fails(values, COUNT(values), &ds);

	/* Not in a table: the text holds a NUL, which put_text would cut. */
	put("nul.csv", "x,y\n1,2\0\n", 9, 0);
	rc = csv("nul.csv", NULL, 1, 0, 0, &ds, &e);
	FAILS(rc, &e, BNN_EFORMAT,
	      fmt("%s:2:4: NUL byte (is this a text "
	          "file?)",
	          tpath("nul.csv")),
	      "NUL byte");

	csv_fails(targets, COUNT(targets), &ds);

	csv_fails(shapes, COUNT(shapes), &ds);
	is_int(bnn_data_load_csv(tpath("ragged.csv"), NULL, &ds, NULL), BNN_EFORMAT,
	       "CSV: err may be NULL");

	/* Numbers among names are names: only a first line of numbers alone
	 * is taken for data. */
	put_text("numhdr.csv", "1,2,y\n4,5,0\n");
	rc = csv("numhdr.csv", NULL, 1, 0, 0, &ds, &e);
	is_int(rc, BNN_OK, "CSV: numeric names beside a name are a header");
	ok(rc == BNN_OK && ds.n == 1 && ds.features == 2 && ds.x[0] == 4 && ds.y[0] == 0,
	   "CSV: the header of numbers and a name keeps the one example");
	if (rc == BNN_OK)
		bnn_dataset_free(&ds);
}

/* ---- standardisation and labels ----------------------------------------- */

static void test_standardize(void)
{
	float x[6] = { 1, 5, 2, 5, 3, 5 }; /* feature 0: 1 2 3; 1: 5 5 5 */
	float big[4] = { 1e6f + 1, 1e6f + 3, 1e6f + 1, 1e6f + 3 };
	bnn_dataset ds = { 3, 2, 1, { 2 }, 0, x, NULL, NULL, NULL };
	bnn_dataset d4 = { 4, 1, 1, { 1 }, 0, big, NULL, NULL };
	bnn_dataset other = { 3, 3, 1, { 3 }, 0, x, NULL, NULL, NULL };
	bnn_dataset none = { 0, 2, 1, { 2 }, 0, x, NULL, NULL, NULL };
	bnn_standardizer s;
	bnn_err e;
	int rc;

	rc = bnn_standardizer_fit(&ds, &s, &e);
	is_int(rc, 0, "fit");
	is_int(s.features, 2, "fit: 2 features");
	/* mean (1+2+3)/3 = 2; variance ((-1)^2 + 0 + 1^2)/3 = 2/3;
	 * std sqrt(2/3) = 0.816496580927726. */
	is_float(s.mean[0], 2.0, 0, "mean of 1 2 3 is 2");
	is_rel(s.std[0], 0.816496580927726, 1e-7, "population std of 1 2 3 is sqrt(2/3)");
	is_float(s.mean[1], 5.0, 0, "mean of 5 5 5 is 5");
	is_float(s.std[1], 1.0, 0, "a constant feature gets std 1");
	rc = bnn_standardizer_apply(&s, &ds, &e);
	is_int(rc, 0, "apply");
	/* (1 - 2)/sqrt(2/3) = -sqrt(3/2) = -1.224744871391589. */
	is_rel(x[0], -1.224744871391589, 1e-6, "x00 -> -sqrt(3/2)");
	is_float(x[2], 0.0, 0, "x10 -> 0");
	is_rel(x[4], 1.224744871391589, 1e-6, "x20 -> sqrt(3/2)");
	ok(x[1] == 0 && x[3] == 0 && x[5] == 0, "the constant feature is only centred");
	FAILS(bnn_standardizer_apply(&s, &other, &e), &e, BNN_EMISMATCH,
	      "the standardizer has 2 features but the data set has 3", "apply to the wrong width");
	bnn_standardizer_free(&s);
	ok(s.mean == NULL && s.std == NULL && s.features == 0, "bnn_standardizer_free zeroes it");
	bnn_standardizer_free(NULL);

	/* 1e6+1, 1e6+3 (exact in float): mean 1e6+2, deviations +-1, std 1
	 * exactly; the two-pass method keeps it so. */
	rc = bnn_standardizer_fit(&d4, &s, &e);
	ok(rc == 0 && s.mean[0] == 1e6f + 2 && s.std[0] == 1.0f, "large mean: mean 1e6+2, std 1");
	bnn_standardizer_free(&s);

	FAILS(bnn_standardizer_fit(&none, &s, &e), &e, BNN_EINVAL,
	      "cannot standardise: the data set has no examples", "fit on no examples");
	ok(s.mean == NULL, "failed fit leaves it zeroed");
}

static void test_labels(void)
{
	float y[4] = { 0, 9, 3, 1 };
	float x[4] = { 0, 0, 0, 0 };
	float y2[4] = { 0, 1, 1, 2 }; /* 2 examples x 2 targets */
	bnn_dataset ds = { 4, 1, 1, { 1 }, 1, x, y, NULL, NULL };
	bnn_dataset ml = { 2, 2, 1, { 2 }, 2, x, y2, NULL, NULL };
	bnn_dataset nolab = { 4, 1, 1, { 1 }, 0, x, NULL, NULL, NULL };
	bnn_err e = { 0, "" };

	is_int(bnn_data_check_labels(&ds, 10, "f.csv", &e), 0, "labels 0 9 3 1 are in [0, 10)");
	is_int(e.code, 0, "success leaves err untouched");
	FAILS(bnn_data_check_labels(&ds, 9, "f.csv", &e), &e, BNN_ERANGE,
	      "f.csv: example 2: label 9 is outside [0, 9)",
	      "label too large (example 2, 1-based)");
	y[2] = 2.5f;
	FAILS(bnn_data_check_labels(&ds, 10, "f.csv", &e), &e, BNN_EFORMAT,
	      "f.csv: example 3: label 2.5 is not an integer", "non-integer label");
	y[2] = -1;
	FAILS(bnn_data_check_labels(&ds, 10, "f.csv", &e), &e, BNN_ERANGE,
	      "f.csv: example 3: label -1 is outside [0, 10)", "negative label");
	y[2] = NAN;
	FAILS(bnn_data_check_labels(&ds, 10, "f.csv", &e), &e, BNN_EFORMAT,
	      "f.csv: example 3: label nan is not an integer", "NaN label");
	FAILS(bnn_data_check_labels(&ml, 2, "m.csv", &e), &e, BNN_ERANGE,
	      "m.csv: example 2, target 2: label 2 is outside [0, 2)",
	      "multi-label: 2 is not in {0, 1}");
	y2[3] = 0;
	is_int(bnn_data_check_labels(&ml, 2, "m.csv", &e), 0, "multi-label 0 1 / 1 0 passes k = 2");
	FAILS(bnn_data_check_labels(&nolab, 2, "p.csv", &e), &e, BNN_EINVAL,
	      "p.csv: the data set has no labels", "no targets");
	FAILS(bnn_data_check_labels(&ds, 0, "f.csv", &e), &e, BNN_EINVAL,
	      "f.csv: bnn_data_check_labels: k must be at least 1", "k = 0");
}

/* The feature names a CSV file must have (bnn_csv_options.columns), the
 * target names kept in the data set, and the header read alone
 * (bnn_data_csv_header). */
static void test_csv_names(void)
{
	static const char *const want[] = { "rooms", "area", "age" };
	bnn_csv_options o = { "price", 1, 0, 3, want, 3, 0 };
	bnn_dataset ds;
	bnn_err e;
	int rc;

	put_text("named.csv", "price,rooms,area,age\n1,2,3,4\n5,6,7,8\n");
	put_text("swapped.csv", "rooms, age ,area,price\n2,4,3,1\n");
	rc = bnn_data_load_csv(tpath("named.csv"), &o, &ds, &e);
	is_int(rc, 0, "the expected names in order load, the target first: %s",
	       rc ? e.message : "ok");
	is_str(rc == 0 ? ds.target_columns[0] : NULL, "price", "the target's name is kept");
	bnn_dataset_free(&ds);
	rc = bnn_data_load_csv(tpath("swapped.csv"), &o, &ds, &e);
	is_int(rc, BNN_EMISMATCH, "a feature column out of order is refused");
	ok(strstr(e.message, "swapped.csv:1:8: column 2 is 'age' where 'area' is expected (the "
	                     "feature columns, in order: rooms, area, age)") != NULL,
	   "naming it, its position and the expected names: %s", e.message);
	rc = bnn_data_csv_header(tpath("named.csv"), &o, &ds, &e);
	ok(rc == 0 && ds.n == 0 && !ds.x && !ds.y && ds.features == 3 && ds.targets == 1 &&
	           !strcmp(ds.columns[2], "age"),
	   "the header alone: 3 features, 1 target, no rows");
	bnn_dataset_free(&ds);
	rc = bnn_data_csv_header(tpath("swapped.csv"), &o, &ds, &e);
	is_int(rc, BNN_EMISMATCH, "the header alone is checked too");
}

int main(void)
{
	const char *base = getenv("TMPDIR");
	int i;

	if (!base || !*base)
		base = "/tmp";
	snprintf(tmpdir, sizeof tmpdir, "%s/bnn-data-XXXXXX", base);
	if (!mkdtemp(tmpdir))
		tap_bail_out("cannot create a directory in %s", base);

	test_idx_u8();
	test_idx_types();
	test_idx_errors();
	test_fashion_mnist();
	test_csv_ok();
	test_csv_errors();
	test_csv_names();
	test_standardize();
	test_labels();

	for (i = 0; i < ncreated; i++)
		unlink(tpath(created[i]));
	if (rmdir(tmpdir))
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}
