#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

int nn_parse_long(const char *s, long *out)
{
    char *end = NULL;
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int nn_parse_double(const char *s, double *out)
{
    char *end = NULL;
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int nn_parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    if (s == NULL || *s == '\0' || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s)
        return -1;
    unsigned long long mult = 1;
    if (*end != '\0') {
        switch (*end) {
        case 'k': case 'K': mult = 1ULL << 10; break;
        case 'm': case 'M': mult = 1ULL << 20; break;
        case 'g': case 'G': mult = 1ULL << 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B')
            end++;
        if (*end != '\0')
            return -1;
    }
    if (v > SIZE_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

const nn_option *nn_find_option(const nn_option *opts, const char *name, size_t len)
{
    for (const nn_option *o = opts; o->name != NULL; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static int choice_allowed(const char *choices, const char *value)
{
    size_t n = strlen(value);
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, value, n) == 0)
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

static void expected_form(const nn_option *o, char *buf, size_t len)
{
    switch (o->type) {
    case NN_OPT_LONG:
        snprintf(buf, len, "an integer in [%.0f, %.0f]", o->min, o->max);
        break;
    case NN_OPT_DOUBLE:
        snprintf(buf, len, "a number in [%g, %g]", o->min, o->max);
        break;
    case NN_OPT_SIZE:
        snprintf(buf, len, "a byte count in [%.0f, %.0f], optional suffix K, M or G (x1024)",
                 o->min, o->max);
        break;
    case NN_OPT_CHOICE:
        snprintf(buf, len, "one of %s", o->choices);
        break;
    case NN_OPT_STRING:
        snprintf(buf, len, "a non-empty string");
        break;
    case NN_OPT_FLAG:
        snprintf(buf, len, "no value");
        break;
    }
}

static int set_value(const nn_option *o, const char *value)
{
    switch (o->type) {
    case NN_OPT_LONG: {
        long v;
        if (nn_parse_long(value, &v) || (double)v < o->min || (double)v > o->max)
            return -1;
        *(long *)o->dest = v;
        return 0;
    }
    case NN_OPT_DOUBLE: {
        double v;
        if (nn_parse_double(value, &v) || v < o->min || v > o->max)
            return -1;
        *(double *)o->dest = v;
        return 0;
    }
    case NN_OPT_SIZE: {
        size_t v;
        if (nn_parse_size(value, &v) || (double)v < o->min || (double)v > o->max)
            return -1;
        *(size_t *)o->dest = v;
        return 0;
    }
    case NN_OPT_STRING:
        if (*value == '\0')
            return -1;
        *(const char **)o->dest = value;
        return 0;
    case NN_OPT_CHOICE:
        if (!choice_allowed(o->choices, value))
            return -1;
        *(const char **)o->dest = value;
        return 0;
    case NN_OPT_FLAG:
        return -1;
    }
    return -1;
}

int nn_parse_options(int argc, char **argv, const nn_option *opts, char *err, size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return NN_PARSE_HELP;
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s': options take the form --name value",
                     arg);
            return NN_PARSE_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const nn_option *o = nn_find_option(opts, name, name_len);
        if (o == NULL) {
            snprintf(err, errlen, "unknown option '--%.*s' (see --help)", (int)name_len, name);
            return NN_PARSE_ERROR;
        }
        char form[160];
        expected_form(o, form, sizeof form);
        if (o->type == NN_OPT_FLAG) {
            if (eq) {
                snprintf(err, errlen, "--%s: takes no value, got '%s'", o->name, eq + 1);
                return NN_PARSE_ERROR;
            }
            *(int *)o->dest = 1;
            continue;
        }
        const char *value;
        if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(err, errlen, "--%s: missing value, expected %s", o->name, form);
            return NN_PARSE_ERROR;
        }
        if (set_value(o, value) != 0) {
            snprintf(err, errlen, "--%s: invalid value '%s', expected %s", o->name, value, form);
            return NN_PARSE_ERROR;
        }
    }
    return NN_PARSE_OK;
}

static void print_wrapped(FILE *fp, const char *text, const char *indent)
{
    const int width = 78;
    int col = 0;
    const char *p = text;
    fputs(indent, fp);
    col = (int)strlen(indent);
    while (*p) {
        if (*p == '\n') {
            fputc('\n', fp);
            fputs(indent, fp);
            col = (int)strlen(indent);
            p++;
            continue;
        }
        size_t word = strcspn(p, " \n");
        if (col + (int)word > width && col > (int)strlen(indent)) {
            fputc('\n', fp);
            fputs(indent, fp);
            col = (int)strlen(indent);
        }
        fwrite(p, 1, word, fp);
        col += (int)word;
        p += word;
        if (*p == ' ') {
            fputc(' ', fp);
            col++;
            p++;
        }
    }
    fputc('\n', fp);
}

void nn_print_usage(FILE *fp, const nn_option *opts, const nn_tool_info *info)
{
    fprintf(fp, "usage: %s [options]\n\n%s\n\n", info->tool, info->summary);
    if (info->method) {
        fputs("Method:\n", fp);
        print_wrapped(fp, info->method, "  ");
        fputc('\n', fp);
    }
    fputs("Options:\n", fp);
    for (const nn_option *o = opts; o->name != NULL; o++) {
        char form[160];
        expected_form(o, form, sizeof form);
        if (o->type == NN_OPT_FLAG)
            fprintf(fp, "  --%s\n", o->name);
        else
            fprintf(fp, "  --%s VALUE   (%s)\n", o->name, form);
        print_wrapped(fp, o->help, "      ");
    }
    fputs("  --help\n      print this help and exit\n", fp);
}
