/*
 * checkpoint.c: the checkpoint file format (bnn_checkpoint.h; the byte
 * layout, the versioning rule and every message are in docs/checkpoint.md).
 *
 * In memory a checkpoint is an array of sections in the order they were
 * added, each owning its name and a copy of its data.
 *
 * Saving streams the image through bnn_file_replace() (file_replace.c)
 * into "PATH.tmp.XXXXXX" (mkstemp,
 * same directory as PATH, so the rename cannot cross file systems),
 * computing the CRC as it goes; then fflush, fsync, fclose, rename over
 * PATH and a best-effort fsync of the directory.  Any failure removes the
 * temporary file, and PATH is never opened for writing, so the previous
 * checkpoint survives a failed save or a crash at any point.
 *
 * Loading reads the whole file into memory and checks it in three passes:
 *   1. the magic and the version (the version decides the rest of the
 *      layout, so nothing else is read from a file of another version);
 *   2. a walk over every length field that only checks that each one fits
 *      in the file; it finds where the CRC must be.  A length that runs
 *      past the end is reported as truncation;
 *   3. the CRC of every byte before it.  Only then is the content trusted:
 *      names, texts and counts are validated and copied out.
 * So a truncated file is reported as truncated and a flipped bit as a
 * checksum mismatch (unless it hit the magic, the version or a length:
 * see docs/checkpoint.md).  Every integer is (de)serialised byte by byte
 * and every float through its bits, so neither the host's byte order nor
 * its struct layout leaks into the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bnn.h"

_Static_assert(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 && FLT_MAX_EXP == 128 &&
                       FLT_MIN_EXP == -125,
               "checkpoints store float as IEEE-754 binary32");

#if defined(__GNUC__) || defined(__clang__)
#define CKPT_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CKPT_PRINTF(fmt_index, first_arg)
#endif

/* Section type codes.  STORED IN FILES: never renumber or reuse a code; a
 * new type needs a new format version (docs/checkpoint.md). */
enum ckpt_type {
	CKPT_F32 = 1, /* float32 array, 4 bytes per element */
	CKPT_TEXT = 2 /* text, 1 byte per element, no NUL */
};

static const unsigned char ckpt_magic[8] = { 'B', 'N', 'N', 'C', 'K', 'P', 'T', '\0' };

#define CKPT_HEADER_SIZE \
	28                     /* magic 8, version 4, section count 4,
	                          fingerprint 8, model name length 4 */
#define CKPT_SECTION_HEAD 12   /* after a section's name: type 4, count 8 */
#define CKPT_CRC_SIZE     4    /* the trailing CRC-32 */
#define CKPT_SHOW_MAX     100  /* a name quoted in a message, with its NUL */
#define CKPT_UNKNOWN      (-1) /* ckpt_read_section(): unknown type code */

struct ckpt_section {
	char *name;    /* owned, 1..BNN_CKPT_SECTION_NAME_MAX bytes + NUL */
	uint32_t type; /* enum ckpt_type */
	long n;        /* elements: floats, or text bytes without the NUL */
	void *data;    /* owned: float[max(n, 1)], or char[n + 1] ending in
	                  NUL; never NULL */
};

struct bnn_ckpt {
	uint64_t fingerprint;     /* the model's, stored as is */
	char *model_name;         /* owned, NUL-terminated, may be "" */
	struct ckpt_section *sec; /* owned, in file order */
	size_t nsec;              /* sections in use */
	size_t cap;               /* sections allocated */
};

/* ---- building a checkpoint in memory ------------------------------------ */

