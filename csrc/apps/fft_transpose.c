/*
 * fft_transpose: distributed 2-D FFT by transposition, no overlap (FFTW-like).
 *
 * Seed 000, Sec. II: FFTW "applied to perform a 2D transform of a 2000x2000
 * matrix"; FFTW and VPFFT "contain expensive all-to-all communications" and
 * FFTW has little room to overlap communication with computation, which
 * makes it the application most slowed by a loaded switch (Sec. IV-D,
 * Fig. 7). One step is one forward 2-D FFT of an N x N complex matrix
 * distributed by rows: row FFTs, MPI_Alltoall transpose, row FFTs (the
 * columns of the original), MPI_Alltoall transpose back. Each phase waits
 * for the previous one.
 */
#include "proxy.h"

#define DEFAULT_STEPS 10
#define DEFAULT_COMPUTE_US 2000

static const nn_tool_info info = {
    "fft_transpose",
    "Proxy of FFTW (seed 000): 2-D FFT by all-to-all transposes with no overlap, one row "
    "per application run.",
    "Stands for FFTW in seed 000 (Sec. II: 2-D transform of a 2000x2000 matrix; Sec. IV-D, "
    "Fig. 7: the application most sensitive to switch load, because its expensive all-to-all "
    "exchanges cannot overlap computation), and for NPB FT in seed 004 (Sec. 4, Table 3). "
    "The N x N complex matrix (N = --size) is distributed by rows, N/P rows per rank. One "
    "step is one forward 2-D FFT: unitary 1-D FFTs of the local rows (compute), a blocking "
    "MPI_Alltoall transpose, FFTs of the local rows of the transpose (compute), and a second "
    "MPI_Alltoall that restores the row layout. Message volume per step and rank: 2 x "
    "(P-1) x (N/P)^2 x 16 bytes in 2 all-to-alls (default N=256 on 4 ranks: 384 KiB per rank "
    "and step, 1.5 MiB per step in all; about 60 ms per step at 50 Mbit/s per rank). "
    "--compute arith runs the FFTs (radix 2 when N is a power of two, the direct O(N^2) "
    "transform otherwise); spin and sleep wait --compute-us per step, half before each "
    "transpose, and the data then only travels through the transposes (its checksum stays "
    "that of the initial matrix). The initial matrix depends on --seed and the global "
    "index only, so in arith mode the checksum does not depend on the rank count. Needs N "
    "divisible by the number of ranks."
    PROXY_METHOD_TAIL,
};

typedef struct {
    size_t n, m; /* global edge, local rows */
    double complex *a, *t, *send, *recv, *tw, *scratch;
    uint64_t seed;
} app_t;

static void reset(void *v, proxy *p)
{
    app_t *app = v;
    for (size_t i = 0; i < app->m; i++) {
        size_t gi = (size_t)p->rank * app->m + i;
        nn_rng rng;
        nn_rng_seed(&rng, app->seed, gi);
        for (size_t j = 0; j < app->n; j++) {
            double re = 2.0 * nn_rng_uniform(&rng) - 1.0;
            double im = 2.0 * nn_rng_uniform(&rng) - 1.0;
            app->a[i * app->n + j] = re + im * I;
        }
    }
}

static void row_ffts(app_t *app, double complex *x)
{
    for (size_t i = 0; i < app->m; i++)
        proxy_fft(x + i * app->n, app->n, app->tw, app->scratch, 0);
}

static void transpose(app_t *app, proxy *p, const double complex *from, double complex *to)
{
    const int count = (int)(2 * app->m * app->m);
    proxy_pack_blocks(from, app->send, app->n, app->m, p->nranks);
    PROXY_MPI(p, MPI_Alltoall(app->send, count, MPI_DOUBLE, app->recv, count, MPI_DOUBLE,
                              p->comm));
    proxy_count_collective(p, (double)(p->nranks - 1) * app->m * app->m * sizeof(double complex));
    proxy_unpack_transposed(app->recv, to, app->n, app->m, p->nranks);
}

static void steps(void *v, proxy *p)
{
    app_t *app = v;
    for (long s = 0; s < p->steps; s++) {
        PROXY_COMPUTE(p, 0.5, row_ffts(app, app->a));
        transpose(app, p, app->a, app->t);
        PROXY_COMPUTE(p, 0.5, row_ffts(app, app->t));
        transpose(app, p, app->t, app->a);
    }
}

static double checksum(void *v, proxy *p)
{
    app_t *app = v;
    return proxy_sum(p, proxy_digest_rows(app->a, app->m, app->n, (size_t)p->rank * app->m));
}

int main(int argc, char **argv)
{
    proxy p;
    proxy_defaults(&p, DEFAULT_STEPS, DEFAULT_COMPUTE_US);
    long size = 256;
    const nn_option opts[] = {
        {"size", NN_OPT_LONG, &size, 2, 4096, NULL,
         "global matrix edge N (N x N complex doubles); must be divisible by the rank count "
         "(default 256)"},
        NN_OPTIONS_END,
    };
    proxy_begin(&p, &argc, &argv, opts, &info);
    proxy_require_divisible(&p, size);

    proxy_check_memory(&p, 4.0 * size * size / p.nranks * sizeof(double complex));
    app_t app = {0};
    app.n = (size_t)size;
    app.m = app.n / (size_t)p.nranks;
    app.seed = (uint64_t)p.run.seed;
    size_t local = app.m * app.n;
    app.a = proxy_alloc(&p, local, sizeof *app.a);
    app.t = proxy_alloc(&p, local, sizeof *app.t);
    app.send = proxy_alloc(&p, local, sizeof *app.send);
    app.recv = proxy_alloc(&p, local, sizeof *app.recv);
    app.scratch = proxy_alloc(&p, app.n, sizeof *app.scratch);
    app.tw = proxy_fft_twiddles(&p, app.n);

    nn_writer out;
    proxy_writer(&p, &out);
    nn_meta(&out, "size", "%ld", size);
    nn_meta(&out, "matrix", "%ld x %ld complex double, %zu rows per rank", size, size, app.m);
    nn_meta(&out, "fft", "%s", (app.n & (app.n - 1)) == 0 ? "radix-2" : "direct O(N^2)");
    proxy_meta(&p, &out);
    nn_meta(&out, "bytes_per_step_rank0",
            "%.0f", 2.0 * (p.nranks - 1) * app.m * app.m * sizeof(double complex));
    nn_meta(&out, "pattern", "2 x MPI_Alltoall of %zu bytes per rank pair per step",
            app.m * app.m * sizeof(double complex));

    const proxy_app fn = {reset, steps, checksum, NULL};
    return proxy_main(&p, &fn, &app, &out);
}
