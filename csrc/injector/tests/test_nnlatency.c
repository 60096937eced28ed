/*
 * Unit tests of the latency injector's core, without MPI: table and seed
 * files, configuration from the environment, the LCG (pinned values,
 * determinism, uniformity), busy-wait accuracy and the report.
 * Usage: test_nnlatency SCRATCH_DIR (an existing directory for its files)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnlat.h"

static int failures = 0, checks = 0;
static char dir[1024];

#define EXPECT(cond, ...)                                        \
    do {                                                         \
        checks++;                                                \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

static const char *path_of(const char *name)
{
    static char buf[8][1200];
    static int next = 0;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL || fputs(text, fp) < 0 || fclose(fp) != 0) {
        perror(path);
        exit(2);
    }
}

/* A table of `lines` lines whose entry i is value(i); line `odd` (1-based)
 * is replaced by `replacement` when given. */
static void write_table(const char *path, int lines, int odd, const char *replacement,
                        unsigned long long (*value)(int))
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        perror(path);
        exit(2);
    }
    for (int l = 1; l <= lines; l++) {
        if (l == odd) {
            fprintf(fp, "%s\n", replacement);
            continue;
        }
        for (int c = 0; c < NNLAT_COLS; c++)
            fprintf(fp, "%llu%s", value((l - 1) * NNLAT_COLS + c), c + 1 < NNLAT_COLS ? " " : "");
        fputc('\n', fp);
    }
    fclose(fp);
}

static unsigned long long identity(int i)
{
    return (unsigned long long)i;
}

static unsigned long long constant_200us(int i)
{
    (void)i;
    return 200000ULL;
}

static uint64_t table[NNLAT_TABLE_SIZE];

/* The table file must be rejected with a message containing want. */
static void expect_table_error(const char *name, uint64_t unit, const char *want)
{
    char err[NNLAT_ERR_MAX] = "";
    int rc = nnlat_load_table(path_of(name), unit, table, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, want) != NULL, "%s: want error containing '%s', got rc=%d '%s'",
           name, want, rc, err);
}

