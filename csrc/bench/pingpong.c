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

static void exchange(char *buf, int count, int peer, int initiator)
{
    if (initiator) {
        MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(100, 1000);
    size_t size = 1;
    const nn_option opts[] = {
        {"size", NN_OPT_SIZE, &size, 0, 1 << 30, NULL, "message size in bytes"},
        NN_RUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_RANK_PAIRS};
    nn_bench_begin(&b, &argc, &argv);

    const int initiator = b.rank % 2 == 0;
    char *buf = calloc(size > 0 ? size : 1, 1);
    if (buf == NULL)
        nn_fail_all(MPI_COMM_WORLD, "pingpong: out of memory");

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "size warmup");
    nn_meta(&out, "pairs", "%d", b.nranks / 2);
    nn_meta(&out, "clock", "CLOCK_MONOTONIC");

    const int count = (int)size;
    nn_table samples; /* pair, iteration, size_bytes, rtt_us */
    nn_table_init(&samples, 4);
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    while (nn_loop_warming(&loop)) {
        nn_probe_begin();
        exchange(buf, count, b.peer, initiator);
        nn_probe_end();
    }
    while (nn_loop_next(&loop)) {
        nn_probe_begin();
        double t0 = nn_now();
        exchange(buf, count, b.peer, initiator);
        double rtt = (nn_now() - t0) * 1e6;
        nn_probe_end();
        if (initiator) {
            double row[4] = {b.rank / 2, (double)(loop.timed_done - 1), (double)size, rtt};
            nn_table_add(&samples, row);
        }
    }

    nn_table_write(&out, &samples, MPI_COMM_WORLD, "pair,iteration,size_bytes,rtt_us",
                   "%.0f,%.0f,%.0f,%.3f");
    nn_table_free(&samples);
    free(buf);
    return nn_bench_end(&out);
}
