/*
 * oldcond: a program bound, as binaries built before glibc 2.3.2 are, to
 * the older version of pthread_cond_* (ST_COND_COMPAT, from configure),
 * and also to the default one. The old ABI's condition variable holds a
 * pointer to a current one, which glibc's compatibility functions allocate
 * at first use: "allocated" shows they ran. Had a wrapper of the default
 * version taken the old calls, the word would stay null and the old wait
 * would run the current code on the old layout.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int old_init(pthread_cond_t *c, const pthread_condattr_t *a);
int old_signal(pthread_cond_t *c);
int old_broadcast(pthread_cond_t *c);
int old_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int old_destroy(pthread_cond_t *c);
__asm__(".symver old_init, pthread_cond_init@" ST_COND_COMPAT);
__asm__(".symver old_signal, pthread_cond_signal@" ST_COND_COMPAT);
__asm__(".symver old_broadcast, pthread_cond_broadcast@" ST_COND_COMPAT);
__asm__(".symver old_timedwait, pthread_cond_timedwait@" ST_COND_COMPAT);
__asm__(".symver old_destroy, pthread_cond_destroy@" ST_COND_COMPAT);

int main(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t old, cur = PTHREAD_COND_INITIALIZER;
	struct timespec past = { 1, 0 };
	void *first;
	int r;

	memset(&old, 0x55, sizeof(old));
	old_init(&old, NULL);
	r = old_signal(&old);
	memcpy(&first, &old, sizeof(first));
	printf("old signal: %d, old cond %s\n", r, first ? "allocated" : "null");
	printf("old broadcast: %d\n", old_broadcast(&old));
	pthread_mutex_lock(&m);
	r = old_timedwait(&old, &m, &past);
	printf("old timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	r = pthread_cond_timedwait(&cur, &m, &past);
	printf("timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
	pthread_mutex_unlock(&m);
	printf("signal: %d broadcast: %d\n", pthread_cond_signal(&cur), pthread_cond_broadcast(&cur));
	printf("old destroy: %d\n", old_destroy(&old));
	return 0;
}
