/*
 * CLOCK_MONOTONIC in milliseconds: the clock that deadlines and waits count
 * in, in the traced process (transport.c) and in the tools (the daemon,
 * its inspectors, the CLI). Not the trace clock (clock.c).
 */
#ifndef ST_CORE_MONOTIME_H
#define ST_CORE_MONOTIME_H

#include <stdint.h>
#include <time.h>

/* (clock_gettime of this clock cannot fail: errno is left alone) */
static inline uint64_t st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif
