/*
 * characterise: canaries measured alone and beside congestors, after the
 * Global Performance and Congestion Network Tests (GPCNeT; Chunduri et al.,
 * SC'19).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"
#include "nn_rng.h"

static const nn_tool_info info = {
    "characterise",
    "GPCNeT-style congestion characterisation: latency, bandwidth and allreduce canaries "
    "measured in isolation and beside all-to-all, incast, put-incast and get-broadcast "
    "congestors.",
    "The ranks are split at node granularity (nodes: distinct MPI_Get_processor_name; when "
    "every rank reports the same name, as in a local run, each rank counts as a node and "
    "#@split reads rank instead of node): after a seeded shuffle of the node list the first "
    "floor((1 - --canary-fraction) x nodes) nodes congest, the rest run the canaries, all "
    "ranks of a node alike (GPCNeT: 80 % congestors); --canaries-first gives the canaries "
    "the first nodes instead and shuffles only the congestors (nodes that share a switch, "
    "away from the congestors' links: a control of what the congestors do but through the "
    "network). With --congestor all the congestor "
    "nodes are dealt in shuffled order to four groups, a2a, incast, put_incast and "
    "get_bcast in turn (sizes differ by one at most), each running its pattern on its own "
    "communicator; with one type every congestor node runs it; with none they stay idle "
    "(the control). At least 2 canary nodes are needed, and 2 congestor nodes per group "
    "(10 nodes in all with all at the default share, as GPCNeT), 1 with none. "
    "Canaries, on the communicator of the canary ranks: latency, random rings of "
    "--latency-size byte messages (each rank posts receives from both ring neighbours and "
    "sends to both, then waits for all four; the value is half the time, as GPCNeT counts "
    "two sends, in us); bandwidth, random rings with sync (GPCNeT's RR Two-sided BW+Sync: "
    "--bandwidth-outstanding messages of --bandwidth-size bytes to and from each "
    "neighbour, wait for all, then a barrier of the canaries; the value is the MiB/s this "
    "rank received, over the time including the barrier); allreduce, MPI_Allreduce of "
    "--allreduce-size bytes (doubles, sum; the value is the us of one call). A ring is a "
    "permutation of the canary ranks every rank draws alike from --seed, the round and the "
    "ring, the same in both phases of a round. Each round runs --rings rings of "
    "--latency-iterations and of --bandwidth-iterations timed iterations and "
    "--allreduce-iterations timed allreduces, each timed block after --warmup untimed "
    "iterations (after each ring's set-up and a barrier of the canaries). Congestors, "
    "each step one --congestor-size byte message of the rank: a2a, GPCNeT's pairwise "
    "all-to-all over the group (size - 1 steps, each an exchange with one partner: "
    "exclusive-or partners for a power-of-two group, shifts otherwise); incast, every group "
    "rank but 0 sends to group rank 0, which receives from all and answers each sender an "
    "empty message once the step's receives are posted (a sender's step waits for it, so "
    "no sender runs ahead of rank 0's receives by more than a step); put_incast, a put "
    "into group rank 0's window at the sender's offset then MPI_Win_flush, with a get of 8 bytes nobody writes "
    "beside it (in SMPI a put's request completes at once: the get makes each step wait a "
    "round trip, and see the end of the phase); get_bcast, a get of a message from group "
    "rank 0's window (request-based MPI_Rput and MPI_Rget; passive target: shared locks on "
    "rank 0 held through each congested phase; windows made once; rank 0 of the one-sided "
    "groups stays idle). Open MPI over TCP needs OMPI_MCA_osc=^rdma for the windows. Each "
    "of --rounds rounds has two phases, each started by a barrier of all ranks: isolated "
    "(the congestors wait) then congested. A phase ends once every canary is done (a "
    "barrier of the canaries) and the first canary has sent every congestor an empty "
    "message, the release. In the congested phase every congestor posts the receive of its "
    "release and runs step after step, each step's requests waited for together with it, "
    "the release first (MPI_Waitany: no rank polls with MPI_Test, which SMPI charges "
    "simulated time that grows with every failed test), and tells the first canary once "
    "its first step is done (rank 0 of a one-sided group: at once); the canaries begin "
    "only when every congestor has, so that no timed block precedes the congestion. "
    "Released, a two-sided group agrees on the most steps any of its ranks posted and every "
    "rank completes that many, so every message meets its receive. The canaries run their "
    "warm-ups and timed blocks meanwhile; no congestor waits on a canary but for its release. "
    "(GPCNeT ends the phase by an MPI_Ibarrier of all ranks, which SMPI 3.32 completes at "
    "once on every rank but 0.) --max-seconds bounds the run: checked by all ranks together "
    "before every round after the first, so a run outlasts it by one round at most; "
    "SIGUSR1 or SIGTERM stops it at the next round boundary alike. #@rounds_done counts "
    "the rounds run. Rows: phase (isolated, congested), test, round, ring, rank (world "
    "rank), iteration, value_units: the value in its test's unit (#@units): latency and "
    "allreduce us per exchange or call, one row per timed iteration of every canary rank "
    "(ring 0 for allreduce); bandwidth MiB/s received per iteration; offered_<pattern> "
    "(congested phase only, one row per congestor rank and round, ring the group index, "
    "iteration 0), the MiB/s of messages the rank's steps moved (sent, put or fetched) over "
    "the phase, 0 for rank 0 of incast, put_incast and get_bcast. The preamble names the "
    "split (#@split, #@nodes, #@canary_ranks, #@groups: world ranks per group).",
};

enum pattern { A2A, INCAST, PUT_INCAST, GET_BCAST, PATTERNS };
static const char *const pattern_names[PATTERNS] = {"a2a", "incast", "put_incast", "get_bcast"};

/* The test column: the canaries' three, then one per congestor pattern. */
enum test { LATENCY, BANDWIDTH, ALLREDUCE, OFFERED };
static const char *const test_names[OFFERED + PATTERNS] = {
    "latency", "bandwidth", "allreduce", "offered_a2a", "offered_incast", "offered_put_incast",
    "offered_get_bcast"};
