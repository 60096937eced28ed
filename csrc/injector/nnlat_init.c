/*
 * libnnlatency initialisation (Algorithm 1 of seed 004): when the library
 * is loaded, read the configuration, load table and seed into static
 * memory, and either enable the level's wrappers or disable them with one
 * warning (a fatal error under NN_LATENCY_STRICT=1). The report is written
 * at exit (and after MPI_Finalize, see nnlat_mpi.c).
 */
#include "nnlat.h"
#include "../common/nn_life.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void who(char *buf, size_t len)
{
    if (nnlat.rank >= 0)
        snprintf(buf, len, "libnnlatency (rank %ld)", nnlat.rank);
    else
        snprintf(buf, len, "libnnlatency (pid %ld)", (long)getpid());
}

static void child_after_fork(void)
{
    nnlat_forked(&nnlat);
}

__attribute__((constructor)) static void nnlat_load(void)
{
    /* Loaded before main: a rank that blocks here dies with its launcher too. */
    nn_die_with_parent();
    char name[64];
    int rc = nnlat_configure(&nnlat, nnlat_rank_from_env());
    who(name, sizeof name);
    if (rc != 0) {
        /* Every failing process says why: the table may be missing on one node only. */
        fprintf(stderr, "%s: error: %s (NN_LATENCY_STRICT=1, exiting)\n", name, nnlat.reason);
        fflush(stderr);
        _exit(2);
    }
    if (!nnlat.enabled) {
        /* One warning per job, not one per rank: rank 0 (or a process outside MPI)
         * speaks; the report of each rank records its own reason. */
        if (nnlat.rank <= 0)
            fprintf(stderr, "%s: warning: latency injection disabled: %s\n", name, nnlat.reason);
        nnlat_active = NNLAT_OFF;
        return;
    }
    nnlat_active = nnlat.level;
    pthread_atfork(NULL, NULL, child_after_fork);
}

__attribute__((destructor)) static void nnlat_unload(void)
{
    nnlat_finish(&nnlat, 1);
}
