/*
 * runtime_checkpoint.c: TAP tests of libbnn's checkpoint file format
 * (runtime/include/bnn_checkpoint.h, checkpoint.c, crc32.c; docs/checkpoint.md).
 *
 * bnn_crc32 is checked against its definition (every table entry against
 * the bitwise loop), against the published check value and against zlib,
 * which the test links as an oracle.  The byte layout is checked against a
 * tiny checkpoint written out by hand.  Round trips keep every float's bits
 * (-0, subnormals, infinities, NaN payloads) and every text byte (empty,
 * UTF-8).  Every error path is checked with its exact message: not a
 * checkpoint, newer version, truncation at every length of the tiny file,
 * a corrupted byte at every offset, trailing bytes, and files with a valid
 * CRC but invalid content built with zlib's crc32.  Saving is checked to
 * be atomic: a save that fails (unwritable directory, missing directory,
 * a directory in the way, a write failing half way through under
 * RLIMIT_FSIZE) leaves the previous file as it was and no temporary file
 * behind.  Files go to a fresh directory under $TMPDIR (or /tmp), removed
 * at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bnn.h"
#include "tap.h"

#define PATH_LEN 4096

static char dir[1024]; /* the scratch directory of this run */
static bnn_err err;    /* the last error */

/* ---- helpers ----------------------------------------------------------- */

/* buf = dir/name */
static char *in_dir(char *buf, const char *name)
{
	snprintf(buf, PATH_LEN, "%s/%s", dir, name);
	return buf;
}

static int write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int good;

	if (!f)
		return 0;
	good = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && good;
}

/* The whole file (malloc'd, *n bytes), or NULL. */
static unsigned char *read_bytes(const char *path, size_t *n)
{
	unsigned char *b = malloc(1 << 21);
	FILE *f = fopen(path, "rb");

	*n = 0;
	if (!f || !b) {
		if (f)
			fclose(f);
		free(b);
		return NULL;
	}
	*n = fread(b, 1, 1 << 21, f);
	fclose(f);
	return b;
}

/* Whether the file at path holds exactly the n bytes at p. */
static int file_is(const char *path, const void *p, size_t n)
{
	size_t got;
	unsigned char *b = read_bytes(path, &got);
	int same = b && got == n && memcmp(b, p, n) == 0;

	free(b);
	return same;
}

/* Entries of directory d whose name contains ".tmp." (-1: unreadable). */
static int count_temps(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp)) != NULL)
		if (strstr(e->d_name, ".tmp."))
			n++;
	closedir(dp);
	return n;
}

/* Remove d and everything in it (two levels are enough here). */
static void remove_tree(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	struct stat st;
	char p[PATH_LEN];

	if (dp) {
		while ((e = readdir(dp)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(p, sizeof p, "%s/%s", d, e->d_name);
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				chmod(p, 0755);
				remove_tree(p);
			} else {
				unlink(p);
			}
		}
		closedir(dp);
	}
	rmdir(d);
}

/* Load path; return the code and free the checkpoint.  err gets the
 * message (cleared first). */
static int load_rc(const char *path)
{
	bnn_ckpt *ck = (bnn_ckpt *)&err; /* must be set to NULL on failure */
	int rc;

	bnn_err_clear(&err);
	rc = bnn_ckpt_load(path, &ck, &err);
	if (rc != BNN_OK && ck != NULL) {
		tap_diag("load failed but did not set *out to NULL");
		return -1;
	}
	bnn_ckpt_free(ck);
	return rc;
}

/* Write n bytes to dir/name and load them; err gets the message. */
static int load_bytes(const char *name, const void *p, size_t n)
{
	char path[PATH_LEN];

	if (!write_bytes(in_dir(path, name), p, n))
		tap_bail_out("cannot write %s", path);
	return load_rc(path);
}

static uint32_t bits_of(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

static float float_of(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/* A fixed-seed 64-bit LCG (Knuth's MMIX constants), top 32 bits out. */
static uint32_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 32);
}

/* A file image built field by field, for files with a valid CRC but
 * invalid content. */
struct img {
	unsigned char b[8192]; /* the bytes */
	size_t n;              /* used */
};

static void img_bytes(struct img *m, const void *p, size_t n)
{
	if (m->n + n > sizeof m->b)
		tap_bail_out("test image too large");
	if (n > 0)
		memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void img_u32(struct img *m, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
		               (unsigned char)(v >> 24) };

	img_bytes(m, b, 4);
}

static void img_u64(struct img *m, uint64_t v)
{
	img_u32(m, (uint32_t)v);
	img_u32(m, (uint32_t)(v >> 32));
}

/* Magic, version, count, fingerprint 7, model name of name_len bytes. */
static void img_header(struct img *m, uint32_t version, uint32_t count, const void *name,
                       uint32_t name_len)
{
	m->n = 0;
	img_bytes(m, "BNNCKPT", 8); /* with its NUL */
	img_u32(m, version);
	img_u32(m, count);
	img_u64(m, 7);
	img_u32(m, name_len);
	img_bytes(m, name, name_len);
}

static void img_section(struct img *m, const void *name, uint32_t name_len, uint32_t type,
                        uint64_t count, const void *data, size_t data_len)
{
	img_u32(m, name_len);
	img_bytes(m, name, name_len);
	img_u32(m, type);
	img_u64(m, count);
	img_bytes(m, data, data_len);
}

/* Append zlib's CRC-32 of everything so far. */
static void img_crc(struct img *m)
{
	uLong c = crc32(0L, Z_NULL, 0);

	img_u32(m, (uint32_t)crc32(c, m->b, (uInt)m->n));
}

/*
 * The tiny checkpoint, byte by byte: fingerprint 0x0123456789abcdef, model
 * "m", section "w" f32 {1, -2}, section "t" text "hi".  77 bytes.
 */
static const unsigned char tiny[77] = {
	/*  0 magic            */ 'B',
	'N',
	'N',
	'C',
	'K',
	'P',
	'T',
	0,
	/*  8 version 1        */ 1,
	0,
	0,
	0,
	/* 12 2 sections       */ 2,
	0,
	0,
	0,
	/* 16 fingerprint      */ 0xef,
	0xcd,
	0xab,
	0x89,
	0x67,
	0x45,
	0x23,
	0x01,
	/* 24 name length 1    */ 1,
	0,
	0,
	0,
	/* 28 model name       */ 'm',
	/* 29 name length 1    */ 1,
	0,
	0,
	0,
	/* 33 section name     */ 'w',
	/* 34 type 1 (f32)     */ 1,
	0,
	0,
	0,
	/* 38 count 2          */ 2,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	/* 46 1.0f: 0x3f800000 */ 0x00,
	0x00,
	0x80,
	0x3f,
	/* 50 -2.0f: 0xc0000000 */ 0x00,
	0x00,
	0x00,
	0xc0,
	/* 54 name length 1    */ 1,
	0,
	0,
	0,
	/* 58 section name     */ 't',
	/* 59 type 2 (text)    */ 2,
	0,
	0,
	0,
	/* 63 count 2          */ 2,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	/* 71 text             */ 'h',
	'i',
	/* 73 CRC-32 of bytes 0..72, 0x6c05079b (zlib.crc32 in Python) */
	0x9b,
	0x07,
	0x05,
	0x6c,
};

static bnn_ckpt *tiny_ckpt(void)
{
	static const float w[2] = { 1.0f, -2.0f };
	bnn_ckpt *ck = bnn_ckpt_new(0x0123456789abcdefULL, "m");

	if (!ck || bnn_ckpt_add_f32(ck, "w", w, 2) != BNN_OK ||
	    bnn_ckpt_add_text(ck, "t", "hi") != BNN_OK)
		tap_bail_out("cannot build the tiny checkpoint");
	return ck;
}

/* Save ck to path; err gets the message (cleared first). */
static int save_rc(const bnn_ckpt *ck, const char *path)
{
	bnn_err_clear(&err);
	return bnn_ckpt_save(ck, path, &err);
}

/* ---- CRC-32 -------------------------------------------------------------- */