static const char *const phase_names[2] = {"isolated", "congested"};
enum { ISOLATED, CONGESTED };

/* A row: phase, test, round, ring, rank, iteration, value. */
enum { COLS = 7 };
#define COLUMNS "phase,test,round,ring,rank,iteration,value_units"

enum { TAG_FROM_LEFT = 1, TAG_FROM_RIGHT = 2, TAG_DONE = 3, TAG_ANSWER = 4, TAG_STARTED = 5 };

typedef struct {
    size_t latency_size, bandwidth_size, allreduce_size, congestor_size;
    long rings, latency_iterations, bandwidth_iterations, bandwidth_outstanding,
        allreduce_iterations;
    long warmup;
    uint64_t seed;
} settings;

/* A canary rank: its communicator and buffers. */
typedef struct {
    MPI_Comm comm;
    int rank, size, world_rank;
    char *lat_send, *lat_recv; /* 1 and 2 messages */
    char *bw_send, *bw_recv;   /* 1 and 2 x outstanding messages */
    MPI_Request *req;          /* 4 x outstanding */
    double *ar_in, *ar_out;
    int ncongestors;           /* the ranks the first canary releases */
    int *congestors;           /* their world ranks */
    MPI_Request *release;      /* their releases, or their first steps' signals */
    int congestors_run;        /* whether they run in the congested phase (not none) */
} canary;

/* A congestor rank: its group, pattern (-1: idle) and buffers. */
typedef struct {
    MPI_Comm comm;
    int rank, size, world_rank, group;
    int first_canary;   /* world rank of the canary that releases it */
    int pattern;
    char *send, *recv;  /* a message; incast's rank 0 receives one per rank */
    char *window_base;  /* group rank 0's window (put_incast, get_bcast) */
    MPI_Win win;
    MPI_Request *req;   /* the release, then a step's (incast's rank 0: one per rank) */
    MPI_Request started; /* the signal to the first canary that the steps are under way */
    double bytes_per_step; /* what one step of this rank moves */
} congestor;

/* ------------------------------------------------------------------ the split */

/* Congestor units of n at canary share f: floor((1 - f) n), with a margin
 * against rounding ((1 - 0.2) x 10 must give 8). */
static long congestor_units(long n, double f)
{
    return (long)floor((1.0 - f) * (double)n + 1e-9);
}

/* The least unit count whose split has 2 canary and need congestor units, or
 * -1 if there is none up to a limit. */
static long units_needed(double f, long need)
{
    for (long n = 2; n <= 100000000L; n++) {
        long c = congestor_units(n, f);
        if (n - c >= 2 && c >= need)
            return n;
    }
    return -1;
}

/* Appends to a growing string (on failure leaves it as it is). */
static void append(char **s, size_t *len, size_t *cap, const char *text)
{
    size_t add = strlen(text);
    if (*len + add + 1 > *cap) {
        size_t cap2 = (*cap ? *cap * 2 : 256) + add;
        char *grown = realloc(*s, cap2);
        if (grown == NULL)
            return;
        *s = grown;
        *cap = cap2;
    }
    memcpy(*s + *len, text, add + 1);
    *len += add;
}

/* ------------------------------------------------------------------ canaries */

/* This rank's ring neighbours (ranks of the canary communicator) in ring
 * `ring` of round `round`: a permutation every rank draws alike. */
static void ring_neighbours(const settings *s, const canary *c, long round, long ring, int *perm,
                            int *left, int *right)
{
    nn_rng rng;
    nn_rng_seed(&rng, s->seed, ((uint64_t)(round + 1) << 24) ^ (uint64_t)(ring + 1));
    for (int i = 0; i < c->size; i++)
        perm[i] = i;
    nn_rng_shuffle(&rng, perm, c->size);
    int pos = 0;
    while (perm[pos] != c->rank)
        pos++;
    *left = perm[(pos - 1 + c->size) % c->size];
    *right = perm[(pos + 1) % c->size];
}

