/*
 * Calls every synchronisation function of the pthread family a known
 * number of times (rwlocks, spinlocks, condition variables, barriers,
 * semaphores, threads), and prints what the calls returned where tracing
 * must not change it: a deadline glibc rejects before looking at the lock,
 * a busy try, a wait that times out. syncall.test checks the output is
 * the same traced and untraced, and counts the events.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

static pthread_barrier_t barrier;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

/* A deadline already past (REALTIME), and one whose nanoseconds glibc
 * rejects. */
static struct timespec past(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec -= 1;
	return t;
}

static const struct timespec bad = { 0, -1 };

static void rwlocks(void)
{
	pthread_rwlock_t rw;
	struct timespec t = past();
	struct timespec mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	mono.tv_sec += 10;
	pthread_rwlock_init(&rw, NULL);
	/* read side: 3 rdlock events taken, one refused */
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_rdlock(&rw);
	printf("trywrlock while read-held: %d\n", pthread_rwlock_trywrlock(&rw));
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_timedrdlock(&rw, &t);
	pthread_rwlock_unlock(&rw);
	printf("timedrdlock bad deadline: %d\n", pthread_rwlock_timedrdlock(&rw, &bad));
	printf("tryrdlock: %d\n", pthread_rwlock_tryrdlock(&rw));
	pthread_rwlock_unlock(&rw);
	/* write side: 3 wrlock events taken, one timed out */
	pthread_rwlock_wrlock(&rw);
	printf("timedwrlock while write-held: %d\n", pthread_rwlock_timedwrlock(&rw, &t));
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &mono);
	pthread_rwlock_unlock(&rw);
	printf("clockrdlock bad clock: %d\n", pthread_rwlock_clockrdlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &mono));
	pthread_rwlock_trywrlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_destroy(&rw);
}

static void spinlocks(void)
{
	pthread_spinlock_t s;

	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_lock(&s);
	printf("spin_trylock while held: %d\n", pthread_spin_trylock(&s));
	pthread_spin_unlock(&s);
	pthread_spin_trylock(&s);
	pthread_spin_unlock(&s);
	pthread_spin_lock(&s);
	pthread_spin_unlock(&s);
	pthread_spin_destroy(&s);
}

static void semaphores(void)
{
	sem_t sem;
	struct timespec t = past();
	int r, v;

	sem_init(&sem, 0, 0);
	sem_post(&sem);
	sem_post(&sem);
	sem_wait(&sem);
	sem_trywait(&sem);
	r = sem_trywait(&sem);
	printf("sem_trywait empty: %d %d\n", r, r ? errno : 0);
	r = sem_timedwait(&sem, &t);
	printf("sem_timedwait empty, past: %d %d\n", r, r ? errno : 0);
	sem_post(&sem);
	/* glibc rejects the deadline before taking the count it could take */
	r = sem_timedwait(&sem, &bad);
	sem_getvalue(&sem, &v);
	printf("sem_timedwait bad deadline: %d %d, value %d\n", r, r ? errno : 0, v);
	sem_wait(&sem);
	sem_destroy(&sem);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	while (!ready)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&barrier);
	return (void *)7;
}

static void *exiter(void *arg)
{
	(void)arg;
	pthread_exit((void *)9);
}

static void *nop(void *arg)
{
	return arg;
}

static void conditions_and_threads(void)
{
	struct timespec t = past(), mono;
	pthread_t a, b;
	void *ra, *rb;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	pthread_mutex_lock(&m);
	printf("cond_timedwait past: %d\n", pthread_cond_timedwait(&cv, &m, &t));
	mono.tv_sec -= 1;
	printf("cond_clockwait past: %d\n", pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &mono));
	/* 50 ms from now: its wait_ns is at least that */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	mono.tv_nsec += 50000000;
	if (mono.tv_nsec >= 1000000000) {
		mono.tv_sec++;
		mono.tv_nsec -= 1000000000;
	}
	printf("cond_clockwait 50 ms: %d\n", pthread_cond_clockwait(&cv, &m, CLOCK_MONOTONIC, &mono));
	pthread_mutex_unlock(&m);

	pthread_barrier_init(&barrier, NULL, 2);
	pthread_create(&a, NULL, waiter, NULL);
	pthread_create(&b, NULL, exiter, NULL);
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_broadcast(&cv);
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	/* (which of the two is the serial thread varies: the trace says) */
	pthread_barrier_wait(&barrier);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	printf("joined: %ld %ld\n", (long)ra, (long)rb);
	pthread_create(&a, NULL, nop, NULL);
	printf("detach: %d\n", pthread_detach(a));
	pthread_barrier_destroy(&barrier);
}

int main(void)
{
	rwlocks();
	spinlocks();
	semaphores();
	conditions_and_threads();
	/* the process ends with its last thread: the detached one's start and
	 * end are in the trace */
	fflush(stdout);
	pthread_exit(NULL);
}
