/*
 * bnn_gen/loop.h: the loops every kernel is written with.
 *
 * BNN_GEN_LOOP and BNN_GEN_EACH run an element-wise statement in chunks
 * that gcc -O2 vectorises, bnn_gen_sum sums in a fixed order, bnn_gen_copy
 * copies a short row without a call of memmove and bnn_gen_pick selects
 * without a branch.
 *
 * BNN_GEN_PARALLEL_FOR shares a loop among the calling thread's OpenMP
 * team when its work passes BNN_GEN_PAR_MIN, and BNN_GEN_PEACH is
 * BNN_GEN_EACH on that team, in fixed chunks of BNN_GEN_PAR_CHUNK values.
 * A kernel splits its outputs among threads, never a sum: every value is
 * computed by one thread in the same order as on one, so results are the
 * same bits for any number of threads.  Without OpenMP (no -fopenmp) the
 * macros are plain loops, and this header calls no OpenMP function.
 */
#ifndef BNN_GEN_LOOP_H
#define BNN_GEN_LOOP_H

#include <string.h>

#include "clones.h"
#include "real.h"

/* dst[i] = expr, or dst[i] += expr when acc, for i in [0, n).  The test of
 * acc sits outside the loops, and the loops run in chunks of a constant 16
 * iterations (one AVX-512 vector, four SSE ones) plus a remainder: gcc
 * vectorises such loops at -O2, where its cheap cost model refuses loops
 * of unknown length, provided the chunk's own loop counts from 0 to the
 * constant (a loop from c·16 to c·16 + 16 is not recognised, and was
 * compiled to scalar, branchy code).  expr uses i.
 *
 * Inside an OpenMP region (BNN_GEN_PEACH, a kernel's team) the outlined
 * body sees the kernel's pointers without their restrict, and gcc compiled
 * such chunks to scalar code: relu's forward became a loop with a branch
 * per value (12% of a transformer step), a column sum a load-add-store
 * chain.  So the chunk's loop is marked `omp simd` (BNN_GEN_SIMD; i, the
 * index stmt reads, is each iteration's own): stmt writes element i from
 * values at i alone, never a sum across iterations, so the vector code
 * gives the scalar code's bits.  Every user of these loops must keep it
 * so.  The pragma is gcc's alone: clang warns (-Wpass-failed, an error
 * under -Werror) on an `omp simd` loop it cannot vectorise, such as one
 * that calls exp in the double build. */
#if defined(_OPENMP) && defined(__GNUC__) && !defined(__clang__)
#define BNN_GEN_SIMD _Pragma("omp simd private(i)")
#else
#define BNN_GEN_SIMD
#endif
#define BNN_GEN_CHUNK 16
#define BNN_GEN_LOOP(n, stmt)                                   \
	do {                                                    \
		long c_, k_, chunks_ = (n) / BNN_GEN_CHUNK, i;  \
		for (c_ = 0; c_ < chunks_; c_++)                \
			BNN_GEN_SIMD                            \
		for (k_ = 0; k_ < BNN_GEN_CHUNK; k_++) {        \
			i = c_ * BNN_GEN_CHUNK + k_;            \
			stmt;                                   \
		}                                               \
		for (i = chunks_ * BNN_GEN_CHUNK; i < (n); i++) \
			stmt;                                   \
	} while (0)
#define BNN_GEN_EACH(n, acc, dst, expr)                      \
	do {                                                 \
		if (acc)                                     \
			BNN_GEN_LOOP(n, (dst)[i] += (expr)); \
		else                                         \
			BNN_GEN_LOOP(n, (dst)[i] = (expr));  \
	} while (0)

/* ---- threads ---------------------------------------------------------------
 * BNN_GEN_PARALLEL_FOR(work) goes right before a for loop in OpenMP's
 * canonical form: its iterations are shared among the team in contiguous
 * blocks (schedule(static)) when work > BNN_GEN_PAR_MIN, and run on the
 * calling thread otherwise (small layers stay serial: starting a team
 * costs more than they do).  work counts the values the loop reads or
 * writes, roughly.  Within a parallel region (a kernel called by one
 * thread of a team) the loop runs on that thread alone, OpenMP's default
 * for nested regions.  The iterations must write disjoint outputs, and
 * each output must be computed as on one thread: that is what keeps
 * results identical for every team size.
 *
 * BNN_GEN_PAR_MIN: measured on tanh's backward over n floats (a
 * throwaway program, minimum of 7 repeats, two cores): 2 threads tie with
 * 1 at 8K floats (5.1 µs), win at 16K (10.4 µs against 14.7) and 32K
 * (16.8 against 28.7): a team's start and join cost about 2.5 µs, the loop
 * about 0.35 ns a float.  Loops that cost more a value pass their work
 * scaled up (BNN_GEN_PEACH's cost). */
