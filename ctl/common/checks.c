/*
 * Checks shared by the command line and the daemon (checks.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/common/escape.h"
#include "ctl/common/defaults.h"

bool st_session_name_ok(const char *name)
{
	return st_abi_name_valid(name);
}

int st_procname_check(const char *name, char *why, size_t n)
{
	size_t len = strlen(name);

	if (len == 0 || len > ST_PROCNAME_MAX) {
		snprintf(why, n, "a process name has 1 to %d characters", ST_PROCNAME_MAX);
		return -1;
	}
	for (size_t i = 0; i < len;) {
		int32_t cp;

		i += st_utf8_char((const unsigned char *)name + i, len - i, &cp);
		if (st_is_control(cp)) {
			snprintf(why, n, "a process name with a control character (0x%02x)", (unsigned)cp);
			return -1;
		}
	}
	return 0;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int st_pattern_check(const char *p, char *why, size_t n)
{
	int colons = 0;

	if (!*p) {
		snprintf(why, n, "an empty pattern");
		return -1;
	}
	if (strlen(p) > ST_PATTERN_MAX) {
		snprintf(why, n, "longer than %d characters", ST_PATTERN_MAX);
		return -1;
	}
	for (const char *s = p; *s; s++) {
		if (*s == '[') {
			/* a bracket expression: [!...] or [^...]; a ']' first is literal */
			const char *e = s + 1;

			if (*e == '!' || *e == '^')
				e++;
			if (*e == ']')
				e++;
			e = strchr(e, ']');
			if (!e) {
				snprintf(why, n, "'[' without its ']'");
				return -1;
			}
			s = e;
		} else if (*s == '\\') {
			if (!s[1]) {
				snprintf(why, n, "ends with a lone backslash");
				return -1;
			}
			s++;
		} else if (*s == ':') {
			if (++colons > 1) {
				snprintf(why, n, "more than one ':' (tracepoints are provider:name)");
				return -1;
			}
		} else if (!name_char(*s) && *s != '*' && *s != '?') {
			snprintf(why, n,
				 "'%c' is in no tracepoint name (provider:name, letters, digits and _; "
				 "globs * ? [...])",
				 *s);
			return -1;
		}
	}
	return 0;
}

int st_pid_parse(const char *s, pid_t *out, char *why, size_t n)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno) {
		snprintf(why, n, "'%s' is not a pid", s);
		return -1;
	}
	if (v < 1 || v > ST_PID_MAX) {
		snprintf(why, n, "%s is out of the range of pids (1 to %d)", s, ST_PID_MAX);
		return -1;
	}
	*out = (pid_t)v;
	return 0;
}

int st_pid_list_parse(const char *s, pid_t *out, size_t max, size_t *count, char *why, size_t n)
{
	*count = 0;
	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ",");
		char one[24];

		if (len == 0) {
			snprintf(why, n, "'%s' has an empty element", s);
			return -1;
		}
		if (*count == max) {
			snprintf(why, n, "more than %zu pids", max);
			return -1;
		}
		snprintf(one, sizeof(one), "%.*s", len < sizeof(one) ? (int)len : (int)sizeof(one) - 1, p);
		if (len >= sizeof(one) || st_pid_parse(one, &out[*count], why, n) < 0) {
			if (len >= sizeof(one))
				snprintf(why, n, "'%.*s' is not a pid", (int)len, p);
			return -1;
		}
		(*count)++;
		p += len;
		if (!*p)
			return 0;
	}
}

void st_size_text(uint64_t b, char *buf, size_t n)
{
	static const char *const units[] = { "GiB", "MiB", "KiB" };

	for (int i = 0; i < 3; i++) {
		uint64_t u = 1ull << (30 - 10 * i);

		if (b >= u && b % u == 0) {
			snprintf(buf, n, "%llu %s", (unsigned long long)(b / u), units[i]);
			return;
		}
	}
	snprintf(buf, n, "%llu bytes", (unsigned long long)b);
}

