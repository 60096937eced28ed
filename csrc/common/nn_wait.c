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

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Isend(buf, count, datatype, dest, tag, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Issend(buf, count, datatype, dest, tag, comm, &r), &r, MPI_STATUS_IGNORE);
}

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

int MPI_Barrier(MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Ibarrier(comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Ibcast(buffer, count, datatype, root, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc = MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &r);
    return finish(rc, &r, MPI_STATUS_IGNORE);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, &r), &r,
                  MPI_STATUS_IGNORE);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    MPI_Request r;
    return finish(MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, &r), &r,
                  MPI_STATUS_IGNORE);
}

#endif /* NN_PLAIN_MPI */
