/* data_standardize.c: placeholder, being written. */
#include "bnn.h"
