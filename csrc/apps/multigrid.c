/*
 * multigrid: V-cycles over a hierarchy of 3-D grids, so that communication
 * changes character from phase to phase (AMG-like).
 *
 * Seed 000, Sec. II: "AMG carries out several iterations of an iterative
 * solver over the same linear system at different levels of granularity,
 * which means that it behaves like a CPU intensive benchmark [...] and like
 * a communication and memory bound application when it performs solver
 * iterations over a sparse representation of the system. Thus, AMG runs
 * will display very different phases." Sec. V: those phases are why the
 * queue model mispredicts FFTW co-running with AMG. Seed 004 (Sec. 4,
 * Table 3): NPB MG is one of the communication-heavy NPB kernels.
 */
#include "proxy.h"

#define DEFAULT_STEPS 10
#define DEFAULT_COMPUTE_US 3000

static const nn_tool_info info = {
    "multigrid",
    "Proxy of AMG and NPB MG (seeds 000, 004): multigrid V-cycles whose phases alternate "
    "between compute-heavy fine levels with large halos and latency-bound coarse levels "
    "with small halos and allreduces, one row per application run.",
    "Stands for AMG in seed 000 (Sec. II: iterations at different levels of granularity, CPU "
    "intensive on some levels and communication bound on others, hence very different "
    "phases; Sec. V: those phases defeat the queue model when FFTW co-runs with AMG) and for "
    "NPB MG in seed 004 (Sec. 4, Table 3). The ranks form a 3-D grid (MPI_Dims_create, "
    "MPI_Cart_create, not periodic, zero Dirichlet boundary). Level l has a local cube of "
    "edge n/2^l (n = --size, --levels levels). One step is one V-cycle for the 7-point "
    "Poisson problem: on each level but the coarsest a weighted-Jacobi pre-smoothing, a "
    "residual and its restriction (each sweep after a 6-face halo exchange of (n/2^l)^2 "
    "doubles per face); on the coarsest level --coarse-iters Jacobi iterations, each with a "
    "halo exchange of tiny faces and an MPI_Allreduce of the residual norm (the "
    "latency-bound phase); prolongation and post-smoothing back up; a final fine-level "
    "residual with its MPI_Allreduce. Message volume per step and rank: (faces with a "
    "neighbour) x 8 bytes x (4 n^2 + 3 sum over intermediate levels of (n/2^l)^2 + "
    "coarse-iters x (n/2^(L-1))^2) plus (coarse-iters + 1) allreduces of 8 bytes (default n=32, "
    "4 levels, 8 coarse iterations on 4 ranks, a 2x2x1 grid: about 81 KiB per rank and step, "
    "of which 64 KiB in the 4 fine-level exchanges, while the coarsest level sends 8 x 2 "
    "messages of 128 bytes and makes 8 allreduces). In spin and sleep modes --compute-us per "
    "step is split over the sweeps in proportion to their grid points (so about 90% goes to the "
    "finest level) and the messages carry the unchanged initial grids."
    PROXY_METHOD_TAIL,
};

enum { MAX_LEVELS = 12 };

typedef struct {
    int n, levels, coarse_iters;
    int nl[MAX_LEVELS];
    double *u[MAX_LEVELS], *f[MAX_LEVELS], *r[MAX_LEVELS];
    double *sendbuf[6], *recvbuf[6];
    int nbr[6];
    double work_total; /* in points swept per V-cycle */
    double rr, rr_local;
    uint64_t seed;
} app_t;

static inline size_t cells(int n)
{
    return ((size_t)n + 2) * ((size_t)n + 2) * ((size_t)n + 2);
}

static void exchange(app_t *app, proxy *p, int l)
{
    const int n = app->nl[l], count = n * n;
    for (int s = 0; s < 6; s++)
        proxy_face_copy(n, app->u[l], s / 2, s % 2 ? n : 1, app->sendbuf[s], 1);
    proxy_halo6(p, app->sendbuf, app->recvbuf, app->nbr, count);
    for (int s = 0; s < 6; s++)
        if (app->nbr[s] != MPI_PROC_NULL)
            proxy_face_copy(n, app->u[l], s / 2, s % 2 ? n + 1 : 0, app->recvbuf[s], 0);
}

/* r = f - A u on level l; returns |r|^2. A is the 7-point Laplacian divided
 * by 2^l: the Galerkin operator R A P of the finer level for the averaging
 * restriction R and piecewise-constant prolongation P used here (the plain
 * rediscretisation, divided by 4^l, would over-correct by 2 per level). */
