/*
 * compressionb: tunable interference that "compresses" the network other
 * software sees (seed 000, Sec. III-B, Fig. 4-5).
 */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "nn_mpi.h"

static const nn_tool_info info = {
    "compressionb",
    "CompressionB interference: rings of processes exchanging M messages with P partners, "
    "sleeping B cycles, until stopped.",
    "Processes with the same node-local rank (the core id) on different nodes form a ring "
    "(MPI_Comm_split_type SHARED, then split by local rank). Each iteration, for each partner "
    "p = 1..P, a process posts M receives of --size bytes (default 40 KiB) from the process p "
    "places after it in the ring and M sends to the one p places before it, then sleeps B "
    "cycles; after all partners it waits for every request and repeats. This follows the "
    "pseudo-code of seed 000 Fig. 5 (sleep inside the partner loop). Cycles become time with "
    "--cycle-hz, or with the time-stamp counter's rate calibrated against CLOCK_MONOTONIC at "
    "start (both recorded): give --cycle-hz 2.6e9 to reproduce the paper's Cab nodes. Runs for "
    "--iterations, or until --duration, the stop file or SIGUSR1. One row per process: its ring, "
    "iterations, bytes sent and received, elapsed time and achieved send rate. The paper's grid "
    "is P in {1,4,7,14,17}, B in {2.5e4,2.5e5,2.5e6,2.5e7} cycles, M in {1,10}.",
};

/* Cycles per second of the time-stamp counter, measured over ~50 ms. */
static double calibrate_cycle_hz(void)
{
#if defined(__x86_64__) || defined(__i386__)
    double t0 = nn_now();
    unsigned long long c0 = __rdtsc();
    nn_spin_ns(50000000LL);
    double t1 = nn_now();
    unsigned long long c1 = __rdtsc();
    return (double)(c1 - c0) / (t1 - t0);
#else
    return 0.0;
#endif
}

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(1, 0);
    long partners = 1, messages = 1;
    double sleep_cycles = 2.5e5, cycle_hz = 0;
    size_t size = 40 * 1024;
    const char *sleep_mode = "sleep";
    const char *ring_by = "core";
    const nn_option opts[] = {
        {"partners", NN_OPT_LONG, &partners, 1, 1024, NULL,
         "P: partners each process sends to (must be below the ring size)"},
        {"messages", NN_OPT_LONG, &messages, 1, 1024, NULL, "M: messages per partner"},
        {"sleep-cycles", NN_OPT_DOUBLE, &sleep_cycles, 0, 1e12, NULL,
         "B: cycles to sleep after each partner's messages"},
        {"cycle-hz", NN_OPT_DOUBLE, &cycle_hz, 0, 1e11, NULL,
         "cycles per second for B (0: calibrate the time-stamp counter)"},
        {"size", NN_OPT_SIZE, &size, 1, 1 << 28, NULL, "message size in bytes"},
        {"ring", NN_OPT_CHOICE, &ring_by, 0, 0, "core|world",
         "core: one ring per node-local rank across nodes (the paper); world: one ring of all "
         "ranks in rank order (for a single host, or one rank per node)"},
        {"sleep-mode", NN_OPT_CHOICE, &sleep_mode, 0, 0, "sleep|spin",
         "sleep gives the core away (several emulated nodes share cores); spin busy-waits as "
         "a dedicated core would"},
        NN_RUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_ANY_RANKS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank;

    MPI_Comm node, ring;
    int core_id, ring_rank, ring_size;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                  &node));
    MPI_CHECK(MPI_Comm_rank(node, &core_id));
    const int by_core = strcmp(ring_by, "core") == 0;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, by_core ? core_id : 0, rank, &ring));
    MPI_CHECK(MPI_Comm_rank(ring, &ring_rank));
    MPI_CHECK(MPI_Comm_size(ring, &ring_size));
    int smallest_ring = ring_size;
    MPI_CHECK(MPI_Allreduce(&ring_size, &smallest_ring, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (partners >= smallest_ring)
        nn_fail_all(MPI_COMM_WORLD,
                    "compressionb: --partners %ld needs rings of more than %ld processes, but a "
                    "ring (%s) has only %d",
                    partners, partners,
                    by_core ? "processes of one core id on different nodes; see --ring"
                            : "all ranks",
                    smallest_ring);

    if (cycle_hz == 0 && rank == 0)
        cycle_hz = calibrate_cycle_hz();
    MPI_CHECK(MPI_Bcast(&cycle_hz, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (cycle_hz <= 0)
        nn_fail_all(MPI_COMM_WORLD,
                    "compressionb: no time-stamp counter to calibrate here; give --cycle-hz");
    const long long sleep_ns = (long long)(sleep_cycles / cycle_hz * 1e9);
    const int spin = strcmp(sleep_mode, "spin") == 0;

    const size_t nreq = (size_t)partners * (size_t)messages;
    char *sendbuf = calloc(size, 1);
    char *recvbuf = malloc(size * nreq);
    MPI_Request *req = malloc(2 * nreq * sizeof *req);
    if (sendbuf == NULL || recvbuf == NULL || req == NULL)
        nn_fail_all(MPI_COMM_WORLD, "compressionb: out of memory (%zu receive buffers)", nreq);

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD,
                    "partners messages sleep-cycles sleep-mode ring size");
    nn_meta(&out, "cycle_hz", "%.6g", cycle_hz);
    nn_meta(&out, "sleep_ns", "%lld", sleep_ns);

    const int count = (int)size;
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    double t_start = 0;
    long long iterations = 0;
    int timing = 0;
    for (;;) {
        if (!timing && !nn_loop_warming(&loop)) {
            timing = 1;
        }
        if (timing && !nn_loop_next(&loop))
            break;
        if (timing && loop.timed_done == 1)
            t_start = nn_now();
        size_t r = 0;
        for (long p = 1; p <= partners; p++) {
            int from = (int)((ring_rank + p) % ring_size);
            int to = (int)((ring_rank - p + ring_size) % ring_size);
            for (long m = 0; m < messages; m++, r++) {
                MPI_CHECK(MPI_Irecv(recvbuf + r * size, count, MPI_BYTE, from, 0, ring,
                                    &req[2 * r]));
                MPI_CHECK(MPI_Isend(sendbuf, count, MPI_BYTE, to, 0, ring, &req[2 * r + 1]));
            }
            if (spin)
                nn_spin_ns(sleep_ns);
            else
                nn_sleep_ns(sleep_ns);
        }
        MPI_CHECK(MPI_Waitall((int)(2 * nreq), req, MPI_STATUSES_IGNORE));
        if (timing)
            iterations++;
    }
    double elapsed = iterations > 0 ? nn_now() - t_start : 0.0;

    double bytes = (double)iterations * (double)nreq * (double)size;
    /* A ring receives what it sends. */
    const double mine[8] = {rank, core_id, ring_rank, (double)iterations, bytes, bytes, elapsed,
                            elapsed > 0 ? bytes * 8 / elapsed / 1e6 : 0.0};
    nn_write_rank_rows(&out, MPI_COMM_WORLD, mine, 8,
                       "rank,ring,ring_rank,iterations,sent_bytes,received_bytes,elapsed_s,send_mbps",
                       "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f,%.3f");
    free(sendbuf);
    free(recvbuf);
    free(req);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&node);
    return nn_bench_end(&out);
}