/* One latency exchange: a message from and to each neighbour. */
static void latency_exchange(const settings *s, canary *c, int left, int right)
{
    const int n = (int)s->latency_size;
    MPI_CHECK(MPI_Irecv(c->lat_recv, n, MPI_BYTE, left, TAG_FROM_LEFT, c->comm, &c->req[0]));
    MPI_CHECK(MPI_Irecv(c->lat_recv + n, n, MPI_BYTE, right, TAG_FROM_RIGHT, c->comm, &c->req[1]));
    MPI_CHECK(MPI_Isend(c->lat_send, n, MPI_BYTE, left, TAG_FROM_RIGHT, c->comm, &c->req[2]));
    MPI_CHECK(MPI_Isend(c->lat_send, n, MPI_BYTE, right, TAG_FROM_LEFT, c->comm, &c->req[3]));
    MPI_CHECK(MPI_Waitall(4, c->req, MPI_STATUSES_IGNORE));
}

/* One bandwidth iteration: outstanding messages from and to each neighbour,
 * then a barrier of the canaries. */
static void bandwidth_exchange(const settings *s, canary *c, int left, int right)
{
    const int n = (int)s->bandwidth_size, k = (int)s->bandwidth_outstanding;
    for (int j = 0; j < k; j++) {
        MPI_CHECK(MPI_Irecv(c->bw_recv + (size_t)j * (size_t)n, n, MPI_BYTE, left, TAG_FROM_LEFT,
                            c->comm, &c->req[j]));
        MPI_CHECK(MPI_Irecv(c->bw_recv + (size_t)(k + j) * (size_t)n, n, MPI_BYTE, right,
                            TAG_FROM_RIGHT, c->comm, &c->req[k + j]));
    }
    for (int j = 0; j < k; j++) {
        MPI_CHECK(MPI_Isend(c->bw_send, n, MPI_BYTE, left, TAG_FROM_RIGHT, c->comm,
                            &c->req[2 * k + j]));
        MPI_CHECK(MPI_Isend(c->bw_send, n, MPI_BYTE, right, TAG_FROM_LEFT, c->comm,
                            &c->req[3 * k + j]));
    }
    MPI_CHECK(MPI_Waitall(4 * k, c->req, MPI_STATUSES_IGNORE));
    MPI_CHECK(MPI_Barrier(c->comm));
}

static void add_row(nn_table *rows, int phase, int test, long round, long ring, int rank,
                    long iteration, double value)
{
    const double row[COLS] = {phase, test, (double)round, (double)ring, rank, (double)iteration,
                              value};
    nn_table_add(rows, row);
}

/* The canaries' three tests of one phase, every timed iteration a row. */
static void canary_phase(const settings *s, canary *c, int *perm, int phase, long round,
                         nn_table *rows)
{
    const double bw_bytes = 2.0 * (double)s->bandwidth_outstanding * (double)s->bandwidth_size;
    int left, right;
    for (long ring = 0; ring < s->rings; ring++) {
        ring_neighbours(s, c, round, ring, perm, &left, &right);
        MPI_CHECK(MPI_Barrier(c->comm));
        nn_probe_begin();
        for (long i = 0; i < s->warmup; i++)
            latency_exchange(s, c, left, right);
        for (long i = 0; i < s->latency_iterations; i++) {
            const double t0 = nn_now();
            latency_exchange(s, c, left, right);
            const double t = nn_now() - t0;
            add_row(rows, phase, LATENCY, round, ring, c->world_rank, i, t * 1e6 / 2);
        }
        nn_probe_end();
    }
    for (long ring = 0; ring < s->rings; ring++) {
        ring_neighbours(s, c, round, ring, perm, &left, &right);
        MPI_CHECK(MPI_Barrier(c->comm));
        for (long i = 0; i < s->warmup; i++)
            bandwidth_exchange(s, c, left, right);
        for (long i = 0; i < s->bandwidth_iterations; i++) {
            const double t0 = nn_now();
            bandwidth_exchange(s, c, left, right);
            const double t = nn_now() - t0;
            add_row(rows, phase, BANDWIDTH, round, ring, c->world_rank, i,
                    bw_bytes / (t * 1048576.0));
        }
    }
    const int count = (int)(s->allreduce_size / 8);
    nn_probe_begin();
    for (long i = 0; i < s->warmup; i++)
        MPI_CHECK(MPI_Allreduce(c->ar_in, c->ar_out, count, MPI_DOUBLE, MPI_SUM, c->comm));
    for (long i = 0; i < s->allreduce_iterations; i++) {
        const double t0 = nn_now();
        MPI_CHECK(MPI_Allreduce(c->ar_in, c->ar_out, count, MPI_DOUBLE, MPI_SUM, c->comm));
        const double t = nn_now() - t0;
        add_row(rows, phase, ALLREDUCE, round, 0, c->world_rank, i, t * 1e6);
    }
    nn_probe_end();
}

/* ------------------------------------------------------------------ congestors */

/* The requests of step `step` of the group's pattern on this rank, in req;
 * returns their count. A step is one message of the rank: a2a, the exchange
 * with the step's partner of GPCNeT's pairwise all-to-all (steps 1 to size - 1
 * of it in turn, so size - 1 steps make one all-to-all; exclusive-or partners
 * for a power-of-two group, shifts otherwise); incast, a message to rank 0,
 * which receives one from every rank and answers each with an empty message
 * once its receives are posted; put_incast, a put into rank 0's
 * window at the rank's offset, with a get of the 8 bytes at offset 0, which no
 * rank writes: a request that completes only once a round trip has passed (in
 * SMPI a put's request completes at once, so a step of puts alone would never
 * wait, nor see the release); get_bcast, a get from rank 0's window. Rank 0 of
 * the one-sided patterns has none. */
