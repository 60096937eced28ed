/*
 * Shared parts of the netnoise proxy applications (one .c file each in csrc/apps): the
 * compute-phase modes, time accounting of MPI calls, traffic counting, the
 * run loop (one nn_loop iteration = one full application run of --steps
 * steps) and a small FFT used by the two all-to-all applications.
 *
 * Only static inline functions and macros: every application is compiled
 * from its own .c file plus the common layer.
 */
#ifndef NN_PROXY_H
#define NN_PROXY_H

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"
#include "nn_rng.h"

/* ---------------------------------------------------------------- compute modes */

enum { PROXY_ARITH, PROXY_SPIN, PROXY_SLEEP };

typedef struct {
    const char *tool;
    const char *compute; /* --compute value */
    double compute_us;   /* --compute-us: compute time per step for spin and sleep */
    long steps;          /* --steps */
    int mode;
    int rank, nranks;
    MPI_Comm comm;
    /* Accumulated over one application run on this rank. */
    double comm_s;
    double compute_s;
    double sent_bytes; /* payload this rank handed to MPI for other ranks */
    double messages;   /* point-to-point messages to other ranks, collectives counted once */
    long long sleep_debt_ns;
} proxy;

#define PROXY_COLUMNS \
    "run,runtime_s,comm_s,comm_mean_s,compute_s,sent_bytes,messages_count,checksum"

#define PROXY_COMPUTE_HELP                                                                   \
    "computation phase of every step: 'arith' runs the application's own floating-point "   \
    "kernel on its local data (its cost follows --size; --compute-us is ignored); 'spin' "   \
    "busy-waits --compute-us per step on the monotonic clock; 'sleep' sleeps --compute-us "  \
    "per step, leaving the core free so that 2 cores can host 8-16 emulated nodes (sleep "   \
    "overshoot is paid back on the following sleeps of the run). In spin and sleep modes "  \
    "the messages still carry the application's data with the same sizes, partners and "    \
    "dependencies"

/* Appended to every application's method paragraph. */
#define PROXY_METHOD_TAIL                                                                    \
    " --warmup and --iterations count application runs of --steps steps each; every timed "  \
    "run writes one row: runtime_s (max over ranks, from a barrier), comm_s (max over ranks "  \
    "of the time inside MPI calls), comm_mean_s, compute_s, sent_bytes and messages_count "    \
    "(summed over ranks) and a checksum of the final data, identical for the same --seed, "    \
    "rank count and options. With --iterations 0 and --stop-file the application runs again "  \
    "and again until the file appears, as the background job of a co-run."

#define PROXY_STR_(x) #x
#define PROXY_STR(x) PROXY_STR_(x)

/* The options every application shares; the caller adds --size and its own.
 * def_steps and def_us are the default values as string literals, for the help. */
#define PROXY_OPTIONS(p, def_steps, def_us)                                                     \
    {"steps", NN_OPT_LONG, &(p)->steps, 1, 1e7, NULL,                                           \
     "application steps (iterations, cycles, sweeps) of one run; one row per run (default "     \
     def_steps ")"},                                                                            \
    {"compute", NN_OPT_CHOICE, &(p)->compute, 0, 0, "arith|spin|sleep",                         \
     PROXY_COMPUTE_HELP " (default sleep)"},                                                    \
    {"compute-us", NN_OPT_DOUBLE, &(p)->compute_us, 0, 1e7, NULL,                               \
     "computation time per step in microseconds for --compute spin and sleep (default " def_us  \
     ")"}

static inline void proxy_defaults(proxy *p, const char *tool, long steps, double compute_us)
{
    memset(p, 0, sizeof *p);
    p->tool = tool;
    p->compute = "sleep";
    p->compute_us = compute_us;
    p->steps = steps;
}

/* After option parsing: resolves the mode and checks the rank count. */
static inline void proxy_setup(proxy *p, const nn_run_options *run, MPI_Comm comm, int min_ranks)
{
    p->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &p->rank));
    MPI_CHECK(MPI_Comm_size(comm, &p->nranks));
    p->mode = strcmp(p->compute, "arith") == 0  ? PROXY_ARITH
              : strcmp(p->compute, "spin") == 0 ? PROXY_SPIN
                                                : PROXY_SLEEP;
    if (p->nranks < min_ranks)
        nn_fail_all(comm,
                    "%s: needs at least %d ranks (a proxy application must communicate), "
                    "got %d",
                    p->tool, min_ranks, p->nranks);
    if (run->iterations == 0 && run->duration_s == 0 && run->stop_file == NULL)
        nn_fail_all(comm, "%s: --iterations 0 needs --duration or --stop-file to end", p->tool);
}

