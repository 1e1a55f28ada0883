/* optim_sgd.c: placeholder, being written. */
#include "bnn.h"
