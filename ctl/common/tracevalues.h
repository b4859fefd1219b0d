/*
 * Values of our own events' fields that mean something besides a number,
 * agreed by the daemon that writes them and the reports that read them.
 */
#ifndef ST_CTL_TRACEVALUES_H
#define ST_CTL_TRACEVALUES_H

#include <stdint.h>

/* shimtrace:process_end's `threads` when no count can be given: a process
 * that wrote per-CPU buffers, whose threads own no buffer (doc/percpu.md);
 * any number of them may have been between reading the clock and
 * committing an event when it ended. */
#define ST_THREADS_UNKNOWN UINT32_MAX

#endif