void st_size_approx(uint64_t b, char *buf, size_t n)
{
	if (b >= 1ull << 30)
		snprintf(buf, n, "%.1f GiB", b / 1073741824.0);
	else if (b >= 10ull << 20)
		snprintf(buf, n, "%.1f MiB", b / 1048576.0);
	else if (b >= 10ull << 10)
		snprintf(buf, n, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)b);
}

void st_buffers_text(uint32_t buffers, const struct st_geometry *g, uint64_t process_memory,
		     uint32_t nslots, char *buf, size_t n)
{
	char b[32], s[32], p[32];

	st_size_text(g->buffer_size, b, sizeof(b));
	st_size_text(g->sb_size, s, sizeof(s));
	st_size_text(process_memory, p, sizeof(p));
	if (buffers == ST_BUFFERS_PER_CPU)
		snprintf(buf, n, "%s per CPU: %u sub-buffers of %s; %s per process (%u CPUs)", b,
			 g->sb_count, s, p, nslots);
	else if (buffers == ST_BUFFERS_PER_USER)
		snprintf(buf, n, "%s per CPU: %u sub-buffers of %s; %s per user (%u CPUs)", b,
			 g->sb_count, s, p, nslots);
	else
		snprintf(buf, n, "%s per thread: %u sub-buffers of %s; at most %s per process (%u "
				 "thread buffers)",
			 b, g->sb_count, s, p, nslots);
}

int st_geometry(uint64_t b, uint64_t s, struct st_geometry *g, char *why, size_t n)
{
	char bt[32], st[32];

	st_size_text(b, bt, sizeof(bt));
	st_size_text(s, st, sizeof(st));
	if (s && (s < ST_ABI_SB_SIZE_MIN || s > ST_ABI_SB_SIZE_MAX || s % ST_ABI_PAGE)) {
		snprintf(why, n, "--subbuf-size %s: a sub-buffer size is a multiple of 4 KiB from 4 KiB to 64 MiB",
			 st);
		return -1;
	}
	if (b && b % ST_ABI_PAGE) {
		snprintf(why, n, "--buffer-size %s: a buffer size is a multiple of 4 KiB", bt);
		return -1;
	}
	if (!b && !s) {
		b = ST_DEFAULT_BUFFER_SIZE;
		s = ST_DEFAULT_SUBBUF_SIZE;
	} else if (!s) {
		s = ST_DEFAULT_SUBBUF_SIZE;
		while (s > ST_ABI_SB_SIZE_MIN && b / s < 4)
			s /= 2;
		while (s < ST_ABI_SB_SIZE_MAX && b / s > ST_ABI_SB_COUNT_MAX)
			s *= 2;
		st_size_text(s, st, sizeof(st));
		if (b / s < ST_ABI_SB_COUNT_MIN || b / s > ST_ABI_SB_COUNT_MAX) {
			snprintf(why, n, "--buffer-size %s: a buffer is 8 KiB (2 sub-buffers of 4 KiB) to "
					 "64 GiB (1024 of 64 MiB)", bt);
			return -1;
		}
		if (b % s) {
			snprintf(why, n, "--buffer-size %s is not a whole number of the %s sub-buffers it "
					 "takes (make it a multiple of %s, or give --subbuf-size)", bt, st, st);
			return -1;
		}
	} else if (!b) {
		uint64_t count = ST_DEFAULT_BUFFER_SIZE / s;

		if (count < ST_ABI_SB_COUNT_MIN)
			count = ST_ABI_SB_COUNT_MIN;
		if (count > ST_ABI_SB_COUNT_MAX)
			count = ST_ABI_SB_COUNT_MAX;
		b = count * s;
	} else if (b % s || b / s < ST_ABI_SB_COUNT_MIN || b / s > ST_ABI_SB_COUNT_MAX) {
		snprintf(why, n, "--buffer-size %s and --subbuf-size %s disagree: a buffer is 2 to 1024 "
				 "whole sub-buffers", bt, st);
		return -1;
	}
	g->buffer_size = b;
	g->sb_size = (uint32_t)s;
	g->sb_count = (uint32_t)(b / s);
	return 0;
}