#ifndef BNN_GEN_PAR_MIN
#define BNN_GEN_PAR_MIN 16384L
#endif
/* Values per chunk of BNN_GEN_PEACH: a multiple of BNN_GEN_CHUNK, a
 * constant so that chunk boundaries do not depend on the team. */
#define BNN_GEN_PAR_CHUNK 4096L
#if defined(_OPENMP)
#define BNN_GEN_PRAGMA_(x) _Pragma(#x)
#define BNN_GEN_PARALLEL_FOR(work) \
	BNN_GEN_PRAGMA_(omp parallel for schedule(static) if ((work) > BNN_GEN_PAR_MIN))
#else
#define BNN_GEN_PARALLEL_FOR(work)
#endif

/* ---- teams around a kernel --------------------------------------------------
 * A kernel whose serial loops rely on the constants of an inlined layer
 * shape (bnn_gen/conv.h) cannot hold its own parallel region: OpenMP
 * outlines a region into a function of its own before inlining, where
 * the shape is a variable.  So the generated code starts the region
 * around the kernel's call, BNN_GEN_TEAM_REGION(n) right before it: the
 * outlined body then inlines the kernel with the shape still a constant.
 * Inside, every thread of the team runs the kernel's code; the kernel
 * shares its tasks with BNN_GEN_TEAM_FOR (an orphaned `omp for`, static
 * schedule, a barrier at its end) and does shared one-off work under
 * BNN_GEN_TEAM_SINGLE.  BNN_GEN_LANE() is the calling thread's number in
 * the team (0 on one thread), the lane of scratch it works in.  With
 * n = 1, or called outside such a region, the same loops run every task
 * on the calling thread.  bnn_threads_here() (the library's, declared here
 * so that this header includes no other) is 1 inside an active region,
 * where a nested region would get one thread anyway. */
#if defined(_OPENMP)
int bnn_threads_here(void);
int bnn_thread_index(void);
#define BNN_GEN_TEAM_REGION(n) BNN_GEN_PRAGMA_(omp parallel num_threads(n) if ((n) > 1))
#define BNN_GEN_TEAM_FOR       BNN_GEN_PRAGMA_(omp for schedule(static))
#define BNN_GEN_TEAM_SINGLE    BNN_GEN_PRAGMA_(omp single)
#define BNN_GEN_LANE()         bnn_thread_index()
#define BNN_GEN_THREADS_HERE() bnn_threads_here()
#else
#define BNN_GEN_TEAM_REGION(n)
#define BNN_GEN_TEAM_FOR
#define BNN_GEN_TEAM_SINGLE
#define BNN_GEN_LANE()         0
#define BNN_GEN_THREADS_HERE() 1
#endif

/* BNN_GEN_LOOP over [lo, hi) instead of [0, n): i runs from lo. */
#define BNN_GEN_LOOP_RANGE(lo, hi, stmt)                                          \
	do {                                                                      \
		long c_, k_, lo_ = (lo), chunks_ = ((hi)-lo_) / BNN_GEN_CHUNK, i; \
		for (c_ = 0; c_ < chunks_; c_++)                                  \
			BNN_GEN_SIMD                                              \
		for (k_ = 0; k_ < BNN_GEN_CHUNK; k_++) {                          \
			i = lo_ + c_ * BNN_GEN_CHUNK + k_;                        \
			stmt;                                                     \
		}                                                                 \
		for (i = lo_ + chunks_ * BNN_GEN_CHUNK; i < (hi); i++)            \
			stmt;                                                     \
	} while (0)

