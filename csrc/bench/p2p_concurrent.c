/*
 * p2p_concurrent: simultaneous point-to-point transfers of a communication
 * pattern, each timed by its receiver (seed 003, Sec. 3.1, Fig. 2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"
#include "nn_pattern.h"

static const nn_tool_info info = {
    "p2p_concurrent",
    "Concurrent point-to-point transfers read from a pattern file, each timed by its receiver "
    "until every link's mean is known to 2 %.",
    "The pattern file is CSV with header src,dst,bytes: one link per line, from rank src to "
    "rank dst (with one rank per node, ranks are nodes). Each iteration fills the messages "
    "with an iteration-dependent byte (no cache effects), every receiver pre-posts its "
    "receives, and all senders start together at a time agreed --start-margin-us ahead (in "
    "rank 0's clock, each rank's offset to it measured every 64 iterations). A link's time "
    "runs from its sender's start to its receiver's completion, so a rank that leaves a "
    "collective late (behind other links' data, or waiting for a core) does not shorten or "
    "lengthen it. Iterations repeat until the 95 % confidence "
    "interval of every link's mean time is at most --ci-width (default 2 %) of the mean "
    "(at least --min-iterations), or --max-iterations (default 2000) is reached, as seed 003 "
    "(Sec. 3.1, Fig. 2). Rows per link and iteration: link, src, dst, bytes, iteration, time_s; "
    "the preamble ends with the start's record (late_starts: rank-iterations that learned the "
    "start after it; start_spread_max_us: the widest spread of the senders' starts in one "
    "iteration; clock_rtt_max_us: the worst clock exchange, twice an offset's error bound) "
    "and one summary line per link (#@link_<i>=src dst bytes iterations mean_s "
    "ci95_halfwidth_s).",
};

/* Nodes' clocks drift apart by up to ~10 ppm: re-measured every this many
 * iterations, an offset drifts far less than its own error (half the round
 * trip, recorded as clock_rtt_max_us). */
