/* Unit tests of nn_sleep_ns: a signal only interrupts the sleep, which then
 * goes on for the time that was left; any other nanosleep error ends the
 * process with a message instead of retrying for ever. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"
#include "nn.h"

/* This definition takes the place of the C library's for nn_time.c: it fails
 * with EINVAL on demand and otherwise sleeps as nanosleep does. */
static int fake_einval = 0;

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (fake_einval) {
        errno = EINVAL;
        return -1;
    }
    int rc = clock_nanosleep(CLOCK_REALTIME, 0, req, rem);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t alarms = 0;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* A timer signal every 5 ms interrupts a 60 ms sleep several times: the sleep
 * still lasts 60 ms. */
static void test_interrupted_sleep_resumes(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: nanosleep returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every5ms = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every5ms, NULL);
    long long t0 = nn_now_ns();
    nn_sleep_ns(60000000LL);
    long long slept = nn_now_ns() - t0;
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_DFL);
    EXPECT(alarms >= 2, "the timer did not interrupt the sleep");
    EXPECT(slept >= 60000000LL, "an interrupted sleep ended early");
}

/* EINVAL once looped for ever; now the process aborts with a message. A child
 * process sleeps; alarm() kills it with SIGALRM should it loop. */
static void test_other_error_aborts(void)
{
    int out[2];
    if (pipe(out) != 0) {
        EXPECT(0, "pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(out[1], 2);
        alarm(5);
        fake_einval = 1;
        nn_sleep_ns(1000);
        _exit(0);
    }
    close(out[1]);
    char msg[512] = "";
    size_t len = 0;
    ssize_t n;
    while (len < sizeof msg - 1 && (n = read(out[0], msg + len, sizeof msg - 1 - len)) > 0)
        len += (size_t)n;
    msg[len] = '\0';
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
           "nanosleep failing with EINVAL did not abort the process");
    EXPECT(strstr(msg, "nn_sleep_ns(1000): nanosleep failed: Invalid argument") != NULL,
           "no message naming the nanosleep error");
}

int main(void)
{
    test_interrupted_sleep_resumes();
    test_other_error_aborts();
    if (failures > 0) {
        fprintf(stderr, "test_time: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_time: all passed\n");
    return 0;
}
