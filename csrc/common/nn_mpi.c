#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nn_mpi.h"
/* After nn_mpi.h: SMPI's headers say whether this is a simulated rank. */
#include "nn_life.h"

#ifdef SMPI_HELPERS_H
/* Under SimGrid's SMPI every program is compiled with MPI_COMM_WORLD standing
 * for nn_world (csrc/Makefile): the ranks of this program. They are all the
 * simulation's ranks, unless the co-run dispatcher (simgrid/corun.c) runs this
 * program beside others in one simulation; it then sets nn_world to this
 * program's ranks, and starts MPI, before calling main. */
#undef MPI_COMM_WORLD
extern MPI_Comm MPI_COMM_WORLD;
MPI_Comm nn_world = MPI_COMM_NULL;

static int start_mpi(int *argc, char ***argv)
{
    if (nn_world != MPI_COMM_NULL)
        return MPI_SUCCESS;
    int rc = MPI_Init(argc, argv);
    nn_world = MPI_COMM_WORLD;
    return rc;
}
#define MPI_COMM_WORLD nn_world
#else
static int start_mpi(int *argc, char ***argv)
{
    return MPI_Init(argc, argv);
}
#endif

static volatile sig_atomic_t stop_signal = 0;

/* Seconds a process asked to terminate (SIGTERM, SIGINT) has to end cleanly
 * before SIGALRM ends it: a rank blocked on a peer that is gone never comes
 * back to see the request. SIGUSR1, the co-runs' stop, has no such limit: a
 * background then finishes its exchanges and waits for its release. */
enum { TERMINATE_GRACE_S = 20 };

static void on_stop_signal(int sig)
{
    stop_signal = 1;
#ifndef SMPI_HELPERS_H
    if (sig != SIGUSR1)
        alarm(TERMINATE_GRACE_S);
#else
    (void)sig;
#endif
}

int nn_stop_requested(void)
{
    return stop_signal != 0;
}

void nn_mpi_fail(int rc, const char *call, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error code %d", rc);
    fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

void nn_init(int *argc, char ***argv)
{
    nn_die_with_parent();
    MPI_CHECK(start_mpi(argc, argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGALRM, SIG_DFL);
}

void nn_parse_or_exit(int argc, char **argv, const nn_option *opts, const nn_tool_info *info)
{
    int rank;
    char err[512] = "";
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    int rc = nn_parse_options(argc, argv, opts, err, sizeof err);
    if (rc == NN_PARSE_OK)
        return;
    if (rank == 0) {
        if (rc == NN_PARSE_HELP)
            nn_print_usage(stdout, opts, info);
        else
            fprintf(stderr, "%s: %s\n", info->tool, err);
        fflush(NULL);
    }
    MPI_Finalize();
    exit(rc == NN_PARSE_HELP ? 0 : 2);
}

void nn_fail_all(MPI_Comm comm, const char *fmt, ...)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fflush(stderr);
    }
    MPI_Barrier(comm);
    MPI_Finalize();
    exit(2);
}

/* Comma-separated unique host names of all ranks, in rank order. */
static void gather_hosts(MPI_Comm comm, char *out, size_t outlen)
{
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    MPI_CHECK(MPI_Get_processor_name(name, &len));
    char *all = NULL;
    if (rank == 0) {
        all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
        if (all == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "calloc", __FILE__, __LINE__);
    }
    MPI_CHECK(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, 0, comm));
    if (rank != 0)
        return;
    out[0] = '\0';
    for (int r = 0; r < size; r++) {
        const char *h = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(h, all + (size_t)q * MPI_MAX_PROCESSOR_NAME) == 0;
        if (seen)
            continue;
        if (out[0] != '\0')
            strncat(out, ",", outlen - strlen(out) - 1);
        strncat(out, h, outlen - strlen(out) - 1);
    }
    free(all);
}

void nn_preamble(nn_writer *w, const nn_tool_info *info, int argc, char **argv, long seed,
                 MPI_Comm comm)
{
    int size;
    char hosts[4096];
    MPI_CHECK(MPI_Comm_size(comm, &size));
    gather_hosts(comm, hosts, sizeof hosts);
    if (!w->active)
        return;

    char args[4096] = "";
    for (int i = 0; i < argc; i++) {
        if (i > 0)
            strncat(args, " ", sizeof args - strlen(args) - 1);
        strncat(args, argv[i], sizeof args - strlen(args) - 1);
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &liblen));
    lib[strcspn(lib, "\n,")] = '\0';
    char date[64];
    nn_iso_date(date, sizeof date);

    nn_meta(w, "format", "netnoise-2");
    nn_meta(w, "tool", "%s", info->tool);
    nn_meta(w, "version", "%s", NN_VERSION);
    nn_meta(w, "git_sha", "%s", NN_GIT_SHA);
    nn_meta(w, "argv", "%s", args);
    nn_meta(w, "seed", "%ld", seed);
    nn_meta(w, "mpi_library", "%s", lib);
    nn_meta(w, "ranks", "%d", size);
    nn_meta(w, "hosts", "%s", hosts);
    nn_meta(w, "date", "%s", date);
    char policy[128];
    nn_wait_policy wait = nn_wait_get(), probe = nn_wait_probe_get();
    nn_wait_describe(&wait, policy, sizeof policy);
    nn_meta(w, "mpi_wait", "%s", policy);
    nn_wait_describe(&probe, policy, sizeof policy);
    nn_meta(w, "probe_wait", "%s", policy);
}

