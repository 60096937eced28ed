/*
 * libnnlatency in SimGrid's SMPI: the same tables, seeds, draws and reports
 * (nnlat_core.c), with the delay added where SMPI carries a message.
 *
 * SMPI runs every rank inside one simulator process, so nothing can be
 * preloaded: this file is linked into each program of the SMPI build
 * (csrc/Makefile, FLAVOUR=smpi) and does nothing unless NN_LATENCY_TABLE is
 * set. A busy wait would not move the simulated clock, and the MPI-level
 * wrappers of nnlat_mpi.c would miss the messages inside SMPI's collectives.
 * Instead every message the network model carries from a rank's host, a
 * collective's included, gets a latency larger by a delay drawn from that
 * rank's table and seed: the counterpart of the paper's hook in post_send
 * (seed 004, Sec. 3.1), exact in simulated time (nnlat_smpi_network.cpp).
 *
 * In MPI_Init, rank 0 loads every rank's state (the variables' %r expanded
 * with that rank) and installs the hook; in MPI_Finalize, after a barrier,
 * it writes every rank's report. A problem fails the run under
 * NN_LATENCY_STRICT=1 (MPI_Abort with status 2) and otherwise disables the
 * injection with one warning, as the preloaded library does.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnlat.h"
#include "nnlat_smpi.h"

/* The simulation's ranks. csrc/Makefile makes MPI_COMM_WORLD a program's own
 * ranks (nn_world, set once MPI has started), and the injector, which runs
 * before, delays a whole simulation's messages (a co-run's refuses it). */
#undef MPI_COMM_WORLD
extern MPI_Comm MPI_COMM_WORLD;

/* Rank 0's: one state per rank, and the host each rank runs on. */
static struct {
    int ranks;
    nnlat_state *states;
    char (*hosts)[MPI_MAX_PROCESSOR_NAME];
} injection;
static int injecting;

/* The delay in seconds of the next message from host (its rank's draw); a
 * host of no rank sends nothing of the job's. */
static double delay_s(const char *host, void *unused)
{
    (void)unused;
    for (int r = 0; r < injection.ranks; r++)
        if (strcmp(injection.hosts[r], host) == 0) {
            nnlat_state *s = &injection.states[r];
            uint64_t delay = nnlat_draw(s);
            /* The network model holds the message back by exactly this much. */
            nnlat_account(s, delay, delay);
            return (double)delay * 1e-9;
        }
    return 0.0;
}

/* Rank 0: every rank's state; a problem of any rank decides for the job. */
static int load_states(int ranks)
{
    injection.ranks = ranks;
    injection.states = calloc((size_t)ranks, sizeof *injection.states);
    if (injection.states == NULL) {
        fprintf(stderr, "libnnlatency (rank 0): error: no memory for %d ranks' tables\n", ranks);
        return -1;
    }
    for (int r = 0; r < ranks; r++) {
        nnlat_state *s = &injection.states[r];
        int rc = nnlat_configure(s, r);
        if (rc == 0 && s->enabled && s->level != NNLAT_MPI) {
            snprintf(s->reason, sizeof s->reason,
                     "NN_LATENCY_LEVEL=%s: SMPI's messages cross no TCP socket; use mpi",
                     s->level_name);
            s->enabled = 0;
            rc = s->strict ? -1 : 0;
        }
        if (rc != 0) {
            fprintf(stderr, "libnnlatency (rank %d): error: %s (NN_LATENCY_STRICT=1, exiting)\n",
                    r, s->reason);
            return -1;
        }
        if (!s->enabled) {
            fprintf(stderr, "libnnlatency (rank %d): warning: latency injection disabled: %s\n",
                    r, s->reason);
            return 0;
        }
        s->wait = NNLAT_NETWORK;
    }
    return 1;
}

static void start(void)
{
    if (getenv("NN_LATENCY_TABLE") == NULL)
        return; /* not asked to inject */
    int rank, ranks, length;
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
    PMPI_Get_processor_name(host, &length);
    if (rank == 0) {
        injection.hosts = calloc((size_t)ranks, sizeof *injection.hosts);
        if (injection.hosts == NULL)
            PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    PMPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, rank == 0 ? injection.hosts : NULL,
                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    int loaded = 0;
    if (rank == 0) {
        loaded = load_states(ranks);
        if (loaded < 0)
            PMPI_Abort(MPI_COMM_WORLD, 2);
        if (loaded > 0 && nnlat_smpi_add_delays(delay_s, NULL) != 0) {
            fprintf(stderr, "libnnlatency (rank 0): error: SimGrid's network model takes no "
                            "latency callback (the packet model does not)\n");
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* No rank sends before the hook is in place. */
    PMPI_Bcast(&loaded, 1, MPI_INT, 0, MPI_COMM_WORLD);
    injecting = loaded > 0;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

/* Every rank's report, once no rank sends any more. */
int MPI_Finalize(void)
{
    if (injecting) {
        int rank;
        PMPI_Barrier(MPI_COMM_WORLD);
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            for (int r = 0; r < injection.ranks; r++)
                nnlat_finish(&injection.states[r], 0);
    }
    return PMPI_Finalize();
}