/* BNN_GEN_EACH(n, acc, dst, expr) on the team: chunks of BNN_GEN_PAR_CHUNK
 * values, one thread each, when cost·n > BNN_GEN_PAR_MIN (cost: the
 * loop's cost per value against a plain copy's, a constant).  An
 * element-wise loop, so the same bits as BNN_GEN_EACH. */
#define BNN_GEN_PEACH(n, cost, acc, dst, expr)                                                   \
	do {                                                                                     \
		const long pn_ = (n),                                                            \
		           pchunks_ = (pn_ + BNN_GEN_PAR_CHUNK - 1) / BNN_GEN_PAR_CHUNK;         \
		long pc_;                                                                        \
		if ((cost)*pn_ <= BNN_GEN_PAR_MIN) {                                             \
			BNN_GEN_EACH(pn_, acc, dst, expr);                                       \
			break;                                                                   \
		}                                                                                \
		BNN_GEN_PARALLEL_FOR((cost)*pn_)                                                 \
		for (pc_ = 0; pc_ < pchunks_; pc_++) {                                           \
			const long plo_ = pc_ * BNN_GEN_PAR_CHUNK;                               \
			const long phi_ =                                                        \
			        pn_ - plo_ < BNN_GEN_PAR_CHUNK ? pn_ : plo_ + BNN_GEN_PAR_CHUNK; \
			if (acc)                                                                 \
				BNN_GEN_LOOP_RANGE(plo_, phi_, (dst)[i] += (expr));              \
			else                                                                     \
				BNN_GEN_LOOP_RANGE(plo_, phi_, (dst)[i] = (expr));               \
		}                                                                                \
	} while (0)

/* p[0] = op over p[0..16) (the BNN_GEN_CHUNK = 16 partials), pairwise:
 * p[k] op= p[k + 8] for k < 8, then 4, 2 and 1.  Loops of constant length, which
 * compilers unroll or vectorise: written as one loop halving a variable,
 * gcc kept it a scalar loop through memory, which on rows of 64 values
 * (the attention's softmax) cost as much as the row's exponentials.  The
 * order of the operations is that loop's, so the results are its bits.
 * OP(a, b) gives the new a. */
#define BNN_GEN_HALVES(p, OP)                                               \
	do {                                                                \
		int h_;                                                     \
		for (h_ = 0; h_ < BNN_GEN_CHUNK / 2; h_++)                  \
			(p)[h_] = OP((p)[h_], (p)[h_ + BNN_GEN_CHUNK / 2]); \
		for (h_ = 0; h_ < BNN_GEN_CHUNK / 4; h_++)                  \
			(p)[h_] = OP((p)[h_], (p)[h_ + BNN_GEN_CHUNK / 4]); \
		for (h_ = 0; h_ < BNN_GEN_CHUNK / 8; h_++)                  \
			(p)[h_] = OP((p)[h_], (p)[h_ + BNN_GEN_CHUNK / 8]); \
		(p)[0] = OP((p)[0], (p)[1]);                                \
	} while (0)
#define BNN_GEN_ADD2(a, b) ((a) + (b))
#define BNN_GEN_MAX2(a, b) ((b) > (a) ? (b) : (a))

/* Σ x[i] for i in [0, n), in BNN_GEN_CHUNK interleaved partial sums
 * added pairwise at the end: a loop gcc vectorises, where one running sum
 * is a serial chain of additions (a fixed order: the same n and x give the
 * same bits). */
BNN_GEN_INLINE bnn_real bnn_gen_sum(long n, const bnn_real *restrict x)
{
	bnn_real part[BNN_GEN_CHUNK] = { 0 };
	long c, chunks = n / BNN_GEN_CHUNK, q;
	int k;

	for (c = 0; c < chunks; c++)
		for (k = 0; k < BNN_GEN_CHUNK; k++)
			part[k] += x[c * BNN_GEN_CHUNK + k];
	for (q = chunks * BNN_GEN_CHUNK; q < n; q++)
		part[q - chunks * BNN_GEN_CHUNK] += x[q];
	BNN_GEN_HALVES(part, BNN_GEN_ADD2);
	return part[0];
}

/* var = Σ expr for i in [0, n), in double: bnn_gen_sum's BNN_GEN_CHUNK
 * interleaved partial sums (the same bits for the same n and values), a
 * loop that vectorises where one running sum is a serial chain.  expr uses
 * i and is converted to double; var is a double. */
