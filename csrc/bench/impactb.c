/*
 * impactb: light probe of the latency the network offers while something
 * else runs on it (seed 000, Sec. III-A, Fig. 2).
 */
#include <stdlib.h>

#include "nn_mpi.h"

static const nn_tool_info info = {
    "impactb",
    "ImpactB probe: sparse ping-pongs whose latencies show how much of the network "
    "other software uses.",
    "Ranks are paired (0,1), (2,3), ...; with one rank per node placed round-robin (mpirun "
    "--map-by node) each pair spans two nodes. The even rank sends --size bytes (default 1 KiB, "
    "one packet), the odd rank receives and answers with the same size, and the even rank "
    "times the round trip with CLOCK_MONOTONIC. Exchanges are separated by --sleep-us "
    "(default 100 ms) so the probe itself barely loads the network. With an odd number of "
    "ranks the last one only takes part in the stop decision. Runs for --iterations exchanges, "
    "or until --duration, the stop file or SIGUSR1, so it can run beside an application. Every "
    "sample is kept: pair, iteration, time_s (since the first exchange), size_bytes, rtt_us; the "
    "packet latency of the paper is rtt_us/2. Seed 000 (Impact experiments, Fig. 2) times the "
    "whole exchange at the initiator exactly so; its pseudo-code posts both messages at once, "
    "its text describes a ping-pong, which is what this program does.",
};

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(2, 0);
    size_t size = 1024;
    double sleep_us = 100000;
    const nn_option opts[] = {
        {"size", NN_OPT_SIZE, &size, 1, 1 << 24, NULL, "message size in bytes"},
        {"sleep-us", NN_OPT_DOUBLE, &sleep_us, 0, 1e8, NULL,
         "pause between exchanges in microseconds (not timed)"},
        NN_RUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = 2};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank, nranks = b.nranks, peer = b.peer;

    const int paired = rank < nranks - nranks % 2;
    const int initiator = paired && rank % 2 == 0;
    const int count = (int)size;
    char *buf = calloc(size, 1);
    if (buf == NULL)
        nn_fail_all(MPI_COMM_WORLD, "impactb: out of memory");

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "size warmup");
    nn_meta(&out, "sleep_us", "%.0f", sleep_us);
    nn_meta(&out, "pairs", "%d", nranks / 2);
    nn_meta(&out, "clock", "CLOCK_MONOTONIC");

    nn_table samples; /* pair, iteration, time_s, size_bytes, rtt_us */
    nn_table_init(&samples, 5);
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t_first = 0;
    int timing = 0;
    for (;;) {
        if (!timing && !nn_loop_warming(&loop))
            timing = 1;
        if (timing && !nn_loop_next(&loop))
            break;
        if (timing && loop.timed_done == 1)
            t_first = nn_now();
        nn_probe_begin();
        double t0 = nn_now();
        if (initiator) {
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else if (paired) {
            MPI_CHECK(MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
        }
        double t1 = nn_now();
        nn_probe_end();
        if (timing && initiator) {
            double row[5] = {rank / 2, (double)(loop.timed_done - 1), t0 - t_first,
                             (double)size, (t1 - t0) * 1e6};
            nn_table_add(&samples, row);
        }
        nn_sleep_ns((long long)(sleep_us * 1e3));
    }

    nn_table_write(&out, &samples, MPI_COMM_WORLD, "pair,iteration,time_s,size_bytes,rtt_us",
                   "%.0f,%.0f,%.6f,%.0f,%.3f");
    nn_table_free(&samples);
    free(buf);
    return nn_bench_end(&out);
}
