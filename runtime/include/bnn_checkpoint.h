/*
 * bnn_checkpoint.h: the checkpoint file format of libbnn (included by
 * bnn.h).
 *
 * A checkpoint is a list of named sections, each an array of float32 or a
 * text, stamped with the model's name and 64-bit fingerprint.  This module
 * knows nothing about models: bnn_train.h decides which sections a trained
 * model needs ("params", "adam.m", "standardize.mean", ...), so later
 * posterior families and optimizers add sections without a format change.
 *
 * File layout (all integers little-endian; docs/checkpoint.md is the
 * reference):
 *   magic "BNNCKPT\0" (8 bytes), u32 format version (1), u32 section count,
 *   u64 fingerprint, u32 name length + model name bytes,
 *   sections: u32 name length + name, u32 type (1 = f32, 2 = text),
 *             u64 element count, data (f32 little-endian, or text bytes),
 *   u32 CRC-32 (IEEE) of every byte before it.
 *
 * Saving writes "PATH.tmp.XXXXXX" in the same directory, flushes and
 * fsyncs it, then renames it over PATH, so a crash at any point leaves the
 * previous checkpoint intact.  Loading reads the whole file, checks the
 * magic, version, every length against the file size, and the CRC before
 * trusting anything.
 *
 * Names and texts are C strings: they never contain a NUL byte, and a
 * file whose names or texts do is rejected.  Sections keep the order in
 * which they were added (the file order); a loaded checkpoint saved again
 * gives the same bytes.
 */
#ifndef BNN_CHECKPOINT_H
#define BNN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "bnn_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BNN_CKPT_VERSION 1

/* Longest model name and section name, in bytes (without the NUL).  A
 * section name is never empty; a model name may be. */
#define BNN_CKPT_MODEL_NAME_MAX   4096
#define BNN_CKPT_SECTION_NAME_MAX 255

typedef struct bnn_ckpt bnn_ckpt;

/**
 * A new empty checkpoint.
 * @param fingerprint  the model's fingerprint, stored as is.
 * @param model_name   copied; NULL is taken as "".
 * @return the checkpoint (free with bnn_ckpt_free); NULL when out of
 *         memory or model_name is longer than BNN_CKPT_MODEL_NAME_MAX.
 */
bnn_ckpt *bnn_ckpt_new(uint64_t fingerprint, const char *model_name);

/** Free ck and every section (NULL is accepted). */
void bnn_ckpt_free(bnn_ckpt *ck);

/**
 * Add a section (data copied); a section name may appear once, whatever
 * the type.  An f32 section may be empty (n == 0, data may then be NULL);
 * so may a text ("").
 * @return BNN_OK, BNN_ENOMEM, BNN_EINVAL (NULL ck, name or text, empty
 *         name or longer than BNN_CKPT_SECTION_NAME_MAX, duplicate name,
 *         n < 0, data NULL with n > 0).  ck is unchanged on failure.
 */
int bnn_ckpt_add_f32(bnn_ckpt *ck, const char *name, const float *data, long n);
int bnn_ckpt_add_text(bnn_ckpt *ck, const char *name, const char *text);

/**
 * Write atomically (see above).  The file gets the permission bits of the
 * file it replaces, or 0644 when path is new.  A symbolic link at path is
 * replaced, not followed.
 * @return BNN_OK; BNN_EIO "cannot write checkpoint PATH: <reason>" (the
 *         temporary file removed, any previous file at path untouched);
 *         BNN_ENOMEM; BNN_EINVAL for a NULL ck or path.
 */
int bnn_ckpt_save(const bnn_ckpt *ck, const char *path, bnn_err *err);

/**
 * Read and verify a checkpoint.  docs/checkpoint.md lists every message.
 * @param out  gets the checkpoint (free with bnn_ckpt_free) on success,
 *             NULL on failure.
 * @return BNN_OK; BNN_EIO (cannot open/read); BNN_EFORMAT (not a
 *         checkpoint, unsupported version, truncated, bad checksum,
 *         invalid content: the message says which); BNN_ENOMEM;
 *         BNN_EINVAL for a NULL path or out.
 */
int bnn_ckpt_load(const char *path, bnn_ckpt **out, bnn_err *err);

/** The fingerprint and model name given to bnn_ckpt_new() or read from
 *  the file.  The name is borrowed: valid until bnn_ckpt_free(ck). */
uint64_t bnn_ckpt_fingerprint(const bnn_ckpt *ck);
const char *bnn_ckpt_model_name(const bnn_ckpt *ck);

/** A section's data, or NULL when absent or of the other type.  *n gets
 *  the element count (floats; text length without the NUL), 0 when NULL
 *  is returned; n may be NULL.  An empty f32 section gives a
 *  non-NULL pointer and *n == 0.  The result is borrowed: valid until
 *  bnn_ckpt_free(ck) (adding sections does not move it). */
const float *bnn_ckpt_find_f32(const bnn_ckpt *ck, const char *name, long *n);
const char *bnn_ckpt_find_text(const bnn_ckpt *ck, const char *name);

/** CRC-32 (IEEE 802.3, as zlib's crc32) of n bytes, continuing from crc
 *  (start with 0).  data may be NULL when n is 0. */
uint32_t bnn_crc32(uint32_t crc, const void *data, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* BNN_CHECKPOINT_H */
