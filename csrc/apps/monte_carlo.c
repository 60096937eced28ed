/*
 * monte_carlo: particle transport Monte Carlo with rare, small exchanges of
 * the particles that cross subdomains and one final reduction (MCB-like).
 *
 * Seed 000, Sec. II: "MCB is a monte carlo simulation code, which means
 * that it does not have much communication and, therefore, its usage of
 * the interconnecting network is expected to be low" (3,000,000 particles);
 * Sec. IV-D: MCB slows by no more than 3.5% across the whole range of
 * switch utilisation. This proxy is the control case: its runtime should
 * not depend on the network.
 */
#include "proxy.h"

#define DEFAULT_STEPS 20
#define DEFAULT_COMPUTE_US 10000

static const nn_tool_info info = {
    "monte_carlo",
    "Proxy of MCB (seed 000): particle-transport Monte Carlo, lots of computation, rare "
    "small exchanges of crossing particles and a final reduction, one row per application "
    "run.",
    "Stands for MCB in seed 000 (Sec. II: Monte Carlo burnup code with little communication; "
    "Sec. IV-D, Fig. 7: at most 3.5% slower at any switch utilisation), the network-"
    "insensitive control among the proxies. The ranks tile a periodic 2-D domain (MPI_Dims_"
    "create, MPI_Cart_create), one unit square each, and each starts with --size particles "
    "drawn from a seeded xoshiro256** stream (nn_rng.h). One step transports every local "
    "particle: exponential flights with mean free path --mfp, absorption with probability "
    "--absorb, otherwise isotropic scattering with energy loss, tallies of track length and "
    "deposited energy; absorbed particles are replaced by source particles at the next step. "
    "A particle leaving the square waits in the buffer of that side. Every --exchange-every "
    "steps (an exchange point) each rank first receives the particles its 4 neighbours sent "
    "at the previous point (MPI_Probe, MPI_Recv), then sends the ones that left since "
    "(MPI_Isend, 48 bytes per particle, one message per side even when empty) without "
    "waiting for them: a message has a whole exchange period to arrive, so network latency "
    "is hidden as in MCB's asynchronous particle buffers, and a particle always joins at the "
    "point after it was sent, whatever the timing (deterministic). At the end of the run the "
    "last point's particles are received, those that left after it are tallied as leaked, and "
    "one MPI_Allreduce sums the tallies: the only synchronisation of a run. Message volume per "
    "step and rank: below a kilobyte (default 4096 particles, mfp 0.005 on 4 ranks: about "
    "0.8 KiB per rank and step in sleep mode, 8 KiB in arith mode, in 4 messages every 2 "
    "steps; well under 1 ms per step at 50 Mbit/s against 10 ms of computation). --compute "
    "arith makes --collisions collision events per particle and step; spin and sleep make one "
    "event per particle and step (to move the particles and decide the crossings) and then "
    "wait --compute-us."
    PROXY_METHOD_TAIL,
};

enum { PW = 6 }; /* doubles per particle: x, y, ux, uy, energy, weight */
enum { NTALLY = 5, TAG_PARTICLES = 4 };

typedef struct {
    double *v;
    size_t n, cap;
} pbuf;

typedef struct {
    long particles, collisions;
    int every;
    double mfp, absorb;
    int dims[2], coords[2], nbr[4]; /* west, east, south, north */
    double x0, y0, gx, gy;
    pbuf live, out[4], in[4];
    long replace; /* absorbed last step, replaced by the source */
    /* absorbed weight, deposit, track length, population, leaked particles */
    double tally[NTALLY], result[NTALLY];
    pbuf sending[4];      /* particles of the last exchange point, in flight */
    MPI_Request sreq[4];
    int pending;          /* messages of the last exchange point still to receive */
    nn_rng rng;
    uint64_t seed;
    proxy *p;
} app_t;

static double *pbuf_push(pbuf *b)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        double *grown = realloc(b->v, cap * PW * sizeof(double));
        if (grown == NULL)
            nn_mpi_fail(MPI_ERR_NO_MEM, "realloc", __FILE__, __LINE__);
        b->v = grown;
        b->cap = cap;
    }
    return b->v + PW * b->n++;
}

static void source(app_t *app, double *pt)
{
    nn_rng *r = &app->rng;
    double theta = 2.0 * M_PI * nn_rng_uniform(r);
    pt[0] = app->x0 + nn_rng_uniform(r);
    pt[1] = app->y0 + nn_rng_uniform(r);
    pt[2] = cos(theta);
    pt[3] = sin(theta);
    pt[4] = 1.0;
    pt[5] = 1.0;
}

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    nn_rng_seed(&app->rng, app->seed, (uint64_t)p->rank);
    app->live.n = 0;
    for (int s = 0; s < 4; s++) {
        app->out[s].n = app->in[s].n = app->sending[s].n = 0;
        app->sreq[s] = MPI_REQUEST_NULL;
        if (app->sending[s].cap == 0) { /* never send from a NULL buffer */
            pbuf_push(&app->sending[s]);
            pbuf_push(&app->out[s]);
            app->sending[s].n = app->out[s].n = 0;
        }
    }
    app->pending = 0;
    for (long i = 0; i < app->particles; i++)
        source(app, pbuf_push(&app->live));
    app->replace = 0;
    memset(app->tally, 0, sizeof app->tally);
    memset(app->result, 0, sizeof app->result);
}