/* A NUL-terminated copy of n bytes at s, or NULL when out of memory. */
static char *ckpt_memdup(const void *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		if (n > 0)
			memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

bnn_ckpt *bnn_ckpt_new(uint64_t fingerprint, const char *model_name)
{
	bnn_ckpt *ck;
	size_t len;

	if (!model_name)
		model_name = "";
	len = strnlen(model_name, BNN_CKPT_MODEL_NAME_MAX + 1);
	if (len > BNN_CKPT_MODEL_NAME_MAX)
		return NULL;
	ck = calloc(1, sizeof *ck);
	if (!ck)
		return NULL;
	ck->fingerprint = fingerprint;
	ck->model_name = ckpt_memdup(model_name, len);
	if (!ck->model_name) {
		free(ck);
		return NULL;
	}
	return ck;
}

void bnn_ckpt_free(bnn_ckpt *ck)
{
	size_t i;

	if (!ck)
		return;
	for (i = 0; i < ck->nsec; i++) {
		free(ck->sec[i].name);
		free(ck->sec[i].data);
	}
	free(ck->sec);
	free(ck->model_name);
	free(ck);
}

static const struct ckpt_section *ckpt_lookup(const bnn_ckpt *ck, const char *name)
{
	size_t i;

	for (i = 0; i < ck->nsec; i++)
		if (strcmp(ck->sec[i].name, name) == 0)
			return &ck->sec[i];
	return NULL;
}

/* Make room for one more section. */
static int ckpt_reserve(bnn_ckpt *ck)
{
	struct ckpt_section *s;
	size_t cap;

	if (ck->nsec < ck->cap)
		return BNN_OK;
	cap = ck->cap > 0 ? 2 * ck->cap : 8;
	if (cap > SIZE_MAX / sizeof *s)
		return BNN_ENOMEM;
	s = realloc(ck->sec, cap * sizeof *s);
	if (!s)
		return BNN_ENOMEM;
	ck->sec = s;
	ck->cap = cap;
	return BNN_OK;
}

/*
 * Add a section of ck called name with n elements of type, copying size
 * bytes from data (and a NUL after them).  The checks of the public add
 * functions are made here.
 */
static int ckpt_add(bnn_ckpt *ck, const char *name, uint32_t type, long n, const void *data,
                    size_t size)
{
	struct ckpt_section *s;
	size_t len;

	if (!ck || !name)
		return BNN_EINVAL;
	len = strnlen(name, BNN_CKPT_SECTION_NAME_MAX + 1);
	if (len == 0 || len > BNN_CKPT_SECTION_NAME_MAX)
		return BNN_EINVAL;
	if (ckpt_lookup(ck, name) || ck->nsec >= UINT32_MAX)
		return BNN_EINVAL; /* duplicate; the file's count is a u32 */
	if (ckpt_reserve(ck) != BNN_OK || size == SIZE_MAX)
		return BNN_ENOMEM;
	s = &ck->sec[ck->nsec];
	s->name = ckpt_memdup(name, len);
	s->data = ckpt_memdup(data, size);
	if (!s->name || !s->data) {
		free(s->name);
		free(s->data);
		return BNN_ENOMEM;
	}
	s->type = type;
	s->n = n;
	ck->nsec++;
	return BNN_OK;
}

int bnn_ckpt_add_f32(bnn_ckpt *ck, const char *name, const float *data, long n)
{
	if (n < 0 || (n > 0 && !data))
		return BNN_EINVAL;
	if ((unsigned long)n > SIZE_MAX / sizeof(float) - 1)
		return BNN_ENOMEM;
	/* memcpy keeps every bit, NaN payloads included; the extra NUL byte
	 * ckpt_memdup() adds makes an empty section's data non-NULL. */
	return ckpt_add(ck, name, CKPT_F32, n, data, (size_t)n * sizeof(float));
}

int bnn_ckpt_add_text(bnn_ckpt *ck, const char *name, const char *text)
{
	size_t len;

	if (!text)
		return BNN_EINVAL;
	len = strlen(text);
	if (len > LONG_MAX)
		return BNN_ENOMEM;
	return ckpt_add(ck, name, CKPT_TEXT, (long)len, text, len);
}

uint64_t bnn_ckpt_fingerprint(const bnn_ckpt *ck)
{
	return ck->fingerprint;
}

const char *bnn_ckpt_model_name(const bnn_ckpt *ck)
{
	return ck->model_name;
}

/* The section called name if it has the given type, else NULL. */
static const struct ckpt_section *ckpt_find(const bnn_ckpt *ck, const char *name, uint32_t type)
{
	const struct ckpt_section *s;

	if (!ck || !name)
		return NULL;
	s = ckpt_lookup(ck, name);
	return s && s->type == type ? s : NULL;
}

const float *bnn_ckpt_find_f32(const bnn_ckpt *ck, const char *name, long *n)
{
	const struct ckpt_section *s = ckpt_find(ck, name, CKPT_F32);

	if (n)
		*n = s ? s->n : 0;
	return s ? s->data : NULL;
}

const char *bnn_ckpt_find_text(const bnn_ckpt *ck, const char *name)
{
	const struct ckpt_section *s = ckpt_find(ck, name, CKPT_TEXT);

	return s ? s->data : NULL;
}

/* ---- bytes ------------------------------------------------------------- */

static void ckpt_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)(v >> 8 & 0xff);
	p[2] = (unsigned char)(v >> 16 & 0xff);
	p[3] = (unsigned char)(v >> 24 & 0xff);
}

