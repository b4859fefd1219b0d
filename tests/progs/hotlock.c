/*
 * hotlock: one hot lock whose contended acquisitions are known, for
 * shimtrace top's tests (tests/integration/top.test).
 *
 *   hotlock THREADS ROUNDS [PAUSE_MS]
 *
 * Each round, main takes the lock `hot` (uncontended: every worker let it
 * go in the round before), lets the THREADS workers try it, and lets it go
 * only once each of them sleeps on it (its futex word, seen in /proc:
 * blocked.h): every worker waits exactly once a round at the line marked
 * LINE: hot, however the machine schedules them. So `hot` is acquired
 * (THREADS + 1) x ROUNDS times, THREADS x ROUNDS of them contended. A
 * barrier ends each round; PAUSE_MS (default 0) passes between rounds, so
 * that a long run can be followed while it is recorded. Prints "done".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start, end;
static _Atomic int tids[64];
static long rounds;
static volatile long work;

static void *worker(void *arg)
{
	long i = (long)arg;

	atomic_store(&tids[i], (int)syscall(SYS_gettid));
	for (long r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start);
		pthread_mutex_lock(&hot); /* LINE: hot */
		work++;
		pthread_mutex_unlock(&hot);
		pthread_barrier_wait(&end);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long pause_ms = argc > 3 ? atol(argv[3]) : 0;
	struct timespec pause = { pause_ms / 1000, pause_ms % 1000 * 1000000 };
	pthread_t t[64];

	rounds = argc > 2 ? atol(argv[2]) : 10;
	if (n < 1 || n > 64 || rounds < 1)
		return 2;
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&end, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&hot);
		pthread_barrier_wait(&start);
		for (int i = 0; i < n; i++) {
			int tid;

			while (!(tid = atomic_load(&tids[i])))
				usleep(100);
			while (!blocked_in(tid, SYS_futex, &hot))
				usleep(100);
		}
		pthread_mutex_unlock(&hot);
		pthread_barrier_wait(&end);
		if (pause_ms)
			nanosleep(&pause, NULL);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("done %ld\n", work);
	return work == n * rounds ? 0 : 1;
}
