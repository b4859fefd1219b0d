/*
 * mutex_types: exercises every mutex type and lock function and prints one
 * line per call with its result and errno, so that a run with the wrappers
 * preloaded can be compared with a run without: the transcripts must be
 * identical. Thread interleavings are forced with joins, so the transcript
 * is deterministic.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SENTINEL 4242 /* errno value that wrapped calls must leave alone */

static void show(const char *what, int ret)
{
	printf("%-44s %-16s errno=%d\n", what, ret ? strerror(ret) : "ok", errno);
	errno = SENTINEL;
}

static struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

static void make(pthread_mutex_t *m, int type, int robust, int protocol, int pshared)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setrobust(&a, robust);
	pthread_mutexattr_setprotocol(&a, protocol);
	pthread_mutexattr_setpshared(&a, pshared);
	show("init", pthread_mutex_init(m, &a));
	pthread_mutexattr_destroy(&a);
}

/* ---- helpers run in other threads ---- */

static void *try_from_thread(void *arg)
{
	return (void *)(long)pthread_mutex_trylock(arg);
}

static void *timed_from_thread(void *arg)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 20);

	return (void *)(long)pthread_mutex_timedlock(arg, &t);
}

static void *clock_from_thread(void *arg)
{
	struct timespec t = in_ms(CLOCK_MONOTONIC, 20);

	return (void *)(long)pthread_mutex_clocklock(arg, CLOCK_MONOTONIC, &t);
}

static void *unlock_from_thread(void *arg)
{
	return (void *)(long)pthread_mutex_unlock(arg);
}

static void *lock_and_die(void *arg)
{
	return (void *)(long)pthread_mutex_lock(arg); /* exits holding it */
}

static int in_thread(void *(*fn)(void *), pthread_mutex_t *m)
{
	pthread_t t;
	void *ret;

	pthread_create(&t, NULL, fn, m);
	pthread_join(t, &ret);
	return (int)(long)ret;
}

/* ---- the scenarios ---- */

