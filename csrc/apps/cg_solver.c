/*
 * cg_solver: conjugate gradient on a 4-D periodic lattice: 8 halo
 * messages and 2 small MPI_Allreduce per iteration (MILC CG / NPB CG-like).
 *
 * Seed 000, Sec. II: "MILC spends most of its time running the conjugate
 * gradient solver, which means that most of its communications involve
 * point to point communications with the neighbors and global reductions
 * once in a while"; lattice 16x32x32x36 on 144 processes, i.e. 8^4 sites
 * per process. Seed 002 (Sec. II-B, Table I): MILC has heavy
 * point-to-point traffic, light allreduce, compute:communication 3:2.
 * Seed 004 (Sec. 4, Table 3): NPB CG is one of the communication-heavy
 * NPB kernels.
 */
#include "proxy.h"

#define DEFAULT_STEPS 16
#define DEFAULT_COMPUTE_US 1000

static const nn_tool_info info = {
    "cg_solver",
    "Proxy of MILC's CG solver and NPB CG (seeds 000, 002, 004): 4-D halo exchange and two "
    "small allreduces per CG iteration, one row per application run.",
    "Stands for MILC in seed 000 (Sec. II: most time in the conjugate gradient solver, "
    "point-to-point exchanges with the lattice neighbours and global reductions; lattice "
    "16x32x32x36 on 144 processes = 8^4 sites per process, the default here; Sec. IV-D: "
    "latency sensitive, 20% slower at 40% switch queue utilisation) and seed 002 (Sec. II-B, "
    "Table I: heavy point-to-point, light allreduce), and for NPB CG in seed 004 (Sec. 4, "
    "Table 3). The ranks form a periodic 4-D grid (MPI_Dims_create, MPI_Cart_create); each "
    "owns n^4 sites (n = --size) carrying a 3-component complex vector (6 doubles, MILC's "
    "su3_vector). The operator is the 4-D lattice Laplacian plus a mass term, applied to each "
    "component (MILC's Dirac operator also multiplies by SU(3) link matrices: same stencil, "
    "same halos). One step is one CG iteration: MPI_Irecv/MPI_Isend of the 8 faces of the "
    "search direction (n^3 x 48 bytes each), q = A p (compute), MPI_Allreduce of p.q, vector "
    "updates, MPI_Allreduce of r.r, new direction. Message volume per step and rank: (faces "
    "whose neighbour is another rank) x n^3 x 48 bytes plus 2 x 8 bytes of allreduce (default "
    "n=8 on 4 ranks, a 2x2x1x1 grid: 4 faces, 96 KiB per rank and step, about 16 ms at 50 "
    "Mbit/s). In spin and sleep modes --compute-us per step is split 60% operator, 30% vector "
    "updates, 10% direction update; the vectors keep their initial values and the reductions "
    "reduce the initial local dot products."
    PROXY_METHOD_TAIL,
};

enum { V = 6 }; /* doubles per site */

typedef struct {
    int n, dims[4], nbr[8];
    size_t L, sites; /* ghosted edge, ghosted site count */
    double *x, *r, *p, *q;
    double *sendbuf[8], *recvbuf[8];
    double rr, pq_local, rr_local, mass2;
    uint64_t seed;
} app_t;

static inline size_t site(const app_t *app, const int c[4])
{
    size_t L = app->L;
    return (((size_t)c[3] * L + (size_t)c[2]) * L + (size_t)c[1]) * L + (size_t)c[0];
}

/* Copies the 3-D layer at coordinate cd of dimension d between v and buf. */
static void face_copy(const app_t *app, double *v, int d, int cd, double *buf, int pack)
{
    int lo[4], hi[4], c[4];
    for (int k = 0; k < 4; k++) {
        lo[k] = 1;
        hi[k] = app->n;
    }
    lo[d] = hi[d] = cd;
    size_t k = 0;
    for (c[3] = lo[3]; c[3] <= hi[3]; c[3]++)
        for (c[2] = lo[2]; c[2] <= hi[2]; c[2]++)
            for (c[1] = lo[1]; c[1] <= hi[1]; c[1]++)
                for (c[0] = lo[0]; c[0] <= hi[0]; c[0]++, k += V) {
                    double *s = v + site(app, c) * V;
                    if (pack)
                        memcpy(buf + k, s, V * sizeof(double));
                    else
                        memcpy(s, buf + k, V * sizeof(double));
                }
}

