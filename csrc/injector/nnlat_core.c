/*
 * libnnlatency core: configuration, distribution table and seed files,
 * delay injection and the report. See nnlat.h and README.md.
 */
#include "nnlat.h"
#include "../common/nn_life.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NN_VERSION
#define NN_VERSION "0.1.0"
#endif

nnlat_state nnlat;
int nnlat_active = NNLAT_OFF;

uint64_t nnlat_draw(nnlat_state *s)
{
    uint64_t delay = s->table[nnlat_next_index(&s->lcg)];
    atomic_fetch_add_explicit(&s->delays, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->drawn_ns, delay, memory_order_relaxed);
    const double drawn_dev = (double)delay - s->table_mean_ns;
    nnlat_add_double(&s->drawn_sq_ns2, drawn_dev * drawn_dev);
    return delay;
}

void nnlat_account(nnlat_state *s, uint64_t delay, uint64_t spent)
{
    atomic_fetch_add_explicit(&s->spent_ns, spent, memory_order_relaxed);
    const double spent_dev = (double)spent - s->table_mean_ns;
    nnlat_add_double(&s->spent_sq_ns2, spent_dev * spent_dev);
    if (spent - delay > NNLAT_LATE_NS) {
        atomic_fetch_add_explicit(&s->late, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->late_ns, spent, memory_order_relaxed);
    }
}

void nnlat_inject(void)
{
    /* The clock starts before the draw: the report's spent time is every
     * nanosecond a send was held back, bookkeeping included. */
    uint64_t start = nnlat_now_ns();
    uint64_t delay = nnlat_draw(&nnlat);
    uint64_t spent = nnlat.wait == NNLAT_SLEEP
                         ? nnlat_sleep_until(start, delay, nnlat.sleep_margin_ns)
                         : nnlat_spin_until(start, delay);
    nnlat_account(&nnlat, delay, spent);
}

/* ---------------------------------------------------------------- files */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int is_sep(char c)
{
    return c == ' ' || c == '\t';
}

/* Splits line (already stripped of its end of line) into at most max
 * tokens, terminating each in place. Returns how many tokens the line has,
 * which may be more than max. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (is_sep(*p))
            p++;
        if (!*p)
            break;
        if (n < max)
            tok[n] = p;
        n++;
        while (*p && !is_sep(*p))
            p++;
        if (*p && n <= max)
            *p++ = '\0';
    }
    return n;
}

/* Strips "\n" or "\r\n"; returns 0 if the buffer held a whole line (or the
 * last line of the file), -1 if the line was longer than the buffer. */
static int strip_eol(char *buf, FILE *fp)
{
    size_t len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n') {
        buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r')
            buf[--len] = '\0';
        return 0;
    }
    return feof(fp) ? 0 : -1;
}

