/*
 * dlopener: loads LIBRARY with dlopen, calls its dlprobe_work(N), closes
 * it, and takes a lock of its own before and after.
 * usage: dlopener LIBRARY N
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Not inlined, with a local the compiler keeps: at any optimisation level
 * the caller is a function of its own whose lines babeltrace2 can find. */
static __attribute__((noinline)) void main_work(void)
{
	volatile int touched = 0;

	pthread_mutex_lock(&lock);
	touched++;
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	int (*work)(int);
	void *h;
	int n = argc > 2 ? atoi(argv[2]) : 10;

	if (argc < 2)
		return 2;
	main_work();
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	work = (int (*)(int))dlsym(h, "dlprobe_work");
	if (!work)
		return 1;
	printf("dlprobe_work: %d\n", work(n));
	dlclose(h);
	main_work();
	return 0;
}