int nn_local_stop(const nn_run_options *run)
{
    struct stat st;
    if (stop_signal)
        return 1;
    return run->stop_file != NULL && stat(run->stop_file, &st) == 0;
}

void nn_loop_begin(nn_loop *loop, const nn_run_options *run, MPI_Comm comm)
{
    loop->run = run;
    loop->comm = comm;
    loop->warm_done = 0;
    loop->t_warm = 0.0;
    loop->timed_done = 0;
    loop->t_start = 0.0;
    loop->ended = 0;
    loop->recorded = 0;
    loop->sum = loop->sumsq = 0.0;
}

double nn_t95(long df)
{
    static const double table[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                   2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                   2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                   2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1)
        return INFINITY;
    if (df <= 30)
        return table[df];
    return 1.960 + 2.4 / (double)df; /* within 0.1 % of the exact value beyond 30 */
}

void nn_loop_record(nn_loop *loop, double seconds)
{
    loop->recorded++;
    loop->sum += seconds;
    loop->sumsq += seconds * seconds;
}

/* The recorded times' 95 % confidence interval is within --ci-width of their mean. */
static int loop_precise(const nn_loop *loop)
{
    const double ci_width = loop->run->ci_width;
    const long n = loop->recorded;
    if (ci_width <= 0 || n < loop->run->min_iterations || n < 2)
        return 0;
    const double mean = loop->sum / (double)n;
    const double var = fmax(0.0, (loop->sumsq - (double)n * mean * mean) / (double)(n - 1));
    return 2.0 * nn_t95(n - 1) * sqrt(var / (double)n) <= ci_width * mean;
}

/* The warm-up iteration at which ranks first agree on whether to end the
 * warm-up early, then at every doubling: a warm-up of the usual size (up to a
 * thousand exchanges) runs exactly as asked, without an exchange of its own,
 * and a longer one ends within twice --duration. */
enum { WARMUP_CHECK_FIRST = 1024 };

int nn_loop_warming(nn_loop *loop)
{
    const nn_run_options *run = loop->run;
    const long done = loop->warm_done;
    if (done >= run->warmup)
        return 0;
    /* The clock is read only for a --duration: under SMPI a clock read is a
     * step of the simulation, which would move a co-run's jobs out of step. */
    if (done == 0 && run->duration_s > 0)
        loop->t_warm = nn_now();
    if (done >= WARMUP_CHECK_FIRST && (done & (done - 1)) == 0) {
        /* Ends early, on every rank alike, on a stop request or once it has
         * lasted --duration: no warm-up outlasts the run it prepares. */
        int stop = nn_local_stop(run) ||
                   (run->duration_s > 0 && nn_now() - loop->t_warm >= run->duration_s);
        int any_stop = 0;
        MPI_CHECK(MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, loop->comm));
        if (any_stop) {
            loop->warm_done = run->warmup;
            return 0;
        }
    }
    loop->warm_done++;
    return 1;
}

static void create_file(const char *path, const char *what)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL || fclose(fp) != 0)
        fprintf(stderr, "cannot create %s file '%s'\n", what, path);
}

/* A pause of rank 0 between checks for a handshake file. Under SimGrid's SMPI
 * the file comes from another program of the same simulation (netnoise.run
 * hands a simulated co-run files its jobs create, none of its own), so the
 * pause is simulated: the other program runs on meanwhile, and creates the
 * file at a simulated time every rank sees alike. There it is short, as the
 * waiting job starts up to one pause after the file appeared, out of step
 * with the other by as much; a check costs a few microseconds of real time. */
static void pause_for_file(void)
{
#ifdef SMPI_HELPERS_H
    nn_sleep_ns(10000);
#else
    nn_sleep_ns(1000000);
#endif
}

/* Rank 0 waits, sleeping, until the file exists or a stop is requested. */
static void await_file(const nn_run_options *run, const char *path)
{
    struct stat st;
    while (stat(path, &st) != 0 && !nn_local_stop(run))
        pause_for_file();
}

