/*
 * data_idx.c: the IDX reader (LeCun's format, as used by MNIST and
 * Fashion-MNIST) and bnn_data_load_idx(), which turns an image file and a
 * label file into a bnn_dataset.
 *
 * An IDX file is a 4-byte magic (two zero bytes, a type byte, a rank
 * byte), `rank` big-endian u32 sizes, then the elements in C order, each
 * big-endian.  Files are read through zlib's gzread(), which reads gzip
 * and plain files alike (it looks at the content, not the name), in one
 * pass: the header first, then the data in fixed-size chunks converted to
 * float as they arrive, then a last read that must find nothing.  Byte
 * offsets in messages count bytes of the uncompressed content.
 *
 * zlib reports a gzip stream that ends early not as a read error but as a
 * short read with Z_BUF_ERROR pending, so every short read and the final
 * end-of-file are checked with gzerror(): a truncated .gz file is an
 * error, never a silently short data set.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bnn.h"

#define IDX_CHUNK        65536 /* bytes per gzread() of the data; a multiple of 8 */
#define IDX_FIRST_FLOATS 65536 /* the data's first allocation (then doubled) */

/* The midpoint between FLT_MAX and 2^128: a double from FLT_MAX up to (not
 * including) it rounds to FLT_MAX as a float, from it on to infinity.  So
 * an f64 element of 3.4028235e38, the shortest decimal of FLT_MAX, reads as
 * FLT_MAX, as it does in a CSV file. */
#define IDX_FLOAT_OVERFLOW 0x1.ffffffp127

/* The largest element count accepted: 2^31, or LONG_MAX if smaller. */
#define IDX_MAX_COUNT \
	((uint64_t)LONG_MAX < (UINT64_C(1) << 31) ? (uint64_t)LONG_MAX : (UINT64_C(1) << 31))

/* An open IDX file being read. */
struct idx_reader {
	const char *path; /* for messages */
	gzFile f;
	long offset; /* uncompressed bytes consumed so far */
};

/* Bytes per element of an IDX type; 0 for an unknown type. */
static int idx_type_size(int type)
{
	switch (type) {
	case 0x08: /* u8 */
	case 0x09: /* i8 */
		return 1;
	case 0x0B: /* i16 */
		return 2;
	case 0x0C: /* i32 */
	case 0x0D: /* f32 */
		return 4;
	case 0x0E: /* f64 */
		return 8;
	default:
		return 0;
	}
}

/* The short name of an IDX type (a known one). */
static const char *idx_type_name(int type)
{
	switch (type) {
	case 0x08:
		return "u8";
	case 0x09:
		return "i8";
	case 0x0B:
		return "i16";
	case 0x0C:
		return "i32";
	case 0x0D:
		return "f32";
	case 0x0E:
		return "f64";
	default:
		return "unknown";
	}
}

/*
 * Read up to len bytes into buf, looping over gzread()'s partial reads.
 * *got receives the count actually read; fewer than len means end of
 * file.  A read error, or a gzip stream that ends early or is corrupt,
 * fails with BNN_EIO or BNN_EFORMAT and a message.
 */
static int idx_read(struct idx_reader *r, unsigned char *buf, size_t len, size_t *got, bnn_err *err)
{
	const char *msg;
	int errnum;

	*got = 0;
	while (*got < len) {
		size_t want = len - *got;
		int n;

		if (want > IDX_CHUNK)
			want = IDX_CHUNK;
		errno = 0;
		n = gzread(r->f, buf + *got, (unsigned)want);
		if (n <= 0)
			break;
		*got += (size_t)n;
		r->offset += n;
	}
	if (*got == len)
		return BNN_OK;
	/* End of file or an error: zlib leaves Z_BUF_ERROR ("unexpected end
	 * of file") pending for a gzip stream cut short. */
	msg = gzerror(r->f, &errnum);
	if (errnum == Z_OK)
		return BNN_OK;
	if (errnum == Z_ERRNO)
		return bnn_fail(err, BNN_EIO, "%s: read error at offset %ld: %s", r->path,
		                r->offset, errno ? strerror(errno) : "unknown error");
	if (errnum == Z_MEM_ERROR)
		return bnn_fail(err, BNN_ENOMEM, "%s: out of memory", r->path);
	/* zlib's message is "PATH: what"; keep only "what". */
	if (!strncmp(msg, r->path, strlen(r->path)) && !strncmp(msg + strlen(r->path), ": ", 2))
		msg += strlen(r->path) + 2;
	return bnn_fail(err, BNN_EFORMAT,
	                "%s: corrupt or truncated gzip stream (after %ld "
	                "uncompressed bytes): %s",
	                r->path, r->offset, msg);
}

