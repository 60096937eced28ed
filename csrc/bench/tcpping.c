/*
 * tcpping: packet-level ping-pong over a plain TCP socket, every sample kept.
 *
 * Seed 004, Sec. 4.2 ("packet level"): the paper times raw InfiniBand
 * writes with ib_write_lat, below the MPI library. On a TCP network the
 * closest equivalent is one small segment each way on a connected TCP
 * socket with Nagle's algorithm off: no MPI in the timed loop, only the
 * kernel's TCP/IP stack and the wire. MPI only starts the processes,
 * tells each initiator where its partner listens, and gathers the samples.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nn_mpi.h"

static const nn_tool_info info = {
    "tcpping",
    "Packet-level round trip over a plain TCP socket between rank pairs, one row per sample.",
    "Ranks are paired (0,1), (2,3), ...; the odd rank of each pair listens on a TCP socket "
    "bound to the IPv4 address of --interface (auto: the first interface that is up and not "
    "the loopback, else the loopback) and sends that address and port to its partner with "
    "MPI; the even rank connects. Both set TCP_NODELAY, so every send is one segment. The "
    "even rank sends --size bytes with send(2), the odd rank receives them with recv(2) and "
    "sends them back, and the even rank times the round trip with CLOCK_MONOTONIC. No MPI "
    "call happens between the --warmup untimed and the --iterations timed exchanges (fewer "
    "when --duration ends them; the initiator then closes the connection). --gap-us spaces "
    "the timed round trips (the initiator sleeps until the next start), so that under a "
    "bursty background they sample the link at times spread over the run rather than in the "
    "quiet spells, when back-to-back round trips are fastest and most numerous. This is the "
    "packet-level measurement of seed 004 (Sec. 4.2, ib_write_lat there), under the MPI "
    "library that pingpong measures. Columns pair, iteration, size_bytes, rtt_us (one-way "
    "latency is rtt_us/2), as pingpong's. The latency injector's tcp level delays each send.",
};

enum { MAX_SIZE = 65536 };

/* Error text of this rank, printed by the rank that met it. */
static char problem[256];

static int choose_address(const char *interface, struct in_addr *out)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) {
        snprintf(problem, sizeof problem, "getifaddrs: %s", strerror(errno));
        return -1;
    }
    int found = 0, automatic = strcmp(interface, "auto") == 0;
    for (struct ifaddrs *ifa = list; ifa != NULL && !found; ifa = ifa->ifa_next) {
        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET)
            continue;
        int wanted = automatic ? (ifa->ifa_flags & IFF_UP) && !(ifa->ifa_flags & IFF_LOOPBACK)
                               : strcmp(ifa->ifa_name, interface) == 0;
        if (wanted) {
            *out = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
            found = 1;
        }
    }
    freeifaddrs(list);
    if (!found && automatic) {
        out->s_addr = htonl(INADDR_LOOPBACK);
        found = 1;
    }
    if (!found)
        snprintf(problem, sizeof problem, "--interface %s has no IPv4 address on this node",
                 interface);
    return found ? 0 : -1;
}

static int fail_errno(const char *what)
{
    snprintf(problem, sizeof problem, "%s: %s", what, strerror(errno));
    return -1;
}

static int no_delay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0
               ? 0
               : fail_errno("setsockopt TCP_NODELAY");
}

/* The odd rank: listen, tell the partner where, accept. Returns the connected fd. */
static int listen_for(int peer, const char *interface)
{
    uint32_t where[2] = {0, 0}; /* address and port, network order; 0,0 = failure */
    struct sockaddr_in addr = {.sin_family = AF_INET};
    int lfd = -1, fd = -1;
    if (choose_address(interface, &addr.sin_addr) == 0) {
        socklen_t len = sizeof addr;
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd < 0)
            fail_errno("socket");
        else if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0)
            fail_errno("bind");
        else if (listen(lfd, 1) != 0)
            fail_errno("listen");
        else if (getsockname(lfd, (struct sockaddr *)&addr, &len) != 0)
            fail_errno("getsockname");
        else {
            where[0] = addr.sin_addr.s_addr;
            where[1] = addr.sin_port;
        }
    }
    MPI_CHECK(MPI_Send(where, 2, MPI_UINT32_T, peer, 0, MPI_COMM_WORLD));
    if (where[1] != 0) {
        fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            fail_errno("accept");
    }
    if (lfd >= 0)
        close(lfd);
    return fd;
}

