/*
 * Helpers of the malloc family's spec (malloc-boot.c).
 *
 * The bootstrap arena: while a wrapper of the family looks its real
 * function up, dlsym may allocate (its error buffer) and so call back into
 * the family, before the real allocator is known. Those calls are served
 * from a static arena: blocks carved once, zeroed, never reused. free and
 * realloc (the `via` helpers, on every call) recognise an arena block and
 * never hand it to the real allocator: freeing one does nothing, and a
 * block reallocated moves to the real allocator with its bytes. A real
 * block freed while free itself is being looked up is kept, and freed by
 * the next free once the real one is known: no allocation is lost or
 * handed to the wrong allocator.
 */
#ifndef ST_WRAPPERS_MALLOC_HELPERS_H
#define ST_WRAPPERS_MALLOC_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/atomic.h"
#include "shimtrace/tracepoint.h"

#define ST__HIDDEN __attribute__((visibility("hidden")))

ST__HIDDEN void *st__boot_malloc(size_t size);
ST__HIDDEN void *st__boot_calloc(size_t nmemb, size_t size);
ST__HIDDEN void *st__boot_realloc(void *old, size_t size);
ST__HIDDEN void st__boot_free(void *ptr);
ST__HIDDEN bool st__boot_owns(const void *ptr);

/*
 * The call site whose stack an allocation of size bytes at ip takes, or
 * NULL for none: the thread's count of bytes since its last sampled
 * allocation reaches st_stack_sample (core/stack.c). One load and a branch
 * when stacks are off; a thread's first allocation is sampled.
 */
static __thread int64_t st__stack_left __attribute__((tls_model("initial-exec")));

static inline const void *st__alloc_stack(const void *ip, uint64_t size)
{
	uint64_t every = st_load_relaxed(&st_stack_sample);

	if (__builtin_expect(every == 0, 1))
		return NULL;
	st__stack_left -= size > INT64_MAX ? INT64_MAX : (int64_t)size;
	if (st__stack_left > 0)
		return NULL;
	st__stack_left = every > INT64_MAX ? INT64_MAX : (int64_t)every;
	return ip;
}

/* The arena, and the count of frees kept for later: the free wrapper's
 * disabled path reads them inline (a load, a subtraction, two compares). */
#define ST__BOOT_ARENA (64u << 10)
ST__HIDDEN extern unsigned char st__boot_arena[ST__BOOT_ARENA];
ST__HIDDEN extern unsigned st__boot_deferred;
ST__HIDDEN void st__boot_flush(void (*real)(void *));

static inline void st__free_via(void (*real)(void *), void *ptr)
{
	if (__builtin_expect(st_load_acquire(&st__boot_deferred) != 0, 0))
		st__boot_flush(real);
	if (__builtin_expect((uintptr_t)ptr - (uintptr_t)st__boot_arena < ST__BOOT_ARENA, 0))
		return;
	real(ptr);
}

ST__HIDDEN void *st__realloc_via(void *(*real)(void *, size_t), void *old, size_t size);
ST__HIDDEN void *st__reallocarray_via(void *(*real)(void *, size_t, size_t), void *old,
				      size_t nmemb, size_t size);

#endif
