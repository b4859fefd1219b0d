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
 *   copy op->words 8-byte words from op->src to op->dst, the last first
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

/*
 * The start of a critical section in an asm statement (x86-64), for the
 * sections written out in full (rseq.c, percpu.c). Label 3: the
 * descriptor (version 0, no flags; relocated at load time, so in a
 * writable section); 1: the section's first instruction, which must
 * follow; 2: just after its commit; 4: the abort handler (ST_RSEQ_ABORT).
 * Operands: %[rs] the thread's area, %c[cs] the offset of its rseq_cs
 * field; clobbers rax.
 */
#define ST_RSEQ_ENTER                                  \
	".pushsection .data.rel.st_rseq_cs, \"aw\"\n\t" \
	".balign 32\n"                                 \
	"3:\n\t"                                       \
	".long 0, 0\n\t"                               \
	".quad 1f, 2f - 1f, 4f\n\t"                    \
	".popsection\n\t"                              \
	"leaq 3b(%%rip), %%rax\n\t"                    \
	"movq %%rax, %c[cs](%[rs])\n\t"
/* The abort handler, label 4: the signature the kernel checks before it
 * (RSEQ_SIG), then a jump to `to`; in its own section, outside [1, 2). */
#define ST_RSEQ_ABORT(to)                                \
	".pushsection .text.st_rseq_abort, \"ax\"\n\t"   \
	".long 0x53053053\n"                             \
	"4:\n\t"                                         \
	"jmp " to "\n\t"                                 \
	".popsection\n"

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