static void ckpt_put64(unsigned char *p, uint64_t v)
{
	ckpt_put32(p, (uint32_t)(v & 0xffffffffU));
	ckpt_put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t ckpt_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t ckpt_get64(const unsigned char *p)
{
	return (uint64_t)ckpt_get32(p) | (uint64_t)ckpt_get32(p + 4) << 32;
}

/* errno, or EIO when a failing call left it 0. */
static int ckpt_errno(void)
{
	return errno != 0 ? errno : EIO;
}

/* ---- saving ------------------------------------------------------------ */

/* The checkpoint being written. */
struct ckpt_writer {
	FILE *f;      /* the stream bnn_file_replace() opened */
	uint32_t crc; /* CRC-32 of every byte written so far */
	int errnum;   /* errno of the first failure; 0 while all is well */
};

static void ckpt_write(struct ckpt_writer *w, const void *p, size_t n)
{
	if (w->errnum != 0 || n == 0)
		return;
	w->crc = bnn_crc32(w->crc, p, n);
	errno = 0;
	if (fwrite(p, 1, n, w->f) != n)
		w->errnum = ckpt_errno();
}

static void ckpt_write_f32(struct ckpt_writer *w, const float *x, long n)
{
	unsigned char b[4096]; /* 1024 floats at a time */
	size_t k;
	long i = 0;

	while (i < n && w->errnum == 0) {
		for (k = 0; i < n && k < sizeof b; i++, k += 4) {
			uint32_t u;

			memcpy(&u, &x[i], sizeof u); /* the IEEE-754 bits */
			ckpt_put32(b + k, u);
		}
		ckpt_write(w, b, k);
	}
}

/* The whole file: header, sections, CRC (layout in bnn_checkpoint.h). */
static void ckpt_write_image(struct ckpt_writer *w, const bnn_ckpt *ck)
{
	unsigned char b[CKPT_HEADER_SIZE];
	size_t i, len = strlen(ck->model_name);

	memcpy(b, ckpt_magic, sizeof ckpt_magic);
	ckpt_put32(b + 8, BNN_CKPT_VERSION);
	ckpt_put32(b + 12, (uint32_t)ck->nsec);
	ckpt_put64(b + 16, ck->fingerprint);
	ckpt_put32(b + 24, (uint32_t)len);
	ckpt_write(w, b, CKPT_HEADER_SIZE);
	ckpt_write(w, ck->model_name, len);
	for (i = 0; i < ck->nsec; i++) {
		const struct ckpt_section *s = &ck->sec[i];

		len = strlen(s->name);
		ckpt_put32(b, (uint32_t)len);
		ckpt_write(w, b, 4);
		ckpt_write(w, s->name, len);
		ckpt_put32(b, s->type);
		ckpt_put64(b + 4, (uint64_t)s->n);
		ckpt_write(w, b, CKPT_SECTION_HEAD);
		if (s->type == CKPT_F32)
			ckpt_write_f32(w, s->data, s->n);
		else
			ckpt_write(w, s->data, (size_t)s->n);
	}
	ckpt_put32(b, w->crc);
	ckpt_write(w, b, CKPT_CRC_SIZE);
}

/* Writes the image into the file bnn_file_replace() opened; returns 0 or
 * the errno of the first failure. */
static int ckpt_fill(FILE *f, void *ctx)
{
	struct ckpt_writer w = { f, 0, 0 };

	ckpt_write_image(&w, ctx);
	return w.errnum;
}

int bnn_ckpt_save(const bnn_ckpt *ck, const char *path, bnn_err *err)
{
	if (!path)
		return bnn_fail(err, BNN_EINVAL, "cannot write checkpoint: no path given");
	if (!ck)
		return bnn_fail(err, BNN_EINVAL, "cannot write checkpoint %s: no checkpoint given",
		                path);
	return bnn_file_replace(path, "checkpoint ", ckpt_fill, (void *)ck, err);
}

/* ---- loading ----------------------------------------------------------- */

/* The file being loaded, and a cursor into it. */
struct ckpt_reader {
	const char *path;       /* for messages */
	const unsigned char *p; /* the whole file */
	size_t size;            /* its length in bytes */
	size_t off;             /* the cursor: bytes consumed */
};

/* One section as it lies in the file (pointers into the file image). */
struct ckpt_raw {
	size_t off;                /* offset of its name length field */
	const unsigned char *name; /* name_len bytes, not NUL-terminated */
	uint32_t name_len;         /* as read */
	uint32_t type;             /* type code as read */
	uint64_t n;                /* element count as read */
	const unsigned char *data; /* the elements (pass 2 onwards) */
	char shown[CKPT_SHOW_MAX]; /* the name escaped for messages */
};

/*
 * Write the len bytes of a name read from a file into buf for a message:
 * printable ASCII and bytes from 0x80 (UTF-8) as they are, control bytes
 * as \xNN, quote and backslash with a backslash; too long a name is cut
 * and ends in "...".  Returns buf.
 */
static const char *ckpt_show(char buf[CKPT_SHOW_MAX], const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	for (i = 0; i < len; i++) {
		unsigned c = s[i];

		if (k + 4 > CKPT_SHOW_MAX - 4) {
			memcpy(buf + k, "...", 3);
			k += 3;
			break;
		}
		if (c == '\\' || c == '\'') {
			buf[k++] = '\\';
			buf[k++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			buf[k++] = '\\';
			buf[k++] = 'x';
			buf[k++] = hex[c >> 4];
			buf[k++] = hex[c & 15];
		} else {
			buf[k++] = (char)c;
		}
	}
	buf[k] = '\0';
	return buf;
}

/*
 * Take n bytes at the cursor: return them and advance, or, when fewer than
 * n remain, report that what (a printf format naming the field) is
 * truncated and return NULL.
 */
static const unsigned char *ckpt_take(struct ckpt_reader *r, uint64_t n, bnn_err *err,
                                      const char *what, ...) CKPT_PRINTF(4, 5);

static const unsigned char *ckpt_take(struct ckpt_reader *r, uint64_t n, bnn_err *err,
                                      const char *what, ...)
{
	size_t left = r->size - r->off;
	const unsigned char *p;
	char label[CKPT_SHOW_MAX + 64];
	va_list ap;

	if (n <= left) {
		p = r->p + r->off;
		r->off += (size_t)n;
		return p;
	}
	va_start(ap, what);
	vsnprintf(label, sizeof label, what, ap);
	va_end(ap);
	bnn_fail(err, BNN_EFORMAT,
	         "%s: truncated checkpoint (%s needs %llu byte%s at offset %zu, "
	         "only %zu remain%s)",
	         r->path, label, (unsigned long long)n, n == 1 ? "" : "s", r->off, left,
	         left == 1 ? "s" : "");
	return NULL;
}

/*
 * Read section i (0-based) of count at the cursor into s, checking only
 * that every length fits in the file.
 * @return BNN_OK (the cursor after the section); BNN_EFORMAT (truncated,
 *         err set); CKPT_UNKNOWN (an unknown type code in s->type: the
 *         size of the data is unknown, so the walk cannot go on).
 */
static int ckpt_read_section(struct ckpt_reader *r, uint32_t i, uint32_t count, struct ckpt_raw *s,
                             bnn_err *err)
{
	const unsigned char *p;
	uint64_t size;

	s->off = r->off;
	p = ckpt_take(r, 4, err, "section %lu of %lu", (unsigned long)i + 1, (unsigned long)count);
	if (!p)
		return BNN_EFORMAT;
	s->name_len = ckpt_get32(p);
	s->name = ckpt_take(r, s->name_len, err, "the name of section %lu of %lu",
	                    (unsigned long)i + 1, (unsigned long)count);
	if (!s->name)
		return BNN_EFORMAT;
	ckpt_show(s->shown, s->name, s->name_len);
	p = ckpt_take(r, CKPT_SECTION_HEAD, err, "section '%s'", s->shown);
	if (!p)
		return BNN_EFORMAT;
	s->type = ckpt_get32(p);
	s->n = ckpt_get64(p + 4);
	switch (s->type) {
	case CKPT_F32:
		/* a count this large cannot fit: saturate rather than wrap */
		size = s->n > UINT64_MAX / 4 ? UINT64_MAX : s->n * 4;
		break;
	case CKPT_TEXT:
		size = s->n;
		break;
	default:
		return CKPT_UNKNOWN;
	}
	s->data = ckpt_take(r, size, err, "section '%s'", s->shown);
	return s->data ? BNN_OK : BNN_EFORMAT;
}

/* Whether the 4 bytes at end hold the CRC-32 of the end bytes before them
 * (the caller makes sure that they exist). */
static int ckpt_crc_ok(const unsigned char *p, size_t end)
{
	return bnn_crc32(0, p, end) == ckpt_get32(p + end);
}

static int ckpt_corrupt(const char *path, bnn_err *err)
{
	return bnn_fail(err, BNN_EFORMAT, "%s: checksum mismatch: the checkpoint is corrupt", path);
}

static int ckpt_oom(const char *path, bnn_err *err)
{
	return bnn_fail(err, BNN_ENOMEM, "%s: out of memory loading the checkpoint", path);
}

/* For the duplicate check: a section's name, file offset and position. */
struct ckpt_key {
	const char *name; /* borrowed from the section */
	size_t off;       /* offset of the section in the file */
	size_t index;     /* position in the file, to keep the order stable */
};

static int ckpt_key_cmp(const void *a, const void *b)
{
	const struct ckpt_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Reject two sections of the same name, naming the later one. */
static int ckpt_check_duplicates(const char *path, const bnn_ckpt *ck, const size_t *offs,
                                 bnn_err *err)
{
	struct ckpt_key *keys;
	char shown[CKPT_SHOW_MAX];
	size_t i;

	if (ck->nsec < 2)
		return BNN_OK;
	keys = malloc(ck->nsec * sizeof *keys);
	if (!keys)
		return ckpt_oom(path, err);
	for (i = 0; i < ck->nsec; i++) {
		keys[i].name = ck->sec[i].name;
		keys[i].off = offs[i];
		keys[i].index = i;
	}
	qsort(keys, ck->nsec, sizeof *keys, ckpt_key_cmp);
	for (i = 1; i < ck->nsec; i++)
		if (strcmp(keys[i - 1].name, keys[i].name) == 0)
			break;
	if (i < ck->nsec) {
		const struct ckpt_key *k = &keys[i];

		bnn_fail(err, BNN_EFORMAT,
		         "%s: duplicate section '%s' at offset %zu (the first is "
		         "at offset %zu)",
		         path, ckpt_show(shown, (const unsigned char *)k->name, strlen(k->name)),
		         k->off, keys[i - 1].off);
		free(keys);
		return BNN_EFORMAT;
	}
	free(keys);
	return BNN_OK;
}

/* Copy a validated section s into ck, which has room for it. */
static int ckpt_copy_section(const char *path, bnn_ckpt *ck, const struct ckpt_raw *s, bnn_err *err)
{
	struct ckpt_section *d = &ck->sec[ck->nsec];
	size_t k, n = (size_t)s->n;
	float *x;

	d->name = ckpt_memdup(s->name, s->name_len);
	if (s->type == CKPT_TEXT)
		d->data = ckpt_memdup(s->data, n);
	else
		d->data = malloc(n > 0 ? n * sizeof *x : 1);
	if (!d->name || !d->data) {
		free(d->name);
		free(d->data);
		return ckpt_oom(path, err);
	}
	if (s->type == CKPT_F32) {
		x = d->data;
		for (k = 0; k < n; k++) {
			uint32_t u = ckpt_get32(s->data + 4 * k);

			memcpy(&x[k], &u, sizeof u); /* the IEEE-754 bits */
		}
	}
	d->type = s->type;
	d->n = (long)s->n;
	ck->nsec++;
	return BNN_OK;
}

/*
 * Pass 3: the CRC is good.  Validate what the bounds walk did not (names,
 * texts, counts, duplicates) and copy everything into a new checkpoint.
 * r's cursor is at the first section; h is the header.
 */
static int ckpt_build(struct ckpt_reader *r, const unsigned char *h, const unsigned char *name,
                      bnn_ckpt **out, bnn_err *err)
{
	uint32_t count = ckpt_get32(h + 12), name_len = ckpt_get32(h + 24);
	const char *path = r->path;
	struct ckpt_raw s;
	size_t *offs = NULL;
	bnn_ckpt *ck;
	uint32_t i;
	int rc;

	if (name_len > BNN_CKPT_MODEL_NAME_MAX)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: the model name is %lu bytes long (the limit "
		                "is %d)",
		                path, (unsigned long)name_len, BNN_CKPT_MODEL_NAME_MAX);
	if (memchr(name, '\0', name_len))
		return bnn_fail(err, BNN_EFORMAT, "%s: the model name contains a NUL byte", path);
	ck = calloc(1, sizeof *ck);
	if (!ck)
		return ckpt_oom(path, err);
	ck->fingerprint = ckpt_get64(h + 16);
	ck->model_name = ckpt_memdup(name, name_len);
	/* pass 2 found every section in the file, 16 bytes or more each, so
	 * these sizes cannot overflow */
	if (count > 0) {
		ck->sec = malloc(count * sizeof *ck->sec);
		offs = malloc(count * sizeof *offs);
		ck->cap = count;
	}
	if (!ck->model_name || (count > 0 && (!ck->sec || !offs))) {
		rc = ckpt_oom(path, err);
		goto fail;
	}
	for (i = 0; i < count; i++) {
		rc = ckpt_read_section(r, i, count, &s, err);
		if (rc != BNN_OK) { /* cannot happen: pass 2 read the same */
			rc = BNN_EFORMAT;
			goto fail;
		}
		rc = BNN_EFORMAT;
		if (s.name_len == 0) {
			bnn_fail(err, rc,
			         "%s: section %lu of %lu at offset %zu has "
			         "an empty name",
			         path, (unsigned long)i + 1, (unsigned long)count, s.off);
			goto fail;
		}
		if (s.name_len > BNN_CKPT_SECTION_NAME_MAX) {
			bnn_fail(err, rc,
			         "%s: the name of section %lu of %lu at "
			         "offset %zu is %lu bytes long (the limit is %d)",
			         path, (unsigned long)i + 1, (unsigned long)count, s.off,
			         (unsigned long)s.name_len, BNN_CKPT_SECTION_NAME_MAX);
			goto fail;
		}
		if (memchr(s.name, '\0', s.name_len)) {
			bnn_fail(err, rc,
			         "%s: the name of section %lu of %lu at "
			         "offset %zu contains a NUL byte",
			         path, (unsigned long)i + 1, (unsigned long)count, s.off);
			goto fail;
		}
		if (s.n > LONG_MAX) {
			bnn_fail(err, rc,
			         "%s: section '%s' at offset %zu has %llu "
			         "elements, more than this platform supports",
			         path, s.shown, s.off, (unsigned long long)s.n);
			goto fail;
		}
		if (s.type == CKPT_TEXT && memchr(s.data, '\0', (size_t)s.n)) {
			bnn_fail(err, rc,
			         "%s: text section '%s' at offset %zu "
			         "contains a NUL byte",
			         path, s.shown, s.off);
			goto fail;
		}
		rc = ckpt_copy_section(path, ck, &s, err);
		if (rc != BNN_OK)
			goto fail;
		offs[i] = s.off;
	}
	rc = ckpt_check_duplicates(path, ck, offs, err);
	if (rc != BNN_OK)
		goto fail;
	free(offs);
	*out = ck;
	return BNN_OK;

fail:
	free(offs);
	bnn_ckpt_free(ck);
	return rc;
}

/* Passes 1 and 2, then 3 (see the top of this file). */
static int ckpt_parse(const char *path, const unsigned char *p, size_t size, bnn_ckpt **out,
                      bnn_err *err)
{
	struct ckpt_reader r = { path, p, size, 0 };
	const unsigned char *h, *name;
	struct ckpt_raw s;
	uint32_t version, count, i;
	size_t first, end;
	int rc;

	/* Pass 1: magic, version. */
	if (size == 0)
		return bnn_fail(err, BNN_EFORMAT, "%s: empty file, not a bnn checkpoint", path);
	if (memcmp(p, ckpt_magic, size < 8 ? size : 8) != 0)
		return bnn_fail(err, BNN_EFORMAT, "%s: not a bnn checkpoint", path);
	if (size >= 12) {
		version = ckpt_get32(p + 8);
		if (version == 0)
			return bnn_fail(err, BNN_EFORMAT, "%s: invalid checkpoint format version 0",
			                path);
		if (version > BNN_CKPT_VERSION)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: checkpoint format version %lu is newer "
			                "than this library supports (%d)",
			                path, (unsigned long)version, BNN_CKPT_VERSION);
	}

	/* Pass 2: every length against the bytes that remain. */
	h = ckpt_take(&r, CKPT_HEADER_SIZE, err, "the header");
	if (!h)
		return BNN_EFORMAT;
	count = ckpt_get32(h + 12);
	name = ckpt_take(&r, ckpt_get32(h + 24), err, "the model name");
	if (!name)
		return BNN_EFORMAT;
	first = r.off;
	for (i = 0; i < count; i++) {
		rc = ckpt_read_section(&r, i, count, &s, err);
		if (rc == CKPT_UNKNOWN) {
			/* Without the size of the data the CRC cannot be located:
			 * if the last 4 bytes are the CRC of the rest, the file is
			 * as written and really holds an unknown type. */
			if (!ckpt_crc_ok(p, size - CKPT_CRC_SIZE))
				return ckpt_corrupt(path, err);
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: section '%s' at offset %zu has unknown "
			                "type %lu",
			                path, s.shown, s.off, (unsigned long)s.type);
		}
		if (rc != BNN_OK)
			return rc;
	}
	end = r.off;
	if (!ckpt_take(&r, CKPT_CRC_SIZE, err, "the checksum"))
		return BNN_EFORMAT;

	/* Pass 3: the CRC, then the content. */
	if (!ckpt_crc_ok(p, end))
		return ckpt_corrupt(path, err);
	if (r.off < size)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: %zu unexpected byte%s at offset %zu, after the "
		                "checksum",
		                path, size - r.off, size - r.off == 1 ? "" : "s", r.off);
	r.off = first;
	return ckpt_build(&r, h, name, out, err);
}