/* Collective: once every rank is here, rank 0 creates `create` (when given),
 * then waits for `await` (when given); a barrier then releases every rank.
 * Rank 0 reads the simulated links' counters (--link-counters) inside: at the
 * timed part's start once the wait is over, at its end before the creation,
 * so that they cover the timed part with a co-run's background in full swing. */
static void handshake(const nn_run_options *run, MPI_Comm comm, const char *create,
                      const char *what, const char *await, int timed_part_starts)
{
    int rank;
    MPI_CHECK(MPI_Barrier(comm));
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
#ifdef SMPI_HELPERS_H
    int counting = rank == 0 && run->link_counters != NULL;
    if (counting && !timed_part_starts)
        nn_link_counters_end();
#else
    (void)timed_part_starts;
    if (run->link_counters != NULL)
        nn_fail_all(comm, "--link-counters reads a simulated network: run the SMPI build "
                          "(csrc/Makefile FLAVOUR=smpi) in SimGrid");
#endif
    if (rank == 0 && create != NULL)
        create_file(create, what);
    if (rank == 0 && await != NULL)
        await_file(run, await);
#ifdef SMPI_HELPERS_H
    if (counting && timed_part_starts)
        nn_link_counters_begin(run->link_counters, run->link_counter_interval);
#endif
    MPI_CHECK(MPI_Barrier(comm));
}

void nn_timed_begin(const nn_run_options *run, MPI_Comm comm)
{
    handshake(run, comm, run->ready_file, "ready", run->start_file, 1);
}

void nn_timed_end(const nn_run_options *run, MPI_Comm comm)
{
    handshake(run, comm, run->end_file, "end", run->release_file, 0);
}

void nn_clock_offset(MPI_Comm comm, int rounds, double *offset, double *rtt)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    *offset = 0;
    *rtt = 0;
    /* Timed to the microsecond: a sleeping wait would put its wake-up into
     * the round trip. */
    nn_probe_begin();
    for (int peer = 1; peer < size; peer++) {
        for (int i = 0; i < rounds; i++) {
            if (rank == 0) {
                double sent, now;
                MPI_CHECK(MPI_Recv(&sent, 1, MPI_DOUBLE, peer, 0, comm, MPI_STATUS_IGNORE));
                now = nn_now();
                MPI_CHECK(MPI_Send(&now, 1, MPI_DOUBLE, peer, 0, comm));
            } else if (rank == peer) {
                double reference;
                const double sent = nn_now();
                MPI_CHECK(MPI_Send(&sent, 1, MPI_DOUBLE, 0, 0, comm));
                MPI_CHECK(MPI_Recv(&reference, 1, MPI_DOUBLE, 0, 0, comm, MPI_STATUS_IGNORE));
                const double back = nn_now();
                if (i == 0 || back - sent < *rtt) {
                    *rtt = back - sent;
                    *offset = reference - (sent + back) / 2;
                }
            }
        }
    }
    nn_probe_end();
}

void nn_apply_mpi_wait(const nn_run_options *run)
{
    nn_wait_policy wait = nn_wait_get(), probe = nn_wait_probe_get();
    if (run->mpi_wait != NULL && nn_wait_parse(run->mpi_wait, &wait) != 0)
        nn_fail_all(MPI_COMM_WORLD, "--mpi-wait '%s': expected " NN_WAIT_SPEC, run->mpi_wait);
    if (run->probe_wait != NULL && nn_wait_parse(run->probe_wait, &probe) != 0)
        nn_fail_all(MPI_COMM_WORLD, "--probe-wait '%s': expected " NN_WAIT_SPEC, run->probe_wait);
    nn_wait_set_policies(wait, probe);
}

int nn_loop_next(nn_loop *loop)
{
    const nn_run_options *run = loop->run;
    if (loop->ended)
        return 0;
    if (loop->timed_done == 0 && loop->t_start == 0.0) {
        nn_timed_begin(run, loop->comm);
        loop->t_start = nn_now();
    }
    int stop = run->iterations > 0 && loop->timed_done >= run->iterations;
    if (!stop)
        stop = loop_precise(loop);
    if (!stop && run->duration_s > 0 && nn_now() - loop->t_start >= run->duration_s)
        stop = 1;
    if (!stop)
        stop = nn_local_stop(run);
    int any_stop = 0;
    MPI_CHECK(MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, loop->comm));
    if (any_stop) {
        loop->ended = 1;
        nn_timed_end(run, loop->comm);
        return 0;
    }
    loop->timed_done++;
    return 1;
}

void nn_table_init(nn_table *t, int cols)
{
    t->data = NULL;
    t->rows = 0;
    t->cap = 0;
    t->cols = cols;
}

void nn_table_add(nn_table *t, const double *row)
{
    if (t->rows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        double *grown = realloc(t->data, cap * (size_t)t->cols * sizeof *grown);
        if (grown == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "realloc", __FILE__, __LINE__);
        t->data = grown;
        t->cap = cap;
    }
    memcpy(NN_ROW(t, t->rows), row, (size_t)t->cols * sizeof *row);
    t->rows++;
}

