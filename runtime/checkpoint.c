/* checkpoint.c: placeholder, being written. */
#include "bnn.h"
