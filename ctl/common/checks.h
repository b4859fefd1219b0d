/*
 * What the command line and the daemon both check in what a user gives:
 * session names, tracepoint patterns, pids, buffer sizes. The command line
 * checks before it runs or asks anything, with one line naming the
 * problem; the daemon checks again what reaches it.
 */
#ifndef ST_CTL_CHECKS_H
#define ST_CTL_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The rule of session names (ST_ABI_NAME_MAX less its NUL), for messages
 * and the man page. */
#define ST_SESSION_NAME_RULE "1 to 63 letters, digits and _, not starting with a digit"
bool st_session_name_ok(const char *name);

/*
 * A --procname: 1 to 16 bytes (a comm has 15; an executable's name may be
 * longer) and no control character (C0, DEL, C1), which no one types and
 * which would be shown escaped. Matched against the raw bytes of what a
 * process says (ctl/daemon/model/session.c). 0, or -1 with the reason in why.
 */
#define ST_PROCNAME_MAX 16
int st_procname_check(const char *name, char *why, size_t n);

/* A pattern is at most this long (a rule keeps it whole). */
#define ST_PATTERN_MAX 129
/*
 * Whether pattern can be a glob over provider:name: not empty, not too
 * long, brackets closed, no trailing backslash, at most one ':', and no
 * character a tracepoint name cannot hold outside a bracket expression.
 * Returns 0, or -1 with the reason (one phrase) in why.
 */
int st_pattern_check(const char *pattern, char *why, size_t n);

/* A rule names at most this many pids. */
#define ST_RULE_MAX_PIDS 64
/* The kernel's largest pid (PID_MAX_LIMIT on 64-bit): no pid is above. */
#define ST_PID_MAX 4194304
/* One pid, 1 to ST_PID_MAX, decimal: 0, or -1 with the reason in why. */
int st_pid_parse(const char *s, pid_t *out, char *why, size_t n);
/* "12,34,56": at most max pids into out, their number in *count; an empty
 * element is an error. 0, or -1 with the reason in why. */
int st_pid_list_parse(const char *s, pid_t *out, size_t max, size_t *count, char *why, size_t n);

/*
 * The buffer of a thread is a whole number of sub-buffers, 2 to 1024, each
 * a multiple of 4 KiB from 4 KiB to 64 MiB. Either size may be 0 (not
 * given):
 *   neither        32 MiB in 1 MiB sub-buffers (ctl/common/defaults.h)
 *   buffer only    sub-buffers of 1 MiB, halved while fewer than 4 fit,
 *                  doubled while more than 1024 would; the buffer must be a
 *                  whole number of them
 *   sub-buffer only  the default buffer if it holds 2 to 1024 of them, else
 *                  the nearest that does (2 or 1024 sub-buffers)
 *   both           must agree
 * Returns 0, or -1 with the reason (naming the options) in why.
 */
struct st_geometry {
	uint64_t buffer_size;
	uint32_t sb_size, sb_count;
};
int st_geometry(uint64_t buffer_size, uint64_t subbuf_size, struct st_geometry *g, char *why,
		size_t n);
/*
 * The memory bounds of a session (memory.h), each at least one thread
 * buffer of geometry g: `max_memory` for all its processes (0: the
 * default, default_bound), `process_memory` for one (0: 2 GiB, or the
 * session's bound if smaller), which must not be above the session's.
 * Returns 0, or -1 with the reason (naming the options) in why.
 */
struct st_memory_bounds {
	uint64_t session, process; /* bytes */
	uint64_t slot_bytes;	   /* of a thread buffer and its header */
	uint32_t nslots;	   /* thread buffers of the process's share */
};
int st_memory_bounds(uint64_t max_memory, uint64_t process_memory, uint64_t default_bound,
		     const struct st_geometry *g, struct st_memory_bounds *out, char *why, size_t n);
/* The default bound of a session, and of the daemon's sessions together:
 * half the physical memory, in whole MiB (2 GiB if it cannot be known). */
uint64_t st_default_max_memory(void);
/* A size exactly, in the largest unit that divides it: "256 KiB", "4097 bytes". */
void st_size_text(uint64_t bytes, char *buf, size_t n);
/* A size to a tenth of its unit, GiB from 1 GiB, MiB and KiB from 10 of
 * them: "12.3 MiB", "1.5 GiB", "9.0 MiB" is "9216.0 KiB", "4000 bytes". */
void st_size_approx(uint64_t bytes, char *buf, size_t n);

/*
 * --blocking[=TIMEOUT] (discard mode only): TIMEOUT is a whole number and
 * a unit, ms, s, min or h (100ms, 2s, 1min), from 1ms to 24h. Without it
 * (arg NULL) a writer waits as long as needed: ST_ABI_BLOCK_FOREVER.
 * 0, or -1 with the reason (naming the option) in why.
 */
#define ST_BLOCK_MAX_MS 86400000u
int st_blocking_parse(const char *arg, uint32_t *ms, char *why, size_t n);
/* A session's mode: --blocking only with discard mode, within bounds. */
int st_blocking_check(uint32_t mode, uint32_t block_ms, char *why, size_t n);
/*
 * --buffers per-thread|per-process: *out, an enum st_abi_buffers; 0, or -1
 * with the reason in why.
 */
int st_buffers_parse(const char *arg, uint32_t *out, char *why, size_t n);
/*
 * Without the option: per CPU (a thread's first event costs what any other
 * does, threads are not counted, and contention shows as it is:
 * doc/percpu.md) where this machine's glibc registers an rseq area for
 * every thread (2.35 and later, unless GLIBC_TUNABLES=glibc.pthread.rseq=0
 * here), which the traced programs share; else per thread: a process
 * without rseq writes per-thread buffers of a per-CPU session's geometry,
 * as many as CPUs only.
 */
uint32_t st_buffers_default(void);
/*
 * A CPU's buffer when neither --buffer-size nor --subbuf-size is given:
 * the default (32 MiB) while the machine's CPUs times it fit a process's
 * share (process_memory; 0: the default, 2 GiB), else the largest power of
 * two that fits, 1 MiB at least (per_cpu_check then says it does not fit).
 */
uint64_t st_per_cpu_buffer_size(uint64_t process_memory);
const char *st_buffers_name(uint32_t buffers);
/* "32 MiB per thread: 32 sub-buffers of 1 MiB; at most 2 GiB per process
 * (63 thread buffers)", or "32 MiB per CPU: ...; 64 MiB per process (2
 * CPUs)". */
void st_buffers_text(uint32_t buffers, const struct st_geometry *g, uint64_t process_memory,
		     uint32_t nslots, char *buf, size_t n);
/*
 * Per-CPU buffers: a buffer for each possible CPU, within the process's
 * share; m then holds nslots, the CPUs, and process, their buffers' bytes.
 * 0, or -1 with the reason.
 */
int st_buffers_check(uint32_t buffers, struct st_memory_bounds *m, char *why, size_t n);
/* "discard", "discard, blocking (no timeout)", "discard, blocking
 * (timeout 2s)", "overwrite" */
void st_mode_text(uint32_t mode, uint32_t block_ms, char *buf, size_t n);

#endif
