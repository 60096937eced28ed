/*
 * The cost of libnnlatency's MPI_Send wrapper when it injects nothing (the
 * library disabled, or a send to MPI_PROC_NULL), measured inside one process
 * so that scheduling noise between runs cannot hide or fake it: blocks of
 * MPI_Send and PMPI_Send calls to MPI_PROC_NULL alternate, and the fastest
 * block of each gives the per-call time. Prints
 *   wrapcost mpi_send_ns=W pmpi_send_ns=P overhead_ns=W-P
 * Without LD_PRELOAD both names reach the same function.
 */
#include <mpi.h>
#include <stdio.h>

enum { CALLS = 200000, BLOCKS = 30 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char byte = 0;
    double best_wrapped = 1e30, best_direct = 1e30;
    for (int b = 0; b < BLOCKS; b++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < CALLS; i++)
            MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        for (int i = 0; i < CALLS; i++)
            PMPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        if (t1 - t0 < best_wrapped)
            best_wrapped = t1 - t0;
        if (t2 - t1 < best_direct)
            best_direct = t2 - t1;
    }
    double w = best_wrapped / CALLS * 1e9, p = best_direct / CALLS * 1e9;
    printf("wrapcost mpi_send_ns=%.2f pmpi_send_ns=%.2f overhead_ns=%.2f\n", w, p, w - p);
    MPI_Finalize();
    return 0;
}
