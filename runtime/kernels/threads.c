/*
 * threads.c: how many threads the library runs on (bnn_set_threads,
 * bnn_threads, bnn_threads_available; docs/training.md, "Threads"), and
 * the two questions generated code asks of OpenMP (bnn_threads_here,
 * bnn_thread_index: bnn_gen/loop.h), so that its headers include no
 * OpenMP header.
 *
 * The library's parallel loops are OpenMP's: the generated code's
 * (the bnn_gen headers), the matrix products (gemm.c), the sampler, the optimizer
 * updates, prediction and the metrics.  bnn_set_threads sets OpenMP's
 * team size for the parallel regions the calling thread starts (OpenMP's
 * nthreads-var is per thread, so two user threads may train two models
 * with different counts).  OpenBLAS, where it still runs (the fallback
 * of bnn_sgemm on CPUs without AVX-512, and the double products of the
 * gradient tests), is kept on one thread: it runs inside our threads,
 * never beside them.
 *
 * The default, bnn_threads_available(), is every core the process may
 * use: the CPUs of its affinity mask, capped by a cgroup CPU quota (v2
 * cpu.max or v1 cpu.cfs_quota_us, rounded up), as a container on a big
 * machine should not start 64 threads on a quota of 2 CPUs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn.h"

/* The CPUs of the affinity mask, or the online CPUs if it cannot be read. */
static int threads_affinity(void)
{
	cpu_set_t set;
	long online;

	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (int)online : 1;
}

/* ceil(quota / period) of a cgroup CPU limit read from path with format
 * fmt (two numbers, or one each from two files), or 0 when there is none. */
static int threads_quota_of(const char *path, const char *period_path)
{
	FILE *f = fopen(path, "r");
	long long quota = -1, period = 0;
	int got;

	if (!f)
		return 0;
	got = fscanf(f, "%lld %lld", &quota, &period);
	fclose(f);
	if (got < 1 || quota <= 0)
		return 0; /* "max" (v2) or -1 (v1): no quota */
	if (period_path) {
		if (!(f = fopen(period_path, "r")))
			return 0;
		got = fscanf(f, "%lld", &period);
		fclose(f);
		if (got != 1)
			return 0;
	} else if (got != 2) {
		return 0;
	}
	if (period <= 0)
		return 0;
	return (int)((quota + period - 1) / period);
}

static int threads_quota(void)
{
	int q = threads_quota_of("/sys/fs/cgroup/cpu.max", NULL);

	if (q == 0)
		q = threads_quota_of("/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
		                     "/sys/fs/cgroup/cpu/cpu.cfs_period_us");
	return q;
}

int bnn_threads_available(void)
{
	int n = threads_affinity(), q = threads_quota();

	return q > 0 && q < n ? q : n;
}

void bnn_set_threads(int threads)
{
	if (threads < 1)
		threads = bnn_threads_available();
	openblas_set_num_threads(1);
#ifdef _OPENMP
	omp_set_num_threads(threads);
#endif
}

int bnn_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

int bnn_threads_here(void)
{
#ifdef _OPENMP
	return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
	return 1;
#endif
}

int bnn_thread_index(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}
