/* data_csv.c: placeholder, being written. */
#include "bnn.h"
