/*
 * earlymain: prints what libearly's constructor got from the mutex calls
 * it made before anything else ran (0 + EBUSY: "160"), then takes a lock.
 */
#include <pthread.h>
#include <stdio.h>

extern int early_result;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	printf("early %d\n", early_result);
	return 0;
}