static void test_table(void)
{
    char err[NNLAT_ERR_MAX] = "";
    write_table(path_of("ok.tab"), NNLAT_ROWS, 0, NULL, identity);
    EXPECT(nnlat_load_table(path_of("ok.tab"), 1, table, err, sizeof err) == 0, "ok.tab: %s", err);
    int same = 1;
    for (int i = 0; i < NNLAT_TABLE_SIZE; i++)
        same &= table[i] == (uint64_t)i;
    EXPECT(same, "ok.tab: entry i must be i, in file order");
    EXPECT(nnlat_load_table(path_of("ok.tab"), 1000, table, err, sizeof err) == 0 &&
               table[4095] == 4095000,
           "unit us multiplies by 1000");

    /* Tabs, repeated spaces, CRLF and a missing final newline are tolerated. */
    FILE *fp = fopen(path_of("loose.tab"), "w");
    for (int l = 0; l < NNLAT_ROWS; l++)
        fprintf(fp, " 1\t2  3 4 5 6 7 8%s", l == NNLAT_ROWS - 1 ? "" : l == 3 ? "\r\n" : "\n");
    fclose(fp);
    EXPECT(nnlat_load_table(path_of("loose.tab"), 1, table, err, sizeof err) == 0 &&
               table[8 * 511 + 7] == 8,
           "loose.tab: %s", err);

    write_table(path_of("seven.tab"), NNLAT_ROWS, 7, "1 2 3 4 5 6 7", identity);
    expect_table_error("seven.tab", 1, "seven.tab:7: 7 values, expected 8");
    write_table(path_of("nine.tab"), NNLAT_ROWS, 300, "1 2 3 4 5 6 7 8 9", identity);
    expect_table_error("nine.tab", 1, "nine.tab:300: 9 values, expected 8");
    write_table(path_of("negative.tab"), NNLAT_ROWS, 3, "1 -5 3 4 5 6 7 8", identity);
    expect_table_error("negative.tab", 1, "negative.tab:3: value 2 '-5' is negative");
    write_table(path_of("garbage.tab"), NNLAT_ROWS, 9, "1 2 3 4 5 6 7 12a", identity);
    expect_table_error("garbage.tab", 1,
                       "garbage.tab:9: value 8 '12a' is not a non-negative integer");
    write_table(path_of("plus.tab"), NNLAT_ROWS, 1, "+1 2 3 4 5 6 7 8", identity);
    expect_table_error("plus.tab", 1, "plus.tab:1: value 1 '+1' is not a non-negative integer");
    write_table(path_of("float.tab"), NNLAT_ROWS, 2, "1.5 2 3 4 5 6 7 8", identity);
    expect_table_error("float.tab", 1, "float.tab:2: value 1 '1.5' is not");
    write_table(path_of("huge.tab"), NNLAT_ROWS, 4, "1 2 3 4 5 6 7 99999999999999999999999",
                identity);
    expect_table_error("huge.tab", 1, "huge.tab:4: value 8 '99999999999999999999999' is larger");
    write_table(path_of("limit.tab"), NNLAT_ROWS, 5, "60000000000 2 3 4 5 6 7 8", identity);
    EXPECT(nnlat_load_table(path_of("limit.tab"), 1, table, err, sizeof err) == 0,
           "60 s is the largest delay allowed: %s", err);
    expect_table_error("limit.tab", 1000, "limit.tab:5: value 1 '60000000000' is larger");
    write_table(path_of("blank.tab"), NNLAT_ROWS, 10, "", identity);
    expect_table_error("blank.tab", 1, "blank.tab:10: 0 values, expected 8");
    write_table(path_of("short.tab"), NNLAT_ROWS - 1, 0, NULL, identity);
    expect_table_error("short.tab", 1, "short.tab:512: file ends after 511 lines, expected 512");
    write_table(path_of("long.tab"), NNLAT_ROWS + 1, 0, NULL, identity);
    expect_table_error("long.tab", 1, "long.tab:513: more than 512 lines");
    write_file(path_of("empty.tab"), "");
    expect_table_error("empty.tab", 1, "empty.tab:1: file ends after 0 lines");
    char wide[3000];
    memset(wide, '1', sizeof wide - 1);
    wide[sizeof wide - 1] = '\0';
    write_table(path_of("wide.tab"), NNLAT_ROWS, 2, wide, identity);
    expect_table_error("wide.tab", 1, "wide.tab:2: line longer than");
    expect_table_error("absent.tab", 1, "absent.tab: cannot open: No such file or directory");
}

static void expect_seed(const char *text, int ok, uint64_t want, const char *msg)
{
    char err[NNLAT_ERR_MAX] = "";
    uint64_t seed = 0;
    write_file(path_of("seed"), text);
    int rc = nnlat_load_seed(path_of("seed"), &seed, err, sizeof err);
    if (ok)
        EXPECT(rc == 0 && seed == want, "seed '%s': want %llu, got rc=%d %llu %s", text,
               (unsigned long long)want, rc, (unsigned long long)seed, err);
    else
        EXPECT(rc == -1 && strstr(err, msg) != NULL, "seed '%s': want '%s', got rc=%d '%s'", text,
               msg, rc, err);
}

static void test_seed(void)
{
    expect_seed("42\n", 1, 42, NULL);
    expect_seed("  7  \n\n", 1, 7, NULL);
    expect_seed("18446744073709551615", 1, UINT64_MAX, NULL);
    expect_seed("", 0, 0, "seed:1: no integer in the file");
    expect_seed("-3\n", 0, 0, "seed:1: '-3' is negative");
    expect_seed("1 2\n", 0, 0, "seed:1: expected a single integer");
    expect_seed("1\n2\n", 0, 0, "seed:2: expected a single integer");
    expect_seed("0x10\n", 0, 0, "seed:1: '0x10' is not a non-negative integer");
    expect_seed("18446744073709551616\n", 0, 0, "does not fit in 64 bits");
    char err[NNLAT_ERR_MAX] = "";
    uint64_t seed;
    EXPECT(nnlat_load_seed(path_of("no-seed"), &seed, err, sizeof err) == -1 &&
               strstr(err, "no-seed: cannot open") != NULL,
           "missing seed file: '%s'", err);
}

