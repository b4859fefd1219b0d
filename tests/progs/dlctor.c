/*
 * libdlctor.so: a library whose constructor makes traced calls (it takes
 * a lock DLCTOR_LOCKS times) while dlopen loads it, before dlopen returns:
 * their callers are in an object the loader is still opening.
 */
#include <pthread.h>

#define DLCTOR_LOCKS 1000

static pthread_mutex_t ctor_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctor_counter;

int dlprobe_work(int n);

static void __attribute__((constructor)) dlctor_init(void)
{
	for (int i = 0; i < DLCTOR_LOCKS; i++) {
		pthread_mutex_lock(&ctor_lock);
		ctor_counter++;
		pthread_mutex_unlock(&ctor_lock);
	}
}

/* What dlopener calls: the locks the constructor took (n more taken by
 * the caller's count are not wanted here). */
int dlprobe_work(int n)
{
	(void)n;
	return ctor_counter;
}
