/*
 * Exercises every send the mpi level of libnnlatency intercepts, between
 * ranks 0 and 1, and prints on each rank how many sends it made and how
 * long the shortest one took:
 *   sendfamily rank=R sends=N min_send_us=T
 * check.sh compares N with the delays= of the rank's report, and T with
 * the constant delay of the table. Sends to MPI_PROC_NULL, receives and
 * collectives must not be delayed, so they are made too but not counted.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double min_us = 1e30;
static int sends = 0;
static double t0;

/* Time one send call, counted. */
#define TIMED(call)                                 \
    do {                                            \
        t0 = MPI_Wtime();                           \
        call;                                       \
        double dt = (MPI_Wtime() - t0) * 1e6;       \
        if (dt < min_us)                            \
            min_us = dt;                            \
        sends++;                                    \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "sendfamily: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int peer = 1 - rank;
    int x = rank, y = -1;
    MPI_Request req, reqs[2];
    static char bsend_buf[4 * (MPI_BSEND_OVERHEAD + sizeof(int))];
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);

    /* Blocking family: rank 0 sends first, rank 1 answers. */
    for (int turn = 0; turn < 2; turn++) {
        if (rank == turn) {
            TIMED(MPI_Send(&x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
            TIMED(MPI_Ssend(&x, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
            TIMED(MPI_Bsend(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
        } else {
            for (int tag = 1; tag <= 3; tag++)
                MPI_Recv(&y, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    /* Ready sends need the receive posted first. */
    MPI_Irecv(&y, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    TIMED(MPI_Rsend(&x, 1, MPI_INT, peer, 4, MPI_COMM_WORLD));
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Irecv(&y, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    TIMED(MPI_Irsend(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[0]));
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* Nonblocking family. */
    int tag = 10;
    TIMED(MPI_Isend(&x, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &reqs[0]));
    MPI_Recv(&y, 1, MPI_INT, peer, tag++, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    TIMED(MPI_Issend(&x, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &reqs[0]));
    MPI_Recv(&y, 1, MPI_INT, peer, tag++, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    TIMED(MPI_Ibsend(&x, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &reqs[0]));
    MPI_Recv(&y, 1, MPI_INT, peer, tag++, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

    /* Combined send-receive. */
    TIMED(MPI_Sendrecv(&x, 1, MPI_INT, peer, 20, &y, 1, MPI_INT, peer, 20, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    y = x;
    TIMED(MPI_Sendrecv_replace(&y, 1, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));

    /* Persistent sends: one delay per start, none at creation. */
    MPI_Request psend, precv;
    MPI_Send_init(&x, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &psend);
    MPI_Recv_init(&y, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &precv);
    for (int i = 0; i < 3; i++) {
        MPI_Start(&precv);
        TIMED(MPI_Start(&psend));
        MPI_Wait(&psend, MPI_STATUS_IGNORE);
        MPI_Wait(&precv, MPI_STATUS_IGNORE);
    }
    reqs[0] = psend;
    reqs[1] = precv;
    TIMED(MPI_Startall(2, reqs)); /* one send among the two requests */
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    MPI_Request_free(&psend);
    MPI_Request_free(&precv);
    MPI_Ssend_init(&x, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, &psend);
    MPI_Irecv(&y, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, &req);
    TIMED(MPI_Start(&psend));
    MPI_Wait(&psend, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Request_free(&psend);

    /* Not delayed: sends to MPI_PROC_NULL, collectives. */
    MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 40, MPI_COMM_WORLD);
    MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 41, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 42, MPI_COMM_WORLD, &psend);
    MPI_Start(&psend);
    MPI_Wait(&psend, MPI_STATUS_IGNORE);
    MPI_Request_free(&psend);
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    printf("sendfamily rank=%d sends=%d min_send_us=%.1f\n", rank, sends, min_us);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