static void test_crc32(void)
{
	unsigned char buf[10000];
	uint64_t seed = 1;
	uint32_t c, t;
	size_t i, bad_table = 256, bad_zlib = 256;
	static const size_t splits[] = { 0, 1, 7, 4999, 9999, 10000 };
	int k;

	/* The check value of CRC-32/ISO-HDLC (the catalogue of parametrised
	 * CRC algorithms): crc("123456789") = 0xcbf43926. */
	is_int(bnn_crc32(0, "123456789", 9), 0xcbf43926U, "crc32(\"123456789\") is 0xcbf43926");
	/* zlib.crc32(b"The quick brown fox jumps over the lazy dog") */
	is_int(bnn_crc32(0, "The quick brown fox jumps over the lazy dog", 43), 0x414fa339U,
	       "crc32 of the quick brown fox is 0x414fa339");
	is_int(bnn_crc32(0, NULL, 0), 0, "crc32 of nothing is 0");
	is_int(bnn_crc32(0x12345678U, NULL, 0), 0x12345678U,
	       "continuing over nothing keeps the crc");
	/* crc of one byte b: c = 0xffffffff; c = T[(c ^ b) & 0xff] ^ (c >> 8);
	 * return ~c, i.e. T[b ^ 0xff] ^ 0xff000000: every entry shows. */
	for (i = 0; i < 256; i++) {
		unsigned char b = (unsigned char)(i ^ 0xff);

		t = (uint32_t)i;
		for (k = 0; k < 8; k++)
			t = (t & 1) ? 0xedb88320U ^ (t >> 1) : t >> 1;
		c = bnn_crc32(0, &b, 1);
		if ((c ^ 0xff000000U) != t && bad_table == 256)
			bad_table = i;
		if (c != (uint32_t)crc32(0L, &b, 1) && bad_zlib == 256)
			bad_zlib = i;
	}
	is_int(bad_table, 256, "every table entry matches the bitwise loop");
	is_int(bad_zlib, 256, "every single byte agrees with zlib");

	for (i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(lcg(&seed) >> 24);
	is_int(bnn_crc32(0, buf, sizeof buf), (uint32_t)crc32(0L, buf, (uInt)sizeof buf),
	       "10000 pseudo-random bytes agree with zlib");
	for (i = 0; i < sizeof splits / sizeof splits[0]; i++) {
		size_t s = splits[i];

		c = bnn_crc32(bnn_crc32(0, buf, s), buf + s, sizeof buf - s);
		is_int(c, (uint32_t)crc32(0L, buf, (uInt)sizeof buf),
		       "crc continued after %zu bytes equals the crc of the whole", s);
	}
}

/* ---- building, finding ------------------------------------------------- */

static void test_api(void)
{
	static const float a[3] = { 1.0f, 2.0f, 3.0f };
	static const float b[1] = { 9.0f };
	char name[BNN_CKPT_MODEL_NAME_MAX + 2];
	const float *x;
	bnn_ckpt *ck;
	long n = 99;

	ck = bnn_ckpt_new(42, NULL);
	ok(ck != NULL, "bnn_ckpt_new with a NULL name");
	if (!ck)
		tap_bail_out("out of memory");
	is_str(bnn_ckpt_model_name(ck), "", "a NULL model name is \"\"");
	is_int(bnn_ckpt_fingerprint(ck), 42, "the fingerprint is kept");

	is_int(bnn_ckpt_add_f32(ck, "a", a, 3), BNN_OK, "add f32 'a'");
	is_int(bnn_ckpt_add_f32(ck, "a", b, 1), BNN_EINVAL, "a second f32 'a' is rejected");
	is_int(bnn_ckpt_add_text(ck, "a", "x"), BNN_EINVAL,
	       "a text 'a' after the f32 'a' is rejected");
	x = bnn_ckpt_find_f32(ck, "a", &n);
	ok(x != NULL && n == 3 && x[0] == 1.0f && x[2] == 3.0f,
	   "'a' is unchanged by the rejected additions");
	is_int(bnn_ckpt_add_text(ck, "s", "hello"), BNN_OK, "add text 's'");
	is_int(bnn_ckpt_add_f32(ck, "s", a, 1), BNN_EINVAL,
	       "an f32 's' after the text 's' is rejected");
	is_str(bnn_ckpt_find_text(ck, "s"), "hello", "find text 's'");

	is_int(bnn_ckpt_add_f32(ck, "", a, 1), BNN_EINVAL, "empty name rejected");
	is_int(bnn_ckpt_add_text(ck, "", "x"), BNN_EINVAL, "empty text name rejected");
	is_int(bnn_ckpt_add_f32(ck, NULL, a, 1), BNN_EINVAL, "NULL name rejected");
	is_int(bnn_ckpt_add_f32(NULL, "z", a, 1), BNN_EINVAL, "NULL ck rejected");
	is_int(bnn_ckpt_add_text(ck, "z", NULL), BNN_EINVAL, "NULL text rejected");
	is_int(bnn_ckpt_add_f32(ck, "z", a, -1), BNN_EINVAL, "n < 0 rejected");
	is_int(bnn_ckpt_add_f32(ck, "z", NULL, 2), BNN_EINVAL, "NULL data with n > 0 rejected");
	memset(name, 'q', BNN_CKPT_SECTION_NAME_MAX + 1);
	name[BNN_CKPT_SECTION_NAME_MAX + 1] = '\0';
	is_int(bnn_ckpt_add_f32(ck, name, a, 1), BNN_EINVAL, "a 256-byte section name is rejected");
	name[BNN_CKPT_SECTION_NAME_MAX] = '\0';
	is_int(bnn_ckpt_add_f32(ck, name, a, 1), BNN_OK, "a 255-byte section name is accepted");
	is_int(bnn_ckpt_add_f32(ck, "empty", NULL, 0), BNN_OK,
	       "an empty f32 section with NULL data");

	x = bnn_ckpt_find_f32(ck, "empty", &n);
	ok(x != NULL && n == 0, "an empty f32 section is found, n = 0");
	n = 99;
	ok(bnn_ckpt_find_f32(ck, "nope", &n) == NULL && n == 0,
	   "a missing f32 section is NULL with n = 0");
	n = 99;
	ok(bnn_ckpt_find_f32(ck, "s", &n) == NULL && n == 0,
	   "find_f32 of a text section is NULL with n = 0");
	ok(bnn_ckpt_find_text(ck, "a") == NULL, "find_text of an f32 section is NULL");
	ok(bnn_ckpt_find_text(ck, "nope") == NULL, "a missing text is NULL");
	ok(bnn_ckpt_find_f32(ck, "a", NULL) != NULL, "find_f32 with n NULL");
	bnn_ckpt_free(ck);
	bnn_ckpt_free(NULL);

	memset(name, 'm', BNN_CKPT_MODEL_NAME_MAX + 1);
	name[BNN_CKPT_MODEL_NAME_MAX + 1] = '\0';
	ok(bnn_ckpt_new(1, name) == NULL, "a 4097-byte model name is refused");
	name[BNN_CKPT_MODEL_NAME_MAX] = '\0';
	ck = bnn_ckpt_new(1, name);
	ok(ck != NULL && strlen(bnn_ckpt_model_name(ck)) == 4096,
	   "a 4096-byte model name is accepted");
	bnn_ckpt_free(ck);
}

/* ---- the byte layout ----------------------------------------------------- */

static void test_layout(void)
{
	char path[PATH_LEN];
	unsigned char *got;
	size_t n, i;
	bnn_ckpt *ck = tiny_ckpt();

	is_int((uint32_t)crc32(0L, tiny, 73), 0x6c05079bU,
	       "zlib's crc32 of the hand-written bytes is 0x6c05079b");
	is_int(bnn_crc32(0, tiny, 73), 0x6c05079bU,
	       "bnn_crc32 of the hand-written bytes is 0x6c05079b");
	is_int(save_rc(ck, in_dir(path, "tiny.ckpt")), BNN_OK, "save tiny");
	got = read_bytes(path, &n);
	is_int(n, sizeof tiny, "tiny is 77 bytes");
	for (i = 0; got && i < n && i < sizeof tiny; i++)
		if (got[i] != tiny[i])
			break;
	if (!is_int(i, sizeof tiny, "tiny matches the hand-written bytes") && got && i < n)
		tap_diag("first difference at offset %zu: got 0x%02x, want 0x%02x", i, got[i],
		         tiny[i]);
	free(got);
	bnn_ckpt_free(ck);
}

/* ---- round trips ----------------------------------------------------------- */

static void test_round_trip(void)
{
	/* Bit patterns, each with its meaning. */
	static const uint32_t special[] = {
		0x00000000U, /* +0 */
		0x80000000U, /* -0 */
		0x00000001U, /* smallest subnormal, 2^-149 */
		0x807fffffU, /* largest subnormal, negative */
		0x00800000U, /* FLT_MIN */
		0x7f7fffffU, /* FLT_MAX */
		0x7f800000U, /* +inf */
		0xff800000U, /* -inf */
		0x7fc00000U, /* the default quiet NaN */
		0xffc12345U, /* a negative quiet NaN with a payload */
		0x7f800001U, /* a signalling NaN, payload 1 */
		0x3f800000U, /* 1 */
		0x3eaaaaabU, /* 1/3 rounded to nearest */
	};
	enum {
		NSPECIAL = sizeof special / sizeof special[0],
		NBIG = 5000
	};
	static const char text[] = "Gr\xc3\xbc\xc3\x9f"
	                           "e, \xe4\xb8\x96\xe7\x95\x8c "
	                           "\xf0\x9f\x99\x82\nline 2\ttab";
	static const char model[] = "gr\xc3\xb6\xc3\x9f"
	                            "e-net \xe2\x88\x91";
	float sp[NSPECIAL], *big = malloc(NBIG * sizeof *big);
	char path[PATH_LEN], path2[PATH_LEN];
	unsigned char *b1, *b2;
	size_t n1, n2, i, bad;
	uint64_t seed = 2024;
	bnn_ckpt *ck, *back = NULL;
	const float *x;
	long n;

	if (!big)
		tap_bail_out("out of memory");
	for (i = 0; i < NSPECIAL; i++)
		sp[i] = float_of(special[i]);
	for (i = 0; i < NBIG; i++)
		big[i] = float_of(lcg(&seed)); /* any bits, NaNs included */
	ck = bnn_ckpt_new(0xfedcba9876543210ULL, model);
	if (!ck || bnn_ckpt_add_f32(ck, "special", sp, NSPECIAL) ||
	    bnn_ckpt_add_f32(ck, "empty", NULL, 0) || bnn_ckpt_add_f32(ck, "big", big, NBIG) ||
	    bnn_ckpt_add_text(ck, "note", "") || bnn_ckpt_add_text(ck, "utf8", text))
		tap_bail_out("cannot build the round-trip checkpoint");
	is_int(save_rc(ck, in_dir(path, "rt.ckpt")), BNN_OK, "save round trip");
	b1 = read_bytes(path, &n1);
	/* 28 header + 15 model name ("ö", "ß" 2 bytes, "∑" 3)
	 * + special 4 + 7 + 12 + 13 * 4 = 75, empty 4 + 5 + 12 = 21,
	 * big 4 + 3 + 12 + 5000 * 4 = 20019, note 4 + 4 + 12 = 20,
	 * utf8 4 + 4 + 12 + 31 = 51 ("ü" "ß" 2, "世" "界" 3, "🙂" 4),
	 * + 4 CRC = 20233 */
	is_int(n1, 20233, "the round-trip file is 20233 bytes");

	is_int(bnn_ckpt_load(path, &back, &err), BNN_OK, "load round trip");
	if (!back)
		tap_bail_out("cannot load %s: %s", path, err.message);
	is_int(bnn_ckpt_fingerprint(back), 0xfedcba9876543210ULL, "fingerprint survives");
	is_str(bnn_ckpt_model_name(back), model, "UTF-8 model name survives");

	x = bnn_ckpt_find_f32(back, "special", &n);
	is_int(n, NSPECIAL, "special has 13 floats");
	for (i = 0; x && i < NSPECIAL; i++)
		is_int(bits_of(x[i]), special[i], "special[%zu] keeps bits 0x%08lx", i,
		       (unsigned long)special[i]);
	x = bnn_ckpt_find_f32(back, "empty", &n);
	ok(x != NULL && n == 0, "the empty f32 section survives");
	x = bnn_ckpt_find_f32(back, "big", &n);
	is_int(n, NBIG, "big has 5000 floats");
	for (bad = 0, i = 0; x && i < NBIG; i++)
		if (bits_of(x[i]) != bits_of(big[i]))
			bad++;
	ok(x && bad == 0, "all 5000 pseudo-random bit patterns survive");
	is_str(bnn_ckpt_find_text(back, "note"), "", "the empty text survives");
	is_str(bnn_ckpt_find_text(back, "utf8"), text, "the UTF-8 text survives");

	is_int(save_rc(back, in_dir(path2, "rt2.ckpt")), BNN_OK, "save the loaded checkpoint");
	b2 = read_bytes(path2, &n2);
	ok(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0,
	   "saving a loaded checkpoint gives the same bytes");
	is_int(count_temps(dir), 0, "no temporary file after successful saves");
	free(b1);
	free(b2);
	free(big);
	bnn_ckpt_free(ck);
	bnn_ckpt_free(back);
}

/* ---- errors ---------------------------------------------------------------- */

/* is_str on the last message, which should be path followed by tail. */
static void is_msg(const char *path, const char *tail, const char *desc)
{
	char w[2 * PATH_LEN];

	snprintf(w, sizeof w, "%s%s", path, tail);
	is_str(err.message, w, "%s", desc);
}

static void test_load_io(void)
{
	char path[PATH_LEN], want[2 * PATH_LEN];
	bnn_ckpt *ck = (bnn_ckpt *)&err;

	is_int(load_rc(in_dir(path, "missing.ckpt")), BNN_EIO, "a missing file is BNN_EIO");
	snprintf(want, sizeof want, "cannot open checkpoint %s: %s", path, strerror(ENOENT));
	is_str(err.message, want, "... cannot open: no such file");
	is_int(load_rc(dir), BNN_EIO, "a directory is BNN_EIO");
	snprintf(want, sizeof want, "cannot read checkpoint %s: %s", dir, strerror(EISDIR));
	is_str(err.message, want, "... cannot read: is a directory");
	is_int(bnn_ckpt_load(NULL, &ck, NULL), BNN_EINVAL, "NULL path");
	ok(ck == NULL, "... *out is NULL");
	is_int(bnn_ckpt_load(path, NULL, NULL), BNN_EINVAL, "NULL out");
}

static void test_load_format(void)
{
	static const char hello[] = "hello, world\n";
	unsigned char buf[sizeof tiny + 3];
	char path[PATH_LEN];
	struct img m;
	char name[300];

	in_dir(path, "bad.ckpt");
	is_int(load_bytes("bad.ckpt", hello, sizeof hello - 1), BNN_EFORMAT,
	       "a text file is BNN_EFORMAT");
	is_msg(path, ": not a bnn checkpoint", "... not a bnn checkpoint");
	is_int(load_bytes("bad.ckpt", "BNX", 3), BNN_EFORMAT, "3 bytes unlike the magic");
	is_msg(path, ": not a bnn checkpoint", "... not a bnn checkpoint");
	is_int(load_bytes("bad.ckpt", "", 0), BNN_EFORMAT, "an empty file");
	is_msg(path, ": empty file, not a bnn checkpoint", "... empty file, not a bnn checkpoint");

	memcpy(buf, tiny, sizeof tiny);
	buf[8] = 7;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT, "version 7");
	is_msg(path,
	       ": checkpoint format version 7 is newer than this "
	       "library supports (1)",
	       "... newer than this library supports");
	buf[8] = 0;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT, "version 0");
	is_msg(path, ": invalid checkpoint format version 0", "... invalid version 0");
	buf[8] = 7;
	/* the version is checked before the length: 12 bytes suffice */
	is_int(load_bytes("bad.ckpt", buf, 12), BNN_EFORMAT, "version 7, 12 bytes");
	is_msg(path,
	       ": checkpoint format version 7 is newer than this "
	       "library supports (1)",
	       "... still a newer version");

	memcpy(buf, tiny, sizeof tiny);
	buf[47] ^= 0x10;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT, "a bit flipped in the data");
	is_msg(path, ": checksum mismatch: the checkpoint is corrupt", "... checksum mismatch");
	memcpy(buf, tiny, sizeof tiny);
	buf[75] ^= 0x01;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT, "a bit flipped in the CRC");
	is_msg(path, ": checksum mismatch: the checkpoint is corrupt", "... checksum mismatch");
	memcpy(buf, tiny, sizeof tiny);
	buf[59] = 3;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT,
	       "section type 2 damaged into 3");
	is_msg(path, ": checksum mismatch: the checkpoint is corrupt",
	       "... a checksum mismatch, since the file's CRC is wrong");
	memcpy(buf, tiny, sizeof tiny);
	buf[12] = 3;
	/* count 3: the third section's name length is read from the CRC
	 * bytes 73..76, 0x6c05079b = 1812268955, at offset 77 */
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny), BNN_EFORMAT,
	       "section count 2 damaged into 3");
	is_msg(path,
	       ": truncated checkpoint (the name of section 3 of 3 needs "
	       "1812268955 bytes at offset 77, only 0 remain)",
	       "... reads as truncation (a length cannot be trusted)");

	memcpy(buf, tiny, sizeof tiny);
	memcpy(buf + sizeof tiny, "xyz", 3);
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny + 3), BNN_EFORMAT, "3 trailing bytes");
	is_msg(path, ": 3 unexpected bytes at offset 77, after the checksum",
	       "... unexpected bytes after the checksum");
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny + 1), BNN_EFORMAT, "1 trailing byte");
	is_msg(path, ": 1 unexpected byte at offset 77, after the checksum",
	       "... unexpected byte after the checksum");
	buf[50] ^= 0x80;
	is_int(load_bytes("bad.ckpt", buf, sizeof tiny + 1), BNN_EFORMAT,
	       "corrupt and 1 trailing byte");
	is_msg(path, ": checksum mismatch: the checkpoint is corrupt", "... a checksum mismatch");

	/* Valid CRC, invalid content: offsets by hand from the layout, a
	 * one-byte model name "m" puts the first section at 29. */
	img_header(&m, 1, 2, "m", 1);
	img_section(&m, "w", 1, 1, 0, NULL, 0);
	img_section(&m, "t", 1, 3, 2, "hi", 2); /* 29 + 4+1+12 = 46 */
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "type 3 with a good CRC");
	is_msg(path, ": section 't' at offset 46 has unknown type 3", "... unknown type");

	img_header(&m, 1, 1, "m", 1);
	img_section(&m, "a\nb'c", 5, 9, 0, NULL, 0);
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "type 9, odd name");
	is_msg(path, ": section 'a\\x0ab\\'c' at offset 29 has unknown type 9",
	       "... the name is escaped in the message");

	memset(name, 'x', 255);
	img_header(&m, 1, 1, "m", 1);
	img_section(&m, name, 255, 9, 0, NULL, 0);
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "type 9, long name");
	/* ckpt_show stops before an escape could overflow 100 bytes: 93
	 * characters, then "..." */
	is_msg(path,
	       ": section 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' at offset 29 "
	       "has unknown type 9",
	       "... a long name is cut in the message");

	img_header(&m, 1, 2, "m", 1);
	img_section(&m, "w", 1, 1, 1, "\0\0\0\0", 4);
	img_section(&m, "w", 1, 2, 2, "hi", 2); /* 29 + 4+1+12+4 = 50 */
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "duplicate names");
	is_msg(path,
	       ": duplicate section 'w' at offset 50 (the first is at "
	       "offset 29)",
	       "... duplicate section");

	/* One section, type 2 (text) unless said, with a bad name or text. */
	memset(name, 'y', 256);
	{
		const struct {
			const char *name;  /* the section's name */
			uint32_t name_len; /* its length */
			uint64_t count;    /* its count */
			const char *data;  /* its contents */
			size_t data_len;   /* their length */
			int code;          /* what loading returns */
			const char *what;  /* the test's name */
			const char *tail;  /* the message after the path (BNN_OK: NULL) */
			const char *about; /* the message test's name */
		} sections[] = {
			{ "", 0, 2, "hi", 2, BNN_EFORMAT, "an empty name",
			  ": section 1 of 1 at offset 29 has an empty name", "... empty name" },
			{ name, 256, 2, "hi", 2, BNN_EFORMAT, "a 256-byte name",
			  ": the name of section 1 of 1 at offset 29 is 256 bytes long (the limit is 255)",
			  "... name too long" },
			{ name, 255, 2, "hi", 2, BNN_OK, "a 255-byte name loads", NULL, NULL },
			{ "a\0b", 3, 2, "hi", 2, BNN_EFORMAT, "a NUL in a name",
			  ": the name of section 1 of 1 at offset 29 contains a NUL byte",
			  "... NUL in a section name" },
			{ "t", 1, 3, "h\0i", 3, BNN_EFORMAT, "a NUL in a text",
			  ": text section 't' at offset 29 contains a NUL byte",
			  "... NUL in a text" },
		};
		int i;

		for (i = 0; i < (int)(sizeof sections / sizeof sections[0]); i++) {
			img_header(&m, 1, 1, "m", 1);
			img_section(&m, sections[i].name, sections[i].name_len, 2,
			            sections[i].count, sections[i].data, sections[i].data_len);
			img_crc(&m);
			is_int(load_bytes("bad.ckpt", m.b, m.n), sections[i].code, "%s",
			       sections[i].what);
			if (sections[i].tail)
				is_msg(path, sections[i].tail, sections[i].about);
		}
	}

	img_header(&m, 1, 0, "m\0n", 3);
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "a NUL in the model name");
	is_msg(path, ": the model name contains a NUL byte", "... NUL in the model name");

	{
		static char big[BNN_CKPT_MODEL_NAME_MAX + 1];

		memset(big, 'm', sizeof big);
		img_header(&m, 1, 0, big, sizeof big);
		img_crc(&m);
		is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "a 4097-byte model name");
		is_msg(path,
		       ": the model name is 4097 bytes long (the limit is "
		       "4096)",
		       "... model name too long");
		img_header(&m, 1, 0, big, sizeof big - 1);
		img_crc(&m);
		is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_OK, "a 4096-byte model name loads");
	}

	/* 2^61 floats need 2^63 = 9223372036854775808 bytes at 29+4+1+12 */
	img_header(&m, 1, 1, "m", 1);
	img_section(&m, "w", 1, 1, (uint64_t)1 << 61, NULL, 0);
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "2^61 floats");
	is_msg(path,
	       ": truncated checkpoint (section 'w' needs "
	       "9223372036854775808 bytes at offset 46, only 4 remain)",
	       "... needs 2^63 bytes");
	/* 2^32 - 1 sections but one in the file: the second one's name length
	 * is read from the CRC, 3799017162 (zlib.crc32 of the 46 bytes before) */
	img_header(&m, 1, UINT32_MAX, "m", 1);
	img_section(&m, "t", 1, 2, 0, NULL, 0);
	img_crc(&m);
	is_int(load_bytes("bad.ckpt", m.b, m.n), BNN_EFORMAT, "2^32-1 sections");
	is_msg(path,
	       ": truncated checkpoint (the name of section 2 of "
	       "4294967295 needs 3799017162 bytes at offset 50, only 0 remain)",
	       "... the walk stops at the end of the file");
}

