/* The check of the C unit tests: EXPECT(cond, what) reports a false cond
 * with its file and line and counts it; main returns failures == 0 ? 0 : 1. */
#ifndef NN_EXPECT_H
#define NN_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond, what)                                                 \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
            failures++;                                                    \
        }                                                                  \
    } while (0)

#endif