/* Side through which a point left the local square, or -1 when inside. */
static int side_of(const app_t *app, const double *pt)
{
    if (pt[0] < app->x0)
        return 0;
    if (pt[0] >= app->x0 + 1.0)
        return 1;
    if (pt[1] < app->y0)
        return 2;
    if (pt[1] >= app->y0 + 1.0)
        return 3;
    return -1;
}

static double wrap(double x, double period)
{
    x = fmod(x, period);
    return x < 0.0 ? x + period : x;
}

static void leave(app_t *app, size_t i, int side)
{
    double *pt = app->live.v + PW * i;
    pt[0] = wrap(pt[0], app->gx); /* periodic global domain */
    pt[1] = wrap(pt[1], app->gy);
    memcpy(pbuf_push(&app->out[side]), pt, PW * sizeof(double));
}

/* Removes particle i by moving the last one into its place. */
static void drop(app_t *app, size_t i)
{
    app->live.n--;
    if (i != app->live.n)
        memcpy(app->live.v + PW * i, app->live.v + PW * app->live.n, PW * sizeof(double));
}

static void transport(app_t *app, long events)
{
    nn_rng *r = &app->rng;
    for (long k = 0; k < app->replace; k++)
        source(app, pbuf_push(&app->live));
    app->replace = 0;
    size_t i = 0;
    while (i < app->live.n) {
        double *pt = app->live.v + PW * i;
        int gone = 0;
        int side = side_of(app, pt); /* arrived through a corner: pass it on */
        if (side >= 0) {
            leave(app, i, side);
            drop(app, i);
            continue;
        }
        for (long e = 0; e < events && !gone; e++) {
            double d = nn_rng_exponential(r, app->mfp);
            pt[0] += pt[2] * d;
            pt[1] += pt[3] * d;
            app->tally[2] += d * pt[5];
            side = side_of(app, pt);
            if (side >= 0) {
                leave(app, i, side);
                gone = 1;
            } else if (nn_rng_uniform(r) < app->absorb) {
                app->tally[0] += pt[5];
                app->tally[1] += pt[4] * pt[5];
                app->replace++;
                gone = 1;
            } else {
                double theta = 2.0 * M_PI * nn_rng_uniform(r);
                double kept = 0.7 + 0.3 * nn_rng_uniform(r);
                app->tally[1] += (1.0 - kept) * pt[4] * pt[5];
                pt[2] = cos(theta);
                pt[3] = sin(theta);
                pt[4] *= kept;
                if (pt[4] < 1e-3) { /* thermalised: restart as a source particle */
                    app->tally[1] += pt[4] * pt[5];
                    source(app, pt);
                }
            }
        }
        if (gone)
            drop(app, i);
        else
            i++;
    }
}

/* Receives the particles the neighbours sent at the previous exchange point
 * (MPI_Probe gives the count) and appends them side by side: whatever the
 * timing, a particle sent at exchange point k joins at point k+1. */
static void receive_pending(app_t *app)
{
    proxy *p = app->p;
    for (int s = 0; s < 4; s++) {
        MPI_Status st;
        int count = 0;
        MPI_CHECK(MPI_Probe(app->nbr[s], TAG_PARTICLES + (s ^ 1), p->comm, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &count));
        pbuf *in = &app->in[s];
        in->n = 0;
        for (int k = 0; k < count / PW; k++)
            pbuf_push(in);
        MPI_CHECK(MPI_Recv(in->v, count, MPI_DOUBLE, app->nbr[s], TAG_PARTICLES + (s ^ 1),
                           p->comm, MPI_STATUS_IGNORE));
        for (size_t k = 0; k < in->n; k++)
            memcpy(pbuf_push(&app->live), in->v + PW * k, PW * sizeof(double));
    }
    app->pending = 0;
}

/* An exchange point: take in the previous point's particles, then send the
 * ones that left since, without waiting for them to arrive. */
