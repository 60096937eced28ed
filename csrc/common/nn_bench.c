/*
 * The start and end every netnoise program shares: MPI and options, the rank
 * count, the rule that a run must be able to end, the output file.
 */
#include "nn_mpi.h"

static void check_ranks(const nn_bench *b)
{
    const char *tool = b->info->tool;
    if (b->ranks == NN_RANK_PAIRS) {
        if (b->nranks < 2 || b->nranks % 2 != 0)
            nn_fail_all(MPI_COMM_WORLD, "%s: needs an even number of ranks >= 2, got %d", tool,
                        b->nranks);
    } else if (b->nranks < b->ranks) {
        if (b->ranks_why != NULL)
            nn_fail_all(MPI_COMM_WORLD, "%s: needs at least %d ranks (%s), got %d", tool, b->ranks,
                        b->ranks_why, b->nranks);
        nn_fail_all(MPI_COMM_WORLD, "%s: needs at least %d ranks, got %d", tool, b->ranks,
                    b->nranks);
    }
}

/* Whether the option table sets *dest. */
static int has_option(const nn_option *opts, const void *dest)
{
    for (; opts->name != NULL; opts++)
        if (opts->dest == dest)
            return 1;
    return 0;
}

/* A run with no iteration count, no duration and no stop file ends only on a
 * signal: programs that can run so are told to give an end. Those with
 * neither --iterations nor --duration end by themselves. */
static void check_end(const nn_bench *b)
{
    const nn_run_options *run = b->run;
    if (run->iterations != 0 || run->duration_s != 0 || run->stop_file != NULL)
        return;
    if (has_option(b->opts, &run->iterations))
        nn_fail_all(MPI_COMM_WORLD,
                    "%s: --iterations 0 needs --duration or --stop-file to end (or stop it with "
                    "SIGUSR1)",
                    b->info->tool);
    if (has_option(b->opts, &run->duration_s))
        nn_fail_all(MPI_COMM_WORLD, "%s: give --duration or --stop-file (or stop it with SIGUSR1)",
                    b->info->tool);
}

void nn_bench_begin(nn_bench *b, int *argc, char ***argv)
{
    nn_init(argc, argv);
    nn_parse_or_exit(*argc, *argv, b->opts, b->info);
    nn_apply_mpi_wait(b->run);
    b->argc = *argc;
    b->argv = *argv;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &b->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &b->nranks));
    check_ranks(b);
    check_end(b);
}

void nn_bench_writer(const nn_bench *b, nn_writer *w, MPI_Comm comm)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (nn_writer_open(w, b->run->output, rank == 0) != 0)
        MPI_Abort(comm, 2);
    nn_preamble(w, b->info, b->argc, b->argv, b->run->seed, comm);
}

int nn_bench_end(nn_writer *w)
{
    int rc = nn_writer_close(w, 1);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
