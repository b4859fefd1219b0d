/*
 * Raw Linux system calls for the in-process runtime.
 *
 * glibc's wrappers set errno and some (send, recv, connect, poll, close...)
 * are cancellation points. Tracer code runs inside the traced program's
 * calls, often on its slow path, sometimes from a signal handler: it must
 * leave errno alone and must never act on a pending cancellation. These
 * helpers issue the system call directly and return the result or -errno.
 * x86-64 only.
 */
#ifndef ST_CORE_SYS_H
#define ST_CORE_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

static inline long st__syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
}

#define st__sys(nr, a, b, c, d, e, f) \
	st__syscall6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define st__sys0(nr) st__sys(nr, 0, 0, 0, 0, 0, 0)
#define st__sys1(nr, a) st__sys(nr, a, 0, 0, 0, 0, 0)
#define st__sys2(nr, a, b) st__sys(nr, a, b, 0, 0, 0, 0)
#define st__sys3(nr, a, b, c) st__sys(nr, a, b, c, 0, 0, 0)
#define st__sys4(nr, a, b, c, d) st__sys(nr, a, b, c, d, 0, 0)

static inline int st__gettid(void)
{
	return (int)st__sys0(SYS_gettid);
}

static inline int st__getpid(void)
{
	return (int)st__sys0(SYS_getpid);
}

static inline int st__close(int fd)
{
	return (int)st__sys1(SYS_close, fd);
}

/* mmap returning NULL on failure. */
static inline void *st__mmap(void *addr, size_t len, int prot, int flags, int fd, long off)
{
	long r = st__sys(SYS_mmap, addr, len, prot, flags, fd, off);

	return (r < 0 && r > -4096) ? NULL : (void *)r;
}

static inline int st__munmap(void *addr, size_t len)
{
	return (int)st__sys2(SYS_munmap, addr, len);
}

#endif /* ST_CORE_SYS_H */