/* A non-negative decimal integer that fits in uint64_t: digits only. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (*s == '\0')
        return -1;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int looks_negative(const char *s)
{
    return s[0] == '-' && s[1] >= '0' && s[1] <= '9';
}

int nnlat_load_table(const char *path, uint64_t unit_ns, uint64_t table[NNLAT_TABLE_SIZE],
                     char *err, size_t errlen)
{
    const char *why = NULL;
    FILE *fp = nn_fopen_regular(path, &why);
    if (fp == NULL) {
        set_err(err, errlen, "distribution table %s: cannot open: %s", path, why);
        return -1;
    }
    char buf[NNLAT_LINE_MAX];
    int line = 0, rc = -1;
    const uint64_t limit = NNLAT_MAX_DELAY_NS / unit_ns;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        if (line++ == 0)
            nn_strip_bom(buf);
        if (line > NNLAT_ROWS) {
            set_err(err, errlen, "distribution table %s:%d: more than %d lines", path, line,
                    NNLAT_ROWS);
            goto out;
        }
        if (strip_eol(buf, fp) != 0) {
            set_err(err, errlen, "distribution table %s:%d: line longer than %d characters",
                    path, line, NNLAT_LINE_MAX - 2);
            goto out;
        }
        char *tok[NNLAT_COLS];
        int n = split(buf, tok, NNLAT_COLS);
        if (n != NNLAT_COLS) {
            set_err(err, errlen, "distribution table %s:%d: %d values, expected %d", path, line,
                    n, NNLAT_COLS);
            goto out;
        }
        for (int i = 0; i < NNLAT_COLS; i++) {
            uint64_t v;
            int bad = parse_u64(tok[i], &v);
            if (bad == 0 && v > limit)
                bad = -2;
            if (bad != 0) {
                set_err(err, errlen, "distribution table %s:%d: value %d '%.40s' %s", path,
                        line, i + 1, tok[i],
                        looks_negative(tok[i]) ? "is negative: delays are non-negative integers"
                        : bad == -2 ? "is larger than the limit of 60 s per send"
                                    : "is not a non-negative integer");
                goto out;
            }
            table[(line - 1) * NNLAT_COLS + i] = v * unit_ns;
        }
    }
    if (ferror(fp)) {
        set_err(err, errlen, "distribution table %s: read error after line %d", path, line);
    } else if (line < NNLAT_ROWS) {
        set_err(err, errlen, "distribution table %s:%d: file ends after %d lines, expected %d",
                path, line + 1, line, NNLAT_ROWS);
    } else {
        rc = 0;
    }
out:
    fclose(fp);
    return rc;
}

int nnlat_load_seed(const char *path, uint64_t *seed, char *err, size_t errlen)
{
    const char *why = NULL;
    FILE *fp = nn_fopen_regular(path, &why);
    if (fp == NULL) {
        set_err(err, errlen, "seed file %s: cannot open: %s", path, why);
        return -1;
    }
    char buf[NNLAT_LINE_MAX];
    int line = 0, found = 0, rc = -1;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        if (line++ == 0)
            nn_strip_bom(buf);
        if (strip_eol(buf, fp) != 0) {
            set_err(err, errlen, "seed file %s:%d: line longer than %d characters", path, line,
                    NNLAT_LINE_MAX - 2);
            goto out;
        }
        char *tok[2];
        int n = split(buf, tok, 2);
        if (n == 0)
            continue;
        if (found || n > 1) {
            set_err(err, errlen, "seed file %s:%d: expected a single integer in the file", path,
                    line);
            goto out;
        }
        int bad = parse_u64(tok[0], seed);
        if (bad != 0) {
            set_err(err, errlen, "seed file %s:%d: '%.40s' %s", path, line, tok[0],
                    looks_negative(tok[0]) ? "is negative: the seed is a non-negative integer"
                    : bad == -2            ? "does not fit in 64 bits"
                                           : "is not a non-negative integer");
            goto out;
        }
        found = 1;
    }
    if (ferror(fp))
        set_err(err, errlen, "seed file %s: read error after line %d", path, line);
    else if (!found)
        set_err(err, errlen, "seed file %s:%d: no integer in the file", path, line + 1);
    else
        rc = 0;
out:
    fclose(fp);
    return rc;
}

/* ---------------------------------------------------------------- environment */

long nnlat_rank_from_env(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        uint64_t r;
        if (v != NULL && parse_u64(v, &r) == 0 && r < 1UL << 31)
            return (long)r;
    }
    return -1;
}

