/*
 * Shared code of the netnoise proxy applications, declared in proxy.h:
 * compiled once and linked into every application of csrc/apps.
 */
#include "proxy.h"

void proxy_defaults(proxy *p, long steps, double compute_us)
{
    memset(p, 0, sizeof *p);
    p->run = (nn_run_options)NN_RUN_DEFAULTS(1, 1);
    p->compute = "sleep";
    p->compute_us = compute_us;
    p->steps = steps;
    p->cart = MPI_COMM_NULL;
}

/* The application's options, then those every application shares, into p->options. */
static void join_options(proxy *p, const nn_option *opts, const char *tool)
{
    snprintf(p->steps_help, sizeof p->steps_help,
             "application steps (iterations, cycles, sweeps) of one run; one row per run "
             "(default %ld)",
             p->steps);
    snprintf(p->compute_us_help, sizeof p->compute_us_help,
             "computation time per step in microseconds for --compute spin and sleep (default %g)",
             p->compute_us);
    const nn_option shared[] = {
        {"steps", NN_OPT_LONG, &p->steps, 1, 1e7, NULL, p->steps_help},
        {"compute", NN_OPT_CHOICE, &p->compute, 0, 0, "arith|spin|sleep",
         "computation phase of every step: 'arith' runs the application's own floating-point "
         "kernel on its local data (its cost follows --size; --compute-us is ignored); 'spin' "
         "busy-waits --compute-us per step on the monotonic clock; 'sleep' sleeps --compute-us "
         "per step, leaving the core free so that 2 cores can host 8-16 emulated nodes (sleep "
         "overshoot is paid back on the following sleeps of the run). In spin and sleep modes "
         "the messages still carry the application's data with the same sizes, partners and "
         "dependencies (default sleep)"},
        {"compute-us", NN_OPT_DOUBLE, &p->compute_us, 0, 1e7, NULL, p->compute_us_help},
        {"compute-jitter", NN_OPT_DOUBLE, &p->compute_jitter, 0, 0.95, NULL,
         "spread of every compute phase in spin and sleep modes: its length is drawn uniformly "
         "from (1 - J, 1 + J) times its share of --compute-us, per rank and phase from --seed, as "
         "the OS and load imbalance vary a real application's phases; 0 keeps every phase exact "
         "(default 0)"},
        NN_RUN_OPTIONS(&p->run),
        NN_PRECISION_OPTIONS(&p->run),
        NN_OPTIONS_END,
    };
    size_t n = 0;
    while (opts[n].name != NULL)
        n++;
    if (n + sizeof shared / sizeof shared[0] > PROXY_MAX_OPTIONS) {
        fprintf(stderr, "%s: more than %d options\n", tool, PROXY_MAX_OPTIONS);
        exit(2);
    }
    memcpy(p->options, opts, n * sizeof *opts);
    memcpy(p->options + n, shared, sizeof shared);
}

void proxy_begin(proxy *p, int *argc, char ***argv, const nn_option *opts,
                 const nn_tool_info *info)
{
    join_options(p, opts, info->tool);
    p->bench = (nn_bench){.info = info, .opts = p->options, .run = &p->run, .ranks = 2,
                          .ranks_why = "a proxy application must communicate"};
    nn_bench_begin(&p->bench, argc, argv);
    p->tool = info->tool;
    p->comm = MPI_COMM_WORLD;
    p->rank = p->bench.rank;
    p->nranks = p->bench.nranks;
    p->mode = strcmp(p->compute, "arith") == 0  ? PROXY_ARITH
              : strcmp(p->compute, "spin") == 0 ? PROXY_SPIN
                                                : PROXY_SLEEP;
    nn_rng_seed(&p->jitter, (uint64_t)p->run.seed, (uint64_t)p->rank + 1);
}

