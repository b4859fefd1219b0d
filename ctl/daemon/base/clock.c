/*
 * The trace clock, daemon side.
 *
 * The TSC is used when the CPU advertises it constant and non-stop (its
 * rate does not change with frequency scaling or sleep states), which makes
 * it one clock for every core and process of the machine. Otherwise, or
 * when forced, CLOCK_MONOTONIC in nanoseconds.
 *
 * TSC calibration: pairs (TSC, CLOCK_MONOTONIC) are sampled with the TSC
 * read between two clock reads, keeping the tightest of several tries. A
 * first estimate over ~10 ms gives the processes their cycles-to-ns factor
 * (used for wait times); the estimate is refined over the whole session for
 * the CTF clock frequency. The CTF clock offset puts cycle 0 at its
 * CLOCK_REALTIME date, so readers show wall-clock times.
 *
 * Owns: nothing kept: the clock it calibrates is its caller's (struct
 *       st_clock in the daemon's state).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One (cycles, ns) pair read as close together as the machine allows. */
static void sample(clockid_t id, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = ns_of(id), t = rdtsc(), b = ns_of(id);

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

bool st_clock_tsc_usable(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool constant = false, nonstop = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
}

static void set_factor(struct st_clock *c)
{
	/* ns = (cycles * mult) >> 48: mult < 2^48 for clocks above 1 GHz, so
	 * the process's 128-bit product cannot overflow for any 64-bit delta,
	 * and the rounding of mult costs well under a nanosecond an hour. */
	c->ns_shift = 48;
	c->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 48) / c->freq);
}

static void estimate(struct st_clock *c)
{
	uint64_t dt = c->cal1_tsc - c->cal0_tsc, dn = c->cal1_ns - c->cal0_ns;

	if (dn > 0 && dt > 0)
		c->freq = (uint64_t)(((unsigned __int128)dt * 1000000000u + dn / 2) / dn);
}

int st_clock_init(struct st_clock *c, uint32_t choice, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (choice == ST_CLOCK_TSC && !st_clock_tsc_usable()) {
		snprintf(err, errlen, "the TSC is not constant and non-stop on this CPU");
		return -EINVAL;
	}
	if (choice == 0)
		choice = st_clock_tsc_usable() ? ST_CLOCK_TSC : ST_CLOCK_MONOTONIC;
	c->kind = choice;
	if (c->kind == ST_CLOCK_MONOTONIC) {
		c->freq = 1000000000u;
		c->ns_mult = 1;
		c->ns_shift = 0;
		return 0;
	}
	sample(CLOCK_MONOTONIC, &c->cal0_tsc, &c->cal0_ns);
	do {
		struct timespec d = { 0, 2000000 };

		nanosleep(&d, NULL);
		sample(CLOCK_MONOTONIC, &c->cal1_tsc, &c->cal1_ns);
	} while (c->cal1_ns - c->cal0_ns < 10000000u);
	estimate(c);
	if (c->freq < 100000000u) {
		snprintf(err, errlen, "TSC calibration failed (%llu Hz)", (unsigned long long)c->freq);
		return -EIO;
	}
	set_factor(c);
	return 0;
}

void st_clock_refine(struct st_clock *c)
{
	if (c->kind != ST_CLOCK_TSC)
		return;
	sample(CLOCK_MONOTONIC, &c->cal1_tsc, &c->cal1_ns);
	estimate(c);
}

void st_clock_ctf(const struct st_clock *c, uint64_t *freq, int64_t *offset_s, uint64_t *offset)
{
	uint64_t v, real;
	unsigned __int128 since_zero, origin;

	*freq = c->freq;
	if (c->kind == ST_CLOCK_TSC)
		sample(CLOCK_REALTIME, &v, &real);
	else {
		v = ns_of(CLOCK_MONOTONIC);
		real = ns_of(CLOCK_REALTIME);
	}
	/* ns from clock value 0 to now, and the date of value 0. */
	since_zero = (unsigned __int128)v * 1000000000u / c->freq;
	origin = since_zero < real ? real - since_zero : 0;
	*offset_s = (int64_t)(origin / 1000000000u);
	*offset = (uint64_t)((origin % 1000000000u) * c->freq / 1000000000u);
}

uint64_t st_clock_now(const struct st_clock *c)
{
	return c->kind == ST_CLOCK_TSC ? rdtsc() : ns_of(CLOCK_MONOTONIC);
}
