#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn.h"

int nn_writer_open(nn_writer *w, const char *path, int active)
{
    memset(w, 0, sizeof *w);
    w->active = active;
    if (!active)
        return 0;
    if (path == NULL || strcmp(path, "-") == 0) {
        w->fp = stdout;
        return 0;
    }
    size_t len = strlen(path) + 32;
    w->final_path = strdup(path);
    w->tmp_path = malloc(len);
    if (w->final_path == NULL || w->tmp_path == NULL)
        return -1;
    snprintf(w->tmp_path, len, "%s.tmp.%ld", path, (long)getpid());
    w->fp = fopen(w->tmp_path, "w");
    if (w->fp == NULL) {
        fprintf(stderr, "cannot open '%s' for writing: %s\n", w->tmp_path, strerror(errno));
        return -1;
    }
    return 0;
}

void nn_meta(nn_writer *w, const char *key, const char *fmt, ...)
{
    if (!w->active)
        return;
    char value[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    /* One line per key: a newline inside a value would break the format. */
    for (char *p = value; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(w->fp, "#@%s=%s\n", key, value);
}

void nn_columns(nn_writer *w, const char *header)
{
    if (w->active)
        fprintf(w->fp, "%s\n", header);
}

void nn_row(nn_writer *w, const char *fmt, ...)
{
    if (!w->active)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(w->fp, fmt, ap);
    va_end(ap);
    fputc('\n', w->fp);
    w->rows++;
}

void nn_row_values(nn_writer *w, const double *values, int count, const char *formats)
{
    if (!w->active)
        return;
    const char *format = formats;
    for (int i = 0; i < count; i++) {
        char conversion[16];
        const size_t len = strcspn(format, ",");
        snprintf(conversion, sizeof conversion, "%.*s", (int)len, format);
        if (i > 0)
            fputc(',', w->fp);
        fprintf(w->fp, conversion, values[i]);
        format += len + (format[len] == ',');
    }
    fputc('\n', w->fp);
    w->rows++;
}

int nn_writer_close(nn_writer *w, int success)
{
    int rc = 0;
    if (!w->active)
        return 0;
    /* The end-of-data line: a reader tells a complete file from one cut short
     * (a full disk, a killed writer, a partial copy) by it and its row count. */
    if (success)
        fprintf(w->fp, "#@end=%lu\n", w->rows);
    if (w->final_path == NULL) {
        fflush(w->fp);
        return 0;
    }
    if (fflush(w->fp) != 0 || fsync(fileno(w->fp)) != 0)
        rc = -1;
    if (fclose(w->fp) != 0)
        rc = -1;
    if (success && rc == 0) {
        if (rename(w->tmp_path, w->final_path) != 0) {
            fprintf(stderr, "cannot rename '%s' to '%s': %s\n", w->tmp_path, w->final_path,
                    strerror(errno));
            rc = -1;
        }
    }
    if (!success || rc != 0)
        unlink(w->tmp_path);
    free(w->tmp_path);
    free(w->final_path);
    memset(w, 0, sizeof *w);
    return rc;
}

void nn_iso_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
