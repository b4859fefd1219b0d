/*
 * Trampoline memory near the probed code, and code writes.
 *
 * A probe's jump is a rel32: its trampoline must lie within 2 GiB of it.
 * The areas are mapped from the gaps /proc/self/maps shows, at the one
 * nearest the probe (MAP_FIXED_NOREPLACE: never over a mapping made
 * meanwhile), read and execute only: code is written into them, as into
 * the probed text, through /proc/self/mem, so no page is ever writable
 * and executable, and no page that other threads run ever changes its
 * protection. Callers serialise (probes.c); nothing here is on the event
 * path. System calls are made directly (core/sys.h): the io family
 * interposes glibc's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "core/sys.h"
#include "dynprobe/area.h"

#define AREA_SIZE (64 * 1024)
#define MAX_AREAS 64
#define REACH ((uint64_t)2 << 30)
#define MARGIN ((uint64_t)AREA_SIZE)
#define LOWEST ((uint64_t)1 << 20)
#define HIGHEST ((uint64_t)0x7ffffffff000)

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static struct area {
	uint64_t base, used;
} areas[MAX_AREAS];
static unsigned nareas;

static bool within(uint64_t a, uint64_t near)
{
	uint64_t d = a > near ? a - near : near - a;

	return d < REACH - MARGIN;
}

/* Parses a hex number at *s; moves *s past it. */
static uint64_t hex(const char **s, const char *end)
{
	uint64_t v = 0;

	for (; *s < end; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

/* The candidate in gap [lo, hi) nearest `near`, within reach; 0: none. */
static uint64_t in_gap(uint64_t lo, uint64_t hi, uint64_t near)
{
	uint64_t c;

	lo = (lo + AREA_SIZE - 1) & ~(uint64_t)(AREA_SIZE - 1);
	if (lo < LOWEST)
		lo = LOWEST;
	if (hi > HIGHEST)
		hi = HIGHEST;
	if (hi < lo + AREA_SIZE)
		return 0;
	hi = (hi - AREA_SIZE) & ~(uint64_t)(AREA_SIZE - 1); /* the highest start */
	c = near < lo ? lo : near > hi ? hi : near & ~(uint64_t)(AREA_SIZE - 1);
	if (c < lo)
		c = lo;
	return within(c, near) && within(c + AREA_SIZE, near) ? c : 0;
}

/* The free place nearest `near` where an area fits; 0 when none. */
static uint64_t find_gap(uint64_t near)
{
	static char buf[16384];
	uint64_t prev_end = 0, best = 0, bestd = UINT64_MAX;
	size_t have = 0;
	long fd = st__sys3(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	bool eof = false;

	if (fd < 0)
		return 0;
	for (;;) {
		const char *nl, *s;
		uint64_t start, end, c, d;

		nl = memchr(buf, '\n', have);
		if (!nl && !eof && have < sizeof(buf)) {
			long n = st__sys3(SYS_read, fd, buf + have, sizeof(buf) - have);

			if (n <= 0)
				eof = true;
			else
				have += (size_t)n;
			continue;
		}
		if (!nl)
			break;
		s = buf;
		start = hex(&s, nl);
		s++;
		end = hex(&s, nl);
		c = in_gap(prev_end, start, near);
		d = c > near ? c - near : near - c;
		if (c && d < bestd)
			best = c, bestd = d;
		if (end > prev_end)
			prev_end = end;
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
	}
	st__close((int)fd);
	if (!best) {
		uint64_t c = in_gap(prev_end, HIGHEST, near);

		best = c;
	}
	return best;
}

uint64_t dp_area_take(uint64_t near, size_t n)
{
	uint64_t at;
	void *m;

	n = (n + 63) & ~(size_t)63;
	if (n > 4096)
		return 0;
	for (unsigned i = 0; i < nareas; i++) {
		struct area *a = &areas[i];

		if (a->used + n <= AREA_SIZE && within(a->base, near) &&
		    within(a->base + AREA_SIZE, near)) {
			at = a->base + a->used;
			a->used += n;
			return at;
		}
	}
	if (nareas == MAX_AREAS)
		return 0;
	at = find_gap(near);
	if (!at)
		return 0;
	m = st__mmap((void *)(uintptr_t)at, AREA_SIZE, PROT_READ | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (!m)
		return 0;
	if ((uint64_t)(uintptr_t)m != at) {
		/* (a kernel before 4.17 took the address as a hint) */
		st__munmap(m, AREA_SIZE);
		return 0;
	}
	areas[nareas++] = (struct area){ at, n };
	return at;
}

int dp_write_code(uint64_t addr, const void *bytes, size_t n)
{
	long fd = st__sys3(SYS_open, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0);
	long w;

	if (fd < 0)
		return (int)fd;
	w = st__sys4(SYS_pwrite64, fd, bytes, n, addr);
	st__close((int)fd);
	return w == (long)n ? 0 : w < 0 ? (int)w : -EIO;
}
