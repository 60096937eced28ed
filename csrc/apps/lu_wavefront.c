/*
 * lu_wavefront: pipelined Gauss-Seidel wavefront sweeps on a 2-D process
 * grid, many small latency-bound messages (NPB LU-like).
 *
 * Seed 004, Sec. 4, 6 and 7: NPB LU (lower-upper Gauss-Seidel) is the
 * application hurt most by injected latency: its runtime roughly doubles
 * with a higher latency mean and grows 3.5 times with a higher latency
 * variation (Sec. 6, Fig. 11, 12; Sec. 7, Table 4). NPB LU decomposes the
 * x-y plane over a 2-D process grid and pipelines its SSOR sweeps over the
 * z planes: for every plane a rank waits for one boundary line from its
 * west and north neighbours, relaxes its block and passes its east and
 * south boundary on (the upper sweep runs the other way), so the wavefront
 * crosses the grid diagonally with one small message per plane and
 * neighbour.
 */
#include "proxy.h"

#define DEFAULT_STEPS 10
#define DEFAULT_COMPUTE_US 2000

static const nn_tool_info info = {
    "lu_wavefront",
    "Proxy of NPB LU (seed 004): pipelined SSOR wavefront sweeps over a 2-D process grid, "
    "many small latency-bound messages, one row per application run.",
    "Stands for NPB LU in seed 004 (Sec. 4, Table 3; Sec. 6, Fig. 11-12: the most latency "
    "sensitive application, 2x slower with a higher latency mean and 3.5x with a higher "
    "latency variation). The ranks form a 2-D grid (MPI_Dims_create, MPI_Cart_create, not "
    "periodic); each owns an n x n x nz block (n = --size, nz = --planes) of 5 doubles per "
    "point (NPB LU's 5 conserved variables). One step is one SSOR iteration: the right-hand "
    "side (compute) after an MPI_Isend/MPI_Irecv exchange of the 4 lateral faces (nz x n x 5 "
    "doubles each, NPB's exchange_3); the lower sweep over the planes k = 0..nz-1: MPI_Recv "
    "of one boundary line (n x 5 doubles) from the west and the north neighbour, relaxation "
    "of the plane (compute), MPI_Send of the east and south boundary lines; the upper sweep "
    "from k = nz-1 down, receiving from east and south and sending west and north. The "
    "wavefront thus crosses the grid diagonally with 4 x nz small messages per step on an "
    "interior rank, each waiting for the previous one: runtime follows the latency of small "
    "messages. Message volume per step and rank: (lateral neighbours) x nz x n x 40 bytes "
    "plus up to 4 x nz messages of n x 40 bytes (default n=16, nz=32 on 4 ranks, a 2x2 grid: "
    "40 KiB of faces and 64 sweep messages of 640 bytes, 80 KiB per rank and step). In spin "
    "and sleep modes --compute-us per step is split 20% right-hand side and 80% over the "
    "2 x nz plane relaxations (sleep overshoot of these short waits is paid back over the "
    "run), and the messages carry the unchanged initial solution."
    PROXY_METHOD_TAIL,
};

enum { NV = 5, WEST, EAST, NORTH, SOUTH };
static const double RHS_SHARE = 0.2, SWEEP_SHARE = 0.8;

typedef struct {
    int n, nz;
    size_t row, plane; /* doubles per ghosted row and plane */
    double *u, *rhs;
    double *line_out, *line_in; /* one boundary line */
    double *face_out[4], *face_in[4];
    int west, east, north, south;
    double m[NV][NV];
    uint64_t seed;
} app_t;

static inline size_t at(const app_t *app, int k, int j, int i)
{
    return (size_t)k * app->plane + (size_t)j * app->row + (size_t)i * NV;
}

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    memset(app->u, 0, (size_t)app->nz * app->plane * sizeof(double));
    memset(app->rhs, 0, (size_t)app->nz * app->plane * sizeof(double));
    nn_rng rng;
    nn_rng_seed(&rng, app->seed, (uint64_t)p->rank);
    for (int k = 0; k < app->nz; k++)
        for (int j = 1; j <= app->n; j++)
            for (int i = 1; i <= app->n; i++)
                for (int c = 0; c < NV; c++)
                    app->u[at(app, k, j, i) + c] = 2.0 * nn_rng_uniform(&rng) - 1.0;
}

/* Copies column i = fixed (column != 0) or row j = fixed of plane k. */
static void line_copy(app_t *app, int k, int column, int fixed, double *buf, int pack)
{
    size_t o = 0;
    for (int s = 1; s <= app->n; s++, o += NV) {
        double *pt = app->u + (column ? at(app, k, s, fixed) : at(app, k, fixed, s));
        if (pack)
            memcpy(buf + o, pt, NV * sizeof(double));
        else
            memcpy(pt, buf + o, NV * sizeof(double));
    }
}

