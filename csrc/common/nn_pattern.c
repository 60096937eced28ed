#define _POSIX_C_SOURCE 200809L
#include "nn_pattern.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_life.h"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Whether the len bytes of s are UTF-8 as Python decodes it: no overlong
 * forms, no surrogates, nothing beyond U+10FFFF. */
static int is_utf8(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t extra;
        unsigned long cp, least;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            extra = 1, cp = c & 0x1F, least = 0x80;
        else if ((c & 0xF0) == 0xE0)
            extra = 2, cp = c & 0x0F, least = 0x800;
        else if ((c & 0xF8) == 0xF0)
            extra = 3, cp = c & 0x07, least = 0x10000;
        else
            return 0;
        if (len - i <= extra)
            return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += extra + 1;
    }
    return 1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* s without the spaces and tabs around it, in place. */
static char *trim(char *s)
{
    while (is_blank(*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && is_blank(s[len - 1]))
        s[--len] = '\0';
    return s;
}

/* Splits line at every comma into at most max fields (trimmed); their number,
 * which may be more than max. */
static int split_fields(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line;; n++) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (n < max)
            field[n] = trim(p);
        if (comma == NULL)
            return n + 1;
        p = comma + 1;
    }
}

/* A rank as a node name: 0, or digits not starting with 0. */
static int parse_rank(const char *s, long *out)
{
    if (*s == '\0' || (s[0] == '0' && s[1] != '\0') || strlen(s) > 9)
        return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    *out = strtol(s, NULL, 10);
    return 0;
}

/* A byte count: decimal digits of 1 to NN_PATTERN_MAX_BYTES. */
static int parse_bytes(const char *s, size_t *out)
{
    unsigned long long v = 0;
    if (*s == '\0')
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
        if (v > NN_PATTERN_MAX_BYTES)
            return -1;
    }
    if (v == 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

int nn_read_pattern(const char *path, int nranks, nn_link **out, char *err, size_t errlen)
{
    const char *why = NULL;
    FILE *fp = nn_fopen_regular(path, &why);
    if (fp == NULL) {
        set_err(err, errlen, "cannot open pattern file '%s': %s", path, why);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int n = 0, room = 16, lineno = 0, rc = -1;
    nn_link *links = malloc((size_t)room * sizeof *links);
    if (links == NULL) {
        set_err(err, errlen, "out of memory");
        goto done;
    }
    while ((got = getline(&line, &cap, fp)) != -1) {
        lineno++;
        size_t len = (size_t)got;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = '\0';
        if (strlen(line) != len) {
            set_err(err, errlen, "%s:%d: the line holds a NUL byte", path, lineno);
            goto done;
        }
        if (lineno == 1) {
            nn_strip_bom(line);
            len = strlen(line);
        }
        if (!is_utf8((const unsigned char *)line, len)) {
            set_err(err, errlen, "%s:%d: not UTF-8 text", path, lineno);
            goto done;
        }
        char *field[3];
        if (lineno == 1) {
            int k = split_fields(line, field, 3);
            if (k != 3 || strcmp(field[0], "src") || strcmp(field[1], "dst") ||
                strcmp(field[2], "bytes")) {
                set_err(err, errlen, "%s:1: header must be 'src,dst,bytes'", path);
                goto done;
            }
            continue;
        }
        char *content = trim(line);
        if (content[0] == '\0' || content[0] == '#')
            continue;
        if (split_fields(content, field, 3) != 3) {
            set_err(err, errlen, "%s:%d: expected 3 fields src,dst,bytes", path, lineno);
            goto done;
        }
        long src, dst;
        size_t bytes;
        if (parse_rank(field[0], &src) || parse_rank(field[1], &dst) ||
            parse_bytes(field[2], &bytes)) {
            set_err(err, errlen,
                    "%s:%d: expected ranks (0, 1, ...) and a byte count in [1, 2^30], got "
                    "'%.40s,%.40s,%.40s'",
                    path, lineno, field[0], field[1], field[2]);
            goto done;
        }
        if (src >= nranks || dst >= nranks || src == dst) {
            set_err(err, errlen, "%s:%d: ranks %ld -> %ld must differ and be in [0, %d)", path,
                    lineno, src, dst, nranks);
            goto done;
        }
        if (n == room) {
            nn_link *grown = realloc(links, (size_t)(room *= 2) * sizeof *links);
            if (grown == NULL) {
                set_err(err, errlen, "out of memory at %s:%d", path, lineno);
                goto done;
            }
            links = grown;
        }
        links[n++] = (nn_link){(int)src, (int)dst, bytes};
    }
    if (ferror(fp))
        set_err(err, errlen, "%s: read error after line %d", path, lineno);
    else if (lineno == 0)
        set_err(err, errlen, "%s:1: header must be 'src,dst,bytes'", path);
    else if (n == 0)
        set_err(err, errlen, "%s: no links", path);
    else
        rc = n;
done:
    free(line);
    fclose(fp);
    if (rc < 0)
        free(links);
    else
        *out = links;
    return rc;
}