/* Every length from 0 to 76 of the tiny file, with the exact message. */
static void test_truncation(void)
{
	/* Byte ranges of tiny (see its comments): cutting the file to a
	 * length in [from, to] truncates what, which begins at offset at and
	 * is need bytes long. */
	static const struct {
		size_t from, to;  /* file lengths */
		const char *what; /* the field cut short */
		size_t at, need;  /* its offset and size */
	} cut[] = {
		{ 1, 27, "the header", 0, 28 },
		{ 28, 28, "the model name", 28, 1 },
		{ 29, 32, "section 1 of 2", 29, 4 },
		{ 33, 33, "the name of section 1 of 2", 33, 1 },
		{ 34, 45, "section 'w'", 34, 12 },
		{ 46, 53, "section 'w'", 46, 8 },
		{ 54, 57, "section 2 of 2", 54, 4 },
		{ 58, 58, "the name of section 2 of 2", 58, 1 },
		{ 59, 70, "section 't'", 59, 12 },
		{ 71, 72, "section 't'", 71, 2 },
		{ 73, 76, "the checksum", 73, 4 },
	};
	char path[PATH_LEN], want[2 * PATH_LEN];
	size_t len, k, bad_code = 0;
	int rc;

	in_dir(path, "cut.ckpt");
	rc = load_bytes("cut.ckpt", tiny, 0);
	is_msg(path, ": empty file, not a bnn checkpoint", "cut to 0 bytes");
	if (rc != BNN_EFORMAT)
		bad_code++;
	for (k = 0; k < sizeof cut / sizeof cut[0]; k++) {
		for (len = cut[k].from; len <= cut[k].to; len++) {
			size_t left = len - cut[k].at;

			rc = load_bytes("cut.ckpt", tiny, len);
			if (rc != BNN_EFORMAT)
				bad_code++;
			snprintf(want, sizeof want,
			         "%s: truncated checkpoint (%s "
			         "needs %zu byte%s at offset %zu, only %zu remain%s)",
			         path, cut[k].what, cut[k].need, cut[k].need == 1 ? "" : "s",
			         cut[k].at, left, left == 1 ? "s" : "");
			is_str(err.message, want, "cut to %zu bytes", len);
		}
	}
	is_int(bad_code, 0, "every cut is BNN_EFORMAT");
	is_int(load_bytes("cut.ckpt", tiny, sizeof tiny), BNN_OK, "all 77 bytes load");
}

