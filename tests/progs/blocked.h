/*
 * Whether a thread of this process sleeps in a given system call, for the
 * test programs that must make a wait happen whatever the scheduling: a
 * thread is let go only once the others block.
 */
#ifndef ST_TESTS_PROGS_BLOCKED_H
#define ST_TESTS_PROGS_BLOCKED_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

/* Whether a thread sleeps, or is about to, in glibc's lock of m: its
 * word says so (2; a wrapper's failed try, and its wait event, came
 * before). */
static inline int mutex_has_waiter(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) == 2;
}

/* Whether thread tid is in system call nr with first argument arg, from
 * /proc/self/task/TID/syscall (a thread blocked in it: the tracer's own
 * work before the call, which may sleep too, is not mistaken for it). */
static inline int blocked_in(int tid, long nr, const void *arg)
{
	char path[64], buf[256];
	long n = -1;
	unsigned long a = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld %lx", &n, &a) == 2;
	fclose(f);
	return ok && n == nr && a == (unsigned long)(uintptr_t)arg;
}

#endif
