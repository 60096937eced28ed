/*
 * Shared parts of the netnoise proxy applications (one .c file each in csrc/apps): the
 * compute-phase modes, time accounting of MPI calls, traffic counting, the
 * run loop (one nn_loop iteration = one full application run of --steps
 * steps) and a small FFT used by the two all-to-all applications.
 *
 * Declarations, types and macros here; the code is in proxy.c, compiled once
 * and linked into every application with the common layer.
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

/* Room for an application's options and the shared ones (proxy_begin). */
enum { PROXY_MAX_OPTIONS = 48 };

typedef struct {
    const char *tool;
    nn_run_options run;  /* the run options of every netnoise program */
    nn_bench bench;      /* start and end shared with every program (nn_mpi.h) */
    nn_option options[PROXY_MAX_OPTIONS]; /* the application's and the shared ones */
    char steps_help[128], compute_us_help[128]; /* their help, with the defaults */
    const char *compute; /* --compute value */
    double compute_us;   /* --compute-us: compute time per step for spin and sleep */
    double compute_jitter; /* --compute-jitter: relative spread of every compute phase */
    nn_rng jitter;         /* draws of --compute-jitter, one stream per rank */
    long steps;          /* --steps */
    int mode;
    int rank, nranks;
    MPI_Comm comm;       /* MPI_COMM_WORLD, or cart once proxy_cart made it */
    MPI_Comm cart;       /* MPI_COMM_NULL until proxy_cart */
    void **owned;        /* what proxy_alloc handed out, freed by proxy_main */
    size_t n_owned, cap_owned;
    /* Accumulated over one application run on this rank. */
    double comm_s;
    double compute_s;
    double sent_bytes; /* payload this rank handed to MPI for other ranks */
    double messages;   /* point-to-point messages to other ranks, collectives counted once */
    long long sleep_debt_ns;
} proxy;

#define PROXY_COLUMNS \
    "run,runtime_s,comm_s,comm_mean_s,compute_s,sent_bytes,messages_count,checksum"

/* Appended to every application's method paragraph. */
#define PROXY_METHOD_TAIL                                                                    \
    " --warmup and --iterations count application runs of --steps steps each; every timed "  \
    "run writes one row: runtime_s (max over ranks, from a barrier), comm_s (max over ranks "  \
    "of the time inside MPI calls), comm_mean_s, compute_s, sent_bytes and messages_count "    \
    "(summed over ranks) and a checksum of the final data, identical for the same --seed, "    \
    "rank count and options. With --iterations 0 and --stop-file the application runs again "  \
    "and again until the file appears, as the background job of a co-run. With --ci-width "    \
    "it runs until its mean runtime_s is that precise (--iterations runs at most)."

/* First of all: the defaults of --steps and --compute-us, and of the run
 * options (1 warm-up run, 1 timed run). */
void proxy_defaults(proxy *p, long steps, double compute_us);

/* The start of main (nn_bench_begin): MPI, the options, at least 2 ranks, a
 * run that can end; then the compute mode. p->comm is MPI_COMM_WORLD. opts,
 * the application's own options (--size first), are followed by those every
 * application shares: --steps, --compute, --compute-us, --compute-jitter, the
 * run options (NN_RUN_OPTIONS) and NN_PRECISION_OPTIONS. */
void proxy_begin(proxy *p, int *argc, char ***argv, const nn_option *opts,
                 const nn_tool_info *info);

/* The process grid: MPI_Dims_create fills the zero entries of dims (nonzero
 * ones stay), MPI_Cart_create without reordering (ranks stay those of
 * MPI_COMM_WORLD) becomes p->comm, and nbr[2d], nbr[2d + 1] are the lower
 * and upper neighbours along dimension d (MPI_PROC_NULL at a free surface). */
void proxy_cart(proxy *p, int ndims, int dims[], const int periods[], int nbr[]);

/* Collective over p->comm: the output file and the standard preamble. */
void proxy_writer(const proxy *p, nn_writer *w);

/* Waits ns nanoseconds the way the mode says. Sleeping overshoots (timer
 * slack, wake-up latency); the excess is paid back on the next waits so the
 * total over a run matches what was asked for. */
void proxy_wait_ns(proxy *p, long long ns);

/* As proxy_wait_ns, in slices of at most 200 us with MPI_Testall between
 * them, so that nonblocking collectives progress while "computing". */