static uint32_t idx_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Convert count big-endian elements of `type` at p to float at out.
 * Returns the index of the first non-finite value, or count if all are
 * finite (only f32 and f64 can hold one). */
static size_t idx_convert(int type, const unsigned char *p, size_t count, float *out)
{
	size_t i;

	switch (type) {
	case 0x08:
		for (i = 0; i < count; i++)
			out[i] = (float)p[i];
		return count;
	case 0x09:
		for (i = 0; i < count; i++)
			out[i] = (float)(int8_t)p[i];
		return count;
	case 0x0B:
		for (i = 0; i < count; i++) {
			uint16_t u = (uint16_t)((unsigned)p[2 * i] << 8 | p[2 * i + 1]);
			out[i] = (float)(int16_t)u;
		}
		return count;
	case 0x0C:
		for (i = 0; i < count; i++)
			out[i] = (float)(int32_t)idx_be32(p + 4 * i);
		return count;
	case 0x0D:
		for (i = 0; i < count; i++) {
			uint32_t u = idx_be32(p + 4 * i);
			float v;

			memcpy(&v, &u, sizeof v);
			if (!isfinite(v))
				return i;
			out[i] = v;
		}
		return count;
	case 0x0E:
		for (i = 0; i < count; i++) {
			uint64_t u = (uint64_t)idx_be32(p + 8 * i) << 32 | idx_be32(p + 8 * i + 4);
			double v;

			memcpy(&v, &u, sizeof v);
			/* Converting a double out of a float's range is
			 * undefined, so test first (NaN fails too). */
			if (!(fabs(v) < IDX_FLOAT_OVERFLOW))
				return i;
			out[i] = fabs(v) <= FLT_MAX ? (float)v : v > 0 ? FLT_MAX : -FLT_MAX;
		}
		return count;
	default: /* cannot happen: the type was checked */
		return count;
	}
}

/* Read and check the header (magic, type, rank, sizes) into out. */
static int idx_read_header(struct idx_reader *r, bnn_idx *out, bnn_err *err)
{
	unsigned char h[4 + 4 * BNN_DATA_MAX_RANK];
	size_t got, need;
	uint64_t count = 1;
	int rc, i;

	rc = idx_read(r, h, 4, &got, err);
	if (rc)
		return rc;
	if (got == 0)
		return bnn_fail(err, BNN_EFORMAT, "%s: empty file, not an IDX file", r->path);
	if (got >= 2 && (h[0] != 0 || h[1] != 0))
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: not an IDX file "
		                "(magic bytes 0x%02X 0x%02X at offset 0)",
		                r->path, h[0], h[1]);
	if (got < 4)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: truncated: expected a 4-byte IDX magic, "
		                "found %zu bytes",
		                r->path, got);
	out->type = h[2];
	if (!idx_type_size(out->type))
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: unknown IDX type "
		                "0x%02X at offset 2 (known: 0x08 u8, 0x09 i8, "
		                "0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64)",
		                r->path, (unsigned)h[2]);
	out->rank = h[3];
	if (out->rank < 1 || out->rank > BNN_DATA_MAX_RANK)
		return bnn_fail(err, BNN_EFORMAT, "%s: IDX rank %d at offset 3 is not in 1..%d",
		                r->path, out->rank, BNN_DATA_MAX_RANK);

	need = 4 * (size_t)out->rank;
	rc = idx_read(r, h + 4, need, &got, err);
	if (rc)
		return rc;
	if (got < need)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: truncated: a rank-%d "
		                "IDX header has %zu bytes, found %zu",
		                r->path, out->rank, 4 + need, 4 + got);
	for (i = 0; i < out->rank; i++) {
		uint32_t d = idx_be32(h + 4 + 4 * i);

		if (d == 0)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: dimension %d has size 0 "
			                "(offset %d)",
			                r->path, i + 1, 4 + 4 * i);
		/* count <= 2^31 and d < 2^32: the product fits in 64 bits. */
		count *= d;
		if (count > IDX_MAX_COUNT)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: too large: dimensions 1..%d "
			                "(offset %d) hold more than %llu "
			                "elements",
			                r->path, i + 1, 4 + 4 * i,
			                (unsigned long long)IDX_MAX_COUNT);
		out->dims[i] = (long)d;
	}
	out->count = (long)count;
	return BNN_OK;
}

