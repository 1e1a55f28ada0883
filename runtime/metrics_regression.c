/* metrics_regression.c: placeholder, being written. */
#include "bnn.h"
