/*
 * stubwrite.so: a write() that does not enter the kernel, for
 * run-mutex.sh --family io-stub. Preloaded after a wrapper library, it is
 * the "real" write the wrapper finds with dlsym(RTLD_NEXT), so that the
 * time a timed write takes is the wrapper's own and not a system call's:
 * on a VM a write to /dev/null costs about 1.2 us and drifts by hundreds
 * of ns, and every system call leaves the TLB cold for whatever runs
 * next, which hides a few ns of wrapper. __write is the name mutex-pairs
 * --ref looks up for its reference round: it is the stub too, so the two
 * rounds differ by the wrapper alone.
 *
 * Every write() made through the PLT of the process is swallowed: only
 * for the benchmark program, which prints with stdio (glibc's stdio calls
 * its internal write, not this one).
 */
#include <sys/types.h>

ssize_t write(int fd, const void *buf, size_t n)
{
	(void)fd;
	(void)buf;
	/* (an empty asm: the call is not folded away by the compiler) */
	__asm__ volatile("" ::: "memory");
	return (ssize_t)n;
}

ssize_t __write(int fd, const void *buf, size_t n) __attribute__((alias("write")));
