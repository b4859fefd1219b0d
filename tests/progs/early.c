/*
 * libearly.so: a library whose constructor takes a mutex. A program linked
 * with it initialises it before the preloaded shimtrace libraries (their
 * constructors have not run yet): the wrappers must already work.
 */
#include <pthread.h>

static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;
int early_result = -1;

static void __attribute__((constructor)) early(void)
{
	int a = pthread_mutex_lock(&early_lock), b = pthread_mutex_trylock(&early_lock);

	early_result = a * 100 + b * 10 + pthread_mutex_unlock(&early_lock);
}
