/*
 * libnntcpcc.so: sets the TCP congestion control of every TCP socket a
 * process creates to $NN_TCP_CONGESTION (e.g. "cubic", "bbr").
 *
 * Why: the congestion control is a host-wide sysctl that a network
 * namespace inherits and cannot change, but the asymmetric-link behaviour
 * of seed 003 depends on it, so the testbed sets it per socket for the MPI
 * ranks it launches (LD_PRELOAD), leaving the host untouched.
 */
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*socket_fn)(int, int, int);

int socket(int domain, int type, int protocol)
{
    static socket_fn real_socket = NULL;
    if (real_socket == NULL)
        real_socket = (socket_fn)dlsym(RTLD_NEXT, "socket");
    int fd = real_socket(domain, type, protocol);
    const char *cc = getenv("NN_TCP_CONGESTION");
    if (fd < 0 || cc == NULL || *cc == '\0')
        return fd;
    if ((domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM &&
        (protocol == 0 || protocol == IPPROTO_TCP)) {
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) != 0) {
            static int warned = 0;
            if (!warned) {
                warned = 1;
                fprintf(stderr, "libnntcpcc: cannot set TCP congestion control '%s'\n", cc);
            }
        }
    }
    return fd;
}
