/*
 * noise: a collective in one part of an allocation while the rest floods the
 * network with large messages (seed 001, Sec. 2, Fig. 2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_mpi.h"
#include "nn_rng.h"

static const nn_tool_info info = {
    "noise",
    "Network-noise benchmark: collective time with and without perturbation traffic from a "
    "disjoint, randomly chosen set of processes.",
    "For each of --splits random splits (re-drawn every split, seeded), MPI_COMM_WORLD is cut "
    "into an application communicator and a perturbation communicator holding round(ratio x "
    "ranks) processes; with --application-ranks A the application communicator holds A "
    "processes, the perturbation communicator round(ratio x A / (1 - ratio)) and the other "
    "ranks idle, so that every ratio times the same collective. Every split's communicators "
    "are made before the timed region, whose cores they would keep busy. Both are warmed up "
    "(--warmup collectives and one 1-byte exchange). Then "
    "the split has two phases. Perturbed: the perturbation processes exchange --perturb-size "
    "messages (default 10 MiB, as the paper) along a random permutation (a ring over their "
    "random order), each keeping two exchanges posted so that its flow never idles; once each "
    "has completed its first exchange (its flow past slow start), the application processes "
    "time --reps executions of --collective on --size bytes (doubles, default one), and the "
    "perturbation stops after the last one (the perturbing processes then agree how many "
    "messages each sends, so that every message meets its receive). Unperturbed: the same "
    "executions with the perturbation processes idle "
    "(asleep, waking every 20 ms, until the application is done). Each phase's executions "
    "follow --phase-warmup untimed ones (Netgauge's collvsnoise: one), which meet the "
    "start of the perturbation or the ranks' return from the other phase. "
    "Even splits run the perturbed phase first, odd splits the unperturbed one, so what the "
    "order does falls on both alike. Each execution starts after two barriers of the application "
    "communicator (the ranks waiting in them under the probe policy, so that they leave "
    "together) and its time is the maximum over the application ranks. One row per "
    "execution: split, ranks of each communicator, perturbed flag, rep, time_us. Implements "
    "the benchmark of seed 001 "
    "(Sec. 2), which Netgauge provides as its collvsnoise pattern. With --perturbation cpu the "
    "perturbing processes send nothing and keep --cpu-load of a core busy instead: the control "
    "that shows how much of a slowdown the shared cores of an emulated cluster explain. Given "
    "NN_CPUS_MEASURED and NN_CPUS_OTHER (CPU lists, set by the testbed platform when each job "
    "has cores of its own), every split binds the application processes to the first and the "
    "perturbing and idle ones to the second, as two jobs of a cluster; the #@ preamble names "
    "both (cpus_application, cpus_perturbing).",
};

enum { TAG_PERTURB = 1, TAG_DONE = 2 };

/* The collective of --collective, chosen once after option parsing so that the
 * timed region holds the MPI call alone. */
typedef void (*collective_fn)(double *buf, double *res, int count, MPI_Comm comm);

static void allreduce(double *buf, double *res, int count, MPI_Comm comm)
{
    MPI_CHECK(MPI_Allreduce(buf, res, count, MPI_DOUBLE, MPI_SUM, comm));
}

static void reduce(double *buf, double *res, int count, MPI_Comm comm)
{
    MPI_CHECK(MPI_Reduce(buf, res, count, MPI_DOUBLE, MPI_SUM, 0, comm));
}

static void bcast(double *buf, double *res, int count, MPI_Comm comm)
{
    (void)res;
    MPI_CHECK(MPI_Bcast(buf, count, MPI_DOUBLE, 0, comm));
}

/* name is one of the choices of --collective. */
static collective_fn choose_collective(const char *name)
{
    if (strcmp(name, "allreduce") == 0)
        return allreduce;
    if (strcmp(name, "reduce") == 0)
        return reduce;
    return bcast;
}