static int post_step(const settings *s, congestor *g, long long step, MPI_Request *req)
{
    const int n = (int)s->congestor_size;
    switch (g->pattern) {
    case A2A: {
        int pof2 = 1;
        while (pof2 < g->size)
            pof2 *= 2;
        const int i = 1 + (int)(step % (g->size - 1));
        const int dst = pof2 == g->size ? g->rank ^ i : (g->rank + i) % g->size;
        const int src = pof2 == g->size ? g->rank ^ i : (g->rank - i + g->size) % g->size;
        MPI_CHECK(MPI_Irecv(g->recv, n, MPI_BYTE, src, 0, g->comm, &req[0]));
        MPI_CHECK(MPI_Isend(g->send, n, MPI_BYTE, dst, 0, g->comm, &req[1]));
        return 2;
    }
    case INCAST:
        /* An eager send completes before rank 0 has its receive, so without
         * rank 0's answer the senders would run ahead of it without bound.
         * The answer is what a synchronous send's completion means, made
         * explicit: Open MPI's TCP transport with more than one connection per
         * peer (btl_tcp_links > 1) never completes an MPI_Issend. */
        if (g->rank != 0) {
            MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, 0, TAG_ANSWER, g->comm, &req[0]));
            MPI_CHECK(MPI_Isend(g->send, n, MPI_BYTE, 0, 0, g->comm, &req[1]));
            return 2;
        }
        for (int r = 1; r < g->size; r++)
            MPI_CHECK(MPI_Irecv(g->recv + (size_t)r * (size_t)n, n, MPI_BYTE, r, 0, g->comm,
                                &req[r - 1]));
        for (int r = 1; r < g->size; r++)
            MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, r, TAG_ANSWER, g->comm, &req[g->size + r - 2]));
        return 2 * (g->size - 1);
    case PUT_INCAST:
        if (g->rank == 0)
            return 0;
        MPI_CHECK(MPI_Rput(g->send, n, MPI_BYTE, 0, (MPI_Aint)g->rank * (MPI_Aint)n, n, MPI_BYTE,
                           g->win, &req[0]));
        MPI_CHECK(MPI_Rget(g->recv, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, g->win, &req[1]));
        return 2;
    case GET_BCAST:
        if (g->rank == 0)
            return 0;
        MPI_CHECK(MPI_Rget(g->recv, n, MPI_BYTE, 0, 0, n, MPI_BYTE, g->win, &req[0]));
        return 1;
    }
    return 0;
}

/* The end of a step, once its requests are complete: a put is flushed (GPCNeT's
 * MPI_Win_flush: the data is in the target's window); a get's request completes
 * with its data. */
static void end_step(congestor *g)
{
    if (g->pattern == PUT_INCAST && g->rank != 0)
        MPI_CHECK(MPI_Win_flush(0, g->win));
}

/* Waits until a step's nreq requests, g->req[1..nreq], are complete or the
 * release, g->req[0], is; returns whether the release is. The release comes
 * first, so that a wait returns it whenever it has come. No wait polls with
 * MPI_Test: SMPI makes every MPI_Test take simulated time (smpi/test, 100 us,
 * growing with every one that fails), which would slow the congestors more
 * than the network. */
static int wait_step_or_done(congestor *g, int nreq)
{
    for (;;) {
        int index;
        MPI_CHECK(MPI_Waitany(nreq + 1, g->req, &index, MPI_STATUS_IGNORE));
        if (index == 0)
            return 1;
        int pending = 0;
        for (int i = 1; i <= nreq; i++)
            pending |= g->req[i] != MPI_REQUEST_NULL;
        if (!pending)
            return 0;
    }
}

/* The start of a congested phase: the canaries begin once every congestor has
 * completed its first step (rank 0 of a one-sided group, which has none, once it
 * is there), so that no timed block runs before the congestion is on. Without
 * it the first block, the latency rings of a few milliseconds, can be over
 * before congestors that wait their turn for a core, or a TCP connection that
 * restarts its slow start after a phase idle, have loaded the network. */
static void await_congestion(canary *c)
{
    if (c->rank == 0) {
        for (int i = 0; i < c->ncongestors; i++)
            MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, c->congestors[i], TAG_STARTED, MPI_COMM_WORLD,
                                &c->release[i]));
        MPI_CHECK(MPI_Waitall(c->ncongestors, c->release, MPI_STATUSES_IGNORE));
    }
    MPI_CHECK(MPI_Barrier(c->comm));
}

static void signal_started(congestor *g)
{
    MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, g->first_canary, TAG_STARTED, MPI_COMM_WORLD,
                        &g->started));
}

/* The end of a phase is the first canary's empty message to every congestor,
 * sent once every canary is done. (GPCNeT's MPI_Ibarrier of all ranks would do
 * as well in Open MPI, but SMPI 3.32 completes it at once on all ranks but 0.) */
