/*
 * cpuhog: a CPU-only interferer, the control of every co-run study.
 */
#include <math.h>

#include "nn_mpi.h"

static const nn_tool_info info = {
    "cpuhog",
    "Keeps every rank's core busy for a share of the time and sends nothing.",
    "Each rank alternates busy work (a floating-point loop on the monotonic clock) and "
    "sleep in periods of --period-us, busy for --load of each period, so it takes about "
    "--load of a core and no network. Run as the background of a co-run in place of a "
    "network background with the same CPU share, it shows how much of a measured slowdown "
    "the cores alone explain on an emulated cluster whose nodes share them. Every timed "
    "iteration is one period; it runs until --duration, the stop file or SIGUSR1 "
    "(--iterations 0) and writes one row per rank: busy_s, elapsed_s, busy_share.",
};

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(1, 0);
    double load = 0.5, period_us = 10000;
    const nn_option opts[] = {
        {"load", NN_OPT_DOUBLE, &load, 0, 1, NULL, "share of each period a rank is busy, 0 to 1"},
        {"period-us", NN_OPT_DOUBLE, &period_us, 100, 1e7, NULL,
         "length of one busy-then-sleep period in microseconds"},
        NN_RUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = 1};
    nn_bench_begin(&b, &argc, &argv);

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "load period-us");

    const long long period_ns = (long long)(period_us * 1e3);
    const long long busy_ns = (long long)(load * (double)period_ns);
    volatile double sink = 1.0;
    double busy_s = 0;
    nn_loop loop;
    nn_loop_begin(&loop, &run, MPI_COMM_WORLD);
    while (nn_loop_warming(&loop))
        nn_sleep_ns(period_ns);
    double t_start = 0;
    while (nn_loop_next(&loop)) {
        if (t_start == 0)
            t_start = nn_now();
        const long long begin = nn_now_ns();
        while (nn_now_ns() - begin < busy_ns)
            sink = sqrt(sink + 1.0);
        busy_s += (double)(nn_now_ns() - begin) * 1e-9;
        nn_sleep_ns(period_ns - (nn_now_ns() - begin));
    }
    const double elapsed = t_start > 0 ? nn_now() - t_start : 0;

    const double mine[4] = {b.rank, busy_s, elapsed, elapsed > 0 ? busy_s / elapsed : 0};
    nn_write_rank_rows(&out, MPI_COMM_WORLD, mine, 4, "rank,busy_s,elapsed_s,busy_share",
                       "%.0f,%.6f,%.6f,%.4f");
    return nn_bench_end(&out);
}
