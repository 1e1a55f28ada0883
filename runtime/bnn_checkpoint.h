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
 */
#ifndef BNN_CHECKPOINT_H
#define BNN_CHECKPOINT_H

#include <stdint.h>

#include "bnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BNN_CKPT_VERSION 1

typedef struct bnn_ckpt bnn_ckpt;

/** A new empty checkpoint; NULL when out of memory. name is copied. */
bnn_ckpt *bnn_ckpt_new(uint64_t fingerprint, const char *model_name);
void bnn_ckpt_free(bnn_ckpt *ck);

/** Add a section (data copied); a section name may appear once.
 *  @return BNN_OK, BNN_ENOMEM, BNN_EINVAL (duplicate or empty name). */
int bnn_ckpt_add_f32(bnn_ckpt *ck, const char *name, const float *data,
                     long n);
int bnn_ckpt_add_text(bnn_ckpt *ck, const char *name, const char *text);

/** Write atomically (see above).  BNN_EIO with the path on failure, and
 *  the temporary file removed. */
int bnn_ckpt_save(const bnn_ckpt *ck, const char *path, bnn_err *err);

/** Read and verify a checkpoint.  BNN_EIO (cannot open/read), BNN_EFORMAT
 *  (not a checkpoint, unsupported version, truncated, bad checksum: the
 *  message says which), BNN_ENOMEM. */
int bnn_ckpt_load(const char *path, bnn_ckpt **out, bnn_err *err);

uint64_t bnn_ckpt_fingerprint(const bnn_ckpt *ck);
const char *bnn_ckpt_model_name(const bnn_ckpt *ck);

/** A section's data, or NULL when absent or of the other type.  *n gets
 *  the element count (floats; text length without the NUL). */
const float *bnn_ckpt_find_f32(const bnn_ckpt *ck, const char *name,
                               long *n);
const char *bnn_ckpt_find_text(const bnn_ckpt *ck, const char *name);

/** CRC-32 (IEEE 802.3, as zlib's crc32) of n bytes, continuing from crc
 *  (start with 0). */
uint32_t bnn_crc32(uint32_t crc, const void *data, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* BNN_CHECKPOINT_H */
