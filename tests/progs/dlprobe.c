/*
 * libdlprobe.so: a library the dlopener test program loads at run time;
 * its function takes a lock, so that events come from an object that was
 * not loaded at start.
 */
#include <pthread.h>

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static int probe_counter;

int dlprobe_work(int n);

int dlprobe_work(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&probe_lock);
		probe_counter++;
		pthread_mutex_unlock(&probe_lock);
	}
	return probe_counter;
}
