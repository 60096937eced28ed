/*
 * MPI side of the netnoise common layer.
 */
#ifndef NN_MPI_H
#define NN_MPI_H

#include <mpi.h>
#include <sched.h>

#include "nn.h"

/* Every MPI call is checked; a failure names the call, file and line and
 * aborts the whole job so no rank is left waiting. */
#define MPI_CHECK(call)                                                   \
    do {                                                                  \
        int nn_rc_ = (call);                                              \
        if (nn_rc_ != MPI_SUCCESS)                                        \
            nn_mpi_fail(nn_rc_, #call, __FILE__, __LINE__);               \
    } while (0)

void nn_mpi_fail(int rc, const char *call, const char *file, int line) __attribute__((noreturn));

/* MPI_Init, errors-return handler, stop-signal handler (SIGUSR1, which
 * mpirun forwards to every rank, and SIGTERM/SIGINT). */
void nn_init(int *argc, char ***argv);

/* Parses the options identically on every rank. On --help rank 0 prints
 * the usage and every rank exits 0; on a bad option rank 0 prints the
 * message and every rank exits 2. Returns only when parsing succeeded. */
void nn_parse_or_exit(int argc, char **argv, const nn_option *opts, const nn_tool_info *info);

/* All ranks exit together with a message printed once by rank 0. */
void nn_fail_all(MPI_Comm comm, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* ---------------------------------------------------------------- cores by role
 * On a machine that emulates a cluster the platform gives the measured ranks and
 * everything else disjoint cores; a program whose ranks change roles (the noise
 * benchmark's random splits) binds each rank to its role's cores itself. The sets
 * come from NN_CPUS_MEASURED and NN_CPUS_OTHER (kernel CPU lists such as 0-3,6);
 * without them the platform places the ranks and nothing is bound. */
typedef struct {
    int given; /* both sets were given */
    cpu_set_t measured, other;
} nn_cores;

/* Reads the sets; a malformed list fails the job (collective on comm). */
void nn_cores_init(nn_cores *cores, MPI_Comm comm);

/* Binds every thread of this process to the measured or the other cores, and
 * aborts the job if the kernel then lets it run anywhere else. */
void nn_cores_bind(const nn_cores *cores, int measured);

/* Collective: writes the standard preamble (tool, version, git SHA, argv,
 * seed, MPI library version, ranks, hostnames, date) on rank 0. */
void nn_preamble(nn_writer *w, const nn_tool_info *info, int argc, char **argv, long seed,
                 MPI_Comm comm);

/* ---------------------------------------------------------------- start and end
 * The beginning and end of every program's main (nn_bench.c):
 *
 *   nn_run_options run = NN_RUN_DEFAULTS(100, 1000);
 *   const nn_option opts[] = {..., NN_RUN_OPTIONS(&run), NN_OPTIONS_END};
 *   nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_RANK_PAIRS};
 *   nn_bench_begin(&b, &argc, &argv);
 *   ... checks of its own (nn_fail_all), set-up ...
 *   nn_writer out;
 *   nn_bench_writer(&b, &out, MPI_COMM_WORLD, "size warmup");
 *   ... nn_meta, measurement, nn_columns, nn_row ...
 *   return nn_bench_end(&out);
 */

/* The rank counts a program accepts: any, pairs (an even number, at least 2:
 * ranks 0-1, 2-3, ... work together), or a positive least number. */
enum { NN_ANY_RANKS = 0, NN_RANK_PAIRS = -1 };

typedef struct {
    /* Given by the program. */
    const nn_tool_info *info;
    const nn_option *opts; /* its option table */
    nn_run_options *run;   /* the run options that table sets */
    int ranks;             /* NN_ANY_RANKS, NN_RANK_PAIRS or the least number of ranks */
    const char *ranks_why; /* optional: why that least number, said in the message */
    /* Set by nn_bench_begin. */
    int rank, nranks; /* in MPI_COMM_WORLD */
    int peer;         /* the other rank of this rank's pair (0-1, 2-3, ...) */
    int argc;
    char **argv;
} nn_bench;

/* nn_init, then the options (nn_parse_or_exit), then two checks after which
 * all ranks exit together with one message (status 2): the rank count, and
 * that a run can end: with --iterations in the table, --iterations 0 needs
 * --duration or --stop-file; a table with --duration but no --iterations
 * (the program runs until stopped) needs one of the two. */
void nn_bench_begin(nn_bench *b, int *argc, char ***argv);

/* Collective over comm: opens run->output on rank 0 of comm (aborting the job
 * if it cannot) and writes the standard preamble, then the values of the
 * options named in `record` (space-separated, or NULL): each under its name
 * with '_' for '-' and, for a size, "_bytes" appended, printed as %ld, %g,
 * %zu, %s or %d (a flag) after its type. Programs call it after their own
 * checks, so a rejected run leaves no file behind. */
void nn_bench_writer(const nn_bench *b, nn_writer *w, MPI_Comm comm, const char *record);

/* Closes the writer (renaming the file into place), finalizes MPI and returns
 * main's exit status: 0, or 1 when the output could not be written. */
int nn_bench_end(nn_writer *w);

/* Warm-up then timed loop with a collective stop decision:
 *
 *   nn_loop loop;
 *   nn_loop_begin(&loop, &run, comm);
 *   while (nn_loop_warming(&loop)) exchange();
 *   while (nn_loop_next(&loop)) { t0 = nn_now(); exchange(); record(nn_now() - t0); }
 *
 * The warm-up ends after --warmup iterations, or earlier, on every rank alike,
 * once it has lasted --duration or a stop is requested (a collective check at
 * its 1024th iteration and every doubling, so a warm-up of up to a thousand
 * runs as asked and a longer one ends within twice --duration). The first
 * call of nn_loop_next begins the timed region
 * (nn_timed_begin), the call that stops ends it (nn_timed_end).
 * The loop stops when every rank agrees to go on no longer: the iteration
 * count is reached, the duration has passed on some rank, the stop file
 * exists, or SIGUSR1/SIGTERM arrived. With --ci-width (NN_PRECISION_OPTIONS)
 * it also stops once the times passed to nn_loop_record are precise enough:
 * after --min-iterations, when the 95 % confidence interval of their mean is
 * at most --ci-width of the mean. */
typedef struct {
    const nn_run_options *run;
    MPI_Comm comm;
    long warm_done;
    double t_warm; /* when the warm-up began */
    long timed_done;
    double t_start;
    int ended;
    long recorded;
    double sum, sumsq; /* of the recorded times */
} nn_loop;

void nn_loop_begin(nn_loop *loop, const nn_run_options *run, MPI_Comm comm);
int nn_loop_warming(nn_loop *loop);
int nn_loop_next(nn_loop *loop);

/* The time of the timed iteration just run, for --ci-width. Every rank of the
 * loop's communicator records the same value (e.g. the maximum over ranks),
 * so that every rank reaches the same decision. */
void nn_loop_record(nn_loop *loop, double seconds);

/* The 97.5 % quantile of Student's t with df degrees of freedom (infinite for
 * df < 1): a 95 % confidence interval of a mean of df + 1 samples is
 * mean +- nn_t95(df) * sd / sqrt(df + 1). */
double nn_t95(long df);

int nn_stop_requested(void);

/* A stop request seen by this rank alone (signal or stop file). */
int nn_local_stop(const nn_run_options *run);

/* Collective, after the warm-up: rank 0 creates --ready-file, then waits
 * (sleeping 1 ms at a time) until --start-file exists or a stop is requested;
 * a barrier then releases every rank into the timed part. A co-run's runner
 * opens its CPU and counter windows between the two files. */
void nn_timed_begin(const nn_run_options *run, MPI_Comm comm);

/* Collective, after the timed part: once every rank is done, rank 0 creates
 * --end-file and waits until --release-file exists (or a stop). */
void nn_timed_end(const nn_run_options *run, MPI_Comm comm);

/* Under SMPI, rank 0's readings of the simulated links for --link-counters
 * (simgrid/link_counters.c): begin where the timed part starts, end where it
 * ends, before a co-run's background is told to stop. */
void nn_link_counters_begin(const char *path, double interval_s);
void nn_link_counters_end(void);

/* The run options' --mpi-wait and --probe-wait policies in force (each left out
 * keeps NN_WAIT's or NN_PROBE_WAIT's). nn_bench_begin calls it. */
void nn_apply_mpi_wait(const nn_run_options *run);

/* Collective over comm: this rank's offset to rank 0's clock (nn_now() +
 * *offset reads rank 0's nn_now()), from the exchange of least round trip
 * among `rounds` with rank 0, one rank after another; *rtt is that round
 * trip, twice the offset's worst error. Rank 0 gets 0 and 0. Emulated nodes
 * share one clock; a cluster's nodes do not. */
void nn_clock_offset(MPI_Comm comm, int rounds, double *offset, double *rtt);

/* Rows of doubles kept per rank and gathered to rank 0 at the end, so
 * every sample is written without I/O inside timed loops. */
typedef struct {
    double *data;
    size_t rows, cap;
    int cols;
} nn_table;

void nn_table_init(nn_table *t, int cols);
void nn_table_add(nn_table *t, const double *row);
/* Collective: on rank 0, *all holds every rank's rows in rank order
 * (initialised by the call); other ranks get an empty table. */
void nn_table_gather(const nn_table *local, MPI_Comm comm, nn_table *all);
void nn_table_free(nn_table *t);
/* Collective: gathers every rank's rows to rank 0 of comm and writes them
 * under the CSV header `columns`, in the order of their first column (the
 * pair, rank, split or link), rows of equal first column in rank order, each
 * value with its conversion of `formats` (nn_row_values). */
void nn_table_write(nn_writer *w, const nn_table *local, MPI_Comm comm, const char *columns,
                    const char *formats);
/* Collective: one row per rank of comm, from each rank's count values, in rank
 * order when the first value is the rank (nn_table_write). */
void nn_write_rank_rows(nn_writer *w, MPI_Comm comm, const double *mine, int count,
                        const char *columns, const char *formats);
#define NN_ROW(t, i) ((t)->data + (size_t)(i) * (size_t)(t)->cols)

#endif