static void exchange(app_t *app, proxy *p)
{
    double t0 = nn_now();
    if (app->pending)
        receive_pending(app);
    MPI_CHECK(MPI_Waitall(4, app->sreq, MPI_STATUSES_IGNORE));
    for (int s = 0; s < 4; s++) {
        pbuf t = app->sending[s];
        app->sending[s] = app->out[s];
        app->out[s] = t;
        app->out[s].n = 0;
        const size_t n = app->sending[s].n;
        MPI_CHECK(MPI_Isend(app->sending[s].v, (int)(PW * n), MPI_DOUBLE, app->nbr[s],
                            TAG_PARTICLES + s, p->comm, &app->sreq[s]));
        proxy_count_send(p, app->nbr[s], (double)(PW * n * sizeof(double)));
    }
    app->pending = 1;
    p->comm_s += nn_now() - t0;
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    for (long s = 0; s < p->steps; s++) {
        double t0 = nn_now();
        transport(app, p->mode == PROXY_ARITH ? app->collisions : 1);
        if (p->mode != PROXY_ARITH)
            proxy_wait_ns(p, proxy_share_ns(p, 1.0));
        p->compute_s += nn_now() - t0;
        if ((s + 1) % app->every == 0 && s + 1 < p->steps)
            exchange(app, p);
    }
    /* End of the run: the last point's particles (sent at least a step ago)
     * come in; those that left since leak out of the run and are tallied. */
    double t0 = nn_now();
    if (app->pending)
        receive_pending(app);
    MPI_CHECK(MPI_Waitall(4, app->sreq, MPI_STATUSES_IGNORE));
    p->comm_s += nn_now() - t0;
    for (int s = 0; s < 4; s++) {
        app->tally[4] += (double)app->out[s].n;
        app->out[s].n = 0;
    }
    app->tally[3] = (double)app->live.n;
    PROXY_MPI(p, MPI_Allreduce(app->tally, app->result, NTALLY, MPI_DOUBLE, MPI_SUM, p->comm));
    proxy_count_collective(p, sizeof app->tally);
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    double s = 0.0;
    for (size_t i = 0; i < app->live.n; i++) {
        const double *pt = app->live.v + PW * i;
        s += pt[0] + 2.0 * pt[1] + 3.0 * pt[4];
    }
    return proxy_sum(p, s) + app->result[0] + app->result[1] + 1e-3 * app->result[2] +
           app->result[3] + app->result[4];
}

/* The particle buffers grow during the runs (pbuf_push), outside proxy_alloc. */
static void release(void *v)
{
    app_t *app = v;
    free(app->live.v);
    for (int s = 0; s < 4; s++) {
        free(app->out[s].v);
        free(app->in[s].v);
        free(app->sending[s].v);
    }
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long particles = 4096, collisions = 20, every = 2;
    double mfp = 0.005, absorb = 0.05;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &particles, 1, 1e8, NULL,
         "particles per rank at the start (default 4096)"},
        {"collisions", NN_OPT_LONG, &collisions, 1, 1e6, NULL,
         "collision events per particle and step with --compute arith (default 20)"},
        {"mfp", NN_OPT_DOUBLE, &mfp, 1e-6, 1, NULL,
         "mean free path in units of the rank's square: larger, more particles cross "
         "(default 0.005)"},
        {"absorb", NN_OPT_DOUBLE, &absorb, 0, 1, NULL,
         "absorption probability per collision (default 0.05)"},
        {"exchange-every", NN_OPT_LONG, &every, 1, 1e7, NULL,
         "steps between exchanges of the crossing particles (default 2)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);

    proxy_check_memory(&p, 2.0 * particles * PW * sizeof(double));
    app_t app = {0};
    const int periods[2] = {1, 1};
    proxy_cart(&p, 2, app.dims, periods, app.nbr);
    MPI_CHECK(MPI_Cart_coords(p.comm, p.rank, 2, app.coords));
    app.particles = particles;
    app.collisions = collisions;
    app.every = (int)every;
    app.mfp = mfp;
    app.absorb = absorb;
    app.x0 = app.coords[0];
    app.y0 = app.coords[1];
    app.gx = app.dims[0];
    app.gy = app.dims[1];
    app.seed = (uint64_t)p.run.seed;
    app.p = &p;

    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", particles);
    nn_meta(&out, "particles", "%ld per rank, %ld in all", particles, particles * p.nranks);
    nn_meta(&out, "collisions", "%ld", collisions);
    nn_meta(&out, "mfp", "%g", mfp);
    nn_meta(&out, "absorb", "%g", absorb);
    nn_meta(&out, "exchange_every", "%ld", every);
    nn_meta(&out, "process_grid", "%dx%d, periodic", app.dims[0], app.dims[1]);
    proxy_meta(&p, &out);
    nn_meta(&out, "pattern", "every %ld steps: 4 particle messages (48 bytes per particle), "
            "received at the next exchange point; one MPI_Allreduce of %zu bytes per run", every,
            NTALLY * sizeof(double));

    const proxy_app fn = {reset, steps, checksum, release};
    return proxy_main(&p, &fn, &app, &out);
}
