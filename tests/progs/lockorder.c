/*
 * lockorder: lock patterns whose report is known, for report.test.
 *
 *   lockorder inverse    two threads, one after the other, take locks a
 *                        and b in opposite orders (no deadlock happens):
 *                        one lock-order cycle; and, giving none, c before d
 *                        in both, a recursive mutex taken twice, and a
 *                        trylock of a while b is held
 *   lockorder ordered    both threads take a before b: no cycle
 *   lockorder hot        a hot lock that 4 threads fight over (held 200
 *                        us each time) among 8 cold ones, each taken by
 *                        one thread only
 *   lockorder nested N   one thread takes a then b, N times, and holds
 *                        each about 20 us (no cycle, no hold much
 *                        longer; lost.test loses some unlocks)
 *   lockorder handover N one thread goes hand over hand through 3 locks,
 *                        N times: takes the next, then lets the last go
 *                        (holds that overlap without nesting)
 *   lockorder conds      a background thread whose timed condition waits
 *                        expire 6 times, 50 ms each (idle), and a consumer
 *                        woken 50 times by a producer (waits for work:
 *                        each item is made once the consumer waits for it);
 *                        prints the consumer's waits ("ready waits N")
 *   lockorder idle       two workers park in a condition wait for work
 *                        that never comes; the program exits 0 meanwhile
 *   lockorder deadlock   two threads deadlock for real; prints "blocked"
 *                        when both hold their first lock (the test kills
 *                        it once both sleep in the kernel)
 *
 * The lines the test looks for are marked with LINE: comments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t c = PTHREAD_MUTEX_INITIALIZER, d = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec;
static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER, cold[8];
static pthread_barrier_t both;

static __attribute__((noinline)) void take_a_then_b(void)
{
	pthread_mutex_lock(&a); /* LINE: a-first */
	pthread_mutex_lock(&b); /* LINE: b-second */
	pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
}

static __attribute__((noinline)) void take_b_then_a(void)
{
	pthread_mutex_lock(&b); /* LINE: b-first */
	pthread_mutex_lock(&a); /* LINE: a-second */
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
}

/* Patterns that must not give a cycle. */
static void harmless(void)
{
	pthread_mutex_lock(&c);
	pthread_mutex_lock(&d);
	pthread_mutex_unlock(&d);
	pthread_mutex_unlock(&c);
	pthread_mutex_lock(&rec);
	pthread_mutex_lock(&rec);
	pthread_mutex_lock(&c);
	pthread_mutex_unlock(&c);
	pthread_mutex_unlock(&rec);
	pthread_mutex_unlock(&rec);
	pthread_mutex_lock(&b);
	if (pthread_mutex_trylock(&a) == 0)
		pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
}

static void *first_thread(void *arg)
{
	take_a_then_b();
	if (arg)
		harmless();
	return NULL;
}

static void *second_thread(void *arg)
{
	if (arg)
		take_b_then_a();
	else
		take_a_then_b();
	return NULL;
}

static void *hot_worker(void *arg)
{
	struct timespec t = { 0, 200000 };
	long k = (long)arg;

	pthread_barrier_wait(&both);
	for (int i = 0; i < 25; i++) {
		pthread_mutex_lock(&hot); /* LINE: hot */
		nanosleep(&t, NULL);
		pthread_mutex_unlock(&hot);
		for (int j = 0; j < 2; j++) {
			pthread_mutex_lock(&cold[2 * k + j]);
			pthread_mutex_unlock(&cold[2 * k + j]);
		}
	}
	return NULL;
}

static void *deadlocker(void *arg)
{
	pthread_mutex_t *first = arg ? &a : &b, *second = arg ? &b : &a;

	pthread_mutex_lock(first);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(second); /* LINE: deadlock */
	return NULL;
}

/* Busy for us microseconds (a hold the clock can see, with no call a
 * wrapper would record). */
static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000);
}

static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int parked;

/* Waits for work that never comes (no deadlock: the program exits). */
static void *idle_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&a);
	parked++;
	for (;;)
		pthread_cond_wait(&work, &a); /* LINE: idle-wait */
	return NULL;
}

static pthread_cond_t tick = PTHREAD_COND_INITIALIZER, ready = PTHREAD_COND_INITIALIZER;
static int items, consumer_waits, ready_waits; /* (under d) */

/* Waits on tick, which nobody signals: each wait times out. */
static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&c);
	for (int i = 0; i < 6; i++) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 50000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&tick, &c, &t); /* LINE: tick-wait */
	}
	pthread_mutex_unlock(&c);
	return NULL;
}

/* Takes 50 items, waiting for each. */
static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++) {
		pthread_mutex_lock(&d);
		while (!items) {
			consumer_waits = 1;
			ready_waits++;
			pthread_cond_wait(&ready, &d); /* LINE: ready-wait */
		}
		items--;
		pthread_mutex_unlock(&d);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_mutexattr_t ra;
	pthread_t t[4];

	pthread_mutexattr_init(&ra);
	pthread_mutexattr_settype(&ra, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &ra);
	if (strcmp(mode, "inverse") == 0 || strcmp(mode, "ordered") == 0) {
		void *inverse = strcmp(mode, "inverse") == 0 ? (void *)1 : NULL;

		/* one after the other: the run itself cannot deadlock */
		pthread_create(&t[0], NULL, first_thread, inverse);
		pthread_join(t[0], NULL);
		pthread_create(&t[1], NULL, second_thread, inverse);
		pthread_join(t[1], NULL);
	} else if (strcmp(mode, "hot") == 0) {
		for (int i = 0; i < 8; i++)
			pthread_mutex_init(&cold[i], NULL);
		pthread_barrier_init(&both, NULL, 4);
		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, hot_worker, (void *)i);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (strcmp(mode, "nested") == 0 && argc > 2) {
		long n = atol(argv[2]);

		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&a);
			pthread_mutex_lock(&b);
			spin_us(20);
			pthread_mutex_unlock(&b);
			pthread_mutex_unlock(&a);
		}
	} else if (strcmp(mode, "handover") == 0 && argc > 2) {
		pthread_mutex_t *ring[3] = { &a, &b, &c };
		long n = atol(argv[2]);

		pthread_mutex_lock(ring[0]);
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(ring[(i + 1) % 3]);
			pthread_mutex_unlock(ring[i % 3]);
		}
		pthread_mutex_unlock(ring[n % 3]);
	} else if (strcmp(mode, "conds") == 0) {
		pthread_create(&t[0], NULL, ticker, NULL);
		pthread_create(&t[1], NULL, consumer, NULL);
		for (int i = 0; i < 50; i++) {
			struct timespec pause = { 0, 2000000 };

			nanosleep(&pause, NULL);
			pthread_mutex_lock(&d);
			/* (it let d go in the wait: it is in it, whatever a
			 * busy machine's scheduler did) */
			while (!consumer_waits) {
				pthread_mutex_unlock(&d);
				nanosleep(&pause, NULL);
				pthread_mutex_lock(&d);
			}
			consumer_waits = 0;
			items++;
			pthread_cond_signal(&ready);
			pthread_mutex_unlock(&d);
		}
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		/* (more than 50: a wait that returned unsignalled, which POSIX
		 * allows and glibc does, rarely, on a busy machine) */
		printf("ready waits %d\n", ready_waits);
	} else if (strcmp(mode, "idle") == 0) {
		pthread_create(&t[0], NULL, idle_worker, NULL);
		pthread_create(&t[1], NULL, idle_worker, NULL);
		/* (both parked once both counted and a is free: a condition
		 * wait releases it) */
		for (int n = 0; n < 2;) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
			pthread_mutex_lock(&a);
			n = parked;
			pthread_mutex_unlock(&a);
		}
	} else if (strcmp(mode, "deadlock") == 0) {
		pthread_barrier_init(&both, NULL, 3);
		pthread_create(&t[0], NULL, deadlocker, (void *)1);
		pthread_create(&t[1], NULL, deadlocker, NULL);
		pthread_barrier_wait(&both);
		printf("blocked %d\n", 1);
		fflush(stdout);
		pthread_join(t[0], NULL);
	} else {
		fprintf(stderr, "usage: lockorder inverse|ordered|hot|deadlock|idle|conds|nested N|handover N\n");
		return 2;
	}
	printf("done %s\n", mode);
	return 0;
}
