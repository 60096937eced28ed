/*
 * The start and end every netnoise program shares: MPI and options, the rank
 * count, the rule that a run must be able to end, the output file.
 */
#include <string.h>

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

/* The next name of a space-separated list from *at on (its length in *len,
 * *at moved past it), or NULL at the end of the list. */
static const char *next_name(const char **at, size_t *len)
{
    while (*at != NULL && **at == ' ')
        (*at)++;
    if (*at == NULL || **at == '\0')
        return NULL;
    const char *name = *at;
    *len = strcspn(name, " ");
    *at += *len;
    return name;
}

/* The option's value as a preamble line (nn_bench_writer). */
static void record_option(nn_writer *w, const nn_option *o)
{
    char key[64];
    snprintf(key, sizeof key, "%s%s", o->name, o->type == NN_OPT_SIZE ? "_bytes" : "");
    for (char *c = key; *c != '\0'; c++)
        if (*c == '-')
            *c = '_';
    switch (o->type) {
    case NN_OPT_LONG:
        nn_meta(w, key, "%ld", *(const long *)o->dest);
        break;
    case NN_OPT_DOUBLE:
        nn_meta(w, key, "%g", *(const double *)o->dest);
        break;
    case NN_OPT_SIZE:
        nn_meta(w, key, "%zu", *(const size_t *)o->dest);
        break;
    case NN_OPT_STRING:
    case NN_OPT_CHOICE: {
        const char *value = *(const char *const *)o->dest;
        nn_meta(w, key, "%s", value != NULL ? value : "");
        break;
    }
    case NN_OPT_FLAG:
        nn_meta(w, key, "%d", *(const int *)o->dest);
        break;
    }
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
    b->peer = b->rank ^ 1;
    check_ranks(b);
    check_end(b);
}

void nn_bench_writer(const nn_bench *b, nn_writer *w, MPI_Comm comm, const char *record)
{
    size_t len;
    for (const char *at = record, *name; (name = next_name(&at, &len)) != NULL;)
        if (nn_find_option(b->opts, name, len) == NULL)
            nn_fail_all(comm, "%s: recorded option '%.*s' is not in the option table",
                        b->info->tool, (int)len, name);
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    if (nn_writer_open(w, b->run->output, rank == 0) != 0)
        MPI_Abort(comm, 2);
    nn_preamble(w, b->info, b->argc, b->argv, b->run->seed, comm);
    for (const char *at = record, *name; (name = next_name(&at, &len)) != NULL;)
        record_option(w, nn_find_option(b->opts, name, len));
}

int nn_bench_end(nn_writer *w)
{
    int rc = nn_writer_close(w, 1);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
