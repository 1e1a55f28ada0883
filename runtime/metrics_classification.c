/* metrics_classification.c: placeholder, being written. */
#include "bnn.h"
