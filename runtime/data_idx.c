/* data_idx.c: placeholder, being written. */
#include "bnn.h"
