/*
 * The bump allocator of arena.h: chunks of at least 64 KiB, each request
 * rounded up to 16 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/arena.h"

#define CHUNK_MIN (64u << 10)

struct st__chunk {
	struct st__chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void *st__arena_alloc(struct st__arena *a, size_t n)
{
	struct st__chunk *c = a->head;
	void *p;

	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + 15) & ~(size_t)15;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = a->head;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += n;
	a->total += n;
	memset(p, 0, n);
	return p;
}

char *st__arena_strndup(struct st__arena *a, const char *s, size_t n)
{
	char *p = st__arena_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void st__arena_free(struct st__arena *a)
{
	while (a->head) {
		struct st__chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
	a->total = 0;
}