/* A corrupted byte at every offset of the tiny file is rejected. */
static void test_corruption(void)
{
	static const unsigned char masks[] = {
		0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff
	};
	unsigned char buf[sizeof tiny];
	size_t i, k;

	for (i = 0; i < sizeof tiny; i++) {
		int all = 1;

		for (k = 0; k < sizeof masks; k++) {
			memcpy(buf, tiny, sizeof tiny);
			buf[i] ^= masks[k];
			if (load_bytes("flip.ckpt", buf, sizeof buf) != BNN_EFORMAT) {
				all = 0;
				tap_diag("byte %zu ^ 0x%02x: %s", i, masks[k], err.message);
			}
		}
		ok(all, "byte %zu corrupted 9 ways: always BNN_EFORMAT", i);
	}
}

/* Random damage to a larger file: never accepted, never a crash. */
static void test_fuzz(void)
{
	char path[PATH_LEN];
	unsigned char *orig, *buf;
	uint64_t seed = 7;
	size_t n, len, i, accepted = 0, other = 0;
	int iter, k;
	bnn_ckpt *ck = tiny_ckpt();
	static const float v[40] = { 0.5f, -0.25f };

	bnn_ckpt_add_f32(ck, "v", v, 40);
	bnn_ckpt_add_text(ck, "meta", "optimizer adam\nstep 12\n");
	save_rc(ck, in_dir(path, "fuzz.ckpt"));
	bnn_ckpt_free(ck);
	orig = read_bytes(path, &n);
	buf = malloc(n + 16);
	if (!orig || !buf)
		tap_bail_out("cannot read %s", path);
	for (iter = 0; iter < 400; iter++) {
		memcpy(buf, orig, n);
		len = n;
		switch (iter % 4) {
		case 0: /* one to three bytes changed */
		case 1:
			for (k = 0; k <= (int)(lcg(&seed) % 3); k++) {
				i = lcg(&seed) % n;
				buf[i] ^= (unsigned char)(1 + lcg(&seed) % 255);
			}
			break;
		case 2: /* cut short */
			len = lcg(&seed) % n;
			break;
		default: /* a byte changed and the file cut */
			i = lcg(&seed) % n;
			buf[i] ^= (unsigned char)(1 + lcg(&seed) % 255);
			len = i + 1 + lcg(&seed) % (n - i);
			if (len == n)
				len--;
			break;
		}
		switch (load_bytes("fuzz2.ckpt", buf, len)) {
		case BNN_OK:
			accepted++;
			break;
		case BNN_EFORMAT:
			break;
		default:
			other++;
		}
	}
	is_int(accepted, 0, "400 damaged files: none accepted");
	is_int(other, 0, "400 damaged files: all BNN_EFORMAT");
	free(orig);
	free(buf);
}

