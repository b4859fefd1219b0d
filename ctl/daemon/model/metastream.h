/*
 * A process's meta streams (metastream.c): the records the daemon writes
 * for it (statedump, process events, losses), and the names of every
 * stream file of a process.
 */
#ifndef ST_DAEMON_MODEL_METASTREAM_H
#define ST_DAEMON_MODEL_METASTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

/* The name of a stream file of process p, written in the run-th run of
 * its session: pid, instance, the run when not the first, then the rest
 * (fmt), e.g. pid42-0-buf3, pid42-0-run2-meta. */
void st_stream_name(char *buf, size_t len, const struct st_proc *p, uint32_t run, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));
/* Writes records the daemon built for process p into its meta stream. */
int st_meta_write(struct st_daemon *d, struct st_proc *p, uint32_t s, const uint8_t *records,
		  uint64_t len, uint64_t events, uint64_t ts_begin, uint64_t ts_end);

#endif