static double residual(app_t *app, int l)
{
    const int n = app->nl[l];
    const double h2inv = 1.0 / (double)(1 << l);
    const size_t sy = (size_t)n + 2, sz = sy * sy;
    const double *u = app->u[l], *f = app->f[l];
    double *r = app->r[l], rr = 0.0;
    for (int z = 1; z <= n; z++)
        for (int y = 1; y <= n; y++)
            for (int x = 1; x <= n; x++) {
                size_t i = PROXY_AT3(n, x, y, z);
                double au = (6.0 * u[i] - u[i - 1] - u[i + 1] - u[i - sy] - u[i + sy] -
                             u[i - sz] - u[i + sz]) * h2inv;
                r[i] = f[i] - au;
                rr += r[i] * r[i];
            }
    return rr;
}

/* Weighted Jacobi from the residual: u += (2/3) r / diag. */
static double jacobi(app_t *app, int l)
{
    const int n = app->nl[l];
    const double rr = residual(app, l);
    const double w = (2.0 / 3.0) * (double)(1 << l) / 6.0;
    for (int z = 1; z <= n; z++)
        for (int y = 1; y <= n; y++)
            for (int x = 1; x <= n; x++) {
                size_t i = PROXY_AT3(n, x, y, z);
                app->u[l][i] += w * app->r[l][i];
            }
    return rr;
}

/* f(l+1) = mean of the 8 children of r(l); u(l+1) = 0. */
static void restrict_down(app_t *app, int l)
{
    const int nc = app->nl[l + 1], nf = app->nl[l];
    memset(app->u[l + 1], 0, cells(nc) * sizeof(double));
    for (int z = 1; z <= nc; z++)
        for (int y = 1; y <= nc; y++)
            for (int x = 1; x <= nc; x++) {
                double s = 0.0;
                for (int c = 0; c < 8; c++)
                    s += app->r[l][PROXY_AT3(nf, 2 * x - 1 + (c & 1), 2 * y - 1 + ((c >> 1) & 1),
                                             2 * z - 1 + (c >> 2))];
                app->f[l + 1][PROXY_AT3(nc, x, y, z)] = s / 8.0;
            }
}

/* u(l) += u(l+1) of the parent cell (piecewise-constant prolongation). */
static void prolong(app_t *app, int l)
{
    const int nf = app->nl[l], nc = app->nl[l + 1];
    for (int z = 1; z <= nf; z++)
        for (int y = 1; y <= nf; y++)
            for (int x = 1; x <= nf; x++)
                app->u[l][PROXY_AT3(nf, x, y, z)] +=
                    app->u[l + 1][PROXY_AT3(nc, (x + 1) / 2, (y + 1) / 2, (z + 1) / 2)];
}

static double share(const app_t *app, int l, double sweeps)
{
    double pts = (double)app->nl[l] * app->nl[l] * app->nl[l];
    return sweeps * pts / app->work_total;
}

