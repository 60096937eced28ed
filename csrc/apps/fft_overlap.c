/*
 * fft_overlap: spectral solver step with nonblocking all-to-all transposes
 * overlapped with computation, and heavy computation between the
 * communication phases (VPFFT-like).
 *
 * Seed 000, Sec. II: "FFTW and VPFFT applications contain expensive
 * all-to-all communications. The difference between these two applications
 * is that VPFFT performs expensive computation between two communication
 * phases while FFTW does not. As such, VPFFT has some flexibility to
 * overlap communication and computation." VPFFT (an FFT-based crystal
 * plasticity code) transforms several tensor components per iteration,
 * applies a Green operator in Fourier space and a local constitutive law in
 * real space. Here --fields complex N x N fields go through: row FFTs of
 * each field while the MPI_Ialltoall of the previous field is in flight,
 * column FFTs while later fields are still in flight, the Green operator,
 * the same pipeline backwards, then the constitutive update.
 */
#include "proxy.h"

#define DEFAULT_STEPS 6
#define DEFAULT_COMPUTE_US 6000

static const nn_tool_info info = {
    "fft_overlap",
    "Proxy of VPFFT (seed 000): FFT-based solver whose all-to-all transposes overlap "
    "computation, with heavy computation between exchanges, one row per application run.",
    "Stands for VPFFT in seed 000 (Sec. II: expensive all-to-all communication like FFTW, but "
    "with expensive computation between two communication phases and some room to overlap "
    "the two; Sec. IV-D, Fig. 7: second only to FFTW in sensitivity to switch load, and less "
    "regular). Rayleigh in seed 002 (Sec. II-B, Table I: heavy large-message all-to-all, 2:1 "
    "compute to communication) has the same character. --fields complex N x N fields (N = "
    "--size) are distributed by rows. One step: for each field, row FFTs then MPI_Ialltoall "
    "(the transpose of field f travels while field f+1 is transformed; MPI_Testall drives "
    "progress during computation); for each field, wait, unpack, FFTs of the transposed rows "
    "while the later fields travel; the Green operator on all fields in Fourier space; the same "
    "pipeline with inverse FFTs back to real space; the constitutive update (Newton solve per "
    "point) on all fields. Message volume per step and rank: 2 x F x (P-1) x (N/P)^2 x 16 "
    "bytes in 2F nonblocking all-to-alls (default N=128, F=3 on 4 ranks: 288 KiB per rank and "
    "step, about 47 ms at 50 Mbit/s). In spin and sleep modes --compute-us per step is split "
    "40% FFTs (in slices of at most 200 us with MPI_Testall between them), 20% Green operator, "
    "40% constitutive update, and the data only travels through the transposes. Needs N "
    "divisible by the number of ranks."
    PROXY_METHOD_TAIL,
};

enum { MAX_FIELDS = 9 };
static const double FFT_SHARE = 0.4, GREEN_SHARE = 0.2, LAW_SHARE = 0.4;

typedef struct {
    size_t n, m;
    int fields;
    double complex *a[MAX_FIELDS], *t[MAX_FIELDS], *send[MAX_FIELDS], *recv[MAX_FIELDS];
    double complex *tw, *scratch;
    MPI_Request req[MAX_FIELDS];
    uint64_t seed;
} app_t;

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    for (int f = 0; f < app->fields; f++)
        for (size_t i = 0; i < app->m; i++) {
            size_t gi = (size_t)p->rank * app->m + i;
            nn_rng rng;
            nn_rng_seed(&rng, app->seed, (uint64_t)f * app->n + gi);
            for (size_t j = 0; j < app->n; j++) {
                double re = 2.0 * nn_rng_uniform(&rng) - 1.0;
                double im = 2.0 * nn_rng_uniform(&rng) - 1.0;
                app->a[f][i * app->n + j] = re + im * I;
            }
        }
    for (int f = 0; f < MAX_FIELDS; f++)
        app->req[f] = MPI_REQUEST_NULL;
}

/* Row FFTs of one field, driving the in-flight transposes every 4 rows. */
static void fft_phase(app_t *app, proxy *p, double complex *x, int inverse)
{
    double t0 = nn_now(), c0 = p->comm_s;
    if (p->mode == PROXY_ARITH) {
        for (size_t i = 0; i < app->m; i++) {
            proxy_fft(x + i * app->n, app->n, app->tw, app->scratch, inverse);
            if (i % 4 == 3) {
                int flag;
                PROXY_MPI(p, MPI_Testall(app->fields, app->req, &flag, MPI_STATUSES_IGNORE));
            }
        }
    } else {
        proxy_wait_progress(p, proxy_share_ns(p, FFT_SHARE / (4.0 * app->fields)), app->req,
                            app->fields);
    }
    p->compute_s += nn_now() - t0 - (p->comm_s - c0);
}

static void start_transpose(app_t *app, proxy *p, int f, const double complex *from)
{
    const int count = (int)(2 * app->m * app->m);
    proxy_pack_blocks(from, app->send[f], app->n, app->m, p->nranks);
    PROXY_MPI(p, MPI_Ialltoall(app->send[f], count, MPI_DOUBLE, app->recv[f], count, MPI_DOUBLE,
                               p->comm, &app->req[f]));
    proxy_count_collective(p, (double)(p->nranks - 1) * app->m * app->m * sizeof(double complex));
}

static void finish_transpose(app_t *app, proxy *p, int f, double complex *to)
{
    PROXY_MPI(p, MPI_Wait(&app->req[f], MPI_STATUS_IGNORE));
    proxy_unpack_transposed(app->recv[f], to, app->n, app->m, p->nranks);
}

