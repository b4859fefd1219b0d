/*
 * Two threads wait for one mutex through the program's own lock helper
 * (as pigz's waits all go through its wrapper), from two callers:
 * path_a and path_b. One frame (the helper's call of
 * pthread_mutex_lock) cannot tell them apart; their stacks can.
 *
 *   stacks
 *   stacks leak     leaks through the program's own allocation helper
 *                   (my_alloc): two 100-byte blocks under path_a, one of
 *                   300 bytes under path_b
 *   stacks slowread a read of a pipe that blocks 20 ms (a child writes
 *                   then), in read_input called by slow_caller
 *
 * main holds the mutex while both threads start, and lets it go only
 * once each sleeps on it (its futex word, seen in /proc): each waits
 * exactly once, however the machine schedules them, and then holds it 5
 * ms at least. Prints "done".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int tids[2];
static volatile int work;

/* The program's lock helper: every wait shows here. */
static __attribute__((noinline)) void my_lock(void)
{
	pthread_mutex_lock(&shared);
	work++; /* (after the call: not a tail call) */
}

/* Each thread holds the lock 5 ms at least once it has it. */
static void hold_a_while(void)
{
	const struct timespec t = { 0, 5 * 1000 * 1000 };

	nanosleep(&t, NULL);
}

static __attribute__((noinline)) void path_a(void)
{
	my_lock();
	work++;
	hold_a_while();
	pthread_mutex_unlock(&shared);
}

/* (not the same code as path_a: the compiler would fold the two) */
static __attribute__((noinline)) void path_b(void)
{
	work += 2;
	my_lock();
	work += 3;
	hold_a_while();
	pthread_mutex_unlock(&shared);
}

static void *thread_main(void *arg)
{
	intptr_t i = (intptr_t)arg;

	atomic_store(&tids[i], (int)syscall(SYS_gettid));
	if (i == 0)
		path_a();
	else
		path_b();
	return NULL;
}

static __attribute__((noinline)) void *my_alloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		exit(1);
	work++;
	return p;
}

static void *volatile kept[3];

static __attribute__((noinline)) void leak_a(void)
{
	/* (one call, twice: one stack) */
	for (int i = 0; i < 2; i++)
		kept[i] = my_alloc(100);
}

static __attribute__((noinline)) void leak_b(void)
{
	work += 2;
	kept[2] = my_alloc(300);
	work += 3;
}

static __attribute__((noinline)) void read_input(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		exit(1);
	work++;
}

static __attribute__((noinline)) void slow_caller(int fd)
{
	read_input(fd);
	work++;
}

static int slowread(void)
{
	int p[2];

	if (pipe(p))
		return 1;
	if (fork() == 0) {
		const struct timespec t = { 0, 20 * 1000 * 1000 };

		nanosleep(&t, NULL);
		_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
	}
	slow_caller(p[0]);
	wait(NULL);
	puts("done");
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc == 2 && strcmp(argv[1], "slowread") == 0)
		return slowread();
	if (argc == 2 && strcmp(argv[1], "leak") == 0) {
		leak_a();
		leak_b();
		puts("done");
		return 0;
	}
	pthread_mutex_lock(&shared);
	for (intptr_t i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++) {
		int tid;

		while (!(tid = atomic_load(&tids[i])))
			usleep(100);
		while (!blocked_in(tid, SYS_futex, &shared))
			usleep(100);
	}
	usleep(1000);
	pthread_mutex_unlock(&shared);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
