/*
 * blas_threads.c: the number of threads OpenBLAS uses for the generated
 * code's matrix products.  One thread is the default for every program the
 * driver builds: small products get slower with more (docs/driver.md).
 */
#include <cblas.h>

#include "bnn.h"

void bnn_set_threads(int threads)
{
	openblas_set_num_threads(threads >= 1 ? threads : 1);
}