void proxy_wait_progress(proxy *p, long long ns, MPI_Request *reqs, int n);

/* Fraction of this step's compute budget in nanoseconds, drawn with --compute-jitter. */
long long proxy_share_ns(proxy *p, double fraction);

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
void proxy_count_send(proxy *p, int dest, double bytes);

/* Transposes split a global edge evenly over the ranks: a size that does not
 * divide stops every rank with the nearest size that would. */
void proxy_require_divisible(const proxy *p, long size);

/* Six-face halo exchange of a 3-D process grid: face s goes to nbr[s] with
 * tag s, and arrives from nbr[s] tagged with the opposite face s ^ 1; all
 * twelve requests are in flight at once and their time counts as
 * communication. MPI_PROC_NULL neighbours (free surfaces) are skipped by MPI. */
void proxy_halo6(proxy *p, double *const send[6], double *const recv[6],
                 const int nbr[6], int count);

/* Index of point (x, y, z), each in 0..n+1, of a cube of edge n stored with
 * one ghost layer on every side, x fastest; the interior is 1..n. */
#define PROXY_AT3(n, x, y, z)                                                              \
    (((size_t)(z) * ((size_t)(n) + 2) + (size_t)(y)) * ((size_t)(n) + 2) + (size_t)(x))

/* The n x n face at coordinate c (0..n+1) of dimension d of such a cube:
 * copied into buf (pack) or from buf into the cube (pack = 0), for
 * proxy_halo6. */
void proxy_face_copy(int n, double *field, int d, int c, double *buf, int pack);

/* Counts a collective: `bytes` of payload this rank contributes for others. */
void proxy_count_collective(proxy *p, double bytes);

/* Meta lines every application writes after the preamble. */
void proxy_meta(const proxy *p, nn_writer *w);

/* The application callbacks: reset re-creates the initial data from the
 * seed, steps runs the timed --steps steps, checksum (collective) digests
 * the final data; release (or NULL) frees what proxy_alloc did not give. */
typedef struct {
    void (*reset)(void *app, proxy *p);
    void (*steps)(void *app, proxy *p);
    double (*checksum)(void *app, proxy *p);
    void (*release)(void *app);
} proxy_app;

/* The rest of main: warm-up runs, then timed runs (one row each) until
 * nn_loop says stop; then frees what proxy_alloc gave, the grid of
 * proxy_cart and, through fn->release, the application's own memory, closes
 * the writer and finalizes MPI (nn_bench_end). Returns main's exit status. */
int proxy_main(proxy *p, const proxy_app *fn, void *app, nn_writer *w);

/* Guards against option values whose arrays would not fit: every rank
 * needs the same, so all fail together with the numbers. */
enum { PROXY_MAX_MIB = 4096 };
void proxy_check_memory(proxy *p, double bytes);

/* Zeroed memory for n items of size bytes, freed by proxy_main; out of memory
 * stops every rank with the numbers. */
void *proxy_alloc(proxy *p, size_t n, size_t size);

/* Sum of a local value over ranks (collective, untimed bookkeeping). */
double proxy_sum(proxy *p, double local);

/* ---------------------------------------------------------------- FFT */

/* Twiddles exp(-2 pi i k / n), k < n. */
double complex *proxy_fft_twiddles(proxy *p, size_t n);

/* Unitary DFT of n contiguous points in place (both directions scaled by
 * 1/sqrt(n)): iterative radix-2 when n is a power of two, the direct
 * O(n^2) sum otherwise. scratch holds n points. */
void proxy_fft(double complex *x, size_t n, const double complex *tw,
               double complex *scratch, int inverse);

/* Block transpose helpers for a row-distributed n x n matrix, m = n / P
 * local rows: pack puts the m x m block of columns [q m, q m + m) into
 * send[q]; unpack_transposed turns the received blocks into the local rows
 * of the transposed matrix. */
void proxy_pack_blocks(const double complex *a, double complex *send, size_t n,
                       size_t m, int nranks);

void proxy_unpack_transposed(const double complex *recv, double complex *t,
                             size_t n, size_t m, int nranks);

/* Weighted digest of a row-distributed complex matrix (row0 = first global row). */
double proxy_digest_rows(const double complex *a, size_t rows, size_t n, size_t row0);

#endif
