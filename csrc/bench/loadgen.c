/*
 * loadgen: background load at a chosen fraction of a link's rate, with
 * exponential gaps (seed 004, Sec. 5.1, Algorithm 3).
 */
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"
#include "nn_rng.h"

static const nn_tool_info info = {
    "loadgen",
    "Leaky-bucket load generator: rank pairs send messages with exponentially distributed "
    "gaps so that the long-run rate is a given share of a link.",
    "Ranks are paired (0,1), (2,3), ...; with one rank per node placed round-robin each pair "
    "spans two nodes. A sender keeps a bucket of elapsed nanoseconds (CLOCK_MONOTONIC) and "
    "sends one --size message whenever the bucket holds the current gap, then draws the next "
    "gap from an exponential distribution (xoshiro256** seeded from --seed and the rank) whose "
    "mean makes the long-run rate --load x --link-mbit: Algorithm 3 of seed 004 (Sec. 5.1), "
    "which drew from a Mersenne Twister. In --direction both (default) each rank of a pair "
    "sends to the other, as the paper ran the generator twice per node, once sending and once "
    "receiving. Sends are nonblocking with at most --window outstanding, so both directions "
    "proceed at once. While the next send is more than 50 us away the sender sleeps rather "
    "than spinning (--wait sleep, default) so several emulated nodes can share a core; --wait "
    "spin busy-polls as the paper did on dedicated cores. Runs until --duration, the stop file "
    "or SIGUSR1. One row per rank: messages and bytes sent, elapsed time, target and achieved "
    "rate.",
};

enum { TAG_DATA = 1, TAG_STOP = 2 };

/* Takes in every data message that has arrived, posting the next receive after
 * each; returns how many arrived. Tests up to PROGRESS_TESTS times first: Open
 * MPI reads its sockets on one progress call of eight, and a sleeping generator
 * calls rarely. */
#define PROGRESS_TESTS 8
static long receive_arrived(MPI_Request *rreq, char *buf, int count, int peer)
{
    long arrived = 0;
    int got = 0;
    for (int i = 0; i < PROGRESS_TESTS && !got; i++)
        MPI_CHECK(MPI_Test(rreq, &got, MPI_STATUS_IGNORE));
    while (got) {
        arrived++;
        MPI_CHECK(MPI_Irecv(buf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, rreq));
        MPI_CHECK(MPI_Test(rreq, &got, MPI_STATUS_IGNORE));
    }
    return arrived;
}

/* Frees the window slots whose sends have finished (a progress pass first, as
 * above), so a sleeping generator does not find its window full of sends that
 * finished long ago. */
static void reap_sends(MPI_Request *sreq, int window)
{
    int done = 0, indices[window];
    for (int i = 0; i < PROGRESS_TESTS && done == 0; i++)
        MPI_CHECK(MPI_Testsome(window, sreq, &done, indices, MPI_STATUSES_IGNORE));
}