/* Makes room for N floats in out->data (*CAP of them so far), growing it
 * geometrically up to TOTAL: memory follows the data actually read, so a
 * header that announces 2^31 elements in a file of 40 bytes costs 256 KiB,
 * not 8 GiB, before the file is found truncated.  0, or -1 when out of
 * memory (out->data unchanged). */
static int idx_reserve(bnn_idx *out, size_t *cap, size_t n, size_t total)
{
	size_t want = *cap ? *cap : IDX_FIRST_FLOATS;
	float *p;

	if (n <= *cap)
		return 0;
	while (want < n && want < total)
		want = want > total / 2 ? total : 2 * want;
	if (want > total)
		want = total;
	if (!(p = realloc(out->data, want * sizeof *p)))
		return -1;
	out->data = p;
	*cap = want;
	return 0;
}

/* Read the data that follows the header into out->data, then check that
 * nothing follows it. */
static int idx_read_data(struct idx_reader *r, bnn_idx *out, bnn_err *err)
{
	size_t size = (size_t)idx_type_size(out->type);
	long header = r->offset;
	size_t per_chunk = IDX_CHUNK / size, done = 0, got, bad, cap = 0;
	size_t total = (size_t)out->count;
	unsigned long long bytes = (unsigned long long)total * size;
	unsigned long long trailing = 0;
	unsigned char *buf;
	int rc = BNN_OK;

	if (total > SIZE_MAX / sizeof(float))
		return bnn_fail(err, BNN_ENOMEM,
		                "%s: %ld elements do not "
		                "fit in memory",
		                r->path, out->count);
	if (!(buf = malloc(IDX_CHUNK))) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	while (done < total) {
		size_t k = total - done < per_chunk ? total - done : per_chunk;

		if (idx_reserve(out, &cap, done + k, total)) {
			rc = bnn_fail(err, BNN_ENOMEM,
			              "%s: out of memory for %ld "
			              "elements",
			              r->path, out->count);
			goto out;
		}
		rc = idx_read(r, buf, k * size, &got, err);
		if (rc)
			goto out;
		if (got < k * size) {
			rc = bnn_fail(err, BNN_EFORMAT,
			              "%s: truncated: "
			              "expected %llu bytes of data after the "
			              "%ld-byte header, found %llu",
			              r->path, bytes, header,
			              (unsigned long long)done * size + got);
			goto out;
		}
		bad = idx_convert(out->type, buf, k, out->data + done);
		if (bad < k) {
			rc = bnn_fail(err, BNN_EFORMAT,
			              "%s: element %llu "
			              "(0-based, at offset %llu) is NaN, "
			              "infinite or too large for a float",
			              r->path, (unsigned long long)(done + bad),
			              (unsigned long long)header +
			                      (unsigned long long)(done + bad) * size);
			goto out;
		}
		done += k;
	}
	/* Anything left is an error; count it for the message. */
	do {
		rc = idx_read(r, buf, IDX_CHUNK, &got, err);
		if (rc)
			goto out;
		trailing += got;
	} while (got == IDX_CHUNK);
	if (trailing)
		rc = bnn_fail(err, BNN_EFORMAT,
		              "%s: trailing bytes: "
		              "expected %llu bytes of data after the %ld-byte "
		              "header, found %llu",
		              r->path, bytes, header, bytes + trailing);
out:
	free(buf);
	return rc;
}

