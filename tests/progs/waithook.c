/*
 * waithook: the lock wait hook (st_lock_wait_hook) is called in the
 * thread that found a mutex busy, before its wait event, and only then.
 *
 * ROUNDS times: the main thread holds the mutex, a second thread locks
 * it and finds it busy; the hook, in that thread, writes
 * waithook:held (the round) and raises a flag, on which the main thread
 * lets the mutex go. Then each thread takes the free mutex once more,
 * which must not call the hook. Prints the hook's calls: ROUNDS under
 * record with pthread:mutex_wait enabled, 0 without the preload.
 *
 *   usage: waithook [ROUNDS]   (default 20)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "blocked.h"

#include <shimtrace/tracepoint.h>

#define WAITHOOK_TRACEPOINTS(TP, F) TP(waithook, held, F(U32, round))
ST_PROVIDER_DECLARE(waithook, WAITHOOK_TRACEPOINTS)
ST_PROVIDER_DEFINE(waithook, WAITHOOK_TRACEPOINTS)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int called, round_no;
static int calls;

static void *caller;

static void hook(const void *site)
{
	calls++;
	caller = (void *)site;
	st_tracepoint(waithook, held, (uint32_t)round_no);
	__atomic_store_n(&called, 1, __ATOMIC_RELEASE);
}

static void *locker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock); /* (the site the hook is given) */
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	int waited = 0;

	st_lock_wait_hook = hook;
	for (round_no = 1; round_no <= rounds; round_no++) {
		pthread_t t;

		called = 0;
		pthread_mutex_lock(&lock);
		pthread_create(&t, NULL, locker, NULL);
		/* (until the hook is called, or untraced, where nothing calls
		 * it, the thread sleeps in the lock: however long a busy
		 * machine takes to run it. Traced, the hook comes first) */
		while (!__atomic_load_n(&called, __ATOMIC_ACQUIRE) && !mutex_has_waiter(&lock))
			usleep(10);
		waited += called;
		pthread_mutex_unlock(&lock);
		pthread_join(t, NULL);
	}
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	printf("hook calls %d, seen %d\n", calls, waited);
	/* the site: a return address in locker() */
	if (calls && ((char *)caller < (char *)locker || (char *)caller > (char *)locker + 64))
		printf("the hook's site %p is not in locker() at %p\n", caller, (void *)locker);
	return 0;
}
