/*
 * Seeded pseudo-random numbers for every netnoise program: xoshiro256**
 * (Blackman and Vigna, 2018) seeded through splitmix64. Same seed, same
 * sequence on every platform; fast enough to draw inside timed loops.
 */
#ifndef NN_RNG_H
#define NN_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
} nn_rng;

static inline uint64_t nn_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Streams for different ranks or purposes: seed the same base with a stream id. */
static inline void nn_rng_seed(nn_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = nn_splitmix64(&x);
}

static inline uint64_t nn_rng_next(nn_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1). */
static inline double nn_rng_uniform(nn_rng *r)
{
    return (double)(nn_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n > 0 (Lemire's nearly divisionless method). */
static inline uint64_t nn_rng_below(nn_rng *r, uint64_t n)
{
    return (uint64_t)(((__uint128_t)nn_rng_next(r) * n) >> 64);
}

/* Exponential with the given mean. */
static inline double nn_rng_exponential(nn_rng *r, double mean)
{
    return -mean * log1p(-nn_rng_uniform(r));
}

/* Fisher-Yates shuffle of an int array. */
static inline void nn_rng_shuffle(nn_rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)nn_rng_below(r, (uint64_t)i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

#endif