/* Runs body with i = every interior site's vector index (the innermost dimension
 * is contiguous, so loops stay simple). */
#define FOR_SITES(app, i, body)                                                       \
    do {                                                                              \
        int c_[4];                                                                    \
        for (c_[3] = 1; c_[3] <= (app)->n; c_[3]++)                                   \
            for (c_[2] = 1; c_[2] <= (app)->n; c_[2]++)                               \
                for (c_[1] = 1; c_[1] <= (app)->n; c_[1]++) {                         \
                    c_[0] = 1;                                                        \
                    size_t row_ = site((app), c_) * V;                                \
                    for (size_t i = row_; i < row_ + (size_t)(app)->n * V; i++) {     \
                        body;                                                         \
                    }                                                                 \
                }                                                                     \
    } while (0)

static double dot(const app_t *app, const double *a, const double *b)
{
    double s = 0.0;
    FOR_SITES(app, i, s += a[i] * b[i]);
    return s;
}

static void reset(void *v, proxy *pr)
{
    app_t *app = v;
    size_t len = app->sites * V;
    memset(app->x, 0, len * sizeof(double));
    memset(app->r, 0, len * sizeof(double));
    memset(app->p, 0, len * sizeof(double));
    memset(app->q, 0, len * sizeof(double));
    nn_rng rng;
    nn_rng_seed(&rng, app->seed, (uint64_t)pr->rank);
    FOR_SITES(app, i, app->r[i] = 2.0 * nn_rng_uniform(&rng) - 1.0);
    memcpy(app->p, app->r, len * sizeof(double));
    app->rr_local = dot(app, app->r, app->r);
    app->pq_local = app->rr_local;
    app->rr = proxy_sum(pr, app->rr_local);
}

static void exchange(app_t *app, proxy *pr)
{
    const size_t face = (size_t)app->n * app->n * app->n * V;
    MPI_Request req[16];
    for (int s = 0; s < 8; s++)
        face_copy(app, app->p, s / 2, s % 2 ? app->n : 1, app->sendbuf[s], 1);
    double t0 = nn_now();
    for (int s = 0; s < 8; s++)
        MPI_CHECK(MPI_Irecv(app->recvbuf[s], (int)face, MPI_DOUBLE, app->nbr[s], s ^ 1, pr->comm,
                            &req[s]));
    for (int s = 0; s < 8; s++) {
        MPI_CHECK(MPI_Isend(app->sendbuf[s], (int)face, MPI_DOUBLE, app->nbr[s], s, pr->comm,
                            &req[8 + s]));
        proxy_count_send(pr, app->nbr[s], face * sizeof(double));
    }
    MPI_CHECK(MPI_Waitall(16, req, MPI_STATUSES_IGNORE));
    pr->comm_s += nn_now() - t0;
    for (int s = 0; s < 8; s++)
        face_copy(app, app->p, s / 2, s % 2 ? app->n + 1 : 0, app->recvbuf[s], 0);
}

/* q = (8 + m^2) p - sum of the 8 neighbours, per component; returns p.q. */
static double apply(app_t *app)
{
    const double diag = 8.0 + app->mass2;
    size_t st[4] = {V, app->L * V, app->L * app->L * V, app->L * app->L * app->L * V};
    const double *p = app->p;
    double *q = app->q;
    FOR_SITES(app, i,
              q[i] = diag * p[i] - (p[i - st[0]] + p[i + st[0]] + p[i - st[1]] + p[i + st[1]] +
                                    p[i - st[2]] + p[i + st[2]] + p[i - st[3]] + p[i + st[3]]));
    return dot(app, p, q);
}

static double update(app_t *app, double alpha)
{
    double *x = app->x, *r = app->r;
    const double *p = app->p, *q = app->q;
    double s = 0.0;
    FOR_SITES(app, i, {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
        s += r[i] * r[i];
    });
    return s;
}

