/* crc32.c: placeholder, being written. */
#include "bnn.h"
