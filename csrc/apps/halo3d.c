/*
 * halo3d: 3-D domain decomposition with 6 face exchanges per step, compute
 * on the local cube and an occasional MPI_Allreduce (LULESH-like).
 *
 * Seed 000, Sec. II: "Lulesh is a typical finite difference method code
 * with local communication phases interleaved by intensive computation
 * phases", run on a 22x22x22 cube per process and on cubic rank counts
 * only (Sec. V). Its slowdown under switch load stays moderate (8% at 50%
 * and 15% at 92% queue utilisation, Sec. IV-D).
 */
#include "proxy.h"

#define DEFAULT_STEPS 20
#define DEFAULT_COMPUTE_US 2000

static const nn_tool_info info = {
    "halo3d",
    "Proxy of LULESH (seed 000): 3-D halo exchange of the 6 faces with compute on the local "
    "cube and an occasional MPI_Allreduce, one row per application run.",
    "Stands for Lulesh in seed 000 (Sec. II: finite differences with local communication "
    "phases interleaved by intensive computation, a 22^3 cube per process; Sec. V: cubic "
    "rank counts only; Sec. IV-D: moderately sensitive to switch load) and for the "
    "stencil codes of seed 002 (Nekbone/Nek5000, Sec. II-B, Table I: medium point-to-point, "
    "light collectives). The ranks form a 3-D grid (MPI_Dims_create and MPI_Cart_create, "
    "not periodic, as LULESH's free surfaces; --grid cube demands a cubic rank count as "
    "LULESH does). Each rank owns an n^3 cube (n = --size) of --fields double fields. One "
    "step: MPI_Irecv/MPI_Isend of the 6 faces (n^2 x fields doubles each, to the ranks that "
    "exist in that direction) and MPI_Waitall; the compute phase (arith: an explicit "
    "diffusion step with a cubic damping term on every field); every --allreduce-every steps "
    "an MPI_Allreduce (MIN) of the stable time step, as LULESH reduces dt. Message volume per "
    "step and rank: (faces with a neighbour) x n^2 x fields x 8 bytes (default n=32, 3 fields: "
    "24 KiB per face; on 4 ranks, a 2x2x1 grid, 2 faces, 48 KiB per rank and step, about 8 ms "
    "at 50 Mbit/s against 2 ms of computation). In spin and sleep modes the faces carry the "
    "unchanged initial fields and the reduced value comes from the packed faces."
    PROXY_METHOD_TAIL,
};

typedef struct {
    int n, fields, every;
    size_t L3;       /* (n+2)^3 */
    double **u, **w; /* per field: current and next, with one ghost layer */
    double *sendbuf[6], *recvbuf[6];
    int nbr[6]; /* face 2d: minus side of dimension d, 2d+1: plus side */
    int coords[3], dims[3];
    double dt, local_max;
    uint64_t seed;
} app_t;

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    int n = app->n;
    for (int f = 0; f < app->fields; f++) {
        memset(app->u[f], 0, app->L3 * sizeof(double));
        memset(app->w[f], 0, app->L3 * sizeof(double));
        nn_rng rng;
        nn_rng_seed(&rng, app->seed, (uint64_t)p->rank * (uint64_t)app->fields + (uint64_t)f);
        for (int z = 1; z <= n; z++)
            for (int y = 1; y <= n; y++)
                for (int x = 1; x <= n; x++)
                    app->u[f][PROXY_AT3(n, x, y, z)] = 2.0 * nn_rng_uniform(&rng) - 1.0;
    }
    app->dt = 1.0;
}

static void exchange(app_t *app, proxy *p)
{
    const size_t face = (size_t)app->n * (size_t)app->n;
    const int count = (int)(face * (size_t)app->fields);
    double maxabs = 0.0;
    for (int s = 0; s < 6; s++) {
        int d = s / 2, c = s % 2 ? app->n : 1;
        for (int f = 0; f < app->fields; f++)
            proxy_face_copy(app->n, app->u[f], d, c, app->sendbuf[s] + f * face, 1);
        for (int k = 0; k < count; k++)
            maxabs = fmax(maxabs, fabs(app->sendbuf[s][k]));
    }
    proxy_halo6(p, app->sendbuf, app->recvbuf, app->nbr, count);
    for (int s = 0; s < 6; s++) {
        if (app->nbr[s] == MPI_PROC_NULL)
            continue; /* free surface: the ghost layer stays zero */
        int d = s / 2, c = s % 2 ? app->n + 1 : 0;
        for (int f = 0; f < app->fields; f++)
            proxy_face_copy(app->n, app->u[f], d, c, app->recvbuf[s] + f * face, 0);
    }
    if (p->mode != PROXY_ARITH)
        app->local_max = maxabs;
}

/* Explicit diffusion with cubic damping and a weak coupling of the fields;
 * records the largest magnitude for the time-step constraint. */