static void test_lcg(void)
{
    /* Pinned: netnoise.injector.indices computes the same sequences. */
    static const unsigned want1[] = {2461, 2034, 427, 369, 2385, 3900, 3737, 314};
    static const unsigned want42[] = {3105, 627, 172, 67, 3682, 1509, 2125, 2558};
    _Atomic uint64_t a, b;
    atomic_store(&a, nnlat_mix_seed(1));
    atomic_store(&b, nnlat_mix_seed(42));
    int pinned = 1;
    for (int i = 0; i < 8; i++) {
        pinned &= nnlat_next_index(&a) == want1[i];
        pinned &= nnlat_next_index(&b) == want42[i];
    }
    EXPECT(pinned, "the first indices of seeds 1 and 42 changed");

    /* Same seed, same sequence; another seed, another sequence. */
    atomic_store(&a, nnlat_mix_seed(7));
    atomic_store(&b, nnlat_mix_seed(7));
    _Atomic uint64_t c;
    atomic_store(&c, nnlat_mix_seed(8));
    int same = 1, differ = 0, in_range = 1;
    static unsigned counts[NNLAT_TABLE_SIZE];
    unsigned prev = 0, parity_flips = 0;
    const int draws = NNLAT_TABLE_SIZE * 64;
    for (int i = 0; i < draws; i++) {
        unsigned x = nnlat_next_index(&a);
        same &= x == nnlat_next_index(&b);
        differ += x != nnlat_next_index(&c);
        in_range &= x < NNLAT_TABLE_SIZE;
        if (x < NNLAT_TABLE_SIZE)
            counts[x]++;
        parity_flips += i > 0 && (x & 1) != (prev & 1);
        prev = x;
    }
    EXPECT(same, "one seed gave two sequences");
    EXPECT(differ > draws * 0.99, "seeds 7 and 8 agree on %d of %d draws", draws - differ, draws);
    EXPECT(in_range, "an index fell outside the table");
    /* Chi-square over 4096 cells, 4095 degrees of freedom: mean 4095, sd 90.5. */
    double chi2 = 0, expected = (double)draws / NNLAT_TABLE_SIZE;
    unsigned empty = 0;
    for (int i = 0; i < NNLAT_TABLE_SIZE; i++) {
        chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
        empty += counts[i] == 0;
    }
    EXPECT(empty == 0 && chi2 < 4095 + 5 * 90.5, "indices not uniform: chi2=%.0f, %u unused",
           chi2, empty);
    /* The low bit of a power-of-two LCG alternates; the index must not. */
    double flip_rate = (double)parity_flips / (draws - 1);
    EXPECT(flip_rate > 0.48 && flip_rate < 0.52, "index parity flips at rate %.3f", flip_rate);
    printf("lcg: chi2 %.0f over 4095 dof, parity flip rate %.3f\n", chi2, flip_rate);
}