static void new_direction(app_t *app, double beta)
{
    double *p = app->p;
    const double *r = app->r;
    FOR_SITES(app, i, p[i] = r[i] + beta * p[i]);
}

static void steps(void *v, proxy *pr)
{
    app_t *app = v;
    for (long s = 0; s < pr->steps; s++) {
        exchange(app, pr);
        PROXY_COMPUTE(pr, 0.6, app->pq_local = apply(app));
        double pq, rr_new;
        PROXY_MPI(pr, MPI_Allreduce(&app->pq_local, &pq, 1, MPI_DOUBLE, MPI_SUM, pr->comm));
        proxy_count_collective(pr, sizeof(double));
        double alpha = pq != 0.0 ? app->rr / pq : 0.0;
        PROXY_COMPUTE(pr, 0.3, app->rr_local = update(app, alpha));
        PROXY_MPI(pr, MPI_Allreduce(&app->rr_local, &rr_new, 1, MPI_DOUBLE, MPI_SUM, pr->comm));
        proxy_count_collective(pr, sizeof(double));
        double beta = app->rr != 0.0 ? rr_new / app->rr : 0.0;
        PROXY_COMPUTE(pr, 0.1, new_direction(app, beta));
        app->rr = rr_new;
    }
}

static double checksum(void *v, proxy *pr)
{
    app_t *app = v;
    double s = 0.0;
    FOR_SITES(app, i, s += (app->x[i] + app->p[i]) * (double)(i % 7 + 1));
    return proxy_sum(pr, s) + app->rr;
}

int main(int argc, char **argv)
{
    proxy pr;
    proxy_defaults(&pr, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 8;
    double mass = 0.3;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 2, 24, NULL,
         "edge n of the local 4-D lattice of each rank (n^4 sites of 6 doubles; default 8)"},
        {"mass", NN_OPT_DOUBLE, &mass, 1e-3, 100, NULL,
         "mass m of the operator (8 + m^2 on the diagonal): smaller converges more slowly "
         "(default 0.3)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&pr, &argc, &argv, opts, &info);

    app_t app = {0};
    const int periods[4] = {1, 1, 1, 1};
    proxy_cart(&pr, 4, app.dims, periods, app.nbr);

    app.n = (int)size;
    app.mass2 = mass * mass;
    app.seed = (uint64_t)pr.run.seed;
    app.L = (size_t)size + 2;
    app.sites = app.L * app.L * app.L * app.L;
    app.x = proxy_alloc(&pr, app.sites * V, sizeof(double));
    app.r = proxy_alloc(&pr, app.sites * V, sizeof(double));
    app.p = proxy_alloc(&pr, app.sites * V, sizeof(double));
    app.q = proxy_alloc(&pr, app.sites * V, sizeof(double));
    const size_t face = (size_t)size * size * size * V;
    int remote = 0;
    for (int s = 0; s < 8; s++) {
        app.sendbuf[s] = proxy_alloc(&pr, face, sizeof(double));
        app.recvbuf[s] = proxy_alloc(&pr, face, sizeof(double));
        remote += app.nbr[s] != pr.rank;
    }

    nn_writer out;
    proxy_writer(&pr, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "mass", "%g", mass);
    nn_meta(&out, "process_grid", "%dx%dx%dx%d", app.dims[0], app.dims[1], app.dims[2],
            app.dims[3]);
    nn_meta(&out, "lattice", "%ldx%ldx%ldx%ld sites, periodic, 6 doubles per site",
            size * app.dims[0], size * app.dims[1], size * app.dims[2], size * app.dims[3]);
    proxy_meta(&pr, &out);
    nn_meta(&out, "bytes_per_step_rank0", "%.0f",
            (double)remote * face * sizeof(double) + 2 * sizeof(double));
    nn_meta(&out, "pattern", "%d face messages of %zu bytes to other ranks and 2 MPI_Allreduce "
            "of 8 bytes per step on rank 0", remote, face * sizeof(double));

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&pr, &fn, &app, &out);
}
