/*
 * corun: several MPI programs in one SimGrid simulation, sharing its platform.
 *
 *   smpirun -np N ... corun -np N0 PROGRAM [ARGS...] : -np N1 PROGRAM [ARGS...] ...
 *
 * The first N0 ranks run the first program, the next N1 the second, and so on
 * (N is their sum), as Open MPI's `mpirun -np N0 a : -np N1 b` does. smpirun
 * runs one program, and SimGrid 3.32 gives no other way to run several in one
 * simulation with every rank's globals its own: this program is that one, and
 * it loads each rank's program from a copy of its own, as smpirun loads this
 * one. The programs are netnoise's, built for SMPI (csrc/Makefile,
 * FLAVOUR=smpi): a shared object whose MPI_COMM_WORLD is its variable
 * nn_world, which this sets to the ranks of that program before calling its
 * main. MPI is started here; the program finalizes it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "../common/nn_life.h"

#define MAX_PROGRAMS 8

typedef struct {
    int ranks;
    char **argv; /* the program and its arguments, NULL-terminated in place */
    int argc;
} program;

typedef int (*main_function)(int, char **);

/* Every rank ends, rank 0 saying why (fmt with one %s, what) and how to call this. */
static void fail(int rank, const char *fmt, const char *what)
{
    if (rank == 0) {
        fprintf(stderr, "corun: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\nusage: corun -np N PROGRAM [ARGS...] : -np N PROGRAM [ARGS...] ...\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* The programs of argv; every ':' that ends one is overwritten with NULL. */
static int parse(int argc, char **argv, program *programs, int rank)
{
    int count = 0;
    for (int i = 1; i < argc;) {
        if (count == MAX_PROGRAMS)
            fail(rank, "more than %s programs", "8");
        if (strcmp(argv[i], "-np") != 0 || i + 1 >= argc)
            fail(rank, "expected '-np N PROGRAM' at '%s'", argv[i]);
        char *end;
        errno = 0;
        long ranks = strtol(argv[i + 1], &end, 10);
        if (errno != 0 || *end != '\0' || ranks < 1 || ranks > 1000000)
            fail(rank, "-np takes a positive rank count, got '%s'", argv[i + 1]);
        if (i + 2 >= argc)
            fail(rank, "no program after '-np %s'", argv[i + 1]);
        program *p = &programs[count++];
        p->ranks = (int)ranks;
        p->argv = &argv[i + 2];
        p->argc = 0;
        for (i += 2; i < argc && strcmp(argv[i], ":") != 0; i++)
            p->argc++;
        if (i < argc)
            argv[i++] = NULL;
    }
    if (count == 0)
        fail(rank, "%s", "no program given");
    return count;
}

/* A copy of the program that is this rank's alone, loaded; the copy's file is
 * gone once loaded. */
static void *load_copy(const char *path, int rank)
{
    const char *why = NULL;
    FILE *program = nn_fopen_regular(path, &why);
    if (program == NULL) {
        fprintf(stderr, "corun: cannot open program '%s': %s\n", path, why);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int in = fileno(program);
    const char *dir = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    char copy[4096];
    snprintf(copy, sizeof copy, "%s/corun-rank%d-XXXXXX.so", dir, rank);
    int out = mkstemps(copy, 3);
    if (out < 0) {
        fprintf(stderr, "corun: cannot create a copy of '%s' in %s: %s\n", path, dir,
                strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char buffer[1 << 16];
    ssize_t got;
    while ((got = read(in, buffer, sizeof buffer)) > 0)
        if (write(out, buffer, (size_t)got) != got)
            got = -1;
    fclose(program);
    if (close(out) != 0 || got < 0) {
        unlink(copy);
        fprintf(stderr, "corun: cannot copy '%s' to %s\n", path, copy);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    void *handle = dlopen(copy, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    unlink(copy);
    if (handle == NULL) {
        fprintf(stderr, "corun: cannot load '%s': %s\n", path, dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return handle;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    program programs[MAX_PROGRAMS];
    int count = parse(argc, argv, programs, rank);
    /* The injector starts in a program's MPI_Init, which runs here instead. */
    if (getenv("NN_LATENCY_TABLE") != NULL)
        fail(rank, "%s", "the latency injector (NN_LATENCY_TABLE) runs in a program alone");
    int total = 0, mine = -1;
    for (int j = 0; j < count; j++) {
        if (rank >= total && rank < total + programs[j].ranks)
            mine = j;
        total += programs[j].ranks;
    }
    if (total != size) {
        char ranks[64];
        snprintf(ranks, sizeof ranks, "%d ranks, smpirun started %d", total, size);
        fail(rank, "the programs' -np add up to %s", ranks);
    }
    MPI_Comm world;
    MPI_Comm_split(MPI_COMM_WORLD, mine, rank, &world);
    program *p = &programs[mine];
    void *handle = load_copy(p->argv[0], rank);
    MPI_Comm *program_world = dlsym(handle, "nn_world");
    main_function program_main = (main_function)dlsym(handle, "main");
    if (program_world == NULL || program_main == NULL) {
        fprintf(stderr, "corun: '%s' is not a netnoise program built for SMPI (no %s)\n",
                p->argv[0], program_world == NULL ? "nn_world" : "main");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *program_world = world;
    return program_main(p->argc, p->argv);
}