static inline void proxy_run_reset(proxy *p)
{
    p->comm_s = p->compute_s = p->sent_bytes = p->messages = 0.0;
    p->sleep_debt_ns = 0;
}

/* Waits ns nanoseconds the way the mode says. Sleeping overshoots (timer
 * slack, wake-up latency); the excess is paid back on the next waits so the
 * total over a run matches what was asked for. */
static inline void proxy_wait_ns(proxy *p, long long ns)
{
    if (ns <= 0)
        return;
    if (p->mode == PROXY_SPIN) {
        nn_spin_ns(ns);
        return;
    }
    long long want = ns - p->sleep_debt_ns;
    if (want <= 0) {
        p->sleep_debt_ns = -want;
        return;
    }
    long long t0 = nn_now_ns();
    nn_sleep_ns(want);
    p->sleep_debt_ns = nn_now_ns() - t0 - want;
}

/* As proxy_wait_ns, in slices of at most 200 us with MPI_Testall between
 * them, so that nonblocking collectives progress while "computing". */
static inline void proxy_wait_progress(proxy *p, long long ns, MPI_Request *reqs, int n)
{
    const long long slice = 200000;
    while (ns > 0) {
        long long now = ns < slice ? ns : slice;
        proxy_wait_ns(p, now);
        ns -= now;
        if (n > 0) {
            int flag;
            double t0 = nn_now();
            MPI_CHECK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
            p->comm_s += nn_now() - t0;
        }
    }
}

/* Fraction of this step's compute budget in nanoseconds. */
static inline long long proxy_share_ns(const proxy *p, double fraction)
{
    return (long long)(p->compute_us * 1e3 * fraction);
}

/* A compute phase: the kernel statement in arith mode, otherwise a wait of
 * `fraction` of --compute-us. Its wall time is added to compute_s. */
#define PROXY_COMPUTE(p, fraction, kernel)                                  \
    do {                                                                    \
        double proxy_t0_ = nn_now();                                        \
        if ((p)->mode == PROXY_ARITH) {                                     \
            kernel;                                                         \
        } else {                                                            \
            proxy_wait_ns((p), proxy_share_ns((p), (fraction)));            \
        }                                                                   \
        (p)->compute_s += nn_now() - proxy_t0_;                             \
    } while (0)

/* An MPI call whose wall time counts as communication. */
#define PROXY_MPI(p, call)                                                  \
    do {                                                                    \
        double proxy_t0_ = nn_now();                                        \
        MPI_CHECK(call);                                                    \
        (p)->comm_s += nn_now() - proxy_t0_;                                \
    } while (0)

/* Counts a point-to-point message of `bytes` to `dest` when it leaves the rank. */
static inline void proxy_count_send(proxy *p, int dest, double bytes)
{
    if (dest == MPI_PROC_NULL || dest == p->rank)
        return;
    p->sent_bytes += bytes;
    p->messages += 1;
}

/* Transposes split a global edge evenly over the ranks: a size that does not
 * divide stops every rank with the nearest size that would. */
static inline void proxy_require_divisible(const proxy *p, long size)
{
    if (size % p->nranks != 0)
        nn_fail_all(p->comm,
                    "%s: --size %ld must be divisible by the number of ranks %d "
                    "(%ld = %d x %ld + %ld); e.g. --size %ld",
                    p->tool, size, p->nranks, size, p->nranks, size / p->nranks,
                    size % p->nranks, (size / p->nranks + 1) * p->nranks);
}

/* Six-face halo exchange of a 3-D process grid: face s goes to nbr[s] with
 * tag s, and arrives from nbr[s] tagged with the opposite face s ^ 1; all
 * twelve requests are in flight at once and their time counts as
 * communication. MPI_PROC_NULL neighbours (free surfaces) are skipped by MPI. */
