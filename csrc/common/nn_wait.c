/*
 * The blocking calls of MPI as nonblocking call + wait policy (nn_wait.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <mpi.h>

#include "nn_wait.h"

static nn_wait_policy wait_policy, probe_policy;
static const nn_wait_policy *active = &wait_policy;
static int configured = 0;

static const char *const mode_names[] = {"spin", "sleep", "hybrid"};

int nn_wait_parse(const char *text, nn_wait_policy *policy)
{
    char copy[128];
    if (text == NULL || strlen(text) >= sizeof copy)
        return -1;
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    char *word = strtok_r(copy, ":", &save);
    nn_wait_policy p = *policy;
    int mode = -1;
    for (int m = 0; word != NULL && m < 3; m++)
        if (strcmp(word, mode_names[m]) == 0)
            mode = m;
    if (mode < 0)
        return -1;
    p.mode = (nn_wait_mode)mode;
    long long *fields[3] = {&p.spin_ns, &p.sleep_min_ns, &p.sleep_max_ns};
    for (int i = 0; (word = strtok_r(NULL, ":", &save)) != NULL; i++) {
        char *end = NULL;
        errno = 0;
        double us = strtod(word, &end);
        if (i >= 3 || errno != 0 || end == word || *end != '\0' || !(us >= 0 && us <= 1e7))
            return -1;
        *fields[i] = (long long)(us * 1e3);
    }
    if (p.sleep_min_ns < 1000 || p.sleep_max_ns < p.sleep_min_ns)
        return -1;
    *policy = p;
    return 0;
}

/* A PMPI layer has no caller to return an error to: a bad variable is reported
 * and the default kept. */
static nn_wait_policy from_environment(const char *name, const char *fallback)
{
    nn_wait_policy p = {NN_WAIT_HYBRID, 0, 1000, 1000};
    nn_wait_parse(fallback, &p);
    const char *env = getenv(name);
    if (env != NULL && *env != '\0' && nn_wait_parse(env, &p) != 0)
        fprintf(stderr, "%s='%s': expected " NN_WAIT_SPEC "; using %s\n", name, env, fallback);
    return p;
}

/* Sleeps shorter than the default 50 us timer slack would overshoot by it. */
static void configure(void)
{
    if (configured)
        return;
    nn_wait_set_policies(from_environment("NN_WAIT", NN_WAIT_DEFAULT),
                         from_environment("NN_PROBE_WAIT", NN_PROBE_WAIT_DEFAULT));
}

