/* Unit tests of the option table: every setter's range and form checks. */
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "nn.h"

static long iters;
static double rate;
static size_t bytes;
static const char *name;
static const char *coll;
static int verbose;

static const nn_option opts[] = {
    {"iterations", NN_OPT_LONG, &iters, 1, 1000, NULL, "count"},
    {"rate", NN_OPT_DOUBLE, &rate, 0, 1, NULL, "fraction"},
    {"size", NN_OPT_SIZE, &bytes, 1, 1 << 20, NULL, "bytes"},
    {"name", NN_OPT_STRING, &name, 0, 0, NULL, "a name"},
    {"collective", NN_OPT_CHOICE, &coll, 0, 0, "allreduce|reduce|bcast", "which"},
    {"verbose", NN_OPT_FLAG, &verbose, 0, 0, NULL, "talk"},
    NN_OPTIONS_END,
};

static int parse(const char *a, const char *b, char *err)
{
    char *argv[4] = {"prog", (char *)a, (char *)b, NULL};
    int argc = b ? 3 : (a ? 2 : 1);
    err[0] = '\0';
    return nn_parse_options(argc, argv, opts, err, 256);
}

static void expect_error(const char *a, const char *b, const char *must_contain)
{
    char err[256];
    char what[512];
    int rc = parse(a, b, err);
    snprintf(what, sizeof what, "'%s %s' should fail mentioning '%s', got rc=%d err='%s'", a,
             b ? b : "", must_contain, rc, err);
    EXPECT(rc == NN_PARSE_ERROR && strstr(err, must_contain) != NULL, what);
}

/* A value the option's setter refuses: the message names the option and the value. */
static void expect_invalid(const char *option, const char *value)
{
    char want[128];
    snprintf(want, sizeof want, "%s: invalid value '%s'", option, value);
    expect_error(option, value, want);
}

int main(void)
{
    char err[256];

    EXPECT(parse("--iterations", "10", err) == NN_PARSE_OK && iters == 10, "long value");
    EXPECT(parse("--iterations=1000", NULL, err) == NN_PARSE_OK && iters == 1000, "--k=v form");
    EXPECT(parse("--rate", "0.5", err) == NN_PARSE_OK && rate == 0.5, "double value");
    EXPECT(parse("--size", "40K", err) == NN_PARSE_OK && bytes == 40 * 1024, "size suffix K");
    EXPECT(parse("--size", "1MiB", err) == NN_PARSE_OK && bytes == 1 << 20, "size suffix MiB");
    EXPECT(parse("--collective", "bcast", err) == NN_PARSE_OK && strcmp(coll, "bcast") == 0,
           "choice");
    EXPECT(parse("--verbose", NULL, err) == NN_PARSE_OK && verbose == 1, "flag");
    EXPECT(parse("--help", NULL, err) == NN_PARSE_HELP, "help");

    expect_error("--iterations", "abc", "--iterations: invalid value 'abc', expected an integer in [1, 1000]");
    expect_error("--iterations", "1001", "expected an integer in [1, 1000]");
    expect_error("--iterations", NULL, "--iterations: missing value");
    expect_error("--rate", "1.5", "expected a number in [0, 1]");
    expect_error("--size", "4Q", "optional suffix K, M or G");
    expect_error("--collective", "alltoall", "expected one of allreduce|reduce|bcast");
    expect_error("--verbose=1", NULL, "takes no value");
    expect_error("--bogus", "1", "unknown option '--bogus'");
    expect_error("stray", NULL, "unexpected argument 'stray'");
    static const char *const invalid[][2] = {
        {"--iterations", "12x"}, {"--iterations", "0"}, {"--iterations", "99999999999999999999999"},
        {"--iterations", ""},    {"--rate", "nan"},     {"--size", "-1"},
        {"--size", "2M"},
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        expect_invalid(invalid[i][0], invalid[i][1]);

    long l;
    double d;
    size_t s;
    EXPECT(nn_parse_long(" 5", &l) != 0 || l == 5, "strtol accepts leading space only as C does");
    EXPECT(nn_parse_long("5 ", &l) != 0, "trailing garbage rejected");
    EXPECT(nn_parse_double("1e3", &d) == 0 && d == 1000.0, "exponent");
    EXPECT(nn_parse_double("inf", &d) != 0, "infinity rejected");
    EXPECT(nn_parse_size("3G", &s) == 0 && s == 3ULL << 30, "giga");

    if (failures == 0)
        printf("test_options: all passed\n");
    return failures == 0 ? 0 : 1;
}
