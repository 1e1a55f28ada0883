/*
 * peak.h: the measured single-core FP32 FMA peak of the machine the
 * benchmarks run on (bench/peak.c).
 *
 * Matrix-product rates mean little on their own: bench/bench.c divides
 * them by this figure, measured in the same run, so a "fraction of peak"
 * compares like with like across machines.  peak.c is compiled with
 * -O2 -march=native (Makefile.am), so it uses the widest FMA the build
 * machine has; the narrower widths can be measured too.
 */
#ifndef BNN_BENCH_PEAK_H
#define BNN_BENCH_PEAK_H

/* One measurement of the FMA peak. */
typedef struct bnn_bench_peak {
	double gflops; /* median over the repeats, GFLOP/s (FMA = 2 flops) */
	double best;   /* the fastest repeat, GFLOP/s */
	int repeats;   /* how many timed repeats the median is over */
	int chains;    /* independent accumulator chains */
	int lanes;     /* floats per vector */
} bnn_bench_peak;

/* The clocks the benchmarks can time with. */
enum bnn_bench_clock {
	BNN_BENCH_CPU, /* CPU time of the process (all its threads):
	                  time the process was descheduled on a busy
	                  machine does not count */
	BNN_BENCH_WALL /* the monotonic wall clock */
};

/** The widest vector, in floats, peak.c was compiled for: 16 (AVX-512),
 *  8 (AVX) or 4. */
int bnn_bench_fma_lanes(void);

/**
 * Measure the FP32 FMA rate of the calling thread: independent chains of
 * vector multiply-adds, a warm-up, then `repeats` timed runs of at least
 * `min_seconds` each.
 * @param lanes        vector width in floats: 4, 8 or 16; anything else,
 *                     or a width above bnn_bench_fma_lanes(), means the
 *                     widest (the result's lanes field says which ran)
 * @param repeats      timed repeats, 1 .. 64 (clamped)
 * @param min_seconds  the least duration of one repeat (e.g. 0.2)
 * @param clock        enum bnn_bench_clock
 * @return the median and best rate; cannot fail.
 */
bnn_bench_peak bnn_bench_fma_peak(int lanes, int repeats, double min_seconds, int clock);

/** Seconds on the given clock (enum bnn_bench_clock), from an arbitrary
 *  origin. */
double bnn_bench_now(int clock);

#endif /* BNN_BENCH_PEAK_H */
