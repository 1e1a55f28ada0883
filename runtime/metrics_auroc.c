/* metrics_auroc.c: placeholder, being written. */
#include "bnn.h"