int bnn_idx_read(const char *path, bnn_idx *out, bnn_err *err)
{
	struct idx_reader r = { path, NULL, 0 };
	int rc;

	if (!out)
		return bnn_fail(err, BNN_EINVAL, "bnn_idx_read: out is NULL");
	memset(out, 0, sizeof *out);
	if (!path)
		return bnn_fail(err, BNN_EINVAL, "bnn_idx_read: path is NULL");
	errno = 0;
	r.f = gzopen(path, "rb");
	if (!r.f)
		return bnn_fail(err, errno ? BNN_EIO : BNN_ENOMEM, "%s: cannot open: %s", path,
		                errno ? strerror(errno) : "out of memory");
	gzbuffer(r.f, 1u << 17);
	rc = idx_read_header(&r, out, err);
	if (!rc)
		rc = idx_read_data(&r, out, err);
	gzclose_r(r.f);
	if (rc)
		bnn_idx_free(out);
	return rc;
}

void bnn_idx_free(bnn_idx *idx)
{
	if (!idx)
		return;
	free(idx->data);
	memset(idx, 0, sizeof *idx);
}

/* Whether an IDX type holds integers (the types labels may have). */
static int idx_type_is_integer(int type)
{
	return type == 0x08 || type == 0x09 || type == 0x0B || type == 0x0C;
}

/* The data set of images and labels; u8 images are scaled to [0, 1] when
 * SCALE_U8, else kept as the integers they are (ids). */
static int idx_load(const char *images, const char *labels, int scale_u8, bnn_dataset *out,
                    bnn_err *err)
{
	bnn_idx im, lb;
	long i, features = 1;
	int rc;

	if (!out)
		return bnn_fail(err, BNN_EINVAL, "%s: out is NULL",
		                scale_u8 ? "bnn_data_load_idx" : "bnn_data_load_idx_ids");
	memset(out, 0, sizeof *out);
	memset(&lb, 0, sizeof lb);
	rc = bnn_idx_read(images, &im, err);
	if (rc)
		return rc;
	if (labels) {
		rc = bnn_idx_read(labels, &lb, err);
		if (rc)
			goto fail;
		if (lb.rank != 1) {
			rc = bnn_fail(err, BNN_EFORMAT,
			              "labels %s has rank %d; labels must have "
			              "rank 1 (one label per image)",
			              labels, lb.rank);
			goto fail;
		}
		if (!idx_type_is_integer(lb.type)) {
			rc = bnn_fail(err, BNN_EFORMAT,
			              "labels %s has type %s; labels must have "
			              "an integer type (u8, i8, i16 or i32)",
			              labels, idx_type_name(lb.type));
			goto fail;
		}
		if (lb.dims[0] != im.dims[0]) {
			rc = bnn_fail(err, BNN_EMISMATCH,
			              "labels %s has %ld entr%s but images %s "
			              "has %ld",
			              labels, lb.dims[0], lb.dims[0] == 1 ? "y" : "ies", images,
			              im.dims[0]);
			goto fail;
		}
	}

	out->n = im.dims[0];
	if (im.rank == 1) {
		out->rank = 1;
		out->shape[0] = 1;
	} else {
		out->rank = im.rank - 1;
		for (i = 1; i < im.rank; i++) {
			out->shape[i - 1] = im.dims[i];
			features *= im.dims[i];
		}
	}
	out->features = features;
	out->x = im.data;
	if (im.type == 0x08 && scale_u8)
		for (i = 0; i < im.count; i++)
			out->x[i] /= 255.0f;
	if (labels) {
		out->targets = 1;
		out->y = lb.data;
	}
	return BNN_OK;

fail:
	bnn_idx_free(&im);
	bnn_idx_free(&lb);
	return rc;
}

int bnn_data_load_idx(const char *images, const char *labels, bnn_dataset *out, bnn_err *err)
{
	return idx_load(images, labels, 1, out, err);
}

int bnn_data_load_idx_ids(const char *images, const char *labels, bnn_dataset *out, bnn_err *err)
{
	return idx_load(images, labels, 0, out, err);
}
