/* optim_clip.c: placeholder, being written. */
#include "bnn.h"
