/*
 * libnnlatency, level "tcp": the transport counterpart of the paper's
 * post_send hook (seed 004, Sec. 3.1) for TCP. Every call that hands bytes
 * to a TCP socket (send, sendto, sendmsg, sendmmsg, write, writev) first
 * injects one delay, then calls the C library's function (dlsym RTLD_NEXT).
 * Files, pipes, terminals, UNIX and UDP sockets are never delayed.
 *
 * Whether an fd is a TCP socket is asked of the kernel (SO_PROTOCOL and
 * SO_DOMAIN) on its first write and cached for fds below FD_CACHE; the
 * entry is forgotten when the fd is closed or replaced (close, close_range,
 * dup2, dup3) or returned by socket/socketpair/accept/accept4. Higher fds
 * are asked every time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nnlat.h"

#define FD_CACHE 65536
enum { FD_UNKNOWN = 0, FD_OTHER = 1, FD_TCP = 2 };
static _Atomic unsigned char fd_kind[FD_CACHE];

static int ask_kernel(int fd)
{
    int saved = errno, value = 0, tcp = 0;
    socklen_t len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &value, &len) == 0 && value == IPPROTO_TCP) {
        len = sizeof value;
        tcp = getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) == 0 &&
              (value == AF_INET || value == AF_INET6);
    }
    errno = saved;
    return tcp;
}

static int is_tcp(int fd)
{
    if (fd < 0)
        return 0;
    if (fd >= FD_CACHE)
        return ask_kernel(fd);
    unsigned char kind = atomic_load_explicit(&fd_kind[fd], memory_order_relaxed);
    if (kind == FD_UNKNOWN) {
        kind = ask_kernel(fd) ? FD_TCP : FD_OTHER;
        atomic_store_explicit(&fd_kind[fd], kind, memory_order_relaxed);
    }
    return kind == FD_TCP;
}

static void forget(int fd)
{
    if (fd >= 0 && fd < FD_CACHE)
        atomic_store_explicit(&fd_kind[fd], FD_UNKNOWN, memory_order_relaxed);
}

static size_t iov_bytes(const struct iovec *iov, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; iov != NULL && i < n; i++)
        total += iov[i].iov_len;
    return total;
}

/* Delay a call that would hand bytes > 0 to fd, if fd is a TCP socket. */
static inline void before_send(int fd, size_t bytes)
{
    if (nnlat_active == NNLAT_TCP && bytes > 0 && is_tcp(fd))
        nnlat_inject();
}

/* The next definition of name (the C library's), looked up once. */
#define REAL(name)                                                                \
    static __typeof__(name) *real_##name = NULL;                                  \
    if (real_##name == NULL)                                                      \
        real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                \
    if (real_##name == NULL) {                                                    \
        errno = ENOSYS;                                                           \
        return -1;                                                                \
    }

/* ---------------------------------------------------------------- sends */

NNLAT_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
    REAL(write)
    before_send(fd, count);
    return real_write(fd, buf, count);
}

NNLAT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    REAL(writev)
    if (nnlat_active == NNLAT_TCP && iovcnt > 0)
        before_send(fd, iov_bytes(iov, (size_t)iovcnt));
    return real_writev(fd, iov, iovcnt);
}

NNLAT_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    REAL(send)
    before_send(fd, len);
    return real_send(fd, buf, len, flags);
}

NNLAT_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                            const struct sockaddr *addr, socklen_t addrlen)
{
    REAL(sendto)
    before_send(fd, len);
    return real_sendto(fd, buf, len, flags, addr, addrlen);
}

NNLAT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    REAL(sendmsg)
    if (nnlat_active == NNLAT_TCP && msg != NULL)
        before_send(fd, iov_bytes(msg->msg_iov, msg->msg_iovlen));
    return real_sendmsg(fd, msg, flags);
}

/* One delay per message of the vector that carries bytes, as if sent one by one. */
NNLAT_EXPORT int sendmmsg(int fd, struct mmsghdr *msgvec, unsigned int vlen, int flags)
{
    REAL(sendmmsg)
    if (nnlat_active == NNLAT_TCP && msgvec != NULL)
        for (unsigned i = 0; i < vlen; i++)
            before_send(fd, iov_bytes(msgvec[i].msg_hdr.msg_iov, msgvec[i].msg_hdr.msg_iovlen));
    return real_sendmmsg(fd, msgvec, vlen, flags);
}

/* ---------------------------------------------------------------- fd life cycle */

NNLAT_EXPORT int close(int fd)
{
    REAL(close)
    forget(fd);
    return real_close(fd);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
NNLAT_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    REAL(close_range)
    for (unsigned int fd = first; fd <= last && fd < FD_CACHE; fd++)
        forget((int)fd);
    return real_close_range(first, last, flags);
}
#endif

NNLAT_EXPORT int dup2(int oldfd, int newfd)
{
    REAL(dup2)
    int rc = real_dup2(oldfd, newfd);
    forget(newfd);
    return rc;
}

NNLAT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    REAL(dup3)
    int rc = real_dup3(oldfd, newfd, flags);
    forget(newfd);
    return rc;
}

NNLAT_EXPORT int socket(int domain, int type, int protocol)
{
    REAL(socket)
    int fd = real_socket(domain, type, protocol);
    forget(fd);
    return fd;
}

NNLAT_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
    REAL(socketpair)
    int rc = real_socketpair(domain, type, protocol, sv);
    if (rc == 0) {
        forget(sv[0]);
        forget(sv[1]);
    }
    return rc;
}

NNLAT_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
    REAL(accept)
    int newfd = real_accept(fd, addr, addrlen);
    forget(newfd);
    return newfd;
}

NNLAT_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    REAL(accept4)
    int newfd = real_accept4(fd, addr, addrlen, flags);
    forget(newfd);
    return newfd;
}