/* Green operator in Fourier space (transposed layout: local row j is
 * wavenumber kx = rank*m + j, column i is ky): a smoothing kernel on every
 * field and removal of half the longitudinal part of the (field 0, field 1)
 * vector, as the elasticity Green operator of FFT-based solvers does. */
static void green(app_t *app, proxy *p)
{
    const double n = (double)app->n;
    for (size_t j = 0; j < app->m; j++) {
        double kx = (double)((size_t)p->rank * app->m + j);
        if (kx > n / 2)
            kx -= n;
        for (size_t i = 0; i < app->n; i++) {
            double ky = (double)i > n / 2 ? (double)i - n : (double)i;
            double k2 = kx * kx + ky * ky;
            double g = 1.0 / (1.0 + 1e-3 * k2);
            size_t at = j * app->n + i;
            for (int f = 0; f < app->fields; f++)
                app->t[f][at] *= g;
            if (app->fields >= 2 && k2 > 0) {
                double complex dot = kx * app->t[0][at] + ky * app->t[1][at];
                app->t[0][at] -= 0.5 * kx * dot / k2;
                app->t[1][at] -= 0.5 * ky * dot / k2;
            }
        }
    }
}

/* Constitutive update in real space: per point, Newton's method for
 * x^3 + x = |v|^2 (a power-law hardening), then a softening of all fields. */
static void constitutive(app_t *app)
{
    for (size_t at = 0; at < app->m * app->n; at++) {
        double s = 0.0;
        for (int f = 0; f < app->fields; f++) {
            double complex z = app->a[f][at];
            s += creal(z) * creal(z) + cimag(z) * cimag(z);
        }
        double x = s / (1.0 + s);
        for (int it = 0; it < 8; it++)
            x -= (x * x * x + x - s) / (3.0 * x * x + 1.0);
        double scale = (1.0 + x) / (1.0 + 1.25 * x);
        for (int f = 0; f < app->fields; f++)
            app->a[f][at] *= scale;
    }
}

/* The pipelined 2-D transform of every field from `from` into `to`: row FFTs
 * and the start of each field's transpose, then, field by field, the end of
 * its transpose and the FFTs of the transposed rows. */
static void transform(app_t *app, proxy *p, double complex *from[], double complex *to[],
                      int inverse)
{
    for (int f = 0; f < app->fields; f++) {
        fft_phase(app, p, from[f], inverse);
        start_transpose(app, p, f, from[f]);
    }
    for (int f = 0; f < app->fields; f++) {
        finish_transpose(app, p, f, to[f]);
        fft_phase(app, p, to[f], inverse);
    }
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    for (long s = 0; s < p->steps; s++) {
        transform(app, p, app->a, app->t, 0);
        PROXY_COMPUTE(p, GREEN_SHARE, green(app, p));
        transform(app, p, app->t, app->a, 1);
        PROXY_COMPUTE(p, LAW_SHARE, constitutive(app));
    }
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    double s = 0.0;
    for (int f = 0; f < app->fields; f++)
        s += (f + 1) * proxy_digest_rows(app->a[f], app->m, app->n, (size_t)p->rank * app->m);
    return proxy_sum(p, s);
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 128, fields = 3;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 2, 4096, NULL,
         "global edge N of each field (N x N complex doubles); must be divisible by the rank "
         "count (default 128)"},
        {"fields", NN_OPT_LONG, &fields, 1, MAX_FIELDS, NULL,
         "fields transformed per step (tensor components; each is one pipelined transpose "
         "pair; default 3)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);
    proxy_require_divisible(&p, size);

    proxy_check_memory(&p, 4.0 * fields * size * size / p.nranks * sizeof(double complex));
    app_t app = {0};
    app.n = (size_t)size;
    app.m = app.n / (size_t)p.nranks;
    app.fields = (int)fields;
    app.seed = (uint64_t)p.run.seed;
    size_t local = app.m * app.n;
    for (int f = 0; f < app.fields; f++) {
        app.a[f] = proxy_alloc(&p, local, sizeof(double complex));
        app.t[f] = proxy_alloc(&p, local, sizeof(double complex));
        app.send[f] = proxy_alloc(&p, local, sizeof(double complex));
        app.recv[f] = proxy_alloc(&p, local, sizeof(double complex));
    }
    app.scratch = proxy_alloc(&p, app.n, sizeof *app.scratch);
    app.tw = proxy_fft_twiddles(&p, app.n);

    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "fields", "%ld", fields);
    nn_meta(&out, "matrix", "%ld fields of %ld x %ld complex double, %zu rows per rank", fields,
            size, size, app.m);
    nn_meta(&out, "fft", "%s", (app.n & (app.n - 1)) == 0 ? "radix-2" : "direct O(N^2)");
    proxy_meta(&p, &out);
    nn_meta(&out, "compute_split", "FFTs %.0f%%, Green operator %.0f%%, constitutive %.0f%%",
            FFT_SHARE * 100, GREEN_SHARE * 100, LAW_SHARE * 100);
    nn_meta(&out, "bytes_per_step_rank0", "%.0f",
            2.0 * fields * (p.nranks - 1) * app.m * app.m * sizeof(double complex));
    nn_meta(&out, "pattern", "%ld x 2 MPI_Ialltoall of %zu bytes per rank pair per step", fields,
            app.m * app.m * sizeof(double complex));

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&p, &fn, &app, &out);
}