int nnlat_expand_path(const char *tmpl, long rank, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = tmpl; *p; p++) {
        char piece[32];
        const char *add = piece;
        if (p[0] == '%' && p[1] == 'r') {
            if (rank >= 0)
                snprintf(piece, sizeof piece, "%ld", rank);
            else
                snprintf(piece, sizeof piece, "p%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t len = strlen(add);
        if (o + len >= outlen)
            return -1;
        memcpy(out + o, add, len);
        o += len;
    }
    out[o] = '\0';
    return 0;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? v : fallback;
}

/* Expands the path variable name into out; on failure describes it in s->reason. */
static int env_path(nnlat_state *s, const char *name, char *out)
{
    const char *tmpl = env_or(name, NULL);
    if (tmpl == NULL) {
        set_err(s->reason, sizeof s->reason, "%s is not set", name);
        return -1;
    }
    if (nnlat_expand_path(tmpl, s->rank, out, NNLAT_PATH_MAX) != 0) {
        set_err(s->reason, sizeof s->reason, "%s: path longer than %d characters", name,
                NNLAT_PATH_MAX - 1);
        return -1;
    }
    return 0;
}

int nnlat_configure(nnlat_state *s, long rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->unit_ns = 1;
    s->level = NNLAT_MPI;

    const char *strict = env_or("NN_LATENCY_STRICT", "0");
    const char *level = env_or("NN_LATENCY_LEVEL", "mpi");
    const char *unit = env_or("NN_LATENCY_UNIT", "ns");
    const char *report = env_or("NN_LATENCY_REPORT", NULL);
    const char *wait = env_or("NN_LATENCY_WAIT", "spin");
    const char *margin = env_or("NN_LATENCY_SLEEP_MARGIN_US", NULL);
    char *margin_end = NULL;
    long margin_us = NNLAT_SLEEP_MARGIN_DEFAULT_US;
    if (margin != NULL) {
        errno = 0;
        margin_us = strtol(margin, &margin_end, 10);
        if (errno != 0 || margin_end == margin || *margin_end != '\0')
            margin_us = -1;
    }
    snprintf(s->level_name, sizeof s->level_name, "%s", level);
    /* Anything but 0 asks for strictness: a typo must not silently relax it. */
    s->strict = strcmp(strict, "0") != 0;
    if (strcmp(level, "mpi") == 0)
        s->level = NNLAT_MPI;
    else if (strcmp(level, "tcp") == 0)
        s->level = NNLAT_TCP;
    else
        s->level = NNLAT_OFF;
    s->wait = strcmp(wait, "sleep") == 0 ? NNLAT_SLEEP : NNLAT_SPIN;
    s->sleep_margin_ns = (uint64_t)(margin_us < 0 ? 0 : margin_us) * 1000ULL;
    if (strcmp(unit, "ns") == 0)
        s->unit_ns = 1;
    else if (strcmp(unit, "us") == 0)
        s->unit_ns = 1000;
    else
        s->unit_ns = 0;

    if (strcmp(strict, "0") != 0 && strcmp(strict, "1") != 0)
        set_err(s->reason, sizeof s->reason, "NN_LATENCY_STRICT='%.40s': expected 0 or 1",
                strict);
    else if (s->level == NNLAT_OFF)
        set_err(s->reason, sizeof s->reason, "NN_LATENCY_LEVEL='%.40s': expected mpi or tcp",
                level);
    else if (s->unit_ns == 0)
        set_err(s->reason, sizeof s->reason, "NN_LATENCY_UNIT='%.40s': expected ns or us", unit);
    else if (strcmp(wait, "spin") != 0 && strcmp(wait, "sleep") != 0)
        set_err(s->reason, sizeof s->reason, "NN_LATENCY_WAIT='%.40s': expected spin or sleep",
                wait);
    else if (margin_us < 0 || margin_us > NNLAT_SLEEP_MARGIN_MAX_US)
        set_err(s->reason, sizeof s->reason,
                "NN_LATENCY_SLEEP_MARGIN_US='%.40s': expected a whole number of us, 0 to %d",
                margin, NNLAT_SLEEP_MARGIN_MAX_US);
    else if (report != NULL &&
             nnlat_expand_path(report, s->rank, s->report_path, sizeof s->report_path) != 0)
        set_err(s->reason, sizeof s->reason, "NN_LATENCY_REPORT: path longer than %d characters",
                NNLAT_PATH_MAX - 1);
    else if (env_path(s, "NN_LATENCY_TABLE", s->table_path) == 0 &&
             nnlat_load_table(s->table_path, s->unit_ns, s->table, s->reason,
                              sizeof s->reason) == 0 &&
             env_path(s, "NN_LATENCY_SEED", s->seed_path) == 0 &&
             nnlat_load_seed(s->seed_path, &s->seed, s->reason, sizeof s->reason) == 0)
        s->enabled = 1;
    s->report_per_rank =
        report != NULL && (strstr(report, "%r") != NULL || strstr(report, "%p") != NULL);
    if (report != NULL)
        snprintf(s->report_template, sizeof s->report_template, "%s", report);

    if (!s->enabled)
        return s->strict ? -1 : 0;
    uint64_t sum = 0;
    s->table_min_ns = UINT64_MAX;
    for (int i = 0; i < NNLAT_TABLE_SIZE; i++) {
        sum += s->table[i];
        if (s->table[i] < s->table_min_ns)
            s->table_min_ns = s->table[i];
        if (s->table[i] > s->table_max_ns)
            s->table_max_ns = s->table[i];
    }
    s->table_mean_ns = (double)sum / NNLAT_TABLE_SIZE;
    atomic_store(&s->lcg, nnlat_mix_seed(s->seed));
    return 0;
}

/* ---------------------------------------------------------------- report */

/* Population standard deviation of n values with the given total, from the sum
 * of their squared deviations from a centre c: var = sq/n - (total/n - c)^2. */
static double std_of(uint64_t n, uint64_t total, double sq, double c)
{
    if (n == 0)
        return 0.0;
    const double shift = (double)total / (double)n - c;
    return sqrt(fmax(0.0, sq / (double)n - shift * shift));
}

int nnlat_write_report(nnlat_state *s, const char *path, char *err, size_t errlen)
{
    char tmp[NNLAT_PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL) {
        set_err(err, errlen, "report %s: cannot create %s: %s", path, tmp, strerror(errno));
        return -1;
    }
    uint64_t delays = atomic_load(&s->delays);
    uint64_t drawn = atomic_load(&s->drawn_ns);
    uint64_t spent = atomic_load(&s->spent_ns);
    const char *level = s->level == NNLAT_MPI ? "mpi" : s->level == NNLAT_TCP ? "tcp" : NULL;
    fprintf(fp, "format=nnlatency-report-1\n");
    fprintf(fp, "library=libnnlatency %s\n", NN_VERSION);
    fprintf(fp, "level=%s\n", level != NULL ? level : s->level_name);
    fprintf(fp, "enabled=%d\n", s->enabled);
    if (!s->enabled)
        fprintf(fp, "disabled_reason=%s\n", s->reason);
    if (s->rank >= 0)
        fprintf(fp, "rank=%ld\n", s->rank);
    else
        fprintf(fp, "rank=unknown\n");
    fprintf(fp, "pid=%ld\n", (long)getpid());
    fprintf(fp, "strict=%d\n", s->strict);
    fprintf(fp, "unit=%s\n", s->unit_ns == 1000 ? "us" : "ns");
    fprintf(fp, "wait=%s\n",
            s->wait == NNLAT_NETWORK ? "network" : s->wait == NNLAT_SLEEP ? "sleep" : "spin");
    fprintf(fp, "sleep_margin_us=%llu\n", (unsigned long long)(s->sleep_margin_ns / 1000));
    fprintf(fp, "table=%s\n", s->table_path);
    fprintf(fp, "seed_file=%s\n", s->seed_path);
    if (s->enabled) {
        fprintf(fp, "seed=%llu\n", (unsigned long long)s->seed);
        fprintf(fp, "table_mean_ns=%.3f\n", s->table_mean_ns);
        fprintf(fp, "table_min_ns=%llu\n", (unsigned long long)s->table_min_ns);
        fprintf(fp, "table_max_ns=%llu\n", (unsigned long long)s->table_max_ns);
    }
    fprintf(fp, "delays=%llu\n", (unsigned long long)delays);
    fprintf(fp, "drawn_total_ns=%llu\n", (unsigned long long)drawn);
    fprintf(fp, "drawn_mean_ns=%.3f\n", delays ? (double)drawn / (double)delays : 0.0);
    fprintf(fp, "drawn_std_ns=%.3f\n",
            std_of(delays, drawn, atomic_load(&s->drawn_sq_ns2), s->table_mean_ns));
    fprintf(fp, "total_ns=%llu\n", (unsigned long long)spent);
    fprintf(fp, "mean_ns=%.3f\n", delays ? (double)spent / (double)delays : 0.0);
    fprintf(fp, "std_ns=%.3f\n",
            std_of(delays, spent, atomic_load(&s->spent_sq_ns2), s->table_mean_ns));
    uint64_t late = atomic_load(&s->late), late_ns = atomic_load(&s->late_ns);
    fprintf(fp, "late_delays=%llu\n", (unsigned long long)late);
    fprintf(fp, "late_threshold_ns=%llu\n", (unsigned long long)NNLAT_LATE_NS);
    fprintf(fp, "late_total_ns=%llu\n", (unsigned long long)late_ns);
    /* The wait's own accuracy: the delays that kept (or got back) their core in time. */
    fprintf(fp, "ontime_mean_ns=%.3f\n",
            delays > late ? (double)(spent - late_ns) / (double)(delays - late) : 0.0);
    int bad = fflush(fp) != 0 || ferror(fp);
    bad |= fclose(fp) != 0;
    if (bad || rename(tmp, path) != 0) {
        set_err(err, errlen, "report %s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void nnlat_forked(nnlat_state *s)
{
    atomic_store(&s->delays, 0);
    atomic_store(&s->drawn_ns, 0);
    atomic_store(&s->spent_ns, 0);
    atomic_store(&s->late, 0);
    atomic_store(&s->late_ns, 0);
    atomic_store(&s->drawn_sq_ns2, 0.0);
    atomic_store(&s->spent_sq_ns2, 0.0);
    if (s->report_template[0] != '\0' &&
        nnlat_expand_path(s->report_template, s->rank, s->report_path, sizeof s->report_path) != 0)
        s->report_path[0] = '\0';
}

void nnlat_finish(nnlat_state *s, int at_exit)
{
    if (s->report_path[0] == '\0' || (!s->report_per_rank && s->rank > 0))
        return;
    /* A helper process that inherited the rank's environment (a wrapper
     * script, a tool, a forked child) must not replace the rank's report. */
    if (at_exit && atomic_load(&s->delays) == 0 && access(s->report_path, F_OK) == 0)
        return;
    if (atomic_exchange(&s->report_written, 1))
        return;
    char err[NNLAT_ERR_MAX];
    if (nnlat_write_report(s, s->report_path, err, sizeof err) == 0)
        return;
    /* Strict: a run whose report is lost fails, whatever its own status. */
    fprintf(stderr, "libnnlatency: %s: %s\n", s->strict ? "error" : "warning", err);
    if (s->strict) {
        fflush(stderr);
        _exit(NNLAT_LOST_REPORT_STATUS);
    }
}