static inline void proxy_halo6(proxy *p, double *const send[6], double *const recv[6],
                               const int nbr[6], int count)
{
    MPI_Request req[12];
    double t0 = nn_now();
    for (int s = 0; s < 6; s++)
        MPI_CHECK(MPI_Irecv(recv[s], count, MPI_DOUBLE, nbr[s], s ^ 1, p->comm, &req[s]));
    for (int s = 0; s < 6; s++) {
        MPI_CHECK(MPI_Isend(send[s], count, MPI_DOUBLE, nbr[s], s, p->comm, &req[6 + s]));
        proxy_count_send(p, nbr[s], count * sizeof(double));
    }
    MPI_CHECK(MPI_Waitall(12, req, MPI_STATUSES_IGNORE));
    p->comm_s += nn_now() - t0;
}

/* Counts a collective: `bytes` of payload this rank contributes for others. */
static inline void proxy_count_collective(proxy *p, double bytes)
{
    p->sent_bytes += bytes;
    p->messages += 1;
}

/* Meta lines every application writes after the preamble. */
static inline void proxy_meta(const proxy *p, nn_writer *w, const nn_run_options *run)
{
    nn_meta(w, "steps", "%ld", p->steps);
    nn_meta(w, "compute", "%s", p->compute);
    nn_meta(w, "compute_us", "%g", p->compute_us);
    nn_meta(w, "warmup", "%ld", run->warmup);
    nn_meta(w, "iterations", "%ld", run->iterations);
    nn_meta(w, "clock", "CLOCK_MONOTONIC");
    nn_meta(w, "runtime_s", "max over ranks of the wall time of the --steps steps of one run, "
                            "from a barrier on");
    nn_meta(w, "comm_s", "max over ranks of the wall time spent inside MPI calls during the run");
    nn_meta(w, "comm_mean_s", "mean over ranks of the same");
    nn_meta(w, "compute_s", "max over ranks of the wall time of the compute phases");
    nn_meta(w, "sent_bytes",
            "payload sent to other ranks during the run, summed over ranks (a collective "
            "counts the bytes each rank hands to MPI for the others)");
    nn_meta(w, "messages_count", "messages to other ranks, summed over ranks (a collective "
                                 "call counts once per rank)");
    nn_meta(w, "checksum", "deterministic digest of the final data of the run (same --seed, "
                           "ranks and options: same value)");
}

/* The application callbacks: reset re-creates the initial data from the
 * seed, steps runs the timed --steps steps, checksum (collective) digests
 * the final data. */
typedef struct {
    void (*reset)(void *app, proxy *p);
    void (*steps)(void *app, proxy *p);
    double (*checksum)(void *app, proxy *p);
} proxy_app;

static inline void proxy_one_run(const proxy_app *fn, void *app, proxy *p, nn_writer *w, long row)
{
    fn->reset(app, p);
    proxy_run_reset(p);
    MPI_CHECK(MPI_Barrier(p->comm));
    double t0 = nn_now();
    fn->steps(app, p);
    double elapsed = nn_now() - t0;
    double sum = fn->checksum(app, p);
    double mine_max[3] = {elapsed, p->comm_s, p->compute_s}, max[3];
    double mine_sum[3] = {p->comm_s, p->sent_bytes, p->messages}, tot[3];
    MPI_CHECK(MPI_Allreduce(mine_max, max, 3, MPI_DOUBLE, MPI_MAX, p->comm));
    MPI_CHECK(MPI_Allreduce(mine_sum, tot, 3, MPI_DOUBLE, MPI_SUM, p->comm));
    if (row >= 0)
        nn_row(w, "%ld,%.6f,%.6f,%.6f,%.6f,%.0f,%.0f,%.15e", row, max[0], max[1],
               tot[0] / p->nranks, max[2], tot[1], tot[2], sum);
}

/* Warm-up runs, then timed runs until nn_loop says stop; closes the writer. */
static inline int proxy_main_loop(const proxy_app *fn, void *app, proxy *p, nn_writer *w,
                                  const nn_run_options *run)
{
    nn_columns(w, PROXY_COLUMNS);
    nn_loop loop;
    nn_loop_begin(&loop, run, p->comm);
    while (nn_loop_warming(&loop))
        proxy_one_run(fn, app, p, w, -1);
    long row = 0;
    while (nn_loop_next(&loop))
        proxy_one_run(fn, app, p, w, row++);
    return nn_writer_close(w, 1);
}

/* Guards against option values whose arrays would not fit: every rank
 * needs the same, so all fail together with the numbers. */
