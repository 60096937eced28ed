#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn.h"

/* A signal (SIGUSR1 asks for a stop) interrupts nanosleep, which then leaves
 * the remaining time in ts: only then is the sleep resumed. Any other error
 * would fail again on every retry, so it ends the process with a message. */
void nn_sleep_ns(long long ns)
{
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0) {
        if (errno == EINTR)
            continue;
        fprintf(stderr, "nn_sleep_ns(%lld): nanosleep failed: %s\n", ns, strerror(errno));
        fflush(stderr);
        abort();
    }
}