/* Read the whole file at path into *buf (owned by the caller). */
static int ckpt_read_file(const char *path, unsigned char **buf, size_t *len, bnn_err *err)
{
	unsigned char *b = NULL, *nb;
	size_t cap = 65536, n = 0, want, got;
	struct stat st;
	FILE *f;
	int e;

	f = fopen(path, "rb");
	if (!f) {
		e = ckpt_errno();
		return bnn_fail(err, BNN_EIO, "cannot open checkpoint %s: %s", path, strerror(e));
	}
	/* The size only sizes the first buffer (one more byte, so that the
	 * first read meets the end of the file); the file is read to its end
	 * whatever it says. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uintmax_t)st.st_size >= SIZE_MAX / 2) {
			fclose(f);
			return bnn_fail(err, BNN_ENOMEM, "%s: the file is too large to load", path);
		}
		cap = (size_t)st.st_size + 1;
	}
	for (;;) {
		if (!b || n == cap) {
			if (b && cap >= SIZE_MAX / 2) {
				free(b);
				fclose(f);
				return bnn_fail(err, BNN_ENOMEM,
				                "%s: the file is too large to load", path);
			}
			if (b)
				cap *= 2;
			nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return ckpt_oom(path, err);
			}
			b = nb;
		}
		want = cap - n;
		errno = 0;
		got = fread(b + n, 1, want, f);
		n += got;
		/* Stop at bytes that cannot begin a checkpoint: the parser then
		 * says "not a bnn checkpoint" for /dev/zero or an endless pipe
		 * instead of reading it into memory. */
		if (memcmp(b, ckpt_magic, n < sizeof ckpt_magic ? n : sizeof ckpt_magic) != 0)
			break;
		if (got < want) {
			if (ferror(f)) {
				e = ckpt_errno();
				free(b);
				fclose(f);
				return bnn_fail(err, BNN_EIO, "cannot read checkpoint %s: %s", path,
				                strerror(e));
			}
			break;
		}
	}
	fclose(f);
	*buf = b;
	*len = n;
	return BNN_OK;
}

int bnn_ckpt_load(const char *path, bnn_ckpt **out, bnn_err *err)
{
	unsigned char *buf = NULL;
	size_t size = 0;
	int rc;

	if (out)
		*out = NULL;
	if (!path || !out)
		return bnn_fail(err, BNN_EINVAL, "cannot load checkpoint %s: %s",
		                path ? path : "(null)",
		                path ? "nowhere to put it" : "no path given");
	rc = ckpt_read_file(path, &buf, &size, err);
	if (rc != BNN_OK)
		return rc;
	rc = ckpt_parse(path, buf, size, out, err);
	free(buf);
	return rc;
}