static const struct {
	const char *name;
	uint32_t ms;
} time_units[] = { { "h", 3600000 }, { "min", 60000 }, { "s", 1000 }, { "ms", 1 } };

int st_blocking_parse(const char *arg, uint32_t *ms, char *why, size_t n)
{
	unsigned long long v = 0;
	const char *u = arg;

	if (!arg) {
		*ms = ST_ABI_BLOCK_FOREVER;
		return 0;
	}
	for (; *u >= '0' && *u <= '9'; u++)
		if ((v = v * 10 + (unsigned)(*u - '0')) > ST_BLOCK_MAX_MS)
			break;
	if (u == arg || (*u >= '0' && *u <= '9'))
		goto bad; /* no number, or one far too large */
	for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
		if (strcmp(u, time_units[i].name) == 0) {
			if (v == 0 || v * time_units[i].ms > ST_BLOCK_MAX_MS)
				goto bad;
			*ms = (uint32_t)(v * time_units[i].ms);
			return 0;
		}
bad:
	snprintf(why, n, "--blocking=%s: TIMEOUT is a whole number and a unit (ms, s, min or h), "
			 "from 1ms to 24h, like 100ms or 2s", arg);
	return -1;
}

int st_blocking_check(uint32_t mode, uint32_t block_ms, char *why, size_t n)
{
	if (block_ms && mode == ST_MODE_OVERWRITE) {
		snprintf(why, n, "--blocking and --overwrite do not go together: an overwriting "
				 "buffer never waits (--blocking is for discard mode)");
		return -1;
	}
	if (block_ms > ST_BLOCK_MAX_MS && block_ms != ST_ABI_BLOCK_FOREVER) {
		snprintf(why, n, "--blocking: a TIMEOUT is at most 24h");
		return -1;
	}
	return 0;
}

int st_buffers_parse(const char *arg, uint32_t *out, char *why, size_t n)
{
	if (strcmp(arg, "per-thread") == 0)
		*out = ST_BUFFERS_PER_THREAD;
	else if (strcmp(arg, "per-process") == 0)
		*out = ST_BUFFERS_PER_CPU;
	else if (strcmp(arg, "per-user") == 0)
		*out = ST_BUFFERS_PER_USER;
	else {
		snprintf(why, n, "--buffers: '%s' is not per-process, per-user or per-thread", arg);
		return -1;
	}
	return 0;
}

uint32_t st_buffers_default(void)
{
	/* (glibc's size of the area it registered; 0 when it registered
	 * none: looked up, so that an older glibc still runs this) */
	const unsigned int *size = dlsym(RTLD_DEFAULT, "__rseq_size");

	return size && *size ? ST_BUFFERS_PER_CPU : ST_BUFFERS_PER_THREAD;
}

uint64_t st_per_cpu_buffer_size(uint64_t process_memory)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t share = process_memory ? process_memory : ST_DEFAULT_PROCESS_MEMORY, size;

	if (cpus < 1)
		cpus = 1;
	size = ST_DEFAULT_BUFFER_SIZE;
	/* (each buffer also has a header: a page at least) */
	while (size > (1u << 20) && (uint64_t)cpus * (size + ST_ABI_PAGE * 16) > share)
		size /= 2;
	return size;
}

const char *st_buffers_name(uint32_t buffers)
{
	return buffers == ST_BUFFERS_PER_CPU	? "per-process"
	       : buffers == ST_BUFFERS_PER_USER ? "per-user"
						: "per-thread";
}

/* Per-CPU buffers, per process or per user (who): a CPU's buffer for
 * each CPU must fit in one share. */
