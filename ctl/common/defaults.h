/*
 * Defaults of `record` and `create`. A thread writing events as fast as it
 * can (a lock+unlock pair, 80 bytes, every 60 ns) produces about as much as
 * the consumer writes to disk on a two-core machine: the buffer absorbs the
 * difference. Memory is taken only as threads write: a thread that writes
 * little uses little of its buffer.
 */
#ifndef ST_CTL_DEFAULTS_H
#define ST_CTL_DEFAULTS_H

#define ST_DEFAULT_SUBBUF_SIZE (1ull << 20)	/* 1 MiB */
#define ST_DEFAULT_BUFFER_SIZE (32ull << 20)	/* per thread: 32 sub-buffers */
/* A process's share of a session's buffer memory (--process-memory), at
 * most the session's bound; the bound (--max-memory) is half the physical
 * memory (st_default_max_memory, ctl/common/checks.h). */
#define ST_DEFAULT_PROCESS_MEMORY (2ull << 30)
/* The wrapper families record interposes without --wrap. */
#define ST_DEFAULT_FAMILIES "pthread"

#define ST_STR_(x) #x
#define ST_STR(x) ST_STR_(x)

#endif