enum { CLOCK_SYNC_ITERATIONS = 64, CLOCK_SYNC_ROUNDS = 10 };

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(1, 0);
    const char *pattern = NULL;
    long min_iter = 5, max_iter = 2000;
    double ci_width = 0.02, start_margin_us = 5000;
    const nn_option opts[] = {
        {"pattern", NN_OPT_STRING, &pattern, 0, 0, NULL, "pattern file (CSV src,dst,bytes)"},
        {"min-iterations", NN_OPT_LONG, &min_iter, 2, 1000000, NULL,
         "iterations before the confidence test applies"},
        {"max-iterations", NN_OPT_LONG, &max_iter, 2, 1000000, NULL, "maxIter of the paper"},
        {"ci-width", NN_OPT_DOUBLE, &ci_width, 1e-6, 1, NULL,
         "stop once every link's 95 % confidence interval is this share of its mean"},
        {"start-margin-us", NN_OPT_DOUBLE, &start_margin_us, 0, 1e7, NULL,
         "how far ahead of the last rank's arrival the common start is set"},
        NN_WARMUP_OPTION(&run),
        NN_CORUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_ANY_RANKS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank;
    if (pattern == NULL)
        nn_fail_all(MPI_COMM_WORLD, "p2p_concurrent: --pattern FILE is required");
    if (min_iter > max_iter)
        nn_fail_all(MPI_COMM_WORLD, "p2p_concurrent: --min-iterations %ld > --max-iterations %ld",
                    min_iter, max_iter);

    char err[600] = "";
    nn_link *links = NULL;
    int nlinks = 0;
    if (rank == 0)
        nlinks = nn_read_pattern(pattern, b.nranks, &links, err, sizeof err);
    MPI_CHECK(MPI_Bcast(&nlinks, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (nlinks < 0) {
        if (rank == 0)
            fprintf(stderr, "p2p_concurrent: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    if (rank != 0)
        links = malloc((size_t)nlinks * sizeof *links);
    MPI_CHECK(MPI_Bcast(links, (int)(nlinks * sizeof *links), MPI_BYTE, 0, MPI_COMM_WORLD));

    /* Buffers and per-link statistics of the links this rank takes part in;
     * the senders' starts and receivers' completions of one iteration, in
     * rank 0's clock. */
    char **buf = calloc((size_t)nlinks, sizeof *buf);
    double *sum = calloc((size_t)nlinks, sizeof *sum), *sumsq = calloc((size_t)nlinks, sizeof *sumsq);
    double *started = calloc((size_t)nlinks, sizeof *started);
    double *start_of = calloc((size_t)nlinks, sizeof *start_of);
    double *done_at = calloc((size_t)nlinks, sizeof *done_at);
    MPI_Request *req = malloc((size_t)nlinks * sizeof *req);
    int *req_link = malloc((size_t)nlinks * sizeof *req_link);
    for (int l = 0; l < nlinks; l++)
        if (links[l].src == rank || links[l].dst == rank) {
            buf[l] = malloc(links[l].bytes);
            if (buf[l] == NULL)
                nn_fail_all(MPI_COMM_WORLD, "p2p_concurrent: out of memory for link %d", l);
        }
    MPI_Comm clock_comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &clock_comm));

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "pattern ci-width max-iterations start-margin-us");
    nn_meta(&out, "links", "%d", nlinks);

    nn_table rows; /* link, src, dst, size_bytes, iteration, time_s */
    nn_table_init(&rows, 6);
    long iter = 0, late_starts = 0;
    double offset = 0, rtt = 0, rtt_max = 0, spread_max = 0;
    /* Warm-up iterations are inside the loop, so inside the timed region too. */
    nn_timed_begin(&run, MPI_COMM_WORLD);
    for (long it = -run.warmup; it < max_iter; it++) {
        if ((it + run.warmup) % CLOCK_SYNC_ITERATIONS == 0) {
            nn_clock_offset(clock_comm, CLOCK_SYNC_ROUNDS, &offset, &rtt);
            rtt_max = fmax(rtt_max, rtt);
        }
        int nreq = 0;
        for (int l = 0; l < nlinks; l++) {
            started[l] = 0;
            if (links[l].dst == rank) {
                req_link[nreq] = l;
                MPI_CHECK(MPI_Irecv(buf[l], (int)links[l].bytes, MPI_BYTE, links[l].src, l,
                                    MPI_COMM_WORLD, &req[nreq++]));
            } else if (links[l].src == rank) {
                memset(buf[l], (int)(it & 0xff), links[l].bytes);
            }
        }
        const int nrecv = nreq;
        /* The latest arrival plus the margin: the reduction completes on every
         * rank before that time unless a rank is late by more than the margin. */
        const double ready = nn_now() + offset + start_margin_us * 1e-6;
        double start;
        MPI_CHECK(MPI_Allreduce(&ready, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        const double ahead = start - (nn_now() + offset);
        if (ahead > 0)
            nn_sleep_ns((long long)(ahead * 1e9));
        else
            late_starts++;
        for (int l = 0; l < nlinks; l++)
            if (links[l].src == rank) {
                req_link[nreq] = l;
                started[l] = nn_now() + offset;
                MPI_CHECK(MPI_Isend(buf[l], (int)links[l].bytes, MPI_BYTE, links[l].dst, l,
                                    MPI_COMM_WORLD, &req[nreq++]));
            }
        for (int done = 0; done < nreq; done++) {
            int idx;
            MPI_CHECK(MPI_Waitany(nreq, req, &idx, MPI_STATUS_IGNORE));
            if (idx < nrecv)
                done_at[req_link[idx]] = nn_now() + offset;
        }
        /* Every link has one sender: the sum is its start. */
        MPI_CHECK(MPI_Allreduce(started, start_of, nlinks, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        if (it < 0)
            continue;
        double first = start_of[0], last = start_of[0];
        for (int l = 1; l < nlinks; l++) {
            first = fmin(first, start_of[l]);
            last = fmax(last, start_of[l]);
        }
        spread_max = fmax(spread_max, last - first);
        for (int i = 0; i < nrecv; i++) {
            const int l = req_link[i];
            const double t = done_at[l] - start_of[l];
            sum[l] += t;
            sumsq[l] += t * t;
            double row[6] = {l, links[l].src, links[l].dst, (double)links[l].bytes, (double)it, t};
            nn_table_add(&rows, row);
        }
        iter = it + 1;
        /* Converged when every link this rank receives has a tight interval. */
        int converged = iter >= min_iter;
        for (int l = 0; l < nlinks && converged; l++) {
            if (links[l].dst != rank)
                continue;
            const double mean = sum[l] / (double)iter;
            const double var = fmax(0, (sumsq[l] - (double)iter * mean * mean) / (double)(iter - 1));
            const double half = nn_t95(iter - 1) * sqrt(var / (double)iter);
            converged = 2 * half <= ci_width * mean;
        }
        int all_converged = 0;
        MPI_CHECK(MPI_Allreduce(&converged, &all_converged, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (all_converged)
            break;
    }

    nn_timed_end(&run, MPI_COMM_WORLD);
    /* Per-link summaries come from the receivers. */
    double *stats = calloc((size_t)nlinks * 2, sizeof *stats), *allstats = NULL;
    for (int l = 0; l < nlinks; l++)
        if (links[l].dst == rank) {
            stats[2 * l] = sum[l];
            stats[2 * l + 1] = sumsq[l];
        }
    if (rank == 0)
        allstats = calloc((size_t)nlinks * 2, sizeof *allstats);
    MPI_CHECK(MPI_Reduce(stats, allstats, nlinks * 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    long late_total = 0;
    double rtt_worst = 0;
    MPI_CHECK(MPI_Reduce(&late_starts, &late_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(&rtt_max, &rtt_worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_free(&clock_comm));
    nn_meta(&out, "iterations", "%ld", iter);
    nn_meta(&out, "late_starts", "%ld", late_total);
    nn_meta(&out, "start_spread_max_us", "%.1f", spread_max * 1e6);
    nn_meta(&out, "clock_rtt_max_us", "%.1f", rtt_worst * 1e6);
    if (rank == 0)
        for (int l = 0; l < nlinks; l++) {
            const double mean = allstats[2 * l] / (double)iter;
            const double var =
                iter > 1 ? fmax(0, (allstats[2 * l + 1] - (double)iter * mean * mean) /
                                       (double)(iter - 1))
                         : 0;
            char key[32];
            snprintf(key, sizeof key, "link_%d", l);
            nn_meta(&out, key, "%d %d %zu %ld %.9f %.9f", links[l].src, links[l].dst,
                    links[l].bytes, iter, mean, nn_t95(iter - 1) * sqrt(var / (double)iter));
        }

    nn_table_write(&out, &rows, MPI_COMM_WORLD, "link,src,dst,size_bytes,iteration,time_s",
                   "%.0f,%.0f,%.0f,%.0f,%.0f,%.9f");
    for (int l = 0; l < nlinks; l++)
        free(buf[l]);
    free(buf);
    free(sum);
    free(sumsq);
    free(started);
    free(start_of);
    free(done_at);
    free(req);
    free(req_link);
    free(stats);
    free(allstats);
    free(links);
    nn_table_free(&rows);
    return nn_bench_end(&out);
}