static void clear_env(void)
{
    static const char *const vars[] = {"NN_LATENCY_TABLE", "NN_LATENCY_SEED", "NN_LATENCY_UNIT",
                                       "NN_LATENCY_LEVEL", "NN_LATENCY_STRICT", "NN_LATENCY_REPORT",
                                       "NN_LATENCY_WAIT", "NN_LATENCY_SLEEP_MARGIN_US",
                                       "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* Configure the library's state from the given table and seed files. */
static void configure(const char *table_name, const char *seed_name)
{
    clear_env();
    if (table_name)
        setenv("NN_LATENCY_TABLE", path_of(table_name), 1);
    if (seed_name)
        setenv("NN_LATENCY_SEED", path_of(seed_name), 1);
}

static void test_configure(void)
{
    write_file(path_of("seed42"), "42\n");
    configure(NULL, "seed42");
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && !nnlat.enabled &&
               strcmp(nnlat.reason, "NN_LATENCY_TABLE is not set") == 0,
           "no table: want disabled, got enabled=%d '%s'", nnlat.enabled, nnlat.reason);
    configure("ok.tab", NULL);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && !nnlat.enabled &&
               strstr(nnlat.reason, "NN_LATENCY_SEED is not set") != NULL,
           "no seed: '%s'", nnlat.reason);
    configure("absent.tab", "seed42");
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && !nnlat.enabled &&
               strstr(nnlat.reason, "absent.tab: cannot open") != NULL,
           "absent table, not strict: want disabled, got '%s'", nnlat.reason);
    setenv("NN_LATENCY_STRICT", "1", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == -1 && strstr(nnlat.reason, "absent.tab") != NULL,
           "absent table, strict: want fatal, got '%s'", nnlat.reason);
    configure("seven.tab", "seed42");
    setenv("NN_LATENCY_STRICT", "1", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == -1 && strstr(nnlat.reason, "seven.tab:7: 7 values") != NULL,
           "malformed table, strict: '%s'", nnlat.reason);
    configure("ok.tab", "seed42");
    setenv("NN_LATENCY_STRICT", "yes", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == -1 &&
               strstr(nnlat.reason, "NN_LATENCY_STRICT='yes': expected 0 or 1") != NULL,
           "strict=yes: '%s'", nnlat.reason);
    /* A bad setting disables the injector and says why. */
    static const struct {
        const char *variable, *value, *reason;
    } refused[] = {
        {"NN_LATENCY_LEVEL", "ib", "NN_LATENCY_LEVEL='ib': expected mpi or tcp"},
        {"NN_LATENCY_UNIT", "ms", "NN_LATENCY_UNIT='ms': expected ns or us"},
        {"NN_LATENCY_WAIT", "yield", "NN_LATENCY_WAIT='yield': expected spin or sleep"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        configure("ok.tab", "seed42");
        setenv(refused[i].variable, refused[i].value, 1);
        EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && !nnlat.enabled &&
                   strstr(nnlat.reason, refused[i].reason) != NULL,
               "%s=%s: '%s'", refused[i].variable, refused[i].value, nnlat.reason);
    }
    configure("ok.tab", "seed42");
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && nnlat.enabled && nnlat.wait == NNLAT_SPIN &&
               nnlat.sleep_margin_ns == 100000,
           "defaults: want spin and a 100 us margin, got %d, %llu ns", nnlat.wait,
           (unsigned long long)nnlat.sleep_margin_ns);
    static const char *const bad_margins[] = {"-1", "20us", "10001", "1e3", " "};
    for (size_t i = 0; i < sizeof bad_margins / sizeof bad_margins[0]; i++) {
        configure("ok.tab", "seed42");
        setenv("NN_LATENCY_SLEEP_MARGIN_US", bad_margins[i], 1);
        EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && !nnlat.enabled &&
                   strstr(nnlat.reason, "NN_LATENCY_SLEEP_MARGIN_US=") != NULL &&
                   strstr(nnlat.reason, "0 to 10000") != NULL,
               "margin '%s': want refused, got enabled=%d '%s'", bad_margins[i], nnlat.enabled,
               nnlat.reason);
    }
    configure("ok.tab", "seed42");
    setenv("NN_LATENCY_SLEEP_MARGIN_US", "20", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && nnlat.enabled && nnlat.sleep_margin_ns == 20000,
           "margin 20: enabled=%d %llu ns '%s'", nnlat.enabled,
           (unsigned long long)nnlat.sleep_margin_ns, nnlat.reason);

    configure("ok.tab", "seed42");
    setenv("NN_LATENCY_UNIT", "us", 1);
    setenv("NN_LATENCY_LEVEL", "tcp", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && nnlat.enabled && nnlat.level == NNLAT_TCP &&
               nnlat.seed == 42 && nnlat.table[1] == 1000 && nnlat.table_mean_ns == 2047500.0 &&
               nnlat.table_max_ns == 4095000,
           "us table, tcp level: enabled=%d level=%d mean=%f '%s'", nnlat.enabled, nnlat.level,
           nnlat.table_mean_ns, nnlat.reason);

    /* %r takes the rank from the launcher's environment. */
    write_file(path_of("seed.3"), "3\n");
    configure("ok.tab", NULL);
    setenv("NN_LATENCY_SEED", path_of("seed.%r"), 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && nnlat.enabled && nnlat.rank == 3 && nnlat.seed == 3,
           "seed.%%r with rank 3: '%s'", nnlat.reason);

    char out[64];
    EXPECT(nnlat_expand_path("a%rb.%r", 5, out, sizeof out) == 0 && strcmp(out, "a5b.5") == 0,
           "expand %%r: '%s'", out);
    EXPECT(nnlat_expand_path("100%%r", 5, out, sizeof out) == 0 && strcmp(out, "100%r") == 0,
           "expand %%%%: '%s'", out);
    char want[64];
    snprintf(want, sizeof want, "r%ld.txt", (long)getpid());
    EXPECT(nnlat_expand_path("r%p.txt", 1, out, sizeof out) == 0 && strcmp(out, want) == 0,
           "expand %%p: '%s'", out);
    snprintf(want, sizeof want, "x.p%ld", (long)getpid());
    EXPECT(nnlat_expand_path("x.%r", -1, out, sizeof out) == 0 && strcmp(out, want) == 0,
           "expand %%r without a rank: '%s'", out);
    EXPECT(nnlat_expand_path("0123456789", 0, out, 10) == -1, "expansion overflow not detected");
}

