/*
 * The event clock (clock.c): TSC or CLOCK_MONOTONIC, calibrated, and the
 * daemon's own milliseconds.
 */
#ifndef ST_DAEMON_BASE_CLOCK_H
#define ST_DAEMON_BASE_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/abi.h"
#include "core/monotime.h" /* st_now_ms: the daemon's deadlines and waits */

struct st_clock {
	uint32_t kind; /* enum st_abi_clock */
	/* calibration samples: (cycles, CLOCK_MONOTONIC ns) */
	uint64_t cal0_tsc, cal0_ns, cal1_tsc, cal1_ns;
	uint64_t freq; /* Hz */
	uint64_t ns_mult;
	uint32_t ns_shift;
};

enum st_clock_choice { ST_CLOCK_AUTO = 0 };

/* Chooses (choice: 0 auto, or an enum st_abi_clock) and calibrates. */
int st_clock_init(struct st_clock *c, uint32_t choice, char *err, size_t errlen);
/* Improves the TSC frequency estimate with the time elapsed since init. */
void st_clock_refine(struct st_clock *c);
/* CTF clock description: freq, and the offset putting cycle 0 at its
 * wall-clock time (offset_s seconds + offset cycles). */
void st_clock_ctf(const struct st_clock *c, uint64_t *freq, int64_t *offset_s, uint64_t *offset);
uint64_t st_clock_now(const struct st_clock *c);
/*
 * The latest time a process's record, read at now, may say: what it wrote
 * is in the past, give or take the clocks of two CPUs, so a tenth of a
 * second later is beyond any honest record (see doc/internals.md, Trace
 * format: times are clamped, the bound of every time in a trace).
 */
static inline uint64_t st_clock_latest(const struct st_clock *c, uint64_t now)
{
	return now + c->freq / 10;
}
bool st_clock_tsc_usable(void);

#endif
