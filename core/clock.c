/*
 * The trace clock of the process: the TSC when the daemon chose it (the CPU
 * has a constant, non-stop TSC), CLOCK_MONOTONIC otherwise. The daemon
 * calibrates the TSC and gives the multiplier that turns cycles into
 * nanoseconds; the process only reads the counter.
 */
#include <time.h>

#include "internal.h"

ST_API int st__clock_tsc;

static uint64_t ns_mult;
static uint32_t ns_shift;

void st__clock_configure(void)
{
	const struct st_abi_control *c = st__control;
	uint32_t shift = st_load_shared(&c->ns_shift);
	uint64_t mult = st_load_shared(&c->ns_mult);

	if (st_load_shared(&c->clock) == ST_CLOCK_TSC && mult != 0 && shift < 64) {
		ns_mult = mult;
		ns_shift = shift;
		st__clock_tsc = 1;
	} else {
		st__clock_tsc = 0;
	}
}

ST_API uint64_t st__clock_monotonic(void)
{
	struct timespec ts;

	/* vDSO: no system call, errno untouched on success. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

ST_API uint64_t st_clock_delta_ns(uint64_t delta)
{
	if (!st__clock_tsc)
		return delta;
	return (uint64_t)(((unsigned __int128)delta * ns_mult) >> ns_shift);
}
