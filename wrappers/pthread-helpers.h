/*
 * Helpers for the pthread family's spec.
 *
 * st__mutex_free_here: true when the mutex cannot be contended right now:
 * the process has only ever had one thread (glibc's
 * __libc_single_threaded), the mutex is process-private, and it is free.
 * The lock wrapper then locks directly instead of trying first: glibc's
 * single-threaded lock is a plain store, a trylock is a locked instruction.
 * A held mutex (a thread relocking its own normal mutex, a process-shared
 * one) still goes through try-first, so a self-deadlock shows as a
 * mutex_wait event.
 *
 * st__mutex_try_safe: false when trying first would change what the real
 * call does; the lock is then taken directly, and its event carries the
 * time the call took (no mutex_wait event):
 * - robust mutexes: glibc's trylock on one that is not recoverable returns
 *   ENOTRECOVERABLE but leaves it locked by the caller (the real lock does
 *   not), and whether it is recoverable can change between a look and the
 *   try (its owner unlocks it without pthread_mutex_consistent);
 * - priority-protect mutexes: a trylock raises the thread to the ceiling,
 *   a failed one drops it again, and the lock raises it once more: two
 *   extra sched_setscheduler calls, and the waiter would write its
 *   mutex_wait event below its ceiling.
 *
 * Both read glibc's public pthread_mutex_t layout (bits/struct_mutex.h).
 */
#ifndef ST_WRAPPERS_PTHREAD_HELPERS_H
#define ST_WRAPPERS_PTHREAD_HELPERS_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "core/atomic.h"

#define ST__MUTEX_PSHARED_BIT 128 /* glibc's PTHREAD_MUTEX_PSHARED_BIT */
#define ST__MUTEX_ROBUST_BIT 16	  /* glibc's PTHREAD_MUTEX_ROBUST_NORMAL_NP */
#define ST__MUTEX_PP_BIT 64	  /* glibc's PTHREAD_MUTEX_PRIO_PROTECT_NP */

static inline bool st__mutex_free_here(const pthread_mutex_t *m)
{
	return __libc_single_threaded &&
	       st_load_relaxed(&m->__data.__lock) == 0 &&
	       !(m->__data.__kind & ST__MUTEX_PSHARED_BIT);
}

static inline bool st__mutex_try_safe(const pthread_mutex_t *m)
{
	return !(st_load_relaxed(&m->__data.__kind) & (ST__MUTEX_ROBUST_BIT | ST__MUTEX_PP_BIT));
}

/*
 * st__deadline_ok: false when glibc rejects a deadline before looking at
 * the lock (rwlocks, semaphores: a nanosecond count out of range, or a
 * clock it does not take, is EINVAL at once); trying first would then
 * take a free lock where the real call fails. A NULL deadline is left to
 * the real call too (it faults in either case, but not in ours).
 */
static inline bool st__deadline_ok(clockid_t clock, const struct timespec *t)
{
	return (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC) && t &&
	       t->tv_nsec >= 0 && t->tv_nsec < 1000000000;
}

/* The start routine of pthread_create, named for the spec's parser. */
typedef void *(*st__start_routine)(void *);

/* pthread_create through real, the new thread's start routine run by a
 * trampoline that writes thread_start and thread_end when either is
 * enabled (pthread-threads.c). */
int st__thread_create(int (*real)(pthread_t *, const pthread_attr_t *, st__start_routine, void *),
		      pthread_t *thread, const pthread_attr_t *attr, st__start_routine start,
		      void *arg) __attribute__((visibility("hidden")));

#endif
