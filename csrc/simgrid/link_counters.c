/*
 * The simulated network's counters over a program's timed region (SMPI only).
 *
 * With --link-counters FILE, rank 0 of the measured program reads every link
 * of the platform where its timed region begins and ends, and every
 * --link-counter-interval seconds of simulated time between, and writes one
 * row per link and reading to FILE (atomically, at the end):
 *
 *   time_s,link,bytes,saturated_s
 *
 * bytes is what SimGrid's link-load plugin (--cfg=plugin:link_load) counted
 * on the link since the region began: the integral of the flow model's load,
 * exact in simulated time. saturated_s is the time the link ran at its full
 * rate (99 % or more of its bandwidth, over each TICK_S of simulated time):
 * in a flow model a link at capacity is where flows are held back, the
 * counterpart of the time a switch's queue holds packets. A daemon actor on
 * rank 0's host takes the readings; it sleeps in simulated time, so it costs
 * the ranks nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/plugins/load.h>

#include "nn_mpi.h"

/* The resolution of saturated_s; the readings between fall on these ticks. */
#define TICK_S 1e-4
/* A link counts as saturated above this share of its bandwidth. */
#define SATURATED_SHARE 0.99

static struct {
    FILE *fp;
    char *path, *tmp_path;
    size_t count;
    sg_link_t *links;
    double *last_bytes, *saturated_s;
    double interval_s, begin_s, next_reading_s;
    int stopped;
} counters;

static void reading(double now)
{
    for (size_t i = 0; i < counters.count; i++)
        fprintf(counters.fp, "%.9f,%s,%.0f,%.9f\n", now, sg_link_get_name(counters.links[i]),
                sg_link_get_cum_load(counters.links[i]), counters.saturated_s[i]);
}

/* Adds the tick that just ended to the saturated time of every link it filled. */
static void account_tick(double tick_s)
{
    for (size_t i = 0; i < counters.count; i++) {
        double bytes = sg_link_get_cum_load(counters.links[i]);
        double capacity = sg_link_get_bandwidth(counters.links[i]) * tick_s;
        if (capacity > 0 && bytes - counters.last_bytes[i] >= SATURATED_SHARE * capacity)
            counters.saturated_s[i] += tick_s;
        counters.last_bytes[i] = bytes;
    }
}

static void sampler(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    while (!counters.stopped) {
        sg_actor_sleep_for(TICK_S);
        if (counters.stopped)
            break;
        account_tick(TICK_S);
        double now = simgrid_get_clock();
        if (counters.interval_s > 0 && now >= counters.next_reading_s) {
            reading(now);
            counters.next_reading_s += counters.interval_s;
        }
    }
}

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "--link-counters: %s '%s'\n", what, path);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void nn_link_counters_begin(const char *path, double interval_s)
{
    static int begun;
    if (begun++)
        fail("counts one timed part; a second began for", path);
    counters.path = strdup(path);
    counters.tmp_path = malloc(strlen(path) + 16);
    if (counters.path == NULL || counters.tmp_path == NULL)
        fail("out of memory for", path);
    sprintf(counters.tmp_path, "%s.tmp", path);
    counters.fp = fopen(counters.tmp_path, "w");
    if (counters.fp == NULL)
        fail("cannot create", counters.tmp_path);
    counters.count = sg_link_count();
    counters.links = sg_link_list();
    counters.last_bytes = calloc(counters.count, sizeof(double));
    counters.saturated_s = calloc(counters.count, sizeof(double));
    if (counters.count > 0 && (counters.last_bytes == NULL || counters.saturated_s == NULL))
        fail("out of memory for", path);
    /* Tracking starts every link's count at zero, now. */
    for (size_t i = 0; i < counters.count; i++)
        sg_link_load_track(counters.links[i]);
    counters.interval_s = interval_s;
    counters.begin_s = simgrid_get_clock();
    counters.next_reading_s = counters.begin_s + interval_s;
    fprintf(counters.fp, "time_s,link,bytes,saturated_s\n");
    reading(counters.begin_s);
    sg_actor_t actor = sg_actor_create("nn-link-counters", sg_host_self(), sampler, 0, NULL);
    sg_actor_daemonize(actor);
}

void nn_link_counters_end(void)
{
    if (counters.fp == NULL)
        return;
    double now = simgrid_get_clock();
    /* The part of a tick since the sampler's last. */
    double since_tick = fmod(now - counters.begin_s, TICK_S);
    if (since_tick > 0)
        account_tick(since_tick);
    counters.stopped = 1;
    reading(now);
    if (fclose(counters.fp) != 0 || rename(counters.tmp_path, counters.path) != 0)
        fail("cannot write", counters.path);
    counters.fp = NULL;
    free(counters.links);
    free(counters.last_bytes);
    free(counters.saturated_s);
    free(counters.path);
    free(counters.tmp_path);
}