void nn_wait_set_policies(nn_wait_policy wait, nn_wait_policy probe)
{
    wait_policy = wait;
    probe_policy = probe;
    configured = 1;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

nn_wait_policy nn_wait_get(void)
{
    configure();
    return wait_policy;
}

nn_wait_policy nn_wait_probe_get(void)
{
    configure();
    return probe_policy;
}

void nn_probe_begin(void)
{
    configure();
    active = &probe_policy;
}

void nn_probe_end(void)
{
    active = &wait_policy;
}

void nn_wait_describe(const nn_wait_policy *p, char *buf, size_t len)
{
#ifdef NN_PLAIN_MPI
    (void)p;
    snprintf(buf, len, "blocking (the MPI library's own waits)");
#else
    snprintf(buf, len, "%s spin=%.0fus sleep=%.0f-%.0fus", mode_names[p->mode], p->spin_ns / 1e3,
             p->sleep_min_ns / 1e3, p->sleep_max_ns / 1e3);
#endif
}

/* A build with NN_PLAIN_MPI keeps the MPI library's blocking calls: under
 * SimGrid's SMPI every MPI_Test costs simulated time, and these definitions,
 * global in the program, would replace the simulator's own. */
#ifndef NN_PLAIN_MPI

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Calls test() until it reports completion or an error, under the policy.
 *
 * Open MPI runs its event loop (the TCP sockets) on one opal_progress call of
 * every eight; a rank that has slept therefore tests a burst of PROGRESS_BURST
 * times before it sleeps again, or its sockets would be read only every eighth
 * wake-up. */
typedef int (*test_fn)(void *ctx, int *done);

#define PROGRESS_BURST 8

static int complete(test_fn test, void *ctx)
{
    configure();
    const nn_wait_policy p = *active;
    int done = 0;
    long long started = 0, pause = p.sleep_min_ns;
    int slept = 0;
    for (;;) {
        int rc = MPI_SUCCESS;
        for (int burst = slept ? PROGRESS_BURST : 1; burst > 0 && !done; burst--)
            if ((rc = test(ctx, &done)) != MPI_SUCCESS)
                break;
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (p.mode == NN_WAIT_SPIN)
            continue;
        if (p.mode == NN_WAIT_HYBRID) {
            long long t = now_ns();
            if (started == 0)
                started = t;
            if (t - started < p.spin_ns) {
                sched_yield();
                continue;
            }
        }
        sleep_ns(pause);
        slept = 1;
        pause = pause * 2 < p.sleep_max_ns ? pause * 2 : p.sleep_max_ns;
    }
}

/* ---------------------------------------------------------------- requests */

typedef struct {
    int count;
    MPI_Request *requests;
    MPI_Status *statuses;
    int *index;
    int *outcount;
    int *indices;
} requests_ctx;

static int test_all(void *ctx, int *done)
{
    requests_ctx *c = ctx;
    return MPI_Testall(c->count, c->requests, done, c->statuses);
}

static int test_any(void *ctx, int *done)
{
    requests_ctx *c = ctx;
    return MPI_Testany(c->count, c->requests, c->index, done, c->statuses);
}

static int test_some(void *ctx, int *done)
{
    requests_ctx *c = ctx;
    int rc = MPI_Testsome(c->count, c->requests, c->outcount, c->indices, c->statuses);
    *done = *c->outcount != 0;
    return rc;
}

static int wait_requests(int count, MPI_Request *requests, MPI_Status *statuses)
{
    requests_ctx c = {count, requests, statuses, NULL, NULL, NULL};
    return complete(test_all, &c);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    return wait_requests(1, request, status);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    return wait_requests(count, array_of_requests, array_of_statuses);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    requests_ctx c = {count, array_of_requests, status, index, NULL, NULL};
    return complete(test_any, &c);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    requests_ctx c = {incount, array_of_requests, array_of_statuses, NULL, outcount,
                      array_of_indices};
    return complete(test_some, &c);
}

/* A request just started (or the error of starting it), completed. */
static int finish(int rc, MPI_Request *request, MPI_Status *status)
{
    return rc != MPI_SUCCESS ? rc : wait_requests(1, request, status);
}

/* ---------------------------------------------------------------- point to point */

/* The definition of the blocking call `name`, of parameters `params`, as the
 * nonblocking call `start` on the arguments that follow, completed by finish.
 * Only a macro can define a family of functions that differ in their
 * parameters alone. */
#define AS_NONBLOCKING(name, params, start, ...)                                              \
    int name params                                                                           \
    {                                                                                         \
        MPI_Request r;                                                                        \
        return finish(start(__VA_ARGS__, &r), &r, MPI_STATUS_IGNORE);                         \
    }

/* Calls of the same parameters share their lists. */
#define SEND_PARAMS                                                                          \
    (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
#define SEND_ARGS buf, count, datatype, dest, tag, comm

AS_NONBLOCKING(MPI_Send, SEND_PARAMS, MPI_Isend, SEND_ARGS)
AS_NONBLOCKING(MPI_Ssend, SEND_PARAMS, MPI_Issend, SEND_ARGS)

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Request r;
    return finish(MPI_Irecv(buf, count, datatype, source, tag, comm, &r), &r, status);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r[2];
    MPI_Status s[2];
    int rc = MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        MPI_Cancel(&r[0]);
        MPI_Request_free(&r[0]);
        return rc;
    }
    rc = wait_requests(2, r, s);
    if (status != MPI_STATUS_IGNORE)
        *status = s[0];
    return rc;
}