enum { PROXY_MAX_MIB = 4096 };
static inline void proxy_check_memory(proxy *p, double bytes)
{
    if (bytes > (double)PROXY_MAX_MIB * 1024 * 1024)
        nn_fail_all(p->comm,
                    "%s: these options need %.0f MiB per rank, more than the limit of %d MiB; "
                    "reduce --size or the options that multiply it",
                    p->tool, bytes / (1024.0 * 1024.0), PROXY_MAX_MIB);
}

static inline void *proxy_alloc(proxy *p, size_t n, size_t size)
{
    void *mem = calloc(n > 0 ? n : 1, size);
    if (mem == NULL)
        nn_fail_all(p->comm, "%s: out of memory (%zu x %zu bytes)", p->tool, n, size);
    return mem;
}

/* Sum of a local value over ranks (collective, untimed bookkeeping). */
static inline double proxy_sum(proxy *p, double local)
{
    double total = 0.0;
    MPI_CHECK(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, p->comm));
    return total;
}

/* ---------------------------------------------------------------- FFT */

/* Twiddles exp(-2 pi i k / n), k < n. */
static inline double complex *proxy_fft_twiddles(proxy *p, size_t n)
{
    double complex *tw = proxy_alloc(p, n, sizeof *tw);
    for (size_t k = 0; k < n; k++)
        tw[k] = cexp(-2.0 * M_PI * I * (double)k / (double)n);
    return tw;
}

/* Unitary DFT of n contiguous points in place (both directions scaled by
 * 1/sqrt(n)): iterative radix-2 when n is a power of two, the direct
 * O(n^2) sum otherwise. scratch holds n points. */
static inline void proxy_fft(double complex *x, size_t n, const double complex *tw,
                             double complex *scratch, int inverse)
{
    const double scale = 1.0 / sqrt((double)n);
    if ((n & (n - 1)) == 0) {
        for (size_t i = 1, j = 0; i < n; i++) {
            size_t bit = n >> 1;
            for (; j & bit; bit >>= 1)
                j ^= bit;
            j ^= bit;
            if (i < j) {
                double complex t = x[i];
                x[i] = x[j];
                x[j] = t;
            }
        }
        for (size_t len = 2; len <= n; len <<= 1) {
            size_t half = len / 2, step = n / len;
            for (size_t s = 0; s < n; s += len)
                for (size_t k = 0; k < half; k++) {
                    double complex w = inverse ? conj(tw[k * step]) : tw[k * step];
                    double complex a = x[s + k], b = x[s + k + half] * w;
                    x[s + k] = a + b;
                    x[s + k + half] = a - b;
                }
        }
        for (size_t i = 0; i < n; i++)
            x[i] *= scale;
        return;
    }
    for (size_t k = 0; k < n; k++) {
        double complex acc = 0.0;
        for (size_t j = 0; j < n; j++) {
            double complex w = tw[(j * k) % n];
            acc += x[j] * (inverse ? conj(w) : w);
        }
        scratch[k] = acc * scale;
    }
    memcpy(x, scratch, n * sizeof *x);
}

/* Block transpose helpers for a row-distributed n x n matrix, m = n / P
 * local rows: pack puts the m x m block of columns [q m, q m + m) into
 * send[q]; unpack_transposed turns the received blocks into the local rows
 * of the transposed matrix. */
static inline void proxy_pack_blocks(const double complex *a, double complex *send, size_t n,
                                     size_t m, int nranks)
{
    for (int q = 0; q < nranks; q++)
        for (size_t i = 0; i < m; i++)
            memcpy(send + ((size_t)q * m + i) * m, a + i * n + (size_t)q * m, m * sizeof *a);
}

static inline void proxy_unpack_transposed(const double complex *recv, double complex *t,
                                           size_t n, size_t m, int nranks)
{
    for (int q = 0; q < nranks; q++) {
        const double complex *blk = recv + (size_t)q * m * m;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                t[j * n + (size_t)q * m + i] = blk[i * m + j];
    }
}

/* Weighted digest of a row-distributed complex matrix (row0 = first global row). */
static inline double proxy_digest_rows(const double complex *a, size_t rows, size_t n, size_t row0)
{
    double s = 0.0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < n; j++) {
            size_t g = (row0 + i) * 7 + j * 13;
            s += creal(a[i * n + j]) * (double)(g % 17 + 1) +
                 cimag(a[i * n + j]) * (double)(g % 11 + 1);
        }
    return s;
}

#endif