void proxy_cart(proxy *p, int ndims, int dims[], const int periods[], int nbr[])
{
    MPI_CHECK(MPI_Dims_create(p->nranks, ndims, dims));
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &p->cart));
    p->comm = p->cart;
    MPI_CHECK(MPI_Comm_rank(p->cart, &p->rank));
    for (int d = 0; d < ndims; d++)
        MPI_CHECK(MPI_Cart_shift(p->cart, d, 1, &nbr[2 * d], &nbr[2 * d + 1]));
}

void proxy_writer(const proxy *p, nn_writer *w)
{
    nn_bench_writer(&p->bench, w, p->comm, NULL);
}

/* Zeroes the per-run accounting. */
static void proxy_run_reset(proxy *p)
{
    p->comm_s = p->compute_s = p->sent_bytes = p->messages = 0.0;
    p->sleep_debt_ns = 0;
}

void proxy_wait_ns(proxy *p, long long ns)
{
    if (ns <= 0)
        return;
    if (p->mode == PROXY_SPIN) {
        nn_spin_ns(ns);
        return;
    }
    long long want = ns - p->sleep_debt_ns;
    if (want <= 0) {
        p->sleep_debt_ns = -want;
        return;
    }
    long long t0 = nn_now_ns();
    nn_sleep_ns(want);
    p->sleep_debt_ns = nn_now_ns() - t0 - want;
}

void proxy_wait_progress(proxy *p, long long ns, MPI_Request *reqs, int n)
{
    const long long slice = 200000;
    while (ns > 0) {
        long long now = ns < slice ? ns : slice;
        proxy_wait_ns(p, now);
        ns -= now;
        if (n > 0) {
            int flag;
            double t0 = nn_now();
            MPI_CHECK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
            p->comm_s += nn_now() - t0;
        }
    }
}

long long proxy_share_ns(proxy *p, double fraction)
{
    double scale = 1.0;
    if (p->compute_jitter > 0)
        scale += p->compute_jitter * (2.0 * nn_rng_uniform(&p->jitter) - 1.0);
    return (long long)(p->compute_us * 1e3 * fraction * scale);
}

void proxy_count_send(proxy *p, int dest, double bytes)
{
    if (dest == MPI_PROC_NULL || dest == p->rank)
        return;
    p->sent_bytes += bytes;
    p->messages += 1;
}

void proxy_require_divisible(const proxy *p, long size)
{
    if (size % p->nranks != 0)
        nn_fail_all(p->comm,
                    "%s: --size %ld must be divisible by the number of ranks %d "
                    "(%ld = %d x %ld + %ld); e.g. --size %ld",
                    p->tool, size, p->nranks, size, p->nranks, size / p->nranks,
                    size % p->nranks, (size / p->nranks + 1) * p->nranks);
}

void proxy_halo6(proxy *p, double *const send[6], double *const recv[6],
                 const int nbr[6], int count)
{
    MPI_Request req[12];
    double t0 = nn_now();
    for (int s = 0; s < 6; s++)
        MPI_CHECK(MPI_Irecv(recv[s], count, MPI_DOUBLE, nbr[s], s ^ 1, p->comm, &req[s]));
    for (int s = 0; s < 6; s++) {
        MPI_CHECK(MPI_Isend(send[s], count, MPI_DOUBLE, nbr[s], s, p->comm, &req[6 + s]));
        proxy_count_send(p, nbr[s], count * sizeof(double));
    }
    MPI_CHECK(MPI_Waitall(12, req, MPI_STATUSES_IGNORE));
    p->comm_s += nn_now() - t0;
}

void proxy_face_copy(int n, double *field, int d, int c, double *buf, int pack)
{
    size_t k = 0;
    for (int b = 1; b <= n; b++)
        for (int a = 1; a <= n; a++) {
            size_t i = d == 0   ? PROXY_AT3(n, c, a, b)
                       : d == 1 ? PROXY_AT3(n, a, c, b)
                                : PROXY_AT3(n, a, b, c);
            if (pack)
                buf[k++] = field[i];
            else
                field[i] = buf[k++];
        }
}