static void release_congestors(canary *c)
{
    MPI_CHECK(MPI_Barrier(c->comm));
    if (c->rank != 0)
        return;
    for (int i = 0; i < c->ncongestors; i++)
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, c->congestors[i], TAG_DONE, MPI_COMM_WORLD,
                            &c->release[i]));
    MPI_CHECK(MPI_Waitall(c->ncongestors, c->release, MPI_STATUSES_IGNORE));
}

/* The congested phase of a congestor: steps one after another until the
 * canaries' release, each waited for together with it. Released, a two-sided
 * group agrees on the most steps any rank has posted and every rank completes
 * that many, so every message meets its receive; a one-sided step completes
 * by itself. Returns the MiB/s this rank moved over the phase. */
static double congest(const settings *s, congestor *g)
{
    MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, g->first_canary, TAG_DONE, MPI_COMM_WORLD, &g->req[0]));
    const int rma = g->pattern == PUT_INCAST || g->pattern == GET_BCAST;
    g->started = MPI_REQUEST_NULL;
    if (rma && g->rank != 0)
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, g->win));
    const double t0 = nn_now();
    long long posted = 0;
    int nreq = 0;
    if (rma && g->rank == 0) {
        signal_started(g);
        MPI_CHECK(MPI_Wait(&g->req[0], MPI_STATUS_IGNORE));
    } else {
        /* The release comes only after the signal of the first step: the
         * canaries wait for it before they begin. */
        for (;;) {
            nreq = post_step(s, g, posted++, g->req + 1);
            if (wait_step_or_done(g, nreq))
                break;
            end_step(g);
            if (posted == 1)
                signal_started(g);
        }
    }
    MPI_CHECK(MPI_Wait(&g->started, MPI_STATUS_IGNORE));
    long long steps = posted;
    if (!rma)
        MPI_CHECK(MPI_Allreduce(&posted, &steps, 1, MPI_LONG_LONG, MPI_MAX, g->comm));
    if (posted > 0) {
        MPI_CHECK(MPI_Waitall(nreq, g->req + 1, MPI_STATUSES_IGNORE));
        end_step(g);
    }
    for (; posted < steps; posted++) {
        nreq = post_step(s, g, posted, g->req + 1);
        MPI_CHECK(MPI_Waitall(nreq, g->req + 1, MPI_STATUSES_IGNORE));
        end_step(g);
    }
    const double t = nn_now() - t0;
    if (rma && g->rank != 0)
        MPI_CHECK(MPI_Win_unlock(0, g->win));
    return t > 0 ? (double)steps * g->bytes_per_step / (t * 1048576.0) : 0.0;
}

/* Waits, idle, until the canaries are done. */
static void wait_for_canaries(const congestor *g)
{
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, g->first_canary, TAG_DONE, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
}

/* ------------------------------------------------------------------ output */

static int by_row(const void *a, const void *b)
{
    const double *x = *(const double *const *)a, *y = *(const double *const *)b;
    /* phase, test, ring, rank, iteration; the round is that of the gather. */
    static const int keys[] = {0, 1, 3, 4, 5};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (x[keys[k]] != y[keys[k]])
            return x[keys[k]] < y[keys[k]] ? -1 : 1;
    return 0;
}

/* Collective: one round's rows of every rank to rank 0, which adds them to
 * the spool in order. */
static void spool_round(nn_table *local, FILE *spool)
{
    nn_table all;
    nn_table_gather(local, MPI_COMM_WORLD, &all);
    local->rows = 0;
    if (spool != NULL) {
        const double **order = malloc((all.rows > 0 ? all.rows : 1) * sizeof *order);
        if (order == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "malloc", __FILE__, __LINE__);
        for (size_t i = 0; i < all.rows; i++)
            order[i] = NN_ROW(&all, i);
        qsort(order, all.rows, sizeof *order, by_row);
        for (size_t i = 0; i < all.rows; i++) {
            const double *r = order[i];
            fprintf(spool, "%s,%s,%.0f,%.0f,%.0f,%.0f,%.3f\n", phase_names[(int)r[0]],
                    test_names[(int)r[1]], r[2], r[3], r[4], r[5], r[6]);
        }
        free(order);
    }
    nn_table_free(&all);
}