/* Between tests while draining, unless --wait spin. */
#define DRAIN_PAUSE_NS 50000LL
/* The longest sleep until the next send is due: receives go on meanwhile. */
#define MAX_PAUSE_NS 2000000LL

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(0, 0);
    double load = 0.5, link_mbit = 50;
    size_t size = 64 * 1024;
    long window = 4;
    const char *direction = "both", *wait_mode = "sleep";
    const nn_option opts[] = {
        {"load", NN_OPT_DOUBLE, &load, 0, 1, NULL, "share of the link rate to send, 0 to 1"},
        {"link-mbit", NN_OPT_DOUBLE, &link_mbit, 1e-3, 1e6, NULL, "link rate in Mbit/s"},
        {"size", NN_OPT_SIZE, &size, 1, 1 << 26, NULL, "message size in bytes"},
        {"direction", NN_OPT_CHOICE, &direction, 0, 0, "both|one",
         "both: each rank of a pair sends to the other; one: even ranks send, odd receive"},
        {"window", NN_OPT_LONG, &window, 1, 1024, NULL, "outstanding sends at most"},
        {"wait", NN_OPT_CHOICE, &wait_mode, 0, 0, "sleep|spin", "how to wait for the next send"},
        {"duration", NN_OPT_DOUBLE, &run.duration_s, 0, 1e7, NULL,
         "stop after this many seconds (0: until the stop file or SIGUSR1)"},
        {"stop-file", NN_OPT_STRING, &run.stop_file, 0, 0, NULL, "stop cleanly once this file exists"},
        NN_CORUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_RANK_PAIRS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank, peer = b.peer;

    const int sends = strcmp(direction, "both") == 0 || rank % 2 == 0;
    const int receives = strcmp(direction, "both") == 0 || rank % 2 == 1;
    const int spin = strcmp(wait_mode, "spin") == 0;
    const double target_bps = load * link_mbit * 1e6;
    const double mean_gap_ns = target_bps > 0 ? (double)size * 8 / target_bps * 1e9 : 0;
    const int count = (int)size;

    char *sendbuf = calloc(size, 1), *recvbuf = malloc(size);
    /* The window's sends, then the data receive: one array to wait on when the
     * window is full, so an arriving message is taken in meanwhile. */
    MPI_Request *sreq = malloc((size_t)(window + 1) * sizeof *sreq);
    if (!sendbuf || !recvbuf || !sreq)
        nn_fail_all(MPI_COMM_WORLD, "loadgen: out of memory");
    for (long i = 0; i <= window; i++)
        sreq[i] = MPI_REQUEST_NULL;
    MPI_Request *rreq = &sreq[window];

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "load link-mbit size direction window wait");
    nn_meta(&out, "mean_gap_ns", "%.0f", mean_gap_ns);
    nn_meta(&out, "generator", "xoshiro256** exponential gaps");

    nn_rng rng;
    nn_rng_seed(&rng, (uint64_t)run.seed, (uint64_t)rank + 1);
    MPI_Request stop_req = MPI_REQUEST_NULL;
    if (receives)
        MPI_CHECK(MPI_Irecv(recvbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, rreq));
    /* The peer tells us when it stops sending, so no message is left unmatched. */
    MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, peer, TAG_STOP, MPI_COMM_WORLD, &stop_req));
    nn_timed_begin(&run, MPI_COMM_WORLD);

    long long messages = 0, received = 0;
    const double t_start = nn_now();
    long long last = nn_now_ns(), bucket = 0;
    double gap = sends && mean_gap_ns > 0 ? nn_rng_exponential(&rng, mean_gap_ns) : 0;
    for (;;) {
        if (nn_local_stop(&run) || (run.duration_s > 0 && nn_now() - t_start >= run.duration_s))
            break;
        if (receives)
            received += receive_arrived(rreq, recvbuf, count, peer);
        if (sends)
            reap_sends(sreq, (int)window);
        long long now = nn_now_ns();
        bucket += now - last;
        last = now;
        if (sends && mean_gap_ns > 0 && bucket >= gap) {
            int slot = 0, free_slot = 0;
            while (slot < window && sreq[slot] != MPI_REQUEST_NULL)
                slot++;
            if (slot < window)
                free_slot = 1;
            else
                MPI_CHECK(MPI_Testany((int)window, sreq, &slot, &free_slot, MPI_STATUS_IGNORE));
            if (free_slot) {
                MPI_CHECK(MPI_Isend(sendbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                                    &sreq[slot]));
                messages++;
                bucket -= (long long)gap;
                gap = nn_rng_exponential(&rng, mean_gap_ns);
            } else if (!spin) {
                /* The window is full: the link, not the schedule, sets the pace. Wait
                 * (sleeping, nn_wait.h) for a send to finish or a message to arrive. */
                int done = 0;
                MPI_CHECK(MPI_Waitany((int)window + receives, sreq, &done, MPI_STATUS_IGNORE));
                if (done == window) {
                    received++;
                    MPI_CHECK(MPI_Irecv(recvbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                                        rreq));
                }
            }
        } else if (!spin) {
            long long ahead = sends && mean_gap_ns > 0 ? (long long)gap - bucket : MAX_PAUSE_NS;
            nn_sleep_ns(ahead < MAX_PAUSE_NS ? ahead : MAX_PAUSE_NS);
        }
    }
    const double elapsed = nn_now() - t_start;

    /* Drain: finish our sends, announce the stop, receive until the peer's stop. Our
     * receives go on while our sends finish: a send larger than the eager limit completes
     * only once the peer has posted its receive, so with both directions a blocking wait
     * here would wait for a peer that waits for us (it hung whenever the window was full). */
    int sent_all = 0;
    while (!sent_all) {
        MPI_CHECK(MPI_Testall((int)window, sreq, &sent_all, MPI_STATUSES_IGNORE));
        if (receives)
            received += receive_arrived(rreq, recvbuf, count, peer);
        if (!sent_all && !spin)
            nn_sleep_ns(DRAIN_PAUSE_NS);
    }
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_STOP, MPI_COMM_WORLD));
    int peer_stopped = 0;
    while (!peer_stopped) {
        MPI_CHECK(MPI_Test(&stop_req, &peer_stopped, MPI_STATUS_IGNORE));
        if (receives)
            received += receive_arrived(rreq, recvbuf, count, peer);
        if (!peer_stopped && !spin)
            nn_sleep_ns(DRAIN_PAUSE_NS);
    }
    /* MPI keeps order between a pair: every data message precedes the stop. */
    if (receives) {
        int got = 0;
        MPI_CHECK(MPI_Test(rreq, &got, MPI_STATUS_IGNORE));
        if (got)
            received++;
        else {
            MPI_CHECK(MPI_Cancel(rreq));
            MPI_CHECK(MPI_Wait(rreq, MPI_STATUS_IGNORE));
        }
    }

    nn_timed_end(&run, MPI_COMM_WORLD);
    const double bytes = (double)messages * (double)size;
    const double mine[8] = {rank, peer, (double)messages, bytes, (double)received * (double)size,
                            elapsed, target_bps / 1e6 * sends,
                            elapsed > 0 ? bytes * 8 / elapsed / 1e6 : 0};
    nn_write_rank_rows(&out, MPI_COMM_WORLD, mine, 8,
                       "rank,peer,messages_count,sent_bytes,received_bytes,elapsed_s,target_mbps,"
                       "achieved_mbps",
                       "%.0f,%.0f,%.0f,%.0f,%.0f,%.6f,%.3f,%.3f");
    free(sendbuf);
    free(recvbuf);
    free(sreq);
    return nn_bench_end(&out);
}
