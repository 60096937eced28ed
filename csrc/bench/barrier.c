/*
 * barrier: MPI_Barrier latency, every sample kept (seed 004, library level).
 */
#include "nn_mpi.h"

static const nn_tool_info info = {
    "barrier",
    "MPI_Barrier latency over all ranks, one row per sample.",
    "After --warmup untimed barriers, each timed iteration every rank times its own "
    "MPI_Barrier with CLOCK_MONOTONIC; the sample is the slowest rank's time (a reduction "
    "outside the timed region) and rank 0's own. Every sample is kept: iteration, time_us "
    "(max over ranks), rank0_us. Implements the library-level barrier measurement of seed 004 "
    "(Sec. 5-6), where injected latency per message accumulates over the barrier's rounds.",
};

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(100, 1000);
    const nn_option opts[] = {NN_RUN_OPTIONS(&run), NN_OPTIONS_END};

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = 2};
    nn_bench_begin(&b, &argc, &argv);

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "warmup");
    nn_meta(&out, "clock", "CLOCK_MONOTONIC");

    nn_table samples; /* iteration, max_us, rank0_us */
    nn_table_init(&samples, 3);
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    while (nn_loop_warming(&loop))
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    while (nn_loop_next(&loop)) {
        nn_probe_begin();
        double t0 = nn_now();
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double mine = (nn_now() - t0) * 1e6, slowest = 0;
        nn_probe_end();
        MPI_CHECK(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        if (b.rank == 0) {
            double row[3] = {(double)(loop.timed_done - 1), slowest, mine};
            nn_table_add(&samples, row);
        }
    }
    nn_table_write(&out, &samples, MPI_COMM_WORLD, "iteration,time_us,rank0_us", "%.0f,%.3f,%.3f");
    nn_table_free(&samples);
    return nn_bench_end(&out);
}