/* ---- saving ---------------------------------------------------------------- */

static void test_save(void)
{
	char path[PATH_LEN], sub[PATH_LEN], want[2 * PATH_LEN];
	struct stat st;
	bnn_ckpt *ck = tiny_ckpt(), *other = bnn_ckpt_new(5, "other");
	int cwd, rc;

	if (!other || bnn_ckpt_add_text(other, "x", "new"))
		tap_bail_out("out of memory");

	/* a new file, then replacing it */
	in_dir(path, "save.ckpt");
	is_int(save_rc(ck, path), BNN_OK, "save a new file");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "a new checkpoint has mode 0644");
	is_int(save_rc(other, path), BNN_OK, "replace it");
	is_int(load_rc(path), BNN_OK, "the replacement loads");
	ok(!file_is(path, tiny, sizeof tiny), "the file was replaced");
	chmod(path, 0600);
	is_int(save_rc(ck, path), BNN_OK, "replace a 0600 file");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the replacement keeps mode 0600");
	ok(file_is(path, tiny, sizeof tiny), "and holds the tiny bytes");
	is_int(count_temps(dir), 0, "no temporary file after the saves");

	/* a relative path: the temporary file goes to the current directory */
	cwd = open(".", O_RDONLY | O_DIRECTORY);
	if (cwd < 0 || chdir(dir) != 0)
		tap_bail_out("cannot change to %s", dir);
	rc = save_rc(ck, "relative.ckpt");
	if (fchdir(cwd) != 0)
		tap_bail_out("cannot change back");
	close(cwd);
	is_int(rc, BNN_OK, "save to a relative path");
	ok(file_is(in_dir(path, "relative.ckpt"), tiny, sizeof tiny),
	   "... written in the current directory");
	is_int(count_temps(dir), 0, "... and no temporary file left");

	/* a missing directory */
	in_dir(path, "no/such/dir.ckpt");
	is_int(save_rc(ck, path), BNN_EIO, "save into a missing directory");
	snprintf(want, sizeof want, "cannot write checkpoint %s: %s", path, strerror(ENOENT));
	is_str(err.message, want, "... cannot write: no such file");

	/* a directory in the way: refused before anything is written */
	in_dir(sub, "adir");
	if (mkdir(sub, 0755) != 0)
		tap_bail_out("cannot create %s", sub);
	in_dir(path, "adir/keep.ckpt");
	if (save_rc(ck, path) != BNN_OK)
		tap_bail_out("cannot save %s", path);
	is_int(save_rc(ck, sub), BNN_EIO, "save over a directory");
	snprintf(want, sizeof want, "cannot write checkpoint %s: %s", sub, strerror(EISDIR));
	is_str(err.message, want, "... cannot write: is a directory");
	ok(stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && file_is(path, tiny, sizeof tiny),
	   "... the directory is intact");
	is_int(count_temps(dir), 0, "... and the temporary file was removed");
	/* a device: renaming over it would replace the node */
	is_int(save_rc(ck, "/dev/null"), BNN_EIO, "save over a device");
	is_str(err.message, "cannot write checkpoint /dev/null: it is not a regular file",
	       "... is refused");
	ok(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "... and the device is intact");

	/* an unwritable directory */
	if (geteuid() == 0) {
		tap_skip(4, "running as root: directory permissions not enforced");
	} else {
		chmod(sub, 0555);
		is_int(save_rc(other, path), BNN_EIO, "save into a read-only directory");
		snprintf(want, sizeof want, "cannot write checkpoint %s: %s", path,
		         strerror(EACCES));
		is_str(err.message, want, "... cannot write: permission denied");
		ok(file_is(path, tiny, sizeof tiny), "... the old file is intact");
		is_int(count_temps(sub), 0, "... and no temporary file was left");
		chmod(sub, 0755);
	}

	is_int(save_rc(NULL, path), BNN_EINVAL, "save a NULL checkpoint");
	is_int(save_rc(ck, NULL), BNN_EINVAL, "save to a NULL path");
	bnn_ckpt_free(ck);
	bnn_ckpt_free(other);
}