void nn_table_gather(const nn_table *local, MPI_Comm comm, nn_table *all)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    nn_table_init(all, local->cols);
    int count = (int)(local->rows * (size_t)local->cols);
    int *counts = NULL, *displs = NULL;
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
        if (counts == NULL || displs == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "malloc", __FILE__, __LINE__);
    }
    MPI_CHECK(MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
    if (rank == 0) {
        long long total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += counts[r];
        }
        if (total > 2147483647LL)
            nn_mpi_fail(MPI_ERR_COUNT, "nn_table_gather: more than 2^31 values", __FILE__, __LINE__);
        all->rows = all->cap = (size_t)total / (size_t)local->cols;
        all->data = malloc(((size_t)total > 0 ? (size_t)total : 1) * sizeof *all->data);
        if (all->data == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "malloc", __FILE__, __LINE__);
    }
    MPI_CHECK(MPI_Gatherv(local->data, count, MPI_DOUBLE, all->data, counts, displs, MPI_DOUBLE, 0,
                          comm));
    free(counts);
    free(displs);
}

void nn_table_free(nn_table *t)
{
    free(t->data);
    nn_table_init(t, t->cols);
}

typedef struct {
    double key;
    size_t index;
} row_order;

static int by_key_then_index(const void *a, const void *b)
{
    const row_order *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void nn_table_write(nn_writer *w, const nn_table *local, MPI_Comm comm, const char *columns,
                    const char *formats)
{
    nn_table all;
    nn_table_gather(local, comm, &all);
    nn_columns(w, columns);
    row_order *order = malloc((all.rows > 0 ? all.rows : 1) * sizeof *order);
    if (order == NULL)
        nn_mpi_fail(MPI_ERR_NO_MEM, "malloc", __FILE__, __LINE__);
    for (size_t i = 0; i < all.rows; i++)
        order[i] = (row_order){NN_ROW(&all, i)[0], i};
    qsort(order, all.rows, sizeof *order, by_key_then_index);
    for (size_t i = 0; i < all.rows; i++)
        nn_row_values(w, NN_ROW(&all, order[i].index), all.cols, formats);
    free(order);
    nn_table_free(&all);
}

void nn_write_rank_rows(nn_writer *w, MPI_Comm comm, const double *mine, int count,
                        const char *columns, const char *formats)
{
    nn_table local;
    nn_table_init(&local, count);
    nn_table_add(&local, mine);
    nn_table_write(w, &local, comm, columns, formats);
    nn_table_free(&local);
}

/* A kernel CPU list ("0-3,6") into set; 0 when it is malformed or empty. */
static int parse_cpu_list(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = text;
    while (*p) {
        char *end;
        long first = strtol(p, &end, 10), last = first;
        if (end == p || first < 0 || first >= CPU_SETSIZE)
            return 0;
        p = end;
        if (*p == '-') {
            last = strtol(p + 1, &end, 10);
            if (end == p + 1 || last < first || last >= CPU_SETSIZE)
                return 0;
            p = end;
        }
        for (long cpu = first; cpu <= last; cpu++)
            CPU_SET((int)cpu, set);
        if (*p == ',')
            p++;
        else if (*p)
            return 0;
    }
    return CPU_COUNT(set) > 0;
}

void nn_cores_init(nn_cores *cores, MPI_Comm comm)
{
    const char *measured = getenv("NN_CPUS_MEASURED"), *other = getenv("NN_CPUS_OTHER");
    cores->given = measured && other && *measured && *other;
    if (!cores->given)
        return;
    if (!parse_cpu_list(measured, &cores->measured) || !parse_cpu_list(other, &cores->other))
        nn_fail_all(comm,
                    "NN_CPUS_MEASURED=%s / NN_CPUS_OTHER=%s: expected CPU lists such as 0-3,6",
                    measured, other);
}

void nn_cores_bind(const nn_cores *cores, int measured)
{
    if (!cores->given)
        return;
    const cpu_set_t *set = measured ? &cores->measured : &cores->other;
    /* Every thread: Open MPI's progress threads run beside the rank's own. */
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *entry;
    while (tasks && (entry = readdir(tasks)) != NULL)
        if (entry->d_name[0] != '.')
            sched_setaffinity((pid_t)atoi(entry->d_name), sizeof *set, set);
    if (tasks)
        closedir(tasks);
    cpu_set_t seen;
    if (sched_setaffinity(0, sizeof *set, set) != 0 ||
        sched_getaffinity(0, sizeof seen, &seen) != 0 || !CPU_EQUAL(&seen, set)) {
        fprintf(stderr, "nn_cores_bind: the kernel did not bind this rank to the %s cores\n",
                measured ? "measured" : "other");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
