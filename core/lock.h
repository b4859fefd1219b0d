/*
 * A futex mutex for the tracer's slow paths (registration, attach): 0
 * free, 1 held, 2 held with waiters (Drepper's "Futexes Are Tricky",
 * mutex 2). Raw system calls (sys.h): no errno change, no cancellation
 * point, nothing a wrapper family interposes. Never taken on the event
 * path, which only tries.
 */
#ifndef ST_CORE_LOCK_H
#define ST_CORE_LOCK_H

#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"
#include "sys.h"

static inline void st__mutex_lock(uint32_t *word)
{
	uint32_t c = 0;

	if (st_cas_acquire(word, &c, 1))
		return;
	if (c != 2)
		c = st_xchg_acquire(word, 2);
	while (c != 0) {
		st__sys4(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL);
		c = st_xchg_acquire(word, 2);
	}
}

static inline bool st__mutex_trylock(uint32_t *word)
{
	uint32_t c = 0;

	return st_cas_acquire(word, &c, 1);
}

static inline void st__mutex_unlock(uint32_t *word)
{
	if (st_xchg_release(word, 0) == 2)
		st__sys3(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1);
}

#endif /* ST_CORE_LOCK_H */