static void kernel(app_t *app)
{
    int n = app->n;
    const double c = 0.1 * app->dt;
    const size_t sx = 1, sy = (size_t)n + 2, sz = sy * sy;
    double maxabs = 0.0;
    for (int f = 0; f < app->fields; f++) {
        const double *u = app->u[f], *o = app->u[(f + 1) % app->fields];
        double *w = app->w[f];
        for (int z = 1; z <= n; z++)
            for (int y = 1; y <= n; y++)
                for (int x = 1; x <= n; x++) {
                    size_t i = PROXY_AT3(n, x, y, z);
                    double lap = u[i - sx] + u[i + sx] + u[i - sy] + u[i + sy] + u[i - sz] +
                                 u[i + sz] - 6.0 * u[i];
                    double nu = u[i] + c * lap - 0.01 * u[i] * u[i] * u[i] + 0.01 * (o[i] - u[i]);
                    w[i] = nu;
                    maxabs = fmax(maxabs, fabs(nu));
                }
    }
    for (int f = 0; f < app->fields; f++) {
        double *t = app->u[f];
        app->u[f] = app->w[f];
        app->w[f] = t;
    }
    app->local_max = maxabs;
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    for (long s = 0; s < p->steps; s++) {
        exchange(app, p);
        PROXY_COMPUTE(p, 1.0, kernel(app));
        if ((s + 1) % app->every == 0) {
            double local_dt = 1.0 / (1.0 + app->local_max), dt;
            PROXY_MPI(p, MPI_Allreduce(&local_dt, &dt, 1, MPI_DOUBLE, MPI_MIN, p->comm));
            proxy_count_collective(p, sizeof(double));
            app->dt = dt;
        }
    }
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    int n = app->n;
    double s = 0.0;
    for (int f = 0; f < app->fields; f++)
        for (int z = 1; z <= n; z++)
            for (int y = 1; y <= n; y++)
                for (int x = 1; x <= n; x++)
                    s += app->u[f][PROXY_AT3(n, x, y, z)] *
                         (double)((x * 3 + y * 5 + z * 7 + f) % 13 + 1);
    return proxy_sum(p, s) + app->dt;
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 32, fields = 3, every = 5;
    const char *grid = "auto";
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 2, 512, NULL,
         "edge n of the local cube of each rank (default 32)"},
        {"fields", NN_OPT_LONG, &fields, 1, 64, NULL,
         "double fields per point, all sent in the same face messages (default 3)"},
        {"allreduce-every", NN_OPT_LONG, &every, 1, 1e7, NULL,
         "steps between MPI_Allreduce calls of the time step (default 5; LULESH: 1)"},
        {"grid", NN_OPT_CHOICE, &grid, 0, 0, "auto|cube",
         "process grid: auto (MPI_Dims_create, the default) or cube (rank count must be a "
         "cube, as LULESH)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);

    proxy_check_memory(&p, 2.0 * fields * pow(size + 2.0, 3) * sizeof(double));
    app_t app = {0};
    if (strcmp(grid, "cube") == 0) {
        int c = (int)lround(cbrt((double)p.nranks));
        if (c * c * c != p.nranks)
            nn_fail_all(p.comm,
                        "halo3d: --grid cube needs a cubic number of ranks (8, 27, 64, ...), "
                        "got %d",
                        p.nranks);
        app.dims[0] = app.dims[1] = app.dims[2] = c;
    }
    const int periods[3] = {0, 0, 0};
    proxy_cart(&p, 3, app.dims, periods, app.nbr);
    MPI_CHECK(MPI_Cart_coords(p.comm, p.rank, 3, app.coords));

    app.n = (int)size;
    app.fields = (int)fields;
    app.every = (int)every;
    app.seed = (uint64_t)p.run.seed;
    app.L3 = ((size_t)size + 2) * ((size_t)size + 2) * ((size_t)size + 2);
    app.u = proxy_alloc(&p, (size_t)fields, sizeof(double *));
    app.w = proxy_alloc(&p, (size_t)fields, sizeof(double *));
    for (int f = 0; f < app.fields; f++) {
        app.u[f] = proxy_alloc(&p, app.L3, sizeof(double));
        app.w[f] = proxy_alloc(&p, app.L3, sizeof(double));
    }
    const size_t face = (size_t)size * (size_t)size * (size_t)fields;
    int faces = 0;
    for (int s = 0; s < 6; s++) {
        app.sendbuf[s] = proxy_alloc(&p, face, sizeof(double));
        app.recvbuf[s] = proxy_alloc(&p, face, sizeof(double));
        faces += app.nbr[s] != MPI_PROC_NULL;
    }

    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "fields", "%ld", fields);
    nn_meta(&out, "allreduce_every", "%ld", every);
    nn_meta(&out, "grid", "%s", grid);
    nn_meta(&out, "process_grid", "%dx%dx%d", app.dims[0], app.dims[1], app.dims[2]);
    nn_meta(&out, "domain", "%ldx%ldx%ld points", size * app.dims[0], size * app.dims[1],
            size * app.dims[2]);
    proxy_meta(&p, &out);
    nn_meta(&out, "bytes_per_step_rank0", "%.0f", (double)faces * face * sizeof(double));
    nn_meta(&out, "pattern", "%d face messages of %zu bytes per step on rank 0, MPI_Allreduce "
            "of 8 bytes every %ld steps", faces, face * sizeof(double), every);

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&p, &fn, &app, &out);
}
