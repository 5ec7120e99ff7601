/* target_x86.c: host (x86) side of the target API.
 *
 * Output goes to stdout. Each start/end marker pair prints a meta line
 * "@minun ns <elapsed>" (CLOCK_MONOTONIC) that the Python side collects as the latency;
 * printing happens after the end marker, outside the measured region.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "minun_target.h"

static struct timespec minun_t0;

void minun_putc(char c)
{
    putchar(c);
}

void minun_flush(void)
{
    fflush(stdout);
}

void minun_exit(int code)
{
    fflush(stdout);
    exit(code);
}

void minun_marker_start(void)
{
    clock_gettime(CLOCK_MONOTONIC, &minun_t0);
}

void minun_marker_end(void)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long ns = (long long)(t1.tv_sec - minun_t0.tv_sec) * 1000000000LL
                   + (t1.tv_nsec - minun_t0.tv_nsec);
    printf("@minun ns %lld\n", ns);
}