/* Busy for load of every millisecond, asleep for the rest, until the
 * application root says its timed executions are done: the CPU-only
 * perturbation, and with load 0 the perturbing processes of an unperturbed
 * phase. Waiting in a barrier instead, each would spin and wake beside the
 * timed collectives (a 2-rank baseline read 34 us beside 2 such processes, 66
 * beside 6). Idle, they check every 20 ms: 4 of them checking every
 * millisecond beside a 4-rank allreduce raised its median baseline from 74-75
 * to 80-96 us (three runs each way; 64-70 us alone). */
static void busy_until_done(double load, MPI_Request *done)
{
    const long long period_ns = load > 0 ? 1000000 : 20000000;
    volatile double sink = 1.0;
    for (int finished = 0; !finished;) {
        const long long begin = nn_now_ns();
        while (nn_now_ns() - begin < (long long)(load * (double)period_ns))
            sink = sqrt(sink + 1.0);
        nn_sleep_ns(period_ns - (nn_now_ns() - begin));
        MPI_CHECK(MPI_Test(done, &finished, MPI_STATUS_IGNORE));
    }
}

/* What a rank does in a split, from its place in the split's random order: the
 * first n_app time the collective, the next n_pert perturb, the rest idle. */
enum role { PERTURBING, APPLICATION, IDLE };

static int role(int pos, int n_app, int n_pert)
{
    return pos < n_app ? APPLICATION : pos < n_app + n_pert ? PERTURBING : IDLE;
}

/* Times reps collectives; the app root adds one row per execution. */
static void time_collectives(collective_fn collective, double *buf, double *res, int count,
                             long reps, MPI_Comm app, nn_table *rows, double split, double n_app,
                             double n_pert, double perturbed)
{
    int app_rank;
    MPI_CHECK(MPI_Comm_rank(app, &app_rank));
    for (long rep = 0; rep < reps; rep++) {
        /* A rank still asleep in a barrier when its peers leave it starts the
         * collective late, and its peers time its wake-up: after a single
         * barrier the first rep of a 2-rank phase took 10-14 times the last
         * (medians). So two barriers under the probe policy: the first gathers
         * ranks that arrive up to a sleep apart, the second releases them
         * within a spin. */
        nn_probe_begin();
        MPI_CHECK(MPI_Barrier(app));
        MPI_CHECK(MPI_Barrier(app));
        double t0 = nn_now();
        collective(buf, res, count, app);
        double mine = (nn_now() - t0) * 1e6, slowest = 0;
        nn_probe_end();
        MPI_CHECK(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, app));
        if (app_rank == 0) {
            double row[6] = {split, n_app, n_pert, perturbed, (double)rep, slowest};
            nn_table_add(rows, row);
        }
    }
}

/* Exchanges each perturbing process keeps posted. With one, every flow idled
 * between rounds while the processes agreed whether to stop, and each round
 * started on all of them together: a phase's first timed call on 8 nodes took
 * 3.6 ms and the later ones 1.0-2.2. With two, the next message is on the wire
 * before the last completes. */
enum { PERTURB_WINDOW = 2 };

static void post_exchange(char *psend, char *precv, int pcount, int to, int from,
                          MPI_Request exchange[2])
{
    MPI_CHECK(MPI_Irecv(precv, pcount, MPI_BYTE, from, TAG_PERTURB, MPI_COMM_WORLD, &exchange[0]));
    MPI_CHECK(MPI_Isend(psend, pcount, MPI_BYTE, to, TAG_PERTURB, MPI_COMM_WORLD, &exchange[1]));
}

/* Waits until both requests of exchange complete or done does; returns whether
 * done did. A process must not wait for its exchange alone: once its neighbour
 * stops posting, it would wait forever. */
static int wait_exchange_or_done(MPI_Request exchange[2], MPI_Request *done)
{
    for (;;) {
        MPI_Request pending[3] = {exchange[0], exchange[1], *done};
        int index;
        MPI_CHECK(MPI_Waitany(3, pending, &index, MPI_STATUS_IGNORE));
        exchange[0] = pending[0];
        exchange[1] = pending[1];
        *done = pending[2];
        if (index == 2)
            return 1;
        if (exchange[0] == MPI_REQUEST_NULL && exchange[1] == MPI_REQUEST_NULL)
            return 0;
    }
}