static void allreduce_norm(app_t *app, proxy *p)
{
    PROXY_MPI(p, MPI_Allreduce(&app->rr_local, &app->rr, 1, MPI_DOUBLE, MPI_SUM, p->comm));
    proxy_count_collective(p, sizeof(double));
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    const int last = app->levels - 1;
    for (long s = 0; s < p->steps; s++) {
        for (int l = 0; l < last; l++) {
            exchange(app, p, l);
            PROXY_COMPUTE(p, share(app, l, 1.0), jacobi(app, l));
            exchange(app, p, l);
            PROXY_COMPUTE(p, share(app, l, 1.25), {
                residual(app, l);
                restrict_down(app, l);
            });
        }
        for (int it = 0; it < app->coarse_iters; it++) {
            exchange(app, p, last);
            PROXY_COMPUTE(p, share(app, last, 1.0), app->rr_local = jacobi(app, last));
            allreduce_norm(app, p);
        }
        for (int l = last - 1; l >= 0; l--) {
            PROXY_COMPUTE(p, share(app, l, 0.25), prolong(app, l));
            exchange(app, p, l);
            PROXY_COMPUTE(p, share(app, l, 1.0), jacobi(app, l));
        }
        exchange(app, p, 0);
        PROXY_COMPUTE(p, share(app, 0, 1.0), app->rr_local = residual(app, 0));
        allreduce_norm(app, p);
    }
}

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    for (int l = 0; l < app->levels; l++) {
        int n = app->nl[l];
        memset(app->u[l], 0, cells(n) * sizeof(double));
        memset(app->f[l], 0, cells(n) * sizeof(double));
        memset(app->r[l], 0, cells(n) * sizeof(double));
        nn_rng rng;
        nn_rng_seed(&rng, app->seed, (uint64_t)p->rank * MAX_LEVELS + (uint64_t)l);
        for (int z = 1; z <= n; z++)
            for (int y = 1; y <= n; y++)
                for (int x = 1; x <= n; x++) {
                    app->u[l][PROXY_AT3(n, x, y, z)] = nn_rng_uniform(&rng) - 0.5;
                    app->f[l][PROXY_AT3(n, x, y, z)] =
                        l == 0 ? 2.0 * nn_rng_uniform(&rng) - 1.0 : 0.0;
                }
    }
    app->rr_local = residual(app, 0);
    app->rr = 0.0;
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    const int n = app->nl[0];
    double s = 0.0;
    for (int z = 1; z <= n; z++)
        for (int y = 1; y <= n; y++)
            for (int x = 1; x <= n; x++)
                s += app->u[0][PROXY_AT3(n, x, y, z)] * (double)((x + 3 * y + 5 * z) % 11 + 1);
    return proxy_sum(p, s) + app->rr;
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 32, levels = 4, coarse_iters = 8;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 2, 512, NULL,
         "edge n of the finest local cube of each rank; a multiple of 2^(levels-1) "
         "(default 32)"},
        {"levels", NN_OPT_LONG, &levels, 2, MAX_LEVELS, NULL,
         "grid levels of the V-cycle (default 4)"},
        {"coarse-iters", NN_OPT_LONG, &coarse_iters, 1, 10000, NULL,
         "Jacobi iterations on the coarsest level, each with a halo exchange and an "
         "MPI_Allreduce (default 8)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);
    const long factor = 1L << (levels - 1);
    if (size % factor != 0)
        nn_fail_all(p.comm,
                    "multigrid: --size %ld must be a multiple of 2^(levels-1) = %ld for --levels "
                    "%ld; e.g. --size %ld",
                    size, factor, levels, (size / factor + 1) * factor);

    proxy_check_memory(&p, 3.0 * 8.0 / 7.0 * pow(size + 2.0, 3) * sizeof(double));
    app_t app = {0};
    int dims[3] = {0, 0, 0};
    const int periods[3] = {0, 0, 0};
    proxy_cart(&p, 3, dims, periods, app.nbr);

    app.n = (int)size;
    app.levels = (int)levels;
    app.coarse_iters = (int)coarse_iters;
    app.seed = (uint64_t)p.run.seed;
    for (int l = 0; l < app.levels; l++) {
        app.nl[l] = app.n >> l;
        app.u[l] = proxy_alloc(&p, cells(app.nl[l]), sizeof(double));
        app.f[l] = proxy_alloc(&p, cells(app.nl[l]), sizeof(double));
        app.r[l] = proxy_alloc(&p, cells(app.nl[l]), sizeof(double));
    }
    for (int s = 0; s < 6; s++) {
        app.sendbuf[s] = proxy_alloc(&p, (size_t)size * size, sizeof(double));
        app.recvbuf[s] = proxy_alloc(&p, (size_t)size * size, sizeof(double));
    }
    /* Points swept per V-cycle: pre-smoothing 1, residual and restriction 1.25,
     * prolongation 0.25, post-smoothing 1 on every level above the coarsest;
     * coarse-iters sweeps on the coarsest; one final fine residual. */
    const int last = app.levels - 1;
    double cube[MAX_LEVELS];
    for (int l = 0; l < app.levels; l++)
        cube[l] = (double)app.nl[l] * app.nl[l] * app.nl[l];
    for (int l = 0; l < last; l++)
        app.work_total += 3.5 * cube[l];
    app.work_total += app.coarse_iters * cube[last] + cube[0];

    int faces = 0;
    for (int s = 0; s < 6; s++)
        faces += app.nbr[s] != MPI_PROC_NULL;
    double face_doubles =
        4.0 * size * size + app.coarse_iters * (double)app.nl[last] * app.nl[last];
    for (int l = 1; l < last; l++)
        face_doubles += 3.0 * app.nl[l] * app.nl[l];

    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "levels", "%ld", levels);
    nn_meta(&out, "coarse_iters", "%ld", coarse_iters);
    nn_meta(&out, "level_edges", "%d..%d", app.nl[0], app.nl[last]);
    nn_meta(&out, "process_grid", "%dx%dx%d", dims[0], dims[1], dims[2]);
    proxy_meta(&p, &out);
    nn_meta(&out, "fine_level_compute_share", "%.3f", 4.5 * cube[0] / app.work_total);
    nn_meta(&out, "bytes_per_step_rank0", "%.0f",
            faces * face_doubles * sizeof(double) + (coarse_iters + 1) * sizeof(double));
    nn_meta(&out, "pattern", "%d faces; per step 4 fine exchanges of %ld bytes per face, "
            "%ld coarse exchanges of %d bytes per face, %ld MPI_Allreduce of 8 bytes",
            faces, size * size * 8, coarse_iters, app.nl[last] * app.nl[last] * 8,
            coarse_iters + 1);

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&p, &fn, &app, &out);
}
