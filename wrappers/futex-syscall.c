/*
 * The futex family's syscall(): glibc's generic system call entry point,
 * interposed so that futex waits and wakes a program makes itself (raw
 * locks: InnoDB's latches, abseil's Mutex) are recorded (futex.spec).
 *
 * syscall() takes the number and up to six machine words, as a variadic
 * list, which the x86-64 ABI passes as it passes a function of seven
 * longs: the number and five words in registers, the sixth on the stack.
 * So syscall is a few instructions (below): a number that is not
 * SYS_futex or SYS_futex_waitv jumps to the real syscall() with every
 * register and the stack as the caller left them (two compares and a
 * jump, traced or not), and a futex number jumps to st__futex_syscall,
 * a function of seven longs, whose return address is the caller's. All
 * six words are passed on, as glibc's own syscall() passes six registers
 * whatever the number: those the caller did not give are whatever its
 * registers and stack held, which the kernel ignores for calls that take
 * fewer (the sixth comes from the caller's stack, which exists).
 *
 * The real syscall() is found with dlsym(RTLD_NEXT) on the first call;
 * while that lookup runs on this thread (dlsym calling back), or if it
 * fails, the system call is made directly, with glibc's convention
 * (-1 and errno).
 *
 * Events are dated at the call's start: wait_begin before the real call
 * (a thread that never returns shows where it waits), wait and wake after
 * it, with the result and errno as the real call left them.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/sys.h"
#include "futex-gen.h"
#include "wrappers/resolve.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define ST__STR2(x) #x
#define ST__STR(x) ST__STR2(x)

typedef long (*st__fn_syscall)(long, long, long, long, long, long, long);

static long direct(long nr, long a, long b, long c, long d, long e, long f);
static long resolve(long nr, long a, long b, long c, long d, long e, long f);
/* (hidden, not static: the entry below jumps through it) */
__attribute__((visibility("hidden"))) st__fn_syscall st__real_syscall = resolve;

/* The system call itself, as glibc's syscall() makes it. */
static long direct(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = st__syscall6(nr, a, b, c, d, e, f);

	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* First call: find the real function, then call it. */
static long resolve(long nr, long a, long b, long c, long d, long e, long f)
{
	st__fn_syscall fn = (st__fn_syscall)st__wrap_resolve("syscall");

	if (!fn)
		return direct(nr, a, b, c, d, e, f);
	st_store_relaxed(&st__real_syscall, fn);
	return fn(nr, a, b, c, d, e, f);
}

/* The masks of two adjacent tracepoints (a begin and its end), in one
 * load: the first in the low half. */
static uint64_t masks_of(uint32_t slot)
{
	uint64_t m;

	memcpy(&m, &st__state_futex.mask[slot], sizeof(m));
	return m;
}

static int is_wait(int cmd)
{
	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
	       cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI;
}

static int is_wake(int cmd)
{
	return cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET || cmd == FUTEX_WAKE_OP ||
	       cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE || cmd == FUTEX_CMP_REQUEUE_PI ||
	       cmd == FUTEX_UNLOCK_PI;
}

static long call(long nr, const long *a)
{
	return st_load_relaxed(&st__real_syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A wait: begin, the call, the end with the time it took. */
static long traced_wait(const long *a, const void *ip)
{
	uint64_t m = masks_of(st__slot_futex_wait_begin);
	uint32_t mb = (uint32_t)m, me = (uint32_t)(m >> 32);
	uint64_t uaddr = (uint64_t)a[0], ts, t0;
	int32_t op = (int32_t)a[1];
	uint32_t val = (uint32_t)a[2];
	long r;

	if (!m)
		return call(SYS_futex, a);
	ts = st_clock_read();
	if (mb)
		st__emit_futex_wait_begin(mb, ts, ip, uaddr, op, val, ip);
	t0 = mb ? st_clock_read() : ts;
	r = call(SYS_futex, a);
	if (me) {
		uint64_t dur = st_clock_delta_ns(st_clock_read() - t0);

		st__emit_futex_wait(me, ts, ip, uaddr, op, val, r, r < 0 ? errno : 0, dur);
	}
	return r;
}

static long traced_wake(const long *a, const void *ip)
{
	uint32_t m = st_load_relaxed(&st__state_futex.mask[st__slot_futex_wake]);
	uint64_t ts;
	long r;

	if (!m)
		return call(SYS_futex, a);
	ts = st_clock_read();
	r = call(SYS_futex, a);
	st__emit_futex_wake(m, ts, ip, (uint64_t)a[0], (int32_t)a[1], (uint32_t)a[2], r,
			    r < 0 ? errno : 0);
	return r;
}

/* futex_waitv(waiters, nr, flags, timeout, clockid): the word that woke
 * the thread is read from the array only when the kernel returned its
 * index (it read the array, so the pointer is good). */
static long traced_waitv(const long *a, const void *ip)
{
	uint64_t m = masks_of(st__slot_futex_waitv_begin);
	uint32_t mb = (uint32_t)m, me = (uint32_t)(m >> 32);
	const struct futex_waitv *w = (const struct futex_waitv *)a[0];
	uint32_t nr = (uint32_t)a[1];
	uint64_t ts, t0;
	long r;

	if (!m)
		return call(SYS_futex_waitv, a);
	ts = st_clock_read();
	if (mb)
		st__emit_futex_waitv_begin(mb, ts, ip, (uint64_t)(uintptr_t)w, nr, ip);
	t0 = mb ? st_clock_read() : ts;
	r = call(SYS_futex_waitv, a);
	if (me) {
		uint64_t dur = st_clock_delta_ns(st_clock_read() - t0);
		int err = r < 0 ? errno : 0;
		uint64_t woke = r >= 0 && (uint64_t)r < nr ? w[r].uaddr : (uint64_t)(uintptr_t)w;

		st__emit_futex_waitv(me, ts, ip, woke, (uint64_t)(uintptr_t)w, nr, r, err, dur);
	}
	return r;
}

static long traced(long nr, const long *a, const void *ip)
{
	int cmd = (int)a[1] & FUTEX_CMD_MASK;

	if (nr == SYS_futex_waitv)
		return traced_waitv(a, ip);
	if (is_wait(cmd))
		return traced_wait(a, ip);
	if (is_wake(cmd))
		return traced_wake(a, ip);
	return call(nr, a);
}

/* A futex system call, from the entry below: the caller's words. */
__attribute__((visibility("hidden"))) long st__futex_syscall(long nr, long a, long b, long c,
							     long d, long e, long f);
long st__futex_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	const long words[6] = { a, b, c, d, e, f };

	return traced(nr, words, __builtin_return_address(0));
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"\t.cfi_startproc\n"
	"\tcmpq $" ST__STR(SYS_futex) ", %rdi\n"
	"\tje st__futex_syscall\n"
	"\tcmpq $" ST__STR(SYS_futex_waitv) ", %rdi\n"
	"\tje st__futex_syscall\n"
	"\tjmp *st__real_syscall(%rip)\n"
	"\t.cfi_endproc\n"
	".size syscall, .-syscall\n");
#else
#error "the futex family's syscall entry is written for x86-64"
#endif