static void normal(void)
{
	pthread_mutex_t m;
	struct timespec t;

	puts("# normal");
	make(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_PRIVATE);
	show("lock", pthread_mutex_lock(&m));
	show("trylock held", pthread_mutex_trylock(&m));
	show("trylock from thread", in_thread(try_from_thread, &m));
	show("timedlock from thread (times out)", in_thread(timed_from_thread, &m));
	show("clocklock from thread (times out)", in_thread(clock_from_thread, &m));
	show("destroy held", pthread_mutex_destroy(&m));
	show("unlock", pthread_mutex_unlock(&m));
	t = in_ms(CLOCK_REALTIME, 10);
	show("timedlock free", pthread_mutex_timedlock(&m, &t));
	show("unlock", pthread_mutex_unlock(&m));
	t = in_ms(CLOCK_MONOTONIC, 10);
	show("clocklock monotonic free", pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &t));
	show("unlock", pthread_mutex_unlock(&m));
	/* glibc refuses other clocks before looking at the mutex */
	show("clocklock cputime clock, free", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &t));
	show("clocklock bad clock, free", pthread_mutex_clocklock(&m, (clockid_t)-7, &t));
	t.tv_nsec = 2000000000; /* invalid, but the mutex is free */
	show("timedlock bad time, free", pthread_mutex_timedlock(&m, &t));
	show("unlock", pthread_mutex_unlock(&m));
	show("trylock free", pthread_mutex_trylock(&m));
	show("unlock", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

static void recursive(void)
{
	pthread_mutex_t m;

	puts("# recursive");
	make(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_PRIVATE);
	show("lock", pthread_mutex_lock(&m));
	show("lock again", pthread_mutex_lock(&m));
	show("trylock again", pthread_mutex_trylock(&m));
	show("trylock from thread", in_thread(try_from_thread, &m));
	show("unlock from thread", in_thread(unlock_from_thread, &m));
	show("unlock", pthread_mutex_unlock(&m));
	show("unlock", pthread_mutex_unlock(&m));
	show("unlock", pthread_mutex_unlock(&m));
	show("unlock not held", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

static void errorcheck(void)
{
	pthread_mutex_t m;
	struct timespec t = in_ms(CLOCK_REALTIME, 10);

	puts("# errorcheck");
	make(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_PRIVATE);
	show("lock", pthread_mutex_lock(&m));
	show("lock again (deadlock)", pthread_mutex_lock(&m));
	show("timedlock again (deadlock)", pthread_mutex_timedlock(&m, &t));
	show("trylock again", pthread_mutex_trylock(&m));
	show("unlock from thread", in_thread(unlock_from_thread, &m));
	show("unlock", pthread_mutex_unlock(&m));
	show("unlock not held", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

static void robust(void)
{
	pthread_mutex_t m;

	puts("# robust");
	make(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_PRIVATE);
	show("thread locks and exits", in_thread(lock_and_die, &m));
	show("lock (owner died)", pthread_mutex_lock(&m));
	show("consistent", pthread_mutex_consistent(&m));
	show("unlock", pthread_mutex_unlock(&m));
	show("thread locks and exits", in_thread(lock_and_die, &m));
	show("trylock (owner died)", pthread_mutex_trylock(&m));
	show("unlock without consistent", pthread_mutex_unlock(&m));
	show("lock (not recoverable)", pthread_mutex_lock(&m));
	show("trylock (not recoverable)", pthread_mutex_trylock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

static void priority_inherit(void)
{
	pthread_mutex_t m;

	puts("# priority-inheritance");
	make(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_INHERIT,
	     PTHREAD_PROCESS_PRIVATE);
	show("lock", pthread_mutex_lock(&m));
	show("lock again (deadlock)", pthread_mutex_lock(&m));
	show("trylock from thread", in_thread(try_from_thread, &m));
	show("timedlock from thread (times out)", in_thread(timed_from_thread, &m));
	show("unlock", pthread_mutex_unlock(&m));
	show("trylock", pthread_mutex_trylock(&m));
	show("unlock", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

/* Priority-protect: whoever holds it runs at the ceiling, 10; the thread
 * runs SCHED_FIFO 1 (root only) meanwhile. */
static void priority_protect(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	puts("# priority-protect");
	/* glibc raises a real-time thread to the ceiling; others get EINVAL */
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ 1 }) < 0) {
		puts("(not permitted to run SCHED_FIFO)");
		errno = SENTINEL;
		return;
	}
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT);
	pthread_mutexattr_setprioceiling(&a, 10);
	show("init", pthread_mutex_init(&m, &a));
	pthread_mutexattr_destroy(&a);
	show("lock", pthread_mutex_lock(&m));
	show("trylock from thread", in_thread(try_from_thread, &m));
	show("timedlock from thread (times out)", in_thread(timed_from_thread, &m));
	show("clocklock from thread (times out)", in_thread(clock_from_thread, &m));
	show("unlock", pthread_mutex_unlock(&m));
	show("timedlock", pthread_mutex_timedlock(&m, &(struct timespec){ 0, 0 }));
	show("unlock", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
	sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ 0 });
	errno = SENTINEL;
}

static void adaptive(void)
{
	pthread_mutex_t m;

	puts("# adaptive");
	make(&m, PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_PRIVATE);
	show("lock", pthread_mutex_lock(&m));
	show("trylock from thread", in_thread(try_from_thread, &m));
	show("timedlock from thread (times out)", in_thread(timed_from_thread, &m));
	show("unlock", pthread_mutex_unlock(&m));
	show("timedlock", pthread_mutex_timedlock(&m, &(struct timespec){ 0, 0 }));
	show("unlock", pthread_mutex_unlock(&m));
	show("destroy", pthread_mutex_destroy(&m));
}

static void process_shared(void)
{
	pthread_mutex_t *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	puts("# process-shared");
	make(m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_STALLED, PTHREAD_PRIO_NONE,
	     PTHREAD_PROCESS_SHARED);
	show("lock", pthread_mutex_lock(m));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct timespec t = in_ms(CLOCK_REALTIME, 20);

		errno = SENTINEL;
		show("child trylock", pthread_mutex_trylock(m));
		show("child timedlock (times out)", pthread_mutex_timedlock(m, &t));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	show("unlock", pthread_mutex_unlock(m));
	show("destroy", pthread_mutex_destroy(m));
	munmap(m, sizeof(*m));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	errno = SENTINEL;
	normal();
	recursive();
	errorcheck();
	robust();
	priority_inherit();
	priority_protect();
	adaptive();
	process_shared();
	return 0;
}
