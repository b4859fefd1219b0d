/*
 * Defaults of `record` and `create`: sized so that one thread writing
 * events as fast as it can (about 50 bytes every 30 ns) does not outrun the
 * consumer on a two-core machine.
 */
#ifndef ST_CTL_DEFAULTS_H
#define ST_CTL_DEFAULTS_H

#define ST_DEFAULT_SUBBUF_SIZE (1ull << 20)	/* 1 MiB */
#define ST_DEFAULT_BUFFER_SIZE (16ull << 20)	/* per thread: 16 sub-buffers */
#define ST_DEFAULT_MAX_MEMORY (1ull << 30)	/* per process and session */
#define ST_DEFAULT_PATTERN "pthread:*"

#define ST_STR_(x) #x
#define ST_STR(x) ST_STR_(x)

#endif
