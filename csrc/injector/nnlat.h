/*
 * libnnlatency core: the latency injector of seed 004 (Sec. 3), without MPI.
 *
 * The core loads the distribution table and the seed once (Algorithm 1),
 * draws table entries with a constant-time linear congruential generator
 * and busy-waits for the drawn delay on CLOCK_MONOTONIC (Algorithm 2).
 * nnlat_mpi.c and nnlat_tcp.c call nnlat_inject() in front of every send
 * of their level. Nothing here needs MPI, so tests/test_nnlatency.c links
 * this file alone.
 */
#ifndef NNLAT_H
#define NNLAT_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NNLAT_HIDDEN __attribute__((visibility("hidden")))
#define NNLAT_EXPORT __attribute__((visibility("default")))

/* The paper's table: 512 lines of 8 integers, indexed by 12 random bits. */
#define NNLAT_ROWS 512
#define NNLAT_COLS 8
#define NNLAT_TABLE_SIZE (NNLAT_ROWS * NNLAT_COLS)
#define NNLAT_INDEX_BITS 12
/* A larger per-send delay is certainly a mistake (it would hang the run). */
#define NNLAT_MAX_DELAY_NS 60000000000ULL
/* A busy wait overshoots by the cost of a clock read (tens of ns) unless the
 * process lost its core meanwhile: the report counts delays later than this. */
#define NNLAT_LATE_NS 20000ULL
/* A sleeping wait wakes this long before its deadline (NN_LATENCY_SLEEP_MARGIN_US,
 * default 100) and busy-waits the rest, so that a timely wake-up still ends the
 * delay on time. A shorter margin spins less but ends more delays late. */
#define NNLAT_SLEEP_MARGIN_DEFAULT_US 100
#define NNLAT_SLEEP_MARGIN_MAX_US 10000
#define NNLAT_LINE_MAX 1024
/* The exit status of a process under NN_LATENCY_STRICT=1 whose report could not
 * be written: the run's delays are unaccounted, so it fails. */
#define NNLAT_LOST_REPORT_STATUS 3
#define NNLAT_PATH_MAX 4096
#define NNLAT_ERR_MAX 1024

/* LCG modulo 2^64 with Knuth's MMIX multiplier and increment (Knuth, TAOCP
 * vol. 2, 3.3.4; the 64-bit generator also listed by Numerical Recipes 3rd
 * ed., 7.1): full period 2^64. */
#define NNLAT_LCG_A 6364136223846793005ULL
#define NNLAT_LCG_C 1442695040888963407ULL

enum { NNLAT_OFF = 0, NNLAT_MPI = 1, NNLAT_TCP = 2 };
/* How a delay is waited: the paper's busy wait, or a sleep that leaves the
 * core to other processes (several emulated nodes on few cores); in SimGrid's
 * SMPI, the network model adds it to the message's latency (nnlat_smpi.c). */
enum { NNLAT_SPIN = 0, NNLAT_SLEEP = 1, NNLAT_NETWORK = 2 };

typedef struct {
    /* configuration (from the environment) */
    int level;                 /* NNLAT_MPI or NNLAT_TCP */
    char level_name[16];       /* as given, for the report */
    int strict;
    int wait;                  /* NNLAT_SPIN or NNLAT_SLEEP */
    uint64_t sleep_margin_ns;  /* NNLAT_SLEEP: busy-waited end of every delay */
    uint64_t unit_ns;          /* 1 (ns) or 1000 (us) */
    long rank;                 /* MPI rank from the launcher's environment, -1 unknown */
    char table_path[NNLAT_PATH_MAX];
    char seed_path[NNLAT_PATH_MAX];
    char report_template[NNLAT_PATH_MAX]; /* as given */
    char report_path[NNLAT_PATH_MAX]; /* expanded; empty: no report */
    int report_per_rank;       /* the template contained %r or %p */
    /* loaded state */
    int enabled;
    char reason[NNLAT_ERR_MAX]; /* why disabled, empty when enabled */
    uint64_t table[NNLAT_TABLE_SIZE]; /* delays in ns */
    uint64_t seed;
    double table_mean_ns;
    uint64_t table_min_ns, table_max_ns;
    /* running state */
    _Atomic uint64_t lcg;
    _Atomic uint64_t delays;         /* delays injected (table draws) */
    _Atomic uint64_t drawn_ns;       /* sum of the drawn table entries */
    _Atomic uint64_t spent_ns;       /* wall time spent injecting them */
    _Atomic uint64_t late;           /* delays that overshot by more than NNLAT_LATE_NS */
    _Atomic uint64_t late_ns;        /* wall time spent in those */
    /* Sums of squared deviations from table_mean_ns (ns²) of the drawn
     * entries and of the time spent: the realised spread, for the report.
     * Centred on the table's mean so a narrow table keeps its precision;
     * doubles, since a square of a 60 s delay overflows 64 bits. */
    _Atomic double drawn_sq_ns2;
    _Atomic double spent_sq_ns2;
    _Atomic int report_written;
} nnlat_state;

/* The library's one instance, and the level its wrappers act on (NNLAT_OFF
 * when disabled): wrappers test it before anything else. */
extern nnlat_state nnlat NNLAT_HIDDEN;
extern int nnlat_active NNLAT_HIDDEN;

