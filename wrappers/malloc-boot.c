/*
 * The malloc family's bootstrap arena and the free/realloc helpers that
 * keep its blocks away from the real allocator (see malloc-helpers.h).
 *
 * A block is a 16-byte header holding its size, then the bytes, 16-byte
 * aligned. Blocks are carved with a compare-and-swap on the arena's use
 * (threads may bootstrap at once) and never given back: the arena serves
 * a few small buffers of dlsym, once per wrapper at most.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/atomic.h"
#include "wrappers/malloc-helpers.h"

#define ARENA ST__BOOT_ARENA
#define HDR 16u
#define DEFERRED 64

_Alignas(16) unsigned char st__boot_arena[ARENA];
#define arena st__boot_arena
static uint32_t arena_used;

/* Real blocks freed before the real free was known (0: empty slot). */
static uintptr_t deferred[DEFERRED];
unsigned st__boot_deferred;
#define ndeferred st__boot_deferred

static void *carve(size_t size)
{
	uint32_t old = st_load_relaxed(&arena_used);
	uint64_t need;

	if (size > ARENA)
		goto full;
	need = HDR + ((size + 15) & ~(size_t)15);
	do {
		if (need > ARENA - old)
			goto full;
	} while (!st_cas_weak_relaxed(&arena_used, &old, old + (uint32_t)need));
	memcpy(arena + old, &(uint64_t){ size }, sizeof(uint64_t));
	return arena + old + HDR;
full:
	errno = ENOMEM;
	return NULL;
}

static uint64_t block_size(const void *p)
{
	uint64_t n;

	memcpy(&n, (const uint8_t *)p - HDR, sizeof(n));
	return n;
}

bool st__boot_owns(const void *ptr)
{
	return (uintptr_t)ptr - (uintptr_t)arena < ARENA;
}

void *st__boot_malloc(size_t size)
{
	return carve(size);
}

void *st__boot_calloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return carve(nmemb * size); /* (never used before: zero) */
}

void *st__boot_realloc(void *old, size_t size)
{
	void *p;

	if (old && !st__boot_owns(old)) {
		/* a real block, the real allocator not known yet: its size is
		 * not known either; failing leaves it whole */
		errno = ENOMEM;
		return NULL;
	}
	p = carve(size);
	if (p && old)
		memcpy(p, old, size < block_size(old) ? size : block_size(old));
	return p;
}

void st__boot_free(void *ptr)
{
	if (!ptr || st__boot_owns(ptr))
		return;
	for (uint32_t k = 0; k < DEFERRED; k++) {
		uintptr_t none = 0;

		if (st_cas_release(&deferred[k], &none, (uintptr_t)ptr)) {
			st_add_release(&ndeferred, 1);
			return;
		}
	}
	/* (more than DEFERRED at once: kept, not freed) */
}

void st__boot_flush(void (*real)(void *))
{
	for (uint32_t k = 0; k < DEFERRED; k++) {
		uintptr_t p = st_xchg_acquire(&deferred[k], 0);

		if (p) {
			st_sub_relaxed(&ndeferred, 1);
			real((void *)p);
		}
	}
}

/* An arena block moved to the real allocator (fresh: real_new), or NULL
 * as realloc says. */
static void *moved(void *fresh, const void *old, size_t size)
{
	if (fresh)
		memcpy(fresh, old, size < block_size(old) ? size : block_size(old));
	return fresh;
}

void *st__realloc_via(void *(*real)(void *, size_t), void *old, size_t size)
{
	if (!old || !st__boot_owns(old))
		return real(old, size);
	if (size == 0)
		return NULL; /* (as glibc: the block is freed, NULL returned) */
	return moved(real(NULL, size), old, size);
}

void *st__reallocarray_via(void *(*real)(void *, size_t, size_t), void *old, size_t nmemb,
			   size_t size)
{
	if (!old || !st__boot_owns(old))
		return real(old, nmemb, size);
	if (size && nmemb > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	if (nmemb * size == 0)
		return NULL;
	return moved(real(NULL, nmemb, size), old, nmemb * size);
}
