/*
 * What every netnoise process needs to end with its run, header-only so that
 * the preloaded libraries (the latency injector) share it without linking the
 * common layer:
 *
 * - input files are opened only when they are regular files: a FIFO would
 *   block the open, and the program, until a writer came; a device would
 *   never end;
 * - a process dies with the launcher that started it (its parent: mpirun's or
 *   Slurm's daemon): killed, it takes its ranks with it instead of leaving
 *   them blocked for good.
 */
#ifndef NN_LIFE_H
#define NN_LIFE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__) && !defined(SMPI_HELPERS_H)
#include <sys/prctl.h>
#endif

/* path opened for reading when it is a regular file, else NULL with *why set
 * to the reason (a static string, or strerror's). The open does not wait on a
 * FIFO: it is non-blocking, checked, then made blocking. */
static inline FILE *nn_fopen_regular(const char *path, const char **why)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *why = strerror(errno);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = S_ISDIR(st.st_mode) ? "is a directory, not a file"
                                   : "not a regular file (a FIFO, device or socket)";
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *fp = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? NULL : fdopen(fd, "r");
    if (fp == NULL) {
        *why = strerror(errno);
        close(fd);
    }
    return fp;
}

/* Drops a UTF-8 byte-order mark from the start of a file's first line (an
 * editor's, on files saved on Windows), as Python's utf-8-sig reader does. */
static inline void nn_strip_bom(char *first_line)
{
    if (strncmp(first_line, "\xEF\xBB\xBF", 3) == 0)
        memmove(first_line, first_line + 3, strlen(first_line + 3) + 1);
}

/* The parent-death signal: SIGKILL once the process that started this one is
 * gone (armed here, checked against a parent that died just before). Under
 * SimGrid's SMPI every rank is a thread of the simulator: nothing to arm. */
static inline void nn_die_with_parent(void)
{
#if defined(__linux__) && !defined(SMPI_HELPERS_H)
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent)
        _exit(128 + SIGKILL);
#endif
}

#endif