static inline uint64_t nnlat_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* SplitMix64 finalizer: turns nearby seeds into unrelated initial states. */
static inline uint64_t nnlat_mix_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t nnlat_lcg_step(uint64_t x)
{
    return x * NNLAT_LCG_A + NNLAT_LCG_C;
}

/* The table index of a generator state: its top 12 bits. The low k bits of
 * a power-of-two-modulus LCG have period 2^k (the lowest bit alternates),
 * so the paper's "lower 12 bits" would walk a fixed permutation of the
 * table; the top bits have the full period. One shift, no division. */
static inline unsigned nnlat_index_of(uint64_t x)
{
    return (unsigned)(x >> (64 - NNLAT_INDEX_BITS));
}

/* Next index from a shared generator: one multiply-add, made thread-safe
 * with a compare-and-swap (retried only when two threads draw at once). */
static inline unsigned nnlat_next_index(_Atomic uint64_t *state)
{
    uint64_t old = atomic_load_explicit(state, memory_order_relaxed);
    uint64_t next;
    do {
        next = nnlat_lcg_step(old);
    } while (!atomic_compare_exchange_weak_explicit(state, &old, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    return nnlat_index_of(next);
}

/* Adds x to a shared double: a compare-and-swap loop, as C11 has no atomic
 * addition on floating types (retried only when two threads add at once). */
static inline void nnlat_add_double(_Atomic double *sum, double x)
{
    double old = atomic_load_explicit(sum, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(sum, &old, old + x, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* Busy-waits until ns nanoseconds have passed since start (a CLOCK_MONOTONIC
 * reading): no sleep, no system call (clock_gettime is served by the vDSO),
 * so the scheduler is never asked. Returns the time actually elapsed. */
static inline uint64_t nnlat_spin_until(uint64_t start, uint64_t ns)
{
    uint64_t now;
    do {
        now = nnlat_now_ns();
    } while (now - start < ns);
    return now - start;
}

/* Sleeps on CLOCK_MONOTONIC until margin_ns before the deadline, then
 * busy-waits until ns nanoseconds have passed since start. The process
 * gives its core away for the long part of the wait (a system call and the
 * scheduler: what the paper avoids, and what several emulated nodes sharing
 * a few cores need). Returns the time actually elapsed. */
static inline uint64_t nnlat_sleep_until(uint64_t start, uint64_t ns, uint64_t margin_ns)
{
    if (ns > margin_ns) {
        uint64_t wake = start + ns - margin_ns;
        struct timespec ts = {(time_t)(wake / 1000000000ULL), (long)(wake % 1000000000ULL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    return nnlat_spin_until(start, ns);
}

/* Draws one delay, waits for it (busy or sleeping) and accounts for it (Algorithm 2). */
NNLAT_HIDDEN void nnlat_inject(void);

/* The two halves of nnlat_inject for a state of its own: the next delay of s
 * (in ns, counted as drawn), and the time spent holding a send back for it. */
NNLAT_HIDDEN uint64_t nnlat_draw(nnlat_state *s);
NNLAT_HIDDEN void nnlat_account(nnlat_state *s, uint64_t delay, uint64_t spent);

/* Table and seed readers. On failure return -1 and write one line naming
 * the file, the line and the problem into err. */
NNLAT_HIDDEN int nnlat_load_table(const char *path, uint64_t unit_ns,
                                  uint64_t table[NNLAT_TABLE_SIZE], char *err, size_t errlen);
NNLAT_HIDDEN int nnlat_load_seed(const char *path, uint64_t *seed, char *err, size_t errlen);

/* MPI rank from the launcher's environment (Open MPI, PMIx, PMI, Slurm),
 * -1 when none is set. */
NNLAT_HIDDEN long nnlat_rank_from_env(void);

/* Copies tmpl into out with "%r" replaced by the rank ("p<pid>" when the
 * rank is unknown), "%p" by the process id and "%%" by "%". Returns -1
 * when out is too small. */
NNLAT_HIDDEN int nnlat_expand_path(const char *tmpl, long rank, char *out, size_t outlen);

/* Reads the NN_LATENCY_* variables and loads table and seed into s, for MPI
 * rank ``rank`` (-1: unknown; see nnlat_expand_path). Returns 0 when s is
 * enabled or disabled for a tolerated reason (s->reason says which), -1 on a
 * fatal error in strict mode (s->reason says why). */
NNLAT_HIDDEN int nnlat_configure(nnlat_state *s, long rank);

/* Writes the key=value report of s to path (temporary file + rename). */
NNLAT_HIDDEN int nnlat_write_report(nnlat_state *s, const char *path, char *err, size_t errlen);

/* In a child made by fork: counters restart at zero (the parent reports its
 * own delays) and %p in the report path names the child. */
NNLAT_HIDDEN void nnlat_forked(nnlat_state *s);

/* Writes the report to s->report_path once (first call wins); called after
 * MPI_Finalize and at exit (at_exit = 1). Only rank 0 (or a rank-less
 * process) writes it unless the path contains %r or %p; at exit, a process
 * that injected no delay does not replace an existing report. A report that
 * cannot be written is a warning, or under strict mode the process's end with
 * status NNLAT_LOST_REPORT_STATUS. */
NNLAT_HIDDEN void nnlat_finish(nnlat_state *s, int at_exit);

#endif