/* Same seed, same delays: two configurations draw identical sequences,
 * which follow the table through the pinned generator. */
static void test_delay_sequence(void)
{
    enum { N = 2000 };
    static uint64_t first[N];
    int same = 1, follows = 1;
    for (int run = 0; run < 2; run++) {
        configure("ok.tab", "seed42");
        if (nnlat_configure(&nnlat, nnlat_rank_from_env()) != 0 || !nnlat.enabled) {
            EXPECT(0, "configure: %s", nnlat.reason);
            return;
        }
        uint64_t x = nnlat_mix_seed(42);
        for (int i = 0; i < N; i++) {
            uint64_t before = atomic_load(&nnlat.drawn_ns);
            nnlat_inject();
            uint64_t delay = atomic_load(&nnlat.drawn_ns) - before;
            x = nnlat_lcg_step(x);
            follows &= delay == (uint64_t)nnlat_index_of(x); /* ok.tab: entry i is i ns */
            if (run == 0)
                first[i] = delay;
            else
                same &= first[i] == delay;
        }
        EXPECT(atomic_load(&nnlat.delays) == N, "delays counted: %llu",
               (unsigned long long)atomic_load(&nnlat.delays));
        EXPECT(atomic_load(&nnlat.spent_ns) >= atomic_load(&nnlat.drawn_ns),
               "spent less time than drawn");
    }
    EXPECT(same, "the same seed gave two delay sequences");
    EXPECT(follows, "the delays do not follow table[index(LCG)]");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Times reps waits of ns each into got, sorted; returns how many ended early
 * by the wait's own account or by the clock. */
static int time_waits(uint64_t (*wait_until)(uint64_t start, uint64_t ns), uint64_t ns,
                      uint64_t *got, int reps)
{
    int short_waits = 0;
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = nnlat_now_ns();
        uint64_t spent = wait_until(t0, ns);
        got[i] = nnlat_now_ns() - t0;
        short_waits += spent < ns || got[i] < ns;
    }
    qsort(got, (size_t)reps, sizeof got[0], cmp_u64);
    return short_waits;
}

