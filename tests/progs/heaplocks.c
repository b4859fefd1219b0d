/*
 * Locks named by where they live: a static one (by its variable), one in
 * a heap block (by the block's allocation: conn_new's malloc), one in an
 * array from calloc (at an offset past the first element), and one on
 * the stack (no name). Prints each lock's address, then "done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct conn {
	long id;
	pthread_mutex_t lock;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) struct conn *conn_new(long id)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c)
		exit(1);
	c->id = id;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void use(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

int main(void)
{
	struct conn *c = conn_new(1);
	struct conn *table = calloc(4, sizeof(*table));
	pthread_mutex_t on_stack = PTHREAD_MUTEX_INITIALIZER;

	if (!table)
		return 1;
	use(&registry_lock);
	use(&c->lock);
	use(&table[2].lock);
	use(&on_stack);
	printf("static %p heap %p array %p stack %p\n", (void *)&registry_lock, (void *)&c->lock,
	       (void *)&table[2].lock, (void *)&on_stack);
	free(table);
	free(c);
	puts("done");
	return 0;
}