/* A write failing half way (RLIMIT_FSIZE: EFBIG) leaves the old file. */
static void test_save_write_error(void)
{
	enum {
		N = 1 << 17
	}; /* 512 KiB of floats, over the 256 KiB limit */
	struct rlimit old, lim;
	char path[PATH_LEN], want[2 * PATH_LEN];
	bnn_ckpt *ck = bnn_ckpt_new(1, "big"), *small = tiny_ckpt();
	float *x = calloc(N, sizeof *x);
	int rc;

	if (!ck || !x || bnn_ckpt_add_f32(ck, "x", x, N) != BNN_OK)
		tap_bail_out("out of memory");
	in_dir(path, "limited.ckpt");
	if (save_rc(small, path) != BNN_OK)
		tap_bail_out("cannot save %s", path);
	if (getrlimit(RLIMIT_FSIZE, &old) != 0 ||
	    (old.rlim_max != RLIM_INFINITY && old.rlim_max < (1 << 18))) {
		tap_skip(4, "cannot lower RLIMIT_FSIZE");
	} else {
		lim = old;
		lim.rlim_cur = 1 << 18;
		signal(SIGXFSZ, SIG_IGN);
		/* nothing is printed while the limit is on */
		if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
			rc = -1;
		} else {
			rc = save_rc(ck, path);
			setrlimit(RLIMIT_FSIZE, &old);
		}
		signal(SIGXFSZ, SIG_DFL);
		is_int(rc, BNN_EIO, "a write failing half way is BNN_EIO");
		snprintf(want, sizeof want, "cannot write checkpoint %s: %s", path,
		         strerror(EFBIG));
		is_str(err.message, want, "... cannot write: file too large");
		ok(file_is(path, tiny, sizeof tiny), "... the old file is intact");
		is_int(count_temps(dir), 0, "... and the temporary file removed");
	}
	free(x);
	bnn_ckpt_free(ck);
	bnn_ckpt_free(small);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/bnn-ckpt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		tap_bail_out("cannot create a directory under %s", tmp && *tmp ? tmp : "/tmp");
	test_crc32();
	test_api();
	test_layout();
	test_round_trip();
	test_load_io();
	test_load_format();
	test_truncation();
	test_corruption();
	test_fuzz();
	test_save();
	test_save_write_error();
	remove_tree(dir);
	return tap_done();
}
