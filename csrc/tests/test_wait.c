/*
 * The wait layer (common/nn_wait.c) on 2 ranks: a rank waiting half a second in
 * MPI_Recv, MPI_Barrier or MPI_Allreduce uses almost no CPU under the sleep and
 * hybrid policies and a full core under spin, and every wait still completes
 * soon after its message: within the longest sleep plus a scheduling margin.
 *
 *   mpirun -n 2 test_wait POLICY      (POLICY: spin, sleep or hybrid)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "nn_mpi.h"

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

enum { RECV, BARRIER, ALLREDUCE, CASES };
static const char *const case_names[CASES] = {"MPI_Recv", "MPI_Barrier", "MPI_Allreduce"};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nn_wait_policy p = nn_wait_get();
    if (argc != 2 || size != 2 || nn_wait_parse(argv[1], &p) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 test_wait spin|sleep|hybrid\n");
        MPI_Finalize();
        return 2;
    }
    nn_wait_set_policies(p, nn_wait_probe_get());
    const double hold_s = 0.5;
    for (int c = 0; c < CASES; c++) {
        double cpu = 0, lag = 0, sent_at = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            /* Busy elsewhere (asleep), then release rank 0 and say when. */
            nn_sleep_ns((long long)(hold_s * 1e9));
            sent_at = nn_now();
        }
        double c0 = cpu_seconds(), t = 0;
        int one = 1, sum = 0;
        if (c == RECV) {
            if (rank == 1)
                MPI_Send(&sent_at, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            else
                MPI_Recv(&sent_at, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (c == BARRIER) {
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
        t = nn_now();
        cpu = cpu_seconds() - c0;
        if (c != RECV)
            MPI_Bcast(&sent_at, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
        if (rank != 0)
            continue;
        lag = t - sent_at;
        /* Rank 0 waited hold_s: spinning costs it most of the wait (less when it
         * yields to other processes), sleeping a sliver. */
        const int cpu_ok = p.mode == NN_WAIT_SPIN ? cpu > 0.15 * hold_s : cpu < 0.05 * hold_s;
        const double max_lag = p.sleep_max_ns * 1e-9 + 0.02;
        const int lag_ok = lag >= 0 && lag < max_lag;
        const int sum_ok = c != ALLREDUCE || sum == 2;
        printf("%s %s: waited with %.3f s of CPU, done %.3f ms after the release (limit %.1f "
               "ms)%s\n",
               argv[1], case_names[c], cpu, lag * 1e3, max_lag * 1e3,
               cpu_ok && lag_ok && sum_ok ? "" : "  FAILED");
        failures += !(cpu_ok && lag_ok && sum_ok);
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
