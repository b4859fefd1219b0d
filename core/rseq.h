/*
 * A per-CPU commit: compare, copy, store, as one restartable sequence
 * (rseq.c). The building block of per-CPU ring buffers (doc/percpu.md).
 *
 * glibc (2.35 and later) registers an rseq area for every thread. A
 * critical section declared to the kernel through it is restarted, at its
 * abort handler, when the thread is preempted, migrated or signalled before
 * its last instruction: so a sequence of plain loads and stores ending in
 * one store runs as if alone on its CPU, with no lock and no atomic
 * read-modify-write. Each buffer indexed by the CPU then has one writer at
 * a time.
 *
 * st__rseq_commit() runs, on CPU op->cpu only:
 *
 *   each op->cmp[i] still holds op->expect[i]   (nothing changed since the
 *                                                caller read them)
 *   copy op->words 8-byte words from op->src to op->dst
 *   store op->lo, op->hi at op->store            (the commit: one 16-byte
 *                                                 store, the last instruction)
 *
 * The caller reads the state, prepares the bytes (on its stack: a signal
 * handler writing meanwhile uses its own frame), and retries from its read
 * when the commit did not happen. Between the caller's read and the
 * section, another thread (or a signal handler of this one) may have
 * committed on the same CPU: the compares see it. During the section, the
 * kernel's restart does.
 */
#ifndef ST_CORE_RSEQ_H
#define ST_CORE_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>

#define ST_RSEQ_CMPS 3

struct st_rseq_op {
	const uint64_t *cmp[ST_RSEQ_CMPS]; /* each compared with expect[i] */
	uint64_t expect[ST_RSEQ_CMPS];
	void *dst;		/* 8-byte aligned */
	const void *src;
	uint64_t words;		/* 8-byte words copied */
	void *store;		/* 8-byte aligned: lo there, hi 8 bytes on */
	uint64_t lo, hi;
	uint32_t cpu;		/* the CPU whose data this is */
};

enum st_rseq_result {
	ST_RSEQ_DONE = 0,    /* committed */
	ST_RSEQ_CHANGED = 1, /* a compare failed, or not on op->cpu: read again */
	ST_RSEQ_ABORTED = 2, /* the kernel restarted the section: read again */
};

/* An op that compares nothing yet: each compare at its own expectation. */
static inline void st__rseq_op_init(struct st_rseq_op *op)
{
	*op = (struct st_rseq_op){ .words = 0 };
	for (int i = 0; i < ST_RSEQ_CMPS; i++)
		op->cmp[i] = &op->expect[i];
}

/* Finds glibc's rseq areas (once, at start). */
void st__rseq_init(void);
/* Whether this thread has an rseq area the kernel keeps (glibc registered
 * one, and the kernel took it): per-CPU buffers need it. */
bool st__rseq_usable(void);
/* Where each thread's rseq area is, from its thread pointer (rseq.c). */
extern ptrdiff_t st__rseq_offset __attribute__((visibility("hidden")));

static inline struct rseq *st__rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + st__rseq_offset);
}

/* The CPU this thread ran on when the kernel last returned to it; only a
 * commit tells whether it still does. */
static inline uint32_t st__rseq_cpu(void)
{
	return __atomic_load_n(&st__rseq_area()->cpu_id_start, __ATOMIC_RELAXED);
}
/* Runs op as a restartable sequence (see above); st__rseq_usable() first. */
enum st_rseq_result st__rseq_commit(const struct st_rseq_op *op);

#endif