/* Busy-wait accuracy: never shorter than asked, median overshoot small. */
static void test_spin(void)
{
    static const uint64_t delays[] = {1000, 10000, 200000};
    enum { REPS = 200 };
    for (size_t d = 0; d < sizeof delays / sizeof delays[0]; d++) {
        uint64_t got[REPS];
        int short_waits = time_waits(nnlat_spin_until, delays[d], got, REPS);
        uint64_t over = got[REPS / 2] - delays[d];
        printf("spin %6llu ns: median %llu ns (+%llu), p90 %llu ns\n",
               (unsigned long long)delays[d], (unsigned long long)got[REPS / 2],
               (unsigned long long)over, (unsigned long long)got[REPS * 9 / 10]);
        EXPECT(short_waits == 0, "%d waits of %llu ns ended early", short_waits,
               (unsigned long long)delays[d]);
        EXPECT(over < 2000, "median overshoot %llu ns for %llu ns", (unsigned long long)over,
               (unsigned long long)delays[d]);
    }

    /* Through the injector with a constant 200 us table: the report's numbers. */
    write_table(path_of("c200.tab"), NNLAT_ROWS, 0, NULL, constant_200us);
    configure("c200.tab", "seed42");
    if (nnlat_configure(&nnlat, nnlat_rank_from_env()) != 0 || !nnlat.enabled) {
        EXPECT(0, "configure c200: %s", nnlat.reason);
        return;
    }
    uint64_t per[100];
    for (int i = 0; i < 100; i++) {
        uint64_t before = atomic_load(&nnlat.spent_ns);
        nnlat_inject();
        per[i] = atomic_load(&nnlat.spent_ns) - before;
    }
    qsort(per, 100, sizeof per[0], cmp_u64);
    EXPECT(per[0] >= 200000 && per[50] < 202000, "inject 200 us: min %llu median %llu",
           (unsigned long long)per[0], (unsigned long long)per[50]);
    EXPECT(atomic_load(&nnlat.drawn_ns) == 100 * 200000ULL, "drawn total");
    EXPECT(atomic_load(&nnlat.drawn_sq_ns2) == 0.0, "a constant table drew a spread");
}

/* The text of a file of the scratch directory; -1 (and "") when it cannot be read. */
static int read_text(const char *name, char *text, size_t len)
{
    FILE *fp = fopen(path_of(name), "r");
    text[0] = '\0';
    if (fp == NULL)
        return -1;
    text[fread(text, 1, len - 1, fp)] = '\0';
    fclose(fp);
    return 0;
}

/* Configures from the environment, ends the process's injector as at exit and
 * reads the shared report. */
static void report_at_exit(char *text, size_t len)
{
    nnlat_configure(&nnlat, nnlat_rank_from_env());
    nnlat_finish(&nnlat, 1);
    read_text("shared-report", text, len);
}