/* The network perturbation of one split's perturbed phase: a ring of pcount-byte
 * messages from `from` to `to`, PERTURB_WINDOW of them posted at any time, until
 * the application root says its timed executions are done. The phase's second
 * barrier, which lets the application start timing, waits until every
 * perturbing process has completed its first exchange: that one is mostly slow
 * start, which a split's timed executions would otherwise meet. Once done, the
 * processes agree how many messages each sends, the most any has posted, and
 * post the rest, so that every message meets its receive. Returns the messages
 * sent. */
static long long perturb_network(char *psend, char *precv[PERTURB_WINDOW], int pcount, int to,
                                 int from, int app_root, MPI_Comm perturbing)
{
    MPI_Request ex[PERTURB_WINDOW][2], done;
    MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, app_root, TAG_DONE, MPI_COMM_WORLD, &done));
    long long posted = 0, completed = 0;
    for (; posted < PERTURB_WINDOW; posted++)
        post_exchange(psend, precv[posted], pcount, to, from, ex[posted]);
    while (!wait_exchange_or_done(ex[completed % PERTURB_WINDOW], &done)) {
        if (++completed == 1)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        const int slot = (int)(posted % PERTURB_WINDOW);
        post_exchange(psend, precv[slot], pcount, to, from, ex[slot]);
        posted++;
    }
    long long sent = 0;
    MPI_CHECK(MPI_Allreduce(&posted, &sent, 1, MPI_LONG_LONG, MPI_MAX, perturbing));
    for (; posted < sent; posted++) {
        const int slot = (int)(posted % PERTURB_WINDOW);
        MPI_CHECK(MPI_Waitall(2, ex[slot], MPI_STATUSES_IGNORE));
        post_exchange(psend, precv[slot], pcount, to, from, ex[slot]);
    }
    MPI_CHECK(MPI_Waitall(2 * PERTURB_WINDOW, &ex[0][0], MPI_STATUSES_IGNORE));
    return sent;
}

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(5, 0);
    double ratio = 0.5;
    long application_ranks = 0;
    long splits = 128, reps = 1, phase_warmup = 1;
    size_t size = 8, perturb_size = 10 << 20;
    const char *coll = "allreduce", *perturbation = "network";
    double cpu_load = 0.2;
    const nn_option opts[] = {
        {"ratio", NN_OPT_DOUBLE, &ratio, 0, 0.95, NULL,
         "perturbation ratio: share of the ranks in the perturbation communicator"},
        {"application-ranks", NN_OPT_LONG, &application_ranks, 0, 1000000, NULL,
         "processes of the application communicator (0: the ranks the perturbation leaves); "
         "the ratio then sizes the perturbation beside them and the rest idle"},
        {"collective", NN_OPT_CHOICE, &coll, 0, 0, "allreduce|reduce|bcast",
         "collective timed in the application communicator"},
        {"size", NN_OPT_SIZE, &size, 8, 1 << 28, NULL,
         "collective size in bytes (a multiple of 8: doubles)"},
        {"perturb-size", NN_OPT_SIZE, &perturb_size, 1, 1 << 30, NULL,
         "size of each perturbation message in bytes"},
        {"splits", NN_OPT_LONG, &splits, 1, 10000, NULL,
         "random splits (each a communicator made before the timed region)"},
        {"reps", NN_OPT_LONG, &reps, 1, 1000000, NULL, "timed collectives per split and phase"},
        {"phase-warmup", NN_OPT_LONG, &phase_warmup, 0, 1000, NULL,
         "untimed collectives at the start of each phase, before its --reps"},
        {"perturbation", NN_OPT_CHOICE, &perturbation, 0, 0, "network|cpu",
         "what the perturbing processes do: network (exchange --perturb-size messages) or cpu "
         "(send nothing, keep --cpu-load of a core busy: the CPU-only control)"},
        {"cpu-load", NN_OPT_DOUBLE, &cpu_load, 0, 1, NULL,
         "with --perturbation cpu, the share of a core each perturbing process keeps busy"},
        NN_WARMUP_OPTION(&run),
        NN_CORUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_ANY_RANKS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank, nranks = b.nranks;
    if (size % 8 != 0)
        nn_fail_all(MPI_COMM_WORLD, "noise: --size %zu is not a multiple of 8 (doubles)", size);
    const double perturbing = application_ranks ? ratio * (double)application_ranks / (1 - ratio)
                                                : ratio * nranks;
    const int n_pert = (int)lround(perturbing);
    const int n_app = application_ranks ? (int)application_ranks : nranks - n_pert;
    if (n_pert == 1)
        nn_fail_all(MPI_COMM_WORLD,
                    "noise: --ratio %g gives 1 perturbing process; a permutation needs 0 or at "
                    "least 2 (change --ratio, --application-ranks or the rank count)",
                    ratio);
    if (n_app < 2)
        nn_fail_all(MPI_COMM_WORLD,
                    "noise: --ratio %g of %d ranks leaves %d application process(es); need 2",
                    ratio, nranks, n_app);
    if (n_app + n_pert > nranks)
        nn_fail_all(MPI_COMM_WORLD,
                    "noise: --application-ranks %d at --ratio %g needs %d perturbing processes "
                    "beside them, %d ranks in all; there are %d",
                    n_app, ratio, n_pert, n_app + n_pert, nranks);

    const collective_fn collective = choose_collective(coll);
    const int count = (int)(size / 8);
    double *buf = calloc((size_t)count, sizeof *buf), *res = calloc((size_t)count, sizeof *res);
    char *psend = calloc(perturb_size, 1), *precv[PERTURB_WINDOW];
    int out_of_memory = !buf || !res || !psend;
    for (int i = 0; i < PERTURB_WINDOW; i++)
        out_of_memory |= !(precv[i] = malloc(perturb_size));
    if (out_of_memory)
        nn_fail_all(MPI_COMM_WORLD, "noise: out of memory");

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD,
                    "ratio collective size perturb-size splits reps phase-warmup");
    nn_meta(&out, "application_ranks", "%d", n_app);
    nn_meta(&out, "perturbing_ranks", "%d", n_pert);
    nn_meta(&out, "idle_ranks", "%d", nranks - n_app - n_pert);
    nn_meta(&out, "perturbation", "%s", perturbation);
    if (strcmp(perturbation, "cpu") == 0)
        nn_meta(&out, "cpu_load", "%g", cpu_load);
    const int cpu_only = strcmp(perturbation, "cpu") == 0;
    nn_meta(&out, "phase_order", "alternating (perturbed first in even splits)");
    nn_meta(&out, "timing_starts", "after every perturbing process completed an exchange");

    /* Every split's communicators are made before the timed region: MPI_Comm_split
     * agrees on a context id through Open MPI's internal collectives, which poll
     * on every rank whatever the wait policy (8 ranks at ratio 1/2: 3.5-4.2
     * runnable tasks with the splits inside the timed region, 1.0-1.2 without). */
    nn_cores cores;
    nn_cores_init(&cores, MPI_COMM_WORLD);
    nn_meta(&out, "cpus_application", "%s", cores.given ? getenv("NN_CPUS_MEASURED") : "any");
    nn_meta(&out, "cpus_perturbing", "%s", cores.given ? getenv("NN_CPUS_OTHER") : "any");
    nn_rng rng;
    nn_rng_seed(&rng, (uint64_t)run.seed, 0);
    int *perms = malloc((size_t)splits * (size_t)nranks * sizeof *perms);
    MPI_Comm *subs = malloc((size_t)splits * sizeof *subs);
    if (!perms || !subs)
        nn_fail_all(MPI_COMM_WORLD, "noise: out of memory for %ld splits", splits);
    for (long split = 0; split < splits; split++) {
        int *perm = perms + split * nranks;
        if (rank == 0) {
            for (int i = 0; i < nranks; i++)
                perm[i] = i;
            nn_rng_shuffle(&rng, perm, nranks);
        }
        MPI_CHECK(MPI_Bcast(perm, nranks, MPI_INT, 0, MPI_COMM_WORLD));
        int pos = 0;
        while (perm[pos] != rank)
            pos++;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, role(pos, n_app, n_pert), pos, &subs[split]));
        /* On the first split's cores before the timed region, whose start the CPU
         * record reads. */
        if (split == 0)
            nn_cores_bind(&cores, role(pos, n_app, n_pert) == APPLICATION);
    }

    nn_table rows; /* split, app ranks, perturbing ranks, perturbed, rep, time_us */
    nn_table_init(&rows, 6);
    const int pcount = (int)perturb_size;
    long long perturb_rounds = 0;
    nn_timed_begin(&run, MPI_COMM_WORLD);
    for (long split = 0; split < splits; split++) {
        const int *perm = perms + split * nranks;
        const MPI_Comm sub = subs[split];
        int pos = 0;
        while (perm[pos] != rank)
            pos++;
        const int in_app = role(pos, n_app, n_pert) == APPLICATION;
        const int idle = role(pos, n_app, n_pert) == IDLE;
        const int app_root = perm[0];
        /* The application processes on the measured job's cores, the perturbing and
         * idle ones on the others, as two jobs of a cluster. */
        nn_cores_bind(&cores, in_app);

        if (in_app)
            for (long w = 0; w < run.warmup; w++)
                collective(buf, res, count, sub);
        const int k = pos - n_app; /* place in the perturbation ring */
        const int to = in_app || idle ? 0 : perm[n_app + (k + 1) % n_pert];
        const int from = in_app || idle ? 0 : perm[n_app + (k - 1 + n_pert) % n_pert];
        if (!in_app && !idle && !cpu_only)
            MPI_CHECK(MPI_Sendrecv(psend, 1, MPI_BYTE, to, TAG_PERTURB, precv[0], 1, MPI_BYTE, from,
                                   TAG_PERTURB, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int phase = 0; phase < 2; phase++) {
            const int perturbed = (phase == 0) == (split % 2 == 0);
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            if (in_app) {
                /* Every perturbing process has completed its first exchange
                 * once this barrier completes. */
                if (perturbed)
                    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                /* The ranks are returning from that barrier or from the other
                 * phase, and the idle processes are still settling: without
                 * this, a phase's first timed call on 6 and 8 nodes at ratio 1/2
                 * took 3-5 times the later ones when perturbed and up to 1.7
                 * times when not. */
                for (long w = 0; w < phase_warmup; w++)
                    collective(buf, res, count, sub);
                time_collectives(collective, buf, res, count, reps, sub, &rows, split, n_app,
                                 n_pert, perturbed);
                if (rank == app_root)
                    for (int i = n_app; i < nranks; i++)
                        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, perm[i], TAG_DONE, MPI_COMM_WORLD));
            } else if (!perturbed || cpu_only || idle) {
                MPI_Request done;
                MPI_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, app_root, TAG_DONE, MPI_COMM_WORLD, &done));
                if (perturbed)
                    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                busy_until_done(perturbed && !idle ? cpu_load : 0, &done);
            } else {
                perturb_rounds += perturb_network(psend, precv, pcount, to, from, app_root, sub);
            }
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    nn_timed_end(&run, MPI_COMM_WORLD);
    for (long split = 0; split < splits; split++)
        MPI_CHECK(MPI_Comm_free(&subs[split]));

    long long total_rounds = 0;
    MPI_CHECK(MPI_Reduce(&perturb_rounds, &total_rounds, 1, MPI_LONG_LONG, MPI_SUM, 0,
                         MPI_COMM_WORLD));
    nn_meta(&out, "perturbation_messages", "%lld", total_rounds);
    /* Rows arrive grouped by the app root's rank and are written by split. */
    nn_table_write(&out, &rows, MPI_COMM_WORLD,
                   "split,application_ranks,perturbing_ranks,perturbed,rep,time_us",
                   "%.0f,%.0f,%.0f,%.0f,%.0f,%.3f");
    nn_table_free(&rows);
    free(buf);
    free(res);
    free(psend);
    for (int i = 0; i < PERTURB_WINDOW; i++)
        free(precv[i]);
    free(perms);
    free(subs);
    return nn_bench_end(&out);
}
