/*
 * latekeys: a program that made 40 thread-specific keys before the tracer
 * was loaded (dlopen of a provider library, as load-probe does), so the
 * tracer's own key would be one whose value glibc keeps in memory it
 * allocates on a thread's first pthread_setspecific. Each of THREADS
 * threads then writes its first two events; the allocations made meanwhile
 * are counted (this program's malloc family wraps glibc's).
 *
 * usage: latekeys LIBRARY THREADS
 * Prints the threads, the events they wrote and the allocations.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static __thread int counting;
static long allocations;
static void (*tick)(uint32_t);

void *malloc(size_t n)
{
	if (counting)
		__atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (counting)
		__atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	if (counting)
		__atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

static void *thread(void *arg)
{
	counting = 1;
	tick((uint32_t)(uintptr_t)arg);
	tick((uint32_t)(uintptr_t)arg);
	counting = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_key_t keys[40];
	long n;
	void *h;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	for (int i = 0; i < 40; i++)
		if (pthread_key_create(&keys[i], NULL) != 0)
			return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(tick = (void (*)(uint32_t))dlsym(h, "keyprobe_tick"))) {
		fprintf(stderr, "latekeys: %s\n", dlerror());
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread, (void *)(uintptr_t)i) != 0)
			return 2;
		pthread_join(t, NULL);
	}
	printf("threads %ld events %ld allocations %ld\n", n, 2 * n, allocations);
	return 0;
}