/* The even rank: learn where the partner listens and connect. */
static int connect_to(int peer)
{
    uint32_t where[2];
    MPI_CHECK(MPI_Recv(where, 2, MPI_UINT32_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (where[1] == 0) {
        snprintf(problem, sizeof problem, "partner rank %d could not listen", peer);
        return -1;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = where[0];
    addr.sin_port = (in_port_t)where[1];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return fail_errno("socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
        snprintf(problem, sizeof problem, "connect to %s:%u: %s", text, ntohs(addr.sin_port),
                 strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

enum direction { RECEIVE, SEND };

/* Sends or receives all len bytes, resuming after a signal. */
static int transfer_all(int fd, char *buf, size_t len, enum direction direction)
{
    while (len > 0) {
        ssize_t n = direction == SEND ? send(fd, buf, len, MSG_NOSIGNAL) : recv(fd, buf, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int round_trip(int fd, char *buf, size_t size)
{
    return transfer_all(fd, buf, size, SEND) || transfer_all(fd, buf, size, RECEIVE) ? -1 : 0;
}

/* The odd rank answers until its partner closes the connection. */
static int echo_until_closed(int fd, char *buf, size_t size)
{
    for (;;) {
        ssize_t n = recv(fd, buf, 1, 0);
        if (n == 0)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || transfer_all(fd, buf + 1, size - 1, RECEIVE) ||
            transfer_all(fd, buf, size, SEND))
            return -1;
    }
}

int main(int argc, char **argv)
{
    nn_run_options run = NN_RUN_DEFAULTS(100, 1000);
    size_t size = 1;
    const char *interface = "auto";
    double gap_us = 0;
    const nn_option opts[] = {
        {"size", NN_OPT_SIZE, &size, 1, MAX_SIZE, NULL, "message size in bytes (at most 64 KiB)"},
        {"interface", NN_OPT_STRING, &interface, 0, 0, NULL,
         "network interface whose IPv4 address the listening rank binds (auto: first up, "
         "not loopback)"},
        NN_WARMUP_OPTION(&run),
        {"iterations", NN_OPT_LONG, &run.iterations, 1, 1e9, NULL, "timed round trips per pair"},
        {"duration", NN_OPT_DOUBLE, &run.duration_s, 0, 1e7, NULL,
         "stop a pair's timed round trips after this many seconds (0: no limit)"},
        {"gap-us", NN_OPT_DOUBLE, &gap_us, 0, 1e7, NULL,
         "start timed round trips at least this many microseconds apart (0: back to back)"},
        NN_CORUN_OPTIONS(&run),
        NN_OPTIONS_END,
    };

    nn_bench b = {.info = &info, .opts = opts, .run = &run, .ranks = NN_RANK_PAIRS};
    nn_bench_begin(&b, &argc, &argv);
    const int rank = b.rank, peer = b.peer;

    const int initiator = rank % 2 == 0;
    int fd = initiator ? connect_to(peer) : listen_for(peer, interface);
    int ok = fd >= 0 && no_delay(fd) == 0, all_ok = 0;
    MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok) {
        if (!ok)
            fprintf(stderr, "tcpping (rank %d): %s\n", rank, problem);
        nn_fail_all(MPI_COMM_WORLD, "tcpping: a pair could not set up its TCP connection");
    }

    nn_writer out;
    nn_bench_writer(&b, &out, MPI_COMM_WORLD, "size warmup interface gap-us");
    nn_meta(&out, "pairs", "%d", b.nranks / 2);
    nn_meta(&out, "transport", "TCP socket, TCP_NODELAY, send/recv");
    nn_meta(&out, "clock", "CLOCK_MONOTONIC");

    char buf[MAX_SIZE];
    memset(buf, 0, size);
    nn_table samples; /* pair, iteration, size_bytes, rtt_us */
    nn_table_init(&samples, 4);
    int failed = 0;
    /* The echoing rank sits in recv() until the connection closes, so the timed
     * region (the runner's windows) includes the initiators' warm-up. */
    nn_timed_begin(&run, MPI_COMM_WORLD);
    if (initiator) {
        /* The warm-up, like the timed part, ends after --duration or on a stop
         * request: the echoing rank follows the initiator alone. */
        const double t_warm = nn_now();
        for (long i = 0; i < run.warmup && !failed && !nn_local_stop(&run); i++) {
            if (run.duration_s > 0 && nn_now() - t_warm >= run.duration_s)
                break;
            failed = round_trip(fd, buf, size) != 0;
        }
        const double t_start = nn_now();
        double next = t_start;
        for (long i = 0; i < run.iterations && !failed; i++) {
            double t0 = nn_now();
            if (t0 < next) {
                nn_sleep_ns((long long)((next - t0) * 1e9));
                t0 = nn_now();
            }
            if (run.duration_s > 0 && t0 - t_start >= run.duration_s)
                break;
            next = t0 + gap_us * 1e-6;
            failed = round_trip(fd, buf, size) != 0;
            double row[4] = {rank / 2, (double)i, (double)size, (nn_now() - t0) * 1e6};
            if (!failed)
                nn_table_add(&samples, row);
        }
    } else {
        failed = echo_until_closed(fd, buf, size) != 0;
    }
    close(fd);
    int any_failed = 0;
    MPI_CHECK(MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    nn_timed_end(&run, MPI_COMM_WORLD);
    if (any_failed) {
        if (failed)
            fprintf(stderr, "tcpping (rank %d): connection to rank %d lost\n", rank, peer);
        nn_writer_close(&out, 0);
        nn_fail_all(MPI_COMM_WORLD, "tcpping: a pair lost its TCP connection");
    }

    nn_table_write(&out, &samples, MPI_COMM_WORLD, "pair,iteration,size_bytes,rtt_us",
                   "%.0f,%.0f,%.0f,%.3f");
    nn_table_free(&samples);
    return nn_bench_end(&out);
}
