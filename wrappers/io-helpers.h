/*
 * Helpers of the io family's spec. None reads memory of the program before
 * the real call has (a bad pointer must give EFAULT, not a fault in a
 * wrapper), nor changes errno.
 */
#ifndef ST_WRAPPERS_IO_HELPERS_H
#define ST_WRAPPERS_IO_HELPERS_H

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>

/* <bits/stdio.h> makes these macros when optimising; the family defines
 * the functions. */
#undef fread_unlocked
#undef fwrite_unlocked

/* Whether open's flags call for its mode argument. */
/* A call that took this long (ns) or more is slow: its event carries a
 * call stack. */
#define ST__SLOW_IO_NS 1000000

/* The call site whose stack an I/O call that took dur_ns takes, or NULL
 * for none (a quick call). */
static inline const void *st__slow_stack(const void *ip, uint64_t dur_ns)
{
	return dur_ns >= ST__SLOW_IO_NS ? ip : NULL;
}

static inline int st__open_needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* Whether fcntl's command waits (for a record lock): a cancellation point,
 * so it writes fcntl_begin first. The others return at once. */
static inline int st__fcntl_waits(int cmd)
{
	return cmd == F_SETLKW || cmd == F_OFD_SETLKW;
}

/* fcntl's optional argument as recorded: 0 for the commands that take
 * none (what was read for them is whatever the register held). */
static inline unsigned long st__fcntl_arg(int cmd, unsigned long arg)
{
	switch (cmd) {
	case F_GETFD:
	case F_GETFL:
	case F_GETOWN:
	case F_GETSIG:
	case F_GETLEASE:
	case F_GETPIPE_SZ:
	case F_GET_SEALS:
		return 0;
	default:
		return arg;
	}
}

/* A path (or mode) the call took, to record after it; NULL (an empty
 * string) when the call failed with EFAULT: then it is not memory the
 * program may read. */
static inline const char *st__path(long ret, const char *path)
{
	return ret < 0 && errno == EFAULT ? NULL : path;
}

/* The descriptor of a stream (glibc's FILE), without a call that might
 * change errno; -1 for none. */
static inline int st__fd_of(const FILE *stream)
{
	return stream ? stream->_fileno : -1;
}

/* The address family connect was given, read after the call, unless it
 * faulted or the address is too short to hold one; -1 then. */
static inline int st__family(int ret, const struct sockaddr *addr, socklen_t len)
{
	if (!addr || len < sizeof(addr->sa_family) || (ret < 0 && errno == EFAULT))
		return -1;
	return addr->sa_family;
}

#endif
