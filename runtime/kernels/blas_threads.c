/*
 * blas_threads.c: the number of threads the generated code's matrix
 * products use.  One thread is the default for every program the driver
 * builds: small products get slower with more (docs/driver.md).  On one
 * thread bnn_sgemm runs its own kernel (runtime/kernels/gemm.c); with more it
 * hands every product to OpenBLAS, which runs it on that many threads.
 */
#include <cblas.h>

#include "bnn.h"
#include "gemm_internal.h"

void bnn_set_threads(int threads)
{
	openblas_set_num_threads(threads >= 1 ? threads : 1);
	bnn_gemm_set_threads(threads);
}
