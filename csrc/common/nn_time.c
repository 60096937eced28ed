#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "nn.h"

void nn_sleep_ns(long long ns)
{
    if (ns <= 0)
        return;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}
