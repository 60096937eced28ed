/*
 * Communication pattern files (seed 003): CSV with the header src,dst,bytes
 * and one link per line, from rank src to rank dst. Read here as `netnoise
 * predict asymmetric` reads them (netnoise.studies.asymmetric.cli), so one
 * file drives the benchmark and the model alike: UTF-8 with or without a
 * byte-order mark, lines ending in \n or \r\n, spaces and tabs around fields
 * ignored, blank lines and lines starting with # skipped, ranks written as
 * node names are (0, 1, ...: no sign, no leading zero), byte counts decimal
 * digits of 1 to 2^30. Plain C, no MPI.
 */
#ifndef NN_PATTERN_H
#define NN_PATTERN_H

#include <stddef.h>

#define NN_PATTERN_MAX_BYTES (1UL << 30)

typedef struct {
    int src, dst;
    size_t bytes;
} nn_link;

/* The links of pattern file path among nranks ranks into *out (malloc'ed);
 * their number, or -1 with one line naming the file, the line and the problem
 * in err. */
int nn_read_pattern(const char *path, int nranks, nn_link **out, char *err, size_t errlen);

#endif
