/* optim_adam.c: placeholder, being written. */
#include "bnn.h"
