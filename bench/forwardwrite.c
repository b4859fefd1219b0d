/*
 * forwardwrite.so: the least a preloaded write() wrapper can be, for
 * run-mutex.sh --family io and io-stub: it calls the next write() (found
 * with dlsym(RTLD_NEXT) once, in a constructor) and does nothing else.
 * Its row is the floor under any tracer's dormant wrapper: the call
 * through one more object, its code and the pointer it jumps through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/types.h>

static ssize_t (*next_write)(int, const void *, size_t);

static void __attribute__((constructor)) find_next(void)
{
	next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return next_write(fd, buf, n);
}
