/*
 * floats.h: 64-byte aligned float arrays for the library's hot arrays
 * (floats.c).  Internal to the library (not installed).
 */
#ifndef BNN_FLOATS_H
#define BNN_FLOATS_H

/* n floats (at least one) on a 64-byte boundary, or NULL; free() them. */
float *bnn_floats_alloc(long n);

/* The same, set to zero. */
float *bnn_floats_zeroed(long n);

#endif
