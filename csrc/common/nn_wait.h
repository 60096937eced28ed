/*
 * Waiting that sleeps: the blocking calls of MPI completed by a test loop
 * that may sleep.
 *
 * Open MPI has no blocking progress over TCP: a rank waiting in MPI_Recv,
 * MPI_Wait or a collective polls, and with mpi_yield_when_idle it still stays
 * runnable. On an emulated cluster where 8-32 nodes share two cores, every
 * waiting rank would then compete for a core with the ranks that have work, so
 * a co-run measures the CPU before the network. This layer defines the
 * blocking point-to-point, probe, wait and collective calls of MPI through the
 * profiling interface: each starts the nonblocking form (MPI_Isend, MPI_Irecv,
 * MPI_Ibarrier, MPI_Iallreduce, ...) and completes it with MPI_Test* under a
 * wait policy:
 *
 *   spin    test without pause (the papers' busy polling);
 *   sleep   sleep between tests, from the first sleep doubling up to the
 *           longest (a waiting rank costs ~1 % of a core);
 *   hybrid  spin for a while, then sleep as above: short exchanges complete at
 *           full speed, long waits cost almost nothing. The spin yields the
 *           core between tests: the scheduler often wakes two ranks of one
 *           exchange on the same core, and two pure spinners there take turns
 *           only by time slices (a 2-rank 8-byte allreduce then took ~450 us
 *           instead of ~20; both ranks were on one core in 93 % of the
 *           executions above 200 us).
 *
 * A policy is written mode[:spin_us[:sleep_us[:sleep_max_us]]]. Two are in
 * force: the wait policy of every blocking call (NN_WAIT, --mpi-wait; default
 * hybrid:50:20:1000), and the probe policy of the exchanges a program times to
 * the microsecond (a ping-pong round trip, an 8-byte collective: NN_PROBE_WAIT,
 * --probe-wait), which programs select with nn_probe_begin/nn_probe_end.
 *
 * Every netnoise program is linked with this file, so no blocking call of
 * theirs polls; the same source built as libnnwait.so gives third-party
 * programs the same waiting through LD_PRELOAD. The nonblocking calls it starts
 * go through the public MPI_I* names, so the latency injector (also a PMPI
 * layer) still sees every send once.
 */
#ifndef NN_WAIT_H
#define NN_WAIT_H

#include <stddef.h>

typedef enum { NN_WAIT_SPIN, NN_WAIT_SLEEP, NN_WAIT_HYBRID } nn_wait_mode;

typedef struct {
    nn_wait_mode mode;
    long long spin_ns;      /* hybrid: busy polling before the first sleep */
    long long sleep_min_ns; /* first sleep */
    long long sleep_max_ns; /* the sleeps double up to this */
} nn_wait_policy;

#define NN_WAIT_SPEC "mode[:spin_us[:sleep_us[:sleep_max_us]]] with mode spin, sleep or hybrid"
#define NN_WAIT_DEFAULT "hybrid:50:20:1000"
#define NN_PROBE_WAIT_DEFAULT "hybrid:200:10:100"

/* Parses a policy (NN_WAIT_SPEC) over the fields of *policy, which keeps the
 * fields the text leaves out; returns -1 (and leaves *policy alone) on bad text. */
int nn_wait_parse(const char *text, nn_wait_policy *policy);

/* The wait and probe policies in force: set by nn_wait_set_policies, else from
 * NN_WAIT and NN_PROBE_WAIT, else the defaults. */
nn_wait_policy nn_wait_get(void);
nn_wait_policy nn_wait_probe_get(void);
void nn_wait_set_policies(nn_wait_policy wait, nn_wait_policy probe);

/* Between these, blocking calls wait under the probe policy. */
void nn_probe_begin(void);
void nn_probe_end(void);

/* "hybrid spin=50us sleep=20-1000us" */
void nn_wait_describe(const nn_wait_policy *policy, char *buf, size_t len);

#endif
