/*
 * Raw futex locks, as InnoDB and abseil make them: syscall(SYS_futex)
 * called by the program itself, never through pthread.
 *
 *   rawfutex calls N      deterministic calls, N of each: FUTEX_WAIT on a
 *                         word that changed (EAGAIN), FUTEX_WAKE with no
 *                         waiter (0), FUTEX_WAIT with a 1 ms timeout
 *                         (ETIMEDOUT); then one hand-off (a thread parked
 *                         on a word, woken by one FUTEX_WAKE that returns
 *                         1) and one futex_waitv woken on its second word;
 *                         and syscall() of other numbers (getpid, close
 *                         of a bad descriptor: -1 and EBADF)
 *   rawfutex lock T N     T threads take a futex mutex N times each (the
 *                         three-state mutex: 0 free, 1 taken, 2 taken with
 *                         waiters), each sleeping on it at least once;
 *                         prints the futex waits and wakes it made, and
 *                         the counter, T * N if the lock works
 *
 * The words' addresses are printed, for the test to find them.
 */

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

/* (inlined, as InnoDB's and abseil's are: each call is its caller's
 * site) */
static inline __attribute__((always_inline)) long futex(_Atomic uint32_t *w, int op, uint32_t val,
							const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void die(const char *what)
{
	fprintf(stderr, "rawfutex: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- calls ---- */

static _Atomic uint32_t changed = 1, nobody, sleepy, handoff, vwords[2];
static _Atomic int parked_tid;

/* Waits until the parked thread blocks in system call nr on arg. */
static void until_blocked(long nr, const void *arg)
{
	int tid;

	while (!(tid = atomic_load(&parked_tid)))
		usleep(100);
	while (!blocked_in(tid, nr, arg))
		usleep(100);
	usleep(1000); /* (the kernel reports the call from its entry on) */
}

static void *parked(void *arg)
{
	(void)arg;
	atomic_store(&parked_tid, (int)syscall(SYS_gettid));
	while (atomic_load(&handoff) == 0)
		if (futex(&handoff, FUTEX_WAIT_PRIVATE, 0, NULL) < 0 && errno != EAGAIN &&
		    errno != EINTR)
			die("FUTEX_WAIT");
	return NULL;
}

static struct futex_waitv v[2];

static void *vparked(void *arg)
{
	long r;

	(void)arg;
	for (int i = 0; i < 2; i++) {
		v[i].uaddr = (uint64_t)(uintptr_t)&vwords[i];
		v[i].val = 0;
		v[i].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
	}
	atomic_store(&parked_tid, (int)syscall(SYS_gettid));
	r = syscall(SYS_futex_waitv, v, 2, 0, NULL, CLOCK_MONOTONIC);
	atomic_store(&parked_tid, 0); /* (after the call: not a tail call) */
	return (void *)r;
}

static int calls(int n)
{
	struct timespec ms = { 0, 1000000 };
	pthread_t t;
	void *ret;
	long r;

	printf("changed %p nobody %p sleepy %p handoff %p vword %p\n", (void *)&changed,
	       (void *)&nobody, (void *)&sleepy, (void *)&handoff, (void *)&vwords[1]);
	for (int i = 0; i < n; i++) {
		if (futex(&changed, FUTEX_WAIT_PRIVATE, 0, NULL) != -1 || errno != EAGAIN)
			die("FUTEX_WAIT on a changed word");
		if (futex(&nobody, FUTEX_WAKE_PRIVATE, 1, NULL) != 0)
			die("FUTEX_WAKE with no waiter");
		if (futex(&sleepy, FUTEX_WAIT_PRIVATE, 0, &ms) != -1 || errno != ETIMEDOUT)
			die("FUTEX_WAIT with a timeout");
	}
	if (pthread_create(&t, NULL, parked, NULL))
		die("pthread_create");
	until_blocked(SYS_futex, &handoff);
	atomic_store(&handoff, 1);
	r = futex(&handoff, FUTEX_WAKE_PRIVATE, 1, NULL);
	printf("woke %ld\n", r);
	pthread_join(t, NULL);

	atomic_store(&parked_tid, 0);
	if (pthread_create(&t, NULL, vparked, NULL))
		die("pthread_create");
	until_blocked(SYS_futex_waitv, v);
	atomic_store(&vwords[1], 1);
	r = futex(&vwords[1], FUTEX_WAKE_PRIVATE, 1, NULL);
	printf("woke %ld\n", r);
	pthread_join(t, &ret);
	printf("waitv returned %ld\n", (long)ret);

	if (syscall(SYS_getpid) != getpid())
		die("syscall(SYS_getpid)");
	errno = 0;
	r = syscall(SYS_close, -1);
	printf("close(-1): %ld %s\n", r, errno == EBADF ? "EBADF" : strerror(errno));
	return 0;
}

/* ---- lock ---- */

static _Atomic uint32_t word;
static _Atomic long waits, wakes;
static long counter;
static int iters;

static void lock(void)
{
	uint32_t c = 0;

	if (atomic_compare_exchange_strong(&word, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&word, 2);
	while (c != 0) {
		atomic_fetch_add(&waits, 1);
		futex(&word, FUTEX_WAIT_PRIVATE, 2, NULL);
		c = atomic_exchange(&word, 2);
	}
}

static void unlock(void)
{
	if (atomic_fetch_sub(&word, 1) != 1) {
		atomic_store(&word, 0);
		atomic_fetch_add(&wakes, 1);
		futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
}

static _Atomic int locker_tids[64];

static void *locker(void *arg)
{
	atomic_store(&locker_tids[(intptr_t)arg], (int)syscall(SYS_gettid));
	for (int i = 0; i < iters; i++) {
		lock();
		/* some work inside, which the compiler keeps */
		for (volatile int k = 0; k < 200; k++)
			;
		counter++;
		unlock();
	}
	return NULL;
}

/* The threads start while main holds the lock, which it lets go only once
 * every one of them sleeps on the word: each waits at least once, woken,
 * however the machine schedules them. */
static int locks(int nthreads, int n)
{
	pthread_t t[64];

	iters = n;
	printf("word %p\n", (void *)&word);
	lock();
	for (intptr_t i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, locker, (void *)i))
			die("pthread_create");
	for (int i = 0; i < nthreads; i++) {
		int tid;

		while (!(tid = atomic_load(&locker_tids[i])))
			usleep(100);
		while (!blocked_in(tid, SYS_futex, &word))
			usleep(100);
	}
	unlock();
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("waits %ld wakes %ld counter %ld\n", atomic_load(&waits), atomic_load(&wakes),
	       counter);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "calls") == 0)
		return calls(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "lock") == 0 && atoi(argv[2]) > 0 && atoi(argv[2]) <= 64)
		return locks(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: rawfutex calls N | rawfutex lock THREADS N\n");
	return 2;
}