typedef struct {
    int source, tag;
    MPI_Comm comm;
    MPI_Status *status;
    MPI_Message *message;
} probe_ctx;

static int test_probe(void *ctx, int *done)
{
    probe_ctx *c = ctx;
    return MPI_Iprobe(c->source, c->tag, c->comm, done, c->status);
}

static int test_mprobe(void *ctx, int *done)
{
    probe_ctx *c = ctx;
    return MPI_Improbe(c->source, c->tag, c->comm, done, c->message, c->status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    probe_ctx c = {source, tag, comm, status, NULL};
    return complete(test_probe, &c);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    probe_ctx c = {source, tag, comm, status, message};
    return complete(test_mprobe, &c);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    MPI_Request r;
    return finish(MPI_Imrecv(buf, count, type, message, &r), &r, status);
}

/* ---------------------------------------------------------------- collectives */

/* The parameters of Allreduce, Scan and Exscan; of Gather and Scatter; of
 * Allgather and Alltoall. */
#define SCAN_PARAMS                                                                          \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,         \
     MPI_Comm comm)
#define SCAN_ARGS sendbuf, recvbuf, count, datatype, op, comm
#define ROOTED_PARAMS                                                                        \
    (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
     MPI_Datatype recvtype, int root, MPI_Comm comm)
#define ROOTED_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm
#define ALL_PARAMS                                                                           \
    (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
     MPI_Datatype recvtype, MPI_Comm comm)
#define ALL_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm

AS_NONBLOCKING(MPI_Allreduce, SCAN_PARAMS, MPI_Iallreduce, SCAN_ARGS)
AS_NONBLOCKING(MPI_Scan, SCAN_PARAMS, MPI_Iscan, SCAN_ARGS)
AS_NONBLOCKING(MPI_Exscan, SCAN_PARAMS, MPI_Iexscan, SCAN_ARGS)
AS_NONBLOCKING(MPI_Gather, ROOTED_PARAMS, MPI_Igather, ROOTED_ARGS)
AS_NONBLOCKING(MPI_Scatter, ROOTED_PARAMS, MPI_Iscatter, ROOTED_ARGS)
AS_NONBLOCKING(MPI_Allgather, ALL_PARAMS, MPI_Iallgather, ALL_ARGS)
AS_NONBLOCKING(MPI_Alltoall, ALL_PARAMS, MPI_Ialltoall, ALL_ARGS)

AS_NONBLOCKING(MPI_Barrier, (MPI_Comm comm), MPI_Ibarrier, comm)

AS_NONBLOCKING(MPI_Bcast,
               (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
               MPI_Ibcast, buffer, count, datatype, root, comm)

AS_NONBLOCKING(MPI_Reduce,
               (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm),
               MPI_Ireduce, sendbuf, recvbuf, count, datatype, op, root, comm)

AS_NONBLOCKING(MPI_Gatherv,
               (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm),
               MPI_Igatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
               recvtype, root, comm)

AS_NONBLOCKING(MPI_Allgatherv,
               (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                MPI_Comm comm),
               MPI_Iallgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
               recvtype, comm)

AS_NONBLOCKING(MPI_Scatterv,
               (const void *sendbuf, const int sendcounts[], const int displs[],
                MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm),
               MPI_Iscatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
               recvtype, root, comm)

AS_NONBLOCKING(MPI_Alltoallv,
               (const void *sendbuf, const int sendcounts[], const int sdispls[],
                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
               MPI_Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
               rdispls, recvtype, comm)

AS_NONBLOCKING(MPI_Reduce_scatter,
               (const void *sendbuf, void *recvbuf, const int recvcounts[],
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
               MPI_Ireduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm)

AS_NONBLOCKING(MPI_Reduce_scatter_block,
               (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm),
               MPI_Ireduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm)

#endif /* NN_PLAIN_MPI */