static void face_copy(app_t *app, int column, int fixed, double *buf, int pack)
{
    for (int k = 0; k < app->nz; k++)
        line_copy(app, k, column, fixed, buf + (size_t)k * app->n * NV, pack);
}

/* exchange_3: all planes of the 4 lateral faces into the ghost lines. */
static void exchange_faces(app_t *app, proxy *p)
{
    const int count = app->nz * app->n * NV;
    const int nbr[4] = {app->west, app->east, app->north, app->south};
    /* side: 0 west (column 1), 1 east (column n), 2 north (row 1), 3 south (row n) */
    for (int s = 0; s < 4; s++)
        face_copy(app, s < 2, s % 2 ? app->n : 1, app->face_out[s], 1);
    MPI_Request req[8];
    double t0 = nn_now();
    for (int s = 0; s < 4; s++)
        MPI_CHECK(MPI_Irecv(app->face_in[s], count, MPI_DOUBLE, nbr[s], 10 + (s ^ 1), p->comm,
                            &req[s]));
    for (int s = 0; s < 4; s++) {
        MPI_CHECK(MPI_Isend(app->face_out[s], count, MPI_DOUBLE, nbr[s], 10 + s, p->comm,
                            &req[4 + s]));
        proxy_count_send(p, nbr[s], count * sizeof(double));
    }
    MPI_CHECK(MPI_Waitall(8, req, MPI_STATUSES_IGNORE));
    p->comm_s += nn_now() - t0;
    for (int s = 0; s < 4; s++)
        if (nbr[s] != MPI_PROC_NULL)
            face_copy(app, s < 2, s % 2 ? app->n + 1 : 0, app->face_in[s], 0);
}

static void compute_rhs(app_t *app)
{
    for (int k = 0; k < app->nz; k++)
        for (int j = 1; j <= app->n; j++)
            for (int i = 1; i <= app->n; i++) {
                size_t o = at(app, k, j, i);
                const double *u = app->u;
                for (int c = 0; c < NV; c++)
                    app->rhs[o + c] =
                        0.05 * (u[o - NV + c] + u[o + NV + c] + u[o - app->row + c] +
                                u[o + app->row + c] - 4.0 * u[o + c]) +
                        0.01 * (double)(c + 1);
            }
}

/* Relaxes plane k in sweep order: lower (dir = +1) uses west, north and the
 * plane below; upper (dir = -1) east, south and the plane above. Every
 * point solves a 5x5 coupling as NPB LU's block relaxation does. */
static void relax_plane(app_t *app, int k, int dir)
{
    const int n = app->n;
    const int nzp = k - dir;
    for (int jj = 1; jj <= n; jj++)
        for (int ii = 1; ii <= n; ii++) {
            int j = dir > 0 ? jj : n + 1 - jj, i = dir > 0 ? ii : n + 1 - ii;
            size_t o = at(app, k, j, i);
            const double *a = app->u + o - dir * NV, *b = app->u + o - dir * (long)app->row;
            double acc[NV], old[NV];
            for (int c = 0; c < NV; c++) {
                double below = nzp >= 0 && nzp < app->nz ? app->u[at(app, nzp, j, i) + c] : 0.0;
                acc[c] = app->rhs[o + c] + 0.2 * (a[c] + b[c] + below);
                old[c] = app->u[o + c];
            }
            for (int c = 0; c < NV; c++) {
                double mix = 0.0;
                for (int w = 0; w < NV; w++)
                    mix += app->m[c][w] * old[w];
                app->u[o + c] = 0.5 * acc[c] + 0.06 * mix;
            }
        }
}

