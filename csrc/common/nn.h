/*
 * netnoise common layer: option parsing, MPI error checking, timers,
 * warm-up/timed loops and the self-describing output format.
 *
 * Output format (parsed by netnoise.io):
 *   #@key=value            preamble, one pair per line
 *   col_unit,col_unit,...  one CSV header line, units as name suffixes
 *   v,v,...                one row per sample
 */
#ifndef NN_H
#define NN_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "nn_wait.h"

#ifndef NN_VERSION
#define NN_VERSION "0.1.0"
#endif
#ifndef NN_GIT_SHA
#define NN_GIT_SHA "unknown"
#endif

/* ---------------------------------------------------------------- options */

typedef enum {
    NN_OPT_LONG,   /* long, range-checked */
    NN_OPT_DOUBLE, /* double, range-checked */
    NN_OPT_SIZE,   /* size_t bytes, optional K/M/G suffix (powers of 1024) */
    NN_OPT_STRING, /* const char *, non-empty */
    NN_OPT_FLAG,   /* int, set to 1 when present, takes no value */
    NN_OPT_CHOICE  /* const char *, one of a '|' separated list */
} nn_opt_type;

typedef struct {
    const char *name;    /* long name without the leading dashes */
    nn_opt_type type;
    void *dest;
    double min, max;     /* inclusive bounds for LONG, DOUBLE and SIZE */
    const char *choices; /* for CHOICE: "a|b|c" */
    const char *help;
} nn_option;

#define NN_OPTIONS_END {NULL, NN_OPT_FLAG, NULL, 0, 0, NULL, NULL}

typedef struct {
    const char *tool;    /* program name printed in messages and preamble */
    const char *summary; /* one line */
    const char *method;  /* paragraph(s) for --help: what is measured, seed section */
} nn_tool_info;

enum { NN_PARSE_OK = 0, NN_PARSE_HELP = 1, NN_PARSE_ERROR = 2 };

/* Parses argv against the table. On error writes one line naming the flag,
 * the value and the expected form into err. Pure C, no MPI. */
int nn_parse_options(int argc, char **argv, const nn_option *opts, char *err, size_t errlen);
void nn_print_usage(FILE *fp, const nn_option *opts, const nn_tool_info *info);
/* The entry of the table named by the len characters of name, or NULL. */
const nn_option *nn_find_option(const nn_option *opts, const char *name, size_t len);

/* Strict converters shared by the option parser and by file readers.
 * Return 0 on success, -1 on any garbage, overflow or empty input. */
int nn_parse_long(const char *s, long *out);
int nn_parse_double(const char *s, double *out);
int nn_parse_size(const char *s, size_t *out);

/* ---------------------------------------------------------------- timers */

static inline double nn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline long long nn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Busy-waits for ns nanoseconds on the monotonic clock: no system call, no
 * scheduler involvement, so microsecond delays stay precise. Under SimGrid's
 * SMPI the clock is simulated and stands still while a rank spins: there the
 * rank's host computes for ns of simulated time instead. */
#ifdef SMPI_HELPERS_H
#include <smpi/smpi.h>
static inline void nn_spin_ns(long long ns)
{
    if (ns > 0)
        smpi_execute((double)ns * 1e-9);
}
#else
static inline void nn_spin_ns(long long ns)
{
    long long end = nn_now_ns() + ns;
    while (nn_now_ns() < end)
        ;
}
#endif

/* Sleeps for ns nanoseconds, giving the core to other processes (several
 * emulated nodes share one machine's cores). */
void nn_sleep_ns(long long ns);

/* ---------------------------------------------------------------- run options
 * Every benchmark accepts these; add NN_RUN_OPTIONS(&run) to its table. */

typedef struct {
    long warmup;          /* untimed iterations before measuring */
    long iterations;      /* timed iterations; 0 = until duration/stop */
    double duration_s;    /* stop after this many seconds; 0 = no limit */
    const char *stop_file;/* stop when this file exists */
    const char *ready_file;/* created once every rank has finished warm-up */
    const char *output;   /* "-" = stdout */
    long seed;
    const char *start_file;/* wait for this file before the first timed iteration */
    const char *end_file; /* created once every rank has finished the timed part */
    const char *release_file;/* after the timed part, wait for this file */
    const char *mpi_wait;   /* wait policy of the blocking MPI calls (nn_wait.h); NULL: NN_WAIT */
    const char *probe_wait; /* ... of the exchanges a program times; NULL: NN_PROBE_WAIT */
    double ci_width;      /* stop once the recorded times are this precise; 0 = off */
    long min_iterations;  /* timed iterations before ci_width applies */
    const char *link_counters;   /* SimGrid: the links' counters over the timed part */
    double link_counter_interval;/* ... read every this many simulated seconds too */
} nn_run_options;

#define NN_RUN_DEFAULTS(warm, iters)                                                         \
    {(warm), (iters), 0.0, NULL, NULL, "-", 1, NULL, NULL, NULL, NULL, NULL, 0.0, 2, NULL, 0.0}

#define NN_WARMUP_OPTION(run)                                                            \
    {"warmup", NN_OPT_LONG, &(run)->warmup, 0, 1e9, NULL,                                \
     "untimed iterations before measuring"}