/* Rank 0: the spooled rows into the result, under the header. */
static int write_spool(nn_writer *w, FILE *spool)
{
    nn_columns(w, COLUMNS);
    if (spool == NULL)
        return 0;
    if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, spool)) > 0) {
        if (line[len - 1] == '\n')
            line[len - 1] = '\0';
        nn_row(w, "%s", line);
    }
    const int bad = ferror(spool);
    free(line);
    fclose(spool);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(20, 0);
    const char *congestor_choice = "all";
    double canary_fraction = 0.2, max_seconds = 0;
    int canaries_first = 0;
    long rounds = 8;
    settings s = {.latency_size = 8,
                  .bandwidth_size = 128 << 10,
                  .allreduce_size = 8,
                  .congestor_size = 4 << 10,
                  .rings = 4,
                  .latency_iterations = 200,
                  .bandwidth_iterations = 8,
                  .bandwidth_outstanding = 8,
                  .allreduce_iterations = 200};
    const nn_option opts[] = {
        {"congestor", NN_OPT_CHOICE, &congestor_choice, 0, 0,
         "all|none|a2a|incast|put_incast|get_bcast",
         "what the congestor nodes run: all four patterns in four groups, none (idle: the "
         "control), or one pattern on every congestor node"},
        {"canary-fraction", NN_OPT_DOUBLE, &canary_fraction, 0, 1, NULL,
         "share of the nodes that run the canaries, strictly between 0 and 1; the other "
         "floor((1 - share) x nodes) congest"},
        {"canaries-first", NN_OPT_FLAG, &canaries_first, 0, 0, NULL,
         "the canaries on the first nodes (in order of their first rank), not shuffled"},
        {"rounds", NN_OPT_LONG, &rounds, 1, 1e6, NULL,
         "rounds, each an isolated then a congested phase"},
        {"rings", NN_OPT_LONG, &s.rings, 1, 1e6, NULL,
         "random rings per round and phase for latency and for bandwidth"},
        {"latency-size", NN_OPT_SIZE, &s.latency_size, 1, 1 << 30, NULL,
         "bytes of each latency message"},
        {"latency-iterations", NN_OPT_LONG, &s.latency_iterations, 1, 1e9, NULL,
         "timed latency exchanges per ring"},
        {"bandwidth-size", NN_OPT_SIZE, &s.bandwidth_size, 1, 1 << 30, NULL,
         "bytes of each bandwidth message"},
        {"bandwidth-outstanding", NN_OPT_LONG, &s.bandwidth_outstanding, 1, 1024, NULL,
         "bandwidth messages to and from each neighbour per iteration"},
        {"bandwidth-iterations", NN_OPT_LONG, &s.bandwidth_iterations, 1, 1e9, NULL,
         "timed bandwidth iterations per ring"},
        {"allreduce-size", NN_OPT_SIZE, &s.allreduce_size, 8, 1 << 30, NULL,
         "bytes of the allreduce (a multiple of 8: doubles)"},
        {"allreduce-iterations", NN_OPT_LONG, &s.allreduce_iterations, 1, 1e9, NULL,
         "timed allreduces per round and phase"},
        {"congestor-size", NN_OPT_SIZE, &s.congestor_size, 8, 1 << 30, NULL,
         "bytes of each congestor message"},
        {"max-seconds", NN_OPT_DOUBLE, &max_seconds, 0, 1e9, NULL,
         "start no round after this many seconds (checked between rounds; 0: no limit)"},
        NN_WARMUP_OPTION(&run),
        NN_CORUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_ANY_RANKS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank, nranks = b.nranks;
    s.warmup = run.warmup;
    s.seed = (uint64_t)run.seed;
    if (canary_fraction <= 0 || canary_fraction >= 1)
        nn_fail_all(MPI_COMM_WORLD,
                    "characterise: --canary-fraction %g: expected a number strictly between 0 "
                    "and 1",
                    canary_fraction);
    if (s.allreduce_size % 8 != 0)
        nn_fail_all(MPI_COMM_WORLD,
                    "characterise: --allreduce-size %zu is not a multiple of 8 (doubles)",
                    s.allreduce_size);
    const int all = strcmp(congestor_choice, "all") == 0;
    const int none = strcmp(congestor_choice, "none") == 0;
    int single = -1;
    for (int p = 0; p < PATTERNS; p++)
        if (strcmp(congestor_choice, pattern_names[p]) == 0)
            single = p;

    /* Nodes in order of their first rank; per rank when all ranks share one name. */
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int name_len = 0;
    MPI_CHECK(MPI_Get_processor_name(name, &name_len));
    char *names = calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME);
    int *node_of = malloc((size_t)nranks * sizeof *node_of);
    int *units = malloc((size_t)nranks * sizeof *units);
    int *role = malloc((size_t)nranks * sizeof *role); /* -1 canary, else group */
    int *perm = malloc((size_t)nranks * sizeof *perm);
    if (!names || !node_of || !units || !role || !perm)
        nn_fail_all(MPI_COMM_WORLD, "characterise: out of memory for %d ranks", nranks);
    MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                            MPI_CHAR, MPI_COMM_WORLD));
    int nodes = 0;
    for (int r = 0; r < nranks; r++) {
        const char *h = names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        node_of[r] = -1;
        for (int q = 0; q < r && node_of[r] < 0; q++)
            if (strcmp(h, names + (size_t)q * MPI_MAX_PROCESSOR_NAME) == 0)
                node_of[r] = node_of[q];
        if (node_of[r] < 0)
            node_of[r] = nodes++;
    }
    const int per_rank = nodes == 1;
    const int nunits = per_rank ? nranks : nodes;
    const char *unit = per_rank ? "ranks" : "nodes";
    if (per_rank)
        for (int r = 0; r < nranks; r++)
            node_of[r] = r;

    const long n_cong = congestor_units(nunits, canary_fraction);
    const long n_canary = nunits - n_cong;
    const long need_cong = all ? 2 * PATTERNS : none ? 1 : 2;
    if (n_canary < 2 || n_cong < need_cong) {
        const long needed = units_needed(canary_fraction, need_cong);
        char least[64];
        if (needed > 0)
            snprintf(least, sizeof least, "%ld", needed);
        else
            snprintf(least, sizeof least, "more than 100000000");
        nn_fail_all(MPI_COMM_WORLD,
                    "characterise: --congestor %s needs at least %s %s at --canary-fraction %g "
                    "(2 canary, %ld congestor%s), got %d (%ld canary, %ld congestor)",
                    congestor_choice, least, unit, canary_fraction, need_cong,
                    all ? ": 2 per congestor group" : "", nunits, n_canary, n_cong);
    }

    /* The seeded shuffle: the first n_cong units congest, dealt to the groups in
     * turn; the rest are canaries. With --canaries-first the last n_cong units
     * congest, shuffled among themselves, and the first units are canaries. */
    for (int u = 0; u < nunits; u++)
        units[u] = canaries_first ? (int)((u + n_canary) % nunits) : u;
    nn_rng rng;
    nn_rng_seed(&rng, s.seed, 0);
    nn_rng_shuffle(&rng, units, canaries_first ? (int)n_cong : nunits);
    int *group_of_unit = malloc((size_t)nunits * sizeof *group_of_unit);
    if (group_of_unit == NULL)
        nn_fail_all(MPI_COMM_WORLD, "characterise: out of memory for %d units", nunits);
    for (int k = 0; k < nunits; k++)
        group_of_unit[units[k]] = k < n_cong ? (all ? k % PATTERNS : 0) : -1;
    for (int r = 0; r < nranks; r++)
        role[r] = group_of_unit[node_of[r]];
    const int ngroups = all ? PATTERNS : 1;
    const int my_role = role[rank];

    MPI_Comm sub;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, my_role + 1, rank, &sub));
    int sub_rank, sub_size;
    MPI_CHECK(MPI_Comm_rank(sub, &sub_rank));
    MPI_CHECK(MPI_Comm_size(sub, &sub_size));

    /* Buffers and windows; an allocation failure anywhere fails every rank. */
    canary c = {0};
    congestor g = {0};
    g.win = MPI_WIN_NULL;
    int oom = 0;
    const size_t cs = s.congestor_size;
    int first_canary = 0;
    while (role[first_canary] >= 0)
        first_canary++;
    if (my_role < 0) {
        c = (canary){.comm = sub, .rank = sub_rank, .size = sub_size, .world_rank = rank,
                     .congestors_run = !none};
        const size_t k = (size_t)s.bandwidth_outstanding;
        c.lat_send = calloc(s.latency_size, 1);
        c.lat_recv = malloc(2 * s.latency_size);
        c.bw_send = calloc(s.bandwidth_size, 1);
        c.bw_recv = malloc(2 * k * s.bandwidth_size);
        c.req = malloc(4 * k * sizeof *c.req);
        c.ar_in = calloc(s.allreduce_size / 8, sizeof(double));
        c.ar_out = malloc(s.allreduce_size);
        c.congestors = malloc((size_t)nranks * sizeof *c.congestors);
        c.release = malloc((size_t)nranks * sizeof *c.release);
        oom = !c.lat_send || !c.lat_recv || !c.bw_send || !c.bw_recv || !c.req || !c.ar_in ||
              !c.ar_out || !c.congestors || !c.release;
        for (int r = 0; r < nranks && !oom; r++)
            if (role[r] >= 0)
                c.congestors[c.ncongestors++] = r;
    } else {
        g = (congestor){.comm = sub, .rank = sub_rank, .size = sub_size, .world_rank = rank,
                        .group = my_role, .first_canary = first_canary,
                        .pattern = none ? -1 : all ? my_role : single, .win = MPI_WIN_NULL};
        g.send = calloc(cs, 1);
        g.recv = malloc(g.pattern == INCAST && g.rank == 0 ? (size_t)g.size * cs : cs);
        /* a step's (incast's rank 0: a receive and an answer per rank) and the release */
        g.req = malloc((2 * (size_t)g.size + 1) * sizeof *g.req);
        if (g.pattern == PUT_INCAST || g.pattern == GET_BCAST) {
            const size_t bytes = g.rank != 0                ? 0
                                 : g.pattern == PUT_INCAST ? (size_t)g.size * cs
                                                           : cs;
            g.window_base = calloc(bytes > 0 ? bytes : 1, 1);
            oom |= g.window_base == NULL;
        }
        oom |= !g.send || !g.recv || !g.req;
        /* Every step moves one message, but incast's, put_incast's and get_bcast's
         * rank 0 sends none. */
        g.bytes_per_step = g.pattern < 0 || (g.pattern != A2A && g.rank == 0) ? 0 : (double)cs;
    }
    int any_oom = 0;
    MPI_CHECK(MPI_Allreduce(&oom, &any_oom, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (any_oom)
        nn_fail_all(MPI_COMM_WORLD, "characterise: out of memory for the message buffers");
    int win_rc = MPI_SUCCESS;
    if (g.pattern == PUT_INCAST || g.pattern == GET_BCAST) {
        const MPI_Aint bytes = g.rank != 0 ? 0
                               : g.pattern == PUT_INCAST ? (MPI_Aint)g.size * (MPI_Aint)cs
                                                         : (MPI_Aint)cs;
        win_rc = MPI_Win_create(g.window_base, bytes, 1, MPI_INFO_NULL, g.comm, &g.win);
    }
    /* Every rank learns whether a window failed, so that all exit together. */
    int win_failed = win_rc != MPI_SUCCESS, any_win_failed = 0;
    MPI_CHECK(MPI_Allreduce(&win_failed, &any_win_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (any_win_failed)
        nn_fail_all(MPI_COMM_WORLD,
                    "characterise: MPI_Win_create failed for the one-sided congestors "
                    "(put_incast, get_bcast); Open MPI over TCP needs OMPI_MCA_osc=^rdma");

    /* Rank 0 keeps the rows on a spool until the round count is known. */
    FILE *spool = NULL;
    int spool_ok = 1;
    if (rank == 0) {
        spool = tmpfile();
        spool_ok = spool != NULL;
    }
    MPI_CHECK(MPI_Bcast(&spool_ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (!spool_ok)
        nn_fail_all(MPI_COMM_WORLD, "characterise: cannot create a temporary file for the rows");

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD,
                    "congestor canary-fraction rounds rings latency-size latency-iterations "
                    "bandwidth-size bandwidth-outstanding bandwidth-iterations allreduce-size "
                    "allreduce-iterations congestor-size warmup max-seconds");
    nn_meta(&out, "split", "%s", per_rank ? "rank" : "node");
    nn_meta(&out, "nodes", "%d", nodes);
    if (rank == 0) {
        char *text = NULL, item[32];
        size_t len = 0, cap = 0;
        append(&text, &len, &cap, "");
        for (int r = 0; r < nranks; r++)
            if (role[r] < 0) {
                snprintf(item, sizeof item, len ? " %d" : "%d", r);
                append(&text, &len, &cap, item);
            }
        nn_meta(&out, "canary_ranks", "%s", text ? text : "");
        len = 0;
        append(&text, &len, &cap, "");
        for (int gi = 0; gi < ngroups; gi++) {
            const char *label = none ? "none" : all ? pattern_names[gi] : pattern_names[single];
            snprintf(item, sizeof item, "%s%s:", gi ? " " : "", label);
            append(&text, &len, &cap, item);
            int first = 1;
            for (int r = 0; r < nranks; r++)
                if (role[r] == gi) {
                    snprintf(item, sizeof item, first ? "%d" : ",%d", r);
                    append(&text, &len, &cap, item);
                    first = 0;
                }
        }
        nn_meta(&out, "groups", "%s", text ? text : "");
        free(text);
    }
    nn_meta(&out, "units", "latency:us bandwidth:MiB/s allreduce:us offered:MiB/s");
    nn_meta(&out, "phases", "isolated congested");

    nn_table rows;
    nn_table_init(&rows, COLS);
    nn_timed_begin(&run, MPI_COMM_WORLD);
    const double t_begin = nn_now();
    long done = 0;
    for (long round = 0; round < rounds; round++) {
        int stop = nn_local_stop(&run) ||
                   (round > 0 && max_seconds > 0 && nn_now() - t_begin >= max_seconds);
        int any_stop = 0;
        MPI_CHECK(MPI_Allreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        if (any_stop)
            break;
        for (int phase = ISOLATED; phase <= CONGESTED; phase++) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            if (my_role < 0) {
                if (phase == CONGESTED && c.congestors_run)
                    await_congestion(&c);
                canary_phase(&s, &c, perm, phase, round, &rows);
                release_congestors(&c);
            } else if (phase == CONGESTED && g.pattern >= 0) {
                const double mibps = congest(&s, &g);
                add_row(&rows, phase, OFFERED + g.pattern, round, g.group, rank, 0, mibps);
            } else {
                wait_for_canaries(&g);
            }
        }
        spool_round(&rows, spool);
        done = round + 1;
    }
    nn_timed_end(&run, MPI_COMM_WORLD);
    nn_meta(&out, "rounds_done", "%ld", done);
    int write_failed = rank == 0 && write_spool(&out, spool) != 0;

    if (g.win != MPI_WIN_NULL)
        MPI_CHECK(MPI_Win_free(&g.win));
    MPI_CHECK(MPI_Comm_free(&sub));
    nn_table_free(&rows);
    free(c.lat_send);
    free(c.lat_recv);
    free(c.bw_send);
    free(c.bw_recv);
    free(c.req);
    free(c.ar_in);
    free(c.ar_out);
    free(c.congestors);
    free(c.release);
    free(g.send);
    free(g.recv);
    free(g.req);
    free(g.window_base);
    free(group_of_unit);
    free(names);
    free(node_of);
    free(units);
    free(role);
    free(perm);
    if (write_failed) {
        fprintf(stderr, "characterise: cannot read back the rows' temporary file\n");
        nn_writer_close(&out, 0);
        MPI_Finalize();
        return 1;
    }
    return nn_bench_end(&out);
}
