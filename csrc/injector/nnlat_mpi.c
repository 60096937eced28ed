/*
 * libnnlatency, level "mpi": PMPI wrappers of the point-to-point send
 * family. Each wrapper injects one delay, then calls the PMPI_ version:
 * the MPI counterpart of the paper's hook at the top of post_send
 * (seed 004, Sec. 3.1, Algorithm 2), independent of network and MPI
 * transport. Sends to MPI_PROC_NULL send nothing and are not delayed.
 *
 * Persistent sends (MPI_{,B,S,R}send_init) are delayed when started: their
 * requests are remembered in a small hash set until MPI_Request_free.
 * Collectives, one-sided operations and the Fortran bindings (which in
 * Open MPI call PMPI_ directly) are not intercepted.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "nnlat.h"

static inline int delaying(int dest)
{
    return nnlat_active == NNLAT_MPI && dest != MPI_PROC_NULL;
}

/* ---------------------------------------------------------------- persistent sends */

#define SLOTS 4096 /* power of two */
enum { EMPTY = 0, USED = 1, DELETED = 2 };
_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request wider than 64 bits");

static uint64_t slot_key[SLOTS];
static unsigned char slot_state[SLOTS];
static int used_slots, deleted_slots;
static atomic_flag slots_lock = ATOMIC_FLAG_INIT;

static uint64_t key_of(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r);
    return k;
}

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&slots_lock, memory_order_acquire))
        ;
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&slots_lock, memory_order_release);
}

/* Slot holding key, or -1. */
static int find(uint64_t key)
{
    unsigned h = (unsigned)nnlat_mix_seed(key) & (SLOTS - 1);
    for (unsigned i = 0; i < SLOTS; i++) {
        unsigned s = (h + i) & (SLOTS - 1);
        if (slot_state[s] == EMPTY)
            return -1;
        if (slot_state[s] == USED && slot_key[s] == key)
            return (int)s;
    }
    return -1;
}

static int insert(uint64_t key)
{
    unsigned h = (unsigned)nnlat_mix_seed(key) & (SLOTS - 1);
    for (unsigned i = 0; i < SLOTS; i++) {
        unsigned s = (h + i) & (SLOTS - 1);
        if (slot_state[s] != USED) {
            if (slot_state[s] == DELETED)
                deleted_slots--;
            slot_state[s] = USED;
            slot_key[s] = key;
            used_slots++;
            return 0;
        }
    }
    return -1;
}

/* Tombstones make misses slow: rehash once they pile up. */
static void rebuild(void)
{
    static uint64_t keep[SLOTS];
    int n = 0;
    for (int s = 0; s < SLOTS; s++)
        if (slot_state[s] == USED)
            keep[n++] = slot_key[s];
    memset(slot_state, EMPTY, sizeof slot_state);
    used_slots = deleted_slots = 0;
    for (int i = 0; i < n; i++)
        insert(keep[i]);
}

static void track(MPI_Request r)
{
    static int warned = 0;
    lock();
    uint64_t key = key_of(r);
    if (find(key) < 0) {
        if (used_slots + deleted_slots >= SLOTS / 2)
            rebuild();
        if (used_slots >= SLOTS / 2 || insert(key) != 0) {
            if (!warned)
                fprintf(stderr,
                        "libnnlatency: warning: more than %d persistent send requests: "
                        "further ones are not delayed\n",
                        SLOTS / 2);
            warned = 1;
        }
    }
    unlock();
}

static int tracked(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL)
        return 0;
    lock();
    int found = find(key_of(r)) >= 0;
    unlock();
    return found;
}

static void untrack(MPI_Request r)
{
    lock();
    int s = find(key_of(r));
    if (s >= 0) {
        slot_state[s] = DELETED;
        used_slots--;
        deleted_slots++;
    }
    unlock();
}

/* ---------------------------------------------------------------- wrappers
 * The wrappers of a family differ in their name alone: only a macro can
 * define them once. PARAMS and ARGS are parenthesised lists. */

/* A send delayed once, then passed on. */
#define DELAYED(NAME, PARAMS, ARGS)                                                          \
    NNLAT_EXPORT int MPI_##NAME PARAMS                                                       \
    {                                                                                        \
        if (delaying(dest))                                                                  \
            nnlat_inject();                                                                  \
        return PMPI_##NAME ARGS;                                                             \
    }

/* A persistent send, remembered so that each start of it is delayed. */
#define PERSISTENT_INIT(NAME)                                                                \
    NNLAT_EXPORT int MPI_##NAME REQUEST_PARAMS                                               \
    {                                                                                        \
        int rc = PMPI_##NAME REQUEST_ARGS;                                                   \
        if (rc == MPI_SUCCESS && delaying(dest))                                             \
            track(*request);                                                                 \
        return rc;                                                                           \
    }

#define SEND_PARAMS                                                                          \
    (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
#define SEND_ARGS (buf, count, datatype, dest, tag, comm)
/* The nonblocking and persistent sends: the same and a request. */
#define REQUEST_PARAMS                                                                       \
    (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,   \
     MPI_Request *request)
#define REQUEST_ARGS (buf, count, datatype, dest, tag, comm, request)

DELAYED(Send, SEND_PARAMS, SEND_ARGS)
DELAYED(Bsend, SEND_PARAMS, SEND_ARGS)
DELAYED(Ssend, SEND_PARAMS, SEND_ARGS)
DELAYED(Rsend, SEND_PARAMS, SEND_ARGS)

DELAYED(Sendrecv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
         void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
         MPI_Comm comm, MPI_Status *status),
        (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
         recvtag, comm, status))

DELAYED(Sendrecv_replace,
        (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
         int recvtag, MPI_Comm comm, MPI_Status *status),
        (buf, count, datatype, dest, sendtag, source, recvtag, comm, status))

DELAYED(Isend, REQUEST_PARAMS, REQUEST_ARGS)
DELAYED(Ibsend, REQUEST_PARAMS, REQUEST_ARGS)
DELAYED(Issend, REQUEST_PARAMS, REQUEST_ARGS)
DELAYED(Irsend, REQUEST_PARAMS, REQUEST_ARGS)

PERSISTENT_INIT(Send_init)
PERSISTENT_INIT(Bsend_init)
PERSISTENT_INIT(Ssend_init)
PERSISTENT_INIT(Rsend_init)

NNLAT_EXPORT int MPI_Start(MPI_Request *request)
{
    if (nnlat_active == NNLAT_MPI && request != NULL && tracked(*request))
        nnlat_inject();
    return PMPI_Start(request);
}

/* One delay per send request, all before the requests start together. */
NNLAT_EXPORT int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (nnlat_active == NNLAT_MPI && array_of_requests != NULL)
        for (int i = 0; i < count; i++)
            if (tracked(array_of_requests[i]))
                nnlat_inject();
    return PMPI_Startall(count, array_of_requests);
}

NNLAT_EXPORT int MPI_Request_free(MPI_Request *request)
{
    if (nnlat_active == NNLAT_MPI && request != NULL && *request != MPI_REQUEST_NULL)
        untrack(*request);
    return PMPI_Request_free(request);
}

/* ---------------------------------------------------------------- report */

/* The report is complete once MPI is done; some launchers end ranks right
 * after MPI_Finalize, so it is written here rather than only at exit. */
NNLAT_EXPORT int MPI_Finalize(void)
{
    int rc = PMPI_Finalize();
    nnlat_finish(&nnlat, 0);
    return rc;
}