static void test_report(void)
{
    configure("ok.tab", "seed42");
    setenv("NN_LATENCY_REPORT", path_of("report.%r"), 1);
    setenv("PMI_RANK", "2", 1);
    if (nnlat_configure(&nnlat, nnlat_rank_from_env()) != 0 || !nnlat.enabled) {
        EXPECT(0, "configure: %s", nnlat.reason);
        return;
    }
    for (int i = 0; i < 10; i++)
        nnlat_inject();
    /* The realised spread: entry i of ok.tab is i ns, so the drawn delays are the
     * first ten indices of seed 42. */
    double sum = 0, sumsq = 0;
    uint64_t state = nnlat_mix_seed(42);
    for (int i = 0; i < 10; i++) {
        state = nnlat_lcg_step(state);
        const double d = (double)nnlat_index_of(state);
        sum += d;
        sumsq += d * d;
    }
    char drawn_std[64];
    snprintf(drawn_std, sizeof drawn_std, "\ndrawn_std_ns=%.3f\n",
             sqrt(sumsq / 10 - (sum / 10) * (sum / 10)));
    nnlat_finish(&nnlat, 0);
    nnlat_finish(&nnlat, 0); /* second call: no-op */
    char text[4096];
    const int written = read_text("report.2", text, sizeof text) == 0;
    EXPECT(written, "report.%%r with rank 2 not written");
    if (!written)
        return;
    static const char *const want[] = {"format=nnlatency-report-1\n", "\nlevel=mpi\n",
                                       "\nenabled=1\n", "\nrank=2\n", "\nseed=42\n",
                                       "\ndelays=10\n", "\ntable_mean_ns=2047.500\n",
                                       "\ntable_max_ns=4095\n", "\nmean_ns=",
                                       "\nlate_delays=", "\nontime_mean_ns="};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        EXPECT(strstr(text, want[i]) != NULL, "report lacks '%s':\n%s", want[i], text);
    EXPECT(strstr(text, drawn_std) != NULL, "report lacks '%s':\n%s", drawn_std, text);
    EXPECT(strstr(text, "\nstd_ns=") != NULL, "report lacks std_ns:\n%s", text);

    /* Without %r only rank 0 writes. */
    configure("absent.tab", "seed42");
    setenv("NN_LATENCY_REPORT", path_of("shared-report"), 1);
    setenv("PMI_RANK", "1", 1);
    nnlat_configure(&nnlat, nnlat_rank_from_env());
    nnlat_finish(&nnlat, 0);
    EXPECT(access(path_of("shared-report"), F_OK) != 0, "rank 1 wrote a report without %%r");
    setenv("PMI_RANK", "0", 1);
    report_at_exit(text, sizeof text);
    EXPECT(strstr(text, "\nenabled=0\ndisabled_reason=distribution table ") != NULL,
           "disabled report:\n%s", text);

    /* At exit, a process without delays (a wrapper script, say) keeps it. */
    setenv("NN_LATENCY_LEVEL", "tcp", 1);
    report_at_exit(text, sizeof text);
    EXPECT(strstr(text, "\nlevel=mpi\n") != NULL, "a process without delays replaced the report");
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A sleeping wait with the default 100 us margin. */
static uint64_t sleep_until(uint64_t start, uint64_t ns)
{
    return nnlat_sleep_until(start, ns, 100000);
}

/* Sleeping waits: never shorter than asked, and the core is given away for
 * all but the last margin of each wait. */
static void test_sleep(void)
{
    static const uint64_t delays[] = {20000, 200000, 5000000};
    enum { REPS = 40 };
    for (size_t d = 0; d < sizeof delays / sizeof delays[0]; d++) {
        uint64_t got[REPS];
        double wall0 = (double)nnlat_now_ns() * 1e-9, cpu0 = cpu_seconds();
        int short_waits = time_waits(sleep_until, delays[d], got, REPS);
        double wall = (double)nnlat_now_ns() * 1e-9 - wall0, cpu = cpu_seconds() - cpu0;
        printf("sleep %7llu ns: median %llu ns, cpu %.0f%% of the wall time\n",
               (unsigned long long)delays[d], (unsigned long long)got[REPS / 2],
               100 * cpu / wall);
        EXPECT(short_waits == 0, "%d sleeping waits of %llu ns ended early", short_waits,
               (unsigned long long)delays[d]);
        /* 5 ms waits spin at most their last 100 us (2 %); allow for the
         * wake-up and for a busy machine's late wake-ups that spin longer. */
        if (delays[d] == 5000000)
            EXPECT(cpu < 0.25 * wall, "5 ms sleeping waits used %.0f%% of a core",
                   100 * cpu / wall);
    }
    configure("ok.tab", "seed42");
    setenv("NN_LATENCY_WAIT", "sleep", 1);
    EXPECT(nnlat_configure(&nnlat, nnlat_rank_from_env()) == 0 && nnlat.enabled && nnlat.wait == NNLAT_SLEEP,
           "wait=sleep: enabled=%d wait=%d '%s'", nnlat.enabled, nnlat.wait, nnlat.reason);
    char report[NNLAT_PATH_MAX], err[NNLAT_ERR_MAX];
    snprintf(report, sizeof report, "%s", path_of("sleep.report"));
    EXPECT(nnlat_write_report(&nnlat, report, err, sizeof err) == 0, "report: %s", err);
    FILE *fp = fopen(report, "r");
    char line[256];
    int found = 0;
    while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
        found += strcmp(line, "wait=sleep\n") == 0 || strcmp(line, "sleep_margin_us=100\n") == 0;
    if (fp != NULL)
        fclose(fp);
    EXPECT(found == 2, "the report of a sleeping injector lacks wait=sleep or its margin");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_nnlatency SCRATCH_DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    test_table();
    test_seed();
    test_lcg();
    test_configure();
    test_delay_sequence();
    test_spin();
    test_sleep();
    test_report();
    clear_env();
    printf("test_nnlatency: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