#define BNN_GEN_DSUM(n, var, expr)                                         \
	do {                                                               \
		double p_[BNN_GEN_CHUNK] = { 0 };                          \
		long c_, k_, chunks_ = (n) / BNN_GEN_CHUNK, i;             \
		for (c_ = 0; c_ < chunks_; c_++)                           \
			BNN_GEN_SIMD                                       \
		for (k_ = 0; k_ < BNN_GEN_CHUNK; k_++) {                   \
			i = c_ * BNN_GEN_CHUNK + k_;                       \
			p_[k_] += (double)(expr);                          \
		}                                                          \
		for (i = chunks_ * BNN_GEN_CHUNK; i < (n); i++)            \
			p_[i - chunks_ * BNN_GEN_CHUNK] += (double)(expr); \
		BNN_GEN_HALVES(p_, BNN_GEN_ADD2);                          \
		(var) = p_[0];                                             \
	} while (0)

/* max x[i] for i in [0, n), n >= 1, in BNN_GEN_CHUNK interleaved partial
 * maxima, as bnn_gen_sum (a maximum is exact in any order; a NaN among x
 * is passed over). */
BNN_GEN_INLINE bnn_real bnn_gen_max(long n, const bnn_real *restrict x)
{
	bnn_real part[BNN_GEN_CHUNK];
	long c, chunks = n / BNN_GEN_CHUNK, q;
	int k;

	for (k = 0; k < BNN_GEN_CHUNK; k++)
		part[k] = x[0];
	for (c = 0; c < chunks; c++)
		for (k = 0; k < BNN_GEN_CHUNK; k++)
			part[k] = x[c * BNN_GEN_CHUNK + k] > part[k] ? x[c * BNN_GEN_CHUNK + k]
			                                             : part[k];
	for (q = chunks * BNN_GEN_CHUNK; q < n; q++)
		part[0] = x[q] > part[0] ? x[q] : part[0];
	BNN_GEN_HALVES(part, BNN_GEN_MAX2);
	return part[0];
}

/* s[j] = Σ_r x[r·n + j] over r in [0, rows), in row order, for j in
 * [0, n): each column's sum is one thread's, the team shares the columns
 * in chunks of BNN_GEN_PAR_CHUNK / 16 (the same bits for any team). */
static inline BNN_GEN_CLONES void bnn_gen_col_sums(long rows, long n, const bnn_real *restrict x,
                                                   bnn_real *restrict s)
{
	const long width = BNN_GEN_PAR_CHUNK / 16, chunks = (n + width - 1) / width;
	long c;

	BNN_GEN_PARALLEL_FOR(rows * n)
	for (c = 0; c < chunks; c++) {
		const long lo = c * width, m = n - lo < width ? n - lo : width;
		bnn_real *restrict sc = s + lo;
		long r;

		BNN_GEN_EACH(m, 0, sc, x[lo + i]);
		for (r = 1; r < rows; r++) {
			const bnn_real *restrict xr = x + r * n + lo;
			BNN_GEN_EACH(m, 1, sc, xr[i]);
		}
	}
}

/* dst[0..n) = src[0..n) for a short n known where the kernel is inlined:
 * in copies of one BNN_GEN_CHUNK each, which compilers expand into a few
 * vector moves (a copy loop, or one memcpy of n floats, becomes a call of
 * memmove once n passes a few dozen floats: thousands of calls a layer). */
static inline void bnn_gen_copy(long n, bnn_real *restrict dst, const bnn_real *restrict src)
{
	long c, chunks = n / BNN_GEN_CHUNK, q;

	for (c = 0; c < chunks; c++)
		memcpy(dst + c * BNN_GEN_CHUNK, src + c * BNN_GEN_CHUNK,
		       BNN_GEN_CHUNK * sizeof *dst);
	for (q = chunks * BNN_GEN_CHUNK; q < n; q++)
		dst[q] = src[q];
}

/* c ? a : b with both operands evaluated first, so that a loop of it is a
 * vector select rather than a branch (gcc does not if-convert a load that
 * only one branch makes). */
static inline bnn_real bnn_gen_pick(int c, bnn_real a, bnn_real b)
{
	return c ? a : b;
}

#endif /* BNN_GEN_LOOP_H */