static int per_cpu_check(struct st_memory_bounds *m, const char *who, char *why, size_t n)
{
	long cpus;
	char need[32], share[32];

	cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (cpus < 1 || cpus > ST_ABI_SLOTS_MAX) {
		snprintf(why, n, "--buffers per-%s: cannot count this machine's CPUs", who);
		return -1;
	}
	if ((uint64_t)cpus * m->slot_bytes > m->session ||
	    (uint64_t)cpus > m->process / m->slot_bytes) {
		st_size_text((uint64_t)cpus * m->slot_bytes, need, sizeof(need));
		st_size_text(m->process, share, sizeof(share));
		snprintf(why, n, "--buffers per-%s: %ld CPUs need %s of buffers per %s, above "
				 "its share (%s): a smaller --buffer-size, or a larger --process-memory",
			 who, cpus, need, who, share);
		return -1;
	}
	m->nslots = (uint32_t)cpus;
	m->process = (uint64_t)cpus * m->slot_bytes;
	return 0;
}

int st_buffers_check(uint32_t buffers, struct st_memory_bounds *m, char *why, size_t n)
{
	switch (buffers) {
	case ST_BUFFERS_PER_THREAD:
		return 0;
	case ST_BUFFERS_PER_CPU:
		return per_cpu_check(m, "process", why, n);
	case ST_BUFFERS_PER_USER:
		return per_cpu_check(m, "user", why, n);
	default:
		snprintf(why, n, "--buffers: unknown kind %u", buffers);
		return -1;
	}
}

void st_mode_text(uint32_t mode, uint32_t block_ms, char *buf, size_t n)
{
	size_t i = 0;

	if (mode == ST_MODE_OVERWRITE || !block_ms) {
		snprintf(buf, n, "%s", mode == ST_MODE_OVERWRITE ? "overwrite" : "discard");
		return;
	}
	if (block_ms == ST_ABI_BLOCK_FOREVER) {
		snprintf(buf, n, "discard, blocking (no timeout)");
		return;
	}
	/* the largest unit that divides it: 2s, not 2000ms */
	while (block_ms % time_units[i].ms)
		i++;
	snprintf(buf, n, "discard, blocking (timeout %u%s)", block_ms / time_units[i].ms,
		 time_units[i].name);
}
uint64_t st_default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return ST_DEFAULT_PROCESS_MEMORY;
	return (uint64_t)pages * (uint64_t)size / 2 / (1u << 20) * (1u << 20);
}

int st_memory_bounds(uint64_t max_memory, uint64_t process_memory, uint64_t default_bound,
		     const struct st_geometry *g, struct st_memory_bounds *out, char *why, size_t n)
{
	uint64_t slot = st_abi_slot_hdr_size(g->sb_count) + g->buffer_size;
	uint64_t bound = max_memory ? max_memory : default_bound;
	char bt[32], pt[32], st[32];
	const char *which = max_memory ? "--max-memory" : "the default --max-memory (half the "
							  "physical memory)";

	st_size_text(bound, bt, sizeof(bt));
	st_size_text(process_memory, pt, sizeof(pt));
	st_size_text(slot, st, sizeof(st));
	if (bound < slot) {
		snprintf(why, n, "%s %s is below one thread's buffer (%s)", which, bt, st);
		return -1;
	}
	if (process_memory && process_memory < slot) {
		snprintf(why, n, "--process-memory %s is below one thread's buffer (%s)", pt, st);
		return -1;
	}
	if (process_memory > bound) {
		snprintf(why, n, "--process-memory %s is above the session's bound, %s %s", pt, which,
			 bt);
		return -1;
	}
	out->session = bound;
	out->process = process_memory ? process_memory
				      : (bound < ST_DEFAULT_PROCESS_MEMORY ? bound
									   : ST_DEFAULT_PROCESS_MEMORY);
	out->slot_bytes = slot;
	out->nslots = out->process / slot > ST_ABI_SLOTS_MAX ? ST_ABI_SLOTS_MAX
							     : (uint32_t)(out->process / slot);
	return 0;
}