void proxy_count_collective(proxy *p, double bytes)
{
    p->sent_bytes += bytes;
    p->messages += 1;
}

void proxy_meta(const proxy *p, nn_writer *w)
{
    const nn_run_options *run = &p->run;
    nn_meta(w, "steps", "%ld", p->steps);
    nn_meta(w, "compute", "%s", p->compute);
    nn_meta(w, "compute_us", "%g", p->compute_us);
    nn_meta(w, "compute_jitter", "%g", p->compute_jitter);
    nn_meta(w, "warmup", "%ld", run->warmup);
    nn_meta(w, "iterations", "%ld", run->iterations);
    nn_meta(w, "ci_width", "%g", run->ci_width);
    nn_meta(w, "min_iterations", "%ld", run->min_iterations);
    nn_meta(w, "clock", "CLOCK_MONOTONIC");
    nn_meta(w, "runtime_s", "max over ranks of the wall time of the --steps steps of one run, "
                            "from a barrier on");
    nn_meta(w, "comm_s", "max over ranks of the wall time spent inside MPI calls during the run");
    nn_meta(w, "comm_mean_s", "mean over ranks of the same");
    nn_meta(w, "compute_s", "max over ranks of the wall time of the compute phases");
    nn_meta(w, "sent_bytes",
            "payload sent to other ranks during the run, summed over ranks (a collective "
            "counts the bytes each rank hands to MPI for the others)");
    nn_meta(w, "messages_count", "messages to other ranks, summed over ranks (a collective "
                                 "call counts once per rank)");
    nn_meta(w, "checksum", "deterministic digest of the final data of the run (same --seed, "
                           "ranks and options: same value)");
}

/* One application run: fresh data, a barrier, the timed steps, then the row
 * (row < 0: a warm-up run, no row); returns its runtime_s, the same on every rank. */
static double proxy_one_run(const proxy_app *fn, void *app, proxy *p, nn_writer *w, long row)
{
    fn->reset(app, p);
    proxy_run_reset(p);
    MPI_CHECK(MPI_Barrier(p->comm));
    double t0 = nn_now();
    fn->steps(app, p);
    double elapsed = nn_now() - t0;
    double sum = fn->checksum(app, p);
    double mine_max[3] = {elapsed, p->comm_s, p->compute_s}, max[3];
    double mine_sum[3] = {p->comm_s, p->sent_bytes, p->messages}, tot[3];
    MPI_CHECK(MPI_Allreduce(mine_max, max, 3, MPI_DOUBLE, MPI_MAX, p->comm));
    MPI_CHECK(MPI_Allreduce(mine_sum, tot, 3, MPI_DOUBLE, MPI_SUM, p->comm));
    if (row >= 0)
        nn_row(w, "%ld,%.6f,%.6f,%.6f,%.6f,%.0f,%.0f,%.15e", row, max[0], max[1],
               tot[0] / p->nranks, max[2], tot[1], tot[2], sum);
    return max[0];
}

int proxy_main(proxy *p, const proxy_app *fn, void *app, nn_writer *w)
{
    nn_columns(w, PROXY_COLUMNS);
    nn_loop loop;
    nn_loop_begin(&loop, &p->run, p->comm);
    while (nn_loop_warming(&loop))
        proxy_one_run(fn, app, p, w, -1);
    long row = 0;
    while (nn_loop_next(&loop))
        nn_loop_record(&loop, proxy_one_run(fn, app, p, w, row++));

    if (fn->release != NULL)
        fn->release(app);
    for (size_t i = 0; i < p->n_owned; i++)
        free(p->owned[i]);
    free(p->owned);
    p->owned = NULL;
    p->n_owned = 0;
    if (p->cart != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&p->cart));
    return nn_bench_end(w);
}

