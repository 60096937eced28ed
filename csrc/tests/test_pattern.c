/*
 * The pattern reader of p2p_concurrent (common/nn_pattern.c) on its own:
 * test_pattern FILE RANKS prints the links it reads as CSV src,dst,bytes, or
 * its error on stderr with status 2. The Python tests hold it to `netnoise
 * predict asymmetric`'s reader on the same files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn_pattern.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_pattern FILE RANKS\n");
        return 2;
    }
    nn_link *links = NULL;
    char err[600] = "";
    int n = nn_read_pattern(argv[1], atoi(argv[2]), &links, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    printf("src,dst,bytes\n");
    for (int i = 0; i < n; i++)
        printf("%d,%d,%zu\n", links[i].src, links[i].dst, links[i].bytes);
    free(links);
    return 0;
}
