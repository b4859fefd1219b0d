/*
 * Threads seen from themselves: thread_start and thread_end are written
 * by the new thread, so that its events are tied to the pthread_create
 * that made it (thread_start's `thread` is thread_create's) and its end
 * is dated where it happens. pthread_create (via the spec's `via`) runs
 * the start routine through a trampoline when either is enabled.
 *
 * The start routine and its argument travel in a box from a static pool,
 * claimed with an exchange and given back by the new thread as soon as it
 * has read it (or by pthread_create when the thread was not made): no
 * allocation, which the traced program would see (the malloc family), and
 * no wait for the new thread. Only with every box in use (BOXES threads
 * made and not started yet) does pthread_create wait, sleeping, for one
 * of them to start: each gives its box back before it runs any code of
 * the program, so none waits for the creator.
 *
 * A thread that ends in pthread_exit or is cancelled runs the cleanup
 * handler the trampoline pushed: thread_end says it did not return.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "pthread-gen.h"
#include "wrappers/pthread-helpers.h"

#define BOXES 4096

static struct box {
	st__start_routine start;
	void *arg;
	uint32_t used;
} boxes[BOXES];

static uint32_t next_box;

static struct box *box_take(void)
{
	for (;;) {
		static const struct timespec pause = { 0, 100000 };

		for (uint32_t k = 0; k < BOXES; k++) {
			struct box *b =
				&boxes[st_fetch_add_relaxed(&next_box, 1) % BOXES];

			if (!st_xchg_acquire(&b->used, 1))
				return b;
		}
		/* (a sleep, not a yield: threads of a lower priority run; the
		 * system call, not nanosleep(), which is a cancellation point,
		 * and errno as the caller left it) */
		int e = errno;

		syscall(SYS_nanosleep, &pause, NULL);
		errno = e;
	}
}

static void box_give(struct box *b)
{
	st_store_release(&b->used, 0);
}

/* The ip of the events: the start routine, as if returned to from a call
 * at its first instruction (the daemon names the line of ip - 1, the
 * call's, which is then the routine's first). */
static const void *site(st__start_routine start)
{
	return (const char *)(uintptr_t)start + 1;
}

static uint32_t mask_of(uint32_t slot)
{
	return st_load_relaxed(&st__state_pthread.mask[slot]);
}

/* thread_end of this thread; returned: it came back from its routine. */
static void ended(const void *ip, int32_t returned)
{
	uint32_t m = mask_of(st__slot_pthread_thread_end);

	if (m)
		st__emit_pthread_thread_end(m, st_clock_read(), ip, (uint64_t)pthread_self(),
					    returned);
}

static void exited(void *ip)
{
	ended(ip, 0);
}

static void *trampoline(void *p)
{
	struct box *b = p;
	st__start_routine start = b->start;
	void *arg = b->arg, *ret;
	uint32_t m;

	box_give(b);
	m = mask_of(st__slot_pthread_thread_start);
	if (m)
		st__emit_pthread_thread_start(m, st_clock_read(), site(start),
					      (uint64_t)pthread_self(),
					      (uint64_t)(uintptr_t)start,
					      (uint64_t)(uintptr_t)arg);
	pthread_cleanup_push(exited, (void *)site(start));
	ret = start(arg);
	pthread_cleanup_pop(0);
	ended(site(start), 1);
	return ret;
}

int st__thread_create(int (*real)(pthread_t *, const pthread_attr_t *, st__start_routine, void *),
		      pthread_t *thread, const pthread_attr_t *attr, st__start_routine start,
		      void *arg)
{
	uint32_t ms = mask_of(st__slot_pthread_thread_start),
		 me = mask_of(st__slot_pthread_thread_end);
	struct box *b;
	int ret;

	if (!(ms | me))
		return real(thread, attr, start, arg);
	b = box_take();
	b->start = start;
	b->arg = arg;
	ret = real(thread, attr, trampoline, b);
	if (ret != 0)
		box_give(b);
	return ret;
}