void proxy_check_memory(proxy *p, double bytes)
{
    if (bytes > (double)PROXY_MAX_MIB * 1024 * 1024)
        nn_fail_all(p->comm,
                    "%s: these options need %.0f MiB per rank, more than the limit of %d MiB; "
                    "reduce --size or the options that multiply it",
                    p->tool, bytes / (1024.0 * 1024.0), PROXY_MAX_MIB);
}

void *proxy_alloc(proxy *p, size_t n, size_t size)
{
    if (p->n_owned == p->cap_owned) {
        size_t cap = p->cap_owned ? 2 * p->cap_owned : 32;
        void **grown = realloc(p->owned, cap * sizeof *grown);
        if (grown == NULL)
            nn_fail_all(p->comm, "%s: out of memory", p->tool);
        p->owned = grown;
        p->cap_owned = cap;
    }
    void *mem = calloc(n > 0 ? n : 1, size);
    if (mem == NULL)
        nn_fail_all(p->comm, "%s: out of memory (%zu x %zu bytes)", p->tool, n, size);
    p->owned[p->n_owned++] = mem;
    return mem;
}

double proxy_sum(proxy *p, double local)
{
    double total = 0.0;
    MPI_CHECK(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, p->comm));
    return total;
}

double complex *proxy_fft_twiddles(proxy *p, size_t n)
{
    double complex *tw = proxy_alloc(p, n, sizeof *tw);
    for (size_t k = 0; k < n; k++)
        tw[k] = cexp(-2.0 * M_PI * I * (double)k / (double)n);
    return tw;
}

void proxy_fft(double complex *x, size_t n, const double complex *tw,
               double complex *scratch, int inverse)
{
    const double scale = 1.0 / sqrt((double)n);
    if ((n & (n - 1)) == 0) {
        for (size_t i = 1, j = 0; i < n; i++) {
            size_t bit = n >> 1;
            for (; j & bit; bit >>= 1)
                j ^= bit;
            j ^= bit;
            if (i < j) {
                double complex t = x[i];
                x[i] = x[j];
                x[j] = t;
            }
        }
        for (size_t len = 2; len <= n; len <<= 1) {
            size_t half = len / 2, step = n / len;
            for (size_t s = 0; s < n; s += len)
                for (size_t k = 0; k < half; k++) {
                    double complex w = inverse ? conj(tw[k * step]) : tw[k * step];
                    double complex a = x[s + k], b = x[s + k + half] * w;
                    x[s + k] = a + b;
                    x[s + k + half] = a - b;
                }
        }
        for (size_t i = 0; i < n; i++)
            x[i] *= scale;
        return;
    }
    for (size_t k = 0; k < n; k++) {
        double complex acc = 0.0;
        for (size_t j = 0; j < n; j++) {
            double complex w = tw[(j * k) % n];
            acc += x[j] * (inverse ? conj(w) : w);
        }
        scratch[k] = acc * scale;
    }
    memcpy(x, scratch, n * sizeof *x);
}

void proxy_pack_blocks(const double complex *a, double complex *send, size_t n,
                       size_t m, int nranks)
{
    for (int q = 0; q < nranks; q++)
        for (size_t i = 0; i < m; i++)
            memcpy(send + ((size_t)q * m + i) * m, a + i * n + (size_t)q * m, m * sizeof *a);
}

void proxy_unpack_transposed(const double complex *recv, double complex *t,
                             size_t n, size_t m, int nranks)
{
    for (int q = 0; q < nranks; q++) {
        const double complex *blk = recv + (size_t)q * m * m;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                t[j * n + (size_t)q * m + i] = blk[i * m + j];
    }
}

double proxy_digest_rows(const double complex *a, size_t rows, size_t n, size_t row0)
{
    double s = 0.0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < n; j++) {
            size_t g = (row0 + i) * 7 + j * 13;
            s += creal(a[i * n + j]) * (double)(g % 17 + 1) +
                 cimag(a[i * n + j]) * (double)(g % 11 + 1);
        }
    return s;
}
