/*
 * pingpong: MPI ping-pong latency, every sample kept.
 *
 * Seed 004, Sec. 5 ("library level"): the latency an MPI application sees
 * for a message of a given size. Ranks form pairs (0,1), (2,3), ...; the
 * even rank of each pair sends, the odd rank echoes, the even rank times
 * the round trip with a monotonic clock. Pairs run concurrently so that
 * one run can probe every link of an allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"

static const nn_tool_info info = {
    "pingpong",
    "MPI ping-pong round-trip latency between rank pairs, one row per sample.",
    "Ranks are paired (0,1), (2,3), ...; the even rank of each pair sends --size bytes with "
    "MPI_Send, the odd rank receives and answers with the same size, and the even rank times the "
    "round trip with CLOCK_MONOTONIC. --warmup untimed exchanges precede the timed ones. Every "
    "sample is kept: columns pair, iteration, size_bytes, rtt_us (one-way latency is rtt_us/2). "
    "Implements the library-level latency measurement of seed 004 (Sec. 5).",
};

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(100, 1000);
    size_t size = 1;
    const nn_option opts[] = {
        {"size", NN_OPT_SIZE, &size, 0, 1 << 30, NULL, "message size in bytes"},
        NN_RUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_init(&argc, &argv);
    nn_parse_or_exit(argc, argv, opts, &info);

    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    if (nranks < 2 || nranks % 2 != 0)
        nn_fail_all(MPI_COMM_WORLD, "pingpong: needs an even number of ranks >= 2, got %d",
                    nranks);
    if (run.iterations == 0 && run.duration_s == 0 && run.stop_file == NULL)
        nn_fail_all(MPI_COMM_WORLD,
                    "pingpong: --iterations 0 needs --duration or --stop-file to end");

    const int initiator = rank % 2 == 0;
    const int peer = initiator ? rank + 1 : rank - 1;
    char *buf = malloc(size > 0 ? size : 1);
    size_t cap = run.iterations > 0 ? (size_t)run.iterations : 1024;
    double *rtt = malloc(cap * sizeof *rtt);
    if (buf == NULL || rtt == NULL)
        nn_fail_all(MPI_COMM_WORLD, "pingpong: out of memory");
    memset(buf, 0, size > 0 ? size : 1);

    nn_writer out;
    if (nn_writer_open(&out, run.output, rank == 0) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    nn_preamble(&out, &info, argc, argv, run.seed, MPI_COMM_WORLD);
    nn_meta(&out, "size_bytes", "%zu", size);
    nn_meta(&out, "warmup", "%ld", run.warmup);
    nn_meta(&out, "pairs", "%d", nranks / 2);
    nn_meta(&out, "clock", "CLOCK_MONOTONIC");

    const int count = (int)size;
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    while (nn_loop_warming(&loop)) {
        if (initiator) {
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
        }
    }
    size_t n = 0;
    while (nn_loop_next(&loop)) {
        if (initiator) {
            double t0 = nn_now();
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            double t1 = nn_now();
            if (n == cap) {
                cap *= 2;
                double *grown = realloc(rtt, cap * sizeof *rtt);
                if (grown == NULL)
                    nn_mpi_fail(MPI_ERR_NO_MEM, "realloc", __FILE__, __LINE__);
                rtt = grown;
            }
            rtt[n++] = (t1 - t0) * 1e6;
        } else {
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
        }
    }

    /* Rank 0 writes every initiator's samples, pair by pair. */
    nn_columns(&out, "pair,iteration,size_bytes,rtt_us");
    for (int pair = 0; pair < nranks / 2; pair++) {
        int src = 2 * pair;
        if (src == 0 && rank == 0) {
            for (size_t i = 0; i < n; i++)
                nn_row(&out, "%d,%zu,%zu,%.3f", pair, i, size, rtt[i]);
        } else if (rank == src) {
            unsigned long long count_samples = n;
            MPI_CHECK(MPI_Send(&count_samples, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(rtt, (int)n, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD));
        } else if (rank == 0) {
            unsigned long long m = 0;
            MPI_CHECK(MPI_Recv(&m, 1, MPI_UNSIGNED_LONG_LONG, src, 1, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            double *theirs = malloc((m > 0 ? m : 1) * sizeof *theirs);
            if (theirs == NULL)
                nn_mpi_fail(MPI_ERR_NO_MEM, "malloc", __FILE__, __LINE__);
            MPI_CHECK(MPI_Recv(theirs, (int)m, MPI_DOUBLE, src, 2, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            for (unsigned long long i = 0; i < m; i++)
                nn_row(&out, "%d,%llu,%zu,%.3f", pair, i, size, theirs[i]);
            free(theirs);
        }
    }
    int rc = nn_writer_close(&out, 1);
    free(buf);
    free(rtt);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