#define NN_LOOP_OPTIONS(run)                                                             \
    {"iterations", NN_OPT_LONG, &(run)->iterations, 0, 1e12, NULL,                       \
     "timed iterations (0: until --duration, the stop file or SIGUSR1)"},                \
    {"duration", NN_OPT_DOUBLE, &(run)->duration_s, 0, 1e7, NULL,                        \
     "stop after this many seconds of timed iterations (0: no limit)"},                  \
    {"stop-file", NN_OPT_STRING, &(run)->stop_file, 0, 0, NULL,                          \
     "stop cleanly once this file exists"},                                              \
    NN_HANDSHAKE_OPTIONS(run)

/* A stopping rule on precision, for programs that record each timed
 * iteration's time (nn_loop_record): --iterations is then the most they run. */
#define NN_PRECISION_OPTIONS(run)                                                        \
    {"ci-width", NN_OPT_DOUBLE, &(run)->ci_width, 0, 1, NULL,                            \
     "stop once the 95 % confidence interval of the mean timed iteration is this share " \
     "of the mean, --iterations at most (0: run exactly --iterations)"},                 \
    {"min-iterations", NN_OPT_LONG, &(run)->min_iterations, 2, 1e12, NULL,               \
     "timed iterations before --ci-width applies (default 2)"}

/* The timed region's handshake with a co-run (netnoise.run): the runner opens
 * its CPU and counter windows between ready and start, closes them between end
 * and release, so both cover exactly the timed part. */
#define NN_HANDSHAKE_OPTIONS(run)                                                        \
    {"ready-file", NN_OPT_STRING, &(run)->ready_file, 0, 0, NULL,                        \
     "create this file once every rank has finished warm-up (co-runs wait for it)"},     \
    {"start-file", NN_OPT_STRING, &(run)->start_file, 0, 0, NULL,                        \
     "after warm-up, wait until this file exists before timing"},                        \
    {"end-file", NN_OPT_STRING, &(run)->end_file, 0, 0, NULL,                            \
     "create this file once every rank has finished the timed part"},                    \
    {"release-file", NN_OPT_STRING, &(run)->release_file, 0, 0, NULL,                    \
     "after the timed part, wait until this file exists before writing the results"},    \
    {"link-counters", NN_OPT_STRING, &(run)->link_counters, 0, 0, NULL,                  \
     "SimGrid only (--cfg=plugin:link_load): write every link's bytes and time at full " \
     "rate over the timed part to this CSV file"},                                       \
    {"link-counter-interval", NN_OPT_DOUBLE, &(run)->link_counter_interval, 0, 1e7, NULL, \
     "also read the links every this many simulated seconds (0: at start and end only)"}

/* How the blocking MPI calls wait (nn_wait.h): every wait, and the timed exchanges. */
#define NN_MPI_WAIT_OPTIONS(run)                                                         \
    {"mpi-wait", NN_OPT_STRING, &(run)->mpi_wait, 0, 0, NULL,                            \
     "how blocking MPI calls wait, mode[:spin_us[:sleep_us[:sleep_max_us]]]: spin (busy " \
     "polling, as on dedicated cores), sleep between tests (first sleep, doubling up to " \
     "the longest), or hybrid (spin first, then sleep); default: NN_WAIT, else "         \
     NN_WAIT_DEFAULT},                                                                   \
    {"probe-wait", NN_OPT_STRING, &(run)->probe_wait, 0, 0, NULL,                        \
     "the same for the exchanges the program times to the microsecond (a round trip, "   \
     "a small collective); default: NN_PROBE_WAIT, else " NN_PROBE_WAIT_DEFAULT}

#define NN_OUTPUT_OPTIONS(run)                                                           \
    {"output", NN_OPT_STRING, &(run)->output, 0, 0, NULL,                                \
     "result file, written atomically ('-': standard output)"},                          \
    {"seed", NN_OPT_LONG, &(run)->seed, 0, 2147483647, NULL,                             \
     "seed of every random choice"}

/* What every program run as part of a co-run accepts: the handshake of its
 * timed region, its result file and seed, and how its MPI calls wait. */
#define NN_CORUN_OPTIONS(run)                                                            \
    NN_HANDSHAKE_OPTIONS(run), NN_OUTPUT_OPTIONS(run), NN_MPI_WAIT_OPTIONS(run)

/* Everything a looping benchmark accepts. */
#define NN_RUN_OPTIONS(run)                                                              \
    NN_WARMUP_OPTION(run), NN_LOOP_OPTIONS(run), NN_OUTPUT_OPTIONS(run),                 \
        NN_MPI_WAIT_OPTIONS(run)

/* ---------------------------------------------------------------- writer */

typedef struct {
    FILE *fp;
    char *final_path; /* NULL when writing to stdout */
    char *tmp_path;
    int active;       /* only rank 0 writes */
    unsigned long rows; /* data rows written, for the end-of-data line */
} nn_writer;

/* Opens path+".tmp.<pid>" (or stdout for "-") when active. */
int nn_writer_open(nn_writer *w, const char *path, int active);
void nn_meta(nn_writer *w, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void nn_columns(nn_writer *w, const char *header);
void nn_row(nn_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A row of count values, each printed with its own conversion of formats: one
 * printf conversion of a double per value, comma-separated ("%.0f,%.3f"). */
void nn_row_values(nn_writer *w, const double *values, int count, const char *formats);
/* success: write the end-of-data line "#@end=<rows>", flush, fsync and rename
 * into place; failure: remove the temp file (on stdout: no end-of-data line). */
int nn_writer_close(nn_writer *w, int success);

/* Date in ISO 8601 UTC. */
void nn_iso_date(char *buf, size_t len);

#endif