static void sweep(app_t *app, proxy *p, int dir)
{
    const int count = app->n * NV;
    const int from_x = dir > 0 ? app->west : app->east, from_y = dir > 0 ? app->north : app->south;
    const int to_x = dir > 0 ? app->east : app->west, to_y = dir > 0 ? app->south : app->north;
    const int ghost_x = dir > 0 ? 0 : app->n + 1, ghost_y = ghost_x;
    const int edge_x = dir > 0 ? app->n : 1, edge_y = edge_x;
    const int tag_x = dir > 0 ? 0 : 2, tag_y = tag_x + 1;
    const double share = SWEEP_SHARE / (2.0 * app->nz);
    for (int kk = 0; kk < app->nz; kk++) {
        int k = dir > 0 ? kk : app->nz - 1 - kk;
        if (from_x != MPI_PROC_NULL) {
            PROXY_MPI(p, MPI_Recv(app->line_in, count, MPI_DOUBLE, from_x, tag_x, p->comm,
                                  MPI_STATUS_IGNORE));
            line_copy(app, k, 1, ghost_x, app->line_in, 0);
        }
        if (from_y != MPI_PROC_NULL) {
            PROXY_MPI(p, MPI_Recv(app->line_in, count, MPI_DOUBLE, from_y, tag_y, p->comm,
                                  MPI_STATUS_IGNORE));
            line_copy(app, k, 0, ghost_y, app->line_in, 0);
        }
        PROXY_COMPUTE(p, share, relax_plane(app, k, dir));
        if (to_x != MPI_PROC_NULL) {
            line_copy(app, k, 1, edge_x, app->line_out, 1);
            PROXY_MPI(p, MPI_Send(app->line_out, count, MPI_DOUBLE, to_x, tag_x, p->comm));
            proxy_count_send(p, to_x, count * sizeof(double));
        }
        if (to_y != MPI_PROC_NULL) {
            line_copy(app, k, 0, edge_y, app->line_out, 1);
            PROXY_MPI(p, MPI_Send(app->line_out, count, MPI_DOUBLE, to_y, tag_y, p->comm));
            proxy_count_send(p, to_y, count * sizeof(double));
        }
    }
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    for (long s = 0; s < p->steps; s++) {
        exchange_faces(app, p);
        PROXY_COMPUTE(p, RHS_SHARE, compute_rhs(app));
        sweep(app, p, +1);
        sweep(app, p, -1);
    }
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    double s = 0.0;
    for (int k = 0; k < app->nz; k++)
        for (int j = 1; j <= app->n; j++)
            for (int i = 1; i <= app->n; i++)
                for (int c = 0; c < NV; c++)
                    s += app->u[at(app, k, j, i) + c] * (double)((i + 2 * j + 3 * k + c) % 9 + 1);
    return proxy_sum(p, s);
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 16, planes = 32;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 1, 4096, NULL,
         "edge n of the local x-y block of each rank (a sweep message is n x 40 bytes; "
         "default 16)"},
        {"planes", NN_OPT_LONG, &planes, 1, 4096, NULL,
         "z planes nz of the block: pipeline stages, 4 x nz sweep messages per step "
         "(default 32)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);
    proxy_check_memory(&p, 2.0 * planes * (size + 2.0) * (size + 2.0) * NV * sizeof(double));

    app_t app = {0};
    int dims[2] = {0, 0}, nbr[4];
    const int periods[2] = {0, 0};
    proxy_cart(&p, 2, dims, periods, nbr);
    app.west = nbr[0];
    app.east = nbr[1];
    app.north = nbr[2];
    app.south = nbr[3];

    app.n = (int)size;
    app.nz = (int)planes;
    app.seed = (uint64_t)p.run.seed;
    app.row = ((size_t)size + 2) * NV;
    app.plane = ((size_t)size + 2) * app.row;
    app.u = proxy_alloc(&p, (size_t)planes * app.plane, sizeof(double));
    app.rhs = proxy_alloc(&p, (size_t)planes * app.plane, sizeof(double));
    app.line_in = proxy_alloc(&p, (size_t)size * NV, sizeof(double));
    app.line_out = proxy_alloc(&p, (size_t)size * NV, sizeof(double));
    for (int s = 0; s < 4; s++) {
        app.face_in[s] = proxy_alloc(&p, (size_t)planes * size * NV, sizeof(double));
        app.face_out[s] = proxy_alloc(&p, (size_t)planes * size * NV, sizeof(double));
    }
    for (int c = 0; c < NV; c++)
        for (int w = 0; w < NV; w++)
            app.m[c][w] = (double)((c + 1) * (w + 2) % 7 - 3) / 3.0;

    int lateral = 0;
    for (int s = 0; s < 4; s++)
        lateral += nbr[s] != MPI_PROC_NULL;
    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "planes", "%ld", planes);
    nn_meta(&out, "process_grid", "%dx%d", dims[0], dims[1]);
    nn_meta(&out, "domain", "%ldx%ldx%ld points, 5 doubles each", size * dims[0],
            size * dims[1], planes);
    proxy_meta(&p, &out);
    nn_meta(&out, "compute_split", "right-hand side %.0f%%, plane relaxations %.0f%%",
            RHS_SHARE * 100, SWEEP_SHARE * 100);
    nn_meta(&out, "bytes_per_step_rank0", "%.0f",
            (double)lateral * planes * size * NV * sizeof(double) +
                (double)lateral * planes * size * NV * sizeof(double));
    nn_meta(&out, "pattern", "%d face messages of %zu bytes and %ld sweep messages of %zu bytes "
            "per step on rank 0 (an interior rank sends %ld)", lateral,
            (size_t)planes * size * NV * sizeof(double), lateral * planes,
            (size_t)size * NV * sizeof(double), 4 * planes);

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&p, &fn, &app, &out);
}
